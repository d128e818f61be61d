//! tcprtt: TCP smoothed round trip times as log2 histograms, kept in the
//! kernel, from the tcp:tcp_probe tracepoint (no kprobe or fentry).

mod info;

use std::net::IpAddr;
use std::time::Duration;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupLongArgs, CommonArgs, FamilyArgs, HistogramArgs, PortList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::histogram::{self, Unit};
use common::output::hist;
use common::output::net::{self, address};
use common::run::lifecycle::{self, Schedule, Setup, Tool};
use libbpf_rs::skel::OpenSkel;
use serde_json::{Map, Value};

common::skeleton!("tcprtt");
use skel::{types, OpenTcprttSkel, TcprttSkel, TcprttSkelBuilder};

// SAFETY: repr(C) structs of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::rtt_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::hist {}
// SAFETY: as above.
unsafe impl plain::Plain for types::fine_hist {}

const EXAMPLES: &str = "\
EXAMPLES:
    tcprtt                # summarize TCP RTT, print at Ctrl-C
    tcprtt -i 1 -d 10     # print 1 second summaries, for 10 seconds
    tcprtt -m -T          # milliseconds, with a time on each summary
    tcprtt -p 80          # only local port 80
    tcprtt -P 80          # only remote port 80
    tcprtt -a 10.0.0.1    # only local address 10.0.0.1
    tcprtt -A 10.0.0.2    # only remote address 10.0.0.2
    tcprtt -b             # a histogram per local address
    tcprtt -B -e          # per remote address, with the average
    tcprtt --percentiles  # p50, p90, p99, p99.9 and max
    tcprtt --json | jq .";

/// Summarize TCP round trip times (the kernel's smoothed RTT, at each
/// segment received) as histograms.
#[derive(Parser, Debug)]
#[command(name = "tcprtt", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Summary interval, in seconds (default: one summary, at the end)
    #[arg(short = 'i', long = "interval", value_name = "SECONDS", value_parser = cli::seconds)]
    every: Option<u64>,
    /// Total duration of the trace, in seconds
    #[arg(short = 'd', long, value_parser = cli::seconds)]
    duration: Option<u64>,
    /// Include a timestamp on each summary (HH:MM:SS)
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Millisecond histograms
    #[arg(short = 'm', long)]
    milliseconds: bool,
    /// Only these local ports (comma-separated)
    #[arg(short = 'p', long = "lport", value_name = "LPORT", value_parser = cli::port_list)]
    lport: Option<PortList>,
    /// Only these remote ports (comma-separated)
    #[arg(short = 'P', long = "rport", value_name = "RPORT", value_parser = cli::port_list)]
    rport: Option<PortList>,
    /// Only this local address (IPv4 or IPv6)
    #[arg(short = 'a', long)]
    laddr: Option<IpAddr>,
    /// Only this remote address (IPv4 or IPv6)
    #[arg(short = 'A', long)]
    raddr: Option<IpAddr>,
    /// A histogram per local address
    #[arg(short = 'b', long = "byladdr", conflicts_with = "byraddr")]
    byladdr: bool,
    /// A histogram per remote address
    #[arg(short = 'B', long = "byraddr")]
    byraddr: bool,
    /// Show each histogram's average
    #[arg(short = 'e', long = "extension")]
    extension: bool,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    #[command(flatten)]
    family: FamilyArgs,
    #[command(flatten)]
    hist: HistogramArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Tcprtt>();

struct Tcprtt {
    args: Args,
    containers: histogram::Containers,
}

impl Tool for Tcprtt {
    common::tool_types!(TcprttSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        if args.every.is_some() && args.hist.interval.interval.is_some() {
            return Err(common::usage::usage(
                "give the interval once: -i SECONDS, or the positional INTERVAL",
            ));
        }
        let addrs = [("-a/--laddr", args.laddr), ("-A/--raddr", args.raddr)];
        args.family.check_addresses(&addrs)?;
        Ok(Tcprtt {
            args,
            containers: histogram::Containers::default(),
        })
    }

