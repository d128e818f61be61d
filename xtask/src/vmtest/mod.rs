//! `cargo xtask vmtest [--kernel 5.10|6.1|6.12|all] [--parallel N] [-- TEST FILTER...]`:
//! the root integration suite on Debian's own kernels, in qemu.
//!
//! Each kernel comes from Debian's package registry (5.10 through a private
//! apt list for bullseye, leaving the machine's sources alone), unpacked
//! and cached under target/vmtest/. The guest boots it with a small
//! initramfs (busybox, and the modules that reach the root: virtio, 9p)
//! which mounts this machine's root filesystem over 9p and switches to it,
//! so the guest runs the test binaries built here, with this machine's
//! programs (clang, perf, Prometheus, go), as the host suite runs them. A
//! virtual disk holds an ext4 scratch filesystem for the tests that need a
//! real block device and page cache (9p has neither).
//!
//! qemu runs with TCG (this machine's /dev/kvm cannot run stock kernels),
//! single-threaded: see guest.rs.

mod cpio;
pub(crate) mod guest;
mod kernels;
mod matrix;
mod weights;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

pub use kernels::KERNELS;

const USAGE: &str = "usage: cargo xtask vmtest [--kernel 5.10|6.1|6.12|all]... [--variants] \
                     [--parallel N] [--run COMMAND] [-- TEST FILTER...] | --list | --matrix | --fetch";

/// Packages the VMs need on this machine.
const PACKAGES: &[&str] = &[
    "qemu-system-x86",
    "busybox-static",
    "kmod",
    "xz-utils",
    "zstd",
];

pub fn work_dir() -> PathBuf {
    crate::root_dir().join("target/vmtest")
}

struct Options {
    kernels: Vec<&'static kernels::Spec>,
    filter: Vec<String>,
    /// A shell command to run in the guest instead of the tests (a look
    /// at a failure: a tool with -v, say).
    run: Option<String>,
    /// Each tool's hook-variant tests only (its description's vm_tests).
    variants: bool,
    /// How many guests run at once.
    parallel: usize,
    list: bool,
    /// Only README's kernel matrix, from the last runs' dry runs.
    matrix: bool,
    /// Only the packages and kernels, fetched and unpacked.
    fetch: bool,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut kernels = Vec::new();
    let mut filter = Vec::new();
    let mut run = None;
    let mut variants = false;
    let mut parallel = 1;
    let mut list = false;
    let mut matrix = false;
    let mut fetch = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--kernel" => {
                let name = args.next().context(USAGE)?;
                if name == "all" {
                    kernels.extend(KERNELS.iter());
                } else {
                    kernels.push(
                        KERNELS
                            .iter()
                            .find(|k| k.name == name)
                            .with_context(|| format!("no kernel '{name}'\n{USAGE}"))?,
                    );
                }
            }
            "--run" => run = Some(args.next().context(USAGE)?.clone()),
            "--variants" => variants = true,
            "--parallel" => {
                parallel = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|&n| n > 0)
                    .with_context(|| format!("--parallel takes a number above 0\n{USAGE}"))?
            }
            "--list" => list = true,
            "--matrix" => matrix = true,
            "--fetch" => fetch = true,
            "--" => filter.extend(args.by_ref().cloned()),
            other => bail!("unknown argument '{other}'\n{USAGE}"),
        }
    }
    if kernels.is_empty() {
        kernels.extend(KERNELS.iter());
    }
    Ok(Options {
        kernels,
        filter,
        run,
        variants,
        parallel,
        list,
        matrix,
        fetch,
    })
}

/// What each kernel runs, tool by tool: every dry run, and the whole suite
/// or (with --variants) the tests named in the tool's description.
fn list(opts: &Options) {
    let kernels: Vec<&str> = opts.kernels.iter().map(|k| k.name).collect();
    println!("kernels: {}", kernels.join(", "));
    for t in crate::tools::TOOLS {
        let dry: Vec<String> = t
            .dry_runs
            .iter()
            .map(|d| format!("--dry-run {}", d.args).trim().to_string())
            .collect();
        println!("{}:\n  dry runs: {}", t.name, dry.join("; "));
        if !opts.filter.is_empty() {
            println!("  tests matching: {}", opts.filter.join(" "));
        } else if opts.variants {
            println!("  tests matching: {}", t.vm_tests.join(" "));
        } else {
            println!(
                "  tests: all of tools/{}/tests/ (contract included)",
                t.name
            );
        }
    }
}

