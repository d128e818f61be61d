//! trace: a line per hit of each probe (user functions and their returns,
//! USDT probes, tracepoints, kernel functions), with a message formatted
//! from its arguments, return value or fields, and an optional filter: BCC's
//! trace, with its probe syntax, where no compiler runs at trace time. The
//! kernel side reads what the formats and filters name (arguments, the
//! record, strings where they point, stacks); comparisons with constants
//! are made there, the rest of a filter here.

mod info;

use std::collections::HashMap;
use std::io::{self, Write};
use std::rc::Rc;

use anyhow::Result;
use clap::Parser;
use common::cli::{CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::filters::Filters;
use common::kinds::event::{columns, Cell, Column, Record, Stamped, Table};
use common::output::Out;
use common::probes::expr::{Expr, IntType, Value};
use common::run::lifecycle::{self, Setup, Tool, When};
use common::sym::{trim_tracing_frames, Frame, Symbolizer};
use libbpf_rs::Link;

use common::probes::hits::{self, Points, Settings};
use common::probes::skel::{types, OpenTraceSkel, TraceSkel, TraceSkelBuilder};
use common::probes::spec::{Conv, Piece, TraceProbe};

const EXAMPLES: &str = "\
EXAMPLES:
    trace 'c:malloc \"size = %d\", arg1'            # each malloc() and its size
    trace 'c:open (arg2 == 42) \"%s %d\", arg1, arg2'  # opens with flags 42
    trace 'r:c:malloc (retval) \"allocated = %x\", retval'
    trace 'p:c:write(int fd, char *buf, size_t n) (fd == 1) \"%d bytes\", n'
    trace 't:syscalls:sys_enter_openat \"%s\", args->filename'
    trace 'u:/usr/bin/app:request__start \"%d\", arg1'   # a USDT probe
    trace -p 181 -U 'c:free'                   # with the user stack of each
    trace 'r::do_sys_openat2 \"%d\", retval'     # a kernel function (kprobes)
    trace -M 10 -t 'c:malloc' 'c:free'           # two probes, 10 lines, times
    trace 'c:open (STRCMP(\"/etc/passwd\", arg1))'   # a string filter";

/// Trace calls and events, a line each, with a formatted message.
#[derive(Parser, Debug)]
#[command(name = "trace", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Pages of the event buffer per CPU (the ring's size is their total)
    #[arg(short = 'b', long, value_name = "PAGES", default_value_t = 64,
          value_parser = clap::value_parser!(u32).range(1..=65536))]
    buffer_pages: u32,
    /// Only this process
    #[arg(short = 'p', long, conflicts_with = "tid")]
    pid: Option<u32>,
    /// Only this thread
    #[arg(short = 'L', long)]
    tid: Option<u32>,
    /// Only this user id
    #[arg(long)]
    uid: Option<u32>,
    /// Bytes read of each string (at most 256)
    #[arg(short = 'Z', long, value_name = "STRING_SIZE", default_value_t = 80,
          value_parser = clap::value_parser!(u32).range(1..=256))]
    string_size: u32,
    /// Trace this tool's own process too
    #[arg(short = 'S', long)]
    include_self: bool,
    /// Exit after this many lines
    #[arg(short = 'M', long, value_name = "MAX_EVENTS",
          value_parser = clap::value_parser!(u64).range(1..))]
    max_events: Option<u64>,
    /// Print a TIME column: seconds since tracing started
    #[arg(short = 't', long)]
    timestamp: bool,
    /// With -t: seconds since the epoch
    #[arg(short = 'u', long, requires = "timestamp")]
    unix_timestamp: bool,
    /// Print a TIME column: the time of day (HH:MM:SS)
    #[arg(short = 'T', long)]
    time: bool,
    /// Print a CPU column
    #[arg(short = 'C', long, visible_alias = "print_cpu")]
    print_cpu: bool,
    #[command(flatten)]
    cgroup: CgroupArgs,
    /// Only processes whose name contains NAME
    #[arg(short = 'n', long)]
    name: Option<String>,
    /// Only lines whose message contains MSG_FILTER
    #[arg(short = 'f', long, value_name = "MSG_FILTER")]
    msg_filter: Option<String>,
    /// Accepted as BCC's (STRCMP compares bytes, so binary values too)
    #[arg(short = 'B', long, visible_alias = "bin_cmp")]
    bin_cmp: bool,
    /// Accepted as BCC's: symbols are found through each process's maps
    #[arg(
        short = 's',
        long,
        visible_alias = "sym_file_list",
        value_name = "SYM_FILE_LIST"
    )]
    sym_file_list: Option<String>,
    /// Print the kernel stack of each hit
    #[arg(short = 'K', long)]
    kernel_stack: bool,
    /// Print the user stack of each hit (frame pointers)
    #[arg(short = 'U', long)]
    user_stack: bool,
    /// Print each frame's address in stacks
    #[arg(short = 'a', long)]
    address: bool,
    /// Accepted as BCC's and ignored: types come from the signature and
    /// the tracepoint's format
    #[arg(short = 'I', long, value_name = "HEADER")]
    include: Vec<String>,
    /// Count identical lines and print them with their counts at the end
    /// (needs -M)
    #[arg(short = 'A', long, requires = "max_events")]
    aggregate: bool,
    #[command(flatten)]
    containers: ContainerArgs,
    /// PROBE [(SIGNATURE)] [(FILTER)] ["FORMAT"[, VALUES]]: PROBE is
    /// [p:|r:]LIB:FUNC, u:LIB:PROBE, t:CATEGORY:EVENT, FUNC or r::FUNC
    #[arg(value_name = "PROBE", required = true)]
    probes: Vec<String>,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Trace>();

