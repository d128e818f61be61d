//! shmsnoop: System V shared memory calls (shmget, shmat, shmdt, shmctl),
//! each at its return with its arguments and result, in BCC's layout: who
//! makes or attaches which segment, with which flags, and what failed.

mod info;

use std::fmt::Write as _;
use std::io;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, load_when};
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::{self, Out};
use common::run::lifecycle::{self, Schedule, Setup, Tool};

common::skeleton!("shmsnoop");
use skel::{types, OpenShmsnoopSkel, ShmsnoopSkelBuilder};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    shmsnoop              # trace every shm*() call
    shmsnoop -T           # with a timestamp column
    shmsnoop -x           # only failed calls
    shmsnoop -p 181       # only process 181
    shmsnoop -t 123       # only thread 123
    shmsnoop -d 10        # trace for 10 seconds
    shmsnoop -n main      # only process names containing \"main\"
    shmsnoop --json | jq .";

/// Trace System V shared memory calls: shmget(), shmat(), shmdt() and
/// shmctl(), with their arguments and results.
#[derive(Parser, Debug)]
#[command(name = "shmsnoop", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Include a TIME(s) column: seconds since the first call shown
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Only failed calls
    #[arg(short = 'x', long)]
    failed: bool,
    /// Only these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Only these threads (comma-separated tids); the first column is then TID
    #[arg(short = 't', long, value_parser = cli::id_list, conflicts_with = "pid")]
    tid: Option<IdList>,
    /// Trace for this many seconds
    #[arg(short = 'd', long, value_name = "SECONDS", value_parser = cli::seconds)]
    duration: Option<u64>,
    /// Only process names (comm) containing this text
    #[arg(short = 'n', long, value_parser = cli::non_empty)]
    name: Option<String>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Shmsnoop>();

pub(crate) struct Shmsnoop {
    args: Args,
    event: Record<types::event>,
    table: Table<Shmsnoop>,
}

use types::shm_call as Call;

/// A call's names (BCC's SYS column; JSON's) and number.
#[derive(Clone, Copy)]
struct CallName {
    sys: &'static str,
    name: &'static str,
    nr: libc::c_long,
}

/// The calls, by enum shm_call.
const CALLS: [CallName; Call::SHM_CALLS.0 as usize] = [
    CallName {
        sys: "SHMGET",
        name: "shmget",
        nr: libc::SYS_shmget,
    },
    CallName {
        sys: "SHMAT",
        name: "shmat",
        nr: libc::SYS_shmat,
    },
    CallName {
        sys: "SHMDT",
        name: "shmdt",
        nr: libc::SYS_shmdt,
    },
    CallName {
        sys: "SHMCTL",
        name: "shmctl",
        nr: libc::SYS_shmctl,
    },
];

/// shmget's flags beyond the permission bits (SHM_HUGE_* apart: a field).
const SHMGET_FLAGS: &[(&str, u64)] = &[
    ("IPC_CREAT", 0o1000),
    ("IPC_EXCL", 0o2000),
    ("SHM_HUGETLB", 0o4000),
    ("SHM_NORESERVE", 0o10000),
    ("SHM_EXEC", 0o100000),
];

/// shmat's flags.
const SHMAT_FLAGS: &[(&str, u64)] = &[
    ("SHM_RDONLY", 0o10000),
    ("SHM_RND", 0o20000),
    ("SHM_REMAP", 0o40000),
    ("SHM_EXEC", 0o100000),
];

/// shmctl's commands, by number (without glibc's IPC_64 bit).
const SHMCTL_CMDS: &[(&str, u64)] = &[
    ("IPC_RMID", 0),
    ("IPC_SET", 1),
    ("IPC_STAT", 2),
    ("IPC_INFO", 3),
    ("SHM_LOCK", 11),
    ("SHM_UNLOCK", 12),
    ("SHM_STAT", 13),
    ("SHM_INFO", 14),
    ("SHM_STAT_ANY", 15),
];

/// A page size's log2 in shmget's flags (SHM_HUGE_SHIFT).
const SHM_HUGE_SHIFT: u32 = 26;
const IPC_64: u64 = 0x100;

