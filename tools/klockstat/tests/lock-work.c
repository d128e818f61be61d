// Kernel lock contention of known callers, for klockstat's tests. Stops
// itself (SIGSTOP) before its work, for the tool to attach first.
//
//   lock-work pipe THREADS WRITES   THREADS threads write WRITES bytes each,
//                                   one at a time, into one pipe, which a
//                                   thread drains: the pipe's mutex, taken
//                                   in pipe_write and pipe_read.
//   lock-work dir DIR THREADS FILES THREADS threads create and unlink FILES
//                                   files each in DIR: the directory's
//                                   i_rwsem, taken for writing.
//   lock-work held ROUNDS           ROUNDS times, a writer holds the pipe's
//                                   mutex for 20 ms (its write faults on a
//                                   userfaultfd page, answered late) while
//                                   a second writer waits for it: at least
//                                   ROUNDS waits of about 15 ms in
//                                   pipe_write, on any machine.
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int pipe_fds[2];
static long per_thread;
static const char *dir;

static void *writer(void *arg)
{
	(void)arg;
	for (long i = 0; i < per_thread; i++) {
		if (write(pipe_fds[1], "x", 1) != 1) {
			perror("write");
			exit(1);
		}
	}
	return NULL;
}

static void *creator(void *arg)
{
	char path[4096];

	for (long i = 0; i < per_thread; i++) {
		snprintf(path, sizeof(path), "%s/f-%ld-%ld", dir, (long)arg, i);
		int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
		if (fd < 0 || close(fd) || unlink(path)) {
			perror(path);
			exit(1);
		}
	}
	return NULL;
}

static char *slow_page;
static int uffd;

/* Answers each fault on the slow page 20 ms late, holding up the write
 * that faulted (inside pipe_write, with the pipe's mutex held). */
static void *answer(void *arg)
{
	static char src[4096] __attribute__((aligned(4096))) = "y";
	struct uffd_msg msg;

	(void)arg;
	for (;;) {
		struct pollfd p = { .fd = uffd, .events = POLLIN };

		if (poll(&p, 1, -1) < 0 || read(uffd, &msg, sizeof(msg)) != sizeof(msg))
			return NULL;
		if (msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		usleep(20000);
		struct uffdio_copy copy = {
			.dst = (unsigned long)slow_page,
			.src = (unsigned long)src,
			.len = 4096,
		};
		if (ioctl(uffd, UFFDIO_COPY, &copy)) {
			perror("UFFDIO_COPY");
			exit(1);
		}
	}
}

static void *slow_writer(void *arg)
{
	(void)arg;
	if (write(pipe_fds[1], slow_page, 1) != 1) {
		perror("write");
		exit(1);
	}
	return NULL;
}

/* ROUNDS of: the slow writer faults inside pipe_write; 5 ms later a
 * second writer asks for the mutex it holds; the reader takes both bytes;
 * the page is dropped for the next round's fault. */
static int held(long rounds)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	pthread_t answerer, slow;
	char buf[2];

	uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		perror("userfaultfd");
		return 1;
	}
	slow_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	reg = (struct uffdio_register){
		.range = { .start = (unsigned long)slow_page, .len = 4096 },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	if (slow_page == MAP_FAILED || ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		perror("UFFDIO_REGISTER");
		return 1;
	}
	pthread_create(&answerer, NULL, answer, NULL);
	raise(SIGSTOP);
	for (long i = 0; i < rounds; i++) {
		pthread_create(&slow, NULL, slow_writer, NULL);
		usleep(5000);
		if (write(pipe_fds[1], "x", 1) != 1 || read(pipe_fds[0], buf, 1) != 1 ||
		    read(pipe_fds[0], buf, 1) != 1) {
			perror("pipe");
			return 1;
		}
		pthread_join(slow, NULL);
		madvise(slow_page, 4096, MADV_DONTNEED);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int pipe_mode = argc == 4 && !strcmp(argv[1], "pipe");
	int dir_mode = argc == 5 && !strcmp(argv[1], "dir");
	pthread_t threads[64];
	long n, total;

	if (argc == 3 && !strcmp(argv[1], "held")) {
		if (pipe(pipe_fds))
			return 1;
		return held(atol(argv[2]));
	}
	if (!pipe_mode && !dir_mode) {
		fprintf(stderr, "usage: lock-work pipe THREADS WRITES | dir DIR THREADS FILES | "
				"held ROUNDS\n");
		return 2;
	}
	if (dir_mode)
		dir = argv[2];
	n = atol(argv[dir_mode ? 3 : 2]);
	per_thread = atol(argv[dir_mode ? 4 : 3]);
	if (n < 1 || n > 64 || per_thread < 1)
		return 2;
	if (pipe_mode && pipe(pipe_fds)) {
		perror("pipe");
		return 1;
	}
	raise(SIGSTOP);
	for (long i = 0; i < n; i++)
		pthread_create(&threads[i], NULL, pipe_mode ? writer : creator, (void *)i);
	if (pipe_mode) {
		char buf[4096];

		for (total = 0; total < n * per_thread;) {
			ssize_t got = read(pipe_fds[0], buf, sizeof(buf));
			if (got <= 0) {
				perror("read");
				return 1;
			}
			total += got;
		}
	}
	for (long i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
