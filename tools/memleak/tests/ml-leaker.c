/* Leaks 4 KiB every 10 ms from one named function, and frees everything
 * another named function allocates: memleak's test target. Built with
 * frame pointers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *kept[1 << 16];

__attribute__((noinline)) void *leak_4k_here(void)
{
	void *p = malloc(4096);

	memset(p, 1, 64);
	return p;
}

__attribute__((noinline)) void *allocate_to_be_freed(void)
{
	void *p = malloc(2048);

	memset(p, 2, 64);
	return p;
}

__attribute__((noinline)) void free_it(void *p)
{
	free(p);
}

int main(int argc, char **argv)
{
	unsigned n = 0;
	/* With an argument: leak that many times, then exit. */
	long rounds = argc > 1 ? atol(argv[1]) : -1;

	printf("ready\n");
	fflush(stdout);
	while (rounds < 0 || rounds-- > 0) {
		kept[n++ % (1 << 16)] = leak_4k_here();
		free_it(allocate_to_be_freed());
		usleep(10000);
	}
	return 0;
}
