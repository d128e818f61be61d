//! `bpftools doctor [TOOL…] [--json]`: what works on this machine and why,
//! before anything runs. For each tool, each of the dry runs the registry
//! lists (the same ones README's kernel matrix shows for every kernel) is
//! run as the tool itself (`--dry-run --json`): the tool's own probing
//! chooses its hooks, loads and verifies its programs, and attaches
//! nothing, so doctor cannot disagree with what the tool would do. Then
//! the machine: the kernel's features the tools probe for, and the
//! settings that decide who may trace.

use std::io::{self, Write};
use std::os::unix::process::CommandExt;
use std::process::Command;

use common::kernel::{cgroups, lockdown, perf, probe, tracefs};
use serde_json::{json, Value};

use crate::TOOLS;

const USAGE: &str = "\
usage: bpftools doctor [TOOL...] [--json]
       bpftools doctor --tracepoints [PATTERN] [-v] [--json]
       bpftools doctor --usdt BINARY|PID [--json]
       bpftools doctor --loaded [--json]";

/// What doctor was asked for.
enum Asked<'a> {
    /// The tools' verdicts (these, or all), then the machine.
    Tools(Vec<&'static str>),
    /// Tracepoints matching `CATEGORY:EVENT` (wildcards), with their
    /// fields (-v): BCC's tplist.
    Tracepoints(&'a str, bool),
    /// The USDT probes of a binary, or of every file a process maps.
    Usdt(&'a str),
    /// The BPF programs loaded now, and who holds them: BCC's bpflist.
    Loaded,
}

fn parse<'a>(args: &[&'a str]) -> io::Result<(Asked<'a>, bool)> {
    let json = args.contains(&"--json");
    let verbose = args.iter().any(|a| ["-v", "--verbose"].contains(a));
    let rest: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| !["--json", "-v", "--verbose"].contains(a))
        .collect();
    let asked = match rest[..] {
        ["--tracepoints"] => Asked::Tracepoints("*:*", verbose),
        ["--tracepoints", pattern] => Asked::Tracepoints(pattern, verbose),
        ["--usdt", target] => Asked::Usdt(target),
        ["--usdt"] => {
            return Err(invalid(format!(
                "doctor: --usdt needs a binary or a pid\n{USAGE}"
            )))
        }
        ["--loaded"] => Asked::Loaded,
        _ => {
            let mut tools = Vec::new();
            for arg in &rest {
                if arg.starts_with('-') {
                    return Err(invalid(format!("doctor: unknown option {arg}\n{USAGE}")));
                }
                let Some(tool) = crate::tool_for(arg) else {
                    return Err(invalid(format!(
                        "doctor: no tool named '{arg}' (see bpftools --list)\n{USAGE}"
                    )));
                };
                tools.push(tool.info.name);
            }
            Asked::Tools(tools)
        }
    };
    Ok((asked, json))
}

/// How a tool fares here, with one set of arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Runs with its best hooks.
    Ok,
    /// Runs, but its hooks here cannot see everything (the tool says what).
    Degraded,
    /// Would not run: the tool's own error says why.
    Unavailable,
}

impl Verdict {
    fn name(self) -> &'static str {
        match self {
            Verdict::Ok => "OK",
            Verdict::Degraded => "DEGRADED",
            Verdict::Unavailable => "UNAVAILABLE",
        }
    }
}

/// One dry run's result.
struct Check {
    /// `fsslower -t ext4`, as README's kernel matrix names the row.
    label: String,
    verdict: Verdict,
    /// The hooks by kind, as the kernel matrix's cell shows them.
    hooks: String,
    /// What it cannot see (DEGRADED), or why it would not run.
    why: Option<String>,
    /// What a user who is not root needs for it (as the dry run says).
    capabilities: Vec<String>,
}

