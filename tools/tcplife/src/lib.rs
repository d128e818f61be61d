//! tcplife: one line per closed TCP session, its span and bytes, from the
//! state-change tracepoint alone (nothing traced per packet or send).

mod info;
mod metrics;

use std::io;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupLongArgs, CommonArgs, ContainerArgs, FamilyArgs, IdList, PortList};
use common::export::prom::Exporter;
use common::kernel::filters::Filters;
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::note;
use common::output::net::{address, ip_version};
use common::output::Out;
use common::run::lifecycle::{self, Setup, Tool, When};

common::skeleton!("tcplife");
use skel::{types, OpenTcplifeSkel, TcplifeSkel, TcplifeSkelBuilder};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    tcplife               # trace every TCP session as it closes
    tcplife -T            # include a time column (HH:MM:SS)
    tcplife -w            # wider columns (fit IPv6)
    tcplife -stT          # CSV, with times and timestamps
    tcplife -p 181        # only sessions of process 181
    tcplife -L 80         # only local port 80
    tcplife -L 80,81      # only local ports 80 and 81
    tcplife -D 80         # only remote port 80
    tcplife -4            # IPv4 only
    tcplife --prometheus 127.0.0.1:9435   # sessions and bytes as counters
    tcplife --json | jq .";

/// Trace the lifespan of TCP sessions: one line per session as it closes,
/// with its owner, endpoints, bytes sent and received, and duration.
#[derive(Parser, Debug)]
#[command(name = "tcplife", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Include a TIME column (HH:MM:SS)
    #[arg(short = 'T', long)]
    time: bool,
    /// Include a TIME(s) column: seconds since the first session shown
    #[arg(short = 't', long)]
    timestamp: bool,
    /// Wide columns (fit IPv6 addresses), with an IP column
    #[arg(short = 'w', long)]
    wide: bool,
    /// Comma-separated values
    #[arg(short = 's', long, short_alias = 'C', conflicts_with_all = ["wide", "json"])]
    csv: bool,
    /// Only sessions of these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Only these local ports (comma-separated)
    #[arg(short = 'L', long = "localport", value_name = "LPORT", value_parser = cli::port_list)]
    lport: Option<PortList>,
    /// Only these remote ports (comma-separated)
    #[arg(short = 'D', long = "remoteport", value_name = "DPORT", value_parser = cli::port_list)]
    dport: Option<PortList>,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    #[command(flatten)]
    family: FamilyArgs,
    #[command(flatten)]
    metrics: cli::MetricsArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Tcplife>();

pub(crate) struct Tcplife {
    args: Args,
    /// The clock, and the first session shown: TIME(s) counts from it
    /// (BCC's).
    event: Record<types::event>,
    table: Table<Tcplife>,
    exporter: Option<Exporter>,
    sessions: metrics::Sessions,
}

impl Tool for Tcplife {
    common::tool_types!(TcplifeSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        let exporter = args.metrics.exporter()?;
        Ok(Tcplife {
            table: table(&args).containers(containers),
            args,
            event: Record::new(containers),
            exporter,
            sessions: metrics::Sessions::default(),
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            cgroup: self.args.cgroup.path(),
            lports: self.args.lport.clone(),
            dports: self.args.dport.clone(),
            family: self.args.family.family(),
            ..Filters::pids(&self.args.pid)
        }
    }

    fn configure(&mut self, open: &mut OpenTcplifeSkel<'_>, _: &Setup) -> Result<()> {
        common::choose_state_programs!(open.progs)?;
        Ok(())
    }

    common::event_kind!(table);

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        self.event.read(data);
        if self.exporter.is_some() {
            self.sessions.add(&self.event);
        }
        self.table.row(out, self)
    }

    fn extra_fd(&self) -> Option<std::os::fd::RawFd> {
        self.exporter.as_ref().and_then(Exporter::fd)
    }

    fn extra_ready(&mut self, _: &TcplifeSkel<'_>) -> Result<()> {
        match &self.exporter {
            Some(exporter) => exporter.serve(|| self.sessions.encode()),
            None => Ok(()),
        }
    }

    fn idle(&mut self) -> bool {
        if let Some(exporter) = &self.exporter {
            if let Err(e) = self.sessions.write_file(exporter, false) {
                note!("{e:#}");
            }
        }
        false
    }

    fn report(&mut self, _: &TcplifeSkel<'_>, _: &mut Out, when: When) -> Result<()> {
        if let (Some(exporter), When::End) = (&self.exporter, when) {
            self.sessions.write_file(exporter, true)?;
        }
        Ok(())
    }
}

common::stamped_by_record!(Tcplife);

/// BCC's columns: PID COMM [IP] LADDR LPORT RADDR RPORT TX_KB RX_KB MS;
/// wider with -w, comma-separated with -s.
fn table(args: &Args) -> Table<Tcplife> {
    let (comm, addr, kb) = if args.wide { (16, 39, 6) } else { (10, 15, 5) };
    let table: Table<Tcplife> = if args.csv {
        Table::csv()
    } else {
        Table::new(args.common.json)
    };
    table
        .column(args.time, columns::time())
        .column(args.timestamp, columns::since_first::<_, 6>(9))
        .column(false, columns::ts())
        .columns([
            columns::pid(5),
            Column::json("owner_known", |t| (t.event.owner_known != 0).into()),
            columns::cgroup_id(),
            columns::comm("COMM", comm),
            Column::json("role", |t| {
                if t.event.active != 0 {
                    "client"
                } else {
                    "server"
                }
                .into()
            }),
        ])
        .column(
            args.wide || args.csv,
            Column::new("IP", 2, "ip", |t| {
                u32::from(ip_version(t.event.flow.family)).into()
            }),
        )
        .columns([
            Column::new("LADDR", addr, "saddr", |t| {
                address(t.event.flow.family, &t.event.flow.saddr).into()
            }),
            Column::new("LPORT", 5, "lport", |t| t.event.flow.lport.into()),
            Column::new("RADDR", addr, "daddr", |t| {
                address(t.event.flow.family, &t.event.flow.daddr).into()
            }),
            Column::new("RPORT", 5, "dport", |t| t.event.flow.dport.into()),
            // Whole KiB, truncated, as BCC's.
            Column::right("TX_KB", kb, "tx_kb", |t| (t.event.tx_bytes / 1024).into()),
            Column::right("RX_KB", kb, "rx_kb", |t| (t.event.rx_bytes / 1024).into()),
            Column::json("tx_bytes", |t| t.event.tx_bytes.into()),
            Column::json("rx_bytes", |t| t.event.rx_bytes.into()),
            Column::new("MS", 0, "ms", |t| {
                Cell::Float(t.event.span_ns as f64 / 1e6, 2)
            }),
        ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(args: &[&str]) -> String {
        table(&Args::try_parse_from(args).unwrap()).header()
    }

    #[test]
    fn columns_are_bccs() {
        assert_eq!(
            header(&["tcplife"]),
            "PID   COMM       LADDR           LPORT RADDR           RPORT TX_KB RX_KB MS"
        );
        assert_eq!(
            header(&["tcplife", "-stT"]),
            "TIME,TIME(s),PID,COMM,IP,LADDR,LPORT,RADDR,RPORT,TX_KB,RX_KB,MS"
        );
        assert!(header(&["tcplife", "-w"]).contains(" IP "));
    }
}
