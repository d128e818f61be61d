/* A file with a known life for filelife's tests: stops itself first, so
 * that the tool can start with -p on it, then on SIGCONT creates FILE,
 * keeps it MS milliseconds and deletes it; with MS "old", FILE exists
 * already and is only deleted; with "relink", FILE and FILE.link are two
 * names of one file and FILE.over another file: FILE is deleted (a link is
 * left) and FILE.link renamed over FILE.over (no unlink deletes a file).
 * Usage: life-work FILE MS|old|relink */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
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
	if (!strcmp(argv[2], "relink")) {
		char link[4096], over[4096];

		snprintf(link, sizeof(link), "%s.link", argv[1]);
		snprintf(over, sizeof(over), "%s.over", argv[1]);
		return unlink(argv[1]) || rename(link, over) ? 1 : 0;
	}
	fd = open(argv[1], O_CREAT | O_EXCL | O_WRONLY, 0600);
	if (fd < 0 || close(fd))
		return 1;
	nanosleep(&ts, 0);
	return unlink(argv[1]) ? 1 : 0;
}
