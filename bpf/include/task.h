/* Task facts the tools' records carry. */
#ifndef __TASK_H
#define __TASK_H

/* The kernel's comm length (include/linux/sched.h), with its NUL. */
#define TASK_COMM_LEN 16

#endif
