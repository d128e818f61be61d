/* llcstat's workload: on CPU 0, stopped (SIGSTOP) until the tool is
 * attached, then PAGES new pages written (a page fault each) and 200 ms
 * of spinning. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define PAGE 4096

int main(int argc, char **argv)
{
	long pages = argc > 1 ? atol(argv[1]) : 2048;
	cpu_set_t cpus;
	struct timespec start, now;
	volatile unsigned long spin = 0;
	char *p;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus)) {
		perror("sched_setaffinity");
		return 1;
	}
	p = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	/* A fault per page, not one per huge page. */
	madvise(p, pages * PAGE, MADV_NOHUGEPAGE);
	raise(SIGSTOP);
	for (long i = 0; i < pages; i++)
		((volatile char *)p)[i * PAGE] = 1;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		spin++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) * 1000000000L + now.tv_nsec - start.tv_nsec <
		 200000000L);
	return 0;
}
