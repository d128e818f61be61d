//! bindsnoop: bind() of IPv4 and IPv6 sockets, each at its return, in
//! BCC's layout: who binds which address and port, with which protocol and
//! socket options, on which interface; failures too with -E. From the
//! call's tracepoints: no kprobe or fentry needed.

mod info;

use std::io::Write;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, FamilyArgs, IdList, PortList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, load_when};
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::net::{address, ip_version, AF_INET};
use common::output::Out;
use common::run::lifecycle::{self, Banner, Schedule, Setup, Tool, When};

common::skeleton!("bindsnoop");
use skel::{types, BindsnoopSkel, BindsnoopSkelBuilder, OpenBindsnoopSkel};

common::event_record!(types::event, types::task_header);
// SAFETY: a repr(C) struct of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::count_key {}

const EXAMPLES: &str = "\
EXAMPLES:
    bindsnoop             # trace every bind() of an IPv4 or IPv6 socket
    bindsnoop -t          # with a TIME(s) column
    bindsnoop -w          # wider columns (IPv6 addresses fit)
    bindsnoop -p 181      # only binds by process 181
    bindsnoop -P 80,81    # only binds to port 80 or 81
    bindsnoop -E          # failed binds too, with their error (-x too)
    bindsnoop -U          # with a UID column
    bindsnoop -u 1000     # only binds by uid 1000
    bindsnoop --count     # count binds per address and port; print at the end
    bindsnoop -c /sys/fs/cgroup/system.slice/nginx.service
    bindsnoop --json | jq .

OPTS shows the socket options that change what bind() does:
    SOL_IP     IP_FREEBIND              F....
    SOL_IP     IP_TRANSPARENT           .T...
    SOL_IP     IP_BIND_ADDRESS_NO_PORT  ..N..
    SOL_SOCKET SO_REUSEADDR             ...R.
    SOL_SOCKET SO_REUSEPORT             ....r
IF is the interface SO_BINDTODEVICE bound the socket to (its index; 0: none).";

/// Trace bind() of IPv4 and IPv6 sockets: the address and port bound, the
/// protocol, the socket options that change bind(), the interface and the
/// result.
#[derive(Parser, Debug)]
#[command(name = "bindsnoop", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Include a TIME(s) column: seconds since the first bind shown
    #[arg(short = 't', long)]
    timestamp: bool,
    /// Wider columns: IPv6 addresses fit, errors described
    #[arg(short = 'w', long)]
    wide: bool,
    /// Only binds by these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Only binds to these ports (comma-separated)
    #[arg(short = 'P', long, value_name = "PORTS", value_parser = cli::port_list)]
    port: Option<PortList>,
    /// Failed binds too, with an RC column: the error (libbpf-tools' -x)
    #[arg(short = 'E', long, visible_alias = "failed", short_alias = 'x')]
    errors: bool,
    /// Include a UID column
    #[arg(short = 'U', long = "print-uid")]
    print_uid: bool,
    /// Only binds by this user (a uid or a user name)
    #[arg(short = 'u', long, value_parser = cli::uid)]
    uid: Option<u32>,
    /// Count binds per local address and port; print the counts at the end
    #[arg(long, conflicts_with_all = ["containers", "timestamp"])]
    count: bool,
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

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Bindsnoop>();

pub(crate) struct Bindsnoop {
    args: Args,
    event: Record<types::event>,
    table: Table<Bindsnoop>,
}

/// The options of BCC's OPTS column, in its order, by their bits
/// (sockets.bpf.h's BIND_OPT_*).
const OPTIONS: [(char, u8, &str); 5] = [
    ('F', 1, "IP_FREEBIND"),
    ('T', 2, "IP_TRANSPARENT"),
    ('N', 4, "IP_BIND_ADDRESS_NO_PORT"),
    ('R', 8, "SO_REUSEADDR"),
    ('r', 16, "SO_REUSEPORT"),
];

/// `...R.`: each option's letter where it is set.
fn opts_column(bits: u8) -> String {
    OPTIONS
        .iter()
        .map(|(c, bit, _)| if bits & bit != 0 { *c } else { '.' })
        .collect()
}

