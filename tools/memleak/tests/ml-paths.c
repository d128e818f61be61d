/* Each allocator path memleak follows, from a function of its own, ROUNDS
 * times, then exits a second later: what each of memleak's probe modes must count the
 * same. Built with frame pointers; every block is stored so that no call
 * is a tail call and each function keeps its frame. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>

#define ROUNDS 20

static void *kept[64 * ROUNDS];
static int n;

__attribute__((noinline)) void leak_calloc(void)
{
	kept[n++] = calloc(10, 100);
}

/* Counted once, by its size after the realloc: the first block is freed. */
__attribute__((noinline)) void leak_realloc_grown(void)
{
	void *p = malloc(100);

	kept[n++] = realloc(p, 5000);
}

/* glibc's realloc(NULL, n) calls malloc: counted once, as the realloc. */
__attribute__((noinline)) void leak_realloc_null(void)
{
	kept[n++] = realloc(NULL, 3000);
}

/* reallocarray calls realloc, which calls malloc: counted once. */
__attribute__((noinline)) void leak_reallocarray(void)
{
	kept[n++] = reallocarray(NULL, 10, 400);
}

/* realloc(p, 0) frees p: nothing outstanding. */
__attribute__((noinline)) void freed_by_realloc_zero(void)
{
	void *p = malloc(2000);

	kept[n++] = realloc(p, 0);
}

__attribute__((noinline)) void leak_posix_memalign(void)
{
	void *p = NULL;

	if (posix_memalign(&p, 64, 700) == 0)
		kept[n++] = p;
}

__attribute__((noinline)) void leak_aligned_alloc(void)
{
	kept[n++] = aligned_alloc(64, 640);
}

/* Above glibc's mmap threshold: malloc calls mmap; counted once, as the
 * malloc, with the size asked for. */
__attribute__((noinline)) void leak_large(void)
{
	kept[n++] = malloc(1 << 20);
}

__attribute__((noinline)) void frees_null(void)
{
	free(NULL);
	kept[n] = NULL;
}

int main(void)
{
	for (int i = 0; i < ROUNDS; i++) {
		leak_calloc();
		leak_realloc_grown();
		leak_realloc_null();
		leak_reallocarray();
		freed_by_realloc_zero();
		leak_posix_memalign();
		leak_aligned_alloc();
		leak_large();
		frees_null();
	}
	/* Alive long enough for memleak to read its memory maps, so that the
	 * report at its exit can name the functions. */
	usleep(1200 * 1000);
	return kept[0] == NULL;
}