pub fn run(args: &[&str], out: &mut dyn Write) -> io::Result<()> {
    let (asked, json) = parse(args)?;
    let wanted = match asked {
        Asked::Tools(tools) => tools,
        Asked::Tracepoints(pattern, verbose) => return tracepoints(pattern, verbose, json, out),
        Asked::Usdt(target) => return usdt(target, json, out),
        Asked::Loaded => return loaded(json, out),
    };
    let checks: Vec<Check> = TOOLS
        .iter()
        .filter(|t| wanted.is_empty() || wanted.contains(&t.info.name))
        .flat_map(|t| t.info.dry_runs.iter().map(move |d| (t.info.name, d)))
        .map(|(tool, dry)| check(tool, dry))
        .collect::<io::Result<_>>()?;
    let machine = machine();
    if json {
        let tools: Vec<Value> = checks
            .iter()
            .map(|c| {
                json!({
                    "tool": c.label,
                    "verdict": c.verdict.name(),
                    "hooks": c.hooks,
                    "why": c.why,
                    "capabilities": c.capabilities,
                })
            })
            .collect();
        let facts: serde_json::Map<String, Value> = machine
            .iter()
            .map(|(k, v)| (k.to_string(), Value::from(v.as_str())))
            .collect();
        common::output::json_to_writer(&mut *out, &json!({"machine": facts, "tools": tools}))?;
        return writeln!(out);
    }
    let width = checks
        .iter()
        .map(|c| c.label.len())
        .max()
        .unwrap_or(4)
        .max(4);
    writeln!(out, "{:<width$}  {:<11}  HOOKS", "TOOL", "VERDICT")?;
    for c in &checks {
        // Unavailable: why, in the hooks' place; degraded: what it cannot
        // see, under them.
        let (first, under) = match (c.verdict, &c.why) {
            (Verdict::Unavailable, Some(why)) => (why, None),
            (_, why) => (&c.hooks, why.as_ref()),
        };
        writeln!(
            out,
            "{:<width$}  {:<11}  {first}",
            c.label,
            c.verdict.name()
        )?;
        if let Some(why) = under {
            writeln!(out, "{:<width$}  {:<11}  {why}", "", "")?;
        }
    }
    needed_by_tools(&checks, out)?;
    writeln!(out, "\nTHIS MACHINE")?;
    let width = machine.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in &machine {
        writeln!(out, "  {k:<width$}  {v}")?;
    }
    Ok(())
}

/// Which tools need which capability besides CAP_BPF and CAP_PERFMON (a
/// user who is not root: README's "Running without root").
fn needed_by_tools(checks: &[Check], out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "\nCAPABILITIES beyond CAP_BPF and CAP_PERFMON, for a user who is not root"
    )?;
    for (cap, what) in common::run::CAPABILITY_USES {
        let mut tools: Vec<&str> = checks
            .iter()
            .filter(|c| c.capabilities.iter().any(|c| c == cap))
            .map(|c| c.label.split(' ').next().unwrap_or_default())
            .collect();
        tools.dedup();
        let who = match tools.len() {
            0 => "none here".to_string(),
            n if n == checks.len() => "all".to_string(),
            _ => tools.join(" "),
        };
        writeln!(out, "  {cap:<19}  {what}: {who}")?;
    }
    Ok(())
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// Runs `tool --dry-run --json ARGS` as the tool (this binary under the
/// tool's name) and reads its verdict.
fn check(tool: &str, dry: &registry::DryRun) -> io::Result<Check> {
    let label = format!("{tool} {}", dry.label).trim().to_string();
    // `$$`: a live process of the caller's (as the shell's pid is).
    let args = dry.args.replace("$$", &std::process::id().to_string());
    let output = Command::new(std::env::current_exe()?)
        .arg0(tool)
        .arg("--dry-run")
        .arg("--json")
        .args(args.split_whitespace())
        .output()?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: Option<Value> = serde_json::from_slice(&output.stdout).ok();
    let (Some(report), true) = (report, output.status.success()) else {
        // The tool's own error, as it would print it: `tool: error: why`.
        let why = stderr
            .lines()
            .find_map(|l| l.split_once(": error: ").map(|(_, why)| why.to_string()))
            .unwrap_or_else(|| format!("the dry run failed ({})", output.status));
        return Ok(Check {
            hooks: registry::hooks::cell(&stderr),
            label,
            verdict: Verdict::Unavailable,
            why: Some(why),
            capabilities: Vec::new(),
        });
    };
    let degraded = report["degraded"].as_str().map(String::from);
    // The lines the text dry run prints under its first (the tool's own
    // list): the same cell as README's kernel matrix.
    let mut text = stderr.into_owned();
    for line in report["lines"].as_array().into_iter().flatten() {
        text += &format!("  {}\n", line.as_str().unwrap_or_default());
    }
    Ok(Check {
        label,
        verdict: if degraded.is_some() {
            Verdict::Degraded
        } else {
            Verdict::Ok
        },
        hooks: registry::hooks::cell(&text),
        why: degraded,
        capabilities: report["capabilities"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| Some(c.as_str()?.to_string()))
            .collect(),
    })
}

