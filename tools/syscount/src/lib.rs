//! syscount: system calls counted by call or by process, with their time:
//! which calls a program makes, how many, how slow. The kernel counts in a
//! per-CPU array indexed by the call's number (or a per-CPU hash by
//! process); each report reads the totals and prints what the interval
//! added.

mod info;

use std::collections::HashMap;
use std::io::Write;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, IdList, MetricsArgs};
use common::export::prom::Counters;
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, Hook};
use common::kernel::syscalls::{self, NR_SYSCALLS};
use common::kinds::event::{Cell, Column, Table};
use common::kinds::table::{self, Asked, Deltas, Timed};
use common::run::lifecycle::{self, Banner, Schedule, Setup, Tool, When};
use common::run::process::Comms;
use libbpf_rs::skel::OpenSkel;
use libbpf_rs::{MapCore, MapFlags};

common::skeleton!("syscount");
use skel::{types, OpenSyscountSkel, SyscountSkel, SyscountSkelBuilder};

// SAFETY: repr(C) structs of integers and byte arrays (the generated
// skeleton types), valid for any bytes.
unsafe impl plain::Plain for types::call_stat {}
// SAFETY: as above.
unsafe impl plain::Plain for types::pstat {}

const EXAMPLES: &str = "\
EXAMPLES:
    syscount                 # count system calls, the top 10, at Ctrl-C
    syscount -P              # count by process
    syscount -L              # with their total and average time
    syscount -p 181          # only process 181
    syscount -i 1 -T 5       # the top 5 each second
    syscount -x              # only failed calls
    syscount -e ENOENT       # only calls that failed with ENOENT
    syscount -d 10           # trace for 10 seconds
    syscount -l              # list the system calls it names
    syscount --prometheus :9102";

/// Count system calls by call or by process, with their time (-L).
#[derive(Parser, Debug)]
#[command(name = "syscount", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Only these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Only these threads (comma-separated thread ids), as BCC's --tid
    #[arg(long, value_parser = cli::id_list, conflicts_with = "pid")]
    tid: Option<IdList>,
    /// Only this system call, by name or number (-l lists them)
    #[arg(long, value_name = "SYSCALL", value_parser = syscall_number)]
    syscall: Option<u32>,
    /// Print a summary every INTERVAL seconds
    #[arg(short = 'i', long, value_name = "INTERVAL", value_parser = common::cli::seconds)]
    interval: Option<u64>,
    /// Trace for DURATION seconds
    #[arg(short = 'd', long, value_name = "DURATION", value_parser = common::cli::seconds)]
    duration: Option<u64>,
    /// Print only the top N calls or processes
    #[arg(short = 'T', long, value_name = "N", default_value_t = 10)]
    top: usize,
    /// Only failed calls
    #[arg(short = 'x', long = "failures")]
    failures: bool,
    /// Only calls that failed with this errno (ENOENT, or 2)
    #[arg(short = 'e', long, value_name = "ERRNO", value_parser = common::errnos::parse)]
    errno: Option<i32>,
    /// Time the calls: total and average
    #[arg(short = 'L', long)]
    latency: bool,
    /// Times in milliseconds, not microseconds
    #[arg(short = 'm', long)]
    milliseconds: bool,
    /// Count by process, not by call
    #[arg(short = 'P', long, conflicts_with_all = ["prometheus", "prom_file"])]
    process: bool,
    /// List the system calls this architecture numbers, and exit
    #[arg(short = 'l', long)]
    list: bool,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    metrics: MetricsArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Syscount>();

/// A call's or a process's totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Stat {
    count: u64,
    ns: u64,
}

impl table::Counts for Stat {
    fn since(self, before: Stat) -> Stat {
        Stat {
            count: self.count.saturating_sub(before.count),
            ns: self.ns.saturating_sub(before.ns),
        }
    }

    fn is_zero(&self) -> bool {
        self.count == 0
    }
}

pub(crate) struct Syscount {
    args: Args,
    /// Totals at the last report, to print what each interval added.
    deltas: Deltas<u32, Stat>,
    table: Table<Timed<Row>>,
    comms: Comms,
}

/// A system call by name (`openat`, as -l lists them) or number.
fn syscall_number(s: &str) -> Result<u32, String> {
    if let Ok(nr) = s.parse::<u32>() {
        return if nr < NR_SYSCALLS {
            Ok(nr)
        } else {
            Err(format!("no system call is numbered {nr} here"))
        };
    }
    syscalls::number(s)
        .ok_or_else(|| format!("no system call is named {s} here (syscount -l lists them)"))
}

