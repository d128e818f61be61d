//! memleak: outstanding memory allocations by stack, in a process (uprobes
//! on its allocator) or in the kernel (kmem tracepoints).

mod allocator;
mod calls;
mod info;
mod mode;
mod report;

use std::collections::HashMap;
use std::ffi::OsString;
use std::io;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::{Parser, ValueEnum};
use common::cli::{self, CommonArgs, IdList};
use common::kernel::maps;
use common::kernel::probe::UprobeLinks;
use common::kinds::stack::{self as stacks, StackArgs};
use common::note;
use common::output::{Clock, Out};
use common::run::lifecycle::{self, Banner, Schedule, Setup, Tool, When};
use common::run::process;
use common::sym::Symbolizer;
use common::unwind::{self, Kept};
use libbpf_rs::skel::{OpenSkel, Skel};
use libbpf_rs::Link;

common::skeleton!("memleak");
use skel::{types, MemleakSkel, MemleakSkelBuilder, OpenMemleakSkel};

// SAFETY: repr(C) structs of integers, valid for any bytes.
unsafe impl plain::Plain for types::alloc_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::alloc_info {}
// SAFETY: as above.
unsafe impl plain::Plain for types::combined_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::combined {}
// SAFETY: as above.
unsafe impl plain::Plain for types::mem_event {}

const EXAMPLES: &str = "\
EXAMPLES:
    memleak -p 1234               # outstanding allocations of process 1234, every 5 s
    memleak -p 1234 -t            # also print each allocation and free
    memleak -p 1234 -a 10         # list the allocations too, every 10 s
    memleak -c './leaky --arg'    # run a command and trace it
    memleak -p 1234 -f 30 1 > mem.folded   # memory flame graph input
    memleak -p 1234 --pprof mem.pb.gz 30   # pprof profile, replaced every 30 s
    memleak                       # kernel allocations (kmalloc, kmem_cache, pages)
    memleak -P                    # kernel, with per-CPU allocations too
    memleak -p 1234 -s 5          # sample one allocation in 5
    memleak -p 1234 -O /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 -S je_
    memleak -p 1234 --unwind dwarf   # callers found without frame pointers";

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum SortBy {
    Size,
    Count,
}

