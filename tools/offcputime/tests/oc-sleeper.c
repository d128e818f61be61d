/* Sleeps forever in a function of its own, for offcputime's tests. Built
 * with frame pointers. The sleep is a raw system call made inside that
 * function, so the user stack does not start in libc (built without frame
 * pointers, which would hide its caller from a frame pointer walk). */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void nap(long ns)
{
	struct timespec ts = { 0, ns };
#if defined(__x86_64__)
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(SYS_nanosleep), "D"(&ts), "S"(0)
			 : "rcx", "r11", "memory");
#else
	syscall(SYS_nanosleep, &ts, 0);
#endif
}

__attribute__((noinline)) void sleep_forever_in_named_function(void)
{
	for (;;)
		nap(100 * 1000 * 1000);
}

__attribute__((noinline)) void *second_thread_sleeps(void *arg)
{
	(void)arg;
	for (;;)
		nap(50 * 1000 * 1000);
	return 0;
}

int main(void)
{
	pthread_t t;

	pthread_create(&t, 0, second_thread_sleeps, 0);
	printf("ready\n");
	fflush(stdout);
	sleep_forever_in_named_function();
	return 0;
}
