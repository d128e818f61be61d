//! The conditions a tool is measured under: untraced, ours, and each peer
//! implementation (libbpf-tools, bpftrace, BCC) with how to start it and
//! how to tell it is attached.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use super::measure::{Launch, Ready};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Untraced,
    Ours,
    /// Another implementation of the same tool: compared with ours.
    Peer,
    /// A yardstick that is no tool (empty probes): shown, never "best peer".
    Reference,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Untraced => "untraced",
            Role::Ours => "ours",
            Role::Peer => "peer",
            Role::Reference => "reference",
        }
    }
}

pub struct Condition {
    pub label: String,
    pub role: Role,
    /// What runs, in words (which script, which rewrite).
    pub how: String,
    pub launch: Option<Launch>,
}

/// A peer that is not measured, and why.
#[derive(Debug, Clone)]
pub struct Unavailable {
    pub label: String,
    pub reason: String,
}

/// What starting the peers needs from the machine.
pub struct Peers {
    /// Our release binaries.
    pub ours: PathBuf,
    /// A kernel header tree for BCC and for bpftrace scripts that include
    /// kernel headers (Err: why there is none).
    pub headers: Result<PathBuf, String>,
}

const SBIN: &str = "/usr/sbin";

impl Peers {
    /// Untraced first, then ours, then the peers that exist here.
    pub fn conditions(&self, tool: &str) -> (Vec<Condition>, Vec<Unavailable>) {
        let mut conditions = vec![Condition {
            label: "untraced".into(),
            role: Role::Untraced,
            how: "the workload alone".into(),
            launch: None,
        }];
        let mut missing = Vec::new();
        conditions.extend(self.ours(tool));
        match self.libbpf_tools(tool) {
            Ok(c) => conditions.push(c),
            Err(reason) => missing.push(unavailable("libbpf-tools", reason)),
        }
        match self.bpftrace(tool) {
            Ok(c) => conditions.extend(c),
            Err(reason) => missing.push(unavailable("bpftrace", reason)),
        }
        match self.bcc(tool) {
            Ok(c) => conditions.push(c),
            Err(reason) => missing.push(unavailable("bcc", reason)),
        }
        (conditions, missing)
    }

    fn ours(&self, tool: &str) -> Vec<Condition> {
        let bin = self.ours.join(tool);
        let ours = |label: &str, args: &[&str], how: &str| Condition {
            label: label.into(),
            role: Role::Ours,
            how: how.into(),
            launch: Some(Launch {
                program: bin.clone(),
                args: args.iter().map(|s| s.to_string()).collect(),
                env: Vec::new(),
                ready: ours_ready(tool),
            }),
        };
        if tool == "memleak" {
            // A long interval: no periodic report inside the measured loop.
            return vec![
                ours("ours", &["-p", "{pid}", "3600"], "every allocation"),
                ours(
                    "ours -s 100",
                    &["-p", "{pid}", "-s", "100", "3600"],
                    "every 100th allocation sampled",
                ),
            ];
        }
        vec![ours("ours", &[], "release build")]
    }

    /// libbpf-tools' stdio buffers a pipe fully: stdbuf makes it line-buffered
    /// so that its first event can be seen when it is printed.
    fn libbpf_tools(&self, tool: &str) -> Result<Condition, String> {
        let bin = Path::new(SBIN).join(tool);
        if !bin.exists() {
            return Err(format!(
                "the libbpf-tools package has no {tool} ({} is missing)",
                bin.display()
            ));
        }
        let ready = match tool {
            "opensnoop" | "execsnoop" => Ready::FirstEvent,
            "runqlat" => Ready::Line("Tracing run queue latency".into()),
            "biolatency" => Ready::Line("Tracing block device I/O".into()),
            "cachestat" => Ready::Line("HITS".into()),
            // Prints nothing until it ends.
            _ => Ready::HoldsPrograms,
        };
        Ok(Condition {
            label: "libbpf-tools".into(),
            role: Role::Peer,
            how: format!("{} (Debian libbpf-tools)", bin.display()),
            launch: Some(Launch {
                program: "stdbuf".into(),
                args: vec!["-oL".into(), bin.to_string_lossy().into_owned()],
                env: Vec::new(),
                ready,
            }),
        })
    }

