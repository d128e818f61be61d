/* trace: what the front end tells the kernel side of each probe point,
 * and the record each hit sends. */
#ifndef __TRACE_H
#define __TRACE_H

#include "task.h"

/* arg1..arg6 (USDT probes' too). */
#define TRACE_ARGS 6
/* Strings read per hit (each %s, each STRCMP operand), and their most
 * bytes (-Z). */
#define TRACE_STRS 6
#define TRACE_STR_MAX 256
/* A tracepoint's record is copied up to this many bytes. */
#define TRACE_RECORD_MAX 256
/* Comparisons of a filter evaluated in the kernel (the rest, if any, in
 * the front end). */
#define TRACE_TERMS 4
#define TRACE_STACK_DEPTH 127
/* Values of a key counted in the kernel (argdist). */
#define TRACE_AGG_VALS 4

/* What an entry keeps for its return, by thread and pair. */
struct tr_stash_key {
	__u32 tid;
	__u32 pair;
};

struct tr_stash {
	__u64 ts;
	__u64 args[TRACE_ARGS];
};

/* Where a value comes from. */
enum tr_source {
	TR_SRC_NONE = 0,
	TR_SRC_ARG = 1,	/* args[index] */
	TR_SRC_RETVAL = 2,
	TR_SRC_FIELD = 3,	/* the record's bytes at offset (size bytes) */
	TR_SRC_DATALOC = 4, /* a string in the record, at the field's __data_loc */
	TR_SRC_CHARS = 5,	/* a char array in the record: copied with it */
	TR_SRC_TID = 6,
	TR_SRC_TGID = 7,
	TR_SRC_UID = 8,
	TR_SRC_GID = 9,
	TR_SRC_CPU = 10,
	TR_SRC_LATENCY = 11,	/* at a return: the time since its entry */
	TR_SRC_ENTRY_ARG = 12,	/* at a return: entry_args[index] */
};

/* A comparison of a value with a constant (signed, 64 bits). */
enum tr_op {
	TR_OP_NONZERO = 0,
	TR_OP_EQ = 1,
	TR_OP_NE = 2,
	TR_OP_LT = 3,
	TR_OP_LE = 4,
	TR_OP_GT = 5,
	TR_OP_GE = 6,
};

struct tr_value {
	__u8 source;
	__u8 index;
	/* Bytes of the value (1, 2, 4, 8) and whether to sign-extend. */
	__u8 size;
	__u8 is_signed;
	__u16 offset;
	/* Then narrowed again to this (argdist's type of the value); 0 none. */
	__u8 size2;
	__u8 is_signed2;
};

/* What argdist counts in the kernel, where its values are integers the
 * kernel reads: hits by their values, or a log2 histogram. */
enum tr_agg_kind {
	TR_AGG_NONE = 0,
	TR_AGG_COUNT = 1,
	TR_AGG_HIST = 2,
};

/* A count's key: the point and its values (a histogram's: its slot). */
struct tr_agg_key {
	__u32 point;
	__u32 pad;
	__s64 vals[TRACE_AGG_VALS];
};

struct tr_agg {
	__u64 count;
	__u64 total;
};

struct tr_term {
	struct tr_value value;
	__u32 op;
	__u32 pad;
	__s64 constant;
};

/* One probe point's settings, by its cookie. */
struct tr_probe {
	__u8 is_return;
	/* A kernel system call wrapper: arguments in the pt_regs its first
	 * argument points to. */
	__u8 syscall_regs;
	__u8 nterms;
	__u8 nstrs;
	/* Bytes of a tracepoint's record copied (0: none). */
	__u16 record_bytes;
	/* An entry that only keeps its time and arguments for the return
	 * of point `pair` (argdist's $latency, $entry()); a return that needs
	 * them (a hit without its entry is not sent). */
	__u8 stash;
	__u8 needs_entry;
	__u32 pair;
	/* argdist: counted here (enum tr_agg_kind) by these values. */
	__u8 agg;
	__u8 naggs;
	/* Its filter or values read the uid or gid. */
	__u8 ids;
	__u8 pad2;
	struct tr_value aggs[TRACE_AGG_VALS];
	struct tr_term terms[TRACE_TERMS];
	/* Where each string is read from: an address (TR_SRC_ARG, TR_SRC_RETVAL,
	 * TR_SRC_FIELD) or a __data_loc. */
	struct tr_value strs[TRACE_STRS];
};

struct tr_event {
	struct task_header task;
	__u32 probe;
	__u32 cpu;
	__u32 uid;
	__u32 gid;
	__u64 args[TRACE_ARGS];
	__u64 retval;
	/* A return's: the time since its entry and the entry's arguments. */
	__u64 latency_ns;
	__u64 entry_args[TRACE_ARGS];
	__u16 kframes;
	__u16 uframes;
	__u16 record_bytes;
	__u16 pad;
	/* The user strings the probe could not read (bit i: slot i), in a
	 * page the process had not touched yet (a string's first use), and
	 * their addresses: the front end reads them from the process. */
	__u32 str_missed;
	__u32 pad2;
	__u64 str_addrs[TRACE_STRS];
	/* -U at a user function's first instruction: the return address on
	 * top of the stack, the caller the frame pointer walk skips there;
	 * else 0. */
	__u64 entry_caller;
	__u8 record[TRACE_RECORD_MAX];
	/* Slot i at i * -Z bytes; sent up to the last slot used. */
	char strs[TRACE_STRS * TRACE_STR_MAX];
	__u64 kstack[TRACE_STACK_DEPTH];
	__u64 ustack[TRACE_STACK_DEPTH];
};

#endif
