/* The signal bench: N kill()s of SIGCONT to itself, a signal the kernel
 * makes and then discards (its default action is to continue), so each is
 * one signal generated and one kill() call, and nothing else happens. */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;
	pid_t me = getpid();

	for (long i = 0; i < n; i++)
		kill(me, SIGCONT);
	return 0;
}
