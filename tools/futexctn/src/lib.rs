//! futexctn: how long threads wait for user-space locks (futexes), as log2
//! histograms by process, lock address and the user stack that waited, in
//! libbpf-tools' layout, on the histogram kind (percentiles, HDR logs,
//! Prometheus and JSON come with it).

mod info;

use std::cell::RefCell;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, HistogramArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, load_when};
use common::kinds::histogram;
use common::kinds::stack as stacks;
use common::output::{c_string, escape, hist};
use common::run::lifecycle::{self, Setup, SkelOf, Tool};
use common::sym::Symbolizer;
use serde_json::{Map, Value};

common::skeleton!("futexctn");
use skel::{types, FutexctnSkelBuilder, OpenFutexctnSkel};

// SAFETY: generated from C structs of integers and byte arrays: every bit
// pattern is a value.
unsafe impl plain::Plain for types::futexctn_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::futexctn_hist {}
// SAFETY: as above.
unsafe impl plain::Plain for types::fine_hist {}

const EXAMPLES: &str = "\
EXAMPLES:
    futexctn              # futex lock waits as histograms, until Ctrl-C
    futexctn 1 10         # print 1 second summaries, 10 times
    futexctn -mT 1        # 1s summaries, milliseconds, and timestamps
    futexctn -s 1         # 1s summaries, by lock alone (no stacks)
    futexctn -l 0x8187bb8 # only trace lock 0x8187bb8
    futexctn -p 123       # only trace threads of process 123
    futexctn -t 125       # only trace thread 125
    futexctn --all        # every futex wait: condition variables too
    futexctn --percentiles 5 1  # p50, p90, p99, p99.9 and max of each
    futexctn --json 5 1 | jq .";

/// Summarize futex (user-space lock) wait time as histograms, by process,
/// lock and user stack.
#[derive(Parser, Debug)]
#[command(name = "futexctn", version, after_help = EXAMPLES)]
struct Args {
    /// Trace these processes only (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Trace these threads only (comma-separated tids)
    #[arg(short = 't', long, value_parser = cli::id_list)]
    tid: Option<IdList>,
    /// Trace this lock only: its address in the process (hex, 0x optional)
    #[arg(short = 'l', long, value_name = "LOCK", value_parser = lock_address)]
    lock: Option<u64>,
    /// Include a timestamp on each output (HH:MM:SS)
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Millisecond histograms (default: microseconds)
    #[arg(short = 'm', long)]
    milliseconds: bool,
    /// A histogram per process and lock, without stacks
    #[arg(short = 's', long)]
    summary: bool,
    /// Every futex wait, not only lock waits: FUTEX_WAIT_BITSET
    /// (condition variables, rwlocks, timed locks, Rust's std locks),
    /// FUTEX_WAIT_REQUEUE_PI and futex_waitv
    #[arg(short = 'a', long)]
    all: bool,
    /// The most frames of a stack kept
    #[arg(long, value_name = "DEPTH", default_value_t = stacks::MAX_STACK_DEPTH,
          value_parser = clap::value_parser!(u32).range(1..=stacks::MAX_STACK_DEPTH as i64))]
    perf_max_stack_depth: u32,
    /// The number of unique stacks that can be stored
    #[arg(long, value_name = "N", default_value_t = 16384,
          value_parser = clap::value_parser!(u32).range(1..))]
    stack_storage_size: u32,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    hist: HistogramArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// -l's address as libbpf-tools reads it: hex, with or without 0x.
