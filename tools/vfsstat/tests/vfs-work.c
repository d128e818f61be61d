/* A known amount of VFS work for vfsstat's tests: stops itself first, so
 * that the tool can start with -p on it, then on SIGCONT creates FILE and
 * writes it WRITES times, fsyncs it FSYNCS times, opens it again and reads
 * it READS times, one byte at a time.
 * Usage: vfs-work FILE WRITES FSYNCS READS */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int writes, fsyncs, reads, fd, i;
	char c = 'x';

	if (argc != 5)
		return 2;
	writes = atoi(argv[2]);
	fsyncs = atoi(argv[3]);
	reads = atoi(argv[4]);
	raise(SIGSTOP);
	fd = open(argv[1], O_CREAT | O_EXCL | O_WRONLY, 0600);
	if (fd < 0)
		return 1;
	for (i = 0; i < writes; i++)
		if (write(fd, &c, 1) != 1)
			return 1;
	for (i = 0; i < fsyncs; i++)
		if (fsync(fd))
			return 1;
	close(fd);
	fd = open(argv[1], O_RDONLY);
	if (fd < 0)
		return 1;
	for (i = 0; i < reads; i++)
		if (read(fd, &c, 1) != 1)
			return 1;
	close(fd);
	return 0;
}
