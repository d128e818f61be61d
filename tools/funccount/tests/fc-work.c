/* funccount's (and the other probe tools') test workload: functions called
 * known numbers of times, a USDT probe, getppid() and malloc(). Prints
 * "ready", then for each "go" line on stdin makes one round of calls and
 * prints "done"; exits when stdin closes. A round, with N from argv[1]:
 *   work_a N times, work_b 2N, work_c 3N (work_ functions, by pattern);
 *   the USDT probe fctest:tick N times; getppid() N times; malloc N times;
 *   fstat() and uname() N times each (tracepoints named after their
 *   implementations: sys_enter_newfstat, sys_enter_newuname).
 * Built with frame pointers; the functions are not inlined. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

volatile long sink;

NOINLINE void work_a(long x) { sink += x; }
NOINLINE void work_b(long x) { sink += x; }
NOINLINE void work_c(long x) { sink += x; }
/* Not work_: a pattern must leave it out. */
NOINLINE void other_work(long x) { sink -= x; }

static void round_of(long n)
{
	for (long i = 0; i < n; i++) {
		work_a(i);
		other_work(i);
	}
	for (long i = 0; i < 2 * n; i++)
		work_b(i);
	for (long i = 0; i < 3 * n; i++)
		work_c(i);
	for (long i = 0; i < n; i++)
		DTRACE_PROBE1(fctest, tick, i);
	for (long i = 0; i < n; i++)
		sink += syscall(SYS_getppid);
	for (long i = 0; i < n; i++) {
		void *p = malloc(64 + i);
		sink += (long)p;
		free(p);
	}
	for (long i = 0; i < n; i++) {
		struct stat st;
		struct utsname u;

		sink += syscall(SYS_fstat, 1, &st);
		sink += syscall(SYS_uname, &u);
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;
	char line[64];

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		if (strncmp(line, "go", 2))
			continue;
		round_of(n);
		printf("done\n");
	}
	return 0;
}
