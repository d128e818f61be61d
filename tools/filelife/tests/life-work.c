/* A file with a known life for filelife's tests: stops itself first, so
 * that the tool can start with -p on it, then on SIGCONT creates FILE,
 * keeps it MS milliseconds and deletes it; with MS "old", FILE exists
 * already and is only deleted.
 * Usage: life-work FILE MS|old */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec ts;
	long ms;
	int fd;

	if (argc != 3)
		return 2;
	ms = atol(argv[2]);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	raise(SIGSTOP);
	if (!strcmp(argv[2], "old"))
		return unlink(argv[1]) ? 1 : 0;
	fd = open(argv[1], O_CREAT | O_EXCL | O_WRONLY, 0600);
	if (fd < 0 || close(fd))
		return 1;
	nanosleep(&ts, 0);
	return unlink(argv[1]) ? 1 : 0;
}
