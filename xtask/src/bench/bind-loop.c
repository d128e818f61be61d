/* The bind and listen bench: N rounds of a TCP socket bound to
 * 127.0.0.1 port 0 (the kernel picks one) with SO_REUSEADDR, listening
 * with a backlog of 16, and closed: one bind() and one listen() a round. */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int one = 1;

	for (long i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0) {
			perror("bind-loop: socket");
			return 1;
		}
		if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16)) {
			perror("bind-loop: bind/listen");
			return 1;
		}
		close(fd);
	}
	return 0;
}