/// Trace outstanding memory allocations that were not freed, and print
/// the stacks that made them, every interval.
///
/// With -p or -c, the allocator functions of a process (malloc, calloc,
/// realloc, reallocarray, posix_memalign, aligned_alloc, valloc, memalign,
/// pvalloc, mmap, munmap, mremap, free) are traced with uprobes; otherwise
/// kernel allocations are (kmalloc, kmem_cache_alloc, page allocations).
#[derive(Parser, Debug)]
#[command(name = "memleak", version, after_help = EXAMPLES)]
pub struct Args {
    /// Trace these processes (comma-separated pids); default: the kernel
    #[arg(short = 'p', long, value_parser = cli::id_list, conflicts_with = "command")]
    pid: Option<IdList>,
    /// Print each allocation and free as it happens
    #[arg(short = 't', long)]
    trace: bool,
    /// Show the address and size of each outstanding allocation
    #[arg(short = 'a', long)]
    show_allocs: bool,
    /// Only report allocations older than this many milliseconds
    #[arg(short = 'o', long, value_name = "MS", default_value_t = 500)]
    older: u64,
    /// Run this command (split at spaces) and trace it; the tool ends when
    /// it exits, with a last report
    #[arg(short = 'c', long, value_name = "CMD")]
    command: Option<String>,
    /// Report the in-kernel running totals per stack only (faster; no -o)
    #[arg(short = 'C', long)]
    combined_only: bool,
    /// Treat an address allocated again as freed (a free was missed)
    #[arg(short = 'F', long)]
    wa_missing_free: bool,
    /// Sample every N-th allocation, to cut the overhead
    #[arg(short = 's', long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..))]
    sample_rate: u64,
    /// Show this many stacks with the most outstanding memory
    #[arg(short = 'T', long, value_name = "N", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..))]
    top: u64,
    /// Ignore allocations smaller than this many bytes
    #[arg(short = 'z', long, value_name = "BYTES")]
    min_size: Option<u64>,
    /// Ignore allocations larger than this many bytes
    #[arg(short = 'Z', long, value_name = "BYTES")]
    max_size: Option<u64>,
    /// The allocator's library or executable (default: the process's libc)
    #[arg(short = 'O', long, value_name = "PATH")]
    obj: Option<PathBuf>,
    /// Kernel mode: trace per-CPU allocations too
    #[arg(short = 'P', long)]
    percpu: bool,
    /// A prefix of the allocator's function names (e.g. je_ for jemalloc)
    #[arg(short = 'S', long, value_name = "PREFIX", default_value = "")]
    symbols_prefix: String,
    /// Order the stacks by outstanding bytes or by allocation count
    #[arg(long, value_enum, default_value_t = SortBy::Size)]
    sort: SortBy,
    #[command(flatten)]
    stacks: StackArgs,
    /// Interval between reports, in seconds
    #[arg(default_value_t = 5, value_parser = cli::seconds)]
    interval: u64,
    /// Number of reports before exiting (default: unlimited)
    #[arg(value_parser = cli::positive_u64)]
    count: Option<u64>,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Memleak>();

struct Memleak {
    args: Args,
    command: Option<Vec<OsString>>,
    /// Traced processes: -p, or the started command.
    pids: Vec<u32>,
    /// Their names, remembered while they run.
    comms: HashMap<u32, String>,
    /// A process's allocator (-p, -c), not the kernel's.
    user_mode: bool,
    /// How uprobes attach here, in user mode.
    links: Option<UprobeLinks>,
    /// Where the probes go, per traced process.
    plans: Vec<(u32, allocator::Plan)>,
    symbolizer: Symbolizer,
    /// When the traced processes' memory maps were last cached.
    cached_at: Instant,
    clock: Clock,
    /// --svg's and --pprof's files, created before tracing.
    outputs: stacks::Outputs,
    /// When tracing started, for the profile's duration.
    started: Instant,
    /// --unwind dwarf (resolved from auto): the stacks unwound here.
    copies: Option<Kept>,
}

impl Memleak {
    /// Process `pid`'s memory map and name as they are now, for reports
    /// after it exits.
    fn keep(&mut self, pid: u32) {
        self.symbolizer.keep_process(pid);
        if let Some(comm) = process::comm(pid) {
            self.comms.insert(pid, comm);
        }
        self.cached_at = Instant::now();
    }
}

impl Tool for Memleak {
    common::tool_types!(MemleakSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let command = mode::check(&args)?;
        let user_mode = args.pid.is_some() || command.is_some();
        if args.stacks.containers && !user_mode {
            return Err(common::usage::usage(
                "--containers: without -p or a command memleak counts the kernel's own \
                 allocations, which belong to no container",
            ));
        }
        let dwarf = user_mode && {
            let exes: Vec<PathBuf> = match (&args.pid, &command) {
                (Some(IdList(pids)), _) => pids.iter().map(|p| unwind::executable_of(*p)).collect(),
                (None, Some(cmd)) => process::find_program(&cmd[0]).into_iter().collect(),
                (None, None) => Vec::new(),
            };
            unwind::choose(args.stacks.unwind.unwind, &exes)
        };
        let copies = dwarf.then(|| Kept::new(args.stacks.perf_max_stack_depth as usize));
        let symbolizer = Symbolizer::new().verbose(args.common.verbose);
        let outputs = stacks::Outputs::open(
            &args.stacks,
            stacks::Svg {
                title: "Outstanding Allocations Flame Graph",
                count_name: "bytes",
                cold: false,
                required: false,
            },
            stacks::Profile {
                sample_types: &[("inuse_space", "bytes"), ("inuse_objects", "count")],
            },
        )?;
        Ok(Memleak {
            outputs,
            started: Instant::now(),
            pids: args.pid.clone().map(|IdList(p)| p).unwrap_or_default(),
            comms: HashMap::new(),
            user_mode,
            copies,
            links: None,
            plans: Vec::new(),
            args,
            command,
            symbolizer,
            cached_at: Instant::now(),
            clock: Clock::start(),
        })
    }

    fn machine_readable(&self) -> bool {
        self.args.stacks.folded
    }

    fn command(&self) -> Option<Vec<OsString>> {
        self.command.clone()
    }

