// The memleak workload: N malloc(64)+free pairs, timed by the process itself
// so that start-up and the tracer's attach are outside the figure.
//
// Prints "ready", waits for a line on stdin, runs the loop, prints the mean
// nanoseconds per pair, then waits for stdin to close: the process stays
// alive (and traced) until the bench has stopped the tracer.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	char line[16];
	struct timespec a, b;

	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		void *p = malloc(64);
		// Keeps the compiler from pairing the malloc and free away.
		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.2f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin))
		;
	return 0;
}
