//! tcpconnlat: TCP connect latency, from the SYN sent to the handshake's
//! completion, timed at the kernel's state changes (no kprobe).

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, FamilyArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::net::{address, ip_version};
use common::run::lifecycle::{self, Setup, Tool};

common::skeleton!("tcpconnlat");
use skel::{types, OpenTcpconnlatSkel, TcpconnlatSkelBuilder};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    tcpconnlat            # trace all TCP connects, with their latency
    tcpconnlat 1          # only connects slower than 1 ms
    tcpconnlat -m 0.5     # only connects slower than 0.5 ms
    tcpconnlat -t         # include a timestamp column
    tcpconnlat -p 181     # only connects of process 181
    tcpconnlat -L         # include the local port
    tcpconnlat -4         # IPv4 only
    tcpconnlat --json | jq .";

/// Trace TCP connect latency: one line per connect() whose handshake
/// completed, with the time from the SYN sent to the SYN-ACK processed.
#[derive(Parser, Debug)]
#[command(name = "tcpconnlat", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Only connects at least this slow, in milliseconds (a decimal)
    #[arg(value_name = "MIN_MS", value_parser = min_ms)]
    duration_ms: Option<f64>,
    /// Only connects at least this slow, in milliseconds (as the positional)
    #[arg(short = 'm', long = "min-ms", value_name = "MIN_MS", value_parser = min_ms,
          conflicts_with = "duration_ms")]
    min: Option<f64>,
    /// Include a TIME(s) column: seconds since the first connect shown
    #[arg(short = 't', long)]
    timestamp: bool,
    /// Only connects by these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    /// Include an LPORT column
    #[arg(short = 'L', long)]
    lport: bool,
    #[command(flatten)]
    family: FamilyArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

fn min_ms(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(ms) if ms.is_finite() && ms >= 0.0 && ms <= cli::MAX_SECONDS as f64 * 1e3 => Ok(ms),
        _ => Err(format!("'{s}' is not a latency in milliseconds")),
    }
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Tcpconnlat>();

pub(crate) struct Tcpconnlat {
    args: Args,
    event: Record<types::event>,
    table: Table<Tcpconnlat>,
}

impl Tool for Tcpconnlat {
    common::tool_types!(TcpconnlatSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Tcpconnlat {
            table: table(&args).containers(containers),
            args,
            event: Record::new(containers),
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            family: self.args.family.family(),
            ..Filters::processes(&self.args.pid, self.args.cgroup.path())
        }
    }

    fn configure(&mut self, open: &mut OpenTcpconnlatSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        let ms = self.args.min.or(self.args.duration_ms).unwrap_or(0.0);
        rodata.min_latency_ns = (ms * 1e6) as u64;
        common::choose_state_programs!(open.progs)?;
        Ok(())
    }

    common::event_kind!();
}

common::stamped_by_record!(Tcpconnlat);

/// BCC's columns: [TIME(s)] PID COMM IP SADDR [LPORT] DADDR DPORT LAT(ms).
fn table(args: &Args) -> Table<Tcpconnlat> {
    Table::<Tcpconnlat>::new(args.common.json)
        .column(args.timestamp, columns::since_first::<_, 3>(9))
        .column(false, columns::ts())
        .columns([
            columns::pid(7),
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
            Column::new("DPORT", 5, "dport", |t| t.event.flow.dport.into()),
            Column::new("LAT(ms)", 0, "latency_ms", |t| {
                Cell::Float(t.event.latency_ns as f64 / 1e6, 2)
            }),
        ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_arguments_parse() {
        let a = Args::try_parse_from(["tcpconnlat", "0.5"]).unwrap();
        assert_eq!(a.duration_ms, Some(0.5));
    }

    #[test]
    fn columns_are_bccs() {
        let h = |args: &[&str]| table(&Args::try_parse_from(args).unwrap()).header();
        assert_eq!(
            h(&["tcpconnlat"]),
            "PID     COMM         IP SADDR            DADDR            DPORT LAT(ms)"
        );
        assert_eq!(
            h(&["tcpconnlat", "-tL"]),
            "TIME(s)   PID     COMM         IP SADDR            LPORT  DADDR            DPORT LAT(ms)"
        );
    }
}
