// A floor for the bench: empty BPF programs (r0 = 0; exit) attached at
// tracepoints with bpf(2) alone, no library, held until SIGINT or SIGTERM.
//
//   floor btf:sys_enter:ID raw:sys_exit ...
//
// btf:NAME:ID  a tp_btf program; ID is vmlinux's BTF id of the typedef
//              btf_trace_NAME (xtask finds it).
// raw:NAME     a raw_tp program.
// ...:clock    the program reads the clock (bpf_ktime_get_ns) first: the
//              least a program that times something does.
#include <errno.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static char log_buf[65536];

static int bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static void fail(const char *what, const char *hook, int err)
{
	fprintf(stderr, "floor: %s %s: errno %d (%s)\n", what, hook, err, strerror(err));
	if (log_buf[0])
		fprintf(stderr, "verifier log:\n%s\n", log_buf);
	exit(1);
}

// Returns the attached program's fd (the link: closing it detaches).
static int attach(const char *hook)
{
	char name[64], what[8] = "";
	unsigned int btf_id = 0;
	int btf;
	if (sscanf(hook, "btf:%63[^:]:%u:%7s", name, &btf_id, what) >= 2)
		btf = 1;
	else if (sscanf(hook, "raw:%63[^:]:%7s", name, what) >= 1)
		btf = 0;
	else {
		fprintf(stderr, "floor: %s: not btf:NAME:ID or raw:NAME\n", hook);
		exit(2);
	}
	int clock = strcmp(what, "clock") == 0;
	if (what[0] && !clock) {
		fprintf(stderr, "floor: %s: only :clock may follow\n", hook);
		exit(2);
	}

	struct bpf_insn insns[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_ktime_get_ns },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = btf ? BPF_PROG_TYPE_TRACING : BPF_PROG_TYPE_RAW_TRACEPOINT;
	// Without the clock, from the second instruction on.
	attr.insns = (unsigned long)(clock ? insns : insns + 1);
	attr.insn_cnt = sizeof(insns) / sizeof(insns[0]) - !clock;
	attr.license = (unsigned long)"GPL";
	attr.log_buf = (unsigned long)log_buf;
	attr.log_size = sizeof(log_buf);
	attr.log_level = 1;
	if (btf) {
		attr.expected_attach_type = BPF_TRACE_RAW_TP;
		attr.attach_btf_id = btf_id;
	}
	// floor_enter, floor_exit: what bpftool shows (15 bytes at most).
	const char *short_name = strncmp(name, "sys_", 4) == 0 ? name + 4 : name;
	snprintf(attr.prog_name, sizeof(attr.prog_name), "floor_%.9s", short_name);
	log_buf[0] = 0;
	int prog = bpf(BPF_PROG_LOAD, &attr);
	if (prog < 0)
		fail("loading", hook, errno);

	memset(&attr, 0, sizeof(attr));
	// tp_btf: the hook comes from attach_btf_id; the name must be 0.
	attr.raw_tracepoint.name = btf ? 0 : (unsigned long)name;
	attr.raw_tracepoint.prog_fd = prog;
	log_buf[0] = 0;
	int link = bpf(BPF_RAW_TRACEPOINT_OPEN, &attr);
	if (link < 0)
		fail("attaching", hook, errno);
	return link;
}

static void on_signal(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: floor btf:NAME:BTF_ID | raw:NAME ...\n");
		return 2;
	}
	// SIGINT and SIGTERM held until sigsuspend waits for them: one that
	// comes while attaching or printing is not lost.
	struct sigaction sa;
	sigset_t stop, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, &old);
	for (int i = 1; i < argc; i++)
		attach(argv[i]);
	printf("Attached %d programs\n", argc - 1);
	fflush(stdout);
	sigsuspend(&old);
	// Exiting closes the fds: the programs are detached and freed.
	return 0;
}
