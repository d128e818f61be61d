//! One tool's life, in one place: parse the arguments, check privilege,
//! start a command to trace (held), open the BPF object, configure it
//! (read-only data, variants, filters), load, fill the filter maps, attach,
//! print the banner, release the command, run the event and interval loop,
//! detach, print the final report and the kernel's failure counts, and end
//! with the right exit status.
//!
//! A tool implements [`Tool`]: its options, its variant choice and its
//! report. Everything else happens here, in this order, for every tool.

use std::cell::RefCell;
use std::ffi::OsString;
use std::io::{self, Write};
use std::mem::MaybeUninit;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::{CommandFactory, FromArgMatches, Parser};
use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use libbpf_rs::{Link, MapCore, MapType, Object, RingBufferBuilder};

use crate::cli::CommonArgs;
use crate::export::prom::Counters;
use crate::kernel::filters::Filters;
use crate::kernel::maps;
use crate::kernel::probe;
use crate::kinds::event::Table;
use crate::kinds::histogram::{self, Histograms};
use crate::kinds::stack::{self, Stacks};
use crate::kinds::table::{self, IntervalTable};
use crate::output::hist;
use crate::output::Out;
use crate::run::launch::Held;
use crate::signals;
use crate::{note, run};

/// The opened (not yet loaded) skeleton of tool `T`.
pub type OpenOf<'o, T> = <<T as Tool>::Builder as SkelBuilder<'o>>::Output;
/// The loaded skeleton of tool `T`.
pub type SkelOf<'o, T> = <OpenOf<'o, T> as OpenSkel<'o>>::Output;

/// What a tool says when it is attached.
pub enum Banner {
    /// A table header on stdout (text mode); in machine-readable mode the
    /// note goes to stderr instead.
    Header { header: String, note: String },
    /// `Tracing ... Hit Ctrl-C to end.`: on stdout, or on stderr when stdout
    /// is read by a program.
    Note(String),
}

/// When the loop reports and ends, besides signals, a closed stdout and the
/// end of a started command.
#[derive(Debug, Clone, Copy, Default)]
pub struct Schedule {
    /// Report every interval.
    pub interval: Option<Duration>,
    /// End after this many interval reports.
    pub count: Option<u64>,
    /// End (with a final report) after this long.
    pub duration: Option<Duration>,
}

impl From<&crate::cli::IntervalCount> for Schedule {
    /// `[interval] [count]`: a report every interval, `count` times.
    fn from(i: &crate::cli::IntervalCount) -> Schedule {
        Schedule {
            interval: i.interval.map(Duration::from_secs),
            count: i.count,
            duration: None,
        }
    }
}

impl From<&crate::cli::EveryInterval> for Schedule {
    /// A report every interval (one second by default), `count` times.
    fn from(i: &crate::cli::EveryInterval) -> Schedule {
        Schedule {
            interval: Some(Duration::from_secs(i.interval)),
            count: i.count,
            duration: None,
        }
    }
}

/// Why a report is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// An interval has passed; tracing goes on.
    Interval,
    /// Tracing has ended and the programs are detached: the last report.
    End,
}

/// What the lifecycle knows that a tool's configuration may need.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    /// The pid of the command the tool started (`--exec`, `-c`).
    pub child: Option<u32>,
}

/// What every tool's `impl Tool` names the same way: its `Args`, its
/// skeleton's builder, its `info::INFO`: `common::tool_types!(XSkelBuilder);`
#[macro_export]
macro_rules! tool_types {
    ($builder:ty) => {
        type Args = Args;
        type Builder = $builder;
        const INFO: &'static $crate::run::lifecycle::ToolInfo = &info::INFO;
    };
}

pub use registry::ToolInfo;

/// A tool: its options, variant choice and report.
pub trait Tool: Sized {
    /// The tool's arguments (clap derive, with EXAMPLES).
    type Args: Parser;
    /// The skeleton builder libbpf-cargo generated for the tool.
    type Builder: Default + for<'o> SkelBuilder<'o>;

