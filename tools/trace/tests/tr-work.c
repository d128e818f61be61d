/* trace's (and argdist's) test workload: calls with known arguments and
 * results. Prints "ready", then for each "go" line on stdin makes one
 * round and prints "done"; exits when stdin closes. A round:
 *   greet("world", n) for n = 1, 2, 3;
 *   answer(n) for n = 1, 2, 3, each returning 42;
 *   pick(v) for v = 1, 2, 2, 3, 3, 3;
 *   the USDT probe trtest:tick(n, "usdt-str") for n = 1, 2, 3;
 *   alloc(64) 100 times and alloc(4096) 10 times;
 *   nap() 5 times, each sleeping 10 ms;
 *   open("/etc/hostname") once;
 *   first(s) 5 times, s in a page of a file mapped just before (not yet
 *   in the process's memory at the first call);
 *   shout(s) once, s holding ESC, CR, LF, BEL, DEL and U+202E.
 * Built with frame pointers; the functions are not inlined, and their
 * results are used (else the compiler drops the calls). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sdt.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

volatile long sink;

NOINLINE void greet(const char *who, long n) { sink += n + who[0]; }
NOINLINE int answer(int x) { sink += x; return 42; }
NOINLINE void pick(long v) { sink += v; }
NOINLINE long alloc(unsigned long size) { sink += size; return (long)size; }
NOINLINE void first(const char *s) { sink += s[0]; }
NOINLINE void shout(const char *s) { sink += s[0]; }
NOINLINE void nap(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	nanosleep(&ts, NULL);
}

/* A file holding first()'s string, mapped anew each round. */
static int first_fd = -1;

static void first_calls(void)
{
	char *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, first_fd, 0);

	if (p == MAP_FAILED)
		return;
	for (int i = 0; i < 5; i++)
		first(p);
	munmap(p, 4096);
}

static void round_of(void)
{
	static const long picks[] = { 1, 2, 2, 3, 3, 3 };

	for (long n = 1; n <= 3; n++)
		greet("world", n);
	for (int n = 1; n <= 3; n++)
		sink += answer(n);
	for (unsigned i = 0; i < sizeof(picks) / sizeof(picks[0]); i++)
		pick(picks[i]);
	for (long n = 1; n <= 3; n++)
		DTRACE_PROBE2(trtest, tick, n, "usdt-str");
	for (int i = 0; i < 100; i++)
		sink += alloc(64);
	for (int i = 0; i < 10; i++)
		sink += alloc(4096);
	for (int i = 0; i < 5; i++)
		nap();
	close(open("/etc/hostname", O_RDONLY));
	first_calls();
	shout("bad\033[31m\r\nline\a\x7f\xe2\x80\xae!");
}

int main(void)
{
	char line[64];

	char path[] = "/tmp/tr-work-XXXXXX";
	static const char text[] = "first-call-string";

	first_fd = mkstemp(path);
	if (first_fd < 0 || write(first_fd, text, sizeof(text)) != sizeof(text))
		return 1;
	unlink(path);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		if (strncmp(line, "go", 2))
			continue;
		round_of();
		printf("done\n");
	}
	return 0;
}
