/* 100k malloc+free pairs, then exactly 500 leaks from leak_one, with
 * free(NULL) calls between: what memleak must count exactly whatever its
 * probes' placement. Waits for a line on stdin before and after. */
#include <stdio.h>
#include <stdlib.h>

#define PAIRS 100000
#define LEAKS 500

__attribute__((noinline)) void churn(void)
{
	for (long i = 0; i < PAIRS; i++) {
		void *p = malloc(64);
		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
		free(NULL);
	}
}

__attribute__((noinline)) void *leak_one(void)
{
	return malloc(48);
}

int main(void)
{
	static void *keep[LEAKS];
	char line[8];

	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	churn();
	for (int i = 0; i < LEAKS; i++)
		keep[i] = leak_one();
	printf("done\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	return keep[0] == NULL;
}
