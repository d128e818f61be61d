//! profile: on-CPU stack sampling. A perf event on each CPU runs a BPF
//! program F times a second (or every N events), which counts the sample
//! in the kernel by process and stacks; the report prints BCC's multi-line
//! stacks, folded lines, JSON, a flame graph or a pprof profile.

mod info;
mod report;

use std::collections::HashMap;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CommonArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::perf::{self, Counter, Rate, Sampler};
use common::kinds::stack::{self as stacks, Key, StackArgs, User};
use common::output::Out;
use common::run::lifecycle::{self, Banner, Schedule, Setup, Tool, When};
use common::stacks::sym::Symbolizer;
use common::stacks::unwind::{self, StackTable, Unwinder};
use common::usage::usage;
use libbpf_rs::{Link, MapHandle};

common::skeleton!("profile");
use skel::{types, OpenProfileSkel, ProfileSkel, ProfileSkelBuilder};

// SAFETY: a repr(C) struct of integers and a byte array, valid for any bytes.
unsafe impl plain::Plain for types::pr_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::pr_sample {}

const EXAMPLES: &str = "\
EXAMPLES:
    profile             # profile stack traces at 49 Hertz until Ctrl-C
    profile -F 99       # profile stack traces at 99 Hertz
    profile -c 1000000  # profile stack traces every 1 in a million events
    profile 5           # profile at 49 Hertz for 5 seconds only
    profile -f 5        # output in folded format for flame graphs
    profile -F 99 -f 10 | inferno-flamegraph > cpu.svg
    profile --svg cpu.svg 10        # write the flame graph directly
    profile --pprof cpu.pb.gz 10; go tool pprof -top cpu.pb.gz
    profile -p 185      # only profile process with PID 185
    profile -L 185      # only profile thread with TID 185
    profile -U          # only show user space stacks (no kernel)
    profile -K          # only show kernel space stacks (no user)
    profile -C 1        # only sample CPU 1
    profile -I          # include the idle task (swapper)
    profile --cgroup /sys/fs/cgroup/system.slice  # one cgroup v2 only
    profile --unwind dwarf -p 185   # user stacks through code built
                                    # without frame pointers";

/// Profile CPU usage by sampling stack traces at a timed interval: where
/// the CPUs spend their time, by process and stack.
#[derive(Parser, Debug)]
#[command(name = "profile", version, after_help = EXAMPLES)]
struct Args {
    /// Profile these processes only (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list, conflicts_with = "tid")]
    pid: Option<IdList>,
    /// Profile these threads only (comma-separated tids); samples are then
    /// counted per thread
    #[arg(short = 'L', long, value_parser = cli::id_list)]
    tid: Option<IdList>,
    /// Show user space stacks only (no kernel space stacks)
    #[arg(short = 'U', long, conflicts_with = "kernel_stacks_only")]
    user_stacks_only: bool,
    /// Show kernel space stacks only (no user space stacks)
    #[arg(short = 'K', long)]
    kernel_stacks_only: bool,
    /// Sample frequency, in Hertz (default 49)
    #[arg(short = 'F', long, value_name = "HZ", conflicts_with = "count",
          value_parser = clap::value_parser!(u64).range(1..))]
    frequency: Option<u64>,
    /// Sample every N events (CPU clock: nanoseconds; cycles on a PMU)
    #[arg(short = 'c', long, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    count: Option<u64>,
    /// Sample this CPU only
    #[arg(short = 'C', long, value_name = "CPU")]
    cpu: Option<u32>,
    /// Include the CPU idle task (swapper) in the samples
    #[arg(short = 'I', long)]
    include_idle: bool,
    /// Insert a delimiter between kernel and user stacks
    #[arg(short = 'd', long)]
    delimited: bool,
    /// Mark kernel frames with _[k]
    #[arg(short = 'a', long)]
    annotations: bool,
    /// Profile tasks of this cgroup v2 only (directory path)
    #[arg(long, value_name = "PATH", value_parser = cli::cgroup_path)]
    cgroup: Option<PathBuf>,
    #[command(flatten)]
    stacks: StackArgs,
    /// Duration of the profile, in seconds (default: until Ctrl-C)
    #[arg(value_parser = cli::seconds)]
    duration: Option<u64>,
    #[command(flatten)]
    common: CommonArgs,
}

