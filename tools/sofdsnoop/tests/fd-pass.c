/* sofdsnoop's workload: descriptors passed over a unix datagram socket
 * pair, once with sendmsg()/recvmsg() (3 in one message: a file, a pipe's
 * read end, an eventfd) and once with sendmmsg()/recvmmsg() (2 messages, 1
 * each: the file and the pipe). Prints its pid, sockets, descriptors and
 * their inodes, waits for a line on stdin, passes them, prints the
 * descriptors received, and waits for stdin's end. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#define CTL(n) CMSG_SPACE((n) * sizeof(int))

static void rights(struct msghdr *m, char *ctl, size_t size, const int *fds, int n)
{
	struct cmsghdr *c;

	memset(ctl, 0, size);
	m->msg_control = ctl;
	m->msg_controllen = size;
	c = CMSG_FIRSTHDR(m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, n * sizeof(int));
}

static void received(struct msghdr *m)
{
	struct cmsghdr *c = CMSG_FIRSTHDR(m);
	int n, fds[8];

	if (!c || c->cmsg_type != SCM_RIGHTS) {
		fprintf(stderr, "fd-pass: no descriptors received\n");
		exit(1);
	}
	n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
	memcpy(fds, CMSG_DATA(c), n * sizeof(int));
	for (int i = 0; i < n; i++)
		printf("%s%d", i ? " " : "", fds[i]);
}

static unsigned long ino(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : st.st_ino;
}

int main(int argc, char **argv)
{
	int sv[2], p[2], fds[3];
	char byte = 'x', line[16], ctl[CTL(3)], ctls[2][CTL(1)];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct mmsghdr mm[2];

	if (argc < 2 || socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) || pipe(p)) {
		perror("fd-pass: setup");
		return 1;
	}
	fds[0] = open(argv[1], O_RDONLY);
	fds[1] = p[0];
	fds[2] = eventfd(0, 0);
	if (fds[0] < 0 || fds[2] < 0) {
		perror("fd-pass: open/eventfd");
		return 1;
	}
	printf("%d %d %d %d %d %d %lu %lu %lu\n", getpid(), sv[0], sv[1], fds[0], fds[1], fds[2],
	       ino(fds[0]), ino(fds[1]), ino(fds[2]));
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;

	rights(&m, ctl, sizeof(ctl), fds, 3);
	if (sendmsg(sv[0], &m, 0) != 1) {
		perror("fd-pass: sendmsg");
		return 1;
	}
	m.msg_controllen = sizeof(ctl);
	if (recvmsg(sv[1], &m, 0) != 1) {
		perror("fd-pass: recvmsg");
		return 1;
	}
	received(&m);
	printf("\n");

	memset(mm, 0, sizeof(mm));
	for (int i = 0; i < 2; i++) {
		mm[i].msg_hdr.msg_iov = &iov;
		mm[i].msg_hdr.msg_iovlen = 1;
		rights(&mm[i].msg_hdr, ctls[i], sizeof(ctls[i]), &fds[i], 1);
	}
	if (sendmmsg(sv[0], mm, 2, 0) != 2) {
		perror("fd-pass: sendmmsg");
		return 1;
	}
	for (int i = 0; i < 2; i++)
		mm[i].msg_hdr.msg_controllen = sizeof(ctls[i]);
	if (recvmmsg(sv[1], mm, 2, 0, NULL) != 2) {
		perror("fd-pass: recvmmsg");
		return 1;
	}
	received(&mm[0].msg_hdr);
	printf(" ");
	received(&mm[1].msg_hdr);
	printf("\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin))
		;
	return 0;
}
