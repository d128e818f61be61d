/* Shared by hardirqs.bpf.c and the hardirqs front end. */
#ifndef __HARDIRQS_H
#define __HARDIRQS_H

enum hardirq_limits {
	/* An IRQ handler's name kept: irqaction's name, as /proc/interrupts
	 * shows it (`virtio1-req.0`, `nvme0q3`). */
	IRQ_NAME_LEN = 32,
};

struct irq_key {
	char name[IRQ_NAME_LEN];
};

#endif