pub fn main(args: &[String]) -> Result<()> {
    let opts = parse(args)?;
    if opts.list {
        list(&opts);
        return Ok(());
    }
    if opts.matrix {
        return matrix::update_readme();
    }
    if !crate::is_root() {
        bail!("vmtest exports the root filesystem to the guest over 9p: run it as root");
    }
    crate::deps(PACKAGES)?;
    // --fetch: the packages and kernels only (network and disk), so that
    // CI fetches them while its first build compiles.
    if opts.fetch {
        for spec in &opts.kernels {
            kernels::fetch(spec)?;
        }
        return Ok(());
    }
    let mut tests = guest::build_tests()?;
    if opts.variants && opts.filter.is_empty() {
        guest::select_variant_tests(&mut tests)?;
    }
    // The kernels fetched one at a time (apt), then the guests, `parallel`
    // at once: a guest keeps about one of this machine's cores busy on
    // average (its tests wait on timers, I/O and each other), so two or
    // three side by side take little longer than one.
    let mut fetched = Vec::new();
    for spec in &opts.kernels {
        fetched.push((*spec, kernels::fetch(spec)?));
    }
    // Each kernel's test binaries (--variants: `testers`), against the
    // guests' hooks in README's matrix and this machine's, as its dry runs
    // say now.
    let mut cells = matrix::readme_cells()?;
    let prune = opts.variants && opts.filter.is_empty();
    if prune {
        matrix::add_host_cells(&mut cells);
    }
    let mut order: Vec<&'static str> = opts.kernels.iter().map(|s| s.name).collect();
    order.sort_by_key(|name| KERNELS.iter().position(|k| k.name == *name));
    let mut tools: Vec<String> = tests.iter().map(|t| t.tool()).collect();
    tools.dedup();
    let queue: Vec<&'static str> = opts.kernels.iter().map(|s| s.name).collect();
    let mut weights = weights::Weights::load();
    let tested = testers(&order, &queue, opts.parallel, &tools, &cells, &weights);
    let per_kernel: Vec<Vec<guest::TestBinary>> = fetched
        .iter()
        .map(|(spec, _)| {
            if !prune || order.len() < 2 {
                return tests.clone();
            }
            let mine = tested.get(spec.name).cloned().unwrap_or_default();
            let kept: Vec<guest::TestBinary> = tests
                .iter()
                .filter(|t| mine.contains(&t.tool()))
                .cloned()
                .collect();
            let expected =
                weights.guest(spec.name) + mine.iter().map(|t| weights.tool(t)).sum::<u64>();
            println!(
                "vmtest: Linux {}: the tests of {} tools ({}); the others' hooks there are \
                 another kernel's of the run or this machine's, and tested there; about \
                 {expected} s as the last run measured",
                spec.name,
                mine.len(),
                mine.join(" ")
            );
            kept
        })
        .collect();
    let queue = std::sync::Mutex::new(fetched.iter().enumerate());
    let done = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..opts.parallel.min(fetched.len()) {
            scope.spawn(|| loop {
                let Some((i, (spec, kernel))) = queue.lock().unwrap().next() else {
                    return;
                };
                let prefix = if opts.parallel > 1 {
                    format!("[{}] ", spec.name)
                } else {
                    String::new()
                };
                let outcome = run_kernel(&opts, spec, kernel, &per_kernel[i], &prefix);
                done.lock().unwrap().push((i, outcome));
            });
        }
    });
    let mut done = done.into_inner().unwrap();
    done.sort_by_key(|(i, _)| *i);
    let mut failed = Vec::new();
    let mut summaries = Vec::new();
    // The times of a whole --variants run, for the next one's shares.
    let measured = prune && opts.run.is_none();
    let mut run_times = weights::Weights::default();
    for (i, outcome) in done {
        let (spec, kernel) = &fetched[i];
        let (outcome, took) = outcome?;
        if measured && outcome.completed {
            run_times.record(spec.name, took, &outcome.times);
        }
        summaries.push(format!(
            "Linux {:<24} {} ({} s; {})",
            kernel.release,
            outcome.summary,
            took,
            outcome.results.display()
        ));
        // Doctor's report agrees with the dry runs, runqlat runs as a user
        // with the capabilities doctor lists, and the tools fare as
        // they should under lockdown (where the guest ran them: not with
        // --run; lockdown in the newest kernel's guest only, which is not
        // the longest chain of guests: a minute and a half under TCG).
        let disagrees = match opts.run {
            None if newest(&opts) == spec.name => [
                matrix::doctor_disagrees(spec.name),
                matrix::privilege_disagrees(spec.name),
                matrix::lockdown_disagrees(spec.name),
            ]
            .concat(),
            None => [
                matrix::doctor_disagrees(spec.name),
                matrix::privilege_disagrees(spec.name),
            ]
            .concat(),
            Some(_) => Vec::new(),
        };
        for line in &disagrees {
            println!("vmtest: Linux {}: doctor: {line}", kernel.release);
        }
        if !outcome.passed || !disagrees.is_empty() {
            failed.push(spec.name);
        }
    }
    if opts.run.is_none() {
        matrix::update_readme()?;
    }
    if measured {
        weights.merge(run_times);
        weights.save()?;
    }
    println!("\n== vmtest summary");
    for s in &summaries {
        println!("   {s}");
    }
    if !failed.is_empty() {
        bail!("tests failed on Linux {}", failed.join(", "));
    }
    Ok(())
}

