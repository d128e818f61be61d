//! tcptop: top TCP connections by throughput, per process, each interval;
//! bytes summed in the kernel where they move: the socket layer's
//! tracepoints where the kernel has them, else tcp_sendmsg/tcp_recvmsg.

mod info;

use anyhow::{bail, Result};
use clap::{Parser, ValueEnum};
use common::cli::{self, CgroupLongArgs, CommonArgs, ContainerArgs, FamilyArgs, IdList, TopArgs};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::event::{Cell, Column, Table};
use common::kinds::table::{self, Timed};
use common::output::c_bytes;
use common::output::net::{endpoint, ip_version, AF_INET6};
use common::run::lifecycle::{self, Setup, SkelOf, Tool, When};

common::skeleton!("tcptop");
use skel::{types, OpenTcptopProgs, OpenTcptopSkel, TcptopSkelBuilder};

// SAFETY: repr(C) structs of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::conn_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::conn_bytes {}

const EXAMPLES: &str = "\
EXAMPLES:
    tcptop                # trace TCP send/recv by host, every second
    tcptop -C             # don't clear the screen
    tcptop -p 181         # only process 181
    tcptop -s sent        # sort by bytes sent
    tcptop -r 5 5 3       # the top 5 rows, every 5 seconds, 3 times
    tcptop -4             # IPv4 only
    tcptop --cgroup /sys/fs/cgroup/system.slice   # only this cgroup v2
    tcptop --json | jq .";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Sort {
    /// Bytes sent and received
    All,
    Sent,
    Received,
}

/// Summarize TCP send and receive throughput by process and connection,
/// top-style, each interval.
#[derive(Parser, Debug)]
#[command(name = "tcptop", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Skip the summary line (time and load average)
    #[arg(short = 'S', long = "nosummary")]
    nosummary: bool,
    /// Only these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    /// Sort by
    #[arg(short = 's', long, value_enum, default_value_t = Sort::All)]
    sort: Sort,
    #[command(flatten)]
    family: FamilyArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    top: TopArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Tcptop>();

/// One process's bytes on one connection.
type Row = table::Entry<types::conn_key, types::conn_bytes>;

pub(crate) struct Tcptop {
    args: Args,
    cgroups: table::Cgroups,
    /// IPv4's table, then IPv6's.
    tables: [Table<Timed<Row>>; 2],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    Socket,
    Fexit { recv_args: u32 },
    Kprobe,
}

impl Tool for Tcptop {
    common::tool_types!(TcptopSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        Ok(Tcptop {
            tables: [
                table(args.common.json, 21, "LADDR", "RADDR")
                    .containers(args.containers.containers),
                table(args.common.json, 32, "LADDR6", "RADDR6")
                    .containers(args.containers.containers),
            ],
            cgroups: table::Cgroups::new(args.containers.containers),
            args,
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            family: self.args.family.family(),
            ..Filters::processes(&self.args.pid, self.args.cgroup.path())
        }
    }

    fn configure(&mut self, open: &mut OpenTcptopSkel<'_>, _: &Setup) -> Result<()> {
        choose_programs(&mut open.progs)?;
        Ok(())
    }

    fn interval_table(&self) -> Option<table::Spec<'_>> {
        Some(table::Spec::top(
            &self.args.top,
            self.args.common.json,
            !self.args.nosummary,
        ))
    }

    /// The bytes the kernel summed since the last report, drained.
    fn interval_rows<'s>(
        &'s mut self,
        skel: &SkelOf<'_, Self>,
        _: When,
    ) -> Result<Box<dyn table::Print + 's>> {
        let conns: Vec<(types::conn_key, Box<types::conn_bytes>)> =
            maps::read_as(&skel.maps.conns, true)?;
        let by = self.args.sort;
        let weight = move |b: &types::conn_bytes| match by {
            Sort::All => b.sent + b.received,
            Sort::Sent => b.sent,
            Sort::Received => b.received,
        };
        Ok(Box::new(table::Rows {
            rows: self.cgroups.entries(conns, |_, b| b.cgroup_id),
            order: Box::new(move |a: &Row, b: &Row| {
                weight(&b.value)
                    .cmp(&weight(&a.value))
                    .then_with(|| a.key.pid.cmp(&b.key.pid))
                    .then_with(|| a.key.flow.lport.cmp(&b.key.flow.lport))
            }),
            tables: &self.tables,
            // BCC's IPv6 table follows the IPv4 one.
            group: |r| usize::from(r.key.flow.family == AF_INET6),
            title: None,
        }))
    }

    fn error_note(&self, index: u32) -> Option<&'static str> {
        match types::tcptop_error(index) {
            types::tcptop_error::ERR_CONNS_FULL => {
                Some("bytes not counted: the connection table (10240 entries) was full")
            }
            _ => None,
        }
    }
}

