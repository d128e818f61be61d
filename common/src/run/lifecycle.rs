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
use crate::kernel::maps;
use crate::kernel::probe;
use crate::kinds::Pipeline;
use crate::output::Out;
use crate::run::launch::Held;
use crate::run::tool::Bound;
use crate::signals;
use crate::{note, run};

pub use crate::run::schedule::{Schedule, When};
pub use crate::run::tool::{attach_all, Banner, OpenOf, Setup, SkelOf, Tool, ToolInfo};

/// A tool as the bundle sees it: its description, its `main` and its
/// options (for man pages and completions). Each tool crate exports one
/// (`pub const ENTRY: Entry = Entry::of::<MyTool>();`).
#[derive(Clone, Copy)]
pub struct Entry {
    pub info: &'static registry::ToolInfo,
    pub main: fn() -> ExitCode,
    pub command: fn() -> clap::Command,
    /// The kind of pipeline the tool builds from these arguments (its name
    /// first), without loading anything; `None`: its own report. A test
    /// holds it to the kind the registry declares.
    pub pipeline_kind: fn(&[String]) -> Result<Option<registry::Kind>>,
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
            pipeline_kind: pipeline_kind::<T>,
        }
    }
}

fn pipeline_kind<T: Tool>(argv: &[String]) -> Result<Option<registry::Kind>> {
    let tool = T::new(T::Args::try_parse_from(argv)?)?;
    Ok(tool.pipeline()?.kind())
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
    let mut pipeline = tool.pipeline()?;
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
    pipeline.configure(open.open_object_mut())?;
    filters.configure(open.open_object_mut())?;
    if containers && maps::has_rodata(open.open_object(), "ns_pids") {
        maps::set_rodata(open.open_object_mut(), "ns_pids", &[1])?;
    }
    probe::autoload_existing_tracepoints(open.open_object_mut())?;
    maps::shrink_unasked_fine_hists(open.open_object_mut())?;
    let capabilities = run::needed_capabilities(open.open_object());
    // What the hooks cannot see, and what this user cannot name.
    let degraded: Vec<String> = tool
        .degraded()
        .into_iter()
        .chain(run::short_of(&capabilities))
        .collect();
    let chosen = Chosen {
        hooks: probe::chosen_hooks(open.open_object(), |p| tool.hook_target(p)),
        degraded: (!degraded.is_empty()).then(|| degraded.join("; ")),
        notes: crate::kernel::tracefs::privilege_note(open.open_object())
            .into_iter()
            .chain(tool.hook_notes())
            .collect(),
        capabilities,
    };
    let mut skel = open.load().context("loading the BPF programs")?;
    probe::release_caches();
    if common.dry_run {
        let mut out = Out::default();
        chosen.print(&mut out, common.json)?;
        out.flush()?;
        return Ok(0);
    }
    if let Some(what) = &chosen.degraded {
        note!("{what}");
    }
    if common.verbose {
        note!("hooks: {}", chosen.lines().join(", "));
    }
    filters.fill(skel.object())?;
    pipeline.loaded(skel.object())?;
    tool.loaded(&mut skel)?;
    let links = tool.attach(&mut skel)?;

    let mut out = Out::default();
    let machine = common.json || tool.machine_readable() || pipeline.machine_readable();
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

    let schedule = pipeline.schedule().unwrap_or_else(|| tool.schedule());
    let tool = RefCell::new(tool);
    let out = RefCell::new(out);
    let pipeline = RefCell::new(pipeline);
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
        &pipeline,
        schedule,
        child.as_ref(),
        &mut links,
    )?;
    let mut tool = tool.into_inner();
    tool.detached();
    let mut out = out.into_inner();
    let mut pipeline = pipeline.into_inner();
    if ended != Ended::Count && ended != Ended::ReaderGone {
        let mut src = Bound {
            tool: &mut tool,
            skel: &skel,
        };
        pipeline.report(&mut src, &mut out, When::End)?;
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
    report_counters(skel.object(), &tool, pipeline.as_ref())?;
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

/// What a tool chose here: its programs' hooks, what they cannot see
/// ([`Tool::degraded`]) and the tool's notes on them.
struct Chosen {
    hooks: Vec<String>,
    degraded: Option<String>,
    notes: Vec<String>,
    /// What a user who is not root needs for them (doctor lists it).
    capabilities: Vec<&'static str>,
}

impl Chosen {
    /// The hooks, then what they cannot see (`degraded: …`), then the
    /// notes.
    fn lines(&self) -> Vec<String> {
        let degraded = self.degraded.iter().map(|d| format!("degraded: {d}"));
        let hooks = self.hooks.iter().cloned();
        hooks
            .chain(degraded)
            .chain(self.notes.iter().cloned())
            .collect()
    }

    /// `--dry-run`'s report: a line and the hooks, or with --json an
    /// object (`bpftools doctor` reads it).
    fn print(&self, out: &mut Out, json: bool) -> io::Result<()> {
        let tool = crate::output::tool_name();
        if json {
            return out.json(&serde_json::json!({
                "tool": tool,
                "programs": self.hooks.len(),
                "hooks": self.hooks,
                "degraded": self.degraded,
                "notes": self.notes,
                "capabilities": self.capabilities,
                // As the text lists them under its first line.
                "lines": self.lines(),
            }));
        }
        writeln!(
            out,
            "{tool}: dry run: {} programs loaded and verified, nothing attached",
            self.hooks.len()
        )?;
        for line in self.lines() {
            writeln!(out, "  {line}")?;
        }
        Ok(())
    }
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

fn event_loop<'o, T: Tool>(
    skel: &SkelOf<'o, T>,
    tool: &RefCell<T>,
    out: &RefCell<Out>,
    pipeline: &RefCell<Box<dyn Pipeline>>,
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
                    if pipeline.borrow_mut().record(data) {
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
    let extra_fd = pipeline.borrow().fd();
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
            let mut src = Bound {
                tool: &mut *tool.borrow_mut(),
                skel,
            };
            pipeline.borrow_mut().serve(&mut src)?;
        }
        pipeline.borrow_mut().idle();
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
                let mut src = Bound {
                    tool: &mut *tool.borrow_mut(),
                    skel,
                };
                pipeline
                    .borrow_mut()
                    .report(&mut src, &mut out.borrow_mut(), When::Interval)?;
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
fn report_counters<T: Tool>(obj: &Object, tool: &T, pipeline: &dyn Pipeline) -> Result<()> {
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
                let what = pipeline
                    .error_note(i)
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
