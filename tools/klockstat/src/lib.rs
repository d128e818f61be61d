//! klockstat: kernel lock waits and holds, by the kernel stack that asked
//! for the lock (or by thread), in libbpf-tools' tables.
//!
//! Waits come from the lock:contention_begin/end tracepoints (5.19+): only
//! contended acquisitions, of every lock kind (mutexes, rw semaphores,
//! spinlocks, rwlocks), and no kprobes needed. Holds need kprobes on the
//! lock and unlock calls of mutexes and rw semaphores; where the
//! tracepoints are missing, the lock calls' own time is the wait, as
//! libbpf-tools measures it. The tool says which it has.

mod info;
mod ksyms;
mod report;

use std::collections::HashMap;
use std::io::Write;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use common::cli::{self, CgroupLongArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::cgroups::Resolver;
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, load_when, Hook};
use common::kinds::stack as stacks;
use common::output::{c_bytes, now_hms, Out};
use common::run::lifecycle::{self, Banner, Schedule, Setup, SkelOf, Tool, When};
use common::sym::{self, Symbolizer};
use libbpf_rs::skel::Skel;
use libbpf_rs::Link;

use ksyms::Kallsyms;
use report::{Layout, Row, SortBy, Stat, Table, Who};

common::skeleton!("klockstat");
use skel::{types, KlockstatSkelBuilder, OpenKlockstatSkel};

// SAFETY: generated from C structs of integers and byte arrays: every bit
// pattern is a value.
unsafe impl plain::Plain for types::lock_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::lock_stat {}

const EXAMPLES: &str = "\
EXAMPLES:
    klockstat                     # trace system wide until Ctrl-C
    klockstat -d 5                # trace for 5 seconds
    klockstat -i 5                # print the figures every 5 seconds
    klockstat -p 181              # trace process 181 only
    klockstat -t 181              # trace thread 181 only
    klockstat -c pipe_            # only callers whose function starts with pipe_
    klockstat -L cgroup_mutex     # the cgroup_mutex lock only (an address too)
    klockstat -S acq_count        # waits sorted by count
    klockstat -S acq_count,hld_total  # waits by count, holds by total time
    klockstat -n 3                # the top 3 callers of each table
    klockstat -s 6                # 6 frames of each caller's stack
    klockstat -P                  # by thread
    klockstat --json -d 10 | jq .";

/// Trace kernel lock waits and hold times (mutexes, rw semaphores and,
/// where the kernel has the lock:contention tracepoints, spinlocks), by the
/// kernel stack that asked for the lock or by thread.
#[derive(Parser, Debug)]
#[command(name = "klockstat", version, after_help = EXAMPLES)]
struct Args {
    /// Trace these processes only (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Trace these threads only (comma-separated tids)
    #[arg(short = 't', long, value_parser = cli::id_list)]
    tid: Option<IdList>,
    /// Only callers whose function starts with FUNC (e.g. pipe_)
    #[arg(short = 'c', long, value_name = "FUNC", value_parser = cli::non_empty)]
    caller: Option<String>,
    /// Only this lock: a kernel variable's name (cgroup_mutex, where
    /// /proc/kallsyms lists variables) or an address (0x...)
    #[arg(short = 'L', long, value_name = "LOCK", value_parser = cli::non_empty)]
    lock: Option<String>,
    /// Print the first NR_LOCKS rows of each table
    #[arg(short = 'n', long = "locks", value_name = "NR_LOCKS", value_parser = cli::positive_u64)]
    locks: Option<u64>,
    /// Print NR_STACKS frames of each caller's stack, and who waited (or
    /// held) longest, on which lock
    #[arg(short = 's', long = "stacks", value_name = "NR_STACKS", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=stacks::MAX_STACK_DEPTH as i64))]
    stacks: u32,
    /// Sort by: acq_max, acq_total, acq_count (waits), hld_max, hld_total,
    /// hld_count (holds); one of each comma-separated [default: acq_max,hld_max]
    #[arg(short = 'S', long, value_name = "SORT", value_parser = report::parse_sort)]
    sort: Option<(Option<SortBy>, Option<SortBy>)>,
    /// Trace for SECONDS, then print (else until Ctrl-C)
    #[arg(short = 'd', long, value_name = "SECONDS", value_parser = cli::seconds)]
    duration: Option<u64>,
    /// Print every SECONDS (the figures add up, unless -R)
    #[arg(short = 'i', long, value_name = "SECONDS", value_parser = cli::seconds)]
    interval: Option<u64>,
    /// Reset the figures after each print
    #[arg(short = 'R', long)]
    reset: bool,
    /// Print the time above each print
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Rows by thread instead of by caller
    #[arg(short = 'P', long, conflicts_with = "stacks")]
    per_thread: bool,
    /// The number of unique stacks that can be stored
    #[arg(long, value_name = "N", default_value_t = 16384,
          value_parser = clap::value_parser!(u32).range(1..))]
    stack_storage_size: u32,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Klockstat>();

