//! compactsnoop: each memory compaction of a zone, in BCC's layout: who
//! ran it (direct compaction in an allocating task, kcompactd, a write to
//! /proc/sys/vm/compact_memory), the node and zone, the order asked for,
//! sync or async, how long it took and how it ended.

mod info;

use std::collections::HashMap;
use std::io::{self, Write};

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::{enums, maps, probe};
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::Out;
use common::run::lifecycle::{self, Schedule, Setup, Tool};
use common::sym::{trim_tracing_frames, Symbolizer};

common::skeleton!("compactsnoop");
use skel::{types, CompactsnoopSkelBuilder, OpenCompactsnoopSkel};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    compactsnoop          # trace every zone compaction
    compactsnoop -T       # include timestamps
    compactsnoop -d 10    # trace for 10 seconds only
    compactsnoop -K       # output kernel stack trace
    compactsnoop -e       # show extended fields (watermarks, free pages)
    compactsnoop -p 181   # only process 181
    compactsnoop --containers  # with each task's container
    compactsnoop --json | jq .";

/// Trace memory compaction: each zone compacted, by whom, for which
/// order, how long, with what result.
#[derive(Parser, Debug)]
#[command(name = "compactsnoop", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Include a TIME(s) column: seconds since the first compaction shown
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Only these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Trace for this many seconds
    #[arg(short = 'd', long, value_name = "SECONDS", value_parser = cli::seconds)]
    duration: Option<u64>,
    /// Print the kernel stack of each compaction
    #[arg(short = 'K', long)]
    kernel_stack: bool,
    /// Show the zone's watermarks and free pages (and the fragmentation
    /// index where kprobes are)
    #[arg(short = 'e', long = "extended_fields", alias = "extended-fields")]
    extended: bool,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Compactsnoop>();

pub(crate) struct Compactsnoop {
    args: Args,
    event: Record<types::event>,
    table: Table<Compactsnoop>,
    /// Zones by their first page frame, from /proc/zoneinfo: (node, name).
    zones: HashMap<u64, (i64, String)>,
    /// The kernel's compact_result names.
    results: Vec<(i64, String)>,
    /// -e where fragmentation_index() takes a kretprobe.
    fragindex: bool,
    symbolizer: Symbolizer,
    kstack: Vec<String>,
}

impl Tool for Compactsnoop {
    common::tool_types!(CompactsnoopSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Compactsnoop {
            table: table(&args).containers(containers),
            args,
            event: Record::new(containers),
            zones: zoneinfo(&std::fs::read_to_string("/proc/zoneinfo").unwrap_or_default()),
            results: enums::named("compact_result"),
            fragindex: false,
            symbolizer: Symbolizer::new(),
            kstack: Vec::new(),
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenCompactsnoopSkel<'_>, _: &Setup) -> Result<()> {
        if !probe::tracepoint_exists("compaction", "mm_compaction_begin") {
            anyhow::bail!(
                "this kernel has no compaction:mm_compaction_begin tracepoint \
                 (CONFIG_COMPACTION off, or tracefs missing)"
            );
        }
        let hook = probe::tracepoint_hook("compaction", "mm_compaction_suitable", "4.6")?;
        let p = &mut open.progs;
        probe::load_when(hook == probe::Hook::TpBtf, [&mut p.suitable_btf]);
        probe::load_when(hook != probe::Hook::TpBtf, [&mut p.suitable_raw]);
        self.fragindex = self.args.extended && probe::kprobe_target("fragmentation_index");
        probe::load_when(self.fragindex, [&mut p.fragindex_ret]);
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.extended = self.args.extended;
        rodata.kstack_bytes = if self.args.kernel_stack {
            types::compact_limits::COMPACT_STACK_DEPTH.0 * 8
        } else {
            0
        };
        Ok(())
    }

    fn degraded(&self) -> Option<String> {
        (self.args.extended && !self.fragindex)
            .then(|| "no kprobe on fragmentation_index: FRAGIDX is not known (-)".into())
    }

    common::event_kind!(table);

    fn schedule(&self) -> Schedule {
        Schedule::lasting(self.args.duration)
    }

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        self.event.read(data);
        if self.args.kernel_stack {
            let e = &*self.event;
            let addrs = &e.kstack[..(e.kstack_frames as usize).min(e.kstack.len())];
            let frames = self.symbolizer.kernel(addrs);
            self.kstack = trim_tracing_frames(&frames)
                .iter()
                .map(|f| f.label(true))
                .collect();
        }
        self.table.row(out, self)?;
        if self.args.kernel_stack && !self.args.common.json {
            for f in &self.kstack {
                writeln!(out, "\t{f}")?;
            }
            writeln!(out)?;
        }
        Ok(())
    }
}

common::stamped_by_record!(Compactsnoop);

impl Compactsnoop {
    /// The node and zone: the suitability check's, else /proc/zoneinfo's
    /// zone that starts at the compaction's first page frame.
    fn node_zone(&self) -> (Option<i64>, Option<String>) {
        let e = &*self.event;
        if e.nid >= 0 && e.zone_name[0] != 0 {
            let name = common::output::c_string(&e.zone_name);
            return (Some(e.nid.into()), Some(zone_label(&name)));
        }
        match self.zones.get(&e.zone_start) {
            Some((nid, name)) => (Some(*nid), Some(name.clone())),
            None => (None, None),
        }
    }

    fn status(&self) -> String {
        let s = self.event.status;
        self.results
            .iter()
            .find(|(v, _)| *v == i64::from(s))
            .and_then(|(_, n)| n.strip_prefix("COMPACT_"))
            .map_or_else(|| s.to_string(), str::to_lowercase)
    }

