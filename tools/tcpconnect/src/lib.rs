//! tcpconnect: active TCP connections: who connected to what. From fexit
//! or kprobes on tcp_v4_connect/tcp_v6_connect where the kernel offers
//! them, else from the state change that connect() makes in the caller.

mod info;

use std::io::Write;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupLongArgs, CommonArgs, ContainerArgs, FamilyArgs, IdList, PortList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, Hook};
use common::kernel::tcp;
use common::kinds::event::{columns, Column, Record, Table};
use common::output::net::{address, ip_version, AF_INET};
use common::output::Out;
use common::run::lifecycle::{self, Banner, Setup, Tool, When};
use common::usage::usage;

common::skeleton!("tcpconnect");
use skel::{types, OpenTcpconnectProgs, OpenTcpconnectSkel, TcpconnectSkel, TcpconnectSkelBuilder};

common::event_record!(types::event, types::task_header);
// SAFETY: a repr(C) struct of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::count_key {}

const FUNCTIONS: [&str; 2] = ["tcp_v4_connect", "tcp_v6_connect"];

const EXAMPLES: &str = "\
EXAMPLES:
    tcpconnect            # trace all TCP connect()s
    tcpconnect -t         # include a timestamp column
    tcpconnect -p 181     # only connects of process 181
    tcpconnect -P 80      # only connects to port 80
    tcpconnect -P 80,81   # only connects to ports 80 and 81
    tcpconnect -4         # IPv4 only
    tcpconnect -L         # include the local port
    tcpconnect -U         # include a UID column
    tcpconnect -u 1000    # only connects by UID 1000
    tcpconnect -c         # count connects per source and destination
    tcpconnect --cgroup /sys/fs/cgroup/system.slice  # only this cgroup v2
    tcpconnect --json | jq .";

/// Trace TCP active connections (connect()): the process, and the source
/// and destination of each.
#[derive(Parser, Debug)]
#[command(name = "tcpconnect", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Include a TIME(s) column: seconds since the first connect shown
    #[arg(short = 't', long)]
    timestamp: bool,
    /// Only connects by these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Only connects to these destination ports (comma-separated)
    #[arg(short = 'P', long, value_name = "PORTS", value_parser = cli::port_list)]
    port: Option<PortList>,
    /// Include an LPORT column (libbpf-tools' -s)
    #[arg(short = 'L', long, visible_alias = "source-port", short_alias = 's')]
    lport: bool,
    /// Include a UID column
    #[arg(short = 'U', long = "print-uid")]
    print_uid: bool,
    /// Only connects by this user (a uid or a user name)
    #[arg(short = 'u', long, value_parser = cli::uid)]
    uid: Option<u32>,
    /// Count connects per source and destination; print at the end
    #[arg(short = 'c', long, conflicts_with = "containers")]
    count: bool,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    #[command(flatten)]
    family: FamilyArgs,
    /// Not supported: BCC's -d reads DNS answers with kprobes on UDP
    /// receive functions and Python libraries
    #[arg(short = 'd', long, hide = true)]
    dns: bool,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Tcpconnect>();

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    Fexit,
    Kprobe,
    State(Hook),
}

pub(crate) struct Tcpconnect {
    args: Args,
    event: Record<types::event>,
    table: Table<Tcpconnect>,
    mode: Option<Variant>,
}

impl Tool for Tcpconnect {
    common::tool_types!(TcpconnectSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        if args.dns {
            return Err(usage(
                "-d (DNS names) is not supported: BCC's reads DNS answers with kprobes on \
                 UDP receive functions; resolve the addresses afterwards instead",
            ));
        }
        Ok(Tcpconnect {
            table: table(&args).containers(containers),
            args,
            event: Record::new(containers),
            mode: None,
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            uid: self.args.uid,
            dports: self.args.port.clone(),
            family: self.args.family.family(),
            ..Filters::processes(&self.args.pid, self.args.cgroup.path())
        }
    }

    fn configure(&mut self, open: &mut OpenTcpconnectSkel<'_>, _: &Setup) -> Result<()> {
        let mode = choose_programs(&mut open.progs)?;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.count_connects = self.args.count;
        rodata.wait_for_lport = matches!(mode, Variant::State(_)) && self.args.lport;
        self.mode = Some(mode);
        Ok(())
    }

    fn hook_notes(&self) -> Vec<String> {
        match self.mode {
            Some(Variant::State(_)) if self.args.lport => vec![
                "no fentry or kprobe on tcp_v4_connect/tcp_v6_connect: connects are seen as \
                 the SYN is sent, and shown once the local port is known (handshake done or \
                 failed)"
                    .into(),
            ],
            _ => Vec::new(),
        }
    }

    common::event_kind!();

    fn banner(&self) -> Banner {
        if self.args.count {
            Banner::Note("Tracing connect ... Hit Ctrl-C to end".into())
        } else {
            Banner::Header {
                header: self.table.header(),
                note: Self::INFO.banner.into(),
            }
        }
    }

    fn report(&mut self, skel: &TcpconnectSkel<'_>, out: &mut Out, when: When) -> Result<()> {
        if self.args.count && when == When::End {
            print_counts(out, self.args.common.json, skel)?;
        }
        Ok(())
    }

    fn error_note(&self, index: u32) -> Option<&'static str> {
        match types::tcpconnect_error(index) {
            types::tcpconnect_error::ERR_COUNTS_FULL => {
                Some("connects not counted: the count table (10240 entries) was full")
            }
            _ => None,
        }
    }
}

