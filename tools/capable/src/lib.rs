//! capable: capability checks, one line each: who asked for which
//! capability, whether the check is audited, and the verdict; with -K and
//! -U the stacks that asked. On cap_capable() where fentry or kprobes allow
//! (they see the check's options), else on the capability:cap_capable
//! tracepoint (6.14+), which does not pass them: there every check is shown
//! and AUDIT and INSETID are unknown.

mod info;

use std::collections::HashSet;
use std::io::{self, Write};
use std::rc::Rc;

use anyhow::{bail, Result};
use clap::{Parser, ValueEnum};
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, load_when, Hook};
use common::kinds::event::{columns, Cell, Column, Record, Stamped, Table};
use common::output::Out;
use common::run::lifecycle::{self, Setup, Tool};
use common::sym::{trim_tracing_frames, Frame, Symbolizer};

common::skeleton!("capable");
use skel::{types, CapableSkelBuilder, OpenCapableSkel};

common::event_record!(types::event, types::task_header);

include!(concat!(env!("OUT_DIR"), "/caps.rs"));

const FUNCTION: &str = "cap_capable";
const DEPTH: u32 = types::cap_limits::CAP_STACK_DEPTH.0;

use types::cap_flags as Flags;

const EXAMPLES: &str = "\
EXAMPLES:
    capable                  # trace capability checks (audited ones)
    capable -v               # non-audit checks too
    capable -p 181           # only process 181
    capable -K               # with the kernel stack of each check
    capable -U               # with the user stack of each check
    capable -x               # extra fields: TID and INSETID columns
    capable --unique         # each capability once per process
    capable -u cgroup        # each capability once per cgroup
    capable --json | jq .";

/// Trace security capability checks (cap_capable()): who asked for which
/// capability, and the verdict.
#[derive(Parser, Debug)]
#[command(name = "capable", version, after_help = EXAMPLES,
          mut_arg("verbose", |a| a.help(
              "Include non-audit checks (BCC's -v); and print the hooks chosen")))]
pub(crate) struct Args {
    /// Only these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Add the kernel stack of each check
    #[arg(short = 'K', long)]
    kernel_stack: bool,
    /// Add the user stack of each check (frame pointers)
    #[arg(short = 'U', long)]
    user_stack: bool,
    /// Extra fields: TID and INSETID columns
    #[arg(short = 'x', long = "extra", visible_alias = "extra-fields")]
    extra: bool,
    /// Each capability once per process (pid, the default) or per cgroup;
    /// with -K/-U, once per stack too
    #[arg(short = 'u', long, value_name = "TYPE", num_args = 0..=1,
          default_missing_value = "pid")]
    unique: Option<Unique>,
    /// The limit for both kernel and user stack traces
    #[arg(long, value_name = "DEPTH", default_value_t = DEPTH,
          value_parser = clap::value_parser!(u32).range(1..=DEPTH as i64))]
    perf_max_stack_depth: u32,
    /// Accepted for libbpf-tools' scripts: each check carries its own
    /// stacks, so there is no stack map to size
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    stack_storage_size: Option<u32>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Unique {
    Pid,
    Cgroup,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Capable>();

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    Fexit,
    Kprobe,
    Tracepoint(Hook),
}

const TRACEPOINT_NOTE: &str = "the capability:cap_capable tracepoint does not pass a check's \
     options: every check is shown, audited or not, with AUDIT and INSETID unknown (-)";

pub(crate) struct Capable {
    args: Args,
    event: Record<types::event>,
    table: Table<Capable>,
    variant: Option<Variant>,
    symbolizer: Symbolizer,
    /// The current check's frames, labelled (-K, -U).
    kstack: Vec<String>,
    ustack: Vec<String>,
    /// --unique with stacks: the checks shown, by who, capability and
    /// stacks (without stacks the kernel keeps them).
    seen: HashSet<(u64, i32, Vec<u64>, Vec<u64>)>,
}

