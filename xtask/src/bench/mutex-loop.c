/* The futex bench: THREADS threads take and release one pthread mutex
 * LOCKS times each, yielding while they hold it: the mutex contended, its
 * waiters in FUTEX_WAIT. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long locks;

static void *locker(void *arg)
{
	for (long i = 0; i < locks; i++) {
		pthread_mutex_lock(&lock);
		sched_yield();
		pthread_mutex_unlock(&lock);
	}
	return arg;
}

int main(int argc, char **argv)
{
	long threads = argc > 2 ? atol(argv[1]) : 4;
	pthread_t t[64];

	locks = argc > 2 ? atol(argv[2]) : 1000;
	if (threads < 1 || threads > 64 || locks < 1)
		return 2;
	for (long i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, locker, NULL))
			return 1;
	for (long i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
