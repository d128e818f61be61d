//! oomkill: each OOM kill, one line: which task ran the OOM killer, which
//! process it killed, how much memory was at stake, and the load average
//! then. On oom_kill_process() where fentry or kprobes allow (BCC's hook),
//! else on the oom:mark_victim tracepoint, whose record says less on older
//! kernels: the line says what it holds.

mod info;

use std::io::{self, Write};

use anyhow::{bail, Result};
use clap::Parser;
use common::cli::{CgroupArgs, CommonArgs, ContainerArgs};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, load_when, Hook};
use common::kinds::event::{columns, Cell, Column, Record, Stamped, Table};
use common::output::{c_bytes, escape, Out};
use common::run::lifecycle::{self, Setup, Tool};

common::skeleton!("oomkill");
use skel::{types, OomkillSkelBuilder, OpenOomkillSkel};

common::event_record!(types::event, types::task_header);

const FUNCTION: &str = "oom_kill_process";
const FROM_FUNCTION: u32 = 1;
const FROM_SIZES: u32 = 2;
const FROM_COMM: u32 = 4;

const EXAMPLES: &str = "\
EXAMPLES:
    oomkill               # trace OOM kills
    oomkill --containers  # with the container of the task that ran the killer
    oomkill --json | jq .";

/// Trace OOM kills: the task that ran the OOM killer, its victim, the
/// memory at stake and the load average.
#[derive(Parser, Debug)]
#[command(name = "oomkill", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Oomkill>();

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    Fentry,
    Kprobe,
    Tracepoint,
    TpBtf,
}

pub(crate) struct Oomkill {
    args: Args,
    event: Record<types::event>,
    table: Table<Oomkill>,
    page_kb: u64,
}

impl Tool for Oomkill {
    common::tool_types!(OomkillSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        Ok(Oomkill {
            table: table(args.common.json).containers(containers),
            args,
            event: Record::new(containers),
            page_kb: (page.max(4096) / 1024) as u64,
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&None, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenOomkillSkel<'_>, _: &Setup) -> Result<()> {
        let variant = if probe::fentry_target(FUNCTION) {
            Variant::Fentry
        } else if probe::kprobe_target(FUNCTION) {
            Variant::Kprobe
        } else if probe::pick(&[Hook::Tracepoint]).is_some()
            && probe::tracepoint_exists("oom", "mark_victim")
        {
            Variant::Tracepoint
        } else if probe::pick(&[Hook::TpBtf]).is_some()
            && probe::btf_tracepoint_args("mark_victim") == Some(2)
        {
            Variant::TpBtf
        } else {
            bail!(
                "this kernel offers neither fentry nor a kprobe on {FUNCTION}, nor the \
                 oom:mark_victim tracepoint (mount tracefs, or Linux 6.8's BTF form)"
            );
        };
        let p = &mut open.progs;
        load_when(variant == Variant::Fentry, [&mut p.oom_fentry_kill]);
        load_when(variant == Variant::Kprobe, [&mut p.oom_kprobe_kill]);
        load_when(variant == Variant::Tracepoint, [&mut p.oom_tp_victim]);
        load_when(variant == Variant::TpBtf, [&mut p.oom_btf_victim]);
        maps::rodata(&mut open.maps.rodata_data)?.page_kb = self.page_kb;
        Ok(())
    }

    fn table(&self) -> Option<&Table<Self>> {
        Some(&self.table)
    }

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        self.event.read(data);
        self.table.row(out, self)
    }

    /// BCC's banner: its lines have no header.
    fn banner(&self) -> lifecycle::Banner {
        lifecycle::Banner::Note(Self::INFO.banner.into())
    }
}

common::stamped_by_record!(Oomkill);

impl Oomkill {
    fn known(&self, what: u32) -> bool {
        self.event.known & what != 0
    }

    /// The victim's command: from the hook, else (5.x's tracepoint: its
    /// pid only) from /proc while the process is still there.
    /// Raw: escaped for text, UTF-8 (lossy) in JSON.
    fn victim_comm(&self) -> Vec<u8> {
        if self.known(FROM_COMM) {
            return c_bytes(&self.event.victim_comm).to_vec();
        }
        std::fs::read(format!("/proc/{}/comm", self.event.victim_pid))
            .map(|c| c.trim_ascii_end().to_vec())
            .unwrap_or_else(|_| b"?".to_vec())
    }

    fn resident_kb(&self) -> u64 {
        self.event.anon_rss_kb + self.event.file_rss_kb + self.event.shmem_rss_kb
    }

    /// The memory the line names: BCC's pages (the size of the memory the
    /// kill was for) where the function was hooked, else the victim's.
    fn pages(&self) -> String {
        if self.known(FROM_FUNCTION) {
            format!("{} pages", self.event.total_pages)
        } else if self.known(FROM_SIZES) {
            format!("{} pages resident", self.resident_kb() / self.page_kb)
        } else if self.event.total_vm_kb > 0 {
            format!("{} pages of VM", self.event.total_vm_kb / self.page_kb)
        } else {
            "? pages".into()
        }
    }

    /// BCC's line: `HH:MM:SS Triggered by PID 3297 ("ntpd"), OOM kill of
    /// PID 22516 ("perl"), 3850642 pages, loadavg: 0.99 0.39 0.30 3/282 22724`.
    fn line(&self) -> String {
        let mut s = Vec::new();
        let h = self.stamps().head();
        let _ = write!(
            s,
            "{} Triggered by PID {} (\"{}\"), OOM kill of PID {} (\"{}\"), {}, loadavg: {}",
            self.stamps().hms(),
            h.pid,
            escape(c_bytes(&h.comm)),
            self.event.victim_pid,
            escape(&self.victim_comm()),
            self.pages(),
            loadavg()
        );
        String::from_utf8_lossy(&s).into_owned()
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.trim().to_string())
        .unwrap_or_default()
}

fn known_or_null(known: bool, v: u64) -> Cell<'static> {
    if known {
        v.into()
    } else {
        Cell::Null
    }
}

/// One text column, BCC's line; JSON has each field.
fn table(json: bool) -> Table<Oomkill> {
    Table::<Oomkill>::new(json).columns([
        columns::time().json_only(),
        columns::ts(),
        columns::pid(0).json_only(),
        columns::tid(0).json_only(),
        columns::cgroup_id(),
        columns::comm("", 0).json_only(),
        Column::new("LINE", 0, "", |t: &Oomkill| t.line().into()),
        Column::json("victim_pid", |t: &Oomkill| t.event.victim_pid.into()),
        Column::json("victim_comm", |t: &Oomkill| {
            Cell::Bytes(t.victim_comm().into())
        }),
        Column::json("total_pages", |t: &Oomkill| {
            known_or_null(t.known(FROM_FUNCTION), t.event.total_pages)
        })
        .optional(),
        Column::json("victim_total_vm_kb", |t: &Oomkill| {
            known_or_null(t.event.total_vm_kb > 0, t.event.total_vm_kb)
        })
        .optional(),
        Column::json("victim_rss_kb", |t: &Oomkill| {
            known_or_null(t.known(FROM_SIZES), t.resident_kb())
        })
        .optional(),
        Column::json("loadavg", |_| loadavg().into()),
    ])
}
