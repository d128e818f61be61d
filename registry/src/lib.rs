//! What a tool says about itself, once, in `tools/<tool>/src/info.rs`.
//!
//! The tool's crate uses its description (the banner, the man page's
//! hand-written sections); everything that lists tools reads the
//! descriptions: the multi-call binary (`bpftools --list`, dispatch, man
//! pages' SEE ALSO, completions), `cargo xtask bench` (workload, peers),
//! `cargo xtask vmtest` (dry runs) and the README's generated tables. This
//! crate has no dependencies, so xtask reads the descriptions (it
//! `include!`s each `info.rs`) without building the tools.

pub mod hooks;

/// One tool's description.
#[derive(Debug)]
pub struct ToolInfo {
    /// The command's name, and its crate's and folder's.
    pub name: &'static str,
    /// Other names it runs under, each a link in the bundle and a binary of
    /// its crate (`ext4slower` for fsslower): the tool reads which one from
    /// its program name ([`ToolInfo::invoked_as`]).
    pub aliases: &'static [&'static str],
    /// What it shows, in one line (`bpftools --list`, README, bpftools(8)).
    pub summary: &'static str,
    pub kind: Kind,
    /// What it looks at: its SEE ALSO names the tools of its family.
    pub family: Family,
    /// The line a tool prints on stderr or stdout once it is attached, when
    /// it prints no table header (`Tracing ... Hit Ctrl-C to end.`).
    pub banner: &'static str,
    /// The argument sets the VM suite dry-runs on every kernel, each a line
    /// of README's kernel matrix: at least the default, and each option that
    /// changes the hooks.
    pub dry_runs: &'static [DryRun],
    /// Integration tests (name filters, as `cargo test` takes them) that
    /// exercise each hook variant: with the dry runs, what the VM suite runs
    /// on every kernel in CI (`cargo xtask vmtest --variants`); the whole
    /// suite runs without `--variants`.
    pub vm_tests: &'static [&'static str],
    /// How `cargo xtask bench` measures the tool; `None`: not benched yet.
    pub bench: Option<Bench>,
    /// The man page's hand-written sections (roff): DESCRIPTION, FIELDS,
    /// REQUIREMENTS, OVERHEAD...; NAME, SYNOPSIS, OPTIONS, EXAMPLES and SEE
    /// ALSO are generated.
    pub man: &'static str,
    /// Pages outside the bundle for SEE ALSO (`fio(1)`); the bundle's other
    /// tools are listed there by the generator.
    pub see_also: &'static [&'static str],
}

/// The kinds of tool, each with its shared part in `common`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Histograms aggregated in the kernel, printed per interval or at the end.
    Histogram,
    /// One line (or JSON object) per event.
    Event,
    /// Counts or times by stack: multi-line, folded, SVG, pprof.
    Stack,
    /// Counters per interval, a row each (a table per interval: top
    /// tools, syscount, funccount; common::kinds::table).
    IntervalTable,
}

/// What a tool looks at, as BCC's tools are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Processes and system calls.
    Process,
    /// CPUs and the scheduler.
    Cpu,
    Memory,
    /// Block devices.
    Disk,
    /// File systems, the VFS and the page cache.
    Files,
    /// TCP and the network stack.
    Network,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Histogram => "histogram",
            Kind::Event => "event",
            Kind::Stack => "stack",
            Kind::IntervalTable => "interval table",
        }
    }
}

/// One dry run of the VM suite.
#[derive(Debug, Clone, Copy)]
pub struct DryRun {
    /// Arguments after `--dry-run`, split at spaces; `$$` is the shell's pid.
    pub args: &'static str,
    /// How README's kernel matrix names the row, after the tool's name
    /// (`-p PID`).
    pub label: &'static str,
}

impl DryRun {
    /// The tool run with no option.
    pub const DEFAULT: DryRun = DryRun {
        args: "",
        label: "",
    };
}

/// A tool's benchmark: one workload, run untraced, under ours and under
/// each peer, in interleaved rounds.
#[derive(Debug)]
pub struct Bench {
    pub workload: Workload,
    /// Our configurations (usually one).
    pub ours: &'static [Ours],
    /// The other implementations, and yardsticks.
    pub peers: &'static [Peer],
    /// Measurements beyond the workload's slowdown.
    pub extras: &'static [Extra],
}

