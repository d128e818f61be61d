//! What the off-CPU stack tools share (offcputime, offwaketime,
//! wakeuptime): which blocked threads they follow (-p, -t, -u, -k,
//! --state, the cgroup), which blocked times count (-m, -M), set in
//! offcpu.bpf.h's globals, and the banner's words for them.

use anyhow::Result;
use libbpf_rs::OpenObject;

use crate::cli::{self, CgroupLongArgs, IdList};
use crate::kernel::filters::Filters;
use crate::kernel::maps;
use crate::usage::usage;

/// The blocked threads followed, and the times counted.
#[derive(clap::Args, Debug, Clone)]
pub struct OffCpuArgs {
    /// Trace these processes only (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list,
          conflicts_with_all = ["tid", "user_threads_only", "kernel_threads_only"])]
    pub pid: Option<IdList>,
    /// Trace these threads only (comma-separated tids)
    #[arg(short = 't', long, value_parser = cli::id_list,
          conflicts_with_all = ["user_threads_only", "kernel_threads_only"])]
    pub tid: Option<IdList>,
    /// User threads only (no kernel threads)
    #[arg(short = 'u', long, conflicts_with = "kernel_threads_only")]
    pub user_threads_only: bool,
    /// Kernel threads only (no user threads)
    #[arg(short = 'k', long)]
    pub kernel_threads_only: bool,
    /// Only count blocks of at least this many microseconds
    #[arg(short = 'm', long, value_name = "US", default_value_t = 1)]
    pub min_block_time: u64,
    /// Only count blocks of at most this many microseconds
    #[arg(short = 'M', long, value_name = "US", default_value_t = u64::MAX)]
    pub max_block_time: u64,
    /// Only tasks going off CPU in this state: a mask of TASK_* bits
    /// (1 interruptible, 2 uninterruptible, ...), or 0 for runnable
    /// (preempted); the kernel's task state is 32 bits
    #[arg(long, value_name = "MASK")]
    pub state: Option<u32>,
    #[command(flatten)]
    pub cgroup: CgroupLongArgs,
}

impl OffCpuArgs {
    /// The checks that need no BPF: -m above -M counts nothing.
    pub fn check(&self) -> Result<()> {
        if self.min_block_time > self.max_block_time {
            return Err(usage(format!(
                "-m {} is above -M {}: nothing could be counted",
                self.min_block_time, self.max_block_time
            )));
        }
        Ok(())
    }

    /// The processes or threads named, whose executables `--unwind auto`
    /// looks at.
    pub fn ids(&self) -> Option<&IdList> {
        self.pid.as_ref().or(self.tid.as_ref())
    }

    pub fn filters(&self) -> Filters {
        Filters {
            cgroup: self.cgroup.path(),
            pids: self.pid.clone().map(|IdList(p)| p),
            tids: self.tid.clone().map(|IdList(t)| t),
            thread_option: Some("-t"),
            ..Filters::default()
        }
    }

    /// Sets offcpu.bpf.h's globals.
    pub fn configure(&self, obj: &mut OpenObject) -> Result<()> {
        for (name, on) in [
            ("user_threads_only", self.user_threads_only),
            ("kernel_threads_only", self.kernel_threads_only),
            ("filter_state", self.state.is_some()),
        ] {
            maps::set_rodata(obj, name, &[u8::from(on)])?;
        }
        let mask = i64::from(self.state.unwrap_or(0));
        maps::set_rodata(obj, "state_mask", &mask.to_ne_bytes())?;
        let ns = |us: u64| us.saturating_mul(1000).to_ne_bytes();
        maps::set_rodata(obj, "min_block_ns", &ns(self.min_block_time))?;
        maps::set_rodata(obj, "max_block_ns", &ns(self.max_block_time))
    }

    /// The threads followed, in a banner's words: `PID 3,4`, `all threads`.
    pub fn threads(&self) -> String {
        if let Some(p) = &self.pid {
            format!("PID {p}")
        } else if let Some(t) = &self.tid {
            format!("TID {t}")
        } else if self.user_threads_only {
            "user threads".into()
        } else if self.kernel_threads_only {
            "kernel threads".into()
        } else {
            "all threads".into()
        }
    }
}

/// Everything an off-CPU stack tool takes: the threads and times followed,
/// `-s`, the halves shown, the stack options and the duration.
#[derive(clap::Args, Debug, Clone)]
pub struct OffCpuToolArgs {
    #[command(flatten)]
    pub off: OffCpuArgs,
    /// Show the offset of each frame from its symbol (name+0x1c)
    #[arg(short = 's', long)]
    pub offset: bool,
    #[command(flatten)]
    pub shown: super::ShownArgs,
    #[command(flatten)]
    pub stacks: super::StackArgs,
    /// Duration of the trace, in seconds (default: until Ctrl-C)
    #[arg(value_parser = cli::seconds)]
    pub duration: Option<u64>,
    #[command(flatten)]
    pub common: crate::cli::CommonArgs,
}

/// What differs between the off-CPU stack tools' reports.
pub struct OffCpuLook {
    /// Counted by thread (else by process).
    pub per_thread: bool,
    pub join: super::Join,
    pub svg_title: &'static str,
    /// The pprof profile's sample type: `("offcpu", "nanoseconds")`.
    pub sample_types: &'static [(&'static str, &'static str)],
    pub counts_full: &'static str,
}

impl OffCpuToolArgs {
    /// The stack kind's spec: sums in nanoseconds, shown in microseconds.
    pub fn spec(&self, look: &OffCpuLook) -> super::Spec<'_> {
        super::Spec {
            args: &self.stacks,
            common: &self.common,
            shown: &self.shown,
            ids: self.off.ids(),
            look: super::Look {
                per_thread: look.per_thread,
                offsets: self.offset,
                join: look.join,
                ..super::Look::new(super::Value {
                    name: "us",
                    divisor: 1000,
                })
            },
            svg: super::Svg {
                title: look.svg_title,
                count_name: "us",
                cold: true,
                required: true,
            },
            profile: super::Profile {
                sample_types: look.sample_types,
            },
            counts_full: look.counts_full,
            duration: self.duration,
            interval: None,
            timestamp: false,
        }
    }

    /// The banner: `Tracing WHAT (us) of THREADS by HALVES BY…`.
    pub fn banner(&self, what: &str, by: &str) -> String {
        format!(
            "Tracing {what} (us) of {} by {} {by}{}",
            self.off.threads(),
            self.shown.words(),
            super::until(self.duration)
        )
    }
}
