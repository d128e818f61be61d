/* The lock bench: THREADS threads write WRITES bytes each, one at a time,
 * into one pipe that the main thread drains: the pipe's mutex contended. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int fds[2];
static long writes;

static void *writer(void *arg)
{
	for (long i = 0; i < writes; i++) {
		if (write(fds[1], "x", 1) != 1) {
			perror("write");
			exit(1);
		}
	}
	return arg;
}

int main(int argc, char **argv)
{
	long threads = argc > 2 ? atol(argv[1]) : 8;
	pthread_t t[64];
	char buf[4096];

	writes = argc > 2 ? atol(argv[2]) : 1000;
	if (threads < 1 || threads > 64 || writes < 1 || pipe(fds))
		return 2;
	for (long i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, writer, NULL);
	for (long total = 0; total < threads * writes;) {
		ssize_t got = read(fds[0], buf, sizeof(buf));

		if (got <= 0) {
			perror("read");
			return 1;
		}
		total += got;
	}
	for (long i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
