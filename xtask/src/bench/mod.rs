//! `cargo xtask bench [TOOL...] [--rounds N] [--allow-foreign]`: each tool
//! against its peers (libbpf-tools, bpftrace, BCC) on the same workload, in
//! interleaved rounds, with nothing foreign attached and nothing left
//! running. Figures are medians and ranges across rounds; the results go to
//! target/bench/results.json, which `cargo xtask bench-table` puts into
//! README.md. Each traced condition runs once more after the timed rounds
//! with kernel.bpf_stats_enabled on, for its BPF programs' own run time
//! (bpf_stats.rs). Numbers, not assertions.

mod attach;
mod bpf_stats;
mod foreign;
mod measure;
mod memleak;
mod peers;
mod proc;
mod profile;
mod readme;
mod report;
mod scrape;
mod sideband;
mod stats;
mod unwind;
mod workloads;

use std::path::Path;

use anyhow::{bail, Context, Result};
use registry::{Bench, Extra, ToolInfo};
use serde_json::{json, Value};

pub use readme::bench_table;

use measure::Run;
use peers::{Condition, Peers, Role, Unavailable};
use report::{ConditionResult, Meta, ToolResult};
use testbed::Netns;
use workloads::{Scratch, Workload};

const DEFAULT_ROUNDS: usize = 5;

const USAGE: &str = "usage: cargo xtask bench [TOOL...] [--rounds N] [--allow-foreign] | --list";

struct Options {
    tools: Vec<String>,
    rounds: usize,
    allow_foreign: bool,
    list: bool,
}

impl Options {
    /// `tools`: the workspace's tools, all benched when none is named.
    fn parse(args: &[String], tools: &[String]) -> Result<Options> {
        let mut opts = Options {
            tools: Vec::new(),
            rounds: DEFAULT_ROUNDS,
            allow_foreign: false,
            list: false,
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let rounds = match arg.as_str() {
                "--allow-foreign" => {
                    opts.allow_foreign = true;
                    continue;
                }
                "--list" => {
                    opts.list = true;
                    continue;
                }
                "--rounds" => args.next().map(String::as_str),
                a if a.starts_with("--rounds=") => Some(&a["--rounds=".len()..]),
                a if a.starts_with('-') => bail!("unknown option {a}\n{USAGE}"),
                tool if tools.iter().any(|t| t == tool) => {
                    opts.tools.push(tool.to_string());
                    continue;
                }
                other => bail!(
                    "no tool named '{other}'; tools: {}\n{USAGE}",
                    tools.join(", ")
                ),
            };
            opts.rounds = rounds
                .and_then(|n| n.parse().ok())
                .filter(|&n: &usize| n >= 1)
                .with_context(|| {
                    format!("--rounds needs a number of rounds, 1 or more\n{USAGE}")
                })?;
        }
        if opts.tools.is_empty() {
            opts.tools = tools.to_vec();
        }
        Ok(opts)
    }
}

/// The peers, the workloads' programs, and the kernel headers BCC compiles against.
fn packages() -> Vec<&'static str> {
    let headers = match std::env::consts::ARCH {
        "aarch64" => "linux-headers-arm64",
        _ => "linux-headers-amd64",
    };
    vec![
        "libbpf-tools",
        "bpftrace",
        "bpfcc-tools",
        headers,
        "linux-perf",
        "fio",
        "iproute2",
        "nftables",
        // The floors' programs are matched to the running kernel's BTF,
        // which bpftool dumps.
        "bpftool",
    ]
}

