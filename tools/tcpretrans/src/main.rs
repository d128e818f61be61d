//! tcpretrans: trace TCP retransmits, read from the socket in the kernel's
//! own tracepoint, so that no kprobe is needed.

use std::io::{self, Write};
use std::net::{Ipv4Addr, Ipv6Addr};

use anyhow::{bail, Context, Result};
use clap::Parser;
use common::cli::{self, CommonArgs, IdList};
use common::filters::Filters;
use common::lifecycle::{self, Banner, Setup, Tool, When};
use common::output::{c_string, Clock, Out};
use common::probe::{self, Hook};
use common::{maps, note};
use libbpf_rs::skel::OpenSkel;
use libbpf_rs::OpenObject;
use serde_json::json;

common::skeleton!("tcpretrans");
use skel::{types, OpenTcpretransSkel, TcpretransSkel, TcpretransSkelBuilder};

// SAFETY: repr(C) structs of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::event {}
// SAFETY: as above.
unsafe impl plain::Plain for types::flow_key {}

const AF_INET: u16 = 2;
const AF_INET6: u16 = 10;
const LOSS_PROBE_FN: &str = "tcp_send_loss_probe";

const EXAMPLES: &str = "\
EXAMPLES:
    tcpretrans              # trace TCP retransmits
    tcpretrans -s           # with the sequence number of each segment
    tcpretrans -c           # count retransmits per flow, print at Ctrl-C
    tcpretrans -4           # IPv4 only
    tcpretrans -p 1234      # sockets of process 1234 only
    tcpretrans --synack     # SYN-ACK retransmits too
    tcpretrans -l           # tail loss probes too (needs fentry or kprobes)
    tcpretrans --json | jq .";

/// Trace TCP retransmits: addresses, ports and the TCP state of each.
///
/// The PID is the socket's owner when this tool saw it connect or send,
/// otherwise the task that happened to run the retransmit (usually 0:
/// retransmits run from timers and softirqs), as in BCC.
#[derive(Parser, Debug)]
#[command(name = "tcpretrans", version, after_help = EXAMPLES)]
struct Args {
    /// Include a SEQ column: the segment's first sequence number
    #[arg(short = 's', long)]
    sequence: bool,
    /// Include tail loss probe attempts (T column L). Needs fentry or a
    /// kprobe on tcp_send_loss_probe: an error where neither exists
    #[arg(short = 'l', long)]
    lossprobe: bool,
    /// Like -l where tail loss probes can be traced; elsewhere, say so on
    /// stderr and trace retransmits without them
    #[arg(long, conflicts_with = "lossprobe")]
    lossprobe_if_available: bool,
    /// Count retransmits per flow in the kernel; print the counts at Ctrl-C
    #[arg(short = 'c', long, conflicts_with = "sequence")]
    count: bool,
    /// Trace IPv4 only
    #[arg(short = '4', long, conflicts_with = "ipv6")]
    ipv4: bool,
    /// Trace IPv6 only
    #[arg(short = '6', long)]
    ipv6: bool,
    /// Print TIME(s), seconds since tracing began, instead of HH:MM:SS
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Sockets owned by these processes only (comma-separated pids): the
    /// owner is known for sockets seen connecting or sending
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Also trace retransmitted SYN-ACKs (on listening sockets)
    #[arg(long)]
    synack: bool,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> std::process::ExitCode {
    lifecycle::main::<Tcpretrans>()
}

struct Tcpretrans {
    args: Args,
    clock: Clock,
    event: types::event,
}

impl Tool for Tcpretrans {
    type Args = Args;
    type Builder = TcpretransSkelBuilder;

    fn new(args: Args) -> Result<Self> {
        Ok(Tcpretrans {
            args,
            clock: Clock::start(),
            event: types::event::default(),
        })
    }

    fn common(&self) -> &CommonArgs {
        &self.args.common
    }

    fn filters(&self) -> Filters {
        Filters {
            pids: self.args.pid.clone().map(|IdList(p)| p),
            ..Filters::default()
        }
    }

    fn configure(&mut self, open: &mut OpenTcpretransSkel<'_>, _: &Setup) -> Result<()> {
        let args = &self.args;
        let rodata = open
            .maps
            .rodata_data
            .as_deref_mut()
            .context("the BPF object has no rodata")?;
        rodata.target_family = if args.ipv4 {
            AF_INET
        } else if args.ipv6 {
            AF_INET6
        } else {
            0
        };
        rodata.count_flows = args.count;
        choose_programs(open.open_object_mut(), args)
    }

    fn banner(&self) -> Banner {
        if self.args.count {
            Banner::Note("Tracing retransmits ... counting per flow. Hit Ctrl-C to end.".into())
        } else {
            Banner::Header {
                header: header(&self.args),
                note: "Tracing retransmits ... Hit Ctrl-C to end.".into(),
            }
        }
    }

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        maps::copy_record(&mut self.event, data);
        print_event(out, &self.args, &self.clock, &self.event)
    }

    fn report(&mut self, skel: &TcpretransSkel<'_>, out: &mut Out, when: When) -> Result<()> {
        if self.args.count && when == When::End {
            print_counts(out, &self.args, skel)?;
        }
        Ok(())
    }

