/* exitsnoop's test children, ending in known ways:
 *   ex-child exit CODE MS     sleeps MS ms, then exit(CODE)
 *   ex-child wait             waits to be killed
 *   ex-child thread MS1 MS2   a second thread ends alone after MS1 ms; the
 *                             process exits 0 after MS2 ms
 *   ex-child leader MS CODE   the main thread ends first (pthread_exit);
 *                             the other calls exit(CODE) after MS ms
 * Each prints "ready" once started. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

static long worker_ms, worker_code = -1;

static void *worker(void *arg)
{
	(void)arg;
	nap(worker_ms);
	if (worker_code >= 0)
		exit((int)worker_code);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc < 2)
		return 100;
	if (!strcmp(argv[1], "exit") && argc == 4) {
		puts("ready");
		fflush(stdout);
		nap(atol(argv[3]));
		exit(atoi(argv[2]));
	}
	if (!strcmp(argv[1], "wait")) {
		puts("ready");
		fflush(stdout);
		for (;;)
			pause();
	}
	if (!strcmp(argv[1], "thread") && argc == 4) {
		worker_ms = atol(argv[2]);
		pthread_create(&t, NULL, worker, NULL);
		puts("ready");
		fflush(stdout);
		nap(atol(argv[3]));
		exit(0);
	}
	if (!strcmp(argv[1], "leader") && argc == 4) {
		worker_ms = atol(argv[2]);
		worker_code = atol(argv[3]);
		pthread_create(&t, NULL, worker, NULL);
		puts("ready");
		fflush(stdout);
		pthread_exit(NULL);
	}
	return 100;
}
