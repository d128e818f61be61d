// memleak's report phase at scale: leaks one 32-byte block from each of
// 10000 distinct call paths (14 levels, two call sites per level, picked by
// the bits of the path number), then waits to be killed.
//
// Prints "ready", waits for a line on stdin, leaks, prints "done".
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define PATHS 10000
#define DEPTH 14

__attribute__((noinline)) static void *leaf(void)
{
	return malloc(32);
}

static void *right(int depth, unsigned bits);

__attribute__((noinline)) static void *left(int depth, unsigned bits)
{
	void *p = depth == 0 ? leaf()
		  : (bits & 1) ? left(depth - 1, bits >> 1)
			       : right(depth - 1, bits >> 1);
	// Not a tail call: every level keeps its frame on the stack.
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) static void *right(int depth, unsigned bits)
{
	void *p = depth == 0 ? leaf()
		  : (bits & 1) ? left(depth - 1, bits >> 1)
			       : right(depth - 1, bits >> 1);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main(void)
{
	char line[16];

	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (unsigned i = 0; i < PATHS; i++)
		left(DEPTH, i);
	printf("done\n");
	fflush(stdout);
	pause();
	return 0;
}
