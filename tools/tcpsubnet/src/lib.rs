//! tcpsubnet: TCP bytes sent per destination subnet, each interval, in
//! BCC's layout: the first subnet of the list that holds a connection's
//! remote address takes its bytes. IPv6 subnets too, and IPv4 peers of
//! dual-stack sockets under the IPv4 subnets.

mod info;

use std::net::IpAddr;
use std::time::Duration;

use anyhow::Result;
use clap::{Parser, ValueEnum};
use common::cli::{self, CgroupArgs, CommonArgs, IdList, MetricsArgs};
use common::export::prom::Counters;
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::event::{Cell, Column, Table};
use common::kinds::table::{self, Asked, Heading, Timed};
use common::output::{net, Out};
use common::run::lifecycle::{self, Banner, Schedule, Setup, Tool, When};

common::skeleton!("tcpsubnet");
use skel::{types, OpenTcpsubnetProgs, OpenTcpsubnetSkel, TcpsubnetSkel, TcpsubnetSkelBuilder};

const DEFAULT_SUBNETS: &str = "127.0.0.1/32,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,0.0.0.0/0";
const MAX_SUBNETS: usize = 64;

const EXAMPLES: &str = "\
EXAMPLES:
    tcpsubnet                 # TCP bytes sent to the default subnets:
                              # 127.0.0.1/32,10.0.0.0/8,172.16.0.0/12,
                              # 192.168.0.0/16,0.0.0.0/0
    tcpsubnet -f K            # in KBytes
    tcpsubnet 10.80.0.0/24    # to 10.80.0.0/24 only
    tcpsubnet fd00::/8,::/0   # IPv6 subnets
    tcpsubnet -J              # BCC's JSON, an object per interval
    tcpsubnet -i 5 -d 60      # every 5 seconds, for a minute
    tcpsubnet --json | jq .   # a JSON line per subnet and interval";

/// Summarize TCP bytes sent and aggregate them by destination subnet: each
/// connection's bytes go to the first subnet in the list that holds its
/// remote address.
#[derive(Parser, Debug)]
#[command(name = "tcpsubnet", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Comma-separated subnets, IPv4 or IPv6 (ADDR/PREFIX; an address alone
    /// is a host), matched in this order
    #[arg(default_value = DEFAULT_SUBNETS, value_parser = subnet_list)]
    subnets: SubnetList,
    /// Format output in BCC's JSON: an object per interval, with date,
    /// time and entries
    #[arg(short = 'J', conflicts_with = "json")]
    bcc_json: bool,
    /// Unit to report: bits, Kbits, Mbits, bytes, KBytes, MBytes
    #[arg(short = 'f', long, value_enum, default_value_t = Unit::B)]
    format: Unit,
    /// Output interval, in seconds
    #[arg(short = 'i', long, value_parser = cli::seconds, default_value_t = 1)]
    interval: u64,
    /// Total duration of the trace, in seconds
    #[arg(short = 'd', long, value_parser = cli::seconds)]
    duration: Option<u64>,
    /// Only bytes sent by these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    metrics: MetricsArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// BCC's -f: bits, Kbits, Mbits, bytes, KBytes, MBytes.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    #[value(name = "b")]
    Bits,
    #[value(name = "k")]
    Kbits,
    #[value(name = "m")]
    Mbits,
    #[value(name = "B")]
    B,
    #[value(name = "K")]
    K,
    #[value(name = "M")]
    M,
}

impl Unit {
    /// `bytes` in this unit (whole units, as BCC prints them).
    fn of(self, bytes: u64) -> u64 {
        match self {
            Unit::Bits => bytes * 8,
            Unit::Kbits => bytes * 8 / 1024,
            Unit::Mbits => bytes * 8 / 1024 / 1024,
            Unit::B => bytes,
            Unit::K => bytes / 1024,
            Unit::M => bytes / 1024 / 1024,
        }
    }

    fn header(self) -> &'static str {
        match self {
            Unit::Bits => "BITS",
            Unit::Kbits => "KBITS",
            Unit::Mbits => "MBITS",
            Unit::B => "BYTES",
            Unit::K => "KBYTES",
            Unit::M => "MBYTES",
        }
    }
}

/// A subnet as given, and what the kernel side matches.
#[derive(Debug, Clone)]
struct Subnet {
    text: String,
    kernel: types::subnet,
}

#[derive(Debug, Clone)]
struct SubnetList(Vec<Subnet>);

