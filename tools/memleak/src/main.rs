//! memleak: outstanding memory allocations by stack, in a process (uprobes
//! on its allocator) or in the kernel (kmem tracepoints).

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::io::Write;
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use common::cli::{self, CommonArgs, IdList};
use common::launch::Held;
use common::output::{now_hms, Clock, Out};
use common::run::{self, stop_requested};
use common::sym::{self, Frame, Symbolizer};
use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use libbpf_rs::{Link, MapCore, MapFlags, RingBufferBuilder, UprobeOpts};
use serde_json::json;

common::skeleton!("memleak");
use skel::{types, MemleakSkelBuilder};

// SAFETY: repr(C) structs of integers, valid for any bytes.
unsafe impl plain::Plain for types::alloc_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::alloc_info {}
// SAFETY: as above.
unsafe impl plain::Plain for types::combined_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::combined {}
// SAFETY: as above.
unsafe impl plain::Plain for types::mem_event {}

const EXAMPLES: &str = "\
EXAMPLES:
    memleak -p 1234               # outstanding allocations of process 1234, every 5 s
    memleak -p 1234 -t            # also print each allocation and free
    memleak -p 1234 -a 10         # list the allocations too, every 10 s
    memleak -c './leaky --arg'    # run a command and trace it
    memleak -p 1234 -f 30 1 > mem.folded   # memory flame graph input
    memleak                       # kernel allocations (kmalloc, kmem_cache, pages)
    memleak -P                    # kernel, with per-CPU allocations too
    memleak -p 1234 -s 5          # sample one allocation in 5
    memleak -p 1234 -O /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 -S je_";

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum SortBy {
    Size,
    Count,
}

/// Trace outstanding memory allocations that were not freed, and print
/// the stacks that made them, every interval.
///
/// With -p or -c, the allocator functions of a process (malloc, calloc,
/// realloc, reallocarray, posix_memalign, aligned_alloc, valloc, memalign,
/// pvalloc, mmap, munmap, mremap, free) are traced with uprobes; otherwise
/// kernel allocations are (kmalloc, kmem_cache_alloc, page allocations).
#[derive(Parser, Debug)]
#[command(name = "memleak", version, after_help = EXAMPLES)]
struct Args {
    /// Trace these processes (comma-separated pids); default: the kernel
    #[arg(short = 'p', long, value_parser = cli::id_list, conflicts_with = "command")]
    pid: Option<IdList>,
    /// Print each allocation and free as it happens
    #[arg(short = 't', long)]
    trace: bool,
    /// Show the address and size of each outstanding allocation
    #[arg(short = 'a', long)]
    show_allocs: bool,
    /// Only report allocations older than this many milliseconds
    #[arg(short = 'o', long, value_name = "MS", default_value_t = 500)]
    older: u64,
    /// Run this command (split at spaces) and trace it; the tool ends when
    /// it exits, with a last report
    #[arg(short = 'c', long, value_name = "CMD")]
    command: Option<String>,
    /// Report the in-kernel running totals per stack only (faster; no -o)
    #[arg(short = 'C', long)]
    combined_only: bool,
    /// Treat an address allocated again as freed (a free was missed)
    #[arg(short = 'F', long)]
    wa_missing_free: bool,
    /// Sample every N-th allocation, to cut the overhead
    #[arg(short = 's', long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..))]
    sample_rate: u64,
    /// Show this many stacks with the most outstanding memory
    #[arg(short = 'T', long, value_name = "N", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..))]
    top: u64,
    /// Ignore allocations smaller than this many bytes
    #[arg(short = 'z', long, value_name = "BYTES")]
    min_size: Option<u64>,
    /// Ignore allocations larger than this many bytes
    #[arg(short = 'Z', long, value_name = "BYTES")]
    max_size: Option<u64>,
    /// The allocator's library or executable (default: the process's libc)
    #[arg(short = 'O', long, value_name = "PATH")]
    obj: Option<PathBuf>,
    /// Kernel mode: trace per-CPU allocations too
    #[arg(short = 'P', long)]
    percpu: bool,
    /// A prefix of the allocator's function names (e.g. je_ for jemalloc)
    #[arg(short = 'S', long, value_name = "PREFIX", default_value = "")]
    symbols_prefix: String,
    /// Order the stacks by outstanding bytes or by allocation count
    #[arg(long, value_enum, default_value_t = SortBy::Size)]
    sort: SortBy,
    /// The number of unique stack traces that can be stored
    #[arg(long, value_name = "N", default_value_t = 10240,
          value_parser = clap::value_parser!(u32).range(1..))]
    stack_storage_size: u32,
    /// The limit for stack traces
    #[arg(long, value_name = "DEPTH", default_value_t = 127,
          value_parser = clap::value_parser!(u32).range(1..=127))]
    perf_max_stack_depth: u32,
    /// Print folded lines (`comm;root;...;leaf bytes`) for a memory flame
    /// graph, instead of stacks
    #[arg(short = 'f', long, conflicts_with = "json")]
    folded: bool,
    /// Interval between reports, in seconds
    #[arg(default_value_t = 5, value_parser = cli::positive_u64)]
    interval: u64,
    /// Number of reports before exiting (default: unlimited)
    #[arg(value_parser = cli::positive_u64)]
    count: Option<u64>,
    #[command(flatten)]
    common: CommonArgs,
}

