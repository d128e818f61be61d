/* The reclaim bench: reads FILE whole PASSES times, its cached pages
 * dropped before each pass; run in a memory cgroup smaller than the file,
 * each pass makes the reader reclaim its cgroup's pages. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	long passes = argc > 2 ? atol(argv[2]) : 1;
	int fd = argc > 1 ? open(argv[1], O_RDONLY) : -1;

	if (fd < 0) {
		perror("reclaim-read");
		return 1;
	}
	for (long i = 0; i < passes; i++) {
		ssize_t got;

		if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) || lseek(fd, 0, SEEK_SET))
			return 1;
		while ((got = read(fd, buf, sizeof(buf))) > 0)
			;
		if (got < 0) {
			perror("read");
			return 1;
		}
	}
	return 0;
}
