/* threadsnoop's workload: stops itself (the test starts the tool on its
 * pid, then continues it), then makes argv[1] threads with
 * pthread_create(), each starting in worker(), one after another, and
 * argv[2] threads by a raw clone(), which no pthread_create() names. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>

static volatile int raw_done;

void *worker(void *arg)
{
	return arg;
}

static int raw_thread(void *arg)
{
	__atomic_add_fetch(&raw_done, 1, __ATOMIC_SEQ_CST);
	/* This thread alone: the raw clone has no pthread to end. */
	syscall(SYS_exit, 0);
	return 0;
}

int main(int argc, char **argv)
{
	int pthreads = argc > 1 ? atoi(argv[1]) : 4;
	int raws = argc > 2 ? atoi(argv[2]) : 1;
	int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
		    CLONE_SYSVSEM;

	raise(SIGSTOP);
	for (int i = 0; i < pthreads; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, worker, NULL) || pthread_join(t, NULL))
			return 1;
	}
	for (int i = 0; i < raws; i++) {
		size_t size = 64 * 1024;
		char *stack = malloc(size);

		if (!stack || clone(raw_thread, stack + size, flags, NULL) < 0)
			return 1;
		while (__atomic_load_n(&raw_done, __ATOMIC_SEQ_CST) <= i)
			usleep(1000);
	}
	/* The raw threads' stacks stay: the threads may still be ending. */
	usleep(10000);
	return 0;
}