/// The allocator's functions: name, entry program, return program.
const FUNCTIONS: &[(&str, &str, Option<&str>)] = &[
    ("malloc", "malloc_enter", Some("malloc_exit")),
    ("calloc", "calloc_enter", Some("malloc_exit")),
    ("realloc", "realloc_enter", Some("malloc_exit")),
    ("reallocarray", "reallocarray_enter", Some("malloc_exit")),
    (
        "posix_memalign",
        "posix_memalign_enter",
        Some("posix_memalign_exit"),
    ),
    ("aligned_alloc", "aligned_alloc_enter", Some("malloc_exit")),
    ("valloc", "valloc_enter", Some("malloc_exit")),
    ("memalign", "memalign_enter", Some("malloc_exit")),
    ("pvalloc", "pvalloc_enter", Some("malloc_exit")),
    ("mmap", "mmap_enter", Some("malloc_exit")),
    ("munmap", "munmap_enter", None),
    ("mremap", "mremap_enter", Some("malloc_exit")),
    ("free", "free_enter", None),
];

fn main() -> std::process::ExitCode {
    run::main(|| trace(Args::parse()))
}

/// The file a process maps its libc from, through /proc/PID/root so that a
/// process in another mount namespace (a container) is found too.
fn libc_of(pid: u32) -> Result<PathBuf> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .with_context(|| format!("reading /proc/{pid}/maps: is process {pid} running?"))?;
    let path = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| {
            let name = Path::new(p)
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned());
            name == "libc.so.6"
                || (name.starts_with("libc-") && name.ends_with(".so"))
                || name == "libc.so"
        })
        .with_context(|| {
            format!("process {pid} maps no libc (statically linked?): name its allocator with -O")
        })?;
    Ok(PathBuf::from(format!("/proc/{pid}/root{path}")))
}

/// A report's stacks: outstanding bytes and allocations per process and stack.
#[derive(Default)]
struct Group {
    bytes: u64,
    count: u64,
    allocs: Vec<(u64, u64)>,
}

