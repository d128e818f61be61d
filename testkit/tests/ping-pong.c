// Two processes, named pp-a and pp-b, passing a byte back and forth over
// two pipes, each in functions of its own: a naps 20 ms in a_pauses, wakes b
// in a_wakes_b (its write), and waits for b in a_waits_for_b; b waits for a
// in b_waits_for_a, naps 5 ms in b_pauses, and wakes a in b_wakes_a. Prints
// "ready A B" (the two pids), starts at a line on stdin, runs ROUNDS rounds
// (with a second argument "fast", without the naps: each wakes the other at
// once),
// then prints how long each waited in its read, in microseconds, and how
// long each was asleep: from the start of its read to the start of the
// other's write that woke it, without the run queue wait after the wakeup
// (b from its second round on: its first wait began before the tracer could
// see it): "blocked a US b US asleep a US b US".
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static int fast;

static void nap_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	if (!fast)
		nanosleep(&ts, NULL);
}

static void move_byte(int fd, int write_it)
{
	char c = 'x';

	if ((write_it ? write(fd, &c, 1) : read(fd, &c, 1)) != 1)
		exit(3);
}

__attribute__((noinline)) void a_pauses(void) { nap_ms(20); __asm__ volatile(""); }
__attribute__((noinline)) void a_wakes_b(int fd) { move_byte(fd, 1); __asm__ volatile(""); }
__attribute__((noinline)) void a_waits_for_b(int fd) { move_byte(fd, 0); __asm__ volatile(""); }
__attribute__((noinline)) void b_pauses(void) { nap_ms(5); __asm__ volatile(""); }
__attribute__((noinline)) void b_wakes_a(int fd) { move_byte(fd, 1); __asm__ volatile(""); }
__attribute__((noinline)) void b_waits_for_a(int fd) { move_byte(fd, 0); __asm__ volatile(""); }

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 100;

	fast = argc > 2 && argv[2][0] == 'f';
	int ab[2], ba[2], result[2];
	long long a_blocked = 0, b_blocked = 0, a_asleep = 0, b_asleep = 0, t;
	/* When each began to wait (its read's start), for the other to read
	 * just before the write that wakes it. */
	volatile long long *since = mmap(NULL, 2 * sizeof(long long), PROT_READ | PROT_WRITE,
					 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char line[16];
	pid_t b;

	if (since == MAP_FAILED || pipe(ab) || pipe(ba) || pipe(result))
		return 1;
	b = fork();
	if (b < 0)
		return 1;
	if (b == 0) {
		prctl(PR_SET_NAME, "pp-b");
		/* a's end only: its exit ends b's last read. */
		close(ab[1]);
		for (int i = 0; i < rounds; i++) {
			t = since[1] = now_us();
			b_waits_for_a(ab[0]);
			if (i > 0)
				b_blocked += now_us() - t;
			b_pauses();
			a_asleep += now_us() - since[0];
			b_wakes_a(ba[1]);
		}
		if (write(result[1], &b_blocked, sizeof(b_blocked)) != sizeof(b_blocked) ||
		    write(result[1], &a_asleep, sizeof(a_asleep)) != sizeof(a_asleep))
			return 3;
		/* Alive until a ends, so that a tracer can still read its maps. */
		while (read(ab[0], line, 1) > 0)
			;
		return 0;
	}
	prctl(PR_SET_NAME, "pp-a");
	printf("ready %d %d\n", getpid(), b);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 2;
	for (int i = 0; i < rounds; i++) {
		a_pauses();
		if (i > 0)
			b_asleep += now_us() - since[1];
		a_wakes_b(ab[1]);
		t = since[0] = now_us();
		a_waits_for_b(ba[0]);
		a_blocked += now_us() - t;
	}
	if (read(result[0], &b_blocked, sizeof(b_blocked)) != sizeof(b_blocked) ||
	    read(result[0], &a_asleep, sizeof(a_asleep)) != sizeof(a_asleep))
		return 3;
	printf("blocked a %lld b %lld asleep a %lld b %lld\n", a_blocked, b_blocked, a_asleep,
	       b_asleep);
	fflush(stdout);
	/* Alive (and b with it) until stdin closes, so that a tracer can still
	 * read their maps when it reports. */
	while (fgets(line, sizeof(line), stdin))
		;
	return 0;
}
