// Contends one pthread mutex a known number of times, for futexctn's
// tests: ROUNDS times, the main thread holds the mutex, sees the worker
// thread blocked in futex() on it (/proc's syscall file), holds it HOLD_MS
// more, then lets it go; the worker takes it and lets it go at once. So
// the worker waits ROUNDS times, each at least HOLD_MS, in FUTEX_WAIT on
// the mutex, and nothing else of the process waits in FUTEX_WAIT on it
// (the two threads hand over by pipes). Then the main thread waits once
// on a condition variable (FUTEX_WAIT_BITSET, --all's), which the worker
// signals HOLD_MS after seeing it wait. Writes the mutex's address, the
// condition variable's and the worker's thread id to ADDR_FILE, then
// stops itself (SIGSTOP) for the tool to attach first.
//
//   futex-work ADDR_FILE ROUNDS HOLD_MS
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int signaled;
static int go[2], done[2];
static volatile pid_t worker_tid;
static int hold_ms;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

/* Out of line, so that the stack shows it between the thread and the
 * lock. */
__attribute__((noinline)) static void wait_for_lock(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
}

static int in_futex(pid_t tid);

static void *worker(void *arg)
{
	char c;

	(void)arg;
	worker_tid = syscall(SYS_gettid);
	while (read(go[0], &c, 1) == 1) {
		if (c == 'c') {
			/* The main thread's condition variable wait. */
			while (!in_futex(getpid()))
				sleep_ms(1);
			sleep_ms(hold_ms);
			pthread_mutex_lock(&lock);
			signaled = 1;
			pthread_mutex_unlock(&lock);
			pthread_cond_signal(&cond);
			continue;
		}
		wait_for_lock();
		if (write(done[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

/* True once thread `tid` is in futex() (its syscall number first in
 * /proc's syscall file). */
static int in_futex(pid_t tid)
{
	char path[64], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return atoi(buf) == SYS_futex;
}

int main(int argc, char **argv)
{
	pthread_t t;
	FILE *out;
	int rounds;
	char c = 'x';

	if (argc != 4) {
		fprintf(stderr, "usage: futex-work ADDR_FILE ROUNDS HOLD_MS\n");
		return 2;
	}
	rounds = atoi(argv[2]);
	hold_ms = atoi(argv[3]);
	if (pipe(go) || pipe(done) || pthread_create(&t, NULL, worker, NULL)) {
		perror("futex-work");
		return 1;
	}
	while (!worker_tid)
		sleep_ms(1);
	out = fopen(argv[1], "w");
	if (!out || fprintf(out, "%p %p %d\n", (void *)&lock, (void *)&cond, worker_tid) < 0 || fclose(out)) {
		perror(argv[1]);
		return 1;
	}
	raise(SIGSTOP);
	for (int i = 0; i < rounds; i++) {
		pthread_mutex_lock(&lock);
		if (write(go[1], &c, 1) != 1)
			return 1;
		while (!in_futex(worker_tid))
			sleep_ms(1);
		sleep_ms(hold_ms);
		pthread_mutex_unlock(&lock);
		if (read(done[0], &c, 1) != 1)
			return 1;
	}
	pthread_mutex_lock(&lock);
	if (write(go[1], "c", 1) != 1)
		return 1;
	while (!signaled)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	close(go[1]);
	/* No join: glibc's is a futex wait too (FUTEX_WAIT_BITSET). */
	return 0;
}