fn trace(args: Args) -> Result<()> {
    run::libbpf_log(args.common.verbose);
    let command: Option<Vec<OsString>> = args
        .command
        .as_ref()
        .map(|c| c.split_whitespace().map(OsString::from).collect());
    if command.as_ref().is_some_and(|c| c.is_empty()) {
        bail!("-c: the command is empty");
    }
    if let (Some(min), Some(max)) = (args.min_size, args.max_size) {
        if min > max {
            bail!("-z {min} is above -Z {max}: nothing could be counted");
        }
    }
    let user_mode = args.pid.is_some() || command.is_some();
    if args.percpu && user_mode {
        bail!("-P traces per-CPU allocations of the kernel: it does not go with -p or -c");
    }
    if let Some(IdList(pids)) = &args.pid {
        for pid in pids {
            if !Path::new(&format!("/proc/{pid}")).exists() {
                bail!("there is no process {pid}");
            }
        }
    }
    if let Some(obj) = &args.obj {
        if !obj.is_file() {
            bail!("-O {}: no such file", obj.display());
        }
    }

    let mut object = MaybeUninit::uninit();
    let mut open = MemleakSkelBuilder::default()
        .open(&mut object)
        .context("opening the BPF object")?;
    let rodata = open
        .maps
        .rodata_data
        .as_deref_mut()
        .context("the BPF object has no rodata")?;
    rodata.min_size = args.min_size.unwrap_or(0);
    rodata.max_size = args.max_size.unwrap_or(u64::MAX);
    rodata.sample_every = args.sample_rate;
    // SAFETY: sysconf has no preconditions.
    rodata.page_size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    rodata.trace_all = args.trace;
    rodata.wa_missing_free = args.wa_missing_free;
    rodata.user_stacks = user_mode;
    open.maps
        .stack_traces
        .set_value_size(args.perf_max_stack_depth * 8)?;
    open.maps
        .stack_traces
        .set_max_entries(args.stack_storage_size)?;
    for mut prog in open.open_object_mut().progs_mut() {
        let name = prog.name().to_string_lossy().into_owned();
        let kernel_prog = name.starts_with("ml_");
        let keep = if user_mode {
            !kernel_prog
        } else {
            kernel_prog && (args.percpu || !name.starts_with("ml_percpu"))
        };
        prog.set_autoload(keep);
    }

    // The command is forked before loading and held until attached.
    let held = command.as_deref().map(Held::spawn).transpose()?;
    let pids: Vec<u32> = match (&args.pid, &held) {
        (Some(IdList(pids)), _) => pids.clone(),
        (None, Some(h)) => vec![h.pid() as u32],
        _ => Vec::new(),
    };

    let Some(mut skel) = common::skel::load(open, &args.common)? else {
        return Ok(());
    };
    let mut links: Vec<Link> = Vec::new();
    if user_mode {
        for pid in &pids {
            let lib = match &args.obj {
                Some(obj) => obj.clone(),
                None => libc_of(*pid)?,
            };
            links.extend(attach_allocator(&mut skel, *pid, &lib, &args)?);
        }
    } else {
        skel.attach().context("attaching the kmem tracepoints")?;
    }

    let mut out = Out::default();
    let what = if user_mode {
        format!(
            "Attaching to pid {}, Ctrl+C to quit.",
            pids.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        )
    } else {
        "Attaching to kernel allocators, Ctrl+C to quit.".to_string()
    };
    out.banner(args.common.json || args.folded, &what)?;
    let child = held.as_ref().map(|h| h.pid());
    if let Some(h) = held {
        h.release()?;
        wait_for_exec(child.unwrap_or(0) as u32);
    }
    let mut symbolizer = Symbolizer::new();
    for pid in &pids {
        symbolizer.keep_process(*pid);
    }
    run_loop(&args, &skel, &pids, child, &mut out, &mut symbolizer)?;
    drop(links);
    report_errors(&skel.maps.errors)?;
    common::events::report_lost(&skel.maps.lost_events)?;
    Ok(())
}

