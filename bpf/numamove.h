/* Shared by numamove.bpf.c and the numamove front end. */
#ifndef __NUMAMOVE_H
#define __NUMAMOVE_H

/* Running totals, slots of a per-CPU array; kept in BTF (numamove.bpf.c).
 * A migration is one call of the kernel's migrate_pages() for a reason
 * asked for (for NUMA balancing, one misplaced page or folio). */
enum numamove_stat {
	NM_MIGRATIONS,
	NM_NS,
	NM_PAGES,
	NM_FAILED,
	NM_MAX,
};

#endif
