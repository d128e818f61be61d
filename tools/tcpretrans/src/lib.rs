//! tcpretrans: trace TCP retransmits, read from the socket in the kernel's
//! own tracepoint, so that no kprobe is needed.

mod info;
mod metrics;
mod print;

use std::io;

use anyhow::{bail, Result};
use clap::Parser;
use common::cli::{self, CgroupLongArgs, CommonArgs, ContainerArgs, FamilyArgs, IdList};
use common::export::prom::Exporter;
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, Hook};
use common::kinds::event::{Record, Table};
use common::note;
use common::output::Out;
use common::run::lifecycle::{self, Banner, Setup, Tool, When};
use common::usage::usage;

common::skeleton!("tcpretrans");
use skel::{types, OpenTcpretransProgs, OpenTcpretransSkel, TcpretransSkel, TcpretransSkelBuilder};

common::event_record!(types::event, types::task_header);
// SAFETY: a repr(C) struct of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::flow {}

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
    #[arg(short = 'c', long, conflicts_with_all = ["sequence", "containers"])]
    count: bool,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    #[command(flatten)]
    family: FamilyArgs,
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
    metrics: cli::MetricsArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Tcpretrans>();

pub(crate) struct Tcpretrans {
    args: Args,
    event: Record<types::event>,
    table: Table<Tcpretrans>,
    exporter: Option<Exporter>,
    retransmits: metrics::Retransmits,
}

impl Tool for Tcpretrans {
    common::tool_types!(TcpretransSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        if args.count && (args.metrics.prometheus.is_some() || args.metrics.prom_file.is_some()) {
            return Err(usage(
                "-c counts in the kernel and prints at the end: metrics come from the \
                 retransmits as they are traced, without -c",
            ));
        }
        let exporter = args.metrics.exporter()?;
        Ok(Tcpretrans {
            table: print::table(&args).containers(containers),
            args,
            event: Record::new(containers),
            exporter,
            retransmits: metrics::Retransmits::default(),
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            cgroup: self.args.cgroup.path(),
            family: self.args.family.family(),
            ..Filters::pids(&self.args.pid)
        }
    }

    fn configure(&mut self, open: &mut OpenTcpretransSkel<'_>, _: &Setup) -> Result<()> {
        let args = &self.args;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.count_flows = args.count;
        choose_programs(&mut open.progs, args)
    }

    fn banner(&self) -> Banner {
        if self.args.count {
            Banner::Note("Tracing retransmits ... counting per flow. Hit Ctrl-C to end.".into())
        } else {
            Banner::Header {
                header: self.table.header(),
                note: Self::INFO.banner.into(),
            }
        }
    }

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        self.event.read(data);
        if self.exporter.is_some() {
            self.retransmits.add(&self.event);
        }
        self.table.row(out, self)
    }

    fn extra_fd(&self) -> Option<std::os::fd::RawFd> {
        self.exporter.as_ref().and_then(Exporter::fd)
    }

    fn extra_ready(&mut self, _: &TcpretransSkel<'_>) -> Result<()> {
        match &self.exporter {
            Some(exporter) => exporter.serve(|| self.retransmits.encode()),
            None => Ok(()),
        }
    }

    fn idle(&mut self) -> bool {
        if let Some(exporter) = &self.exporter {
            if let Err(e) = self.retransmits.write_file(exporter, false) {
                note!("{e:#}");
            }
        }
        false
    }

    fn report(&mut self, skel: &TcpretransSkel<'_>, out: &mut Out, when: When) -> Result<()> {
        if self.args.count && when == When::End {
            print::print_counts(out, &self.args, skel)?;
        }
        if let (Some(exporter), When::End) = (&self.exporter, when) {
            self.retransmits.write_file(exporter, true)?;
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

common::stamped_by_record!(Tcpretrans);

/// Picks the retransmit variant and the loss probe hook (if asked for and
/// available), and switches every other program off.
fn choose_programs(p: &mut OpenTcpretransProgs, args: &Args) -> Result<()> {
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
    let (btf, raw, tp) = (
        main == Hook::TpBtf,
        main == Hook::RawTp,
        main == Hook::Tracepoint,
    );
    probe::load_when(btf, [&mut p.tr_btf_retransmit, &mut p.state_btf]);
    probe::load_when(raw, [&mut p.tr_raw_retransmit, &mut p.state_raw]);
    probe::load_when(tp, [&mut p.tr_tp_retransmit, &mut p.state_tp]);
    probe::load_when(btf && synack, [&mut p.tr_btf_synack]);
    probe::load_when(raw && synack, [&mut p.tr_raw_synack]);
    probe::load_when(tp && synack, [&mut p.tr_tp_synack]);
    probe::load_when(btf && sendmsg, [&mut p.tr_btf_sendmsg]);
    probe::load_when(raw && sendmsg, [&mut p.tr_raw_sendmsg]);
    probe::load_when(tlp == Some(Hook::Fentry), [&mut p.tr_fentry_tlp]);
    probe::load_when(tlp == Some(Hook::Kprobe), [&mut p.tr_kprobe_tlp]);
    Ok(())
}