impl Tool for Syscount {
    common::tool_types!(SyscountSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        if args.list {
            // Nothing to trace: the list, and the end (before any BPF).
            let mut out = std::io::stdout().lock();
            for (nr, name) in syscalls::SYSCALLS {
                let _ = writeln!(out, "{nr:<4} {name}");
            }
            let _ = out.flush();
            std::process::exit(0);
        }
        Ok(Syscount {
            table: table(&args),
            args,
            deltas: Deltas::default(),
            comms: Comms::default(),
        })
    }

    fn filters(&self) -> Filters {
        Filters::threads(
            &self.args.pid,
            &self.args.tid,
            "--tid",
            self.args.cgroup.path(),
        )
    }

    fn configure(&mut self, open: &mut OpenSyscountSkel<'_>, _: &Setup) -> Result<()> {
        let args = &self.args;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.latency = args.latency;
        rodata.per_process = args.process;
        rodata.failed_only = args.failures;
        rodata.errno_only = args.errno.unwrap_or(0);
        rodata.only_nr = args.syscall.map_or(-1, |nr| nr as i32);
        // Counting is one program at sys_exit; -L adds sys_enter's. The
        // entry time in task storage where tp_btf has it, else by thread
        // in a hash map (raw_tp).
        let hook = probe::task_state_sections(open.open_object_mut())?;
        let (p, m) = (&mut open.progs, &mut open.maps);
        probe::load_when(args.latency, [&mut p.sc_btf_enter, &mut p.sc_raw_enter]);
        if hook == Hook::TpBtf && !args.latency {
            probe::create_when(false, [&mut m.start_storage])?;
        }
        Ok(())
    }

    fn banner(&self) -> Banner {
        let what = if self.args.failures || self.args.errno.is_some() {
            "failed syscalls"
        } else {
            "syscalls"
        };
        Banner::Note(format!(
            "Tracing {what}, printing top {}... Hit Ctrl-C to end.",
            self.args.top
        ))
    }

    fn interval_table(&self) -> Option<table::Spec<'_>> {
        Some(table::Spec {
            json: self.args.common.json,
            heading: table::Heading::BracketedTime,
            clear: false,
            max: self.args.top,
            schedule: Schedule {
                interval: self.args.interval.map(Duration::from_secs),
                count: None,
                duration: self.args.duration.map(Duration::from_secs),
            },
            last_line: None,
            banner: None,
            metrics: Some(&self.args.metrics),
        })
    }

    fn interval_metrics(&mut self, skel: &SyscountSkel<'_>, asked: Asked) -> Result<Counters> {
        // The rows' totals are by call unless -P.
        if asked == Asked::AfterRows && !self.args.process {
            return Ok(metrics(self.deltas.totals(), self.args.latency));
        }
        Ok(metrics(&per_call(skel)?, self.args.latency))
    }

    fn interval_rows<'s>(
        &'s mut self,
        skel: &SyscountSkel<'_>,
        _: When,
    ) -> Result<Box<dyn table::Print + 's>> {
        let totals = if self.args.process {
            per_process(skel, &mut self.comms)?
        } else {
            per_call(skel)?
        };
        let rows = self
            .deltas
            .added(totals)
            .into_iter()
            .map(|(key, stat)| Row {
                key,
                stat,
                name: if self.args.process {
                    self.comms.raw(key).to_vec()
                } else {
                    syscalls::name(key).into_owned().into_bytes()
                },
            })
            .collect();
        // BCC's order: by time with -L, else by count; the largest first.
        let latency = self.args.latency;
        let key = move |r: &Row| if latency { r.stat.ns } else { r.stat.count };
        Ok(Box::new(table::Rows::new(
            rows,
            &self.table,
            move |a, b| key(b).cmp(&key(a)).then(a.key.cmp(&b.key)),
        )))
    }
}

/// A call's or a process's row: what the interval added.
struct Row {
    key: u32,
    stat: Stat,
    /// The call's name, or the process's (raw).
    name: Vec<u8>,
}

impl Row {
    fn avg_ns(&self) -> u64 {
        self.stat.ns / self.stat.count.max(1)
    }
}

