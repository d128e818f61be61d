//! tcpdrop: TCP segments the kernel drops, with the drop reason and the
//! kernel stack, from skb:kfree_skb (no kprobe: BCC's tcp_drop() is gone
//! since 5.19).

mod info;

use std::collections::HashMap;
use std::io::{self, Write};

use anyhow::{bail, Result};
use clap::Parser;
use common::cli::{self, CgroupLongArgs, CommonArgs, ContainerArgs, FamilyArgs, IdList, PortList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, Hook};
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::net::{endpoint, ip_version, tcp_state_name};
use common::output::Out;
use common::run::lifecycle::{self, Setup, Tool};
use common::sym::{trim_tracing_frames, Symbolizer};

common::skeleton!("tcpdrop");
use skel::{types, OpenTcpdropProgs, OpenTcpdropSkel, TcpdropSkel, TcpdropSkelBuilder};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    tcpdrop               # trace TCP segments the kernel drops
    tcpdrop -4            # IPv4 only
    tcpdrop -P 443        # only segments from or to port 443
    tcpdrop --all-reasons # NOT_SPECIFIED drops too
    tcpdrop --json | jq .";

/// Trace TCP segments the kernel drops: addresses, ports, TCP flags, the
/// socket's state, the drop reason, and the kernel stack of the drop.
#[derive(Parser, Debug)]
#[command(name = "tcpdrop", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Only drops in the context of these processes (comma-separated pids;
    /// a received segment is dropped in whatever task the network
    /// interrupt found running)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Only segments from or to these ports (comma-separated)
    #[arg(short = 'P', long, value_name = "PORTS", value_parser = cli::port_list)]
    port: Option<PortList>,
    /// Also drops whose reason is NOT_SPECIFIED (many are not losses)
    #[arg(long)]
    all_reasons: bool,
    /// Don't take (or print) the kernel stack of each drop
    #[arg(long)]
    no_stack: bool,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    #[command(flatten)]
    family: FamilyArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Tcpdrop>();

pub(crate) struct Tcpdrop {
    args: Args,
    event: Record<types::event>,
    table: Table<Tcpdrop>,
    /// The kernel's drop reasons, from its BTF (never a table of numbers:
    /// they change between kernels).
    reasons: HashMap<u32, String>,
    symbolizer: Symbolizer,
    stack: Vec<String>,
}

/// enum skb_drop_reason's names, without the SKB_DROP_REASON_ prefix, as
/// the kernel's own tracepoint prints them.
fn drop_reasons() -> HashMap<u32, String> {
    common::kernel::enums::named("skb_drop_reason")
        .into_iter()
        .map(|(value, name)| {
            let name = name.strip_prefix("SKB_DROP_REASON_").unwrap_or(&name);
            (value as u32, name.to_string())
        })
        .collect()
}

/// BCC's flags, in its order.
fn flags(f: u8) -> String {
    const NAMES: [&str; 8] = ["FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR"];
    let set: Vec<&str> = NAMES
        .iter()
        .enumerate()
        .filter(|(bit, _)| f & (1 << bit) != 0)
        .map(|(_, n)| *n)
        .collect();
    set.join("|")
}

impl Tcpdrop {
    fn reason(&self) -> String {
        let e = &self.event;
        if e.has_reason == 0 {
            return "-".into();
        }
        match self.reasons.get(&e.reason) {
            Some(name) => name.clone(),
            None => format!("{}", e.reason),
        }
    }

    fn state(&self) -> &'static str {
        if self.event.state == 0 {
            "-"
        } else {
            tcp_state_name(self.event.state)
        }
    }
}

impl Tool for Tcpdrop {
    common::tool_types!(TcpdropSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Tcpdrop {
            table: table(args.common.json).containers(containers),
            args,
            event: Record::new(containers),
            reasons: drop_reasons(),
            symbolizer: Symbolizer::new(),
            stack: Vec::new(),
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            cgroup: self.args.cgroup.path(),
            lports: self.args.port.clone(),
            family: self.args.family.family(),
            ..Filters::pids(&self.args.pid)
        }
    }

    fn configure(&mut self, open: &mut OpenTcpdropSkel<'_>, _: &Setup) -> Result<()> {
        choose_programs(&mut open.progs)?;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.all_reasons = self.args.all_reasons;
        rodata.want_stack = !self.args.no_stack;
        Ok(())
    }

