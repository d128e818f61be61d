//! llcstat: last-level cache references, misses and hit rate by process
//! (or thread) and CPU, sampled from the hardware cache counters (BCC's and
//! libbpf-tools' llcstat). Where the machine has no PMU that counts them (a
//! virtual machine, this project's CI), it says so in one line and ends.

mod info;

use std::cmp::Ordering;
use std::io::{self, Write};

use anyhow::{anyhow, Result};
use clap::Parser;
use common::cli::{self, CgroupLongArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::perf::{self, Counter, Rate, Sampler};
use common::kinds::event::{Cell, Column, Table};
use common::kinds::table::{self, Timed};
use common::output::c_bytes;
use common::run::lifecycle::{self, Banner, Schedule, Setup, SkelOf, Tool, When};
use libbpf_rs::Link;
use std::os::fd::AsFd;

common::skeleton!("llcstat");
use skel::{types, LlcstatSkelBuilder, OpenLlcstatSkel};

// SAFETY: repr(C) structs of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::llc_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::llc_counts {}

const EXAMPLES: &str = "\
EXAMPLES:
    llcstat               # cache references and misses for 10 seconds
    llcstat 20            # for 20 seconds (BCC's form)
    llcstat -d 20         # the same, as libbpf-tools takes it
    llcstat -c 1000       # a sample every 1000 events (fewer, cheaper)
    llcstat -t            # by thread
    llcstat -p 181        # only process 181
    llcstat --json | jq .";

/// The stand-in where there is no PMU, for tests: software events in place
/// of the cache's (the output says so).
const SOFTWARE_ENV: &str = "BPFTOOLS_LLCSTAT_SOFTWARE";

/// Summarize last-level cache references and misses by process and CPU.
#[derive(Parser, Debug)]
#[command(name = "llcstat", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Sample one in this many cache events
    #[arg(short = 'c', long = "sample_period", alias = "sample-period", value_name = "N",
          default_value_t = 100, value_parser = cli::positive_u64)]
    sample_period: u64,
    /// Summarize by thread (TID column) as well as process
    #[arg(short = 't', long)]
    tid: bool,
    /// How long to count, in seconds (libbpf-tools' -d; BCC's positional)
    #[arg(short = 'd', long = "duration", value_name = "SECONDS", value_parser = cli::seconds)]
    duration_option: Option<u64>,
    /// How long to count, in seconds
    #[arg(value_parser = cli::seconds, default_value_t = 10)]
    duration: u64,
    /// Only these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Llcstat>();

/// The counters llcstat samples: the cache's, or (for tests, where asked)
/// software events standing in.
fn counters() -> (Counter, Counter) {
    if std::env::var_os(SOFTWARE_ENV).is_some() {
        (Counter::CpuClock, Counter::PageFaults)
    } else {
        (Counter::CacheReferences, Counter::CacheMisses)
    }
}

/// True where this machine counts last-level cache references and misses:
/// where llcstat runs.
pub fn hooks_present() -> bool {
    perf::unavailable(Counter::CacheReferences).is_none()
        && perf::unavailable(Counter::CacheMisses).is_none()
}

type Row = table::Entry<types::llc_key, types::llc_counts>;

pub(crate) struct Llcstat {
    args: Args,
    rate: Rate,
    cgroups: table::Cgroups,
    table: Table<Timed<Row>>,
    samplers: Vec<Sampler>,
}

impl Tool for Llcstat {
    common::tool_types!(LlcstatSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        Ok(Llcstat {
            table: table(args.common.json, args.tid).containers(args.containers.containers),
            cgroups: table::Cgroups::new(args.containers.containers),
            rate: Rate::Period(args.sample_period),
            args,
            samplers: Vec::new(),
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenLlcstatSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.per_thread = self.args.tid;
        rodata.by_cgroup = self.args.containers.containers;
        Ok(())
    }

    fn hook_notes(&self) -> Vec<String> {
        let (refs, misses) = counters();
        vec![self.rate.hook(refs, None), self.rate.hook(misses, None)]
    }

    /// The events opened only now: a dry run loads and checks the
    /// programs on a machine without a PMU too.
    fn attach(&mut self, skel: &mut SkelOf<'_, Self>) -> Result<Vec<Link>> {
        let (refs, misses) = counters();
        if refs.hardware() {
            for c in [refs, misses] {
                if let Some(e) = perf::unavailable(c) {
                    return Err(anyhow!(
                        "llcstat needs the hardware {} counter, and this machine has no PMU that \
                         counts it ({e}; a virtual machine often has none)",
                        c.name()
                    ));
                }
            }
        } else {
            common::note!(
                "{SOFTWARE_ENV}: counting {} and {} in place of cache references and misses",
                refs.name(),
                misses.name()
            );
        }
        let progs = &skel.progs;
        for (c, prog) in [(refs, &progs.on_reference), (misses, &progs.on_miss)] {
            self.samplers
                .push(Sampler::start(c, self.rate, None, prog.as_fd())?);
        }
        Ok(Vec::new())
    }

    fn banner(&self) -> Banner {
        Banner::Note(format!(
            "Running for {} seconds or Hit Ctrl-C to end.",
            self.seconds()
        ))
    }

    fn idle(&mut self) -> bool {
        for s in &mut self.samplers {
            s.watch(self.args.common.verbose);
        }
        false
    }

    fn detached(&mut self) {
        // One cut for both counters.
        for s in &mut self.samplers {
            s.stop();
        }
    }

    fn interval_table(&self) -> Option<table::Spec<'_>> {
        Some(table::Spec {
            json: self.args.common.json,
            heading: table::Heading::Nothing,
            clear: false,
            max: usize::MAX,
            schedule: Schedule::lasting(Some(self.seconds())),
            last_line: None,
            banner: None,
            metrics: None,
        })
    }

    /// The run's counts, the most referenced first, and BCC's totals.
    fn interval_rows<'s>(
        &'s mut self,
        skel: &SkelOf<'_, Self>,
        _: When,
    ) -> Result<Box<dyn table::Print + 's>> {
        let counts: Vec<(types::llc_key, Box<types::llc_counts>)> =
            maps::read_as(&skel.maps.counts, true)?;
        let rows: Vec<Row> = self.cgroups.entries(counts, |k, _| k.cgroup_id);
        let refs = rows.iter().map(|r| r.value.references).sum();
        let misses = rows.iter().map(|r| r.value.misses).sum();
        Ok(Box::new(WithTotals {
            rows: table::Rows::new(rows, &self.table, order),
            refs,
            misses,
        }))
    }
}