impl Args {
    fn rate(&self) -> Rate {
        match (self.frequency, self.count) {
            (_, Some(n)) => Rate::Period(n),
            (Some(f), None) => Rate::Frequency(f),
            (None, None) => Rate::Frequency(49),
        }
    }
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Profile>();

struct Profile {
    args: Args,
    rate: Rate,
    /// Chosen at configure, once privileged: cycles or the CPU clock.
    counter: Counter,
    sampler: Option<Sampler>,
    /// --svg's and --pprof's files, created before sampling.
    outputs: stacks::Outputs,
    symbolizer: Symbolizer,
    started: Option<Instant>,
    /// The processes seen by the kernel side, whose memory maps are kept
    /// so that a process gone before the report keeps its names.
    keeper: stacks::ProcessKeeper,
    /// --unwind dwarf (resolved from auto): user stacks unwound here.
    dwarf: Option<Dwarf>,
}

/// --unwind dwarf's state: the stacks unwound from the copies, and the
/// samples counted here rather than in the kernel.
struct Dwarf {
    unwinder: Unwinder,
    stacks: StackTable,
    /// Copies waiting for their sample record: number → stack index.
    pending: HashMap<u64, u32>,
    counts: HashMap<Key, u64>,
}

/// PR_SEQ_LOST (profile.h): the copy could not be sent.
const SEQ_LOST: u64 = u64::MAX;

impl Dwarf {
    /// One record; returns the process of a stack copy when it is the
    /// first seen of it.
    fn record(&mut self, data: &[u8]) -> Option<u32> {
        if let Some(copy) = unwind::Copy::parse(data) {
            let new = !self.unwinder.knows(copy.tgid);
            let stack = self.unwinder.unwind(copy.tgid, copy.regs, copy.stack);
            let index = self.stacks.intern(stack);
            self.pending.insert(copy.seq, index);
            return new.then_some(copy.tgid);
        }
        if data.len() < std::mem::size_of::<types::pr_sample>() {
            return None;
        }
        let mut s = types::pr_sample::default();
        maps::copy_record(&mut s, data);
        if s.kind != types::pr_record_kind::PR_SAMPLE_KIND.0 {
            return None;
        }
        let user = match s.seq {
            0 => User::Absent,
            SEQ_LOST => User::Missed,
            seq => match self.pending.remove(&seq) {
                Some(index) => User::Unwound(index),
                None => User::Missed,
            },
        };
        let key = Key {
            tgid: s.pid,
            shown_id: if s.tid != 0 { s.tid } else { s.pid },
            kern_stack_id: s.kern_stack_id,
            user,
            comm: s.comm,
        };
        *self.counts.entry(key).or_default() += 1;
        None
    }
}

impl Tool for Profile {
    type Args = Args;
    type Builder = ProfileSkelBuilder;
    const INFO: &'static registry::ToolInfo = &info::INFO;

    fn new(args: Args) -> Result<Self> {
        let rate = args.rate();
        if let Rate::Frequency(f) = rate {
            let max = std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok());
            if let Some(max) = max.filter(|m| f > *m) {
                return Err(usage(format!(
                    "-F {f} is above the kernel's limit of {max} samples a second \
                     (kernel.perf_event_max_sample_rate)"
                )));
            }
        }
        if let Some(cpu) = args.cpu {
            let possible = perf::possible_cpus()?;
            if !possible.contains(&cpu) {
                return Err(usage(format!(
                    "-C {cpu}: no such CPU (this machine's CPUs are {}-{})",
                    possible.first().unwrap_or(&0),
                    possible.last().unwrap_or(&0)
                )));
            }
        }
        // A sample's CPU time is known at a frequency; every N events of
        // a PMU's cycles it is not.
        let per_sample = match rate {
            Rate::Frequency(_) => rate.ns_per_sample(Counter::CpuClock),
            Rate::Period(_) => None,
        };
        let outputs = stacks::Outputs::open(
            &args.stacks,
            stacks::Svg {
                title: "CPU Flame Graph",
                count_name: "samples",
                cold: false,
                required: true,
            },
            stacks::Profile {
                sample_types: if per_sample.is_some() {
                    &[("cpu", "nanoseconds"), ("samples", "count")]
                } else {
                    &[("samples", "count")]
                },
            },
        )?;
        let symbolizer = Symbolizer::with_source_lines(false).verbose(args.common.verbose);
        let ids = args.pid.as_ref().or(args.tid.as_ref());
        let dwarf = args.stacks.dwarf(!args.kernel_stacks_only, ids);
        let dwarf = dwarf.then(|| Dwarf {
            unwinder: Unwinder::new(args.stacks.perf_max_stack_depth as usize),
            stacks: StackTable::default(),
            pending: HashMap::new(),
            counts: HashMap::new(),
        });
        Ok(Profile {
            args,
            rate,
            counter: Counter::CpuClock,
            sampler: None,
            outputs,
            symbolizer,
            started: None,
            keeper: stacks::ProcessKeeper::default(),
            dwarf,
        })
    }

