/* syscount's test program: after "go" on stdin, exactly N getppid() calls
 * and M open()s of a missing path (openat, ENOENT), then "done"; it waits
 * for its stdin to close before it ends. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char line[16];
	long n, m, i;

	if (argc != 3)
		return 100;
	n = atol(argv[1]);
	m = atol(argv[2]);
	puts("ready");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	for (i = 0; i < m; i++)
		open("/nonexistent-syscount-test/missing", O_RDONLY);
	puts("done");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin))
		;
	return 0;
}
