/* Shared by dcstat.bpf.c and the dcstat front end. */
#ifndef __DCSTAT_H
#define __DCSTAT_H

/* The counters, in BCC's column order; kept in BTF (dcstat.bpf.c). */
enum dc_stat {
	/* Each path component looked up in the dentry cache (lookup_fast). */
	DC_REFS,
	/* Each lookup that left the fast path for d_lookup. */
	DC_SLOW,
	/* Each d_lookup that found nothing. */
	DC_MISS,
	DC_MAX,
};

#endif