    fn common(&self) -> &CommonArgs {
        &self.args.common
    }

    fn machine_readable(&self) -> bool {
        self.args.common.json || self.args.stacks.folded
    }

    fn filters(&self) -> Filters {
        Filters {
            pids: self.args.pid.clone().map(|IdList(p)| p),
            tids: self.args.tid.clone().map(|IdList(t)| t),
            thread_option: Some("-L"),
            cgroup: self.args.cgroup.clone(),
            ..Filters::default()
        }
    }

    fn configure(&mut self, open: &mut OpenProfileSkel<'_>, _: &Setup) -> Result<()> {
        self.counter = perf::choose_counter(self.rate);
        let args = &self.args;
        let dwarf = self.dwarf.is_some();
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.user_stacks = !args.kernel_stacks_only;
        rodata.kernel_stacks = !args.user_stacks_only;
        rodata.include_idle = args.include_idle;
        rodata.per_thread = args.tid.is_some();
        rodata.track_pids = !args.kernel_stacks_only && !dwarf;
        rodata.dwarf_unwind = dwarf;
        rodata.stack_copy_size = args.stacks.unwind.copy_size();
        args.stacks.size_maps(
            &mut open.maps.stackmap,
            &mut open.maps.ustack_scratch,
            dwarf,
        )?;
        if !dwarf {
            // Only dwarf's records use the ring: the smallest one.
            open.maps.events.set_max_entries(4096)?;
        }
        Ok(())
    }

    fn hook_notes(&self) -> Vec<String> {
        let why = match self.counter {
            Counter::Cycles => "hardware",
            Counter::CpuClock => "software: no hardware PMU answered",
        };
        let rate = match self.rate {
            Rate::Frequency(f) => format!("{f} Hz"),
            Rate::Period(n) => format!("every {n} events"),
        };
        let cpus = match self.args.cpu {
            Some(c) => format!("CPU {c}"),
            None => "every online CPU".into(),
        };
        // As the hooks are listed: kind, then target.
        vec![format!(
            "perf_event {} ({why}) at {rate} on {cpus}",
            self.counter.name()
        )]
    }

    fn attach(&mut self, skel: &mut ProfileSkel<'_>) -> Result<Vec<Link>> {
        if !self.args.kernel_stacks_only && self.dwarf.is_none() {
            self.keeper
                .watch(MapHandle::try_from(&skel.maps.seen_pids)?);
        }
        let only = self.args.cpu.map(|c| vec![c]);
        self.sampler = Some(Sampler::start(
            self.counter,
            self.rate,
            only,
            skel.progs.pr_sample.as_fd(),
        )?);
        self.started = Some(Instant::now());
        Ok(Vec::new())
    }

    fn banner(&self) -> Banner {
        Banner::Note(banner(&self.args))
    }

    fn schedule(&self) -> Schedule {
        Schedule {
            duration: self.args.duration.map(Duration::from_secs),
            ..Schedule::default()
        }
    }

    fn event(&mut self, data: &[u8], _: &mut Out) -> std::io::Result<()> {
        if let Some(d) = &mut self.dwarf {
            // A process's first stack: its memory map is kept for the
            // report, which may come after it exits.
            if let Some(pid) = d.record(data) {
                self.symbolizer.keep_process(pid);
            }
        }
        Ok(())
    }

