// Reads a file whole through the page cache, for drsnoop's tests: run in
// a memory cgroup smaller than the file, its reads make it reclaim its
// cgroup's pages. Drops the file's cached pages, then stops itself
// (SIGSTOP) for the tool to attach first.
//
//   reclaim-work FILE
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	ssize_t got;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: reclaim-work FILE\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)) {
		perror(argv[1]);
		return 1;
	}
	raise(SIGSTOP);
	while ((got = read(fd, buf, sizeof(buf))) > 0)
		;
	if (got < 0) {
		perror("read");
		return 1;
	}
	return 0;
}
