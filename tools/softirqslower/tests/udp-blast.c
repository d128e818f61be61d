// Loopback traffic of its own, for softirqslower's tests: COUNT UDP
// datagrams of 1 KiB sent to a socket of its own on 127.0.0.1 and read
// back, on CPU `CPU`. Each send raises NET_RX on that CPU, which runs as
// the send re-enables bottom halves: in this process. Stops itself
// (SIGSTOP) first, for the tool to attach.
//
//   udp-blast COUNT CPU
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t len = sizeof(addr);
	static char buf[1024];
	cpu_set_t cpus;
	int count, fd;

	if (argc != 3) {
		fprintf(stderr, "usage: udp-blast COUNT CPU\n");
		return 2;
	}
	count = atoi(argv[1]);
	CPU_ZERO(&cpus);
	CPU_SET(atoi(argv[2]), &cpus);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || sched_setaffinity(0, sizeof(cpus), &cpus) ||
	    bind(fd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    getsockname(fd, (struct sockaddr *)&addr, &len)) {
		perror("udp-blast");
		return 1;
	}
	raise(SIGSTOP);
	for (int i = 0; i < count; i++) {
		if (sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&addr, len) < 0 ||
		    recv(fd, buf, sizeof(buf), 0) < 0) {
			perror("udp-blast");
			return 1;
		}
	}
	return 0;
}