    /// What the tool says about itself (`src/info.rs`): its name, summary,
    /// banner, man page sections, dry runs and bench.
    const INFO: &'static registry::ToolInfo;

    /// Builds the tool from its arguments: checks that need no BPF.
    fn new(args: Self::Args) -> Result<Self>;

    /// True when stdout is read by a program for a reason of the tool's
    /// own (folded stacks; `--json` is the lifecycle's): notes then go to
    /// stderr.
    fn machine_readable(&self) -> bool {
        false
    }

    /// A command to start and trace (`--exec`, `-c`): forked before the
    /// programs load, held until they are attached.
    fn command(&self) -> Option<Vec<OsString>> {
        None
    }

    /// The shared filters (filters.bpf.h) this tool applies.
    fn filters(&self) -> Filters {
        Filters::default()
    }

    /// Sets the read-only data and map sizes, and chooses the program
    /// variants this kernel can run.
    fn configure(&mut self, open: &mut OpenOf<'_, Self>, setup: &Setup) -> Result<()>;

    /// Whether `-v` is one of the tool's own options (capable's, as BCC's:
    /// non-audit checks too): it then prints the hooks chosen, not libbpf's
    /// log, which would bury the tool's output under hundreds of lines.
    fn verbose_is_own(&self) -> bool {
        false
    }

    /// What `--dry-run` and `-v` say under the hooks, beyond the programs:
    /// a choice made outside BPF (profile's perf event).
    fn hook_notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// The function a program whose section names none attaches to (the
    /// tool attaches it itself): for `--dry-run` and `-v`.
    fn hook_target(&self, _program: &str) -> Option<String> {
        None
    }

    /// After load, before attach: tail calls, maps the tool fills itself.
    fn loaded(&mut self, _skel: &mut SkelOf<'_, Self>) -> Result<()> {
        Ok(())
    }

    /// Attaches the programs; by default every loaded program whose section
    /// names its attach point.
    fn attach(&mut self, skel: &mut SkelOf<'_, Self>) -> Result<Vec<Link>> {
        attach_all(skel.object())
    }

    /// Event tools: the columns of their table ([`Table`]), which give
    /// the banner's header.
    fn table(&self) -> Option<&Table<Self>> {
        None
    }

    /// By default the table's header (event tools), an interval table's
    /// line (BCC's for a top tool), or the description's banner line.
    fn banner(&self) -> Banner {
        if let Some(line) = self.interval_table().and_then(|t| t.banner) {
            return Banner::Note(line);
        }
        match self.table() {
            Some(t) => Banner::Header {
                header: t.header(),
                note: Self::INFO.banner.into(),
            },
            None => Banner::Note(Self::INFO.banner.into()),
        }
    }

    /// By default a histogram tool's `[interval] [count]` (a stack tool's
    /// DURATION is the kind's).
    fn schedule(&self) -> Schedule {
        if let Some(t) = self.interval_table() {
            return Schedule::from(&t);
        }
        self.histograms()
            .map(|h| Schedule::from(&h.args.interval))
            .unwrap_or_default()
    }

    /// Histogram tools: what their histograms are. The lifecycle then
    /// reports them on the schedule, answers scrapes and writes the
    /// exports; the tool reads its maps in [`Tool::sections`].
    fn histograms(&self) -> Option<histogram::Spec<'_>> {
        None
    }

    /// Histogram tools: the histograms the kernel holds, drained (a report)
    /// or left in place (a scrape).
    fn sections(&self, _skel: &SkelOf<'_, Self>, _drain: bool) -> Result<Vec<hist::Section>> {
        Ok(Vec::new())
    }

