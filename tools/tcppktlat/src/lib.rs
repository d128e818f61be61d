//! tcppktlat: how long received TCP data waits for its reader, one line
//! per read, in libbpf-tools' layout: from the arrival of the oldest
//! segment not read yet to the read that takes it. From the TCP
//! tracepoints: no kprobe or fentry needed.

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, FamilyArgs, IdList, PortList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, load_when, Hook};
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::net::{address, ip_version};
use common::run::lifecycle::{self, Schedule, Setup, Tool};

common::skeleton!("tcppktlat");
use skel::{types, OpenTcppktlatSkel, TcppktlatSkelBuilder};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    tcppktlat             # every read, with how long its data waited
    tcppktlat 1000        # only waits of 1000 us or more (-m 1000 too)
    tcppktlat -T          # with a TIME column
    tcppktlat -p 181      # only reads by process 181
    tcppktlat -t 181      # only reads by thread 181
    tcppktlat -l 80       # only connections on local port 80
    tcppktlat -r 5432     # only connections to remote port 5432
    tcppktlat -w          # wider columns (IPv6 addresses fit)
    tcppktlat --json | jq .";

/// Trace how long received TCP data waits for its reader: from a
/// segment's arrival to the read, per read.
#[derive(Parser, Debug)]
#[command(name = "tcppktlat", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Only waits of this many microseconds or more
    #[arg(value_name = "MIN_US", conflicts_with = "min")]
    min_us: Option<u64>,
    /// Only waits of this many microseconds or more
    #[arg(short = 'm', long, value_name = "USECS")]
    min: Option<u64>,
    /// Include a TIME column: the wall-clock time
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Only reads by these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Only reads by these threads (comma-separated tids)
    #[arg(short = 't', long, value_parser = cli::id_list, conflicts_with = "pid")]
    tid: Option<IdList>,
    /// Only connections on these local ports (comma-separated)
    #[arg(short = 'l', long, value_name = "PORTS", value_parser = cli::port_list)]
    lport: Option<PortList>,
    /// Only connections to these remote ports (comma-separated)
    #[arg(short = 'r', long, value_name = "PORTS", value_parser = cli::port_list)]
    rport: Option<PortList>,
    /// Wide columns (IPv6 addresses fit)
    #[arg(short = 'w', long)]
    wide: bool,
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

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Tcppktlat>();

pub(crate) struct Tcppktlat {
    args: Args,
    event: Record<types::event>,
    table: Table<Tcppktlat>,
}

impl Tool for Tcppktlat {
    common::tool_types!(TcppktlatSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Tcppktlat {
            table: table(&args).containers(containers),
            args,
            event: Record::new(containers),
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            lports: self.args.lport.clone(),
            dports: self.args.rport.clone(),
            family: self.args.family.family(),
            ..Filters::threads(
                &self.args.pid,
                &self.args.tid,
                "-t",
                self.args.cgroup.path(),
            )
        }
    }

    fn configure(&mut self, open: &mut OpenTcppktlatSkel<'_>, _: &Setup) -> Result<()> {
        let min_us = self.args.min_us.or(self.args.min).unwrap_or(0);
        maps::rodata(&mut open.maps.rodata_data)?.min_wait_ns = min_us.saturating_mul(1000);
        // tp_btf or raw_tp: the handlers take the socket's pointer, which
        // the classic tracepoints' records do not all carry.
        let described = ["tcp_probe", "tcp_rcv_space_adjust"]
            .iter()
            .all(|name| probe::btf_tracepoint_exists(name));
        let hook = described
            .then(|| probe::pick(&[Hook::TpBtf, Hook::RawTp]))
            .flatten()
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "this kernel offers no tp_btf or raw_tp on the tcp:tcp_probe and \
                     tcp:tcp_rcv_space_adjust tracepoints (Linux 4.20, with BTF): tcppktlat \
                     needs them"
                )
            })?;
        // A socket's end drops what was kept for it; where the kernel has
        // no tcp_destroy_sock (before 5.3), the map's LRU does.
        let destroy = probe::btf_tracepoint_exists("tcp_destroy_sock");
        let p = &mut open.progs;
        load_when(hook == Hook::TpBtf, [&mut p.segment_btf, &mut p.read_btf]);
        load_when(hook == Hook::RawTp, [&mut p.segment_raw, &mut p.read_raw]);
        load_when(destroy && hook == Hook::TpBtf, [&mut p.destroy_btf]);
        load_when(destroy && hook == Hook::RawTp, [&mut p.destroy_raw]);
        Ok(())
    }

    common::event_kind!();

    fn schedule(&self) -> Schedule {
        Schedule::lasting(self.args.duration)
    }
}

common::stamped_by_record!(Tcppktlat);

/// libbpf-tools' `[TIME] PID TID COMM LADDR LPORT RADDR RPORT MS`; -w
/// widens the addresses.
fn table(args: &Args) -> Table<Tcppktlat> {
    let width = if args.wide { 39 } else { 15 };
    let laddr = Column::new("LADDR", 15, "laddr", |t: &Tcppktlat| {
        address(t.event.flow.family, &t.event.flow.saddr).into()
    });
    let raddr = Column::new("RADDR", 15, "raddr", |t: &Tcppktlat| {
        address(t.event.flow.family, &t.event.flow.daddr).into()
    });
    Table::<Tcppktlat>::new(args.common.json)
        .column(args.timestamp, columns::time())
        .columns([
            columns::ts(),
            columns::pid(7),
            columns::tid(7),
            columns::cgroup_id(),
            columns::comm("COMM", 16),
            Column::json("ip", |t: &Tcppktlat| {
                u32::from(ip_version(t.event.flow.family)).into()
            }),
            Column { width, ..laddr },
            Column::new("LPORT", 5, "lport", |t: &Tcppktlat| {
                t.event.flow.lport.into()
            }),
            Column { width, ..raddr },
            Column::new("RPORT", 5, "rport", |t: &Tcppktlat| {
                t.event.flow.dport.into()
            }),
            Column::new("MS", 0, "", |t: &Tcppktlat| {
                Cell::Float(t.event.wait_ns as f64 / 1e6, 2)
            }),
            Column::json("wait_us", |t: &Tcppktlat| {
                Cell::Float(t.event.wait_ns as f64 / 1e3, 3)
            }),
        ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_libbpf_tools() {
        let h = |args: &[&str]| table(&Args::try_parse_from(args).unwrap()).header();
        assert_eq!(
            h(&["tcppktlat"]),
            "PID     TID     COMM             LADDR           LPORT RADDR           RPORT MS"
        );
        assert!(h(&["tcppktlat", "-T", "-w"]).starts_with("TIME     PID"));
    }

    #[test]
    fn the_minimum_is_given_once() {
        assert_eq!(
            Args::try_parse_from(["tcppktlat", "1000"]).unwrap().min_us,
            Some(1000)
        );
        assert!(Args::try_parse_from(["tcppktlat", "1000", "-m", "5"]).is_err());
    }
}