/// The newest kernel of the run.
fn newest(opts: &Options) -> &'static str {
    let order = |s: &&&kernels::Spec| KERNELS.iter().position(|k| k.name == s.name);
    opts.kernels.iter().max_by_key(order).map_or("", |s| s.name)
}

type Cells = HashMap<String, HashMap<&'static str, String>>;

/// True where every dry run of `tool` (README's kernel matrix) chose the
/// same hooks on kernels `a` and `b`, and ran there.
fn same_hooks(cells: &Cells, tool: &str, a: &str, b: &str) -> bool {
    let rows: Vec<&HashMap<&str, String>> = cells
        .iter()
        .filter(|(label, _)| label.split(' ').next() == Some(tool))
        .map(|(_, row)| row)
        .collect();
    !rows.is_empty()
        && rows.iter().all(|row| {
            let (Some(here), Some(there)) = (row.get(a), row.get(b)) else {
                return false;
            };
            here == there && !here.starts_with("not run") && !here.starts_with("refused")
        })
}

/// Under --variants, which tools each of `kernels` (oldest first) tests.
/// For each tool the guests are grouped by its hooks there, and each group
/// is tested once. A group whose hooks are this machine's is tested here
/// (the host runs the whole suite on the same programs at the same hooks;
/// every guest still loads every tool in its dry runs). A group of one
/// kernel is tested by it. The rest, the largest first (`weights`), go each
/// to the kernel of its group whose guest makes the run end soonest, the
/// guests taken from `queue` `parallel` at a time; at a tie the newest of
/// the group, then the oldest. A tool the matrix does not know yet is
/// tested on every kernel.
fn testers(
    kernels: &[&'static str],
    queue: &[&'static str],
    parallel: usize,
    tools: &[String],
    cells: &Cells,
    weights: &weights::Weights,
) -> HashMap<&'static str, Vec<String>> {
    let last = kernels.len() - 1;
    let mut tested: HashMap<&'static str, Vec<String>> = HashMap::new();
    let mut load: HashMap<&str, u64> = kernels.iter().map(|k| (*k, weights.guest(k))).collect();
    let mut shared: Vec<(&String, Vec<usize>)> = Vec::new();
    for tool in tools {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, k) in kernels.iter().enumerate() {
            match groups
                .iter_mut()
                .find(|g| same_hooks(cells, tool, kernels[g[0]], k))
            {
                Some(g) => g.push(i),
                None => groups.push(vec![i]),
            }
        }
        for g in groups {
            if same_hooks(cells, tool, kernels[g[0]], matrix::HOST) {
                continue;
            }
            if let [only] = g[..] {
                *load.entry(kernels[only]).or_default() += weights.tool(tool);
                tested.entry(kernels[only]).or_default().push(tool.clone());
            } else {
                shared.push((tool, g));
            }
        }
    }
    shared.sort_by_key(|(tool, _)| std::cmp::Reverse(weights.tool(tool)));
    for (tool, g) in shared {
        let mut choices: Vec<usize> = g.iter().copied().filter(|&i| i == last).collect();
        choices.extend(g.iter().copied().filter(|&i| i != last));
        let w = weights.tool(tool);
        let ends = |i: usize| {
            let mut l = load.clone();
            *l.entry(kernels[i]).or_default() += w;
            weights::makespan(queue, parallel, &l)
        };
        let best = choices
            .iter()
            .copied()
            .min_by_key(|&i| ends(i))
            .expect("a group has a kernel");
        *load.entry(kernels[best]).or_default() += w;
        tested.entry(kernels[best]).or_default().push(tool.clone());
    }
    for list in tested.values_mut() {
        list.sort();
    }
    tested
}