    fn error_note(&self, index: u32) -> Option<&'static str> {
        match types::tcpretrans_error(index) {
            types::tcpretrans_error::ERR_FLOWS_FULL => {
                Some("retransmits not counted: the flow table was full")
            }
            _ => None,
        }
    }
}

/// The variant prefixes of the program kinds, in the object's naming.
fn prefix(hook: Hook) -> &'static str {
    match hook {
        Hook::TpBtf => "tr_btf_",
        Hook::RawTp => "tr_raw_",
        Hook::Tracepoint => "tr_tp_",
        Hook::Fentry => "tr_fentry_",
        Hook::Kprobe => "tr_kprobe_",
        Hook::Uprobe => "tr_uprobe_",
    }
}

/// Picks the retransmit variant and the loss probe hook (if asked for and
/// available), and switches every other program off.
fn choose_programs(obj: &mut OpenObject, args: &Args) -> Result<()> {
    let btf_tp = probe::btf_tracepoint_exists("tcp_retransmit_skb");
    let mut candidates = Vec::new();
    if btf_tp {
        candidates.extend([Hook::TpBtf, Hook::RawTp]);
    }
    if probe::tracepoint_exists("tcp", "tcp_retransmit_skb") {
        candidates.push(Hook::Tracepoint);
    }
    let Some(main) = probe::pick(&candidates) else {
        bail!("this kernel has no tcp:tcp_retransmit_skb tracepoint that BPF can attach to");
    };
    let tlp = if args.lossprobe || args.lossprobe_if_available {
        if probe::fentry_target(LOSS_PROBE_FN) {
            Some(Hook::Fentry)
        } else if probe::kprobe_target(LOSS_PROBE_FN) {
            Some(Hook::Kprobe)
        } else if args.lossprobe {
            bail!(
                "-l needs fentry or a kprobe on {LOSS_PROBE_FN}, and this kernel offers \
                 neither (fentry programs do not load here, or there is no kprobe PMU); \
                 run without -l, or with --lossprobe-if-available to trace retransmits \
                 without tail loss probes"
            );
        } else {
            note!(
                "tail loss probes are not traced: this kernel offers neither fentry \
                 nor a kprobe on {LOSS_PROBE_FN}"
            );
            None
        }
    } else {
        None
    };
    let sendmsg = main != Hook::Tracepoint && probe::btf_tracepoint_exists("tcp_sendmsg_locked");
    let synack = args.synack
        && if main == Hook::Tracepoint {
            probe::tracepoint_exists("tcp", "tcp_retransmit_synack")
        } else {
            probe::btf_tracepoint_exists("tcp_retransmit_synack")
        };
    if args.synack && !synack {
        bail!("--synack needs the tcp:tcp_retransmit_synack tracepoint, which this kernel lacks");
    }
    for mut prog in obj.progs_mut() {
        let name = prog.name().to_string_lossy().into_owned();
        let keep = (name.starts_with(prefix(main))
            && (synack || !name.ends_with("_synack"))
            && (sendmsg || !name.ends_with("_sendmsg")))
            || tlp.is_some_and(|h| name.starts_with(prefix(h)));
        prog.set_autoload(keep);
    }
    Ok(())
}

fn header(args: &Args) -> String {
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
fn address(family: u16, bytes: &[u8; 16]) -> String {
    if family == AF_INET6 {
        Ipv6Addr::from(*bytes).to_string()
    } else {
        Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3]).to_string()
    }
}

/// `addr:port`, with an IPv6 address in brackets (RFC 5952).
fn endpoint(family: u16, bytes: &[u8; 16], port: u16) -> String {
    if family == AF_INET6 {
        format!("[{}]:{port}", address(family, bytes))
    } else {
        format!("{}:{port}", address(family, bytes))
    }
}

/// The kernel's TCP state names, without the TCP_ prefix (as BCC).
fn state_name(state: u32) -> &'static str {
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

fn kind_name(kind: u8) -> (&'static str, char) {
    use types::retrans_kind as K;
    match K(kind.into()) {
        K::KIND_LOSS_PROBE => ("loss_probe", 'L'),
        K::KIND_SYNACK => ("synack", 'R'),
        _ => ("retransmit", 'R'),
    }
}

fn print_event(out: &mut Out, args: &Args, clock: &Clock, e: &types::event) -> io::Result<()> {
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

fn print_counts(out: &mut Out, args: &Args, skel: &TcpretransSkel) -> Result<()> {
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
    use clap::CommandFactory;

    #[test]
    fn arguments_are_well_formed() {
        Args::command().debug_assert();
    }

    #[test]
    fn bad_arguments_are_rejected() {
        for bad in [
            &["tcpretrans", "-4", "-6"][..],
            &["tcpretrans", "-p", "notapid"],
            &["tcpretrans", "-c", "-s"],
            &["tcpretrans", "-l", "--lossprobe-if-available"],
            &["tcpretrans", "5"],
        ] {
            assert!(Args::try_parse_from(bad).is_err(), "{bad:?} was accepted");
        }
    }

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
