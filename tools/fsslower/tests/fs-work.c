/* Known file system work for fsslower's tests: stops itself first, so
 * that the tool can start with -p on it, then on SIGCONT creates FILE,
 * writes WRITE_BYTES to it in one write(), fsyncs it, and reads READ_BYTES
 * at READ_OFFSET with one pread(): an open, a write, an fsync and a read.
 * Usage: fs-work FILE WRITE_BYTES READ_BYTES READ_OFFSET */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t size, len;
	off_t at;
	char *buf;
	int fd;

	if (argc != 5)
		return 2;
	size = strtoul(argv[2], 0, 0);
	len = strtoul(argv[3], 0, 0);
	at = strtol(argv[4], 0, 0);
	buf = malloc(size > len ? size : len);
	if (!buf)
		return 1;
	memset(buf, 'x', size > len ? size : len);
	raise(SIGSTOP);
	fd = open(argv[1], O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0)
		return 1;
	if (write(fd, buf, size) != (ssize_t)size)
		return 1;
	if (fsync(fd))
		return 1;
	if (pread(fd, buf, len, at) != (ssize_t)len)
		return 1;
	return close(fd) ? 1 : 0;
}