/// `ADDR/PREFIX[,…]`: IPv4 or IPv6, the address's bits past the prefix
/// ignored (as BCC masks them).
fn subnet_list(s: &str) -> Result<SubnetList, String> {
    let list = s
        .split(',')
        .map(|one| {
            let (addr, prefix) = one.split_once('/').unwrap_or((one, ""));
            let addr: IpAddr = addr
                .parse()
                .map_err(|_| format!("'{one}' is not a subnet (ADDR/PREFIX)"))?;
            let max = if addr.is_ipv4() { 32 } else { 128 };
            let prefix: u32 = if prefix.is_empty() {
                max
            } else {
                prefix
                    .parse()
                    .ok()
                    .filter(|p| *p <= max)
                    .ok_or_else(|| format!("'{one}': the prefix is not 0 to {max}"))?
            };
            let (family, bytes) = net::to_bytes(&addr);
            let mut mask = [0u8; 16];
            for (i, m) in mask.iter_mut().enumerate().take(max as usize / 8) {
                let bits = prefix.saturating_sub(8 * i as u32).min(8);
                *m = (0xffu16 << (8 - bits)) as u8;
            }
            let words = |b: [u8; 16]| {
                let mut w = [0u32; 4];
                for (i, w) in w.iter_mut().enumerate() {
                    *w = u32::from_ne_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
                }
                w
            };
            let masked: [u8; 16] = std::array::from_fn(|i| bytes[i] & mask[i]);
            Ok(Subnet {
                text: one.to_string(),
                kernel: types::subnet {
                    addr: words(masked),
                    mask: words(mask),
                    family: family.into(),
                    pad: 0,
                },
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    if list.len() > MAX_SUBNETS {
        return Err(format!("at most {MAX_SUBNETS} subnets"));
    }
    Ok(SubnetList(list))
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Tcpsubnet>();

/// One subnet's bytes in an interval, and what the text shows of them.
struct Row {
    index: usize,
    subnet: String,
    bytes: u64,
    /// In -f's unit.
    shown: u64,
}

pub(crate) struct Tcpsubnet {
    args: Args,
    table: Table<Timed<Row>>,
    /// Each subnet's total at the last report.
    last: Vec<u64>,
    /// Each subnet's names, for the rows' columns.
    names: Vec<String>,
}

impl Tool for Tcpsubnet {
    common::tool_types!(TcpsubnetSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let names = args.subnets.0.iter().map(|s| s.text.clone()).collect();
        Ok(Tcpsubnet {
            table: table(args.common.json, args.format),
            last: vec![0; args.subnets.0.len()],
            names,
            args,
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenTcpsubnetSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        for (slot, s) in rodata.subnets.iter_mut().zip(&self.args.subnets.0) {
            *slot = s.kernel;
        }
        rodata.nr_subnets = self.args.subnets.0.len() as u32;
        choose_programs(&mut open.progs)
    }

    /// -J's objects on stdout: the banner goes to stderr.
    fn machine_readable(&self) -> bool {
        self.args.bcc_json
    }

    fn banner(&self) -> Banner {
        Banner::Note(format!(
            "Tracing... Output every {} secs. Hit Ctrl-C to end",
            self.args.interval
        ))
    }

    fn schedule(&self) -> Schedule {
        Schedule {
            interval: Some(Duration::from_secs(self.args.interval)),
            count: None,
            duration: self.args.duration.map(Duration::from_secs),
        }
    }

    fn interval_table(&self) -> Option<table::Spec<'_>> {
        (!self.args.bcc_json).then(|| table::Spec {
            json: self.args.common.json,
            heading: Heading::Title,
            clear: false,
            max: usize::MAX,
            schedule: self.schedule(),
            last_line: None,
            banner: None,
            metrics: Some(&self.args.metrics),
        })
    }

    fn interval_rows<'s>(
        &'s mut self,
        skel: &TcpsubnetSkel<'_>,
        _: When,
    ) -> Result<Box<dyn table::Print + 's>> {
        let rows = self.added(skel)?;
        let (date, time) = common::output::now_date_and_hms();
        // BCC's order: the most bytes first.
        Ok(Box::new(
            table::Rows::new(rows, &self.table, |a: &Row, b: &Row| {
                b.bytes.cmp(&a.bytes).then(a.index.cmp(&b.index))
            })
            .titled(format!("[{date} {time}]")),
        ))
    }

    fn interval_metrics(&mut self, skel: &TcpsubnetSkel<'_>, asked: Asked) -> Result<Counters> {
        // Right after a report the totals it read will do.
        let totals = match asked {
            Asked::AfterRows => self.last.clone(),
            Asked::Scrape => totals(skel, self.names.len())?,
        };
        Ok(Counters {
            families: vec![(
                "tcpsubnet_sent_bytes",
                "TCP bytes sent, per destination subnet",
                totals
                    .iter()
                    .enumerate()
                    .map(|(i, t)| (vec![("subnet".to_string(), self.names[i].clone())], *t))
                    .collect(),
            )],
        })
    }

    /// -J: BCC's object per interval.
    fn report(&mut self, skel: &TcpsubnetSkel<'_>, out: &mut Out, _: When) -> Result<()> {
        let mut rows = self.added(skel)?;
        rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.index.cmp(&b.index)));
        let (date, time) = common::output::now_date_and_hms();
        let entries: serde_json::Map<String, serde_json::Value> = rows
            .iter()
            .map(|r| (r.subnet.clone(), r.shown.into()))
            .collect();
        let o = serde_json::json!({ "date": date, "time": time, "entries": entries });
        out.json(&o)?;
        Ok(())
    }
}

impl Tcpsubnet {
    /// Each subnet's bytes since the last report (those that sent none
    /// left out): the kernel keeps running totals, so nothing sent while
    /// the report is read is lost.
    fn added(&mut self, skel: &TcpsubnetSkel<'_>) -> Result<Vec<Row>> {
        let totals = totals(skel, self.names.len())?;
        let rows = totals
            .iter()
            .zip(&self.last)
            .enumerate()
            .map(|(index, (t, l))| {
                let bytes = t.saturating_sub(*l);
                Row {
                    index,
                    subnet: self.names[index].clone(),
                    bytes,
                    shown: self.args.format.of(bytes),
                }
            })
            .filter(|r| r.bytes > 0)
            .collect();
        self.last = totals;
        Ok(rows)
    }
}

/// Each subnet's bytes since tracing began.
fn totals(skel: &TcpsubnetSkel<'_>, n: usize) -> Result<Vec<u64>> {
    (0..n as u32)
        .map(|i| maps::percpu_sum_at(&skel.maps.sent, i))
        .collect()
}

/// The socket layer's tracepoint (6.3+), else fexit on tcp_sendmsg, else
/// a kprobe and kretprobe on it.
fn choose_programs(p: &mut OpenTcpsubnetProgs) -> Result<()> {
    let socket = probe::btf_tracepoint_exists("sock_send_length")
        && probe::pick(&[probe::Hook::TpBtf]).is_some();
    let fexit = !socket && probe::fentry_target("tcp_sendmsg");
    let kprobe = !socket && !fexit && probe::kprobe_target("tcp_sendmsg");
    if !(socket || fexit || kprobe) {
        anyhow::bail!(
            "this kernel has neither the sock:sock_send_length tracepoint (Linux 6.3+) \
             nor fentry or kprobes on tcp_sendmsg: tcpsubnet has nothing to count bytes at"
        );
    }
    probe::load_when(socket, [&mut p.ts_send_btf]);
    probe::load_when(fexit, [&mut p.ts_fexit_send]);
    probe::load_when(kprobe, [&mut p.ts_kprobe_send, &mut p.ts_kretprobe_send]);
    Ok(())
}

/// BCC's `%-21s %6d`, under a header of ours (SUBNET and the unit).
fn table(json: bool, unit: Unit) -> Table<Timed<Row>> {
    Table::new(json).columns([
        Column::json("time", |t: &Timed<Row>| Cell::Text(t.time.as_str().into())),
        Column::new("SUBNET", 21, "subnet", |t: &Timed<Row>| {
            Cell::Text(t.row.subnet.as_str().into())
        }),
        Column::right(unit.header(), 6, "", |t: &Timed<Row>| t.row.shown.into()),
        Column::json("bytes", |t: &Timed<Row>| t.row.bytes.into()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subnets_parse_with_their_masks() {
        let l = subnet_list("10.1.2.3/8,::1,fd00::/9").unwrap().0;
        assert_eq!(l.len(), 3);
        assert_eq!(l[0].kernel.addr[0].to_ne_bytes(), [10, 0, 0, 0]);
        assert_eq!(l[0].kernel.mask[0].to_ne_bytes(), [255, 0, 0, 0]);
        assert_eq!(l[0].kernel.mask[1], 0);
        assert_eq!(l[1].kernel.mask, [u32::MAX; 4]);
        assert_eq!(l[2].kernel.mask[0].to_ne_bytes(), [255, 128, 0, 0]);
        assert_eq!(l[2].kernel.addr[0].to_ne_bytes(), [0xfd, 0, 0, 0]);
        assert_eq!(l[2].kernel.family, 10);
    }

    #[test]
    fn bad_subnets_are_named() {
        assert!(subnet_list("10.0.0.0/33")
            .unwrap_err()
            .contains("10.0.0.0/33"));
        assert!(subnet_list("nonsense").unwrap_err().contains("nonsense"));
        let many = vec!["10.0.0.0/8"; 65].join(",");
        assert!(subnet_list(&many).is_err());
    }

    #[test]
    fn units_are_bccs() {
        assert_eq!(Unit::Bits.of(1024), 8192);
        assert_eq!(Unit::Kbits.of(1024), 8);
        assert_eq!(Unit::K.of(4096), 4);
        assert_eq!(Unit::M.of(3 << 20), 3);
    }

    #[test]
    fn rows_are_bccs_under_a_header() {
        let t = table(false, Unit::B);
        assert_eq!(t.header(), format!("{:<21} {:>6}", "SUBNET", "BYTES"));
        let row = Timed {
            time: "12:00:00".into(),
            row: Row {
                index: 0,
                subnet: "127.0.0.1/32".into(),
                bytes: 8,
                shown: 8,
            },
        };
        assert_eq!(
            String::from_utf8(t.render(&row).unwrap()).unwrap(),
            format!("{:<21} {:>6}", "127.0.0.1/32", 8)
        );
    }
}