/// `SO_REUSEADDR|SO_REUSEPORT` (JSON); empty where none.
fn opts_names(bits: u8) -> String {
    let names: Vec<&str> = OPTIONS
        .iter()
        .filter(|(_, bit, _)| bits & bit != 0)
        .map(|(_, _, name)| *name)
        .collect();
    names.join("|")
}

/// An IP protocol's name, as BCC names it (Python's IPPROTO_*).
fn protocol(p: u16) -> &'static str {
    match p {
        0 => "IP",
        1 => "ICMP",
        6 => "TCP",
        17 => "UDP",
        58 => "ICMPV6",
        132 => "SCTP",
        136 => "UDPLITE",
        255 => "RAW",
        262 => "MPTCP",
        _ => "UNKNOWN",
    }
}

impl Tool for Bindsnoop {
    common::tool_types!(BindsnoopSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Bindsnoop {
            table: table(&args).containers(containers),
            args,
            event: Record::new(containers),
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            uid: self.args.uid,
            lports: self.args.port.clone(),
            family: self.args.family.family(),
            ..Filters::processes(&self.args.pid, self.args.cgroup.path())
        }
    }

    fn configure(&mut self, open: &mut OpenBindsnoopSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.show_errors = self.args.errors;
        rodata.count_binds = self.args.count;
        rodata.current_task_btf = probe::current_task_btf();
        rodata.rdonly_cast = probe::rdonly_cast();
        let own = probe::own_call_tracepoints(&mut rodata.nr_calls, [libc::SYS_bind]);
        let p = &mut open.progs;
        load_when(!own, [&mut p.bind_btf_enter, &mut p.bind_btf_exit]);
        load_when(own, [&mut p.bind_enter_bind, &mut p.bind_exit_bind]);
        Ok(())
    }

    common::event_kind!();

    fn banner(&self) -> Banner {
        if self.args.count {
            Banner::Note(Self::INFO.banner.into())
        } else {
            Banner::Header {
                header: self.table.header(),
                note: Self::INFO.banner.into(),
            }
        }
    }

    fn schedule(&self) -> Schedule {
        Schedule::lasting(self.args.duration)
    }

    fn report(&mut self, skel: &BindsnoopSkel<'_>, out: &mut Out, when: When) -> Result<()> {
        if self.args.count && when == When::End {
            print_counts(out, self.args.common.json, skel)?;
        }
        Ok(())
    }

    fn error_note(&self, index: u32) -> Option<&'static str> {
        match types::bindsnoop_error(index) {
            types::bindsnoop_error::ERR_COUNTS_FULL => {
                Some("binds not counted: the count table (10240 entries) was full")
            }
            _ => None,
        }
    }
}

common::stamped_by_record!(Bindsnoop);

impl Bindsnoop {
    /// The error, where the bind failed.
    fn errno(&self) -> Option<i32> {
        (self.event.ret < 0).then_some(-self.event.ret)
    }

    /// RC: 0, or the error's name (-w: its description too).
    fn rc(&self, wide: bool) -> String {
        match self.errno() {
            None => "0".into(),
            Some(e) => {
                let name = common::errnos::name(e).map_or_else(|| (-e).to_string(), String::from);
                if wide {
                    let text = std::io::Error::from_raw_os_error(e).to_string();
                    let text = text.split(" (os error").next().unwrap_or_default();
                    format!("{name}: {text}")
                } else {
                    name
                }
            }
        }
    }
}