    /// Stack tools: what they count and how the report looks. The
    /// lifecycle then sets the kernel side's switches, sizes its maps,
    /// unwinds, keeps the processes' maps and reports (kinds::stack).
    fn stacks(&self) -> Option<stack::Spec<'_>> {
        None
    }

    /// Interval-table tools: what their tables are. The lifecycle then
    /// prints their rows every interval (kinds::table).
    fn interval_table(&self) -> Option<table::Spec<'_>> {
        None
    }

    /// Interval-table tools with `--prometheus`/`--prom-file`: their
    /// counters since the start (running totals, never an interval's).
    fn interval_metrics(&mut self, _skel: &SkelOf<'_, Self>) -> Result<Counters> {
        Ok(Counters::default())
    }

    /// Interval-table tools: this interval's rows (drained from the
    /// kernel, or what it added to running totals), with their table and
    /// order; `when`: the run's last report or not.
    fn interval_rows<'s>(
        &'s mut self,
        _skel: &SkelOf<'_, Self>,
        _when: When,
    ) -> Result<Box<dyn table::Print + 's>> {
        anyhow::bail!(
            "{} has no rows: it is not an interval-table tool",
            Self::INFO.name
        )
    }

    /// Tracing has ended and the links are detached, before the final
    /// report: what the tool attached itself stops (profile's perf events).
    fn detached(&mut self) {}

    /// One record from the `events` ring buffer (not a stack tool's: the
    /// kind reads those).
    fn event(&mut self, _data: &[u8], _out: &mut Out) -> io::Result<()> {
        Ok(())
    }

    /// A descriptor the loop waits on too (`--prometheus`'s socket).
    fn extra_fd(&self) -> Option<std::os::fd::RawFd> {
        None
    }

    /// `extra_fd` is readable.
    fn extra_ready(&mut self, _skel: &SkelOf<'_, Self>) -> Result<()> {
        Ok(())
    }

    /// The command (`command`) has been exec'd, as tracing starts.
    fn command_started(&mut self, _pid: u32) {}

    /// Called whenever the loop wakes (at least every 100 ms); true ends
    /// tracing, with a final report (memleak: every traced process is gone).
    fn idle(&mut self) -> bool {
        false
    }

    /// Prints a report: every interval, and once at the end.
    fn report(&mut self, _skel: &SkelOf<'_, Self>, _out: &mut Out, _when: When) -> Result<()> {
        Ok(())
    }

    /// What a non-zero counter at `index` of the kernel side's `errors`
    /// map means (the tool's error enum).
    fn error_note(&self, _index: u32) -> Option<&'static str> {
        None
    }
}

/// A tool as the bundle sees it: its description, its `main` and its
/// options (for man pages and completions). Each tool crate exports one
/// (`pub const ENTRY: Entry = Entry::of::<MyTool>();`).
#[derive(Clone, Copy)]
pub struct Entry {
    pub info: &'static registry::ToolInfo,
    pub main: fn() -> ExitCode,
    pub command: fn() -> clap::Command,
}

impl Entry {
    pub const fn of<T: Tool>() -> Entry
    where
        T::Args: clap::CommandFactory,
    {
        Entry {
            info: T::INFO,
            main: main::<T>,
            command: <T::Args as clap::CommandFactory>::command,
        }
    }
}

/// A tool's `main`: runs it and turns the result into the exit status.
pub fn main<T: Tool>() -> ExitCode
where
    T::Args: clap::CommandFactory,
{
    signals::install();
    // The shared options are read from the same matches as the tool's
    // own, so that no tool has to hand them back.
    let parsed = T::Args::command().try_get_matches().and_then(|m| {
        let args = T::Args::from_arg_matches(&m)?;
        // --containers where the tool has it: the records' headers then
        // carry the pid as the container sees it.
        let containers = m
            .try_get_one::<bool>("containers")
            .ok()
            .flatten()
            .copied()
            .unwrap_or(false);
        Ok((args, (CommonArgs::from_arg_matches(&m)?, containers)))
    });
    let (args, (common, containers)) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => return clap_exit(shown_error::<T::Args>(e.format(&mut T::Args::command()))),
    };
    run::exit_code(run_tool::<T>(args, &common, containers))
}

