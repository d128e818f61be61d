//! tcpsynbl: the TCP listen backlog (connections waiting for accept()) at
//! each new connection, as log2 histograms per backlog limit, kept in the
//! kernel, from sock:inet_sock_set_state (no kprobe or fentry).

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupLongArgs, CommonArgs, FamilyArgs, HistogramArgs, PortList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kinds::histogram::{self, Unit};
use common::output::hist;
use common::run::lifecycle::{self, Setup, Tool};
use serde_json::{Map, Value};

common::skeleton!("tcpsynbl");
use skel::{types, OpenTcpsynblSkel, TcpsynblSkel, TcpsynblSkelBuilder};

// SAFETY: repr(C) structs of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::backlog_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::hist {}
// SAFETY: as above.
unsafe impl plain::Plain for types::fine_hist {}

const EXAMPLES: &str = "\
EXAMPLES:
    tcpsynbl              # summarize TCP SYN backlog as a histogram
    tcpsynbl 1 10         # print 1 second summaries, 10 times
    tcpsynbl -T 1         # 1s summaries with timestamps
    tcpsynbl -4           # trace IPv4 family only
    tcpsynbl -6           # trace IPv6 family only
    tcpsynbl -P 80,443    # only listeners on ports 80 and 443
    tcpsynbl --per-port   # a histogram per listening port too
    tcpsynbl --per-container --json 5 1 | jq .";

/// Summarize the TCP listen backlog as a histogram: how many connections
/// wait for accept() when each new one completes its handshake, per
/// backlog limit (listen()'s, capped by net.core.somaxconn).
#[derive(Parser, Debug)]
#[command(name = "tcpsynbl", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Include a timestamp on each output (HH:MM:SS)
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Only listeners on these local ports (comma-separated)
    #[arg(short = 'P', long = "port", value_name = "PORTS", value_parser = cli::port_list)]
    port: Option<PortList>,
    /// A histogram per listening port too
    #[arg(long)]
    per_port: bool,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    #[command(flatten)]
    family: FamilyArgs,
    #[command(flatten)]
    hist: HistogramArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Tcpsynbl>();

struct Tcpsynbl {
    args: Args,
    containers: histogram::Containers,
}

impl Tool for Tcpsynbl {
    common::tool_types!(TcpsynblSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        Ok(Tcpsynbl {
            args,
            containers: histogram::Containers::default(),
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            cgroup: self.args.cgroup.path(),
            lports: self.args.port.clone(),
            family: self.args.family.family(),
            ..Filters::default()
        }
    }

    fn configure(&mut self, open: &mut OpenTcpsynblSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.fine = self.args.hist.fine();
        rodata.per_container = self.args.hist.per_container;
        rodata.per_port = self.args.per_port;
        common::choose_state_programs!(open.progs)?;
        Ok(())
    }

    fn histograms(&self) -> Option<histogram::Spec<'_>> {
        Some(histogram::Spec {
            args: &self.args.hist,
            json: self.args.common.json,
            what: "tcpsynbl, TCP listen backlog",
            metric: "tcpsynbl_backlog",
            help: "Connections waiting for accept() on a TCP listener, at each new connection",
            unit: Unit::Backlog,
            timestamp: self.args.timestamp,
            extension: false,
            layout: histogram::Layout::Log2,
        })
    }

    fn sections(&self, skel: &TcpsynblSkel<'_>, drain: bool) -> Result<Vec<hist::Section>> {
        let fine = self.args.hist.fine_map(&skel.maps.fine_hists);
        let entries: Vec<histogram::Entry<types::backlog_key, types::hist, types::fine_hist>> =
            histogram::read_maps(&skel.maps.hists, fine, drain, |k: &types::backlog_key| {
                (k.cgroup_id, k.backlog_max, k.port)
            })?;
        Ok(entries
            .iter()
            .map(|e| {
                let (key, h) = (&e.key, &e.hist);
                let mut labels = Map::new();
                labels.insert("backlog_max".into(), Value::from(key.backlog_max));
                // BCC's heading.
                let mut title = format!("backlog_max = {}", key.backlog_max);
                if self.args.per_port {
                    labels.insert("port".into(), Value::from(key.port));
                    title += &format!(", port = {}", key.port);
                }
                if self.args.hist.per_container {
                    title = format!(
                        "{}  {title}",
                        self.containers.label(key.cgroup_id, &mut labels)
                    );
                }
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

    fn error_note(&self, index: u32) -> Option<&'static str> {
        match types::tcpsynbl_error(index) {
            types::tcpsynbl_error::ERR_HISTS_FULL => {
                Some("connections not counted: the histogram map (1024 backlog limits) was full")
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_arguments_parse() {
        let a = Args::try_parse_from(["tcpsynbl", "-T", "-6", "-P", "80,443", "1", "10"]).unwrap();
        assert!(a.timestamp && a.family.ipv6);
        assert_eq!(a.hist.interval.count, Some(10));
    }

    #[test]
    fn families_exclude_each_other() {
        assert!(Args::try_parse_from(["tcpsynbl", "-4", "-6"]).is_err());
    }
}