pub(crate) struct Trace {
    args: Args,
    /// Shared, so that an event borrows its probe while the tool formats.
    probes: Rc<[TraceProbe]>,
    points: Points,
    event: Record<types::tr_event>,
    table: Table<Trace>,
    symbolizer: Symbolizer,
    /// The current hit's probe (an index into `probes`), message and stacks.
    current: usize,
    /// Raw: the traced strings as they were (escaped in text).
    message: Vec<u8>,
    kstack: Vec<String>,
    ustack: Vec<String>,
    printed: u64,
    /// -A: each line (with its stacks) and its count, in first-seen order.
    aggregated: Vec<(String, u64)>,
    seen: HashMap<String, usize>,
}

impl Trace {
    fn eval<'a>(&'a self, p: &'a TraceProbe, e: &'a Expr) -> Value<'a> {
        hits::eval(p, e, &self.event, self.args.string_size as usize)
    }

    /// The message of the current hit of `p`, into `message` (its buffer
    /// kept from hit to hit).
    fn format(&mut self, p: &TraceProbe) {
        let mut out = std::mem::take(&mut self.message);
        out.clear();
        let mut values = p.values.iter();
        for piece in &p.format {
            match piece {
                Piece::Text(t) => out.extend_from_slice(t.as_bytes()),
                Piece::Conv(c) => {
                    let Some(v) = values.next() else { break };
                    let text: std::borrow::Cow<'_, [u8]> = match self.eval(p, v) {
                        Value::Str(s) if c.conv == 's' => s.to_vec().into(),
                        v => {
                            let v = v.int();
                            let text = match c.conv {
                                'K' => self.ksym(v as u64),
                                'U' => self.usym(v as u64),
                                _ => convert(c, v),
                            };
                            text.into_bytes().into()
                        }
                    };
                    pad(&mut out, c, &text);
                }
            }
        }
        self.message = out;
    }

    fn ksym(&mut self, addr: u64) -> String {
        self.symbolizer
            .kernel(&[addr])
            .first()
            .map_or_else(|| format!("{addr:#x}"), |f| f.label(true))
    }

    fn usym(&mut self, addr: u64) -> String {
        let pid = self.event.stamps().head().pid;
        self.symbolizer
            .user(pid, &[addr])
            .first()
            .map_or_else(|| format!("{addr:#x}"), |f| f.long_label())
    }

    fn stacks(&mut self) {
        // Fields borrowed apart: the record's addresses, the symbolizer.
        let e = &*self.event;
        let kaddrs = &e.kstack[..(e.kframes as usize).min(e.kstack.len())];
        let uaddrs = common::sym::insert_caller(
            &e.ustack[..(e.uframes as usize).min(e.ustack.len())],
            e.entry_caller,
        );
        let addr = self.args.address;
        let show = |f: &Frame, label: String| {
            if addr {
                format!("{:16x} {label}", f.addr)
            } else {
                label
            }
        };
        if self.args.kernel_stack {
            let frames = self.symbolizer.kernel(kaddrs);
            self.kstack = trim_tracing_frames(&frames)
                .iter()
                .map(|f| show(f, format!("{} [kernel]", f.label(true))))
                .collect();
        }
        if self.args.user_stack {
            let pid = self.event.stamps().head().pid;
            let frames: Vec<Rc<Frame>> = self.symbolizer.user(pid, &uaddrs);
            self.ustack = frames.iter().map(|f| show(f, f.long_label())).collect();
        }
    }

    fn stack_lines(&self) -> String {
        let mut s = String::new();
        if self.args.kernel_stack {
            if self.kstack.is_empty() {
                s.push_str("        [Missed Kernel Stack]\n");
            }
            for f in &self.kstack {
                s.push_str(&format!("        {f}\n"));
            }
        }
        if self.args.user_stack {
            if self.ustack.is_empty() {
                s.push_str("        [Missed User Stack]\n");
            }
            for f in &self.ustack {
                s.push_str(&format!("        {f}\n"));
            }
        }
        s
    }

    fn done(&self) -> bool {
        self.args.max_events.is_some_and(|m| self.printed >= m)
    }
}