/// What the tools probe for, and what decides who may trace.
fn machine() -> Vec<(&'static str, String)> {
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|e| format!("unknown ({path}: {e})"))
    };
    let yes = |b: bool| if b { "yes" } else { "no" }.to_string();
    let f = probe::features();
    let btf_modules = std::fs::read_dir("/sys/kernel/btf")
        .map(|d| {
            d.filter(|e| e.as_ref().is_ok_and(|e| e.file_name() != "vmlinux"))
                .count()
        })
        .unwrap_or(0);
    let uprobe_links = match probe::uprobe_links() {
        probe::UprobeLinks::Session => "session uprobe_multi links",
        probe::UprobeLinks::Multi => "uprobe_multi links",
        probe::UprobeLinks::Single => "a link per uprobe",
    };
    let pmu = match perf::choose_counter(perf::Rate::Frequency(49)) {
        perf::Counter::Cycles => "yes (hardware cycles)",
        _ => "no (samples on the software CPU clock)",
    };
    let cache = match perf::unavailable(perf::Counter::CacheMisses) {
        None => "yes".to_string(),
        Some(e) => format!("no ({e}: llcstat cannot run)"),
    };
    let cpufreq = std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver")
        .map(|d| d.trim().to_string())
        .unwrap_or_else(|_| "none (cpufreq cannot run)".into());
    let lockdown = match lockdown::mode() {
        Ok(lockdown::Mode::Confidentiality) => {
            "confidentiality (BPF may not read kernel memory: most tools cannot load)".into()
        }
        Ok(mode) => mode.name().to_string(),
        Err(why) => format!("unknown ({why})"),
    };
    let mut facts = vec![
        ("kernel", read("/proc/sys/kernel/osrelease")),
        (
            "BTF",
            if std::path::Path::new("/sys/kernel/btf/vmlinux").exists() {
                format!("vmlinux, {btf_modules} modules")
            } else {
                "none (no /sys/kernel/btf/vmlinux: CONFIG_DEBUG_INFO_BTF)".into()
            },
        ),
        ("fentry/fexit", yes(f.fentry)),
        ("tp_btf", yes(f.tp_btf)),
        ("raw_tp", yes(f.raw_tp)),
        ("tracepoints", yes(f.tracepoint)),
        ("kprobes", yes(f.kprobe)),
        ("kprobe_multi", yes(probe::kprobe_multi())),
        ("uprobes", yes(f.uprobe)),
        ("uprobe links", uprobe_links.into()),
        ("attach cookies", yes(probe::attach_cookie())),
        ("task storage", yes(probe::task_storage())),
        (
            "tracefs",
            match tracefs::mount_point() {
                Ok(p) => p.display().to_string(),
                Err(e) => format!("{e:#}"),
            },
        ),
        ("hardware PMU", pmu.into()),
        ("cache counters", cache),
        ("cpufreq driver", cpufreq),
        (
            "cgroup v2",
            match cgroups::root() {
                Some(p) => p.display().to_string(),
                None => "not mounted (--cgroup, --containers and container labels need it)".into(),
            },
        ),
        ("lockdown", lockdown),
        (
            "kernel.bpf_stats_enabled",
            read("/proc/sys/kernel/bpf_stats_enabled"),
        ),
        (
            "kernel.perf_event_paranoid",
            read("/proc/sys/kernel/perf_event_paranoid"),
        ),
        (
            "kernel.unprivileged_bpf_disabled",
            read("/proc/sys/kernel/unprivileged_bpf_disabled"),
        ),
        ("capabilities", capabilities()),
    ];
    if let Ok(disabled) = std::env::var("BPFTOOLS_DISABLE") {
        facts.push((
            "BPFTOOLS_DISABLE",
            format!("{disabled} (treated as missing)"),
        ));
    }
    facts
}