/// BCC's `[TIME(s)] [UID] [RC] PID COMM PROT ADDR PORT OPTS IF`; with -w
/// its wider PID and ADDR (and RC).
fn table(args: &Args) -> Table<Bindsnoop> {
    let wide = args.wide;
    Table::<Bindsnoop>::new(args.common.json)
        .column(args.timestamp, columns::since_first::<_, 6>(9))
        .column(false, columns::ts())
        .column(
            args.print_uid,
            Column::right("UID", 6, "uid", |t: &Bindsnoop| t.event.uid.into()),
        )
        .column(
            args.errors && !wide,
            Column::new("RC", 13, "", |t: &Bindsnoop| t.rc(false).into()),
        )
        .column(
            args.errors && wide,
            Column::new("RC", 36, "", |t: &Bindsnoop| t.rc(true).into()),
        )
        .columns([
            Column::json("ret", |t: &Bindsnoop| t.event.ret.into()),
            Column::json("error", |t: &Bindsnoop| {
                t.errno()
                    .and_then(common::errnos::name)
                    .map_or(Cell::Null, Cell::from)
            })
            .optional(),
            if wide {
                columns::pid(10)
            } else {
                columns::pid(8)
            }
            .right_aligned(),
            columns::tid(0).json_only(),
            columns::cgroup_id(),
            columns::comm("COMM", 12),
            Column::new("PROT", 4, "protocol", |t: &Bindsnoop| {
                protocol(t.event.protocol).into()
            }),
            Column::json("ip", |t: &Bindsnoop| {
                u32::from(ip_version(t.event.family)).into()
            }),
            Column::new(
                "ADDR",
                if wide { 39 } else { 15 },
                "addr",
                |t: &Bindsnoop| address(t.event.family, &t.event.addr).into(),
            ),
            Column::right("PORT", 5, "port", |t: &Bindsnoop| t.event.port.into()),
            Column::new("OPTS", 5, "", |t: &Bindsnoop| {
                opts_column(t.event.opts).into()
            }),
            Column::json("options", |t: &Bindsnoop| opts_names(t.event.opts).into()),
            Column::json("netns", |t: &Bindsnoop| t.event.netns.into()),
            Column::json("latency_ns", |t: &Bindsnoop| t.event.latency_ns.into()),
            Column::right("IF", 0, "if", |t: &Bindsnoop| t.event.bound_dev_if.into()),
        ])
}

/// --count's table: one row per local address and port, IPv4 first, each
/// family's busiest first (BCC's).
fn counts_table(json: bool) -> Table<(types::count_key, u64)> {
    Table::<(types::count_key, u64)>::new(json).columns([
        Column::json("ip", |(k, _)| u32::from(ip_version(k.family)).into()),
        Column::new("LADDR", 32, "addr", |(k, _)| {
            address(k.family, &k.addr).into()
        }),
        Column::right("LPORT", 20, "port", |(k, _)| k.port.into()),
        Column::new("BINDS", 0, "binds", |(_, n)| (*n).into()),
    ])
}

fn print_counts(out: &mut Out, json: bool, skel: &BindsnoopSkel) -> Result<()> {
    let mut counts: Vec<(types::count_key, Box<u64>)> = maps::drain_as(&skel.maps.counts)?;
    counts.sort_by(|a, b| {
        (a.0.family != AF_INET)
            .cmp(&(b.0.family != AF_INET))
            .then_with(|| b.1.cmp(&a.1))
            .then_with(|| a.0.port.cmp(&b.0.port))
    });
    let table = counts_table(json);
    if !json {
        writeln!(out, "\n{}", table.header())?;
    }
    for (k, n) in counts {
        table.row(out, &(k, *n))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_bccs() {
        let h = |args: &[&str]| table(&Args::try_parse_from(args).unwrap()).header();
        assert_eq!(
            h(&["bindsnoop"]),
            "     PID COMM         PROT ADDR             PORT OPTS  IF"
        );
        assert_eq!(
            h(&["bindsnoop", "-tUE"]),
            "TIME(s)      UID RC                 PID COMM         PROT ADDR             PORT OPTS  IF"
        );
        assert_eq!(
            counts_table(false).header(),
            format!("{:<32} {:>20} BINDS", "LADDR", "LPORT")
        );
    }

    #[test]
    fn options_read_as_bcc_shows_them() {
        assert_eq!(opts_column(0), ".....");
        assert_eq!(opts_column(8 | 16), "...Rr");
        assert_eq!(opts_column(1 | 4), "F.N..");
        assert_eq!(opts_names(8 | 16), "SO_REUSEADDR|SO_REUSEPORT");
        assert_eq!(opts_names(0), "");
    }

    #[test]
    fn libbpf_tools_x_is_e() {
        assert!(Args::try_parse_from(["bindsnoop", "-x"]).unwrap().errors);
        assert!(
            Args::try_parse_from(["bindsnoop", "--failed"])
                .unwrap()
                .errors
        );
    }
}