/// BCC's flags: `0x3b6 (IPC_CREAT|0666)`: the value, then the names it
/// holds and the rest in octal (the permissions); `0x0` alone.
fn flags(value: u64, names: &[(&str, u64)], huge: bool) -> String {
    let mut s = format!("0x{value:x}");
    if value == 0 {
        return s;
    }
    let mut rest = value;
    let mut shown: Vec<String> = Vec::new();
    for (name, bit) in names {
        if value & bit != 0 {
            shown.push((*name).into());
            rest &= !bit;
        }
    }
    if huge {
        match (value >> SHM_HUGE_SHIFT) & 0x3f {
            0 => {}
            21 => shown.push("SHM_HUGE_2MB".into()),
            30 => shown.push("SHM_HUGE_1GB".into()),
            log2 => shown.push(format!("SHM_HUGE_2^{log2}")),
        }
        rest &= !(0x3f << SHM_HUGE_SHIFT);
    }
    if rest != 0 || shown.is_empty() {
        shown.push(format!("0{rest:o}"));
    }
    let _ = write!(s, " ({})", shown.join("|"));
    s
}

/// shmctl's command: its number, and its name where known.
fn command(cmd: u64) -> String {
    let base = cmd & !IPC_64;
    match SHMCTL_CMDS.iter().find(|(_, n)| *n == base) {
        Some((name, _)) if cmd & IPC_64 != 0 => format!("{cmd} ({name}|IPC_64)"),
        Some((name, _)) => format!("{cmd} ({name})"),
        None => cmd.to_string(),
    }
}

impl Tool for Shmsnoop {
    common::tool_types!(ShmsnoopSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Shmsnoop {
            table: table(&args).containers(containers),
            args,
            event: Record::new(containers),
        })
    }

    fn filters(&self) -> Filters {
        Filters::threads(
            &self.args.pid,
            &self.args.tid,
            "-t",
            self.args.cgroup.path(),
        )
    }

    fn configure(&mut self, open: &mut OpenShmsnoopSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.failed_only = self.args.failed;
        let own = probe::own_call_tracepoints(&mut rodata.nr_calls, CALLS.map(|c| c.nr));
        let p = &mut open.progs;
        load_when(!own, [&mut p.shm_btf_enter, &mut p.shm_btf_exit]);
        load_when(
            own,
            [
                &mut p.shm_enter_shmget,
                &mut p.shm_exit_shmget,
                &mut p.shm_enter_shmat,
                &mut p.shm_exit_shmat,
                &mut p.shm_enter_shmdt,
                &mut p.shm_exit_shmdt,
                &mut p.shm_enter_shmctl,
                &mut p.shm_exit_shmctl,
            ],
        );
        Ok(())
    }

    common::event_kind!(table);

    fn schedule(&self) -> Schedule {
        Schedule::lasting(self.args.duration)
    }

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        self.event.read(data);
        if !output::comm_holds(&self.event.task.comm, self.args.name.as_deref()) {
            return Ok(());
        }
        self.table.row(out, self)
    }
}

common::stamped_by_record!(Shmsnoop);

impl Shmsnoop {
    fn call(&self) -> Call {
        Call(self.event.call)
    }

    fn names(&self) -> Option<&'static CallName> {
        CALLS.get(self.event.call as usize)
    }

    /// The error, where the call failed (shmat's addresses are not).
    fn errno(&self) -> Option<i32> {
        let ret = self.event.ret;
        (-4095..0).contains(&ret).then_some(-ret as i32)
    }

    /// BCC's ARGs: each call's arguments, named.
    fn arguments(&self) -> String {
        let [a0, a1, a2] = self.event.args;
        match self.call() {
            Call::SHM_GET => format!(
                "key: 0x{a0:x}, size: {a1}, shmflg: {}",
                flags(a2, SHMGET_FLAGS, true)
            ),
            Call::SHM_AT => format!(
                "shmid: 0x{a0:x}, shmaddr: 0x{a1:x}, shmflg: {}",
                flags(a2, SHMAT_FLAGS, false)
            ),
            Call::SHM_DT => format!("shmaddr: 0x{a0:x}"),
            Call::SHM_CTL => format!("shmid: 0x{a0:x}, cmd: {}, buf: 0x{a2:x}", command(a1)),
            _ => String::new(),
        }
    }

    /// An argument of the call, by its name, for JSON.
    fn arg(&self, name: &str) -> Cell<'static> {
        let [a0, a1, a2] = self.event.args;
        let v = match (self.call(), name) {
            (Call::SHM_GET, "key") => a0,
            (Call::SHM_GET, "size") => a1,
            (Call::SHM_GET | Call::SHM_AT, "shmflg") => a2,
            (Call::SHM_AT | Call::SHM_CTL, "shmid") => a0,
            (Call::SHM_AT, "shmaddr") => a1,
            (Call::SHM_DT, "shmaddr") => a0,
            (Call::SHM_CTL, "cmd") => a1,
            (Call::SHM_CTL, "buf") => a2,
            _ => return Cell::Null,
        };
        v.into()
    }
}

