/* The stack kind's short-lived workload: processes that live about MS
 * milliseconds in main -> outer -> middle -> inner, spinning there
 * (MODE spin), sleeping there (MODE sleep) or waking there (MODE wake: a
 * child of its own, named sk-woken, blocked reading a pipe, woken by a
 * byte written from inner each millisecond), then exit.
 *   brief MODE MS            one such process
 *   brief MODE MS N          prints "ready", waits for a line on stdin,
 *                            then forks N such children one after the
 *                            other (each waited for in run_forks); it
 *                            is named sk-parent, its children sk-brief
 * Built with frame pointers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

volatile long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* write(2) made here, not in libc's frameless wrapper (whose frame
 * pointer walk would skip the caller). */
static inline long raw_write(int fd, const void *buf, long len)
{
#ifdef __x86_64__
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "0"((long)SYS_write), "D"((long)fd), "S"(buf), "d"(len)
		     : "rcx", "r11", "memory");
	return ret;
#else
	return write(fd, buf, len);
#endif
}

/* Inlined into inner: each wakeup of the reader is inner's. The reader
 * leaves at the byte 'q', so that neither end's exit wakes the other. */
static inline void wake(double end)
{
	int fds[2];
	char c;

	if (pipe(fds))
		exit(1);
	if (fork() == 0) {
		prctl(PR_SET_NAME, "sk-woken");
		close(fds[1]);
		while (read(fds[0], &c, 1) == 1 && c != 'q')
			;
		_exit(0);
	}
	close(fds[0]);
	while (now() < end) {
		double tick = now() + 1e-3;

		raw_write(fds[1], "w", 1);
		while (now() < tick)
			sink++;
	}
	raw_write(fds[1], "q", 1);
}

NOINLINE void inner(const char *mode, long ms)
{
	double end = now() + ms / 1e3;

	if (!strcmp(mode, "sleep")) {
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

#ifdef __x86_64__
		/* The system call made here, not in libc's frameless wrapper,
		 * whose frame pointer walk would skip this function. */
		long ret;

		asm volatile("syscall"
			     : "=a"(ret)
			     : "0"((long)SYS_nanosleep), "D"(&ts), "S"(0L)
			     : "rcx", "r11", "memory");
		sink += ret;
#else
		nanosleep(&ts, NULL);
#endif
		sink++;
		return;
	}
	if (!strcmp(mode, "wake")) {
		wake(end);
		return;
	}
	while (now() < end)
		for (int i = 0; i < 10000; i++)
			sink += i;
}

NOINLINE void middle(const char *mode, long ms)
{
	inner(mode, ms);
	sink++;
}

NOINLINE void outer(const char *mode, long ms)
{
	middle(mode, ms);
	sink++;
}

NOINLINE void run_forks(const char *mode, long ms, int n)
{
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			prctl(PR_SET_NAME, "sk-brief");
			outer(mode, ms);
			_exit(0);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	sink++;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "spin";
	long ms = argc > 2 ? atol(argv[2]) : 100;
	char line[16];

	if (argc > 3) {
		/* The parent is not one of the short-lived: named apart. */
		prctl(PR_SET_NAME, "sk-parent");
		printf("ready\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
		run_forks(mode, ms, atoi(argv[3]));
		return 0;
	}
	outer(mode, ms);
	return 0;
}
