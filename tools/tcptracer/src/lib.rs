//! tcptracer: each TCP connection's connect, accept and close, with the
//! process, in BCC's layout. From the state-change tracepoint and the
//! accept calls' exits: no kprobe or fentry needed.

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupLongArgs, CommonArgs, ContainerArgs, FamilyArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, load_when};
use common::kinds::event::{columns, Column, Record, Stamped, Table};
use common::output::net::{address, ip_version};
use common::run::lifecycle::{self, Schedule, Setup, Tool};

common::skeleton!("tcptracer");
use skel::{types, OpenTcptracerSkel, TcptracerSkelBuilder};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    tcptracer             # each TCP connect (C), accept (A) and close (X)
    tcptracer -t          # with a TIME(s) column
    tcptracer -v          # the event spelled out, and the network namespace
    tcptracer -p 181      # only connections of process 181
    tcptracer -U -u 1000  # with a UID column; only uid 1000's connections
    tcptracer -N 4026531840  # only connections in this network namespace
    tcptracer -4          # IPv4 only
    tcptracer --json | jq .";

/// Trace TCP connections: each connect, accept and close with the process,
/// addresses and ports.
#[derive(Parser, Debug)]
#[command(name = "tcptracer", version, after_help = EXAMPLES,
          mut_arg("verbose", |a| a.help(
              "TYPE spelled out and a NETNS column (BCC's -v); and print the hooks chosen")))]
pub(crate) struct Args {
    /// Include a TIME(s) column: seconds since the first event shown
    /// (TIME(ns) with -v)
    #[arg(short = 't', long)]
    timestamp: bool,
    /// Only connections of these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Include a UID column (libbpf-tools')
    #[arg(short = 'U', long = "print-uid")]
    print_uid: bool,
    /// Only connections of this user (a uid or a user name; libbpf-tools')
    #[arg(short = 'u', long, value_parser = cli::uid)]
    uid: Option<u32>,
    /// Only connections in this network namespace (its inode number, as
    /// `ls -L -i /proc/PID/ns/net` or -v shows it)
    #[arg(short = 'N', long, value_name = "ID", value_parser = clap::value_parser!(u32).range(1..))]
    netns: Option<u32>,
    /// Trace for this many seconds
    #[arg(short = 'd', long, value_name = "SECONDS", value_parser = cli::seconds)]
    duration: Option<u64>,
    #[command(flatten)]
    family: FamilyArgs,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Tcptracer>();

pub(crate) struct Tcptracer {
    args: Args,
    event: Record<types::event>,
    table: Table<Tcptracer>,
}

use types::tcp_event_type as Type;

impl Tcptracer {
    /// BCC's letter and word for the event.
    fn kind(&self) -> (&'static str, &'static str) {
        match Type(u32::from(self.event.kind)) {
            Type::TCP_EVENT_CONNECT => ("C", "connect"),
            Type::TCP_EVENT_ACCEPT => ("A", "accept"),
            Type::TCP_EVENT_CLOSE => ("X", "close"),
            _ => ("?", "unknown"),
        }
    }
}

impl Tool for Tcptracer {
    common::tool_types!(TcptracerSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Tcptracer {
            table: table(&args).containers(containers),
            args,
            event: Record::new(containers),
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            uid: self.args.uid,
            family: self.args.family.family(),
            ..Filters::processes(&self.args.pid, self.args.cgroup.path())
        }
    }

    fn verbose_is_own(&self) -> bool {
        true
    }

    fn configure(&mut self, open: &mut OpenTcptracerSkel<'_>, _: &Setup) -> Result<()> {
        common::choose_state_programs!(open.progs)?;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.target_netns = self.args.netns.unwrap_or(0);
        rodata.current_task_btf = probe::current_task_btf();
        rodata.rdonly_cast = probe::rdonly_cast();
        let own = probe::own_call_tracepoints(
            &mut rodata.nr_calls,
            [libc::SYS_accept, libc::SYS_accept4],
        );
        let p = &mut open.progs;
        load_when(!own, [&mut p.tt_btf_exit]);
        load_when(own, [&mut p.tt_exit_accept, &mut p.tt_exit_accept4]);
        Ok(())
    }

    common::event_kind!();

    fn schedule(&self) -> Schedule {
        Schedule::lasting(self.args.duration)
    }
}

common::stamped_by_record!(Tcptracer);

/// BCC's `[TIME(s)] T PID COMM IP SADDR DADDR SPORT DPORT`; with -v
/// `[TIME(ns)] TYPE PID COMM IP SADDR DADDR SPORT DPORT NETNS`.
fn table(args: &Args) -> Table<Tcptracer> {
    let verbose = args.common.verbose;
    Table::<Tcptracer>::new(args.common.json)
        .column(args.timestamp && !verbose, columns::since_first::<_, 3>(9))
        .column(
            args.timestamp && verbose,
            Column::new("TIME(ns)", 14, "", |t: &Tcptracer| {
                ((t.stamps().since_first() * 1e9) as u64).into()
            }),
        )
        .column(
            args.print_uid,
            Column::new("UID", 6, "uid", |t: &Tcptracer| t.event.uid.into()),
        )
        .column(
            !args.print_uid,
            Column::json("uid", |t: &Tcptracer| t.event.uid.into()),
        )
        .column(
            !verbose,
            Column::new("T", 2, "", |t: &Tcptracer| t.kind().0.into()),
        )
        .column(
            verbose,
            Column::new("TYPE", 12, "", |t: &Tcptracer| t.kind().1.into()),
        )
        .columns([
            columns::ts(),
            Column::json("type", |t: &Tcptracer| t.kind().1.into()),
            columns::pid(6),
            columns::tid(0).json_only(),
            columns::cgroup_id(),
            columns::comm("COMM", 16),
            Column::new("IP", 2, "ip", |t: &Tcptracer| {
                u32::from(ip_version(t.event.flow.family)).into()
            }),
            Column::new("SADDR", 16, "saddr", |t: &Tcptracer| {
                address(t.event.flow.family, &t.event.flow.saddr).into()
            }),
            Column::new("DADDR", 16, "daddr", |t: &Tcptracer| {
                address(t.event.flow.family, &t.event.flow.daddr).into()
            }),
            Column::new("SPORT", 6, "sport", |t: &Tcptracer| {
                t.event.flow.lport.into()
            }),
        ])
        .column(
            !verbose,
            Column::new("DPORT", 0, "dport", |t: &Tcptracer| {
                t.event.flow.dport.into()
            }),
        )
        .column(
            verbose,
            Column::new("DPORT", 7, "dport", |t: &Tcptracer| {
                t.event.flow.dport.into()
            }),
        )
        .column(
            verbose,
            Column::new("NETNS", 0, "netns", |t: &Tcptracer| t.event.netns.into()),
        )
        .column(
            !verbose,
            Column::json("netns", |t: &Tcptracer| t.event.netns.into()),
        )
        .columns([Column::json("by_owner", |t: &Tcptracer| {
            (t.event.by_owner != 0).into()
        })])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_bccs() {
        let h = |args: &[&str]| table(&Args::try_parse_from(args).unwrap()).header();
        assert_eq!(
            h(&["tcptracer"]),
            "T  PID    COMM             IP SADDR            DADDR            SPORT  DPORT"
        );
        assert_eq!(
            h(&["tcptracer", "-tv"]),
            "TIME(ns)       TYPE         PID    COMM             IP SADDR            DADDR            SPORT  DPORT   NETNS"
        );
    }
}