    fn loaded(&mut self, _: &mut TcpdropSkel<'_>) -> Result<()> {
        if !self.args.no_stack {
            self.symbolizer.warm_kernel();
        }
        Ok(())
    }

    common::event_kind!(table);

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        self.event.read(data);
        self.stack.clear();
        if !self.args.no_stack {
            let n = (self.event.stack_frames as usize).min(self.event.stack.len());
            let frames = self.symbolizer.kernel(&self.event.stack[..n]);
            self.stack = trim_tracing_frames(&frames)
                .iter()
                .map(|f| f.label(true))
                .collect();
        }
        self.table.row(out, self)?;
        if !self.args.common.json && !self.args.no_stack {
            for frame in &self.stack {
                writeln!(out, "\t{frame}")?;
            }
            writeln!(out)?;
        }
        Ok(())
    }
}

common::stamped_by_record!(Tcpdrop);

/// The program for the tracepoint's arguments on this kernel.
fn choose_programs(p: &mut OpenTcpdropProgs) -> Result<()> {
    let args = probe::btf_tracepoint_args("kfree_skb");
    if probe::pick(&[Hook::TpBtf]).is_none() || !probe::btf_tracepoint_exists("kfree_skb") {
        bail!("tcpdrop needs a tp_btf program on skb:kfree_skb (Linux 5.5+ with BTF)");
    }
    let Some(args @ 2..=4) = args else {
        bail!("skb:kfree_skb has arguments this tool does not know ({args:?})");
    };
    probe::load_when(args == 4, [&mut p.td_btf4]);
    probe::load_when(args == 3, [&mut p.td_btf3]);
    probe::load_when(args == 2, [&mut p.td_btf2]);
    Ok(())
}

/// BCC's columns: TIME PID IP SADDR:SPORT > DADDR:DPORT STATE (FLAGS)
/// REASON (CODE).
fn table(json: bool) -> Table<Tcpdrop> {
    Table::<Tcpdrop>::new(json).columns([
        columns::time(),
        columns::ts(),
        columns::pid(7),
        columns::comm("COMM", 0).json_only(),
        columns::cgroup_id(),
        Column::new("IP", 2, "ip", |t| {
            u32::from(ip_version(t.event.flow.family)).into()
        }),
        Column::new("SADDR:SPORT", 20, "", |t| {
            let f = &t.event.flow;
            endpoint(f.family, &f.saddr, f.lport).into()
        }),
        Column::new(">", 1, "", |_| ">".into()),
        Column::new("DADDR:DPORT", 20, "", |t| {
            let f = &t.event.flow;
            endpoint(f.family, &f.daddr, f.dport).into()
        }),
        Column::json("saddr", |t| {
            let f = &t.event.flow;
            common::output::net::address(f.family, &f.saddr).into()
        }),
        Column::json("sport", |t| t.event.flow.lport.into()),
        Column::json("daddr", |t| {
            let f = &t.event.flow;
            common::output::net::address(f.family, &f.daddr).into()
        }),
        Column::json("dport", |t| t.event.flow.dport.into()),
        Column::new("STATE (FLAGS)", 20, "", |t| {
            format!("{} ({})", t.state(), flags(t.event.tcp_flags)).into()
        }),
        Column::json("state", |t| t.state().into()),
        Column::json("flags", |t| flags(t.event.tcp_flags).into()),
        Column::new("REASON (CODE)", 0, "", |t| {
            if t.event.has_reason == 0 {
                "-".into()
            } else {
                format!("{} ({})", t.reason(), t.event.reason).into()
            }
        }),
        Column::json("reason", |t| t.reason().into()),
        Column::json("reason_code", |t| t.event.reason.into()),
        Column::json("stack", |t| {
            Cell::List(t.stack.iter().map(|s| s.as_bytes()).collect())
        }),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_reasons_are_named() {
        assert_eq!(flags(0x12), "SYN|ACK");
        assert_eq!(flags(0), "");
        let reasons = drop_reasons();
        // This kernel's names, from its BTF (5.17+).
        if let Some(n) = reasons.values().find(|n| n.as_str() == "NETFILTER_DROP") {
            assert!(!n.starts_with("SKB_DROP_REASON_"));
        }
    }
}