impl Tool for Capable {
    common::tool_types!(CapableSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Capable {
            table: table(&args).containers(containers),
            event: Record::new(containers),
            variant: None,
            symbolizer: Symbolizer::new(),
            kstack: Vec::new(),
            ustack: Vec::new(),
            seen: HashSet::new(),
            args,
        })
    }

    fn verbose_is_own(&self) -> bool {
        true
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenCapableSkel<'_>, _: &Setup) -> Result<()> {
        let stacks = self.stacks_taken();
        let variant = if probe::fentry_target(FUNCTION) {
            Variant::Fexit
        } else if probe::kprobe_target(FUNCTION) {
            Variant::Kprobe
        } else {
            match probe::tracepoint_hook("capability", "cap_capable", "6.14") {
                Ok(hook) => Variant::Tracepoint(hook),
                Err(e) => bail!("neither fentry nor a kprobe on {FUNCTION} here, and {e:#}"),
            }
        };
        self.variant = Some(variant);
        let p = &mut open.progs;
        load_when(variant == Variant::Fexit, [&mut p.cap_fexit]);
        load_when(
            variant == Variant::Kprobe,
            [&mut p.cap_kprobe, &mut p.cap_kretprobe],
        );
        load_when(
            variant == Variant::Tracepoint(Hook::TpBtf),
            [&mut p.cap_btf],
        );
        load_when(
            variant == Variant::Tracepoint(Hook::RawTp),
            [&mut p.cap_raw],
        );
        load_when(
            variant == Variant::Tracepoint(Hook::Tracepoint),
            [&mut p.cap_tp],
        );
        if !(stacks && variant == Variant::Kprobe) {
            open.maps.stashed_stacks.set_max_entries(1)?;
        }
        let args = &self.args;
        let bytes = args.perf_max_stack_depth * 8;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.non_audit_too = args.common.verbose;
        rodata.unique_by = match args.unique {
            None => types::cap_unique::UNIQUE_OFF,
            Some(Unique::Pid) => types::cap_unique::UNIQUE_PID,
            Some(Unique::Cgroup) => types::cap_unique::UNIQUE_CGROUP,
        }
        .0;
        rodata.kstack_bytes = if args.kernel_stack { bytes } else { 0 };
        rodata.ustack_bytes = if args.user_stack { bytes } else { 0 };
        Ok(())
    }

    fn degraded(&self) -> Option<String> {
        matches!(self.variant, Some(Variant::Tracepoint(_))).then(|| TRACEPOINT_NOTE.into())
    }

    fn loaded(&mut self, _: &mut skel::CapableSkel<'_>) -> Result<()> {
        if self.args.kernel_stack {
            self.symbolizer.warm_kernel();
        }
        if self.args.user_stack {
            self.symbolizer.follow_mappings();
        }
        Ok(())
    }

    common::event_kind!(table);

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        self.event.read(data);
        if !self.stacks_taken() {
            return self.table.row(out, self);
        }
        let e = &*self.event;
        let kaddrs = &e.kstack[..(e.kstack_frames as usize).min(e.kstack.len())];
        let uaddrs = &e.ustack[..(e.ustack_frames as usize).min(e.ustack.len())];
        if let Some(unique) = self.args.unique {
            let h = self.stamps().head();
            let who = match unique {
                Unique::Pid => h.pid as u64,
                Unique::Cgroup => h.cgroup_id,
            };
            if !self
                .seen
                .insert((who, e.cap, kaddrs.to_vec(), uaddrs.to_vec()))
            {
                return Ok(());
            }
        }
        let kernel = self.symbolizer.kernel(kaddrs);
        self.kstack = labels(trim_tracing_frames(&kernel), |f| f.label(true));
        let pid = self.stamps().head().pid;
        self.ustack = labels(&self.symbolizer.user(pid, uaddrs), Frame::long_label);
        self.table.row(out, self)?;
        if self.args.common.json {
            return Ok(());
        }
        // BCC's: each frame under its line, with its module.
        if self.args.kernel_stack {
            if self.kstack.is_empty() {
                writeln!(out, "    [Missed Kernel Stack]")?;
            }
            for f in &self.kstack {
                writeln!(out, "        {f} [kernel]")?;
            }
        }
        for f in &self.ustack {
            writeln!(out, "        {f}")?;
        }
        Ok(())
    }
}

common::stamped_by_record!(Capable);

impl Capable {
    fn stacks_taken(&self) -> bool {
        self.args.kernel_stack || self.args.user_stack
    }