    fn configure(&mut self, open: &mut OpenMemleakSkel<'_>, setup: &Setup) -> Result<()> {
        let args = &self.args;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.min_size = args.min_size.unwrap_or(0);
        rodata.max_size = args.max_size.unwrap_or(u64::MAX);
        rodata.sample_every = args.sample_rate;
        // SAFETY: sysconf has no preconditions.
        rodata.page_size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
        rodata.trace_all = args.trace;
        rodata.wa_missing_free = args.wa_missing_free;
        rodata.user_stacks = self.user_mode;
        let dwarf = self.copies.is_some();
        rodata.dwarf_unwind = dwarf;
        rodata.stack_copy_size = args.stacks.unwind.copy_size();
        args.stacks.size_maps(
            &mut open.maps.stack_traces,
            &mut open.maps.ustack_scratch,
            dwarf,
        )?;
        if dwarf {
            // A copy per followed allocation: room for bursts.
            open.maps.events.set_max_entries(16 << 20)?;
        }
        self.pids.extend(setup.child);
        if self.user_mode {
            let links = common::kernel::probe::uprobe_links();
            self.links = Some(links);
            for pid in &self.pids {
                let lib = match &args.obj {
                    Some(obj) => obj.clone(),
                    None => allocator::libc_of(*pid)?,
                };
                let plan = allocator::plan(&lib, &args.symbols_prefix)?;
                if args.common.verbose || args.common.dry_run {
                    for line in allocator::describe(&plan, links) {
                        note!("{line}");
                    }
                }
                self.plans.push((*pid, plan));
            }
        }
        mode::choose_programs(open.open_object_mut(), self.links, args.percpu);
        Ok(())
    }

    fn attach(&mut self, skel: &mut MemleakSkel<'_>) -> Result<Vec<Link>> {
        self.started = Instant::now();
        if !self.user_mode {
            return lifecycle::attach_all(skel.object());
        }
        // A traced program's libraries (and its children's, and anything
        // run with -c) are followed as they are mapped.
        self.symbolizer.follow_mappings();
        if let (Some(copies), Some(view)) = (&mut self.copies, self.symbolizer.mappings_view()) {
            copies.unwinder.follow(view);
        }
        let mut links = Vec::new();
        for (pid, plan) in &self.plans {
            links.extend(allocator::attach(
                skel,
                *pid,
                plan,
                self.links.unwrap_or(UprobeLinks::Single),
            )?);
        }
        Ok(links)
    }

    fn banner(&self) -> Banner {
        Banner::Note(if self.user_mode {
            format!(
                "Attaching to pid {}, Ctrl+C to quit.",
                self.pids
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            )
        } else {
            Self::INFO.banner.to_string()
        })
    }

    fn schedule(&self) -> Schedule {
        Schedule {
            interval: Some(Duration::from_secs(self.args.interval)),
            count: self.args.count,
            duration: None,
        }
    }

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        // -t's records are all of one size; a stack copy is longer.
        if data.len() != std::mem::size_of::<types::mem_event>() {
            if let (Some(copies), Some(copy)) = (&mut self.copies, unwind::Copy::parse(data)) {
                copies.record(copy);
            }
            return Ok(());
        }
        let e: types::mem_event = maps::decode(data);
        calls::print_call(out, &self.args, &self.clock, &e)
    }

    fn command_started(&mut self, pid: u32) {
        // Its map now, once exec has mapped the program (soon after exec
        // returns), so that a command ending before the first refresh
        // still has its own functions named.
        let deadline = Instant::now() + Duration::from_secs(1);
        while !process::image_mapped(pid) && !process::exiting(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.keep(pid);
    }

    fn idle(&mut self) -> bool {
        // Keep the memory maps fresh (dlopen) while the processes live, so
        // that a last report after they exit can still symbolize.
        // Often: a -c command is caught between its exec and a quick exit
        // (its map read before the exec is the launcher's).
        if self.cached_at.elapsed() >= Duration::from_millis(100) {
            for pid in self.pids.clone() {
                if process::alive(pid) {
                    self.keep(pid);
                }
            }
        }
        // -p: every traced process is gone. (-c ends when its command exits.)
        self.command.is_none()
            && !self.pids.is_empty()
            && self.pids.iter().all(|p| !process::alive(*p))
    }

    fn report(&mut self, skel: &MemleakSkel<'_>, out: &mut Out, when: When) -> Result<()> {
        report::print(self, skel, out, when)
    }

    fn error_note(&self, index: u32) -> Option<&'static str> {
        report::error_note(index)
    }
}
