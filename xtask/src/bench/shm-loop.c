/* The shared memory bench: N rounds of shmget() of a private 4 KiB
 * segment, shmat(), shmdt() and shmctl(IPC_RMID): four calls a round,
 * and no other shm call. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/shm.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;

	for (long i = 0; i < n; i++) {
		int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
		void *p;

		if (id < 0) {
			perror("shm-loop: shmget");
			return 1;
		}
		p = shmat(id, NULL, 0);
		if (p == (void *)-1) {
			perror("shm-loop: shmat");
			return 1;
		}
		if (shmdt(p) || shmctl(id, IPC_RMID, NULL)) {
			perror("shm-loop: shmdt/shmctl");
			return 1;
		}
	}
	return 0;
}
