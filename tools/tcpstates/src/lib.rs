//! tcpstates: every TCP state change, with the time spent in the state
//! left, from the kernel's sock:inet_sock_set_state tracepoint.

mod info;
mod journal;

use std::io;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupLongArgs, CommonArgs, ContainerArgs, FamilyArgs, PortList};
use common::kernel::filters::Filters;
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::net::{address, ip_version, tcp_state_name};
use common::output::Out;
use common::run::lifecycle::{self, Setup, Tool};

common::skeleton!("tcpstates");
use skel::{types, OpenTcpstatesSkel, TcpstatesSkelBuilder};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    tcpstates             # trace all TCP state changes
    tcpstates -t          # include a timestamp column (seconds)
    tcpstates -T          # include a time column (HH:MM:SS)
    tcpstates -w          # wider columns (fit IPv6)
    tcpstates -stT        # CSV, with times and timestamps
    tcpstates -Y          # also log each change to the systemd journal
    tcpstates -L 80       # only local port 80
    tcpstates -L 80,81    # only local ports 80 and 81
    tcpstates -D 80       # only remote port 80
    tcpstates -4          # IPv4 only
    tcpstates --json | jq .";

/// Trace TCP state changes, and the time spent in each state.
///
/// C-PID and C-COMM are the task the change ran in: the process for
/// changes it makes (connect, listen, close), but for changes made by
/// incoming packets, whatever task the network interrupt found running.
#[derive(Parser, Debug)]
#[command(name = "tcpstates", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Include a TIME column (HH:MM:SS)
    #[arg(short = 'T', long)]
    time: bool,
    /// Include a TIME(s) column: seconds since the first change shown
    #[arg(short = 't', long)]
    timestamp: bool,
    /// Wide columns (fit IPv6 addresses), with an IP column
    #[arg(short = 'w', long)]
    wide: bool,
    /// Comma-separated values
    #[arg(short = 's', long, conflicts_with_all = ["wide", "json"])]
    csv: bool,
    /// Only these local ports (comma-separated)
    #[arg(short = 'L', long = "localport", value_name = "LPORT", value_parser = cli::port_list)]
    lport: Option<PortList>,
    /// Only these remote ports (comma-separated)
    #[arg(short = 'D', long = "remoteport", value_name = "DPORT", value_parser = cli::port_list)]
    dport: Option<PortList>,
    /// Also log each change to the systemd journal (as BCC's, with
    /// OBJECT_TCP_* fields)
    #[arg(short = 'Y', long)]
    journal: bool,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    #[command(flatten)]
    family: FamilyArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Tcpstates>();

pub(crate) struct Tcpstates {
    args: Args,
    /// TIME(s) counts from the first change shown (BCC's).
    event: Record<types::event>,
    table: Table<Tcpstates>,
    journal: Option<journal::Journal>,
}

impl Tool for Tcpstates {
    common::tool_types!(TcpstatesSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        let journal = if args.journal {
            Some(journal::Journal::connect()?)
        } else {
            None
        };
        Ok(Tcpstates {
            table: table(&args).containers(containers),
            args,
            event: Record::new(containers),
            journal,
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            cgroup: self.args.cgroup.path(),
            lports: self.args.lport.clone(),
            dports: self.args.dport.clone(),
            family: self.args.family.family(),
            ..Filters::default()
        }
    }

    fn configure(&mut self, open: &mut OpenTcpstatesSkel<'_>, _: &Setup) -> Result<()> {
        common::choose_state_programs!(open.progs)?;
        Ok(())
    }

    common::event_kind!(table);

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        self.event.read(data);
        if let Some(journal) = &self.journal {
            journal.send(&self.event);
        }
        self.table.row(out, self)
    }
}

common::stamped_by_record!(Tcpstates);

impl Tcpstates {
    fn saddr(&self) -> String {
        address(self.event.flow.family, &self.event.flow.saddr)
    }

    fn daddr(&self) -> String {
        address(self.event.flow.family, &self.event.flow.daddr)
    }
}

/// BCC's columns: SKADDR C-PID C-COMM [IP] LADDR LPORT RADDR RPORT
/// OLDSTATE -> NEWSTATE MS; wider with -w, comma-separated with -s.
fn table(args: &Args) -> Table<Tcpstates> {
    let (comm, addr) = if args.wide { (16, 39) } else { (10, 15) };
    let table: Table<Tcpstates> = if args.csv {
        Table::csv()
    } else {
        Table::new(args.common.json)
    };
    table
        .column(args.time, columns::time())
        .column(args.timestamp, columns::since_first::<_, 6>(9))
        .columns([
            columns::ts(),
            Column::new("SKADDR", 16, "skaddr", |t| {
                format!("{:x}", t.event.skaddr).into()
            }),
            // BCC's C-PID: the task the change ran in.
            columns::pid(5).titled("C-PID"),
            columns::comm("C-COMM", comm),
            columns::cgroup_id(),
        ])
        .column(
            args.wide || args.csv,
            Column::new("IP", 2, "ip", |t| {
                u32::from(ip_version(t.event.flow.family)).into()
            }),
        )
        .columns([
            Column::new("LADDR", addr, "saddr", |t| t.saddr().into()),
            Column::new("LPORT", 5, "lport", |t| t.event.flow.lport.into()),
            Column::new("RADDR", addr, "daddr", |t| t.daddr().into()),
            Column::new("RPORT", 5, "dport", |t| t.event.flow.dport.into()),
            Column::new("OLDSTATE", 11, "oldstate", |t| {
                tcp_state_name(t.event.oldstate).into()
            }),
        ])
        .column(!args.csv, Column::new("->", 2, "", |_| "->".into()))
        .columns([
            Column::new("NEWSTATE", 11, "newstate", |t| {
                tcp_state_name(t.event.newstate).into()
            }),
            Column::new("MS", 0, "ms", |t| {
                Cell::Float(t.event.delta_ns as f64 / 1e6, 3)
            }),
        ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(args: &[&str]) -> Vec<String> {
        let args = Args::try_parse_from(args).unwrap();
        let h = table(&args).header();
        if args.csv {
            h.split(',').map(String::from).collect()
        } else {
            h.split_whitespace().map(String::from).collect()
        }
    }

    #[test]
    fn columns_are_bccs() {
        assert_eq!(
            header(&["tcpstates"]),
            [
                "SKADDR", "C-PID", "C-COMM", "LADDR", "LPORT", "RADDR", "RPORT", "OLDSTATE", "->",
                "NEWSTATE", "MS"
            ]
        );
        assert_eq!(
            header(&["tcpstates", "-stT"]),
            [
                "TIME", "TIME(s)", "SKADDR", "C-PID", "C-COMM", "IP", "LADDR", "LPORT", "RADDR",
                "RPORT", "OLDSTATE", "NEWSTATE", "MS"
            ]
        );
        assert!(header(&["tcpstates", "-w"]).contains(&"IP".to_string()));
    }
}
