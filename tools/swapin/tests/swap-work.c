// Pages read back from swap, for swapin's tests: PAGES anonymous pages
// written, pushed out to swap (MADV_PAGEOUT, Linux 5.4) until none is
// resident (mincore), then, after a stop (SIGSTOP) for the tool to attach,
// read back: each a swap-in. Needs swap on.
//
//   swap-work PAGES
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

static long resident(unsigned char *vec, char *mem, size_t len, long page)
{
	long n = 0;

	if (mincore(mem, len, vec))
		return -1;
	for (size_t i = 0; i < len / page; i++)
		n += vec[i] & 1;
	return n;
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE), pages, left = -1;
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	volatile char sum = 0;
	unsigned char *vec;
	size_t len;
	char *mem;

	if (argc != 2) {
		fprintf(stderr, "usage: swap-work PAGES\n");
		return 2;
	}
	pages = atol(argv[1]);
	len = pages * page;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	vec = malloc(pages);
	if (mem == MAP_FAILED || !vec) {
		perror("swap-work");
		return 1;
	}
	for (long i = 0; i < pages; i++)
		mem[i * page] = (char)(i + 1);
	/* Pages under writeback stay in the swap cache (resident) until it
	 * ends: ask again until every one is out. */
	for (int tries = 0; tries < 250; tries++) {
		if (madvise(mem, len, MADV_PAGEOUT)) {
			perror("madvise(MADV_PAGEOUT)");
			return 1;
		}
		left = resident(vec, mem, len, page);
		if (left == 0)
			break;
		nanosleep(&pause, NULL);
	}
	if (left != 0) {
		fprintf(stderr, "swap-work: %ld of %ld pages still resident (is swap on?)\n", left,
			pages);
		return 3;
	}
	raise(SIGSTOP);
	for (long i = 0; i < pages; i++)
		sum += mem[i * page];
	return sum == 0 ? 4 : 0;
}
