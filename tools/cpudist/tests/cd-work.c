/* cpudist's workload: waits for a line on stdin, then N times runs on the
 * CPU for RUN_MS (a busy loop on the clock) and sleeps for SLEEP_MS. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	long run_ms = argc > 2 ? atol(argv[2]) : 20;
	long sleep_ms = argc > 3 ? atol(argv[3]) : 20;
	struct timespec nap = { sleep_ms / 1000, (sleep_ms % 1000) * 1000000L };
	char line[16];

	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (int i = 0; i < n; i++) {
		long long end = now_ns() + run_ms * 1000000LL;

		while (now_ns() < end)
			;
		nanosleep(&nap, NULL);
	}
	return 0;
}