    fn filters(&self) -> Filters {
        let a = &self.args;
        Filters {
            cgroup: self.args.cgroup.path(),
            lports: a.lport.clone(),
            dports: a.rport.clone(),
            family: a.family.family(),
            ..Filters::default()
        }
    }

    fn configure(&mut self, open: &mut OpenTcprttSkel<'_>, _: &Setup) -> Result<()> {
        let a = &self.args;
        probe::btf_tracepoint_sections(open.open_object_mut(), "tcp", "tcp_probe", "4.16")?;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.fine = a.hist.fine();
        rodata.per_container = a.hist.per_container;
        rodata.in_ms = a.milliseconds;
        rodata.key_by = if a.byladdr {
            1
        } else if a.byraddr {
            2
        } else {
            0
        };
        if let Some(addr) = &a.laddr {
            (rodata.laddr_family, rodata.laddr) = net::to_bytes(addr);
        }
        if let Some(addr) = &a.raddr {
            (rodata.raddr_family, rodata.raddr) = net::to_bytes(addr);
        }
        Ok(())
    }

    fn schedule(&self) -> Schedule {
        let every = self.args.every.or(self.args.hist.interval.interval);
        Schedule {
            interval: every.map(Duration::from_secs),
            count: self.args.hist.interval.count,
            duration: self.args.duration.map(Duration::from_secs),
        }
    }

    fn histograms(&self) -> Option<histogram::Spec<'_>> {
        Some(histogram::Spec {
            args: &self.args.hist,
            json: self.args.common.json,
            what: "tcprtt, TCP smoothed round trip time",
            metric: "tcprtt_srtt",
            help: "TCP smoothed round trip time, at each segment received",
            unit: if self.args.milliseconds {
                Unit::Msecs
            } else {
                Unit::Usecs
            },
            timestamp: self.args.timestamp,
            extension: false,
            layout: histogram::Layout::Log2,
        })
    }

    fn sections(&self, skel: &TcprttSkel<'_>, drain: bool) -> Result<Vec<hist::Section>> {
        let fine = self.args.hist.fine_map(&skel.maps.fine_hists);
        let entries: Vec<histogram::Entry<types::rtt_key, types::hist, types::fine_hist>> =
            histogram::read_maps(&skel.maps.hists, fine, drain, |k: &types::rtt_key| {
                (k.cgroup_id, k.family, k.addr)
            })?;
        let (title, label) = if self.args.byladdr {
            ("Local Address", "laddr")
        } else if self.args.byraddr {
            ("Remote Address", "raddr")
        } else {
            ("All Addresses", "")
        };
        Ok(entries
            .iter()
            .map(|e| {
                let (key, h) = (&e.key, &e.hist);
                let mut labels = Map::new();
                let name = if label.is_empty() {
                    "******".to_string()
                } else {
                    let a = address(key.family, &key.addr);
                    labels.insert(label.into(), Value::from(a.as_str()));
                    a
                };
                let mut heading = format!("{title} = {name}");
                if self.args.hist.per_container {
                    heading = format!(
                        "{}  {heading}",
                        self.containers.label(key.cgroup_id, &mut labels)
                    );
                }
                if self.args.extension {
                    heading += &format!(" [AVG {}]", h.total.checked_div(h.count).unwrap_or(0));
                }
                hist::Section {
                    title: Some(heading),
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
        match types::tcprtt_error(index) {
            types::tcprtt_error::ERR_HISTS_FULL => {
                Some("segments not counted: the histogram map (4096 addresses) was full")
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
        let a = Args::try_parse_from(["tcprtt", "-A", "::1", "-i", "1", "-d", "3"]).unwrap();
        assert_eq!(net::to_bytes(&a.raddr.unwrap()).0, net::AF_INET6);
    }
}
