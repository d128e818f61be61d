//! Streaming per-event tools: the ring buffer loop, its stop conditions, and
//! the report of lost events.

use std::cell::RefCell;
use std::io::{self, Write};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use libbpf_rs::{MapCore, MapFlags, RingBufferBuilder};

use crate::output::Out;
use crate::run::{stop_requested, tool_name};

/// How long one poll may sleep: the bound on how late a record is printed
/// when the kernel side chose not to wake us (see events.bpf.h).
const POLL: Duration = Duration::from_millis(100);

/// When the stream ends, besides Ctrl-C, SIGTERM and a closed stdout.
#[derive(Debug, Default, Clone, Copy)]
pub struct Until {
    /// After this long.
    pub duration: Option<Duration>,
    /// When this child process has exited (it is reaped here).
    pub child: Option<libc::pid_t>,
}

/// Polls the `events` ring buffer, handing each record to `handle`, until a
/// stop condition; then drains what is left and reports on stderr how many
/// records the kernel could not queue (`lost_events`).
///
/// Output is flushed after every batch: promptly visible in a pipe or file,
/// without a write(2) per event.
pub fn stream<F>(
    events: &dyn MapCore,
    lost: &dyn MapCore,
    until: Until,
    out: &mut Out,
    mut handle: F,
) -> Result<()>
where
    F: FnMut(&[u8], &mut Out) -> io::Result<()>,
{
    let out = RefCell::new(out);
    let failure: RefCell<Option<io::Error>> = RefCell::new(None);
    let mut builder = RingBufferBuilder::new();
    builder
        .add(events, |data| {
            let mut out = out.borrow_mut();
            match handle(data, &mut out) {
                Ok(()) => 0,
                Err(e) => {
                    *failure.borrow_mut() = Some(e);
                    -1
                }
            }
        })
        .context("setting up the ring buffer")?;
    let ring = builder.build().context("setting up the ring buffer")?;
    let deadline = until.duration.map(|d| Instant::now() + d);
    let check = |rc: i32| -> Result<()> {
        if let Some(e) = failure.borrow_mut().take() {
            return Err(e.into());
        }
        if rc < 0 && rc != -libc::EINTR {
            return Err(io::Error::from_raw_os_error(-rc)).context("polling the ring buffer");
        }
        Ok(())
    };

    out.borrow_mut().flush()?;
    loop {
        if stop_requested() {
            break;
        }
        let mut timeout = POLL;
        if let Some(deadline) = deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            timeout = timeout.min(left);
        }
        check(ring.poll_raw(timeout))?;
        out.borrow_mut().flush()?;
        if out.borrow().reader_gone() {
            return Err(io::Error::from(io::ErrorKind::BrokenPipe).into());
        }
        if let Some(pid) = until.child {
            if child_exited(pid) {
                break;
            }
        }
    }
    check(ring.consume_raw())?;
    out.borrow_mut().flush()?;
    report_lost(lost)?;
    Ok(())
}

fn child_exited(pid: libc::pid_t) -> bool {
    let mut status = 0;
    // SAFETY: status is a valid out-parameter; WNOHANG never blocks.
    let rc = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    rc == pid || rc < 0
}

/// Runs `report` like BCC's aggregating tools: every `interval` seconds
/// until `count` reports or Ctrl-C (which reports what it has, then ends);
/// without an interval, once at Ctrl-C or SIGTERM.
pub fn every_interval(
    interval: Option<u64>,
    count: Option<u64>,
    mut report: impl FnMut() -> Result<()>,
) -> Result<()> {
    let mut done = 0u64;
    loop {
        let deadline = interval.map(|s| Instant::now() + Duration::from_secs(s));
        while !stop_requested() && deadline.is_none_or(|d| Instant::now() < d) {
            let left = deadline.map_or(POLL, |d| d.saturating_duration_since(Instant::now()));
            std::thread::sleep(left.min(POLL));
        }
        report()?;
        done += 1;
        if stop_requested() || interval.is_none() || count.is_some_and(|c| done >= c) {
            return Ok(());
        }
    }
}

/// Sums a per-CPU `u64` counter at key 0.
pub fn percpu_sum(map: &dyn MapCore) -> Result<u64> {
    percpu_sum_at(map, 0)
}

/// Sums the per-CPU `u64` counter at `index` of a per-CPU array.
pub fn percpu_sum_at(map: &dyn MapCore, index: u32) -> Result<u64> {
    let values = map
        .lookup_percpu(&index.to_ne_bytes(), MapFlags::ANY)
        .with_context(|| format!("reading map {}", map.name().to_string_lossy()))?
        .unwrap_or_default();
    Ok(values
        .iter()
        .filter_map(|v| {
            v.get(..8)
                .map(|b| u64::from_ne_bytes(b.try_into().unwrap()))
        })
        .sum())
}

/// Prints `tool: N <note>` on stderr for each non-zero counter of a
/// per-CPU array of failure counts (index i goes with `notes[i]`): stack
/// map collisions, full maps, and the like.
pub fn report_failures(counters: &dyn MapCore, notes: &[&str]) -> Result<()> {
    let tool = tool_name();
    for (i, note) in notes.iter().enumerate() {
        let n = percpu_sum_at(counters, i as u32)?;
        if n > 0 {
            eprintln!("{tool}: {n} {note}");
        }
    }
    Ok(())
}

/// Prints `tool: N events lost` on stderr when the ring buffer overflowed.
pub fn report_lost(lost: &dyn MapCore) -> Result<u64> {
    let n = percpu_sum(lost)?;
    if n > 0 {
        eprintln!(
            "{}: {n} events lost: the ring buffer was full (output too slow)",
            tool_name()
        );
    }
    Ok(n)
}

/// Copies a ring buffer record into `dst`. The record may be shorter than
/// `T` when the kernel side sent only the used part of a trailing array
/// (execsnoop's arguments); the rest of `dst` keeps its old bytes, so the
/// record's own length fields say how much of the tail is valid.
pub fn copy_record<T: plain::Plain>(dst: &mut T, data: &[u8]) {
    // SAFETY: T is Plain, so any bytes written form a valid T; the copy
    // stays within size_of::<T>().
    let bytes = unsafe { plain::as_mut_bytes(dst) };
    let n = data.len().min(bytes.len());
    bytes[..n].copy_from_slice(&data[..n]);
}