/// The socket layer's tracepoints (6.3+), else fexit on tcp_sendmsg and
/// tcp_recvmsg (the program for tcp_recvmsg's form), else kprobes.
fn choose_programs(p: &mut OpenTcptopProgs) -> Result<Variant> {
    let recv_args = probe::function_args("tcp_recvmsg").filter(|n| [5, 6].contains(n));
    let mode = if probe::btf_tracepoint_exists("sock_send_length")
        && probe::btf_tracepoint_exists("sock_recv_length")
        && probe::pick(&[probe::Hook::TpBtf]).is_some()
    {
        Variant::Socket
    } else if let (Some(recv_args), true, true) = (
        recv_args,
        probe::fentry_target("tcp_sendmsg"),
        probe::fentry_target("tcp_recvmsg"),
    ) {
        Variant::Fexit { recv_args }
    } else if probe::kprobe_target("tcp_sendmsg") && probe::kprobe_target("tcp_recvmsg") {
        Variant::Kprobe
    } else {
        bail!(
            "this kernel has neither the sock:sock_send_length and sock_recv_length \
             tracepoints (Linux 6.3+) nor fentry or kprobes on tcp_sendmsg and tcp_recvmsg: \
             tcptop has nothing to count bytes at"
        );
    };
    probe::load_when(
        mode == Variant::Socket,
        [&mut p.tt_send_btf, &mut p.tt_recv_btf],
    );
    let fexit = matches!(mode, Variant::Fexit { .. });
    probe::load_when(fexit, [&mut p.tt_fexit_send]);
    probe::load_when(
        mode == Variant::Fexit { recv_args: 5 },
        [&mut p.tt_fexit_recv5],
    );
    probe::load_when(
        mode == Variant::Fexit { recv_args: 6 },
        [&mut p.tt_fexit_recv6],
    );
    probe::load_when(
        mode == Variant::Kprobe,
        [
            &mut p.tt_kprobe_send,
            &mut p.tt_kretprobe_send,
            &mut p.tt_kprobe_recv,
            &mut p.tt_kretprobe_recv,
        ],
    );
    Ok(mode)
}

/// BCC's columns: PID COMM LADDR RADDR RX_KB TX_KB (addresses with their
/// ports; IPv6 wider).
fn table(json: bool, width: usize, laddr: &'static str, raddr: &'static str) -> Table<Timed<Row>> {
    table::top_table::<Row>(json).columns([
        Column::new("PID", 7, "pid", |t| t.row.key.pid.into()),
        Column::new("COMM", 12, "comm", |t| {
            Cell::bytes(c_bytes(&t.row.value.comm))
        }),
        Column::json("ip", |t| {
            u32::from(ip_version(t.row.key.flow.family)).into()
        }),
        Column::new(laddr, width, "", |t| {
            let f = &t.row.key.flow;
            endpoint(f.family, &f.saddr, f.lport).into()
        }),
        Column::new(raddr, width, "", |t| {
            let f = &t.row.key.flow;
            endpoint(f.family, &f.daddr, f.dport).into()
        }),
        Column::json("saddr", |t| {
            let f = &t.row.key.flow;
            common::output::net::address(f.family, &f.saddr).into()
        }),
        Column::json("lport", |t| t.row.key.flow.lport.into()),
        Column::json("daddr", |t| {
            let f = &t.row.key.flow;
            common::output::net::address(f.family, &f.daddr).into()
        }),
        Column::json("dport", |t| t.row.key.flow.dport.into()),
        Column::right("RX_KB", 6, "rx_kb", |t| {
            (t.row.value.received / 1024).into()
        }),
        Column::right("TX_KB", 6, "tx_kb", |t| (t.row.value.sent / 1024).into()),
        Column::json("rx_bytes", |t| t.row.value.received.into()),
        Column::json("tx_bytes", |t| t.row.value.sent.into()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_bccs() {
        assert_eq!(
            table(false, 21, "LADDR", "RADDR").header(),
            format!(
                "{:<7} {:<12} {:<21} {:<21}  RX_KB  TX_KB",
                "PID", "COMM", "LADDR", "RADDR"
            )
        );
    }
}
