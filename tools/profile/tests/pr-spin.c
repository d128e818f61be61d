/* profile's test workload: main → outer → middle → inner, spinning on the
 * CPU in inner. Modes (argv[1]):
 *   spin      inner only, forever
 *   split     inner three quarters of the time, side one quarter, in
 *             random order (a fixed rhythm could beat with the sampling
 *             period, and the shares would alias)
 *   read      read(2) from /dev/zero in 1 MiB blocks, in reader
 *   threads   inner in main's thread, thread_spin in a second thread
 *   brief     spin for one second, then exit
 * Built with frame pointers, and -O2 -fomit-frame-pointer for the
 * --unwind tests. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define UNIT 200000L

/* Never set: the loops must look finite, or the compiler drops the code
 * after the calls and calls become jumps. */
volatile int stop;
volatile long sink;
static char buf[1 << 20];

NOINLINE void inner(long n)
{
	for (long i = 0; i < n; i++)
		sink += i;
}

NOINLINE void side(long n)
{
	for (long i = 0; i < n; i++)
		sink += i;
}

NOINLINE void reader(int fd)
{
	while (!stop)
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
	sink++;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* xorshift64: the split's random order. */
static unsigned long long next_random(void)
{
	static unsigned long long x = 88172645463325252ULL;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

NOINLINE void middle(const char *mode)
{
	double end = now() + 1.0;
	int split = !strcmp(mode, "split"), brief = !strcmp(mode, "brief");

	if (!strcmp(mode, "read")) {
		reader(open("/dev/zero", O_RDONLY));
		return;
	}
	while (!stop) {
		if (!split)
			inner(3 * UNIT);
		else if (next_random() % 4)
			inner(UNIT / 8);
		else
			side(UNIT / 8);
		if (brief && now() > end)
			break;
	}
	sink++;
}

NOINLINE void outer(const char *mode)
{
	middle(mode);
	sink++;
}

NOINLINE void *thread_spin(void *arg)
{
	while (!stop)
		side(UNIT);
	return arg;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "spin";
	pthread_t t;

	if (!strcmp(mode, "threads"))
		pthread_create(&t, NULL, thread_spin, NULL);
	printf("ready\n");
	fflush(stdout);
	outer(mode);
	return (int)sink & 1;
}