/// BCC's columns: SYSCALL (or PID COMM with -P) COUNT, and with -L the
/// total and average time in microseconds (-m: milliseconds); in JSON the
/// times in nanoseconds.
fn table(args: &Args) -> Table<Timed<Row>> {
    let t = table::timed::<Row>(args.common.json);
    // A column's JSON key is in every row: each added only where it applies.
    let t = if args.process {
        t.columns([
            Column::new("PID", 6, "pid", |t| t.row.key.into()),
            Column::new("COMM", 15, "comm", |t| Cell::bytes(&t.row.name)),
        ])
    } else {
        t.columns([
            Column::json("nr", |t| t.row.key.into()),
            Column::new("SYSCALL", 22, "syscall", |t| {
                String::from_utf8_lossy(&t.row.name).into()
            }),
        ])
    };
    let t = t.columns([Column::right("COUNT", 8, "count", |t| {
        t.row.stat.count.into()
    })]);
    if !args.latency {
        return t;
    }
    let t = if args.milliseconds {
        t.columns([
            Column::right("TIME (ms)", 16, "", |t| {
                Cell::Float(t.row.stat.ns as f64 / 1e6, 6)
            }),
            Column::right("AVG (ms)", 12, "", |t| {
                Cell::Float(t.row.avg_ns() as f64 / 1e6, 6)
            }),
        ])
    } else {
        t.columns([
            Column::right("TIME (us)", 16, "", |t| {
                Cell::Float(t.row.stat.ns as f64 / 1e3, 3)
            }),
            Column::right("AVG (us)", 12, "", |t| {
                Cell::Float(t.row.avg_ns() as f64 / 1e3, 3)
            }),
        ])
    };
    t.columns([
        Column::json("total_ns", |t| t.row.stat.ns.into()),
        Column::json("avg_ns", |t| t.row.avg_ns().into()),
    ])
}

fn stat_of(values: &[Vec<u8>]) -> Stat {
    values.iter().fold(Stat::default(), |acc, v| {
        let mut s = types::call_stat::default();
        maps::copy_record(&mut s, v);
        Stat {
            count: acc.count + s.count,
            ns: acc.ns + s.ns,
        }
    })
}

/// Every call's totals, summed over the CPUs.
fn per_call(skel: &SyscountSkel<'_>) -> Result<HashMap<u32, Stat>> {
    let map = &skel.maps.stats;
    let mut totals = HashMap::new();
    for nr in 0..NR_SYSCALLS {
        let values = map
            .lookup_percpu(&nr.to_ne_bytes(), MapFlags::ANY)
            .context("reading the call counts")?
            .unwrap_or_default();
        let s = stat_of(&values);
        if s.count > 0 {
            totals.insert(nr, s);
        }
    }
    Ok(totals)
}

/// Every process's totals, summed over the CPUs; their names kept.
fn per_process(skel: &SyscountSkel<'_>, comms: &mut Comms) -> Result<HashMap<u32, Stat>> {
    let rows = comms.read_percpu(
        &skel.maps.by_pid,
        |pid: &u32| *pid,
        |p: &types::pstat| (p.count, &p.comm[..]),
        |s: &mut Stat, p: &types::pstat| {
            s.count += p.count;
            s.ns += p.ns;
        },
    )?;
    Ok(rows.into_iter().collect())
}

/// `syscount_calls_total{syscall="read"}`, and with -L
/// `syscount_seconds_total`.
fn metrics(totals: &HashMap<u32, Stat>, latency: bool) -> Counters {
    let mut calls: Vec<(u32, Stat)> = totals.iter().map(|(k, s)| (*k, *s)).collect();
    calls.sort_by_key(|(nr, _)| *nr);
    let label = |nr: u32| vec![("syscall".to_string(), syscalls::name(nr).into_owned())];
    let mut families = vec![(
        "syscount_calls",
        "System calls made",
        calls.iter().map(|(nr, s)| (label(*nr), s.count)).collect(),
    )];
    if latency {
        // Counters are integers: the time in whole microseconds, as seconds
        // would round every call to nothing.
        families.push((
            "syscount_microseconds",
            "Time in system calls, microseconds",
            calls
                .iter()
                .map(|(nr, s)| (label(*nr), s.ns / 1000))
                .collect(),
        ));
    }
    Counters { families }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_architectures_table() {
        assert_eq!(syscalls::name(libc::SYS_getppid as u32), "getppid");
        assert_eq!(syscalls::name(libc::SYS_openat as u32), "openat");
        assert_eq!(syscalls::name(999), "[999]");
    }
}