pub fn main(args: &[String]) -> Result<()> {
    let opts = Options::parse(args, &crate::tools::names())?;
    if opts.list {
        for name in &opts.tools {
            let tool = crate::tools::find(name)?;
            println!("{:<12} {}", tool.name, peers::describe(tool));
        }
        return Ok(());
    }
    // A tool without a bench is said and left out; the others run.
    let mut opts = opts;
    opts.tools.retain(|name| {
        let benched = crate::tools::find(name).is_ok_and(|t| t.bench.is_some());
        if !benched {
            println!("bench: {name} has no bench workload (tools/{name}/src/info.rs): not run");
        }
        benched
    });
    if opts.tools.is_empty() {
        bail!("none of the tools named has a bench workload");
    }
    if !crate::is_root() {
        bail!("bench loads BPF programs: run it as root");
    }
    crate::deps(&packages())?;
    // And our other tools that stand beside them as yardsticks.
    let mut builds = opts.tools.clone();
    for name in &opts.tools {
        let peers = crate::tools::find(name)?
            .bench
            .as_ref()
            .map_or(&[][..], |b| b.peers);
        for p in peers {
            if let registry::PeerRun::OurTool { tool, .. } = p.runs {
                if !builds.iter().any(|b| b == tool) {
                    builds.push(tool.to_string());
                }
            }
        }
    }
    let bins = crate::build_release(&builds)?;
    proc::become_subreaper()?;
    let mut watch = foreign::Watch::start(opts.allow_foreign)?;
    let meta = Meta::now(opts.rounds);
    let mut done = Vec::new();
    let outcome = run(&opts, &bins, &mut watch, &meta, &mut done);
    // Whatever happened: nothing the bench started may outlive it.
    let left = watch.finish();
    if !done.is_empty() {
        let (names, mut results): (Vec<String>, Vec<_>) = done.into_iter().unzip();
        // Each tool's entry outlives this run in results.json: it carries
        // what was loaded beside it.
        for r in &mut results {
            r["foreign_programs"] = watch.to_json();
        }
        let run = json!({
            "tools": names,
            "foreign_programs": watch.to_json(),
            "left_behind": left,
            "error": outcome.as_ref().err().map(|e| format!("{e:#}")),
        });
        let path = report::save(&results, &names, &meta, run)?;
        println!(
            "\nresults: {} (cargo xtask bench-table puts them in README.md)",
            path.display()
        );
    }
    if !left.is_empty() {
        for line in &left {
            eprintln!("bench: LEFT BEHIND: {line}");
        }
        bail!(
            "the bench left {} process(es) or BPF program(s) behind (killed where possible); \
             its figures are suspect",
            left.len()
        );
    }
    println!("bench: checked: no child process and no BPF program of the bench remains");
    outcome
}