/// Attaches the allocator's entry and return probes in `lib` for `pid`.
/// Functions the library lacks are skipped (noted with -v); malloc and
/// free must be there.
fn attach_allocator(
    skel: &mut skel::MemleakSkel,
    pid: u32,
    lib: &Path,
    args: &Args,
) -> Result<Vec<Link>> {
    let mut links = Vec::new();
    for (func, enter, exit) in FUNCTIONS {
        let symbol = format!("{}{func}", args.symbols_prefix);
        let mut attach = |prog_name: &str, retprobe: bool| -> Result<Link> {
            let prog = skel
                .object_mut()
                .progs_mut()
                .find(|p| p.name().to_string_lossy() == prog_name)
                .with_context(|| format!("no program {prog_name}"))?;
            let opts = UprobeOpts {
                retprobe,
                func_name: Some(symbol.clone()),
                ..Default::default()
            };
            Ok(prog.attach_uprobe_with_opts(pid as i32, lib, 0, opts)?)
        };
        // The return probe first: an entry without its return would leave
        // sizes behind.
        let result = exit
            .map(|x| attach(x, true))
            .transpose()
            .and_then(|ret| Ok((ret, attach(enter, false)?)));
        match result {
            Ok((ret, entry)) => {
                links.extend(ret);
                links.push(entry);
            }
            Err(e) if *func != "malloc" && *func != "free" => {
                if args.common.verbose {
                    eprintln!(
                        "{}: {symbol} not traced in {}: {e:#}",
                        run::tool_name(),
                        lib.display()
                    );
                }
            }
            Err(e) => {
                return Err(e).with_context(|| {
                    format!("attaching to {symbol} in {} (pid {pid})", lib.display())
                })
            }
        }
    }
    Ok(links)
}

/// Waits (a second at most) until a released command has replaced our
/// forked image with its own, so that its memory map can be cached.
fn wait_for_exec(pid: u32) {
    let ours = std::fs::read_link("/proc/self/exe").ok();
    let deadline = Instant::now() + Duration::from_secs(1);
    while Instant::now() < deadline {
        match std::fs::read_link(format!("/proc/{pid}/exe")) {
            Ok(exe) if Some(&exe) != ours.as_ref() => return,
            Err(_) => return,
            _ => std::thread::sleep(Duration::from_millis(1)),
        }
    }
}

fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid as i32, 0) == 0 }
}

fn child_exited(pid: libc::pid_t) -> bool {
    let mut status = 0;
    // SAFETY: status is a valid out-parameter; WNOHANG never blocks.
    let rc = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    rc == pid || rc < 0
}

