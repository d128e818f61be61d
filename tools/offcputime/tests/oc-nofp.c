/* main → outer → middle → inner, inner napping in libc's usleep(), for
 * offcputime's --unwind tests. Built -O2 -fomit-frame-pointer (and built
 * again with frame pointers for --unwind auto): without them, a frame
 * pointer walk from libc cannot find these callers; .eh_frame can. */
#include <stdio.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

/* Never set: the loop must look finite, or the compiler drops the code
 * after the calls and calls become jumps. */
volatile int stop;
volatile int sink;

NOINLINE void inner(void)
{
	while (!stop)
		usleep(20 * 1000);
	sink++;
}

NOINLINE void middle(void)
{
	inner();
	sink++;
}

NOINLINE void outer(void)
{
	middle();
	sink++;
}

int main(void)
{
	printf("ready\n");
	fflush(stdout);
	outer();
	return sink;
}