/// An integer as a conversion shows it: C's types by the length modifier.
fn convert(c: &Conv, v: i64) -> String {
    let t = |signed| IntType {
        size: c.size,
        signed,
    };
    let u = t(false).apply(v) as u64;
    match c.conv {
        'd' | 'i' => t(true).apply(v).to_string(),
        'u' => u.to_string(),
        'x' => format!("{u:x}"),
        'X' => format!("{u:X}"),
        'o' => format!("{u:o}"),
        'c' => char::from(v as u8).to_string(),
        'p' => format!("{:#x}", v as u64),
        // %s of an integer: it was no string.
        _ => v.to_string(),
    }
}

fn pad(out: &mut Vec<u8>, c: &Conv, text: &[u8]) {
    let n = String::from_utf8_lossy(text).chars().count();
    if n >= c.width {
        out.extend_from_slice(text);
    } else if c.left {
        out.extend_from_slice(text);
        out.extend(std::iter::repeat_n(b' ', c.width - n));
    } else if c.zero && c.conv != 's' {
        let (sign, digits): (&[u8], &[u8]) = match text.strip_prefix(b"-") {
            Some(d) => (b"-", d),
            None => (b"", text),
        };
        out.extend_from_slice(sign);
        out.extend(std::iter::repeat_n(b'0', c.width - n));
        out.extend_from_slice(digits);
    } else {
        out.extend(std::iter::repeat_n(b' ', c.width - n));
        out.extend_from_slice(text);
    }
}

impl Tool for Trace {
    common::tool_types!(TraceSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        // Tracepoints' fields are checked here where tracefs can be read,
        // else once privileged (configure).
        let probes: Rc<[TraceProbe]> = parse_probes(&args.probes, false)?.into();
        let containers = args.containers.containers;
        let table = table(&args, &probes).containers(containers);
        Ok(Trace {
            probes,
            points: Points::default(),
            event: Record::new(containers),
            table,
            symbolizer: Symbolizer::new(),
            current: 0,
            message: Vec::new(),
            kstack: Vec::new(),
            ustack: Vec::new(),
            printed: 0,
            aggregated: Vec::new(),
            seen: HashMap::new(),
            args,
        })
    }

    fn filters(&self) -> Filters {
        let mut f = Filters::processes(
            &self.args.pid.map(|p| IdList(vec![p])),
            self.args.cgroup.path(),
        );
        f.tids = self.args.tid.map(|t| vec![t]);
        f.thread_option = Some("-L");
        f.uid = self.args.uid;
        f
    }