    /// The script bpftrace ships where it loads here (tracepoints only),
    /// else our tracepoint rewrite from xtask/bench-bt/.
    fn bpftrace(&self, tool: &str) -> Result<Vec<Condition>, String> {
        if tool == "memleak" {
            return Ok(memleak_yardsticks(&self.bpftrace_env()));
        }
        let stock = stock_bpftrace_script(tool);
        let rewrite = crate::root_dir()
            .join("xtask/bench-bt")
            .join(format!("{tool}.bt"));
        let (script, how) = match &stock {
            Some(path) if !needs_kprobes(path) => {
                (path.clone(), format!("stock {}", path.display()))
            }
            _ if rewrite.exists() => {
                let why = match &stock {
                    Some(path) => format!("{} needs kprobes", path.display()),
                    None => format!("bpftrace ships no {tool}.bt"),
                };
                (
                    rewrite.clone(),
                    format!("xtask/bench-bt/{tool}.bt, on tracepoints ({why})"),
                )
            }
            Some(path) => {
                return Err(format!(
                    "{} needs kprobes, and there is no rewrite",
                    path.display()
                ))
            }
            None => return Err(format!("bpftrace ships no {tool}.bt")),
        };
        let ready = match tool {
            "opensnoop" | "execsnoop" => Ready::FirstEvent,
            // The BEGIN probe runs once every other probe is attached.
            "runqlat" => Ready::Line("Tracing CPU scheduler".into()),
            "biolatency" => Ready::Line("Tracing block device I/O".into()),
            "tcpretrans" => Ready::Line("Tracing tcp retransmits".into()),
            "cachestat" => Ready::Line("Tracing page cache".into()),
            "offcputime" => Ready::Line("Tracing off-CPU time".into()),
            _ => return Err(format!("no start-up line known for {}", script.display())),
        };
        // bpftrace flushes each line itself: no stdbuf.
        Ok(vec![Condition {
            label: "bpftrace".into(),
            role: Role::Peer,
            how,
            launch: Some(Launch {
                program: "bpftrace".into(),
                args: vec![script.to_string_lossy().into_owned()],
                env: self.bpftrace_env(),
                ready,
            }),
        }])
    }

    /// Kernel headers for scripts that include them (runqlat.bt).
    fn bpftrace_env(&self) -> Vec<(String, String)> {
        match &self.headers {
            Ok(dir) => vec![(
                "BPFTRACE_KERNEL_SOURCE".into(),
                dir.to_string_lossy().into_owned(),
            )],
            Err(_) => Vec::new(),
        }
    }

    /// BCC's Python tools compile their C at start-up against kernel headers.
    fn bcc(&self, tool: &str) -> Result<Condition, String> {
        let bin = Path::new(SBIN).join(format!("{tool}-bpfcc"));
        if !bin.exists() {
            return Err(format!(
                "{} is missing (package bpfcc-tools)",
                bin.display()
            ));
        }
        let mut env = vec![("PYTHONUNBUFFERED".to_string(), "1".to_string())];
        match &self.headers {
            Ok(dir) => env.push((
                "BCC_KERNEL_SOURCE".into(),
                dir.to_string_lossy().into_owned(),
            )),
            Err(why) => return Err(format!("no kernel headers for BCC: {why}")),
        }
        let (args, ready) = match tool {
            "opensnoop" | "execsnoop" => (vec![], Ready::FirstEvent),
            "runqlat" => (vec![], Ready::Line("Tracing run queue latency".into())),
            "biolatency" => (vec![], Ready::Line("Tracing block device I/O".into())),
            "tcpretrans" => (vec![], Ready::Line("Tracing retransmits".into())),
            "cachestat" => (vec![], Ready::Line("HITS".into())),
            "offcputime" => (vec![], Ready::Line("Tracing off-CPU time".into())),
            "memleak" => (
                vec!["-p".to_string(), "{pid}".into(), "3600".into()],
                Ready::Line("Attaching to pid".into()),
            ),
            _ => return Err(format!("no start-up line known for {}", bin.display())),
        };
        Ok(Condition {
            label: "bcc".into(),
            role: Role::Peer,
            how: format!("{} (Debian bpfcc-tools), BCC_KERNEL_SOURCE", bin.display()),
            launch: Some(Launch {
                program: bin,
                args,
                env,
                ready,
            }),
        })
    }
}

fn unavailable(label: &str, reason: String) -> Unavailable {
    Unavailable {
        label: label.into(),
        reason,
    }
}

fn ours_ready(tool: &str) -> Ready {
    match tool {
        "opensnoop" | "execsnoop" => Ready::FirstEvent,
        "runqlat" => Ready::Line("Tracing run queue latency".into()),
        "biolatency" => Ready::Line("Tracing block device I/O".into()),
        "tcpretrans" => Ready::Line("LADDR:LPORT".into()),
        "cachestat" => Ready::Line("HITS".into()),
        "offcputime" => Ready::Line("Tracing off-CPU time".into()),
        "memleak" => Ready::Line("Attaching to pid".into()),
        // A new tool: start-up ends once it holds its programs.
        _ => Ready::HoldsPrograms,
    }
}

/// The label of bpftrace with the three empty allocator probes together.
pub const EMPTY_PROBES: &str = "bpftrace: empty probes";