/// One kernel's guest (booted again after a stop), and how long it took.
fn run_kernel(
    opts: &Options,
    spec: &kernels::Spec,
    kernel: &kernels::Kernel,
    tests: &[guest::TestBinary],
    prefix: &str,
) -> Result<(guest::Outcome, u64)> {
    let started = Instant::now();
    println!(
        "\n{prefix}== vmtest: Linux {} ({}), {} test binaries",
        kernel.release,
        kernel.package,
        tests.len()
    );
    let work = match &opts.run {
        Some(command) => guest::Work::Command(command),
        None => guest::Work::Tests(tests, &opts.filter, newest(opts) == spec.name),
    };
    // A command's run keeps the matrix's results.
    let dir = match &opts.run {
        Some(_) => format!("{}-run", spec.name),
        None => spec.name.to_string(),
    };
    // A second boot's results are this run's only.
    let _ = std::fs::remove_dir_all(work_dir().join("results").join(format!("{dir}-resumed")));
    let mut outcome = guest::run(&dir, kernel, work, prefix)?;
    if !outcome.completed && opts.run.is_none() {
        let lockdown = newest(opts) == spec.name;
        outcome = resume(&dir, kernel, tests, &opts.filter, lockdown, outcome, prefix)?;
    }
    Ok((outcome, started.elapsed().as_secs()))
}

/// After a guest that hung or crashed (and was stopped): boots again to
/// run the binary it stopped in and the rest, once. The stop is reported
/// with the verdict, not hidden: under TCG, 5.10 guests have hung now and
/// then in the contract tests' quick attach and detach, the kernel printing
/// nothing (a silent guest is now asked for its stacks by sysrq before it
/// is stopped, which would say where).
fn resume(
    dir: &str,
    kernel: &kernels::Kernel,
    tests: &[guest::TestBinary],
    filter: &[String],
    lockdown: bool,
    first: guest::Outcome,
    prefix: &str,
) -> Result<guest::Outcome> {
    let done: Vec<&str> = first.finished.iter().map(|(n, _)| n.as_str()).collect();
    let Some(at) = tests.iter().position(|t| !done.contains(&t.name.as_str())) else {
        return Ok(first);
    };
    println!(
        "{prefix}vmtest: the guest stopped in {} ({}): booting again to run it and the rest",
        tests[at].name, first.summary
    );
    let before_failed = first.finished.iter().filter(|(_, ok)| !ok).count();
    let again = guest::run(
        &format!("{dir}-resumed"),
        kernel,
        guest::Work::Tests(&tests[at..], filter, lockdown),
        prefix,
    )?;
    Ok(guest::Outcome {
        passed: again.passed && before_failed == 0,
        summary: format!(
            "GUEST STOPPED in {} and booted again: {} binaries before it, {before_failed} failed; then {}",
            tests[at].name,
            first.finished.len(),
            again.summary
        ),
        results: first.results,
        completed: again.completed,
        finished: first.finished.into_iter().chain(again.finished).collect(),
        times: first.times.into_iter().chain(again.times).collect(),
    })
}

