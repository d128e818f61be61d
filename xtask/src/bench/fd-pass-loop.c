/* The descriptor-passing bench: N rounds of one descriptor (a pipe's read
 * end) sent over a unix socket pair with SCM_RIGHTS and received, and the
 * received copy closed: one sendmsg() and one recvmsg() carrying a
 * descriptor a round. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;
	int sv[2], p[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || pipe(p)) {
		perror("fd-pass-loop: socketpair/pipe");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		char byte = 'x', ctl[CMSG_SPACE(sizeof(int))];
		struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
				    .msg_control = ctl, .msg_controllen = sizeof(ctl) };
		struct cmsghdr *c;
		int got;

		memset(ctl, 0, sizeof(ctl));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &p[0], sizeof(int));
		if (sendmsg(sv[0], &m, 0) != 1) {
			perror("fd-pass-loop: sendmsg");
			return 1;
		}
		m.msg_controllen = sizeof(ctl);
		if (recvmsg(sv[1], &m, 0) != 1 || !(c = CMSG_FIRSTHDR(&m))) {
			perror("fd-pass-loop: recvmsg");
			return 1;
		}
		memcpy(&got, CMSG_DATA(c), sizeof(int));
		close(got);
	}
	return 0;
}
