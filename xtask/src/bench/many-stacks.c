/* For the unwind bench: 16384 distinct user stacks, each slept in once per
 * pass. Each path is 14 calls deep, each call to left() or right() by one
 * bit of the path's number. Built with frame pointers, so that --unwind fp
 * and dwarf both see every stack. */
#include <stdio.h>
#include <unistd.h>

#define DEPTH 14
#define NOINLINE __attribute__((noinline))

volatile int sink;

void left(unsigned path, int depth);
void right(unsigned path, int depth);

/* left() and right() are the same code under two names: the frames that
 * tell the paths apart. */
#define STEP(name)                                      \
	NOINLINE void name(unsigned path, int depth)    \
	{                                               \
		if (depth == DEPTH)                     \
			usleep(1);                      \
		else if (path >> depth & 1)             \
			right(path, depth + 1);         \
		else                                    \
			left(path, depth + 1);          \
		sink++;                                 \
	}

STEP(left)
STEP(right)

int main(void)
{
	printf("ready\n");
	fflush(stdout);
	for (;;)
		for (unsigned path = 0; path < 1u << DEPTH; path++)
			left(path, 0);
}
