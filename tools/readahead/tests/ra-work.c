/* Known read-ahead for readahead's tests: writes FILE_A (A_PAGES pages) and
 * FILE_B (64 pages), syncs them and drops them from the page cache
 * (checked with mincore: exit 3 if a page stayed), then stops itself so
 * that the tool can start with -p on it. On SIGCONT it reads all of FILE_A,
 * one page per read (each read marks its page used), and only the first
 * page of FILE_B (the rest of B's read-ahead window stays unused), PAUSE_MS
 * after A.
 * Usage: ra-work FILE_A A_PAGES FILE_B PAUSE_MS */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define B_PAGES 64

static int make(const char *path, int pages)
{
	char buf[PAGE];
	unsigned char vec[1024];
	void *map;
	int fd, i;

	memset(buf, 'r', sizeof(buf));
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0)
		return 1;
	for (i = 0; i < pages; i++)
		if (write(fd, buf, PAGE) != PAGE)
			return 1;
	if (fsync(fd) || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		return 1;
	map = mmap(NULL, (size_t)pages * PAGE, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED || pages > (int)sizeof(vec) || mincore(map, (size_t)pages * PAGE, vec))
		return 1;
	for (i = 0; i < pages; i++)
		if (vec[i] & 1)
			return 3;
	munmap(map, (size_t)pages * PAGE);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	char buf[PAGE];
	int pages, fd, i, err;
	struct timespec pause;
	long pause_ms;

	if (argc != 5)
		return 2;
	pages = atoi(argv[2]);
	pause_ms = atol(argv[4]);
	pause.tv_sec = pause_ms / 1000;
	pause.tv_nsec = (pause_ms % 1000) * 1000000;
	if ((err = make(argv[1], pages)) || (err = make(argv[3], B_PAGES)))
		return err;
	raise(SIGSTOP);
	fd = open(argv[1], O_RDONLY);
	if (fd < 0)
		return 1;
	for (i = 0; i < pages; i++)
		if (read(fd, buf, PAGE) != PAGE)
			return 1;
	close(fd);
	if (pause_ms && nanosleep(&pause, NULL))
		return 1;
	fd = open(argv[3], O_RDONLY);
	if (fd < 0 || read(fd, buf, PAGE) != PAGE)
		return 1;
	close(fd);
	return 0;
}