    fn extended(&self, v: u64) -> Cell<'static> {
        if self.event.order < 0 {
            Cell::Null
        } else {
            v.into()
        }
    }
}

/// A zone's name as BCC shows it: `ZONE_DMA32`.
fn zone_label(name: &str) -> String {
    format!("ZONE_{}", name.to_uppercase())
}

/// Zones by their first page frame, from /proc/zoneinfo's `Node N, zone
/// NAME` and `start_pfn:` lines: (node, ZONE_NAME as BCC shows it).
fn zoneinfo(text: &str) -> HashMap<u64, (i64, String)> {
    let mut zones = HashMap::new();
    let mut current: Option<(i64, String)> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("Node ") {
            current = rest
                .split_once(", zone")
                .and_then(|(n, z)| Some((n.trim().parse().ok()?, zone_label(z.trim()))));
        } else if let Some(pfn) = line.trim().strip_prefix("start_pfn:") {
            if let (Some(zone), Ok(pfn)) = (&current, pfn.trim().parse::<u64>()) {
                zones.insert(pfn, zone.clone());
            }
        }
    }
    zones
}

/// BCC's `COMM PID NODE ZONE ORDER MODE [FRAGIDX MIN LOW HIGH FREE] LAT(ms)
/// STATUS` (TIME(s) first with -T).
fn table(args: &Args) -> Table<Compactsnoop> {
    let ext = args.extended;
    Table::<Compactsnoop>::new(args.common.json)
        .column(args.timestamp, columns::since_first::<Compactsnoop, 9>(14))
        .columns([
            columns::ts(),
            columns::comm("COMM", 14),
            columns::pid(6),
            columns::tid(0).json_only(),
            columns::cgroup_id(),
            Column::new("NODE", 4, "node", |t: &Compactsnoop| {
                t.node_zone().0.map_or(Cell::Null, Cell::from)
            }),
            Column::new("ZONE", 12, "zone", |t: &Compactsnoop| {
                t.node_zone().1.map_or(Cell::Null, Cell::from)
            }),
            Column::new("ORDER", 5, "order", |t: &Compactsnoop| {
                i64::from(t.event.order).into()
            }),
            Column::new("MODE", 7, "mode", |t: &Compactsnoop| {
                if t.event.sync != 0 { "SYNC" } else { "ASYNC" }.into()
            }),
        ])
        .column(
            ext,
            Column::new("FRAGIDX", 8, "fragindex", |t: &Compactsnoop| {
                let f = t.event.fragindex;
                if f as u32 == types::compact_limits::FRAG_UNKNOWN.0 {
                    Cell::Null
                } else {
                    Cell::Float(f64::from(f) / 1000.0, 3)
                }
            })
            .optional(),
        )
        .column(
            ext,
            Column::new("MIN", 8, "min_pages", |t: &Compactsnoop| {
                t.extended(t.event.min)
            })
            .optional(),
        )
        .column(
            ext,
            Column::new("LOW", 8, "low_pages", |t: &Compactsnoop| {
                t.extended(t.event.low)
            })
            .optional(),
        )
        .column(
            ext,
            Column::new("HIGH", 8, "high_pages", |t: &Compactsnoop| {
                t.extended(t.event.high)
            })
            .optional(),
        )
        .column(
            ext,
            Column::new("FREE", 8, "free_pages", |t: &Compactsnoop| {
                t.extended(t.event.free)
            })
            .optional(),
        )
        .columns([
            Column::right("LAT(ms)", 9, "", |t: &Compactsnoop| {
                Cell::Float(t.event.latency_ns as f64 / 1e6, 3)
            }),
            Column::json("latency_ns", |t: &Compactsnoop| t.event.latency_ns.into()),
            Column::right("STATUS", 16, "status", |t: &Compactsnoop| t.status().into()),
            Column::json("kernel_stack", |t: &Compactsnoop| {
                Cell::frames(t.args.kernel_stack, &t.kstack)
            })
            .optional(),
        ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_bccs() {
        let h = |args: &[&str]| table(&Args::try_parse_from(args).unwrap()).header();
        assert_eq!(
            h(&["compactsnoop"]),
            "COMM           PID    NODE ZONE         ORDER MODE      LAT(ms)           STATUS"
        );
        assert_eq!(
            h(&["compactsnoop", "-T", "-e"]),
            "TIME(s)        COMM           PID    NODE ZONE         ORDER MODE    FRAGIDX  \
             MIN      LOW      HIGH     FREE       LAT(ms)           STATUS"
        );
    }

    #[test]
    fn zones_are_found_by_their_first_frame() {
        let z = zoneinfo(
            "Node 0, zone      DMA\n  pages free     3840\n  start_pfn:           1\n\
             Node 0, zone    DMA32\n  start_pfn:           4096\n\
             Node 1, zone   Normal\n  start_pfn:           1048576\n",
        );
        assert_eq!(z[&1], (0, "ZONE_DMA".into()));
        assert_eq!(z[&4096], (0, "ZONE_DMA32".into()));
        assert_eq!(z[&1048576], (1, "ZONE_NORMAL".into()));
    }

    #[test]
    fn options_parse_as_bcc_takes_them() {
        let a =
            Args::try_parse_from(["compactsnoop", "-T", "-K", "-e", "-p", "3", "-d", "5"]).unwrap();
        assert!(a.timestamp && a.kernel_stack && a.extended && a.duration == Some(5));
        assert!(
            Args::try_parse_from(["compactsnoop", "--extended_fields"])
                .unwrap()
                .extended
        );
        assert!(Args::try_parse_from(["compactsnoop", "-d", "0"]).is_err());
        assert!(Args::try_parse_from(["compactsnoop", "5"]).is_err());
    }
}
