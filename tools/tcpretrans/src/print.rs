//! How a retransmit is printed: the table row or JSON object, and -c's
//! per-flow counts.

use std::io::{self, Write};
use std::net::{Ipv4Addr, Ipv6Addr};

use anyhow::Result;
use common::maps;
use common::output::{c_string, Clock, Out};
use serde_json::json;

use crate::skel::{types, TcpretransSkel};
use crate::Args;

/// Address families as the kernel (and the event) number them: the C
/// library's constants, not copies of the BPF side's.
pub const AF_INET: u16 = libc::AF_INET as u16;
pub const AF_INET6: u16 = libc::AF_INET6 as u16;

pub fn header(args: &Args) -> String {
    let time = if args.timestamp { "TIME(s)" } else { "TIME" };
    let h = format!(
        "{time:<8} {:<7} {:<2} {:<20} T> {:<20} ",
        "PID", "IP", "LADDR:LPORT", "RADDR:RPORT"
    );
    if args.sequence {
        h + &format!("{:<12} SEQ", "STATE")
    } else {
        h + "STATE"
    }
}

/// An address from the kernel's 16 bytes, in its standard text form.
pub fn address(family: u16, bytes: &[u8; 16]) -> String {
    if family == AF_INET6 {
        Ipv6Addr::from(*bytes).to_string()
    } else {
        Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3]).to_string()
    }
}

/// `addr:port`, with an IPv6 address in brackets (RFC 5952).
pub fn endpoint(family: u16, bytes: &[u8; 16], port: u16) -> String {
    if family == AF_INET6 {
        format!("[{}]:{port}", address(family, bytes))
    } else {
        format!("{}:{port}", address(family, bytes))
    }
}

/// The kernel's TCP state names, without the TCP_ prefix (as BCC).
pub fn state_name(state: u32) -> &'static str {
    match state {
        1 => "ESTABLISHED",
        2 => "SYN_SENT",
        3 => "SYN_RECV",
        4 => "FIN_WAIT1",
        5 => "FIN_WAIT2",
        6 => "TIME_WAIT",
        7 => "CLOSE",
        8 => "CLOSE_WAIT",
        9 => "LAST_ACK",
        10 => "LISTEN",
        11 => "CLOSING",
        12 => "NEW_SYN_RECV",
        _ => "UNKNOWN",
    }
}

pub fn kind_name(kind: u8) -> (&'static str, char) {
    use types::retrans_kind as K;
    match K(kind.into()) {
        K::KIND_LOSS_PROBE => ("loss_probe", 'L'),
        K::KIND_SYNACK => ("synack", 'R'),
        _ => ("retransmit", 'R'),
    }
}

pub fn print_event(out: &mut Out, args: &Args, clock: &Clock, e: &types::event) -> io::Result<()> {
    let ip = if e.family == AF_INET6 { 6 } else { 4 };
    let (kind, letter) = kind_name(e.kind);
    if args.common.json {
        return out.json(&json!({
            "time": clock.hms(e.ts_ns),
            "ts": clock.elapsed(e.ts_ns),
            "pid": e.pid,
            "owner_known": e.owner_known != 0,
            "comm": c_string(&e.comm),
            "ip": ip,
            "saddr": address(e.family, &e.saddr),
            "lport": e.lport,
            "daddr": address(e.family, &e.daddr),
            "dport": e.dport,
            "type": letter.to_string(),
            "kind": kind,
            "state": state_name(e.state),
            "seq": e.seq,
        }));
    }
    if args.timestamp {
        write!(out, "{:<8.6} ", clock.elapsed(e.ts_ns))?;
    } else {
        write!(out, "{:<8} ", clock.hms(e.ts_ns))?;
    }
    write!(
        out,
        "{:<7} {:<2} {:<20} {letter}> {:<20} ",
        e.pid,
        ip,
        endpoint(e.family, &e.saddr, e.lport),
        endpoint(e.family, &e.daddr, e.dport),
    )?;
    if args.sequence {
        writeln!(out, "{:<12} {}", state_name(e.state), e.seq)
    } else {
        writeln!(out, "{}", state_name(e.state))
    }
}

pub fn print_counts(out: &mut Out, args: &Args, skel: &TcpretransSkel) -> Result<()> {
    let mut flows: Vec<(types::flow_key, Box<u64>)> = maps::drain_as(&skel.maps.flows)?;
    // Ascending, as BCC: the busiest flows end up next to the prompt.
    flows.sort_by(|a, b| {
        a.1.cmp(&b.1)
            .then_with(|| a.0.lport.cmp(&b.0.lport))
            .then_with(|| a.0.dport.cmp(&b.0.dport))
    });
    if !args.common.json {
        writeln!(
            out,
            "\n{:<25} {:<25} RETRANSMITS",
            "LADDR:LPORT", "RADDR:RPORT"
        )?;
    }
    for (k, n) in &flows {
        if args.common.json {
            out.json(&json!({
                "ip": if k.family == AF_INET6 { 6 } else { 4 },
                "saddr": address(k.family, &k.saddr),
                "lport": k.lport,
                "daddr": address(k.family, &k.daddr),
                "dport": k.dport,
                "retransmits": **n,
            }))?;
        } else {
            writeln!(
                out,
                "{:<25} {:<25} {}",
                endpoint(k.family, &k.saddr, k.lport),
                endpoint(k.family, &k.daddr, k.dport),
                n
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_print_in_standard_form() {
        let mut v4 = [0u8; 16];
        v4[..4].copy_from_slice(&[10, 0, 0, 1]);
        assert_eq!(endpoint(AF_INET, &v4, 22), "10.0.0.1:22");
        let mut v6 = [0u8; 16];
        v6[15] = 1;
        assert_eq!(endpoint(AF_INET6, &v6, 80), "[::1]:80");
        let db8: [u8; 16] = "2001:db8:0:0:1:0:0:1".parse::<Ipv6Addr>().unwrap().octets();
        assert_eq!(address(AF_INET6, &db8), "2001:db8::1:0:0:1");
    }
}
