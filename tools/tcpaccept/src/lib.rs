//! tcpaccept: passive TCP connections, named by the process that accepted
//! them: from inet_csk_accept's return (fexit or kretprobe) where the
//! kernel offers it, else from accept()/accept4()'s, never from the state
//! change (which runs in softirq: BCC #2304).

mod info;

use anyhow::{bail, Result};
use clap::Parser;
use common::cli::{self, CgroupLongArgs, CommonArgs, ContainerArgs, FamilyArgs, IdList, PortList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, Hook};
use common::kinds::event::{columns, Column, Record, Table};
use common::output::net::{address, ip_version};
use common::run::lifecycle::{self, Setup, Tool};

common::skeleton!("tcpaccept");
use skel::{types, OpenTcpacceptProgs, OpenTcpacceptSkel, TcpacceptSkelBuilder};

common::event_record!(types::event, types::task_header);

const ACCEPT_FN: &str = "inet_csk_accept";

const EXAMPLES: &str = "\
EXAMPLES:
    tcpaccept             # trace all TCP accept()s
    tcpaccept -t          # include a timestamp column (seconds)
    tcpaccept -T          # include a time column (HH:MM:SS)
    tcpaccept -p 181      # only accepts by process 181
    tcpaccept -P 80,81    # only connections to local ports 80 and 81
    tcpaccept -4          # IPv4 only
    tcpaccept --json | jq .";

/// Trace TCP passive connections (accept()): the accepting process, and
/// the remote and local end of each.
#[derive(Parser, Debug)]
#[command(name = "tcpaccept", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Include a TIME column (HH:MM:SS)
    #[arg(short = 'T', long)]
    time: bool,
    /// Include a TIME(s) column: seconds since the first accept shown
    #[arg(short = 't', long)]
    timestamp: bool,
    /// Only accepts by these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Only connections to these local ports (comma-separated)
    #[arg(short = 'P', long, value_name = "PORTS", value_parser = cli::port_list)]
    port: Option<PortList>,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    #[command(flatten)]
    family: FamilyArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Tcpaccept>();

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    Fexit { args: u32 },
    Kretprobe,
    Syscalls,
}

pub(crate) struct Tcpaccept {
    args: Args,
    event: Record<types::event>,
    table: Table<Tcpaccept>,
    mode: Option<Variant>,
}

impl Tool for Tcpaccept {
    common::tool_types!(TcpacceptSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Tcpaccept {
            table: table(&args).containers(containers),
            args,
            event: Record::new(containers),
            mode: None,
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            lports: self.args.port.clone(),
            family: self.args.family.family(),
            ..Filters::processes(&self.args.pid, self.args.cgroup.path())
        }
    }

    fn configure(&mut self, open: &mut OpenTcpacceptSkel<'_>, _: &Setup) -> Result<()> {
        let mode = choose_programs(&mut open.progs)?;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        // Classic tracepoint programs follow the task's pointers with probe
        // reads (files.bpf.h).
        rodata.current_task_btf = false;
        self.mode = Some(mode);
        Ok(())
    }

    fn hook_notes(&self) -> Vec<String> {
        match self.mode {
            Some(Variant::Syscalls) => vec![format!(
                "no fentry or kprobe on {ACCEPT_FN}: accepts are seen at the accept() and \
                 accept4() system calls (io_uring's and in-kernel accepts are not)"
            )],
            _ => Vec::new(),
        }
    }

    common::event_kind!();
}

common::stamped_by_record!(Tcpaccept);

/// fexit (the program for the kernel's signature of inet_csk_accept),
/// else a kretprobe, else the system calls; the others switched off.
fn choose_programs(p: &mut OpenTcpacceptProgs) -> Result<Variant> {
    let fexit_args = probe::function_args(ACCEPT_FN).filter(|n| [2, 4].contains(n));
    let mode = match fexit_args {
        Some(args) if probe::fentry_target(ACCEPT_FN) => Variant::Fexit { args },
        _ if probe::kprobe_target(ACCEPT_FN) => Variant::Kretprobe,
        _ if probe::pick(&[Hook::Tracepoint]).is_some()
            && probe::tracepoint_exists("syscalls", "sys_exit_accept4") =>
        {
            Variant::Syscalls
        }
        _ => bail!(
            "this kernel offers neither fentry nor a kprobe on {ACCEPT_FN}, nor the \
             syscalls:sys_exit_accept4 tracepoint"
        ),
    };
    probe::load_when(mode == Variant::Fexit { args: 2 }, [&mut p.ta_fexit2]);
    probe::load_when(mode == Variant::Fexit { args: 4 }, [&mut p.ta_fexit4]);
    probe::load_when(mode == Variant::Kretprobe, [&mut p.ta_kretprobe]);
    let accept = mode == Variant::Syscalls;
    probe::load_when(accept, [&mut p.ta_sys_accept4]);
    // accept() is accept4() on some architectures (arm64 has no accept).
    probe::load_when(
        accept && probe::tracepoint_exists("syscalls", "sys_exit_accept"),
        [&mut p.ta_sys_accept],
    );
    Ok(mode)
}

/// BCC's columns: [TIME] [TIME(s)] PID COMM IP RADDR RPORT LADDR LPORT.
fn table(args: &Args) -> Table<Tcpaccept> {
    Table::<Tcpaccept>::new(args.common.json)
        .column(args.time, columns::time())
        .column(args.timestamp, columns::since_first::<_, 3>(8))
        .columns([
            columns::ts(),
            columns::pid(7),
            columns::tid(0).json_only(),
            columns::cgroup_id(),
            columns::comm("COMM", 12),
            Column::new("IP", 2, "ip", |t| {
                u32::from(ip_version(t.event.flow.family)).into()
            }),
            Column::new("RADDR", 16, "daddr", |t| {
                address(t.event.flow.family, &t.event.flow.daddr).into()
            }),
            Column::new("RPORT", 5, "dport", |t| t.event.flow.dport.into()),
            Column::new("LADDR", 16, "saddr", |t| {
                address(t.event.flow.family, &t.event.flow.saddr).into()
            }),
            Column::new("LPORT", 0, "lport", |t| t.event.flow.lport.into()),
        ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_bccs() {
        let h = |args: &[&str]| table(&Args::try_parse_from(args).unwrap()).header();
        assert_eq!(
            h(&["tcpaccept"]),
            "PID     COMM         IP RADDR            RPORT LADDR            LPORT"
        );
        assert!(h(&["tcpaccept", "-Tt"]).starts_with("TIME     TIME(s)  PID"));
    }
}