/// The bench's workloads (xtask/src/bench/workloads.rs runs them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// `n` opens of a file, timed.
    OpenLoop { opens: u32 },
    /// `n` stat()s of a file, timed.
    StatLoop { stats: u32 },
    /// `n` 1-byte pread()s of a cached file, timed.
    ReadLoop { reads: u32 },
    /// `n` fdatasync()s of a clean file, timed.
    FdatasyncLoop { syncs: u32 },
    /// `n` files created and unlinked, one after another, timed.
    UnlinkLoop { files: u32 },
    /// `n` rounds of a 4 KiB write and syncfs(), timed: each round's
    /// dirty page written back by the flusher, for reason `sync`.
    SyncfsLoop { syncs: u32 },
    /// `n` execs of a small program, timed.
    ExecLoop { execs: u32 },
    /// `n` fchown()s by root of a file of its own (chown-loop.c): one
    /// capability check each, timed.
    ChownLoop { chowns: u32 },
    /// `n` rounds of shmget(), shmat(), shmdt() and shmctl(IPC_RMID) of a
    /// private segment (shm-loop.c): four calls each, timed.
    ShmLoop { rounds: u32 },
    /// `n` rounds of a TCP socket bound to 127.0.0.1 port 0, listening and
    /// closed (bind-loop.c): one bind() and one listen() each, timed.
    BindLoop { rounds: u32 },
    /// `n` rounds of a pipe's descriptor sent over a unix socket pair
    /// (SCM_RIGHTS) and received (fd-pass-loop.c): one sendmsg() and one
    /// recvmsg() each, timed.
    FdPassLoop { rounds: u32 },
    /// `n` threads made by pthread_create() and joined, one after another
    /// (thread-loop.c), timed.
    ThreadLoop { threads: u32 },
    /// `threads` threads writing `writes` bytes each, one at a time, into
    /// one pipe that a reader drains (pipe-lock-loop.c): its mutex
    /// contended, timed.
    PipeLockLoop { threads: u32, writes: u32 },
    /// `threads` threads taking and releasing one pthread mutex `locks`
    /// times each, yielding while they hold it (mutex-loop.c): futex waits,
    /// timed.
    MutexLoop { threads: u32, locks: u32 },
    /// `rounds` writes of 1 to /proc/sys/vm/compact_memory: every zone
    /// compacted, timed.
    CompactLoop { rounds: u32 },
    /// `passes` reads of a 64 MiB file, its cached pages dropped before
    /// each, by a program in a 16 MiB memory cgroup (reclaim-read.c): the
    /// cgroup's reclaim in the reader, timed.
    CgroupReclaim { passes: u32 },
    /// `n` getppid() calls (getppid-loop.c), timed.
    GetppidLoop { calls: u32 },
    /// `n` kill()s of SIGCONT by a program to itself (sig-loop.c), timed.
    SignalLoop { signals: u32 },
    /// `perf bench sched pipe` with `n` messages: a context switch each way.
    SchedPipe { messages: u32 },
    /// fio: queue depth 1 O_DIRECT random reads on the scratch disk.
    FioRandread,
    /// A loopback transfer through a lossy link in a network namespace.
    LossyTransfer,
    /// `connections` loopback TCP connections in a network namespace, one
    /// after another, each accepted and closed by the server: a session's
    /// whole life per connection, timed.
    ConnectLoop { connections: u32 },
    /// Reads of a file kept in the page cache.
    CachedReads,
    /// A C program timing malloc+free pairs (per-pair cost).
    MallocLoop,
    /// A fixed amount of CPU-bound work in two processes (cpu-job.c),
    /// `units` each.
    CpuJob { units: u32 },
}

/// One of our configurations.
#[derive(Debug, Clone, Copy)]
pub struct Ours {
    pub label: &'static str,
    /// `{pid}` is the workload's process.
    pub args: &'static [&'static str],
    pub how: &'static str,
    pub ready: Ready,
}

impl Ours {
    /// The tool with no option, ready once it printed its banner.
    pub const DEFAULT: Ours = Ours {
        label: "ours",
        args: &[],
        how: "release build",
        ready: Ready::Banner,
    };
}

/// Another implementation measured beside ours.
#[derive(Debug, Clone, Copy)]
pub struct Peer {
    pub runs: PeerRun,
    pub ready: Ready,
    /// A yardstick that is no tool (empty probes): shown, never "best peer".
    pub reference: bool,
}

impl Peer {
    /// libbpf-tools' tool of the same name, no arguments.
    pub const fn libbpf_tools(ready: Ready) -> Peer {
        Peer {
            runs: PeerRun::LibbpfTools { args: &[] },
            ready,
            reference: false,
        }
    }

    /// bpftrace's script of the same name (or our tracepoint rewrite).
    pub const fn bpftrace(ready: Ready) -> Peer {
        Peer {
            runs: PeerRun::BpftraceScript,
            ready,
            reference: false,
        }
    }

    /// The probe tools' peers on a loop of malloc+free (`-p {pid}`, the
    /// tool told `c:malloc`): BCC's tool of the same name, ready at
    /// "Tracing 1 functions".
    pub const fn bcc_on_malloc() -> Peer {
        Peer {
            runs: PeerRun::Bcc {
                args: &["-p", "{pid}", "c:malloc"],
            },
            ready: Ready::Line("Tracing 1 functions"),
            reference: false,
        }
    }

