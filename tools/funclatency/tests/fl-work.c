/* funclatency's test workload. Prints "ready", then for each "go" line on
 * stdin makes one round and prints "done"; exits when stdin closes. A
 * round: lat_sleep10() 10 times (a 10 ms sleep each), then lat_outer() 20
 * times, each calling lat_sleep1() (a 1.2 ms sleep) once: nested calls.
 * 1.2 ms, not 1: a 1 ms sleep can end within the timer's 50 us slack,
 * under 1024 us, the floor of the log2 slot the test expects (one of 20
 * calls did in a CI rehearsal). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

volatile long sink;

static void sleep_us(long us)
{
	struct timespec ts = { 0, us * 1000L };

	nanosleep(&ts, NULL);
}

NOINLINE void lat_sleep10(void) { sleep_us(10000); sink++; }
NOINLINE void lat_sleep1(void) { sleep_us(1200); sink++; }
NOINLINE void lat_outer(void) { lat_sleep1(); sink++; }

int main(void)
{
	char line[64];

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		if (strncmp(line, "go", 2))
			continue;
		for (int i = 0; i < 10; i++)
			lat_sleep10();
		for (int i = 0; i < 20; i++)
			lat_outer();
		printf("done\n");
	}
	return 0;
}