/// What a lock call's kprobe records (its program).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Enter {
    Mutex,
    Read,
    Write,
    /// An unlock: no entry program of the lock calls, the unlock's.
    Unlock,
}

/// What its kretprobe reads of the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exit {
    /// void: always acquired.
    Void,
    /// 0 when acquired (interruptible, killable).
    Zero,
    /// 1 when acquired (trylocks).
    Try,
    /// An unlock has no return probe.
    None,
}

/// The lock and unlock calls of mutexes and rw semaphores. With lockdep
/// (CONFIG_DEBUG_LOCK_ALLOC) the lock calls are `<name>_nested`.
const CALLS: &[(&str, Enter, Exit)] = &[
    ("mutex_lock", Enter::Mutex, Exit::Void),
    ("mutex_lock_interruptible", Enter::Mutex, Exit::Zero),
    ("mutex_lock_killable", Enter::Mutex, Exit::Zero),
    ("mutex_trylock", Enter::Mutex, Exit::Try),
    ("down_read", Enter::Read, Exit::Void),
    ("down_read_interruptible", Enter::Read, Exit::Zero),
    ("down_read_killable", Enter::Read, Exit::Zero),
    ("down_read_trylock", Enter::Read, Exit::Try),
    ("down_write", Enter::Write, Exit::Void),
    ("down_write_killable", Enter::Write, Exit::Zero),
    ("down_write_trylock", Enter::Write, Exit::Try),
    ("mutex_unlock", Enter::Unlock, Exit::None),
    ("up_read", Enter::Unlock, Exit::None),
    ("up_write", Enter::Unlock, Exit::None),
];

/// One lock call found: its symbol here and its probes.
#[derive(Debug, Clone)]
struct Call {
    symbol: String,
    enter: Enter,
    exit: Exit,
}

/// Where the waits come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waits {
    /// lock:contention_begin/end, by this hook.
    Contention(Hook),
    /// The lock calls' time (kprobes).
    Calls,
}

struct Klockstat {
    args: Args,
    sort_waits: SortBy,
    sort_holds: SortBy,
    ksyms: Kallsyms,
    /// Chosen with the hooks (configure).
    waits: Waits,
    /// The lock calls found, for the holds; empty: no holds.
    calls: Vec<Call>,
    symbolizer: Symbolizer,
    cgroups: Resolver,
}