    fn idle(&mut self) -> bool {
        // While sampling, not after Ctrl-C: the report then starts at once.
        if !self.args.user_stacks_only {
            self.symbolizer.warm_kernel();
        }
        if let Some(sampler) = &mut self.sampler {
            match sampler.check() {
                Ok(changes) if self.args.common.verbose => {
                    for c in changes {
                        common::note!("{c}");
                    }
                }
                Ok(_) => {}
                Err(e) => common::note!("watching CPUs come and go: {e:#}"),
            }
        }
        self.keeper.poll(&mut self.symbolizer);
        false
    }

    fn report(&mut self, skel: &ProfileSkel<'_>, out: &mut Out, when: When) -> Result<()> {
        if when == When::End {
            // One consistent cut: no sample after this.
            if let Some(s) = &mut self.sampler {
                s.stop();
            }
        }
        let traced = self.started.map_or(Duration::ZERO, |s| s.elapsed());
        let files = self.outputs.report(traced);
        let dwarf = self.dwarf.as_mut().map(|d| {
            if let Some(note) = d.unwinder.stats.note() {
                common::note!("{note}");
            }
            (std::mem::take(&mut d.counts), &d.stacks)
        });
        report::print(
            &report::Context {
                args: &self.args,
                ns_per_sample: match self.rate {
                    Rate::Frequency(_) => self.rate.ns_per_sample(self.counter),
                    Rate::Period(_) => None,
                },
            },
            files,
            &skel.maps,
            dwarf,
            out,
            &mut self.symbolizer,
        )
    }

    fn error_note(&self, index: u32) -> Option<&'static str> {
        use types::pr_error as E;
        stacks::error_note(index).or(match E(index) {
            E::ERR_COUNTS_FULL => Some("samples not counted: the counts map was full"),
            _ => None,
        })
    }
}

fn banner(args: &Args) -> String {
    let threads = if let Some(p) = &args.pid {
        format!("PID {p}")
    } else if let Some(t) = &args.tid {
        format!("TID {t}")
    } else {
        "all threads".into()
    };
    let stacks = if args.user_stacks_only {
        "user"
    } else if args.kernel_stacks_only {
        "kernel"
    } else {
        "user + kernel"
    };
    let rate = match args.rate() {
        Rate::Frequency(f) => format!("{f} Hertz"),
        Rate::Period(n) => format!("every {n} events"),
    };
    let cpu = args.cpu.map(|c| format!(" on CPU#{c}")).unwrap_or_default();
    let end = match args.duration {
        Some(d) => format!(" for {d} secs."),
        None => "... Hit Ctrl-C to end.".into(),
    };
    format!("Sampling at {rate} of {threads} by {stacks} stack{cpu}{end}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_checked() {
        testkit::check_arguments::<Args>(&[
            &["profile", "0"][..],
            &["profile", "-p", "x"],
            &["profile", "-U", "-K"],
            &["profile", "-p", "1", "-L", "1"],
            &["profile", "-F", "0"],
            &["profile", "-F", "99", "-c", "1000"],
            &["profile", "-c", "0"],
            &["profile", "-C", "x"],
            &["profile", "--perf-max-stack-depth", "128"],
            &["profile", "--stack-storage-size", "0"],
            &["profile", "-f", "--json"],
            &["profile", "--unwind", "frames"],
            &["profile", "--cgroup", "/nonexistent"],
        ]);
    }

    #[test]
    fn banner_says_the_rate_threads_and_stacks() {
        let args = Args::try_parse_from(["profile", "-p", "3,4", "-U", "5"]).unwrap();
        assert_eq!(
            banner(&args),
            "Sampling at 49 Hertz of PID 3,4 by user stack for 5 secs."
        );
        let args = Args::try_parse_from(["profile", "-c", "1000", "-C", "1"]).unwrap();
        assert_eq!(
            banner(&args),
            "Sampling at every 1000 events of all threads by user + kernel stack on CPU#1... Hit Ctrl-C to end."
        );
    }
}