/// bpftrace with empty probes on the allocator: what the uprobe traps alone
/// cost, the floor for any uprobe-based memleak; together, then each alone.
fn memleak_yardsticks(env: &[(String, String)]) -> Vec<Condition> {
    let probes = [
        (
            EMPTY_PROBES,
            "malloc entry and return, free entry; all empty",
            "uprobe:{libc}:malloc {} uretprobe:{libc}:malloc {} uprobe:{libc}:free {}",
        ),
        (
            "bpftrace: uprobe malloc",
            "malloc entry alone, empty",
            "uprobe:{libc}:malloc {}",
        ),
        (
            "bpftrace: uretprobe malloc",
            "malloc return alone, empty",
            "uretprobe:{libc}:malloc {}",
        ),
        (
            "bpftrace: uprobe free",
            "free entry alone, empty",
            "uprobe:{libc}:free {}",
        ),
    ];
    probes
        .iter()
        .map(|(label, how, probes)| Condition {
            label: label.to_string(),
            role: Role::Reference,
            how: how.to_string(),
            launch: Some(Launch {
                program: "bpftrace".into(),
                args: vec![
                    "-p".into(),
                    "{pid}".into(),
                    "-e".into(),
                    // BEGIN runs once every other probe is attached.
                    format!("BEGIN {{ printf(\"bench: attached\\n\"); }} {probes}"),
                ],
                env: env.to_vec(),
                ready: Ready::Line("bench: attached".into()),
            }),
        })
        .collect()
}

/// The tool's script in the bpftrace package, if it ships one.
fn stock_bpftrace_script(tool: &str) -> Option<PathBuf> {
    let out = Command::new("dpkg")
        .args(["-L", "bpftrace"])
        .output()
        .ok()?;
    let wanted = format!("/{tool}.bt");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| l.ends_with(&wanted))
        .map(PathBuf::from)
}

/// True if a script has kprobes, which this kernel does not offer.
fn needs_kprobes(script: &Path) -> bool {
    fs::read_to_string(script).is_ok_and(|s| {
        s.lines()
            .map(str::trim_start)
            .any(|l| l.starts_with("kprobe:") || l.starts_with("kretprobe:"))
    })
}

/// BCC needs the kernel's build tree; Debian's headers come in two
/// packages (the common sources and the arch's generated files), which BCC
/// takes as one directory: a tree of symlinks merging them, under target/.
/// The headers are 6.1's, not this kernel's: enough for the programs that
/// only name tracepoint arguments and common structs.
pub fn kernel_headers() -> Result<PathBuf> {
    let flavour = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => bail!("no Debian header flavour known for {other}"),
    };
    let mut arch_dirs: Vec<PathBuf> = fs::read_dir("/usr/src")?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with("linux-headers-") && n.ends_with(&format!("-{flavour}"))
            })
        })
        .collect();
    arch_dirs.sort();
    let arch = arch_dirs.pop().with_context(|| {
        format!("no /usr/src/linux-headers-*-{flavour} (package linux-headers-{flavour})")
    })?;
    let name = arch.file_name().unwrap().to_string_lossy().into_owned();
    let common = arch.with_file_name(format!(
        "{}-common",
        name.trim_end_matches(&format!("-{flavour}"))
    ));
    if !common.is_dir() {
        bail!("{} has no {}", arch.display(), common.display());
    }
    let tree = crate::root_dir().join("target/bench").join(&name);
    let _ = fs::remove_dir_all(&tree);
    merge_links(&tree, &[common, arch]).with_context(|| format!("building {}", tree.display()))?;
    Ok(tree)
}

/// Makes `dst` a directory of symlinks to the union of `srcs`: a directory
/// found in several is merged recursively, else a later source wins.
fn merge_links(dst: &Path, srcs: &[PathBuf]) -> Result<()> {
    fs::create_dir_all(dst)?;
    let mut names: Vec<(std::ffi::OsString, Vec<PathBuf>)> = Vec::new();
    for src in srcs {
        for entry in fs::read_dir(src)? {
            let entry = entry?;
            let path = entry.path();
            match names.iter_mut().find(|(n, _)| *n == entry.file_name()) {
                Some((_, paths)) => paths.push(path),
                None => names.push((entry.file_name(), vec![path])),
            }
        }
    }
    for (name, paths) in names {
        let dirs: Vec<PathBuf> = paths
            .iter()
            .filter(|p| p.is_dir() && !p.is_symlink())
            .cloned()
            .collect();
        if dirs.len() > 1 {
            merge_links(&dst.join(&name), &dirs)?;
        } else {
            // Absolute targets: the sources' relative symlinks (scripts ->
            // ../../lib/...) would dangle from here.
            let target = fs::canonicalize(paths.last().unwrap())?;
            std::os::unix::fs::symlink(target, dst.join(&name))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_two_trees_with_the_later_winning() {
        let base = std::env::temp_dir().join(format!("bench-merge-{}", std::process::id()));
        let (a, b, out) = (base.join("a"), base.join("b"), base.join("out"));
        fs::create_dir_all(a.join("include/linux")).unwrap();
        fs::create_dir_all(b.join("include/generated")).unwrap();
        fs::write(a.join("include/linux/sched.h"), "a").unwrap();
        fs::write(a.join("Makefile"), "a").unwrap();
        fs::write(b.join("Makefile"), "b").unwrap();
        merge_links(&out, &[a, b]).unwrap();
        assert!(out.join("include/linux/sched.h").exists());
        assert!(out.join("include/generated").is_dir());
        assert_eq!(fs::read_to_string(out.join("Makefile")).unwrap(), "b");
        fs::remove_dir_all(&base).unwrap();
    }
}
