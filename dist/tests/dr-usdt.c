/* doctor --usdt's test program: one USDT probe (drtest:ping), fired once a
 * second until the program is killed, so that it can be listed by its
 * file and by its process. */
#include <stdio.h>
#include <sys/sdt.h>
#include <unistd.h>

int main(void)
{
	printf("ready\n");
	fflush(stdout);
	for (int i = 0;; i++) {
		DTRACE_PROBE1(drtest, ping, i);
		sleep(1);
	}
	return 0;
}
