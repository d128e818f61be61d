/* profile's bench workload: a fixed amount of CPU-bound work in two
 * processes, through 64 distinct call paths of six frames (a()/b() chosen
 * by the path's bits), with frame pointers so that every tool sees the
 * same stacks. argv[1]: units of work per process (a unit is ~1 ms here);
 * argv[2]: "spread" runs 16384 paths of 14 frames instead (the report
 * bench's many distinct stacks). */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

volatile long sink;
static int depth = 6;

void a(unsigned path, int d, long n);
void b(unsigned path, int d, long n);

#define STEP(name)                                              \
	NOINLINE void name(unsigned path, int d, long n)        \
	{                                                       \
		if (d == depth) {                               \
			for (long i = 0; i < n; i++)            \
				sink += i;                      \
		} else if (path >> d & 1) {                     \
			b(path, d + 1, n);                      \
		} else {                                        \
			a(path, d + 1, n);                      \
		}                                               \
		sink++;                                         \
	}

STEP(a)
STEP(b)

static void work(long units, int paths)
{
	for (long u = 0; u < units; u++)
		for (int p = 0; p < paths; p++)
			a(p, 0, 200000 / paths);
}

int main(int argc, char **argv)
{
	long units = argc > 1 ? atol(argv[1]) : 2000;
	int paths = 64;

	if (argc > 2 && !strcmp(argv[2], "spread")) {
		depth = 14;
		paths = 16384;
	}
	if (fork() == 0) {
		work(units, paths);
		return 0;
	}
	work(units, paths);
	wait(NULL);
	return 0;
}
