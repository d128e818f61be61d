//! bitesize: block I/O sizes as log2 histograms per process name,
//! aggregated in the kernel.

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupLongArgs, CommonArgs, HistogramArgs, IdList};
use common::kernel::disks;
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kinds::histogram::{self, Unit};
use common::output::{c_string, escape, hist};
use common::run::lifecycle::{self, Setup, Tool};
use serde_json::{Map, Value};

common::skeleton!("bitesize");
use skel::{types, BitesizeSkel, BitesizeSkelBuilder, OpenBitesizeSkel};

// SAFETY: repr(C) structs of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::size_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::hist {}
// SAFETY: as above.
unsafe impl plain::Plain for types::fine_hist {}

/// The kernel's comm is 15 bytes and a NUL.
const COMM_MAX: usize = 15;

const EXAMPLES: &str = "\
EXAMPLES:
    bitesize              # block I/O sizes per process name, at Ctrl-C
    bitesize 1 10         # print 1 second summaries, 10 times
    bitesize -T 1         # 1s summaries with timestamps
    bitesize -c fio       # only process names starting with fio
    bitesize -d sda       # only disk sda
    bitesize -p 181       # only I/O submitted by process 181
    bitesize --percentiles # p50, p90, p99, p99.9 and max per process
    bitesize --json 5 1 | jq .";

/// Summarize block device I/O size as a histogram per process name.
#[derive(Parser, Debug)]
#[command(name = "bitesize", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Include a timestamp on each output (HH:MM:SS)
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Only process names starting with this (at most 15 bytes)
    #[arg(short = 'c', long, value_name = "COMM", value_parser = comm)]
    comm: Option<String>,
    /// Trace this disk only (e.g. sda)
    #[arg(short = 'd', long, value_name = "DISK")]
    disk: Option<String>,
    /// Trace I/O submitted by these processes only (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    /// Summarize average, total and count too
    #[arg(short = 'e', long)]
    extension: bool,
    #[command(flatten)]
    hist: HistogramArgs,
    #[command(flatten)]
    common: CommonArgs,
}

fn comm(s: &str) -> Result<String, String> {
    match s.len() {
        0 => Err("the process name is empty".into()),
        n if n > COMM_MAX => Err(format!(
            "'{s}' is longer than a process name can be ({COMM_MAX} bytes)"
        )),
        _ => Ok(s.to_string()),
    }
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Bitesize>();

struct Bitesize {
    args: Args,
    targ_dev: Option<u32>,
    containers: histogram::Containers,
}

impl Tool for Bitesize {
    common::tool_types!(BitesizeSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let targ_dev = args.disk.as_deref().map(disks::resolve).transpose()?;
        Ok(Bitesize {
            args,
            targ_dev,
            containers: histogram::Containers::default(),
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            disk: self.targ_dev,
            ..Filters::processes(&self.args.pid, self.args.cgroup.path())
        }
    }

    fn configure(&mut self, open: &mut OpenBitesizeSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.fine = self.args.hist.fine();
        rodata.per_container = self.args.hist.per_container;
        if let Some(comm) = &self.args.comm {
            rodata.filter_comm = true;
            rodata.comm_len = comm.len() as u32;
            for (dst, src) in rodata.targ_comm.iter_mut().zip(comm.bytes()) {
                *dst = src as i8;
            }
        }
        common::choose_block_request_programs!(open.progs)?;
        Ok(())
    }

    fn histograms(&self) -> Option<histogram::Spec<'_>> {
        Some(histogram::Spec {
            args: &self.args.hist,
            json: self.args.common.json,
            what: "bitesize, block I/O size",
            metric: "bitesize_block_io_size",
            help: "Block I/O size, per submitting process name",
            unit: Unit::Kbytes,
            timestamp: self.args.timestamp,
            extension: self.args.extension,
            layout: histogram::Layout::Log2,
        })
    }

    fn sections(&self, skel: &BitesizeSkel<'_>, drain: bool) -> Result<Vec<hist::Section>> {
        let fine = self.args.hist.fine_map(&skel.maps.fine_hists);
        let entries: Vec<histogram::Entry<types::size_key, types::hist, types::fine_hist>> =
            histogram::read_maps(&skel.maps.hists, fine, drain, |k: &types::size_key| {
                (k.cgroup_id, k.comm)
            })?;
        Ok(entries
            .iter()
            .map(|e| {
                let (key, h) = (&e.key, &e.hist);
                let mut labels = Map::new();
                let title = if self.args.hist.per_container {
                    self.containers.label(key.cgroup_id, &mut labels)
                } else {
                    let comm = c_string(&key.comm);
                    labels.insert("comm".into(), Value::from(comm.as_str()));
                    format!("Process Name = {}", escape(comm.as_bytes()))
                };
                hist::Section {
                    title: Some(title),
                    labels,
                    slots: h.slots.to_vec(),
                    count: h.count,
                    total: h.total,
                    ..Default::default()
                }
                .with_fine(
                    e.fine.as_ref().map(|f| &f.slots[..]),
                    self.args.hist.percentiles,
                )
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_arguments_parse() {
        let ok = Args::try_parse_from(["bitesize", "-T", "-c", "fio", "2", "3"]).unwrap();
        assert_eq!(ok.comm.as_deref(), Some("fio"));
    }
}