/// A parse error as it names the arguments: clap shows them raw, and the
/// terminal (or clap's own stripping of escape sequences) would change what
/// the user reads. Where an argument holds a control or bidirectional
/// character, the error is that of the same arguments escaped (the same
/// kind of error, now naming printable text).
fn shown_error<A: Parser>(e: clap::Error) -> clap::Error {
    use std::os::unix::ffi::OsStrExt;
    let argv: Vec<OsString> = std::env::args_os().collect();
    let shown: Vec<String> = argv
        .iter()
        .map(|a| crate::output::escape(a.as_bytes()).into_owned())
        .collect();
    if argv
        .iter()
        .zip(&shown)
        .all(|(a, s)| a.as_bytes() == s.as_bytes())
    {
        return e;
    }
    match A::try_parse_from(&shown) {
        Err(escaped) if escaped.kind() == e.kind() => escaped,
        _ => e,
    }
}

/// clap's error message as one line: its first, and where that ends in a
/// colon, the indented lines it introduces (the arguments missing).
fn one_line(text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("invalid arguments");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    if !first.ends_with(':') {
        return first.to_string();
    }
    let listed: Vec<&str> = lines
        .take_while(|l| l.starts_with("  "))
        .map(str::trim)
        .collect();
    format!("{first} {}", listed.join(", "))
}

/// Help and version go to stdout with status 0; a usage error is one line
/// on stderr with status 2.
fn clap_exit(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let mut out = Out::default();
            let _ = write!(out, "{}", e.render());
            let _ = out.flush();
            ExitCode::SUCCESS
        }
        _ => {
            let text = e.render().to_string();
            note!(
                "error: {} (see --help)",
                crate::output::escape(one_line(&text).as_bytes())
            );
            ExitCode::from(2)
        }
    }
}

