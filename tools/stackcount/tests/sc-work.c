/* stackcount's test workload. Prints "ready", then for each "go" line on
 * stdin makes one round and prints "done"; exits when stdin closes. A
 * round, with N from argv[1]: leaf() called 3N times through caller_a and
 * N times through caller_b; the USDT probe sctest:hit N times, from
 * caller_b, and getppid() N times. Built with frame pointers; nothing inlined. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

volatile long sink;

NOINLINE void leaf(long x) { sink += x; }

NOINLINE void caller_a(long x)
{
	leaf(x);
	sink++;
}

NOINLINE void caller_b(long x)
{
	DTRACE_PROBE1(sctest, hit, x);
	sink += syscall(SYS_getppid);
	leaf(x);
	sink++;
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
		for (long i = 0; i < 3 * n; i++)
			caller_a(i);
		for (long i = 0; i < n; i++)
			caller_b(i);
		printf("done\n");
	}
	return 0;
}