    /// A flag the check's options give; None where the hook has none.
    fn opt(&self, flag: Flags) -> Option<bool> {
        (self.event.flags & Flags::CAP_OPTS_KNOWN.0 != 0).then_some(self.event.flags & flag.0 != 0)
    }
}

fn labels(frames: &[Rc<Frame>], label: impl Fn(&Frame) -> String) -> Vec<String> {
    frames.iter().map(|f| label(f)).collect()
}

/// The capability's name, from the kernel's header; `?` (BCC's) for one
/// newer than it.
fn cap_name(cap: i32) -> &'static str {
    usize::try_from(cap)
        .ok()
        .and_then(|i| CAPS.get(i).copied())
        .unwrap_or("?")
}

fn flag_cell(v: Option<bool>) -> Cell<'static> {
    match v {
        Some(b) => Cell::Uint(b as u64),
        None => Cell::Null,
    }
}

/// BCC's columns (TIME UID PID [TID] COMM CAP NAME AUDIT [INSETID]) with
/// libbpf-tools' VERDICT after AUDIT.
fn table(args: &Args) -> Table<Capable> {
    Table::<Capable>::new(args.common.json)
        .columns([
            Column::new("TIME", 9, "time", |t: &Capable| t.stamps().hms().into()),
            columns::ts(),
            Column::new("UID", 6, "uid", |t| t.event.uid.into()),
            columns::pid(6),
        ])
        .column(args.extra, columns::tid(6))
        .columns([
            columns::cgroup_id(),
            columns::comm("COMM", 16),
            Column::new("CAP", 4, "cap", |t| t.event.cap.into()),
            Column::new("NAME", 20, "name", |t| cap_name(t.event.cap).into()),
            Column::new("AUDIT", 6, "audit", |t: &Capable| {
                flag_cell(t.opt(Flags::CAP_AUDITED))
            })
            .optional(),
        ])
        .column(
            true,
            Column::new(
                "VERDICT",
                if args.extra { 7 } else { 0 },
                "verdict",
                |t: &Capable| if t.event.ret == 0 { "allow" } else { "deny" }.into(),
            ),
        )
        .column(
            args.extra,
            Column::new("INSETID", 0, "insetid", |t: &Capable| {
                flag_cell(t.opt(Flags::CAP_INSETID))
            })
            .optional(),
        )
        .columns([
            Column::json("ret", |t: &Capable| t.event.ret.into()),
            Column::json("kernel_stack", |t: &Capable| {
                Cell::frames(t.args.kernel_stack, &t.kstack)
            })
            .optional(),
            Column::json("user_stack", |t: &Capable| {
                Cell::frames(t.args.user_stack, &t.ustack)
            })
            .optional(),
        ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_bccs_with_the_verdict() {
        let args = Args::try_parse_from(["capable"]).unwrap();
        assert_eq!(
            table(&args).header(),
            "TIME      UID    PID    COMM             CAP  NAME                 AUDIT  VERDICT"
        );
        let args = Args::try_parse_from(["capable", "-x"]).unwrap();
        assert_eq!(
            table(&args).header(),
            "TIME      UID    PID    TID    COMM             CAP  NAME                 AUDIT  \
             VERDICT INSETID"
        );
    }

    #[test]
    fn names_come_from_the_kernel_header() {
        assert_eq!(cap_name(0), "CAP_CHOWN");
        assert_eq!(cap_name(21), "CAP_SYS_ADMIN");
        assert_eq!(cap_name(40), "CAP_CHECKPOINT_RESTORE");
        assert_eq!(cap_name(1000), "?");
        assert_eq!(cap_name(-1), "?");
    }

    #[test]
    fn unique_takes_a_type_or_none() {
        let u = |argv: &[&str]| Args::try_parse_from(argv).map(|a| a.unique);
        assert_eq!(u(&["capable"]).unwrap(), None);
        assert_eq!(u(&["capable", "--unique"]).unwrap(), Some(Unique::Pid));
        assert_eq!(
            u(&["capable", "-u", "cgroup"]).unwrap(),
            Some(Unique::Cgroup)
        );
        assert!(u(&["capable", "-u", "thread"]).is_err());
    }
}