/// The capabilities the tools use, as this process holds them.
fn capabilities() -> String {
    const USED: &[(u32, &str)] = &[
        (21, "CAP_SYS_ADMIN"),
        (39, "CAP_BPF"),
        (38, "CAP_PERFMON"),
        (34, "CAP_SYSLOG"),
        (19, "CAP_SYS_PTRACE"),
        (2, "CAP_DAC_READ_SEARCH"),
        (24, "CAP_SYS_RESOURCE"),
    ];
    let eff = common::run::effective_capabilities();
    let (held, lacked): (Vec<_>, Vec<_>) = USED.iter().partition(|(bit, _)| eff & (1 << bit) != 0);
    let names = |v: Vec<&(u32, &str)>| v.iter().map(|(_, n)| *n).collect::<Vec<_>>().join(" ");
    match lacked.is_empty() {
        true => format!("{} (all the tools use)", names(held)),
        false => format!("{}; lacking {}", names(held), names(lacked)),
    }
}

/// Prints `rows` as JSON lines, or as `text` makes each line.
fn print<T>(
    out: &mut dyn Write,
    rows: &[T],
    json: bool,
    as_json: impl Fn(&T) -> Value,
    text: impl Fn(&T) -> String,
) -> io::Result<()> {
    for row in rows {
        if json {
            common::output::json_to_writer(&mut *out, &as_json(row))?;
            writeln!(out)?;
        } else {
            writeln!(out, "{}", text(row))?;
        }
    }
    Ok(())
}

fn failed(e: anyhow::Error) -> io::Error {
    io::Error::other(format!("doctor: {e:#}"))
}

/// `CATEGORY:EVENT` patterns (wildcards in either; `sched` alone is
/// `sched:*`), as tracefs lists the tracepoints; with -v each one's fields.
fn tracepoints(pattern: &str, verbose: bool, json: bool, out: &mut dyn Write) -> io::Result<()> {
    use common::probes::{tracepoints, Pattern};
    let (category, event) = pattern.split_once(':').unwrap_or((pattern, "*"));
    let pat = |p: &str| Pattern::new(p, false).map_err(|e| invalid(format!("doctor: {p}: {e}")));
    let found = tracepoints::matching(&pat(category)?, &pat(event)?).map_err(failed)?;
    let fields = |t: &tracepoints::Tracepoint| match verbose {
        true => tracepoints::format(&t.category, &t.event).unwrap_or_default(),
        false => Vec::new(),
    };
    print(
        out,
        &found,
        json,
        |t| {
            let f: Vec<String> = fields(t).into_iter().map(|f| f.decl).collect();
            json!({"tracepoint": format!("{}:{}", t.category, t.event), "fields": f})
        },
        |t| {
            let mut line = format!("{}:{}", t.category, t.event);
            for f in fields(t) {
                line += &format!("\n    {};", f.decl);
            }
            line
        },
    )
}

