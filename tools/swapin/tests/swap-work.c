// Pages read back from swap, for swapin's tests: after a stop (SIGSTOP,
// for the tool to attach and the test to place it in a memory cgroup),
// PAGES anonymous pages written, then read twice. In a memory cgroup
// smaller than PAGES with swap on, the writes push the first pages out to
// swap, and the reads bring them back: swap-ins.
//
//   swap-work PAGES
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE), pages;
	volatile char sum = 0;
	char *mem;

	if (argc != 2) {
		fprintf(stderr, "usage: swap-work PAGES\n");
		return 2;
	}
	pages = atol(argv[1]);
	mem = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		   0);
	if (mem == MAP_FAILED) {
		perror("swap-work");
		return 1;
	}
	raise(SIGSTOP);
	for (long i = 0; i < pages; i++)
		mem[i * page] = (char)(i % 127 + 1);
	for (int pass = 0; pass < 2; pass++)
		for (long i = 0; i < pages; i++)
			sum += mem[i * page];
	return sum == 0 ? 4 : 0;
}
