// Kernel lock contention of known callers, for klockstat's tests. Stops
// itself (SIGSTOP) before its work, for the tool to attach first.
//
//   lock-work pipe THREADS WRITES   THREADS threads write WRITES bytes each,
//                                   one at a time, into one pipe, which a
//                                   thread drains: the pipe's mutex, taken
//                                   in pipe_write and pipe_read.
//   lock-work dir DIR THREADS FILES THREADS threads create and unlink FILES
//                                   files each in DIR: the directory's
//                                   i_rwsem, taken for writing.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int pipe_fds[2];
static long per_thread;
static const char *dir;

static void *writer(void *arg)
{
	(void)arg;
	for (long i = 0; i < per_thread; i++) {
		if (write(pipe_fds[1], "x", 1) != 1) {
			perror("write");
			exit(1);
		}
	}
	return NULL;
}

static void *creator(void *arg)
{
	char path[4096];

	for (long i = 0; i < per_thread; i++) {
		snprintf(path, sizeof(path), "%s/f-%ld-%ld", dir, (long)arg, i);
		int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
		if (fd < 0 || close(fd) || unlink(path)) {
			perror(path);
			exit(1);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int pipe_mode = argc == 4 && !strcmp(argv[1], "pipe");
	int dir_mode = argc == 5 && !strcmp(argv[1], "dir");
	pthread_t threads[64];
	long n, total;

	if (!pipe_mode && !dir_mode) {
		fprintf(stderr, "usage: lock-work pipe THREADS WRITES | dir DIR THREADS FILES\n");
		return 2;
	}
	if (dir_mode)
		dir = argv[2];
	n = atol(argv[dir_mode ? 3 : 2]);
	per_thread = atol(argv[dir_mode ? 4 : 3]);
	if (n < 1 || n > 64 || per_thread < 1)
		return 2;
	if (pipe_mode && pipe(pipe_fds)) {
		perror("pipe");
		return 1;
	}
	raise(SIGSTOP);
	for (long i = 0; i < n; i++)
		pthread_create(&threads[i], NULL, pipe_mode ? writer : creator, (void *)i);
	if (pipe_mode) {
		char buf[4096];

		for (total = 0; total < n * per_thread;) {
			ssize_t got = read(pipe_fds[0], buf, sizeof(buf));
			if (got <= 0) {
				perror("read");
				return 1;
			}
			total += got;
		}
	}
	for (long i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