fn run_tool<T: Tool>(args: T::Args, common: &CommonArgs, containers: bool) -> Result<u8> {
    let mut tool = T::new(args)?;
    let mut kind = Kind::open(&tool)?;
    run::libbpf_log(common.verbose && !tool.verbose_is_own());
    run::check_privilege()?;
    let mut filters = tool.filters();
    filters.check()?;

    // The command is forked before anything loads and held before its exec
    // until the programs are attached, so its first actions are seen.
    let held = match tool.command() {
        Some(argv) if !common.dry_run => Some(Held::spawn(&argv)?),
        _ => None,
    };
    let setup = Setup {
        child: held.as_ref().map(|h| h.pid() as u32),
    };
    if let (Some(child), true) = (setup.child, filters.command_pid) {
        filters.pids.get_or_insert_with(Vec::new).push(child);
    }

    let mut object = MaybeUninit::uninit();
    let mut open = T::Builder::default()
        .open(&mut object)
        .context("opening the BPF object")?;
    tool.configure(&mut open, &setup)?;
    if let Some(s) = Kind::stacks(&mut kind) {
        s.configure(open.open_object_mut())?;
    }
    filters.configure(open.open_object_mut())?;
    if containers && maps::has_rodata(open.open_object(), "ns_pids") {
        maps::set_rodata(open.open_object_mut(), "ns_pids", &[1])?;
    }
    probe::autoload_existing_tracepoints(open.open_object_mut())?;
    let mut hooks = probe::chosen_hooks(open.open_object(), |p| tool.hook_target(p));
    let programs = hooks.len();
    hooks.extend(tool.hook_notes());
    let mut skel = open.load().context("loading the BPF programs")?;
    probe::release_caches();
    if common.dry_run {
        let mut out = Out::default();
        print_dry_run(&mut out, programs, &hooks)?;
        out.flush()?;
        return Ok(0);
    }
    if common.verbose {
        note!("hooks: {}", hooks.join(", "));
    }
    filters.fill(skel.object())?;
    if let Some(s) = Kind::stacks(&mut kind) {
        s.loaded(skel.object())?;
    }
    tool.loaded(&mut skel)?;
    let links = tool.attach(&mut skel)?;

    let mut out = Out::default();
    let machine = common.json
        || tool.machine_readable()
        || Kind::stacks(&mut kind).is_some_and(|s| s.machine_readable());
    match tool.banner() {
        Banner::Header { header, note } => {
            if machine {
                out.banner(true, &note)?;
            } else {
                out.banner(false, &header)?;
            }
        }
        Banner::Note(line) => out.banner(machine, &line)?,
    }
    let child = match held {
        // A stop before the command ran: it never runs, and the tool ends
        // as the command would have, by the signal.
        Some(held) if signals::stop_requested() => {
            drop(held);
            let sig = signals::received().unwrap_or(libc::SIGTERM);
            return Ok(128u8.saturating_add(sig as u8));
        }
        Some(held) => Some(held.release()?),
        None => None,
    };
    if let Some(child) = &child {
        tool.command_started(child.pid());
    }

    let schedule = match Kind::stacks(&mut kind) {
        Some(s) => s.schedule(),
        None => tool.schedule(),
    };
    let tool = RefCell::new(tool);
    let out = RefCell::new(out);
    let kind = RefCell::new(kind);
    // Few links are detached as the loop ends, before the ring's last
    // records are read and the final report is made: one exact cut. Many
    // (hundreds of tracepoints, each ~40 ms to detach in the kernel, one
    // at a time) are left attached until after the report, read once as
    // the cut, so that it does not wait, nor is lost to a SIGKILL.
    let mut links = Some(links);
    let ended = event_loop(
        &skel,
        &tool,
        &out,
        &kind,
        schedule,
        child.as_ref(),
        &mut links,
    )?;
    let mut tool = tool.into_inner();
    tool.detached();
    let mut out = out.into_inner();
    let mut kind = kind.into_inner();
    if ended != Ended::Count && ended != Ended::ReaderGone {
        report(&mut tool, &skel, &mut out, kind.as_mut(), When::End)?;
    }
    out.flush()?;
    if let Some(links) = links {
        if common.verbose {
            note!("detaching {} probes", links.len());
        }
        detach(links);
    }
    if ended == Ended::ReaderGone {
        return Err(io::Error::from(io::ErrorKind::BrokenPipe).into());
    }
    report_counters(skel.object(), &tool, kind.as_ref())?;
    if out.dropped_lines() > 0 {
        note!(
            "{} lines of output dropped: stdout was not being read when the tool was stopped",
            out.dropped_lines()
        );
    }
    Ok(match child {
        Some(child) => child.finish(),
        None => 0,
    })
}

/// The pipeline of a tool's kind, where its kind has one: the lifecycle
/// reports through it instead of through [`Tool::report`].
enum Kind {
    Histograms(Box<Histograms>),
    Stacks(Box<Stacks>),
    Table(IntervalTable),
}

impl Kind {
    fn open<T: Tool>(tool: &T) -> Result<Option<Kind>> {
        if let Some(spec) = tool.histograms() {
            return Ok(Some(Kind::Histograms(Box::new(Histograms::open(&spec)?))));
        }
        if let Some(spec) = tool.interval_table() {
            return Ok(Some(Kind::Table(IntervalTable::open(&spec)?)));
        }
        Ok(match tool.stacks() {
            Some(spec) => Some(Kind::Stacks(Box::new(Stacks::open(spec)?))),
            None => None,
        })
    }

    fn stacks(kind: &mut Option<Kind>) -> Option<&mut Stacks> {
        match kind {
            Some(Kind::Stacks(s)) => Some(s),
            _ => None,
        }
    }
}