common::stamped_by_record!(Tcpconnect);

/// fexit where it loads, else kprobes, else the state change; the others
/// switched off.
fn choose_programs(p: &mut OpenTcpconnectProgs) -> Result<Variant> {
    let mode = if FUNCTIONS.iter().all(|f| probe::fentry_target(f)) {
        Variant::Fexit
    } else if FUNCTIONS.iter().all(|f| probe::kprobe_target(f)) {
        Variant::Kprobe
    } else {
        Variant::State(tcp::state_hook()?)
    };
    probe::load_when(
        mode == Variant::Fexit,
        [&mut p.tc_fexit_v4, &mut p.tc_fexit_v6],
    );
    probe::load_when(
        mode == Variant::Kprobe,
        [
            &mut p.tc_kprobe_v4,
            &mut p.tc_kprobe_v6,
            &mut p.tc_kretprobe_v4,
            &mut p.tc_kretprobe_v6,
        ],
    );
    let state = match mode {
        Variant::State(hook) => Some(hook),
        _ => None,
    };
    probe::load_when(state == Some(Hook::TpBtf), [&mut p.state_btf]);
    probe::load_when(state == Some(Hook::RawTp), [&mut p.state_raw]);
    probe::load_when(state == Some(Hook::Tracepoint), [&mut p.state_tp]);
    Ok(mode)
}

/// BCC's columns: [TIME(s)] [UID] PID COMM IP SADDR [LPORT] DADDR DPORT.
fn table(args: &Args) -> Table<Tcpconnect> {
    Table::<Tcpconnect>::new(args.common.json)
        .column(args.timestamp, columns::since_first::<_, 3>(8))
        .column(false, columns::ts())
        .column(
            args.print_uid,
            Column::new("UID", 5, "uid", |t| t.event.uid.into()),
        )
        .columns([
            columns::pid(7),
            columns::tid(0).json_only(),
            columns::cgroup_id(),
            columns::comm("COMM", 12),
            Column::new("IP", 2, "ip", |t| {
                u32::from(ip_version(t.event.flow.family)).into()
            }),
            Column::new("SADDR", 16, "saddr", |t| {
                address(t.event.flow.family, &t.event.flow.saddr).into()
            }),
        ])
        .column(
            args.lport,
            Column::new("LPORT", 6, "lport", |t| t.event.flow.lport.into()),
        )
        .columns([
            Column::new("DADDR", 16, "daddr", |t| {
                address(t.event.flow.family, &t.event.flow.daddr).into()
            }),
            Column::new("DPORT", 0, "dport", |t| t.event.flow.dport.into()),
        ])
}

/// -c's table: one row per source, destination and port, IPv4 first,
/// each family's busiest first (BCC's).
fn counts_table(json: bool) -> Table<(types::count_key, u64)> {
    Table::<(types::count_key, u64)>::new(json).columns([
        Column::json("ip", |(k, _)| u32::from(ip_version(k.family)).into()),
        Column::new("LADDR", 25, "saddr", |(k, _)| {
            address(k.family, &k.saddr).into()
        }),
        Column::new("RADDR", 25, "daddr", |(k, _)| {
            address(k.family, &k.daddr).into()
        }),
        Column::new("RPORT", 20, "dport", |(k, _)| k.dport.into()),
        Column::new("CONNECTS", 0, "connects", |(_, n)| (*n).into()),
    ])
}

fn print_counts(out: &mut Out, json: bool, skel: &TcpconnectSkel) -> Result<()> {
    let mut counts: Vec<(types::count_key, Box<u64>)> = maps::drain_as(&skel.maps.counts)?;
    counts.sort_by(|a, b| {
        (a.0.family != AF_INET)
            .cmp(&(b.0.family != AF_INET))
            .then_with(|| b.1.cmp(&a.1))
            .then_with(|| a.0.dport.cmp(&b.0.dport))
    });
    let table = counts_table(json);
    if !json {
        writeln!(out, "\n{}", table.header())?;
    }
    for (k, n) in counts {
        table.row(out, &(k, *n))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_arguments_parse() {
        assert!(Args::try_parse_from(["tcpconnect", "-s"]).unwrap().lport);
    }

    #[test]
    fn columns_are_bccs() {
        let h = |args: &[&str]| table(&Args::try_parse_from(args).unwrap()).header();
        assert_eq!(
            h(&["tcpconnect"]),
            "PID     COMM         IP SADDR            DADDR            DPORT"
        );
        assert_eq!(
            h(&["tcpconnect", "-tUL"]),
            "TIME(s)  UID   PID     COMM         IP SADDR            LPORT  DADDR            DPORT"
        );
        assert_eq!(
            counts_table(false).header(),
            format!("{:<25} {:<25} {:<20} CONNECTS", "LADDR", "RADDR", "RPORT")
        );
    }
}