    /// A bpftrace program on the workload's process (`-p {pid}`), labelled;
    /// `reference`: a yardstick (empty probes), never the best peer.
    pub const fn bpftrace_on_pid(
        label: &'static str,
        how: &'static str,
        program: &'static str,
        reference: bool,
    ) -> Peer {
        Peer {
            runs: PeerRun::BpftraceProgram {
                label,
                how,
                args: &["-p", "{pid}"],
                program,
            },
            ready: Ready::Line("bench: attached"),
            reference,
        }
    }

    /// The floor of the probe tools' malloc benches: an empty bpftrace
    /// uprobe on malloc, -p on the loop (the trap's own cost).
    pub const fn empty_uprobe_on_malloc() -> Peer {
        Peer::bpftrace_on_pid(
            "floor: an empty uprobe",
            "bpftrace, an empty program on malloc",
            "uprobe:{libc}:malloc {}",
            true,
        )
    }

    /// BCC's tool of the same name, no arguments.
    pub const fn bcc(ready: Ready) -> Peer {
        Peer {
            runs: PeerRun::Bcc { args: &[] },
            ready,
            reference: false,
        }
    }

    /// A floor: empty programs at `hooks` (`tp_btf/sys_enter`,
    /// `raw_tp/sys_exit`; `+clock` after one: it reads the clock), loaded by
    /// bpf(2) with no library: what any tool on those hooks costs at least.
    pub const fn floor_tp_btf(label: &'static str, hooks: &'static [&'static str]) -> Peer {
        Peer {
            runs: PeerRun::Floor {
                label,
                how: "xtask/src/bench/floor.c, empty programs (r0 = 0; exit) by bpf(2)",
                hooks,
            },
            ready: Ready::Line("Attached"),
            reference: true,
        }
    }

    /// One empty tp_btf program at sys_exit: what a tool that counts at
    /// each system call's exit costs at least.
    pub const FLOOR_EXIT: Peer = Peer::floor_tp_btf(
        "floor: empty tp_btf program at sys_exit",
        &["tp_btf/sys_exit"],
    );
    /// Empty tp_btf programs at sys_enter and sys_exit: what timing each
    /// system call costs at least.
    pub const FLOOR_ENTER_EXIT: Peer = Peer::floor_tp_btf(
        "floor: empty tp_btf programs at sys_enter and sys_exit",
        &["tp_btf/sys_enter", "tp_btf/sys_exit"],
    );
    /// A clock read at sys_enter and an empty program at sys_exit: what
    /// timing each system call costs at least (a start must be read).
    pub const FLOOR_CLOCK_ENTER_EXIT: Peer = Peer::floor_tp_btf(
        "floor: a clock read at sys_enter, empty at sys_exit (tp_btf)",
        &["tp_btf/sys_enter+clock", "tp_btf/sys_exit"],
    );
    /// The same as bpftrace attaches them.
    pub const FLOOR_BPFTRACE_ENTER_EXIT: Peer = Peer::floor_bpftrace(
        "floor: empty bpftrace programs at sys_enter and sys_exit",
        "tracepoint:raw_syscalls:sys_enter {} tracepoint:raw_syscalls:sys_exit {}",
    );

    /// A floor as bpftrace attaches it: empty probes (`-e`), no arguments.
    /// bpftrace 0.17 has no raw tracepoints: the classic raw_syscalls ones.
    pub const fn floor_bpftrace(label: &'static str, program: &'static str) -> Peer {
        Peer {
            runs: PeerRun::BpftraceProgram {
                label,
                how: "bpftrace -e, empty programs",
                args: &[],
                program,
            },
            ready: Ready::Line("Attaching"),
            reference: true,
        }
    }
}

/// How a peer is started.
#[derive(Debug, Clone, Copy)]
pub enum PeerRun {
    /// libbpf-tools' binary of the same name, with these arguments.
    LibbpfTools { args: &'static [&'static str] },
    /// BCC's `<name>-bpfcc`, with these arguments.
    Bcc { args: &'static [&'static str] },
    /// The script of the same name bpftrace ships, where it loads here
    /// without kprobes, else `tools/<name>/bench.bt` (a tracepoint rewrite).
    BpftraceScript,
    /// A bpftrace program (`-e`), labelled; `{libc}` is the C library's path.
    BpftraceProgram {
        label: &'static str,
        how: &'static str,
        args: &'static [&'static str],
        program: &'static str,
    },
    /// Another of our tools, as a yardstick (offwaketime beside
    /// offcputime: what the waker's half adds), labelled.
    OurTool {
        label: &'static str,
        tool: &'static str,
        args: &'static [&'static str],
    },
    /// Any other command (`perf record ...`), labelled.
    Command {
        label: &'static str,
        program: &'static str,
        args: &'static [&'static str],
    },
    /// Empty BPF programs attached at `hooks` with no library
    /// (xtask/src/bench/floor.c), labelled: a floor. A hook is
    /// `tp_btf/NAME` or `raw_tp/NAME` (`tp_btf/sys_enter`).
    Floor {
        label: &'static str,
        how: &'static str,
        hooks: &'static [&'static str],
    },
}