/// What `--dry-run` prints: the programs loaded and verified, and where
/// each would attach.
fn print_dry_run(out: &mut Out, programs: usize, hooks: &[String]) -> io::Result<()> {
    writeln!(
        out,
        "{}: dry run: {} programs loaded and verified, nothing attached",
        crate::output::tool_name(),
        programs
    )?;
    for hook in hooks {
        writeln!(out, "  {hook}")?;
    }
    Ok(())
}

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    Signal,
    ReaderGone,
    ChildExited,
    Duration,
    Count,
    Done,
}

/// How long the loop may sleep: the bound on how late a ring buffer record
/// is printed when the kernel side chose not to wake us (events.bpf.h).
const POLL: Duration = Duration::from_millis(100);
/// Ring buffer records handled between two looks at signals and counters.
const BATCH: usize = 512;
/// The longest the ring is read for after the tracing ends.
const FINAL_DRAIN: Duration = Duration::from_secs(2);

/// A report: the kind's, or the tool's own.
fn report<T: Tool>(
    tool: &mut T,
    skel: &SkelOf<'_, T>,
    out: &mut Out,
    kind: Option<&mut Kind>,
    when: When,
) -> Result<()> {
    match kind {
        Some(Kind::Histograms(h)) => h.report(out, &tool.sections(skel, true)?),
        Some(Kind::Stacks(s)) => s.report(skel.object(), out),
        Some(Kind::Table(t)) => {
            t.report(out, tool.interval_rows(skel, when)?, when == When::End)?;
            t.reported(|| tool.interval_metrics(skel))
        }
        None => tool.report(skel, out, when),
    }
}

