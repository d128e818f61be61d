//! swapin: swap-ins by process each interval (BCC's and libbpf-tools'
//! swapin), from a kprobe on the kernel's swap read: no tracepoint marks a
//! swap-in, so where the kernel has no kprobes the tool says so and ends.

mod info;

use std::time::Duration;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupLongArgs, CommonArgs, ContainerArgs, EveryInterval, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::event::{Cell, Column, Table};
use common::kinds::table::{self, Timed};
use common::output::c_bytes;
use common::run::lifecycle::{self, Setup, SkelOf, Tool, When};
use common::run::schedule::Schedule;
use libbpf_rs::skel::Skel;
use libbpf_rs::Link;

common::skeleton!("swapin");
use skel::{types, OpenSwapinSkel, SwapinSkelBuilder};

// SAFETY: repr(C) structs of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::swapin_key {}

const EXAMPLES: &str = "\
EXAMPLES:
    swapin                # swap-ins by process, every second
    swapin 5 10           # every 5 seconds, 10 times
    swapin -i 5 -c 10     # the same, as libbpf-tools takes it
    swapin -T             # without the time above each table
    swapin -p 181         # only process 181
    swapin --containers   # by process and container
    swapin --json | jq .";

/// Count swap-ins by process each interval.
#[derive(Parser, Debug)]
#[command(name = "swapin", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Do not show the time (HH:MM:SS) above each table (BCC's -T)
    #[arg(short = 'T', long)]
    notime: bool,
    /// The interval in seconds (libbpf-tools' -i; as the first argument)
    #[arg(short = 'i', long = "interval", value_name = "SECONDS", value_parser = cli::seconds)]
    interval_option: Option<u64>,
    /// The number of outputs (libbpf-tools' -c; as the second argument)
    #[arg(short = 'c', long = "count", value_name = "COUNT", value_parser = cli::positive_u64)]
    count_option: Option<u64>,
    /// Only these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    #[command(flatten)]
    every: EveryInterval,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Swapin>();

/// The swap read functions, newest first.
const SWAP_READS: [&str; 2] = ["swap_read_folio", "swap_readpage"];

/// True where the kernel has a kprobe on its swap read: where swapin runs.
pub fn hooks_present() -> bool {
    SWAP_READS.into_iter().any(probe::kprobe_target)
}

type Row = table::Entry<types::swapin_key, u64>;

pub(crate) struct Swapin {
    args: Args,
    /// The swap read function this kernel has (configure).
    target: &'static str,
    cgroups: table::Cgroups,
    table: Table<Timed<Row>>,
}

impl Tool for Swapin {
    common::tool_types!(SwapinSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        Ok(Swapin {
            table: table(args.common.json).containers(args.containers.containers),
            cgroups: table::Cgroups::new(args.containers.containers),
            args,
            target: SWAP_READS[0],
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenSwapinSkel<'_>, _: &Setup) -> Result<()> {
        self.target = SWAP_READS
            .into_iter()
            .find(|f| probe::kprobe_target(f))
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "swapin needs a kprobe on swap_read_folio (swap_readpage before 6.9), \
                     and this kernel has {}: no tracepoint marks a swap-in",
                    if probe::features().kprobe {
                        "neither function"
                    } else {
                        "no kprobes"
                    }
                )
            })?;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.by_cgroup = self.args.containers.containers;
        Ok(())
    }

    fn hook_target(&self, program: &str) -> Option<String> {
        (program == "swap_read").then(|| self.target.into())
    }

    fn attach(&mut self, skel: &mut SkelOf<'_, Self>) -> Result<Vec<Link>> {
        let mut links = lifecycle::attach_all(skel.object())?;
        links.push(skel.progs.swap_read.attach_kprobe(false, self.target)?);
        Ok(links)
    }

    fn banner(&self) -> lifecycle::Banner {
        lifecycle::Banner::Note(Self::INFO.banner.into())
    }

    fn interval_table(&self) -> Option<table::Spec<'_>> {
        let a = &self.args;
        Some(table::Spec {
            json: a.common.json,
            heading: if a.notime {
                table::Heading::Nothing
            } else {
                table::Heading::Time
            },
            clear: false,
            max: usize::MAX,
            schedule: Schedule {
                interval: Some(Duration::from_secs(
                    a.interval_option.unwrap_or(a.every.interval),
                )),
                count: a.count_option.or(a.every.count),
                duration: None,
            },
            last_line: Some("Detaching..."),
            banner: None,
            metrics: None,
        })
    }

    /// This interval's swap-ins, drained; BCC's order (the fewest first).
    fn interval_rows<'s>(
        &'s mut self,
        skel: &SkelOf<'_, Self>,
        _: When,
    ) -> Result<Box<dyn table::Print + 's>> {
        let counts: Vec<(types::swapin_key, Box<u64>)> = maps::read_as(&skel.maps.counts, true)?;
        // The cgroup is in the key (the swapping task's).
        let rows: Vec<Row> = self.cgroups.entries(counts, |k, _| k.cgroup_id);
        Ok(Box::new(table::Rows::new(rows, &self.table, |a, b| {
            a.value.cmp(&b.value).then(a.key.pid.cmp(&b.key.pid))
        })))
    }
}

/// BCC's `COMM PID COUNT`.
fn table(json: bool) -> Table<Timed<Row>> {
    table::top_table::<Row>(json).columns([
        Column::new("COMM", 16, "comm", |t| {
            Cell::bytes(c_bytes(&t.row.key.comm))
        }),
        Column::new("PID", 6, "pid", |t| t.row.key.pid.into()),
        Column::new("COUNT", 0, "count", |t| t.row.value.into()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_bccs() {
        assert_eq!(table(false).header(), "COMM             PID    COUNT");
    }

    #[test]
    fn options_parse_as_bcc_and_libbpf_tools_take_them() {
        let a = Args::try_parse_from(["swapin", "-T", "5", "10"]).unwrap();
        assert!(a.notime);
        assert_eq!((a.every.interval, a.every.count), (5, Some(10)));
        let a = Args::try_parse_from(["swapin", "-i", "5", "-c", "10", "-p", "3"]).unwrap();
        assert_eq!((a.interval_option, a.count_option), (Some(5), Some(10)));
        for bad in [
            &["swapin", "0"][..],
            &["swapin", "-i", "0"],
            &["swapin", "-c", "0"],
            &["swapin", "1", "2", "3"],
        ] {
            assert!(Args::try_parse_from(bad).is_err(), "{bad:?}");
        }
    }
}
