/* The thread bench: N threads made by pthread_create() and joined, one
 * after another, each returning at once. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *worker(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;

	for (long i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, worker, NULL) || pthread_join(t, NULL)) {
			fprintf(stderr, "thread-loop: pthread_create failed\n");
			return 1;
		}
	}
	return 0;
}