/// BCC's `PID COMM SYS RET ARGs` (TIME(s) first with -T; TID with -t); a
/// failure's RET is its error's name, where BCC shows -errno in hex.
fn table(args: &Args) -> Table<Shmsnoop> {
    let id = if args.tid.is_some() {
        columns::tid(6)
    } else {
        columns::pid(6)
    };
    Table::<Shmsnoop>::new(args.common.json)
        .column(args.timestamp, columns::since_first::<Shmsnoop, 9>(14))
        .columns([
            columns::ts(),
            id,
            if args.tid.is_some() {
                columns::pid(0).json_only()
            } else {
                columns::tid(0).json_only()
            },
            columns::cgroup_id(),
            columns::comm("COMM", 16),
            Column::right("SYS", 6, "", |t: &Shmsnoop| {
                t.names().map_or("?", |c| c.sys).into()
            }),
            Column::json("call", |t: &Shmsnoop| {
                t.names().map_or("?", |c| c.name).into()
            }),
            Column::right("RET", 16, "", |t: &Shmsnoop| match t.errno() {
                Some(e) => common::errnos::name(e)
                    .map_or_else(|| (-e).to_string(), String::from)
                    .into(),
                None => format!("{:x}", t.event.ret).into(),
            }),
            Column::json("ret", |t: &Shmsnoop| t.event.ret.into()),
            Column::json("error", |t: &Shmsnoop| {
                t.errno()
                    .and_then(common::errnos::name)
                    .map_or(Cell::Null, Cell::from)
            })
            .optional(),
            Column::json("latency_ns", |t: &Shmsnoop| t.event.latency_ns.into()),
            Column::json("key", |t: &Shmsnoop| t.arg("key")).optional(),
            Column::json("size", |t: &Shmsnoop| t.arg("size")).optional(),
            Column::json("shmid", |t: &Shmsnoop| t.arg("shmid")).optional(),
            Column::json("shmaddr", |t: &Shmsnoop| t.arg("shmaddr")).optional(),
            Column::json("shmflg", |t: &Shmsnoop| t.arg("shmflg")).optional(),
            Column::json("cmd", |t: &Shmsnoop| t.arg("cmd")).optional(),
            Column::json("buf", |t: &Shmsnoop| t.arg("buf")).optional(),
            Column::new("ARGs", 0, "args", |t: &Shmsnoop| t.arguments().into()),
        ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_bccs() {
        let h = |args: &[&str]| table(&Args::try_parse_from(args).unwrap()).header();
        assert_eq!(
            h(&["shmsnoop"]),
            "PID    COMM                SYS              RET ARGs"
        );
        assert_eq!(
            h(&["shmsnoop", "-T", "-t", "7"]),
            "TIME(s)        TID    COMM                SYS              RET ARGs"
        );
    }

    #[test]
    fn flags_are_named_as_bcc_names_them() {
        assert_eq!(flags(0o1666, SHMGET_FLAGS, true), "0x3b6 (IPC_CREAT|0666)");
        assert_eq!(flags(0o666, SHMGET_FLAGS, true), "0x1b6 (0666)");
        assert_eq!(flags(0, SHMAT_FLAGS, false), "0x0");
        assert_eq!(flags(0o10000, SHMAT_FLAGS, false), "0x1000 (SHM_RDONLY)");
        assert_eq!(
            flags(0o4600 | (21 << 26), SHMGET_FLAGS, true),
            "0x54000980 (SHM_HUGETLB|SHM_HUGE_2MB|0600)"
        );
    }

    #[test]
    fn commands_are_named() {
        assert_eq!(command(0), "0 (IPC_RMID)");
        assert_eq!(command(0x102), "258 (IPC_STAT|IPC_64)");
        assert_eq!(command(99), "99");
    }
}