    fn configure(&mut self, open: &mut OpenTraceSkel<'_>, _: &Setup) -> Result<()> {
        self.probes = parse_probes(&self.args.probes, true)?.into();
        // With -U, entry probes go past the frame setup, where a frame
        // pointer walk finds the caller.
        self.points = Points::plan(&self.probes, self.args.pid, self.args.user_stack)?;
        let settings = Settings {
            pid: self.args.pid,
            include_self: self.args.include_self,
            str_size: self.args.string_size,
            kernel_stack: self.args.kernel_stack,
            user_stack: self.args.user_stack,
            buffer_pages: self.args.buffer_pages,
        };
        self.points.configure(open, &self.probes, &settings)
    }

    fn hook_target(&self, program: &str) -> Option<String> {
        self.points.hook_target(program)
    }

    fn hook_notes(&self) -> Vec<String> {
        self.points.notes(&self.probes)
    }

    fn loaded(&mut self, skel: &mut TraceSkel<'_>) -> Result<()> {
        self.points.load(skel, &self.probes)?;
        if self.args.user_stack {
            self.symbolizer.follow_mappings();
        }
        if self.args.kernel_stack
            || self.probes.iter().any(|p| {
                p.format
                    .iter()
                    .any(|c| matches!(c, Piece::Conv(c) if c.conv == 'K'))
            })
        {
            self.symbolizer.warm_kernel();
        }
        Ok(())
    }

    fn attach(&mut self, skel: &mut TraceSkel<'_>) -> Result<Vec<Link>> {
        self.points.attach(skel, self.args.pid)
    }

    common::event_kind!(table);

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        if self.done() {
            return Ok(());
        }
        self.event.read(data);
        hits::fill_missed(&mut self.event, self.args.string_size as usize);
        let point = self.event.probe as usize;
        let Some(&i) = self.points.of_point.get(point) else {
            return Ok(());
        };
        let probes = Rc::clone(&self.probes);
        let p = &probes[i];
        if let Some(name) = &self.args.name {
            let comm = common::output::c_bytes(&self.event.stamps().head().comm);
            if !String::from_utf8_lossy(comm).contains(name.as_str()) {
                return Ok(());
            }
        }
        if !hits::passes(p, &self.event, self.args.string_size as usize) {
            return Ok(());
        }
        self.format(p);
        if let Some(m) = &self.args.msg_filter {
            if !self.message.windows(m.len()).any(|w| w == m.as_bytes()) {
                return Ok(());
            }
        }
        self.current = i;
        if self.args.kernel_stack || self.args.user_stack {
            self.stacks();
        }
        self.printed += 1;
        if self.args.aggregate {
            let line = self.table.render(self)?;
            let mut s = String::from_utf8_lossy(&line).into_owned();
            s.push('\n');
            if !self.args.common.json {
                s.push_str(&self.stack_lines());
            }
            match self.seen.get(&s) {
                Some(&k) => self.aggregated[k].1 += 1,
                None => {
                    self.seen.insert(s.clone(), self.aggregated.len());
                    self.aggregated.push((s, 1));
                }
            }
            return Ok(());
        }
        self.table.row(out, self)?;
        if !self.args.common.json && (self.args.kernel_stack || self.args.user_stack) {
            write!(out, "{}", self.stack_lines())?;
            writeln!(out)?;
        }
        Ok(())
    }

    fn idle(&mut self) -> bool {
        self.done()
    }

    fn report(&mut self, _: &TraceSkel<'_>, out: &mut Out, when: When) -> Result<()> {
        if when != When::End || !self.args.aggregate {
            return Ok(());
        }
        let mut rows: Vec<&(String, u64)> = self.aggregated.iter().collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.1));
        for (line, n) in rows {
            write!(out, "{line}-->COUNT {n}\n\n")?;
        }
        Ok(())
    }
}

common::stamped_by_record!(Trace);

/// Parses the probes; `strict`: a tracepoint's format must be read (else
/// its fields are checked later).
fn parse_probes(texts: &[String], strict: bool) -> Result<Vec<TraceProbe>> {
    hits::parse_all(texts, strict, |t, fields| TraceProbe::parse(t, fields))
}