/// Runs a command, failing with its stderr.
fn output(cmd: &mut Command) -> Result<String> {
    let out = cmd.output().with_context(|| format!("running {cmd:?}"))?;
    if !out.status.success() {
        bail!(
            "{cmd:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_kernels_and_filter() {
        let o = parse(&args("--kernel 6.1 --kernel 5.10 -- opensnoop --exact")).unwrap();
        let names: Vec<&str> = o.kernels.iter().map(|k| k.name).collect();
        assert_eq!(names, ["6.1", "5.10"]);
        assert_eq!(o.filter, ["opensnoop", "--exact"]);
        assert_eq!(parse(&args("--kernel all")).unwrap().kernels.len(), 3);
        assert_eq!(parse(&[]).unwrap().kernels.len(), 3);
        assert!(parse(&args("--kernel 4.19")).is_err());
        assert!(parse(&args("--fast")).is_err());
        assert_eq!(parse(&args("--parallel 2")).unwrap().parallel, 2);
        assert_eq!(parse(&[]).unwrap().parallel, 1);
        assert!(parse(&args("--parallel 0")).is_err());
        assert!(parse(&args("--parallel")).is_err());
    }

    #[test]
    fn each_tools_hooks_are_tested_once_where_the_run_ends_soonest() {
        let rows = [
            // tool: hooks on this machine, 5.10, 6.1, 6.12
            ("a", ["x", "y", "y", "y"]), // any of the three
            ("b", ["x", "y", "y", "z"]), // 5.10 or 6.1, and 6.12
            ("c", ["x", "y", "z", "z"]), // 5.10, and 6.1 or 6.12
            ("d", ["x", "y", "z", "w"]), // all three
            ("e", ["z", "y", "y", "z"]), // 5.10 or 6.1 (6.12's are this machine's)
            ("f", ["x", "y", "q", "y"]), // 5.10 or 6.12, and 6.1
            ("g", ["x", "refused", "refused", "refused"]), // all three
            ("h", ["x", "x", "x", "x"]), // none: this machine's hooks
        ];
        let kernels = ["5.10", "6.1", "6.12"];
        let mut cells = Cells::new();
        for (tool, hooks) in rows {
            let columns = [matrix::HOST].into_iter().chain(kernels);
            cells.insert(
                format!("{tool} -x"),
                columns
                    .zip(hooks)
                    .map(|(k, c)| (k, c.to_string()))
                    .collect(),
            );
        }
        let tools: Vec<String> = ["a", "b", "c", "d", "e", "f", "g", "h", "new"]
            .map(String::from)
            .to_vec();
        let queue = ["5.10", "6.12", "6.1"];
        let times = [("a", 50), ("e", 30)];
        let tested = |guests: &[(&str, u64)]| {
            let w = weights::Weights::new(&times, guests);
            let t = testers(&kernels, &queue, 2, &tools, &cells, &w);
            let on = |k: &str| t.get(k).cloned().unwrap_or_default().join(" ");
            [on("5.10"), on("6.1"), on("6.12")]
        };
        // 5.10 beside 6.12 and then 6.1: at a tie the newest of a group
        // tests it, then the oldest.
        let even = [("5.10", 100), ("6.12", 100), ("6.1", 50)];
        assert_eq!(
            tested(&even),
            ["b c d e g new", "d f g new", "a b c d f g new"]
        );
        // 6.12's guest the longest by far: a and f go to the chain of 5.10.
        let long = [("5.10", 100), ("6.12", 400), ("6.1", 50)];
        assert_eq!(tested(&long)[0], "a b c d e f g new");
    }
}
