/* A known number of dentry cache lookups for dcstat's and dcsnoop's tests:
 * goes into DIR and stops itself, so that the tool can start with -p on
 * it; then on SIGCONT creates N new files there (open O_CREAT|O_EXCL of a
 * name the cache has never seen: a slow lookup that misses each), then
 * stats each of them (a lookup that the cache answers), then stats N names
 * that do not exist and were never looked up (a miss each).
 * Usage: dc-work DIR N */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char name[64];
	struct stat st;
	int n, i, fd;

	if (argc != 3 || chdir(argv[1]))
		return 2;
	n = atoi(argv[2]);
	raise(SIGSTOP);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "dc-file-%d", i);
		fd = open(name, O_CREAT | O_EXCL | O_WRONLY, 0600);
		if (fd < 0)
			return 1;
		close(fd);
	}
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "dc-file-%d", i);
		if (stat(name, &st))
			return 1;
	}
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "dc-missing-%d", i);
		if (stat(name, &st) == 0)
			return 1;
	}
	return 0;
}
