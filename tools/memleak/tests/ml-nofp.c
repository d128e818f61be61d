/* main → outer → middle → inner, inner leaking 4 KiB per call through a
 * wrapper around malloc, for memleak's --unwind tests. Built -O2
 * -fomit-frame-pointer: a frame pointer walk from the wrapper cannot find
 * inner's callers; .eh_frame can. With an argument: that many leaks, 10 ms
 * apart, then exit; else forever. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

void *volatile kept[1 << 12];
volatile unsigned n;

NOINLINE void *wrapped_malloc(size_t size)
{
	void *p = malloc(size);

	if (p)
		memset(p, 1, 16);
	return p;
}

NOINLINE void inner(void)
{
	kept[n++ % (1 << 12)] = wrapped_malloc(4096);
}

NOINLINE void middle(void)
{
	inner();
	n += 0;
}

NOINLINE void outer(void)
{
	middle();
	n += 0;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : -1;

	printf("ready\n");
	fflush(stdout);
	while (rounds < 0 || rounds-- > 0) {
		outer();
		usleep(10000);
	}
	return 0;
}
