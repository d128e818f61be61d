/* Known file system work for fsdist's tests: stops itself first, so that
 * the tool can start with -p on it, then on SIGCONT does N rounds on FILE
 * of one open, one 4 KiB pwrite, one fsync, one 4 KiB pread and one fstat
 * (and a close): N of each operation, no other. Usage: fs-ops FILE N */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[4096];
	struct stat st;
	long n, i;
	int fd;

	if (argc != 3)
		return 2;
	n = strtol(argv[2], 0, 0);
	memset(buf, 'x', sizeof(buf));
	raise(SIGSTOP);
	for (i = 0; i < n; i++) {
		fd = open(argv[1], O_CREAT | O_RDWR, 0600);
		if (fd < 0)
			return 1;
		if (pwrite(fd, buf, sizeof(buf), i * sizeof(buf)) != sizeof(buf))
			return 1;
		if (fsync(fd))
			return 1;
		if (pread(fd, buf, sizeof(buf), 0) != sizeof(buf))
			return 1;
		if (fstat(fd, &st))
			return 1;
		if (close(fd))
			return 1;
	}
	return 0;
}