/// The USDT probes of `target`: a binary, or a process's mapped files
/// (through its root, so a container's are found).
fn usdt(target: &str, json: bool, out: &mut dyn Write) -> io::Result<()> {
    use common::probes::elf;
    let files: Vec<(String, std::path::PathBuf)> = match target.parse::<u32>() {
        Ok(pid) => {
            let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))
                .map_err(|e| invalid(format!("doctor: --usdt {pid}: no such process ({e})")))?;
            let mut paths: Vec<&str> = maps
                .lines()
                .filter_map(|l| l.split_whitespace().nth(5))
                .filter(|p| p.starts_with('/'))
                .collect();
            paths.dedup();
            let mut seen = std::collections::HashSet::new();
            paths
                .into_iter()
                .filter(|p| seen.insert(*p))
                .map(|p| (p.to_string(), format!("/proc/{pid}/root{p}").into()))
                .collect()
        }
        Err(_) => {
            let path = std::path::PathBuf::from(target);
            if !path.is_file() {
                return Err(invalid(format!("doctor: --usdt {target}: no such file")));
            }
            vec![(target.to_string(), path)]
        }
    };
    let mut rows = Vec::new();
    for (shown, path) in files {
        // A process maps files that are not ELF (locale archives): no probes.
        for p in elf::usdt_probes(&path).unwrap_or_default() {
            rows.push((shown.clone(), p));
        }
    }
    print(
        out,
        &rows,
        json,
        |(f, p)| json!({"file": f, "provider": p.provider, "name": p.name, "args": p.args}),
        // A traced process's names are its own: shown escaped, as every
        // tool's text.
        |(f, p)| {
            let esc = |t: &str| common::output::escape(t.as_bytes()).into_owned();
            format!("{} {}:{}", esc(f), esc(&p.provider), esc(&p.name))
        },
    )
}

/// The BPF programs loaded now: id, type, name, and the processes that
/// hold them open (none: pinned, or attached and left by their loader).
fn loaded(json: bool, out: &mut dyn Write) -> io::Result<()> {
    let mut holders: std::collections::HashMap<u32, Vec<(u32, String)>> = Default::default();
    for entry in std::fs::read_dir("/proc")?.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fdinfo")) else {
            continue;
        };
        let comm = common::run::process::comm(pid).unwrap_or_default();
        for fd in fds.flatten() {
            let Ok(info) = std::fs::read_to_string(fd.path()) else {
                continue;
            };
            let id = info
                .lines()
                .find_map(|l| l.strip_prefix("prog_id:"))
                .and_then(|id| id.trim().parse::<u32>().ok());
            if let Some(id) = id {
                let held = holders.entry(id).or_default();
                if !held.iter().any(|(p, _)| *p == pid) {
                    held.push((pid, comm.clone()));
                }
            }
        }
    }
    let programs: Vec<_> = libbpf_rs::query::ProgInfoIter::default().collect();
    let ty = |p: &libbpf_rs::query::ProgramInfo| format!("{:?}", p.ty).to_lowercase();
    let held = |p: &libbpf_rs::query::ProgramInfo| holders.get(&p.id).cloned().unwrap_or_default();
    if !json {
        writeln!(out, "{:>6} {:<16} {:<16} PID/COMM", "ID", "TYPE", "NAME")?;
    }
    print(
        out,
        &programs,
        json,
        |p| {
            let by: Vec<Value> = held(p)
                .iter()
                .map(|(pid, comm)| json!({"pid": pid, "comm": comm}))
                .collect();
            json!({"id": p.id, "type": ty(p), "name": p.name.to_string_lossy(), "held_by": by})
        },
        |p| {
            let by: Vec<String> = held(p)
                .iter()
                .map(|(pid, c)| format!("{pid}/{}", common::output::escape(c.as_bytes())))
                .collect();
            let by = if by.is_empty() {
                "-".to_string()
            } else {
                by.join(" ")
            };
            let name = common::output::escape(p.name.as_encoded_bytes());
            format!("{:>6} {:<16} {:<16} {by}", p.id, ty(p), name)
        },
    )
}