fn lock_address(s: &str) -> Result<u64, String> {
    let hex = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    match u64::from_str_radix(hex, 16) {
        Ok(0) => Err("a lock's address is not 0".into()),
        Ok(a) => Ok(a),
        Err(_) => Err(format!("{s:?} is not an address in hex (0x7f3a2c0010e0)")),
    }
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Futexctn>();

/// The waiting calls, in bpf/futexctn.h's order (enum futex_call).
const CALLS: [libc::c_long; types::futex_call::FUTEX_CALLS.0 as usize] = [
    libc::SYS_futex,
    // futex2's futex_wait (Linux 6.7): 454 in the x86_64 and generic
    // tables, newer than the libc crate's.
    454,
    libc::SYS_futex_waitv,
];

struct Futexctn {
    args: Args,
    symbolizer: RefCell<Symbolizer>,
    containers: histogram::Containers,
}

impl Tool for Futexctn {
    common::tool_types!(FutexctnSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        Ok(Futexctn {
            args,
            symbolizer: RefCell::new(Symbolizer::new()),
            containers: histogram::Containers::default(),
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

    fn configure(&mut self, open: &mut OpenFutexctnSkel<'_>, _: &Setup) -> Result<()> {
        let args = &self.args;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.all_waits = args.all;
        rodata.targ_lock = args.lock.unwrap_or(0);
        rodata.with_stacks = !args.summary;
        rodata.per_container = args.hist.per_container;
        rodata.millis = args.milliseconds;
        rodata.fine = args.hist.fine();
        let own = probe::own_call_tracepoints(&mut rodata.nr_calls, CALLS);
        // -s asks for no stack: the map stays one entry.
        let entries = if args.summary {
            1
        } else {
            args.stack_storage_size
        };
        maps::size_stack_map(&mut open.maps.stacks, entries, args.perf_max_stack_depth)?;
        let p = &mut open.progs;
        load_when(!own, [&mut p.futex_btf_enter, &mut p.futex_btf_exit]);
        // futex2's calls are waits of --all's, or newer than this kernel
        // (the lifecycle leaves out a tracepoint it lacks).
        load_when(
            own,
            [
                &mut p.futex_enter_futex,
                &mut p.futex_exit_futex,
                &mut p.futex_enter_futex_wait,
                &mut p.futex_exit_futex_wait,
            ],
        );
        load_when(
            own && args.all,
            [
                &mut p.futex_enter_futex_waitv,
                &mut p.futex_exit_futex_waitv,
            ],
        );
        Ok(())
    }

    fn loaded(&mut self, _: &mut SkelOf<'_, Self>) -> Result<()> {
        if !self.args.summary {
            let mut symbolizer = self.symbolizer.borrow_mut();
            // A process that exits before the report is still symbolized,
            // from the kernel's records of its mappings; those -p names
            // were mapped before they started.
            symbolizer.follow_mappings();
            for pid in self.args.pid.iter().flat_map(|p| p.0.iter()) {
                symbolizer.keep_process(*pid);
            }
        }
        Ok(())
    }

    fn histograms(&self) -> Option<histogram::Spec<'_>> {
        Some(histogram::Spec {
            args: &self.args.hist,
            json: self.args.common.json,
            what: "futexctn, futex wait time",
            metric: "futexctn_futex_wait",
            help: "Time threads waited on a futex (a user-space lock)",
            unit: histogram::Unit::time(self.args.milliseconds),
            timestamp: self.args.timestamp,
            extension: false,
            layout: histogram::Layout::Log2,
        })
    }

    fn sections(&self, skel: &SkelOf<'_, Self>, drain: bool) -> Result<Vec<hist::Section>> {
        let args = &self.args;
        let fine = args.hist.fine_map(&skel.maps.fine_hists);
        let mut entries: Vec<
            histogram::Entry<types::futexctn_key, types::futexctn_hist, types::fine_hist>,
        > = histogram::read_maps(&skel.maps.hists, fine, drain, |k: &types::futexctn_key| {
            (k.tgid, k.uaddr, k.stack_id, k.cgroup_id)
        })?;
        // The longest waited first.
        entries.sort_by_key(|e| std::cmp::Reverse(e.hist.hist.total));
        let unit = histogram::Unit::time(args.milliseconds).label();
        let mut sections = Vec::with_capacity(entries.len());
        for e in &entries {
            let (k, h) = (&e.key, &e.hist);
            let comm = common::run::process::comm(k.tgid).unwrap_or_else(|| c_string(&h.comm));
            let lock = format!("{:#x}", k.uaddr);
            let mut labels = Map::new();
            let mut title = String::new();
            if args.hist.per_container {
                title = self.containers.label(k.cgroup_id, &mut labels) + "\n";
            }
            labels.insert("pid".into(), k.tgid.into());
            labels.insert("comm".into(), comm.clone().into());
            labels.insert("lock".into(), lock.clone().into());
            let avg = h.hist.total.checked_div(h.hist.count).unwrap_or(0);
            title += &format!(
                "{}[{}] lock {lock} contended {} times, {avg} avg {unit} [max: {} {unit}, min {} {unit}]",
                escape(comm.as_bytes()),
                k.tgid,
                h.hist.count,
                h.max,
                h.min,
            );
            let mut extra = Map::new();
            extra.insert("min".into(), h.min.into());
            extra.insert("max".into(), h.max.into());
            if !args.summary {
                let frames = self.frames(skel, k)?;
                title += "\n    -";
                match &frames {
                    Some(frames) => {
                        for f in frames {
                            title += &format!("\n    {}", escape(f.as_bytes()));
                        }
                    }
                    None => title += "\n    [Missed User Stack]",
                }
                title += "\n    -";
                extra.insert(
                    "stack".into(),
                    frames.map_or(Value::Null, |f| f.into_iter().map(Value::from).collect()),
                );
            }
            sections.push(
                hist::Section {
                    title: Some(title),
                    labels,
                    slots: h.hist.slots.to_vec(),
                    count: h.hist.count,
                    total: h.hist.total,
                    extra,
                    ..Default::default()
                }
                .with_fine(e.fine.as_ref().map(|f| &f.slots[..]), args.hist.percentiles),
            );
        }
        Ok(sections)
    }

    fn error_note(&self, index: u32) -> Option<&'static str> {
        if let Some(note) = stacks::error_note(index) {
            return Some(note);
        }
        use types::futexctn_error as E;
        Some(match E(index) {
            E::ERR_HISTS_FULL => "waits not counted: the histograms' map was full",
            _ => return None,
        })
    }
}

impl Futexctn {
    /// The frames of a key's user stack, leaf first; None where the kernel
    /// could not take it (or it was evicted).
    fn frames(
        &self,
        skel: &SkelOf<'_, Self>,
        k: &types::futexctn_key,
    ) -> Result<Option<Vec<String>>> {
        let Some(addrs) = maps::read_stack(&skel.maps.stacks, k.stack_id)? else {
            return Ok(None);
        };
        let frames = self.symbolizer.borrow_mut().user(k.tgid, &addrs);
        Ok(Some(frames.iter().map(|f| f.label(false)).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse_as_libbpf_tools_takes_them() {
        let a = Args::try_parse_from([
            "futexctn",
            "-p",
            "123",
            "-t",
            "125",
            "-l",
            "0x8187bb8",
            "-T",
            "-m",
            "-s",
            "1",
            "10",
        ])
        .unwrap();
        assert_eq!(a.lock, Some(0x8187bb8));
        assert!(a.timestamp && a.milliseconds && a.summary && !a.all);
        assert_eq!(
            Args::try_parse_from(["futexctn", "-l", "8187BB8"])
                .unwrap()
                .lock,
            Some(0x8187bb8)
        );
        for bad in [
            &["futexctn", "-l", "0"][..],
            &["futexctn", "-l", "lock"],
            &["futexctn", "-l", ""],
            &["futexctn", "--perf-max-stack-depth", "0"],
            &["futexctn", "--perf-max-stack-depth", "128"],
            &["futexctn", "--stack-storage-size", "0"],
            &["futexctn", "0"],
        ] {
            assert!(Args::try_parse_from(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_calls_are_in_the_kernel_sides_order() {
        use types::futex_call as C;
        assert_eq!(CALLS[C::FUTEX_CALL_FUTEX.0 as usize], libc::SYS_futex);
        assert_eq!(CALLS[C::FUTEX_CALL_WAITV.0 as usize], libc::SYS_futex_waitv);
    }
}