impl Llcstat {
    fn seconds(&self) -> u64 {
        self.args.duration_option.unwrap_or(self.args.duration)
    }
}

fn order(a: &Row, b: &Row) -> Ordering {
    (b.value.references + b.value.misses)
        .cmp(&(a.value.references + a.value.misses))
        .then(a.key.pid.cmp(&b.key.pid))
        .then(a.key.tid.cmp(&b.key.tid))
        .then(a.key.cpu.cmp(&b.key.cpu))
}

/// Hits as a share of references: misses beyond references (the two
/// counters are sampled apart) count as none hit.
fn hit_percent(refs: u64, misses: u64) -> f64 {
    if refs == 0 {
        return 0.0;
    }
    refs.saturating_sub(misses) as f64 * 100.0 / refs as f64
}

/// The rows, then BCC's totals line (text only).
struct WithTotals<'t> {
    rows: table::Rows<'t, Row>,
    refs: u64,
    misses: u64,
}

impl table::Print for WithTotals<'_> {
    fn print(
        self: Box<Self>,
        out: &mut dyn Write,
        time: &str,
        max: usize,
        headers: bool,
    ) -> io::Result<()> {
        let WithTotals { rows, refs, misses } = *self;
        Box::new(rows).print(out, time, max, headers)?;
        if headers {
            writeln!(
                out,
                "\nTotal References: {refs} Total Misses: {misses} Hit Rate: {:.2}%",
                hit_percent(refs, misses)
            )?;
        }
        Ok(())
    }

    fn title(&self) -> Option<&str> {
        None
    }
}

/// BCC's `PID NAME CPU REFERENCE MISS HIT%` (`PID TID NAME …` with -t).
fn table(json: bool, tid: bool) -> Table<Timed<Row>> {
    table::top_table::<Row>(json)
        .column(true, Column::new("PID", 8, "pid", |t| t.row.key.pid.into()))
        .column(tid, Column::new("TID", 8, "tid", |t| t.row.key.tid.into()))
        .columns([
            Column::new("NAME", 16, "comm", |t| {
                Cell::bytes(c_bytes(&t.row.key.comm))
            }),
            Column::new("CPU", 4, "cpu", |t| t.row.key.cpu.into()),
            Column::right("REFERENCE", 12, "references", |t| {
                t.row.value.references.into()
            }),
            Column::right("MISS", 12, "misses", |t| t.row.value.misses.into()),
            Column::right("HIT%", 7, "", |t| {
                let v = &t.row.value;
                format!("{:.2}%", hit_percent(v.references, v.misses)).into()
            }),
            Column::json("hit_percent", |t| {
                let v = &t.row.value;
                Cell::Float(hit_percent(v.references, v.misses), 2)
            }),
        ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_bccs() {
        assert_eq!(
            table(false, false).header(),
            "PID      NAME             CPU     REFERENCE         MISS    HIT%"
        );
        assert_eq!(
            table(false, true).header(),
            "PID      TID      NAME             CPU     REFERENCE         MISS    HIT%"
        );
    }

    #[test]
    fn hit_rate_never_goes_below_nothing() {
        assert_eq!(hit_percent(0, 5), 0.0);
        assert_eq!(hit_percent(200, 50), 75.0);
        assert_eq!(hit_percent(100, 300), 0.0);
    }

    #[test]
    fn options_parse_as_bcc_and_libbpf_tools_take_them() {
        let a = Args::try_parse_from(["llcstat", "-c", "1000", "-t", "20"]).unwrap();
        assert_eq!((a.sample_period, a.tid, a.duration), (1000, true, 20));
        let a = Args::try_parse_from(["llcstat", "--sample_period", "7", "-d", "3"]).unwrap();
        assert_eq!((a.sample_period, a.duration_option), (7, Some(3)));
        for bad in [
            &["llcstat", "0"][..],
            &["llcstat", "-c", "0"],
            &["llcstat", "-d", "0"],
            &["llcstat", "1", "2"],
        ] {
            assert!(Args::try_parse_from(bad).is_err(), "{bad:?}");
        }
    }
}
