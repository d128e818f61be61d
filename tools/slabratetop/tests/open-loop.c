// Opens and closes a file COUNT times, for slabratetop's tests: each
// open() allocates a struct file from the filp cache. Stops itself
// (SIGSTOP) first, for the tool to attach.
//
//   open-loop FILE COUNT
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int count;

	if (argc != 3) {
		fprintf(stderr, "usage: open-loop FILE COUNT\n");
		return 2;
	}
	count = atoi(argv[2]);
	raise(SIGSTOP);
	for (int i = 0; i < count; i++) {
		int fd = open(argv[1], O_RDONLY);

		if (fd < 0) {
			perror(argv[1]);
			return 1;
		}
		close(fd);
	}
	return 0;
}
