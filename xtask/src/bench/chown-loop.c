/* The capability bench: N fchown()s by root of a file of its own, to
 * nobody and back, each a CAP_CHOWN check (an audited one, granted), and
 * nothing else the check tools see. The file: a temporary one, removed. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;
	char path[] = "/tmp/bench-chown-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0) {
		perror("chown-loop: mkstemp");
		return 1;
	}
	unlink(path);
	for (long i = 0; i < n; i++) {
		if (fchown(fd, i % 2 ? 0 : 65534, -1)) {
			perror("chown-loop: fchown");
			return 1;
		}
	}
	return 0;
}
