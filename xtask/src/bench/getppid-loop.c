/* The system call bench: N getppid() calls, the cheapest call there is, so
 * that what a tracer adds to each call shows. */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;

	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	return 0;
}
