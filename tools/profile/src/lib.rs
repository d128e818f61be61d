//! profile: on-CPU stack sampling. A perf event on each CPU runs a BPF
//! program F times a second (or every N events), which counts the sample
//! in the kernel by process and stacks; the report prints BCC's multi-line
//! stacks, folded lines, JSON, a flame graph or a pprof profile.

mod info;

use std::os::fd::AsFd;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupLongArgs, CommonArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::perf::{self, Counter, Rate, Sampler};
use common::kinds::stack::{self as stacks, Look, ShownArgs, StackArgs, Value};
use common::run::lifecycle::{self, Banner, Setup, Tool};
use libbpf_rs::Link;

common::skeleton!("profile");
use skel::{OpenProfileSkel, ProfileSkel, ProfileSkelBuilder};

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
    /// Sample frequency, in Hertz (default 49)
    #[arg(short = 'F', long, value_name = "HZ", conflicts_with = "count",
          value_parser = clap::value_parser!(u64).range(1..))]
    frequency: Option<u64>,
    /// Sample every N events (CPU clock: nanoseconds; cycles on a PMU)
    #[arg(short = 'c', long, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    count: Option<u64>,
    /// Sample this CPU only
    #[arg(short = 'C', long, value_name = "CPU", value_parser = cli::cpu)]
    cpu: Option<u32>,
    /// Include the CPU idle task (swapper) in the samples
    #[arg(short = 'I', long)]
    include_idle: bool,
    /// Mark kernel frames with _[k]
    #[arg(short = 'a', long)]
    annotations: bool,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    #[command(flatten)]
    shown: ShownArgs,
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
}

impl Tool for Profile {
    common::tool_types!(ProfileSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let rate = args.rate();
        rate.check("-F")?;
        Ok(Profile {
            args,
            rate,
            counter: Counter::CpuClock,
            sampler: None,
        })
    }

    fn stacks(&self) -> Option<stacks::Spec<'_>> {
        let args = &self.args;
        // A sample's CPU time is known at a frequency; every N events of
        // a PMU's cycles it is not.
        let per_sample = match self.rate {
            Rate::Frequency(_) => self.rate.ns_per_sample(Counter::CpuClock),
            Rate::Period(_) => None,
        };
        Some(stacks::Spec {
            args: &args.stacks,
            common: &args.common,
            shown: &args.shown,
            ids: args.pid.as_ref().or(args.tid.as_ref()),
            look: Look {
                scales: per_sample.map_or(vec![1], |ns| vec![ns, 1]),
                per_thread: args.tid.is_some(),
                annotate: args.annotations,
                ..Look::new(Value {
                    name: "samples",
                    divisor: 1,
                })
            },
            svg: stacks::Svg {
                title: "CPU Flame Graph",
                count_name: "samples",
                cold: false,
                required: true,
            },
            profile: stacks::Profile {
                sample_types: if per_sample.is_some() {
                    &[("cpu", "nanoseconds"), ("samples", "count")]
                } else {
                    &[("samples", "count")]
                },
            },
            counts_full: "samples not counted: the counts map was full",
            duration: args.duration,
            interval: None,
            timestamp: false,
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            pids: self.args.pid.clone().map(|IdList(p)| p),
            tids: self.args.tid.clone().map(|IdList(t)| t),
            thread_option: Some("-L"),
            cgroup: self.args.cgroup.path(),
            ..Filters::default()
        }
    }

    fn configure(&mut self, open: &mut OpenProfileSkel<'_>, _: &Setup) -> Result<()> {
        self.counter = perf::choose_counter(self.rate);
        let rodata = common::kernel::maps::rodata(&mut open.maps.rodata_data)?;
        rodata.include_idle = self.args.include_idle;
        rodata.per_thread = self.args.tid.is_some();
        Ok(())
    }

    fn hook_notes(&self) -> Vec<String> {
        vec![self.rate.hook(self.counter, self.args.cpu)]
    }

    fn attach(&mut self, skel: &mut ProfileSkel<'_>) -> Result<Vec<Link>> {
        let only = self.args.cpu.map(|c| vec![c]);
        self.sampler = Some(Sampler::start(
            self.counter,
            self.rate,
            only,
            skel.progs.pr_sample.as_fd(),
        )?);
        Ok(Vec::new())
    }

    fn banner(&self) -> Banner {
        Banner::Note(banner(&self.args))
    }

    fn idle(&mut self) -> bool {
        if let Some(sampler) = &mut self.sampler {
            sampler.watch(self.args.common.verbose);
        }
        false
    }

    fn detached(&mut self) {
        // One consistent cut: no sample after this.
        if let Some(s) = &mut self.sampler {
            s.stop();
        }
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
    let rate = match args.rate() {
        Rate::Frequency(f) => format!("{f} Hertz"),
        Rate::Period(n) => format!("every {n} events"),
    };
    let cpu = args.cpu.map(|c| format!(" on CPU#{c}")).unwrap_or_default();
    format!(
        "Sampling at {rate} of {threads} by {} stack{cpu}{}",
        args.shown.words(),
        stacks::until(args.duration)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