/// Reports every interval until the count, Ctrl-C, or the end of every
/// traced process (a last report then); with -t, prints each call between.
fn run_loop(
    args: &Args,
    skel: &skel::MemleakSkel,
    pids: &[u32],
    child: Option<libc::pid_t>,
    out: &mut Out,
    symbolizer: &mut Symbolizer,
) -> Result<()> {
    let clock = Clock::start();
    let events_out = RefCell::new(Out::default());
    let mut ring = None;
    if args.trace {
        let mut builder = RingBufferBuilder::new();
        builder.add(&skel.maps.events, |data| {
            let mut e = types::mem_event::default();
            common::events::copy_record(&mut e, data);
            let mut o = events_out.borrow_mut();
            let r = if args.common.json {
                o.json(&json!({
                    "time": clock.hms(e.ts_ns),
                    "event": if e.alloc != 0 { "alloc" } else { "free" },
                    "pid": e.pid,
                    "tid": e.tid,
                    "addr": format!("{:#x}", e.addr),
                    "size": e.size,
                }))
            } else if e.alloc != 0 {
                writeln!(
                    o,
                    "{} {:<7} {:<7} alloc {} bytes at {:#x}",
                    clock.hms(e.ts_ns),
                    e.pid,
                    e.tid,
                    e.size,
                    e.addr
                )
            } else {
                writeln!(
                    o,
                    "{} {:<7} {:<7} free {:#x}",
                    clock.hms(e.ts_ns),
                    e.pid,
                    e.tid,
                    e.addr
                )
            };
            -i32::from(r.is_err())
        })?;
        ring = Some(builder.build()?);
    }
    let mut done = 0u64;
    let mut cached_at = Instant::now();
    loop {
        let deadline = Instant::now() + Duration::from_secs(args.interval);
        let mut gone = false;
        while !stop_requested() && Instant::now() < deadline {
            // Keep the memory maps fresh (dlopen) while the processes live,
            // so that a last report after they exit can still symbolize.
            if cached_at.elapsed() >= Duration::from_millis(500) {
                for pid in pids.iter().filter(|p| alive(**p)) {
                    symbolizer.keep_process(*pid);
                }
                cached_at = Instant::now();
            }
            let step = deadline
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(100));
            match &ring {
                Some(r) => {
                    let _ = r.poll(step);
                    events_out.borrow_mut().flush()?;
                }
                None => std::thread::sleep(step),
            }
            gone = match child {
                Some(c) => child_exited(c),
                None => !pids.is_empty() && pids.iter().all(|p| !alive(*p)),
            };
            if gone {
                break;
            }
        }
        if let Some(r) = &ring {
            let _ = r.consume();
            events_out.borrow_mut().flush()?;
        }
        let started = Instant::now();
        let stacks = report(args, skel, pids, out, symbolizer)?;
        out.flush()?;
        if args.common.verbose {
            eprintln!(
                "{}: report: {stacks} stacks in {} ms, peak RSS {} KiB",
                run::tool_name(),
                started.elapsed().as_millis(),
                peak_rss_kib()
            );
        }
        done += 1;
        if gone || stop_requested() || args.count.is_some_and(|c| done >= c) {
            return Ok(());
        }
    }
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-parameter.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn collect(args: &Args, skel: &skel::MemleakSkel) -> Result<HashMap<(u32, i32), Group>> {
    let mut groups: HashMap<(u32, i32), Group> = HashMap::new();
    if args.combined_only {
        for key in skel.maps.combined.keys() {
            let Some(value) = skel.maps.combined.lookup(&key, MapFlags::ANY)? else {
                continue;
            };
            let mut k = types::combined_key::default();
            let mut v = types::combined::default();
            plain::copy_from_bytes(&mut k, &key).ok();
            plain::copy_from_bytes(&mut v, &value).ok();
            if v.count > 0 {
                let g = groups.entry((k.tgid, k.stack_id)).or_default();
                g.bytes += v.bytes;
                g.count += v.count;
            }
        }
        return Ok(groups);
    }
    let older_ns = args.older.saturating_mul(1_000_000);
    let now = monotonic_ns();
    for key in skel.maps.allocs.keys() {
        let Some(value) = skel.maps.allocs.lookup(&key, MapFlags::ANY)? else {
            continue;
        };
        let mut k = types::alloc_key::default();
        let mut info = types::alloc_info::default();
        plain::copy_from_bytes(&mut k, &key).ok();
        plain::copy_from_bytes(&mut info, &value).ok();
        if now.saturating_sub(info.ts_ns) <= older_ns {
            continue;
        }
        let g = groups.entry((info.tgid, info.stack_id)).or_default();
        g.bytes += info.size;
        g.count += 1;
        if args.show_allocs {
            g.allocs.push((k.addr, info.size));
        }
    }
    Ok(groups)
}

/// This process's peak resident set (VmHWM), for -v.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn comm_of(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|c| c.trim_end().to_string())
        .unwrap_or_else(|_| format!("pid-{pid}"))
}