fn event_loop<'o, T: Tool>(
    skel: &SkelOf<'o, T>,
    tool: &RefCell<T>,
    out: &RefCell<Out>,
    kind: &RefCell<Option<Kind>>,
    schedule: Schedule,
    child: Option<&crate::run::launch::Running>,
    links: &mut Option<Vec<Link>>,
) -> Result<Ended> {
    let obj = skel.object();
    let failure: RefCell<Option<io::Error>> = RefCell::new(None);
    let events = maps::by_name(obj, "events").filter(|m| m.map_type() == MapType::RingBuf);
    let ring = match &events {
        Some(map) => {
            let mut builder = RingBufferBuilder::new();
            builder
                .add(map, |data| {
                    if let Some(s) = Kind::stacks(&mut kind.borrow_mut()) {
                        s.record(data);
                        return 0;
                    }
                    let r = tool.borrow_mut().event(data, &mut out.borrow_mut());
                    match r {
                        Ok(()) => 0,
                        Err(e) => {
                            *failure.borrow_mut() = Some(e);
                            -1
                        }
                    }
                })
                .context("setting up the ring buffer")?;
            Some(builder.build().context("setting up the ring buffer")?)
        }
        None => None,
    };
    let lost_map = maps::by_name(obj, "lost_events");
    let check = |rc: i32| -> Result<()> {
        if let Some(e) = failure.borrow_mut().take() {
            return Err(e.into());
        }
        if rc < 0 && rc != -libc::EINTR {
            return Err(io::Error::from_raw_os_error(-rc)).context("reading the ring buffer");
        }
        Ok(())
    };

    let start = Instant::now();
    let end = schedule.duration.and_then(|d| start.checked_add(d));
    let mut tick = schedule.interval.and_then(|i| start.checked_add(i));
    let mut reports = 0u64;
    let mut lost_seen = 0u64;
    let mut lost_checked = start;
    // Records left in the ring after a batch: poll without waiting.
    let mut more = false;
    let extra_fd = match &*kind.borrow() {
        Some(Kind::Histograms(h)) => h.fd(),
        Some(Kind::Table(t)) => t.fd(),
        _ => tool.borrow().extra_fd(),
    };
    out.borrow_mut().flush()?;
    let ended = loop {
        if signals::stop_requested() {
            break Ended::Signal;
        }
        let now = Instant::now();
        let mut wait = if more { Duration::ZERO } else { POLL };
        for deadline in [end, tick].into_iter().flatten() {
            wait = wait.min(deadline.saturating_duration_since(now));
        }
        // A negative fd is ignored by poll(2): no ring, or no command.
        let mut fds = [
            pollfd(signals::wake_fd(), libc::POLLIN),
            // No events asked: a pipe whose reader is gone reports POLLERR.
            pollfd(libc::STDOUT_FILENO, 0),
            pollfd(ring.as_ref().map_or(-1, |r| r.epoll_fd()), libc::POLLIN),
            pollfd(child.map_or(-1, |c| c.pidfd()), libc::POLLIN),
            pollfd(extra_fd.unwrap_or(-1), libc::POLLIN),
        ];
        // SAFETY: fds is a valid array of pollfds for the call's duration.
        unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, wait_ms(wait)) };
        if fds[0].revents != 0 {
            signals::drain_wake();
        }
        if let Some(r) = &ring {
            // In batches, so that a slow reader still lets the loop notice
            // signals and report lost events between them.
            let n = r.consume_raw_n(BATCH);
            check(n)?;
            more = n >= BATCH as i32;
        }
        out.borrow_mut().flush()?;
        if fds[1].revents & (libc::POLLERR | libc::POLLHUP) != 0 {
            break Ended::ReaderGone;
        }
        if child.is_some_and(|c| c.exited()) {
            break Ended::ChildExited;
        }
        if fds[4].revents != 0 {
            match &*kind.borrow() {
                Some(Kind::Histograms(h)) => h.serve(|| tool.borrow().sections(skel, false))?,
                Some(Kind::Table(t)) => t.serve(|| tool.borrow_mut().interval_metrics(skel))?,
                _ => tool.borrow_mut().extra_ready(skel)?,
            }
        }
        if let Some(s) = Kind::stacks(&mut kind.borrow_mut()) {
            s.idle();
        }
        if tool.borrow_mut().idle() {
            break Ended::Done;
        }
        if lost_checked.elapsed() >= Duration::from_secs(1) {
            lost_checked = Instant::now();
            note_lost(lost_map.as_ref(), &mut lost_seen)?;
        }
        let now = Instant::now();
        if let (Some(t), Some(interval)) = (tick, schedule.interval) {
            if now >= t {
                report(
                    &mut *tool.borrow_mut(),
                    skel,
                    &mut out.borrow_mut(),
                    kind.borrow_mut().as_mut(),
                    When::Interval,
                )?;
                out.borrow_mut().flush()?;
                reports += 1;
                if schedule.count.is_some_and(|c| reports >= c) {
                    break Ended::Count;
                }
                tick = t.checked_add(interval);
            }
        }
        if end.is_some_and(|e| now >= e) {
            break Ended::Duration;
        }
    };
    let quick = links.as_ref().is_some_and(|l| l.len() <= QUICK_DETACH);
    if quick {
        detach(links.take().unwrap_or_default());
    }
    // What the ring holds at the end: all of it once nothing is attached;
    // else in batches and for a bounded time, as a flood of events slower
    // to handle than they come would keep the drain going forever.
    if let (Some(r), true) = (&ring, quick) {
        check(r.consume_raw())?;
    } else if let Some(r) = &ring {
        let until = Instant::now() + FINAL_DRAIN;
        loop {
            let n = r.consume_raw_n(BATCH);
            check(n)?;
            if n < BATCH as i32 {
                break;
            }
            if Instant::now() >= until {
                note!(
                    "events were still coming after {} s of reading at the end: \
                     the rest left unread",
                    FINAL_DRAIN.as_secs()
                );
                break;
            }
        }
    }
    // The last second's too.
    note_lost(lost_map.as_ref(), &mut lost_seen)?;
    Ok(ended)
}

