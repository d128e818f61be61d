/* cpufreq's workload: on CPU 0, stopped (SIGSTOP) until the tool is
 * attached, then a second of spinning. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

int main(void)
{
	cpu_set_t cpus;
	struct timespec start, now;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus)) {
		perror("sched_setaffinity");
		return 1;
	}
	raise(SIGSTOP);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do
		clock_gettime(CLOCK_MONOTONIC, &now);
	while ((now.tv_sec - start.tv_sec) * 1000000000L + now.tv_nsec - start.tv_nsec <
	       1000000000L);
	return 0;
}
