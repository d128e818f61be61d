//! solisten: listen() of IPv4 and IPv6 sockets, each at its return, in
//! BCC's layout: who listens on which address and port, with which
//! backlog, and what failed. From the call's tracepoints: no kprobe or
//! fentry needed.

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, FamilyArgs, IdList, PortList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, load_when};
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::net::{address, ip_version, AF_INET6};
use common::run::lifecycle::{self, Schedule, Setup, Tool};

common::skeleton!("solisten");
use skel::{types, OpenSolistenSkel, SolistenSkelBuilder};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    solisten              # trace every listen() of an IPv4 or IPv6 socket
    solisten -t           # with a TIME(s) column
    solisten -p 1234      # only listen() by process 1234
    solisten -P 80,443    # only sockets on port 80 or 443
    solisten --show-netns # with the socket's network namespace (containers)
    solisten -n 4026531840  # only sockets of this network namespace
    solisten -x           # only failed calls
    solisten --json | jq .";

/// Trace listen() of IPv4 and IPv6 sockets: the address and port, the
/// protocol, the backlog in force and the result.
#[derive(Parser, Debug)]
#[command(name = "solisten", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Include a TIME(s) column: seconds since the first listen() shown
    #[arg(short = 't', long)]
    timestamp: bool,
    /// Only listen() by these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Only sockets on these ports (comma-separated)
    #[arg(short = 'P', long, value_name = "PORTS", value_parser = cli::port_list)]
    port: Option<PortList>,
    /// Only sockets of this network namespace (its inode number, as
    /// `ls -L -i /proc/PID/ns/net` or --show-netns shows it)
    #[arg(short = 'n', long, value_name = "ID", value_parser = clap::value_parser!(u32).range(1..))]
    netns: Option<u32>,
    /// Include a NETNS column: the socket's network namespace
    #[arg(long)]
    show_netns: bool,
    /// Only failed calls
    #[arg(short = 'x', long)]
    failed: bool,
    /// Trace for this many seconds
    #[arg(short = 'd', long, value_name = "SECONDS", value_parser = cli::seconds)]
    duration: Option<u64>,
    #[command(flatten)]
    family: FamilyArgs,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Solisten>();

pub(crate) struct Solisten {
    args: Args,
    event: Record<types::event>,
    table: Table<Solisten>,
}

impl Tool for Solisten {
    common::tool_types!(SolistenSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Solisten {
            table: table(&args).containers(containers),
            args,
            event: Record::new(containers),
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            lports: self.args.port.clone(),
            family: self.args.family.family(),
            ..Filters::processes(&self.args.pid, self.args.cgroup.path())
        }
    }

    fn configure(&mut self, open: &mut OpenSolistenSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.failed_only = self.args.failed;
        rodata.target_netns = self.args.netns.unwrap_or(0);
        rodata.current_task_btf = probe::current_task_btf();
        rodata.rdonly_cast = probe::rdonly_cast();
        let own = probe::own_call_tracepoints(&mut rodata.nr_calls, [libc::SYS_listen]);
        let p = &mut open.progs;
        load_when(!own, [&mut p.listen_btf_enter, &mut p.listen_btf_exit]);
        load_when(own, [&mut p.listen_enter_listen, &mut p.listen_exit_listen]);
        Ok(())
    }

    common::event_kind!();

    fn schedule(&self) -> Schedule {
        Schedule::lasting(self.args.duration)
    }
}

common::stamped_by_record!(Solisten);

/// The protocol's name as BCC shows it, with the family's: `TCPv4`.
fn proto(protocol: u16, kind: u16, family: u16) -> String {
    let name = match (protocol, kind as i32) {
        (6, _) => "TCP",
        (132, _) => "SCTP",
        (262, _) => "MPTCP",
        (17, _) | (_, libc::SOCK_DGRAM) => "UDP",
        _ => "UNK",
    };
    let v = if family == AF_INET6 { "v6" } else { "v4" };
    format!("{name}{v}")
}

impl Solisten {
    fn errno(&self) -> Option<i32> {
        (self.event.ret < 0).then_some(-self.event.ret)
    }
}

/// BCC's `PID COMM [NETNS] PROTO BACKLOG PORT ADDR`, with libbpf-tools'
/// RET after COMM: 0, or the error's name.
fn table(args: &Args) -> Table<Solisten> {
    Table::<Solisten>::new(args.common.json)
        .column(args.timestamp, columns::since_first::<_, 6>(9))
        .columns([
            columns::ts(),
            columns::pid(7),
            columns::tid(0).json_only(),
            columns::cgroup_id(),
            columns::comm("COMM", 12),
        ])
        .column(
            args.show_netns,
            Column::new("NETNS", 12, "netns", |t: &Solisten| t.event.netns.into()),
        )
        .column(
            !args.show_netns,
            Column::json("netns", |t: &Solisten| t.event.netns.into()),
        )
        .columns([
            Column::new("RET", 10, "", |t: &Solisten| match t.errno() {
                Some(e) => common::errnos::name(e)
                    .map_or_else(|| (-e).to_string(), String::from)
                    .into(),
                None => "0".into(),
            }),
            Column::json("ret", |t: &Solisten| t.event.ret.into()),
            Column::json("error", |t: &Solisten| {
                t.errno()
                    .and_then(common::errnos::name)
                    .map_or(Cell::Null, Cell::from)
            })
            .optional(),
            Column::new("PROTO", 6, "proto", |t: &Solisten| {
                proto(t.event.protocol, t.event.sock_type, t.event.family).into()
            }),
            Column::json("ip", |t: &Solisten| {
                u32::from(ip_version(t.event.family)).into()
            }),
            Column::new("BACKLOG", 8, "backlog", |t: &Solisten| {
                t.event.backlog.into()
            }),
            Column::json("asked_backlog", |t: &Solisten| t.event.asked.into()),
            Column::new("PORT", 5, "port", |t: &Solisten| t.event.port.into()),
            Column::json("latency_ns", |t: &Solisten| t.event.latency_ns.into()),
            Column::new("ADDR", 0, "addr", |t: &Solisten| {
                address(t.event.family, &t.event.addr).into()
            }),
        ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_bccs_with_ret() {
        let h = |args: &[&str]| table(&Args::try_parse_from(args).unwrap()).header();
        assert_eq!(
            h(&["solisten"]),
            "PID     COMM         RET        PROTO  BACKLOG  PORT  ADDR"
        );
        assert_eq!(
            h(&["solisten", "-t", "--show-netns"]),
            "TIME(s)   PID     COMM         NETNS        RET        PROTO  BACKLOG  PORT  ADDR"
        );
    }

    #[test]
    fn protocols_are_named_as_bcc_names_them() {
        assert_eq!(proto(6, libc::SOCK_STREAM as u16, 2), "TCPv4");
        assert_eq!(proto(6, libc::SOCK_STREAM as u16, AF_INET6), "TCPv6");
        assert_eq!(proto(17, libc::SOCK_DGRAM as u16, 2), "UDPv4");
        assert_eq!(proto(262, libc::SOCK_STREAM as u16, 2), "MPTCPv4");
        assert_eq!(proto(0, libc::SOCK_RAW as u16, 2), "UNKv4");
    }
}