fn run(
    opts: &Options,
    bins: &Path,
    watch: &mut foreign::Watch,
    meta: &Meta,
    done: &mut Vec<(String, serde_json::Value)>,
) -> Result<()> {
    let scratch = Scratch::new()?;
    let headers = peers::kernel_headers().map_err(|e| format!("{e:#}"));
    if let Err(why) = &headers {
        eprintln!("bench: no kernel header tree (BCC, bpftrace includes): {why}");
    }
    let floor = peers::build_floor(&scratch.dir).map_err(|e| format!("{e:#}"));
    let peers = Peers {
        ours: bins.to_path_buf(),
        headers,
        floor,
    };
    let benches: Vec<(&ToolInfo, &Bench)> = opts
        .tools
        .iter()
        .filter_map(|name| crate::tools::find(name).ok())
        .filter_map(|t| t.bench.as_ref().map(|b| (t, b)))
        .collect();
    let netns = if benches.iter().any(|(_, b)| {
        matches!(
            b.workload,
            registry::Workload::LossyTransfer | registry::Workload::ConnectLoop { .. }
        )
    }) {
        Some(workloads::lossy_netns()?)
    } else {
        None
    };
    // All up front: a workload that cannot be made fails before anything is measured.
    let workloads = benches
        .iter()
        .map(|(_, b)| workload(b.workload, &scratch, netns.as_ref()))
        .collect::<Result<Vec<_>>>()?;
    for ((info, bench), workload) in benches.iter().zip(&workloads) {
        let tool = &info.name.to_string();
        let (conditions, unavailable) = peers.conditions(info, bench);
        println!("\n== {tool}: {}", workload.name);
        let mut result = rounds(tool, workload, conditions, unavailable, opts.rounds, watch)?;
        let mut failed = None;
        for extra in bench.extras {
            match extra {
                Extra::LeakReports => {
                    let bin = bins.join(tool);
                    let reports = memleak::report_phases(&bin, &scratch.dir, opts.rounds, watch);
                    let extras = memleak::extras(&result, &reports);
                    result.extra_lines = memleak::describe_extras(&extras);
                    result.extras = Some(extras);
                    failed = reports.err();
                }
                Extra::UnwindCost => {
                    let phases = unwind::phases(bins, &scratch.dir, opts.rounds, watch);
                    let extras = unwind::extras(&phases);
                    result.extra_lines = unwind::describe_extras(&extras);
                    result.extras = Some(extras);
                    failed = phases.err();
                }
                Extra::SamplingCost => {
                    let phases = profile::phases(bins, &scratch.dir, opts.rounds, watch);
                    let extras = profile::extras(&phases);
                    result.extra_lines = profile::describe_extras(&extras);
                    result.extras = Some(extras);
                    failed = phases.err();
                }
                Extra::AttachMany => {
                    let phases =
                        attach::phases(bins, &scratch.dir, &peers.headers, opts.rounds, watch);
                    let extras = attach::extras(&phases);
                    result.extra_lines = attach::describe_extras(&extras);
                    result.extras = Some(extras);
                    failed = phases.err();
                }
                Extra::MappingRecords => {
                    let ours = bench.ours.first().context("no condition of ours")?;
                    let ready = match ours.ready {
                        registry::Ready::Line(text) => text,
                        _ => bail!("{tool}: the side band phase needs a ready line"),
                    };
                    let phases = sideband::phases(
                        &bins.join(tool),
                        ours.args,
                        ready,
                        &scratch.dir,
                        opts.rounds,
                        watch,
                    );
                    let extras = sideband::extras(&phases);
                    // Besides the tool's other extras.
                    result
                        .extra_lines
                        .extend(sideband::describe_extras(&extras));
                    match (&mut result.extras, extras) {
                        (Some(Value::Object(have)), Value::Object(more)) => have.extend(more),
                        (slot, extras) => *slot = Some(extras),
                    }
                    failed = failed.or(phases.err());
                }
                Extra::PrometheusScrape => {
                    let phases = scrape::phases(bins, opts.rounds, watch);
                    let extras = scrape::extras(&phases);
                    result.extra_lines = scrape::describe_extras(&extras);
                    result.extras = Some(extras);
                    failed = phases.err();
                }
            }
        }
        result.print(opts.rounds);
        done.push((tool.clone(), result.to_json(meta)));
        // Ours failing is an error, once what was measured is kept.
        if let Some(e) = failed {
            return Err(e);
        }
    }
    Ok(())
}