/// Says on stderr how many ring buffer records were lost since the last
/// look (`seen`), if any.
fn note_lost(map: Option<&impl MapCore>, seen: &mut u64) -> Result<()> {
    let Some(map) = map else {
        return Ok(());
    };
    let lost = maps::percpu_sum_at(map, 0)?;
    if lost > *seen {
        note!(
            "{} more events lost (the ring buffer was full: output too slow); {lost} so far",
            lost - *seen
        );
        *seen = lost;
    }
    Ok(())
}

fn pollfd(fd: i32, events: libc::c_short) -> libc::pollfd {
    libc::pollfd {
        fd,
        events,
        revents: 0,
    }
}

fn wait_ms(d: Duration) -> libc::c_int {
    // Round up, so a deadline is not polled for in a busy loop.
    d.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int
}

/// Attaches every loaded program whose section names its attach point
/// (`tp_btf/sched_switch`); programs without one (tail calls, uprobes the
/// tool attaches itself) are left alone.
pub fn attach_all(obj: &Object) -> Result<Vec<Link>> {
    let mut links = Vec::new();
    for prog in obj.progs_mut() {
        if !prog.autoload() || !prog.section().to_string_lossy().contains('/') {
            continue;
        }
        let link = prog.attach().with_context(|| {
            format!(
                "attaching {} ({})",
                prog.name().to_string_lossy(),
                prog.section().to_string_lossy()
            )
        })?;
        links.push(link);
    }
    Ok(links)
}

/// Detaches the links concurrently: removing a tracepoint or uprobe waits
/// for an RCU grace period, and in parallel they share one.
/// Links detached before the final report; with more, after it.
const QUICK_DETACH: usize = 64;

fn detach(links: Vec<Link>) {
    if links.len() < 2 {
        return;
    }
    // A few threads: the kernel detaches tracepoints one at a time under
    // its own lock, and a thread a link only piles up blocked threads.
    let threads = links.len().min(DETACH_THREADS);
    let mut shares: Vec<Vec<Link>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, link) in links.into_iter().enumerate() {
        shares[i % threads].push(link);
    }
    std::thread::scope(|s| {
        for share in shares {
            s.spawn(move || drop(share));
        }
    });
}

/// Threads that detach links side by side.
const DETACH_THREADS: usize = 8;

/// Lost events and the kernel side's failure counters, on stderr.
fn report_counters<T: Tool>(obj: &Object, tool: &T, kind: Option<&Kind>) -> Result<()> {
    if let Some(map) = maps::by_name(obj, "lost_events") {
        let n = maps::percpu_sum_at(&map, 0)?;
        if n > 0 {
            note!("{n} events lost: the ring buffer was full (output too slow)");
        }
    }
    if let Some(map) = maps::by_name(obj, "errors") {
        for i in 0..map.max_entries() {
            let n = maps::percpu_sum_at(&map, i)?;
            if n > 0 {
                let what = match kind {
                    Some(Kind::Stacks(s)) => s.error_note(i),
                    _ => None,
                };
                let what = what
                    .or_else(|| tool.error_note(i))
                    .unwrap_or("failures of an unnamed kind");
                note!("{n} {what}");
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn a_usage_error_names_the_missing_arguments_on_its_line() {
        let e = clap::Command::new("t")
            .arg(clap::Arg::new("pattern").required(true))
            .arg(clap::Arg::new("more").long("more").required(true))
            .try_get_matches_from(["t"])
            .unwrap_err();
        assert_eq!(
            one_line(&e.render().to_string()),
            "the following required arguments were not provided: --more <more>, <pattern>"
        );
        let e = clap::Command::new("t")
            .try_get_matches_from(["t", "x"])
            .unwrap_err();
        assert_eq!(
            one_line(&e.render().to_string()),
            "unexpected argument 'x' found"
        );
    }
}
