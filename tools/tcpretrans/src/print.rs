//! How a retransmit is printed (its columns), and -c's per-flow counts.

use std::io::Write;

use anyhow::Result;
use common::kernel::maps;
use common::kinds::event::{columns, Column, Table};
use common::output::net::{address, endpoint, ip_version, tcp_state_name};
use common::output::Out;

use crate::skel::{types, TcpretransSkel};
use crate::{Args, Tcpretrans};

/// The columns, as BCC's: those the options ask for, every JSON key.
pub fn table(args: &Args) -> Table<Tcpretrans> {
    Table::<Tcpretrans>::new(args.common.json)
        .column(!args.timestamp, columns::time())
        .column(args.timestamp, columns::elapsed::<_, 6>(8))
        .columns([
            columns::pid(7),
            Column::json("owner_known", |t| (t.event.owner_known != 0).into()),
            columns::cgroup_id(),
            columns::comm("COMM", 0).json_only(),
            Column::new("IP", 2, "ip", |t| {
                u32::from(ip_version(t.event.flow.family)).into()
            }),
            Column::new("LADDR:LPORT", 20, "", |t| {
                let e = &t.event;
                endpoint(e.flow.family, &e.flow.saddr, e.flow.lport).into()
            }),
            Column::json("saddr", |t| {
                address(t.event.flow.family, &t.event.flow.saddr).into()
            }),
            Column::json("lport", |t| u32::from(t.event.flow.lport).into()),
            Column::new("T>", 2, "", |t| {
                format!("{}>", kind_name(t.event.kind).1).into()
            }),
            Column::json("type", |t| kind_name(t.event.kind).1.to_string().into()),
            Column::json("kind", |t| kind_name(t.event.kind).0.into()),
            Column::new("RADDR:RPORT", 20, "", |t| {
                let e = &t.event;
                endpoint(e.flow.family, &e.flow.daddr, e.flow.dport).into()
            }),
            Column::json("daddr", |t| {
                address(t.event.flow.family, &t.event.flow.daddr).into()
            }),
            Column::json("dport", |t| u32::from(t.event.flow.dport).into()),
        ])
        .column(
            args.sequence,
            Column::new("STATE", 12, "state", |t| {
                tcp_state_name(t.event.state).into()
            }),
        )
        .column(
            !args.sequence,
            Column::new("STATE", 0, "", |t| tcp_state_name(t.event.state).into()),
        )
        .column(
            args.sequence,
            Column::new("SEQ", 0, "seq", |t| t.event.seq.into()),
        )
}

pub fn kind_name(kind: u8) -> (&'static str, char) {
    use types::retrans_kind as K;
    match K(kind.into()) {
        K::KIND_LOSS_PROBE => ("loss_probe", 'L'),
        K::KIND_SYNACK => ("synack", 'R'),
        _ => ("retransmit", 'R'),
    }
}

/// -c's table: one row a flow, at exit.
fn counts_table(json: bool) -> Table<(types::flow, u64)> {
    Table::<(types::flow, u64)>::new(json).columns([
        Column::json("ip", |(k, _)| u32::from(ip_version(k.family)).into()),
        Column::new("LADDR:LPORT", 25, "", |(k, _)| {
            endpoint(k.family, &k.saddr, k.lport).into()
        }),
        Column::json("saddr", |(k, _)| address(k.family, &k.saddr).into()),
        Column::json("lport", |(k, _)| u32::from(k.lport).into()),
        Column::new("RADDR:RPORT", 25, "", |(k, _)| {
            endpoint(k.family, &k.daddr, k.dport).into()
        }),
        Column::json("daddr", |(k, _)| address(k.family, &k.daddr).into()),
        Column::json("dport", |(k, _)| u32::from(k.dport).into()),
        Column::new("RETRANSMITS", 0, "retransmits", |(_, n)| (*n).into()),
    ])
}

pub fn print_counts(out: &mut Out, args: &Args, skel: &TcpretransSkel) -> Result<()> {
    let mut flows: Vec<(types::flow, Box<u64>)> = maps::drain_as(&skel.maps.flows)?;
    // Ascending, as BCC: the busiest flows end up next to the prompt.
    flows.sort_by(|a, b| {
        a.1.cmp(&b.1)
            .then_with(|| a.0.lport.cmp(&b.0.lport))
            .then_with(|| a.0.dport.cmp(&b.0.dport))
    });
    let table = counts_table(args.common.json);
    if !args.common.json {
        writeln!(out, "\n{}", table.header())?;
    }
    for (k, n) in flows {
        table.row(out, &(k, *n))?;
    }
    Ok(())
}