/// The workload a tool's description names, made ready to run.
fn workload(w: registry::Workload, scratch: &Scratch, netns: Option<&Netns>) -> Result<Workload> {
    use registry::Workload as W;
    let dir = &scratch.dir;
    Ok(match w {
        W::OpenLoop { opens } => workloads::open_loop(dir, opens.into())?,
        W::StatLoop { stats } => workloads::stat_loop(dir, stats.into())?,
        W::ReadLoop { reads } => workloads::read_loop(dir, reads.into())?,
        W::FdatasyncLoop { syncs } => workloads::fdatasync_loop(dir, syncs.into())?,
        W::UnlinkLoop { files } => workloads::unlink_loop(dir, files.into())?,
        W::SyncfsLoop { syncs } => workloads::syncfs_loop(dir, syncs.into())?,
        W::ExecLoop { execs } => workloads::exec_loop(dir, execs.into())?,
        W::SignalLoop { signals } => workloads::signal_loop(dir, signals.into())?,
        W::ChownLoop { chowns } => workloads::chown_loop(dir, chowns.into())?,
        W::ShmLoop { rounds } => workloads::shm_loop(dir, rounds.into())?,
        W::BindLoop { rounds } => workloads::bind_loop(dir, rounds.into())?,
        W::FdPassLoop { rounds } => workloads::fd_pass_loop(dir, rounds.into())?,
        W::ThreadLoop { threads } => workloads::thread_loop(dir, threads.into())?,
        W::PipeLockLoop { threads, writes } => workloads::pipe_lock_loop(dir, threads, writes)?,
        W::MutexLoop { threads, locks } => workloads::mutex_loop(dir, threads, locks)?,
        W::CompactLoop { rounds } => workloads::compact_loop(rounds),
        W::CgroupReclaim { passes } => workloads::cgroup_reclaim(dir, passes)?,
        W::GetppidLoop { calls } => workloads::getppid_loop(dir, calls)?,
        W::SchedPipe { messages } => workloads::sched_pipe(messages),
        W::FioRandread => workloads::fio_randread(dir)?,
        W::LossyTransfer => workloads::lossy_transfer(netns.context("no network namespace")?),
        W::ConnectLoop { connections } => {
            workloads::connect_loop(netns.context("no network namespace")?, connections)
        }
        W::CachedReads => workloads::cached_reads(dir)?,
        W::MallocLoop => memleak::malloc_loop(dir)?,
        W::CpuJob { units } => workloads::cpu_job(dir, units)?,
    })
}

/// A warm-up run, then every condition once per round, in an order rotated
/// each round; the slowdown is taken within the round. A peer that fails is dropped and
/// reported; ours failing is an error.
fn rounds(
    tool: &str,
    w: &Workload,
    conditions: Vec<Condition>,
    mut unavailable: Vec<Unavailable>,
    n: usize,
    watch: &mut foreign::Watch,
) -> Result<ToolResult> {
    assert_eq!(conditions[0].role, Role::Untraced, "untraced comes first");
    let mut runs: Vec<Vec<Run>> = conditions.iter().map(|_| Vec::new()).collect();
    let mut active: Vec<usize> = (0..conditions.len()).collect();
    let mut order_log = Vec::new();
    // Not counted: a first run pays for cold caches (and the first transfer
    // in a new network namespace for more).
    // Off for the timed rounds (left on by an interrupted bench, it would
    // slow every program run); back to what it was after them.
    let stats_off = bpf_stats::StatsSysctl::disable().ok();
    let warm = measure::untraced(w).context("the workload's warm-up run")?;
    println!("   [warm-up] {:<24} {}", "untraced", progress(&warm, w));
    for round in 0..n {
        let mut order = active.clone();
        let turn = round % order.len();
        order.rotate_left(turn);
        order_log.push(order.iter().map(|&i| conditions[i].label.clone()).collect());
        for &i in &order {
            let c = &conditions[i];
            let before = watch.before_condition()?;
            let result = match &c.launch {
                None => measure::untraced(w),
                Some(launch) => measure::traced(w, launch),
            };
            watch.after_condition(&before, &format!("{tool}, {}", c.label))?;
            match result {
                Ok(run) => {
                    println!(
                        "   [{}/{n}] {:<26} {}",
                        round + 1,
                        c.label,
                        progress(&run, w)
                    );
                    runs[i].push(run);
                }
                Err(e) if matches!(c.role, Role::Peer | Role::Reference) => {
                    let reason = if round == 0 {
                        format!("{e:#}")
                    } else {
                        format!("failed in round {} of {n}: {e:#}", round + 1)
                    };
                    println!(
                        "   [{}/{n}] {:<26} does not run here: {reason}",
                        round + 1,
                        c.label
                    );
                    unavailable.push(Unavailable {
                        label: c.label.clone(),
                        reason,
                    });
                    active.retain(|&j| j != i);
                    runs[i].clear();
                }
                Err(e) => {
                    return Err(e.context(format!(
                        "{tool}: {} (round {} of {n})",
                        c.label,
                        round + 1
                    )))
                }
            }
        }
    }
    // The programs' own run time: one more run of each traced condition
    // with kernel.bpf_stats_enabled on, kept out of the timed rounds (it
    // adds two clock reads to every program run, which would weigh on each
    // condition's slowdown by its number of programs).
    let mut bpf_runs: Vec<Vec<Vec<bpf_stats::ProgStat>>> =
        conditions.iter().map(|_| Vec::new()).collect();
    drop(stats_off);
    match bpf_stats::StatsSysctl::enable() {
        Err(e) => println!("   bench: {e:#}: the BPF programs' run times are not measured"),
        Ok(_on) => {
            for &i in &active {
                let c = &conditions[i];
                let Some(launch) = &c.launch else { continue };
                let before = watch.before_condition()?;
                let result = measure::traced(w, launch);
                watch.after_condition(&before, &format!("{tool}, {}", c.label))?;
                match result {
                    Ok(run) => {
                        println!("   [bpf_stats] {:<22} {}", c.label, progress(&run, w));
                        bpf_runs[i].push(run.bpf_programs);
                    }
                    Err(e) => println!("   [bpf_stats] {:<22} failed: {e:#}", c.label),
                }
            }
        }
    }
    let base: Vec<f64> = runs[0].iter().map(|r| r.value).collect();
    let conditions = conditions
        .into_iter()
        .zip(runs)
        .zip(bpf_runs)
        .filter(|((_, runs), _)| runs.len() == n)
        .map(|((c, runs), bpf_runs)| ConditionResult {
            bpf_runs,
            slowdowns: runs.iter().zip(&base).map(|(r, b)| r.value / b).collect(),
            startup_by: c.launch.as_ref().map(|l| l.ready.describe()),
            command: c.launch.as_ref().map(|l| l.shown()),
            label: c.label,
            role: c.role,
            how: c.how,
            runs,
        })
        .collect();
    Ok(ToolResult {
        tool: tool.to_string(),
        workload: w.name.clone(),
        unit: w.unit,
        sent: w.events.as_ref().and_then(|e| e.sent),
        conditions,
        unavailable,
        order: order_log,
        extras: None,
        extra_lines: Vec::new(),
    })
}