/// How the bench tells that a tracer is attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ready {
    /// Our tool's banner ([`ToolInfo::banner`]).
    Banner,
    /// A line holding this text.
    Line(&'static str),
    /// The first event the workload's probe causes.
    FirstEvent,
    /// It holds BPF programs (for tools that print nothing until the end).
    HoldsPrograms,
}

/// Measurements beyond the slowdown, each in xtask/src/bench/.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extra {
    /// The time to build a report of many outstanding allocations.
    LeakReports,
    /// `--unwind dwarf` against frame pointers, per event and per report.
    UnwindCost,
    /// Sampling at 99 and 999 Hz against bpftrace, BCC and perf's pipeline,
    /// whole-process-tree CPU; the report of many distinct stacks.
    SamplingCost,
    /// `--prometheus` scraped while tracing.
    PrometheusScrape,
    /// funccount: attaching and detaching 1,000 functions by one pattern,
    /// against BCC and bpftrace.
    AttachMany,
    /// The stack tools' side band (every process's mappings followed) on
    /// an exec-heavy job: with and without it, and perf record's.
    MappingRecords,
}

/// True if program name `program` names command `name`: exactly, or after
/// a prefix ending in `-` (`bpf-biolatency`, Fedora's naming).
pub fn names(program: &str, name: &str) -> bool {
    program == name
        || program
            .strip_suffix(name)
            .is_some_and(|prefix| prefix.ends_with('-'))
}

impl ToolInfo {
    /// The name, or the alias, that program name `program` runs (`None`:
    /// neither).
    pub fn invoked_as(&self, program: &str) -> Option<&'static str> {
        std::iter::once(self.name)
            .chain(self.aliases.iter().copied())
            .find(|n| names(program, n))
    }

    /// The name and every alias.
    pub fn all_names(&self) -> impl Iterator<Item = &'static str> {
        std::iter::once(self.name).chain(self.aliases.iter().copied())
    }

    /// SEE ALSO: bpftools(8), the tools of its family, then the other
    /// tools of its kind (as BCC's pages name related tools, not all of
    /// them), then its own pages outside the bundle.
    pub fn see_also(&self, all: &[&ToolInfo]) -> Vec<String> {
        let family = all
            .iter()
            .filter(|t| t.name != self.name && t.family == self.family);
        std::iter::once("bpftools".to_string())
            .chain(family.map(|t| t.name.to_string()))
            .map(|name| format!("{name}(8)"))
            .chain(self.see_also.iter().map(|s| s.to_string()))
            .collect()
    }
}

/// Checks that hold for every description: a test of each consumer runs it
/// over the registry it has.
pub fn check(all: &[&ToolInfo]) -> Result<(), String> {
    let mut names: Vec<&str> = all.iter().flat_map(|t| t.all_names()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("two tools are named {}", w[0]));
    }
    for t in all {
        let fail = |why: &str| Err(format!("tools/{}/src/info.rs: {why}", t.name));
        if t.summary.is_empty() || t.summary.contains('\n') || t.summary.len() > 110 {
            return fail("the summary is one line of at most 110 bytes");
        }
        if t.dry_runs.is_empty() {
            return fail("at least one dry run (DryRun::DEFAULT) is needed");
        }
        let pages = t.see_also(all);
        if let Some(twice) = pages
            .iter()
            .enumerate()
            .find(|(i, p)| pages[..*i].contains(p))
        {
            return fail(&format!(
                "see_also names {}, which SEE ALSO lists already (the family's pages)",
                twice.1
            ));
        }
        if t.vm_tests.is_empty() {
            return fail("vm_tests names no test: CI's VM kernels would run none of its hooks");
        }
        if t.man.contains(".SH SEE ALSO") || t.man.contains(".SH NAME") {
            return fail("man.roff must not write NAME or SEE ALSO: they are generated");
        }
        if !t.man.contains(".SH DESCRIPTION") {
            return fail("man.roff needs a DESCRIPTION section");
        }
        if let Some(b) = &t.bench {
            if b.ours.is_empty() {
                return fail("a bench needs at least one of our configurations");
            }
        }
    }
    Ok(())
}
