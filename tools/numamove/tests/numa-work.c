/* numamove's workloads. Each stops itself (SIGSTOP) once its memory is in
 * place, for the tool to attach, and then:
 *
 *   numa-work compact MIB
 *       MIB of private pages, every other one freed, then a write of 1 to
 *       /proc/sys/vm/compact_memory: compaction migrates the pages left
 *       (reason compaction), in this process. Prints "migrated N": the
 *       growth of /proc/vmstat's pgmigrate_success over the write.
 *   numa-work misplace MIB SECONDS
 *       MIB of pages placed on node 1 (mbind), their policy then reset to
 *       the default (local: node 0, where the CPUs are), then written again
 *       and again for up to SECONDS while NUMA balancing moves them. Prints
 *       "on node 0: N of M" (move_pages' view at the end). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define MPOL_DEFAULT 0
#define MPOL_BIND 2

static unsigned long vmstat(const char *name)
{
	char key[64];
	unsigned long v;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f) {
		perror("/proc/vmstat");
		exit(1);
	}
	while (fscanf(f, "%63s %lu", key, &v) == 2)
		if (!strcmp(key, name)) {
			fclose(f);
			return v;
		}
	fclose(f);
	fprintf(stderr, "no %s in /proc/vmstat\n", name);
	exit(1);
}

static char *pages(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	/* Base pages: a huge page would move as one, or split. */
	madvise(p, len, MADV_NOHUGEPAGE);
	return p;
}

static void touch(char *p, size_t len, char v)
{
	for (size_t off = 0; off < len; off += PAGE)
		((volatile char *)p)[off] = v;
}

static int compact(size_t len)
{
	char *p = pages(len);
	unsigned long before, after;
	int fd;

	touch(p, len, 1);
	for (size_t off = 0; off < len; off += 2 * PAGE)
		madvise(p + off, PAGE, MADV_DONTNEED);
	raise(SIGSTOP);
	before = vmstat("pgmigrate_success");
	fd = open("/proc/sys/vm/compact_memory", O_WRONLY);
	if (fd < 0 || write(fd, "1", 1) != 1) {
		perror("compact_memory");
		return 1;
	}
	close(fd);
	after = vmstat("pgmigrate_success");
	printf("migrated %lu\n", after - before);
	return 0;
}

/* How many of the n pages at p are on node 0 (move_pages with no target
 * nodes only asks). */
static long on_node0(char *p, long n)
{
	void **addrs = calloc(n, sizeof(*addrs));
	int *status = calloc(n, sizeof(*status));
	long here = 0;

	for (long i = 0; i < n; i++)
		addrs[i] = p + i * PAGE;
	if (syscall(SYS_move_pages, 0, n, addrs, NULL, status, 0)) {
		perror("move_pages");
		exit(1);
	}
	for (long i = 0; i < n; i++)
		here += status[i] == 0;
	free(addrs);
	free(status);
	return here;
}

static int misplace(size_t len, int seconds)
{
	unsigned long node1 = 1 << 1;
	long n = len / PAGE;
	char *p = pages(len);
	time_t end;

	if (syscall(SYS_mbind, p, len, MPOL_BIND, &node1, 64, 0)) {
		perror("mbind node 1");
		return 1;
	}
	touch(p, len, 1);
	if (on_node0(p, n)) {
		fprintf(stderr, "pages not on node 1\n");
		return 1;
	}
	/* The default policy: pages belong on the faulting CPU's node. */
	if (syscall(SYS_mbind, p, len, MPOL_DEFAULT, NULL, 0, 0)) {
		perror("mbind default");
		return 1;
	}
	raise(SIGSTOP);
	end = time(NULL) + seconds;
	while (time(NULL) < end && on_node0(p, n) < n)
		for (int i = 0; i < 20; i++)
			touch(p, len, i);
	printf("on node 0: %ld of %ld\n", on_node0(p, n), n);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 3 && !strcmp(argv[1], "compact"))
		return compact((size_t)atol(argv[2]) << 20);
	if (argc == 4 && !strcmp(argv[1], "misplace"))
		return misplace((size_t)atol(argv[2]) << 20, atoi(argv[3]));
	fprintf(stderr, "usage: numa-work compact MIB | misplace MIB SECONDS\n");
	return 2;
}