/// BCC's columns: [TIME] [CPU] PID TID COMM FUNC and the message, under
/// `-` where some probe prints one.
fn table(args: &Args, probes: &[TraceProbe]) -> Table<Trace> {
    let time_w = if args.unix_timestamp { 17 } else { 8 };
    let any_format = probes.iter().any(|p| !p.format.is_empty());
    let msg = if any_format {
        Column::new("-", 0, "message", |t: &Trace| Cell::bytes(&t.message))
    } else {
        Column::new("", 0, "message", |t: &Trace| Cell::bytes(&t.message))
    };
    let time = if args.timestamp {
        if args.unix_timestamp {
            Column::new("TIME", time_w, "", |t: &Trace| {
                let s = t.stamps();
                let secs = s.clock.wall_secs(s.head().ts_ns);
                let frac = s.head().ts_ns % 1_000_000_000;
                let text = format!("{secs}.{:06}", frac / 1000);
                text[..text.len().min(17)].to_string().into()
            })
        } else {
            Column::new("TIME", time_w, "", |t: &Trace| {
                let text = format!("{:.6}", t.stamps().elapsed());
                text[..text.len().min(8)].to_string().into()
            })
        }
    } else {
        Column::new("TIME", time_w, "", |t: &Trace| t.stamps().hms().into())
    };
    Table::<Trace>::new(args.common.json)
        .column(args.timestamp || args.time, time)
        .column(true, columns::ts())
        .column(
            args.print_cpu,
            Column::new("CPU", 3, "cpu", |t: &Trace| t.event.cpu.into()),
        )
        .columns([
            columns::pid(7),
            columns::tid(7),
            columns::cgroup_id(),
            columns::comm("COMM", 15),
            Column::new("FUNC", 16, "func", |t: &Trace| {
                t.probes[t.current].display.as_str().into()
            }),
            msg,
            Column::json("kernel_stack", |t: &Trace| {
                Cell::frames(t.args.kernel_stack, &t.kstack)
            })
            .optional(),
            Column::json("user_stack", |t: &Trace| {
                Cell::frames(t.args.user_stack, &t.ustack)
            })
            .optional(),
        ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(s: &str) -> Conv {
        match &common::probes::spec::parse_format("", s, 0).unwrap()[0] {
            Piece::Conv(c) => c.clone(),
            p => panic!("{p:?}"),
        }
    }

    fn shown(fmt: &str, v: i64) -> String {
        let c = conv(fmt);
        let mut out = Vec::new();
        pad(&mut out, &c, convert(&c, v).as_bytes());
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn conversions_take_cs_types() {
        assert_eq!(shown("%d", 0xffff_ffff), "-1");
        assert_eq!(shown("%ld", 0xffff_ffff), "4294967295");
        assert_eq!(shown("%u", -1), "4294967295");
        assert_eq!(shown("%llu", -1), "18446744073709551615");
        assert_eq!(shown("%hd", 0x1_8000), "-32768");
        assert_eq!(shown("%x", 0x1_0000_00ff), "ff");
        assert_eq!(shown("%llx", 0x1_0000_00ff), "1000000ff");
        assert_eq!(shown("%c", 65), "A");
        assert_eq!(shown("%5d", 42), "   42");
        assert_eq!(shown("%-5d|", 42), "42   ");
        assert_eq!(shown("%05d", -42), "-0042");
        assert_eq!(shown("%p", 4096), "0x1000");
    }

    #[test]
    fn the_header_is_bccs() {
        let args = Args::try_parse_from(["trace", "c:malloc \"%d\", arg1"]).unwrap();
        let probes = [TraceProbe::parse(&args.probes[0], |_| Ok(Some(Vec::new()))).unwrap()];
        assert_eq!(
            table(&args, &probes).header(),
            "PID     TID     COMM            FUNC             -"
        );
        let args = Args::try_parse_from(["trace", "-t", "-C", "c:malloc"]).unwrap();
        let probes = [TraceProbe::parse(&args.probes[0], |_| Ok(Some(Vec::new()))).unwrap()];
        assert_eq!(
            table(&args, &probes).header().trim_end(),
            "TIME     CPU PID     TID     COMM            FUNC"
        );
    }
}