/// One run, in a line: shown as the rounds go.
fn progress(run: &Run, w: &Workload) -> String {
    let mut s = format!("{:.1} {}", run.value, w.unit.label());
    if let Some(ms) = run.startup_ms {
        s += &format!(", start-up {ms:.0} ms");
    }
    if let Some(ms) = run.cpu_ms {
        s += &format!(", CPU {ms:.1} ms");
    }
    if let Some(kib) = run.peak_rss_kib {
        s += &format!(", peak RSS {:.1} MiB", kib as f64 / 1024.0);
    }
    if let Some(ms) = run.exit_ms {
        s += &format!(", exit {ms:.0} ms");
    }
    if let Some(seen) = run.events_seen {
        s += &format!(", {seen} events seen");
    }
    if let Some(ns) = bpf_stats::figure(&bpf_stats::ns_a_run(&[&run.bpf_programs])) {
        s += &format!(", BPF {ns} ns a run");
    }
    for n in &run.notes {
        s += &format!(" ({n})");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn parse(s: &str) -> Result<Options> {
        Options::parse(&args(s), &args("memleak opensnoop runqlat"))
    }

    #[test]
    fn parses_tools_rounds_and_allow_foreign() {
        let o = parse("opensnoop --rounds 3 runqlat --allow-foreign").unwrap();
        assert_eq!(o.tools, ["opensnoop", "runqlat"]);
        assert_eq!(o.rounds, 3);
        assert!(o.allow_foreign);
        let o = parse("--rounds=1").unwrap();
        assert_eq!((o.tools.len(), o.rounds, o.allow_foreign), (3, 1, false));
        assert!(parse("--list").unwrap().list);
    }

    #[test]
    fn rejects_bad_arguments() {
        assert!(parse("--rounds 0").is_err());
        assert!(parse("--rounds").is_err());
        assert!(parse("nosuchtool").is_err());
        assert!(parse("--fast").is_err());
    }
}