fn report(
    args: &Args,
    skel: &skel::MemleakSkel,
    pids: &[u32],
    out: &mut Out,
    symbolizer: &mut Symbolizer,
) -> Result<usize> {
    let groups = collect(args, skel)?;
    let mut ranked: Vec<(&(u32, i32), &Group)> = groups.iter().collect();
    ranked.sort_by_key(|(k, g)| {
        let primary = match args.sort {
            SortBy::Size => g.bytes,
            SortBy::Count => g.count,
        };
        std::cmp::Reverse((primary, g.count, g.bytes, k.1))
    });
    ranked.truncate(args.top as usize);
    // BCC's order: ascending, the biggest last.
    ranked.reverse();

    let mut stacks: HashMap<i32, Vec<u64>> = HashMap::new();
    for ((_, id), _) in &ranked {
        if let Some(addrs) = sym::read_stack(&skel.maps.stack_traces, *id)? {
            stacks.insert(*id, addrs);
        }
    }
    let user_mode = !pids.is_empty();
    let mut seen_pids: HashSet<u32> = HashSet::new();
    for ((pid, id), _) in &ranked {
        if let Some(s) = stacks.get(id) {
            if user_mode {
                seen_pids.insert(*pid);
                symbolizer.prefetch_user(*pid, sym::lookup_addresses(s));
            } else {
                symbolizer.prefetch_kernel(sym::lookup_addresses(s));
            }
        }
    }
    let time = now_hms();
    if !args.common.json && !args.folded {
        writeln!(
            out,
            "[{time}] Top {} stacks with outstanding allocations:",
            args.top
        )?;
    }
    for ((pid, id), g) in &ranked {
        let frames: Option<Vec<std::rc::Rc<Frame>>> = stacks.get(id).map(|s| {
            if user_mode {
                symbolizer.user(*pid, s)
            } else {
                sym::trim_tracing_frames(&symbolizer.kernel(s)).to_vec()
            }
        });
        if args.common.json {
            let part = match &frames {
                Some(f) => sym::Part::Frames(f.clone()),
                None => sym::Part::Missed,
            };
            let mut o = json!({
                "time": time,
                "bytes": g.bytes,
                "allocations": g.count,
                "stack": sym::part_json(&part, true),
            });
            if user_mode {
                o["pid"] = (*pid).into();
            }
            if args.show_allocs {
                o["allocs"] = g
                    .allocs
                    .iter()
                    .map(|(a, s)| json!({"addr": format!("{a:#x}"), "size": s}))
                    .collect();
            }
            out.json(&o)?;
            continue;
        }
        if args.folded {
            let mut line = if user_mode {
                comm_of(*pid).replace([';', ' '], "_")
            } else {
                "[kernel]".to_string()
            };
            match &frames {
                Some(f) => {
                    for frame in f.iter().rev() {
                        line.push(';');
                        line.push_str(&frame.folded_name(false));
                    }
                }
                None => line.push_str(";[Missed Stack]"),
            }
            writeln!(out, "{line} {}", g.bytes)?;
            continue;
        }
        if args.show_allocs {
            for (addr, size) in &g.allocs {
                writeln!(out, "\taddr = {addr:x} size = {size}")?;
            }
        }
        writeln!(
            out,
            "\t{} bytes in {} allocations from stack",
            g.bytes, g.count
        )?;
        match &frames {
            Some(f) => {
                for frame in f {
                    writeln!(out, "\t\t{}", frame.long_label())?;
                }
            }
            None => writeln!(out, "\t\t[Missed Stack]")?,
        }
        if pids.len() > 1 {
            writeln!(out, "\t\t-    {} ({pid})", comm_of(*pid))?;
        }
    }
    Ok(ranked.len())
}

/// Stack and map failures counted in the kernel, on stderr.
fn report_errors(errors: &dyn MapCore) -> Result<()> {
    let notes = [
        "stacks not recorded: hash collisions in the stack map (raise --stack-storage-size)",
        "stacks not recorded: the stack map was full (raise --stack-storage-size)",
        "stacks not recorded for another error",
        "allocations not tracked: the allocation map was full",
        "allocations not totalled for -C: the stack totals map was full",
    ];
    common::events::report_failures(errors, &notes)
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
            &["memleak", "0"][..],
            &["memleak", "-p", "x"],
            &["memleak", "-p", "1", "-c", "ls"],
            &["memleak", "-s", "0"],
            &["memleak", "-T", "0"],
            &["memleak", "--sort", "name"],
            &["memleak", "-f", "--json"],
            &["memleak", "--perf-max-stack-depth", "200"],
        ] {
            assert!(Args::try_parse_from(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