impl Tool for Klockstat {
    common::tool_types!(KlockstatSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let (sort_waits, sort_holds) = args.sort.unwrap_or_default();
        Ok(Klockstat {
            sort_waits: sort_waits.unwrap_or_default(),
            sort_holds: sort_holds.unwrap_or_default(),
            args,
            ksyms: Kallsyms::default(),
            waits: Waits::Calls,
            calls: Vec::new(),
            symbolizer: Symbolizer::new(),
            cgroups: Resolver::default(),
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

    fn configure(&mut self, open: &mut OpenKlockstatSkel<'_>, _: &Setup) -> Result<()> {
        // Here, not in new(): with the privileges checked, kallsyms has
        // its addresses and tracefs its tracepoints.
        self.ksyms = Kallsyms::read();
        let lock = self
            .args
            .lock
            .as_deref()
            .map(|l| self.ksyms.lock_address(l))
            .transpose()
            .map_err(anyhow::Error::msg)?;
        self.calls = lock_calls();
        self.waits = match probe::tracepoint_hook("lock", "contention_begin", "5.19") {
            Ok(hook) => Waits::Contention(hook),
            Err(_) if !self.calls.is_empty() => Waits::Calls,
            Err(_) => anyhow::bail!(
                "this kernel has neither the lock:contention_begin/end tracepoints (Linux \
                 5.19) nor kprobes on the lock calls (mutex_lock, down_read, down_write): \
                 klockstat needs one of them"
            ),
        };
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.targ_lock = lock.unwrap_or(0);
        rodata.per_thread = self.args.per_thread;
        rodata.waits_from_calls = self.waits == Waits::Calls;
        rodata.by_cgroup = self.args.containers.containers;
        // By thread, no stack is asked for: the map stays one entry.
        let entries = if self.args.per_thread {
            1
        } else {
            self.args.stack_storage_size
        };
        maps::size_stack_map(&mut open.maps.stacks, entries, stacks::MAX_STACK_DEPTH)?;
        let p = &mut open.progs;
        match self.waits {
            Waits::Contention(hook) => {
                probe::hook_variant(hook, &mut p.begin_btf, &mut p.begin_raw, &mut p.begin_tp);
                probe::hook_variant(hook, &mut p.end_btf, &mut p.end_raw, &mut p.end_tp);
            }
            Waits::Calls => load_when(
                false,
                [
                    &mut p.begin_btf,
                    &mut p.begin_raw,
                    &mut p.begin_tp,
                    &mut p.end_btf,
                    &mut p.end_raw,
                    &mut p.end_tp,
                ],
            ),
        }
        load_when(
            !self.calls.is_empty(),
            [
                &mut p.mutex_enter,
                &mut p.read_enter,
                &mut p.write_enter,
                &mut p.void_exit,
                &mut p.zero_exit,
                &mut p.try_exit,
                &mut p.unlock,
            ],
        );
        Ok(())
    }

    fn degraded(&self) -> Option<String> {
        let mut notes = Vec::new();
        if self.waits == Waits::Calls {
            notes.push(
                "no lock:contention_begin/end tracepoints (Linux 5.19): waits are the time \
                 in the lock calls of mutexes and rw semaphores, uncontended ones included",
            );
        }
        if self.calls.is_empty() {
            notes.push(
                "no kprobes on the lock calls (mutex_lock, down_read, down_write): waits \
                 only, no hold times",
            );
        }
        (!notes.is_empty()).then(|| notes.join("; "))
    }

    fn hook_target(&self, program: &str) -> Option<String> {
        let wanted: &[(Enter, Exit)] = match program {
            "mutex_enter" => &[
                (Enter::Mutex, Exit::Void),
                (Enter::Mutex, Exit::Zero),
                (Enter::Mutex, Exit::Try),
            ],
            "read_enter" => &[
                (Enter::Read, Exit::Void),
                (Enter::Read, Exit::Zero),
                (Enter::Read, Exit::Try),
            ],
            "write_enter" => &[
                (Enter::Write, Exit::Void),
                (Enter::Write, Exit::Zero),
                (Enter::Write, Exit::Try),
            ],
            "void_exit" => &[
                (Enter::Mutex, Exit::Void),
                (Enter::Read, Exit::Void),
                (Enter::Write, Exit::Void),
            ],
            "zero_exit" => &[
                (Enter::Mutex, Exit::Zero),
                (Enter::Read, Exit::Zero),
                (Enter::Write, Exit::Zero),
            ],
            "try_exit" => &[
                (Enter::Mutex, Exit::Try),
                (Enter::Read, Exit::Try),
                (Enter::Write, Exit::Try),
            ],
            "unlock" => &[(Enter::Unlock, Exit::None)],
            _ => return None,
        };
        let names: Vec<&str> = self
            .calls
            .iter()
            .filter(|c| wanted.contains(&(c.enter, c.exit)))
            .map(|c| c.symbol.as_str())
            .collect();
        // One word: the kernel matrix reads a hook's target up to a space.
        (!names.is_empty()).then(|| names.join("/"))
    }

    fn attach(&mut self, skel: &mut SkelOf<'_, Self>) -> Result<Vec<Link>> {
        let mut links = lifecycle::attach_all(skel.object())?;
        let p = &skel.progs;
        // The kretprobes first: of two kprobes on one function, the one
        // registered last runs first, and a kretprobe's entry replaces the
        // return address with its trampoline, which a stack taken after it
        // cannot unwind through before Linux 5.13 (one bogus frame).
        for c in &self.calls {
            let ret = match c.exit {
                Exit::Void => &p.void_exit,
                Exit::Zero => &p.zero_exit,
                Exit::Try => &p.try_exit,
                Exit::None => continue,
            };
            links.push(
                ret.attach_kprobe(true, &c.symbol)
                    .with_context(|| format!("attaching a kretprobe to {}", c.symbol))?,
            );
        }
        for c in &self.calls {
            let entry = match c.enter {
                Enter::Mutex => &p.mutex_enter,
                Enter::Read => &p.read_enter,
                Enter::Write => &p.write_enter,
                Enter::Unlock => &p.unlock,
            };
            links.push(
                entry
                    .attach_kprobe(false, &c.symbol)
                    .with_context(|| format!("attaching a kprobe to {}", c.symbol))?,
            );
        }
        Ok(links)
    }

    fn banner(&self) -> Banner {
        Banner::Note(Self::INFO.banner.into())
    }

    fn schedule(&self) -> Schedule {
        schedule(self.args.interval, self.args.duration)
    }

    fn report(&mut self, skel: &SkelOf<'_, Self>, out: &mut Out, when: When) -> Result<()> {
        let drain = self.args.reset;
        let time = now_hms();
        let mut tables = vec![(Table::Wait, self.rows(skel, Table::Wait, drain)?)];
        if !self.calls.is_empty() {
            tables.push((Table::Hold, self.rows(skel, Table::Hold, drain)?));
        }
        let max_rows = usize::try_from(self.args.locks.unwrap_or(u64::MAX)).unwrap_or(usize::MAX);
        if self.args.common.json {
            for (table, rows) in &tables {
                for row in rows.iter().take(max_rows) {
                    out.json(&report::json(*table, row, &time))?;
                }
            }
            return Ok(());
        }
        writeln!(out)?;
        if self.args.timestamp {
            writeln!(out, "{time:<8}")?;
        }
        let layout = Layout {
            stack_lines: self.args.stacks as usize,
            per_thread: self.args.per_thread,
            max_rows,
            containers: self.args.containers.containers,
        };
        for (table, rows) in &tables {
            report::print(out, *table, rows, layout)?;
        }
        if when == When::End {
            writeln!(out, "Exiting trace of mutex/sem locks")?;
        }
        Ok(())
    }

    fn error_note(&self, index: u32) -> Option<&'static str> {
        if let Some(note) = stacks::error_note(index) {
            return Some(note);
        }
        use types::klockstat_error as E;
        Some(match E(index) {
            E::ERR_STATS_FULL => "waits or holds not counted: the figures' map was full",
            E::ERR_TRACKING_FULL => {
                "waits or holds not counted: the map of those under way was full"
            }
            E::ERR_UNMATCHED_UNLOCK => {
                "unlocks without their lock call seen (taken before tracing began, or its \
                 return missed: the kretprobe's instances were all in use): holds not counted"
            }
            _ => return None,
        })
    }
}

impl Klockstat {
    /// A table's rows: the kernel's keys read (drained with -R), merged by
    /// what is shown of them (the caller's frames, or the thread) and the
    /// lock's kind, sorted.
    fn rows(&mut self, skel: &SkelOf<'_, Self>, table: Table, drain: bool) -> Result<Vec<Row>> {
        let map = match table {
            Table::Wait => &skel.maps.waits,
            Table::Hold => &skel.maps.holds,
        };
        let entries: Vec<(types::lock_key, Box<types::lock_stat>)> = maps::read_as(map, drain)?;
        let mut frames: HashMap<i32, Option<Vec<String>>> = HashMap::new();
        let mut merged: HashMap<(Who, &'static str, u64), Stat> = HashMap::new();
        for (key, value) in entries {
            let stat = Stat {
                count: value.count,
                total_ns: value.total_ns,
                max_ns: value.max_ns,
                max_lock: value.max_lock,
                max_pid: value.max_pid,
                max_tid: value.max_tid,
                max_comm: c_bytes(&value.max_comm).to_vec(),
            };
            let who = if self.args.per_thread {
                Who::Thread {
                    tid: key.tid,
                    comm: stat.max_comm.clone(),
                }
            } else {
                let shown = match frames.get(&key.stack_id) {
                    Some(shown) => shown.clone(),
                    None => {
                        let shown = self.caller(skel, key.stack_id)?;
                        frames.insert(key.stack_id, shown.clone());
                        shown
                    }
                };
                // -c leaves out the callers not named so.
                let Some(shown) = shown else { continue };
                Who::Stack(shown)
            };
            merged
                .entry((who, report::kind(key.flags), key.cgroup_id))
                .or_default()
                .merge(&stat);
        }
        let containers = self.args.containers.containers;
        let mut rows: Vec<Row> = merged
            .into_iter()
            .map(|((who, kind, cgroup_id), stat)| Row {
                lock_name: self.ksyms.data_name(stat.max_lock).map(str::to_string),
                cgroup: containers.then(|| (cgroup_id, self.cgroups.names(cgroup_id))),
                who,
                kind,
                stat,
            })
            .collect();
        report::sort(
            &mut rows,
            match table {
                Table::Wait => self.sort_waits,
                Table::Hold => self.sort_holds,
            },
        );
        Ok(rows)
    }

    /// The frames shown of stack `id` (-s of them), from the code that
    /// asked for the lock: the tracing machinery and the lock functions
    /// above it left out. None where -c leaves the caller out.
    fn caller(&mut self, skel: &SkelOf<'_, Self>, id: i32) -> Result<Option<Vec<String>>> {
        let addrs = maps::read_stack(&skel.maps.stacks, id)?.unwrap_or_default();
        let frames = self.symbolizer.kernel(&addrs);
        let frames = sym::trim_tracing_frames(&frames);
        let start = frames
            .iter()
            .position(|f| !self.ksyms.in_lock_code(f.addr, f.name.as_deref()))
            .unwrap_or(frames.len());
        let frames = &frames[start..];
        if let Some(prefix) = &self.args.caller {
            let named = frames
                .first()
                .and_then(|f| f.name.as_deref())
                .is_some_and(|n| n.starts_with(prefix.as_str()));
            if !named {
                return Ok(None);
            }
        }
        Ok(Some(
            frames
                .iter()
                .take(self.args.stacks as usize)
                .map(|f| f.label(true))
                .collect(),
        ))
    }
}

/// -i and -d as libbpf-tools takes them: with both, duration / interval
/// prints (the interval cut to the duration); -d alone, one at its end.
fn schedule(interval: Option<u64>, duration: Option<u64>) -> Schedule {
    match (interval, duration) {
        (Some(i), Some(d)) => Schedule {
            interval: Some(Duration::from_secs(i.min(d))),
            count: Some(d / i.min(d)),
            duration: None,
        },
        (i, d) => Schedule {
            interval: i.map(Duration::from_secs),
            count: None,
            duration: d.map(Duration::from_secs),
        },
    }
}

/// The lock calls this kernel has kprobes on: none unless both mutex_lock
/// and mutex_unlock (or lockdep's mutex_lock_nested) are there.
fn lock_calls() -> Vec<Call> {
    let found: Vec<Call> = CALLS
        .iter()
        .filter_map(|(name, enter, exit)| {
            let nested = format!("{name}_nested");
            let symbol = if probe::kprobe_target(name) {
                name.to_string()
            } else if *enter != Enter::Unlock && probe::kprobe_target(&nested) {
                nested
            } else {
                return None;
            };
            Some(Call {
                symbol,
                enter: *enter,
                exit: *exit,
            })
        })
        .collect();
    let has = |e: Enter| {
        found
            .iter()
            .any(|c| c.enter == e && c.symbol.starts_with("mutex"))
    };
    if has(Enter::Mutex) && has(Enter::Unlock) {
        found
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse_as_libbpf_tools_takes_them() {
        let a = Args::try_parse_from([
            "klockstat",
            "-p",
            "181",
            "-c",
            "pipe_",
            "-L",
            "cgroup_mutex",
            "-n",
            "3",
            "-s",
            "6",
            "-S",
            "acq_count,hld_total",
            "-d",
            "5",
            "-i",
            "1",
            "-R",
            "-T",
        ])
        .unwrap();
        assert_eq!(a.caller.as_deref(), Some("pipe_"));
        assert_eq!(a.lock.as_deref(), Some("cgroup_mutex"));
        assert_eq!((a.locks, a.stacks), (Some(3), 6));
        assert_eq!(a.sort, Some((Some(SortBy::Count), Some(SortBy::Total))));
        assert_eq!((a.duration, a.interval), (Some(5), Some(1)));
        assert!(a.reset && a.timestamp && !a.per_thread);
        assert!(
            Args::try_parse_from(["klockstat", "-P"])
                .unwrap()
                .per_thread
        );
        for bad in [
            &["klockstat", "-P", "-s", "2"][..],
            &["klockstat", "-s", "0"],
            &["klockstat", "-n", "0"],
            &["klockstat", "-S", "acq_min"],
            &["klockstat", "-L", ""],
            &["klockstat", "-d", "0"],
            &["klockstat", "5"],
        ] {
            assert!(Args::try_parse_from(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn interval_and_duration_make_a_count() {
        let s = schedule(Some(2), Some(7));
        assert_eq!(
            (s.interval, s.count, s.duration),
            (Some(Duration::from_secs(2)), Some(3), None)
        );
        let s = schedule(Some(9), Some(4));
        assert_eq!(
            (s.interval, s.count),
            (Some(Duration::from_secs(4)), Some(1))
        );
        let s = schedule(None, Some(4));
        assert_eq!(
            (s.interval, s.count, s.duration),
            (None, None, Some(Duration::from_secs(4)))
        );
        let s = schedule(Some(1), None);
        assert_eq!(
            (s.interval, s.count, s.duration),
            (Some(Duration::from_secs(1)), None, None)
        );
    }

    #[test]
    fn the_lock_calls_have_their_probes() {
        // Every lock call has a return probe, every unlock none.
        for (name, enter, exit) in CALLS {
            assert_eq!(*enter == Enter::Unlock, *exit == Exit::None, "{name}");
        }
    }
}
