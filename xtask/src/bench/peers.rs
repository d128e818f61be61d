//! The conditions a tool is measured under: untraced, ours, and each peer
//! implementation (libbpf-tools, bpftrace, BCC) with how to start it and
//! how to tell it is attached.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use registry::{Bench, Peer, PeerRun, ToolInfo};

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
    /// floor.c, built (Err: why it is not).
    pub floor: Result<PathBuf, String>,
}

const SBIN: &str = "/usr/sbin";

impl Peers {
    /// Untraced first, then ours, then the peers that exist here, as the
    /// tool's description lists them.
    pub fn conditions(&self, tool: &ToolInfo, bench: &Bench) -> (Vec<Condition>, Vec<Unavailable>) {
        let mut conditions = vec![Condition {
            label: "untraced".into(),
            role: Role::Untraced,
            how: "the workload alone".into(),
            launch: None,
        }];
        let bin = self.ours.join(tool.name);
        conditions.extend(bench.ours.iter().map(|o| Condition {
            label: o.label.into(),
            role: Role::Ours,
            how: o.how.into(),
            launch: Some(Launch {
                program: bin.clone(),
                args: strings(o.args),
                env: Vec::new(),
                ready: ready(o.ready, tool),
            }),
        }));
        let mut missing = Vec::new();
        for peer in bench.peers {
            match self.peer(tool, peer) {
                Ok(c) => conditions.push(c),
                Err((label, reason)) => missing.push(unavailable(&label, reason)),
            }
        }
        (conditions, missing)
    }

    fn peer(&self, tool: &ToolInfo, peer: &Peer) -> Result<Condition, (String, String)> {
        let ready = ready(peer.ready, tool);
        let role = if peer.reference {
            Role::Reference
        } else {
            Role::Peer
        };
        match peer.runs {
            PeerRun::LibbpfTools { args } => self
                .libbpf_tools(tool.name, args, ready)
                .map_err(|e| ("libbpf-tools".into(), e)),
            PeerRun::Bcc { args } => self
                .bcc(tool.name, args, ready)
                .map_err(|e| ("bcc".into(), e)),
            PeerRun::BpftraceScript => self
                .bpftrace(tool.name, ready)
                .map_err(|e| ("bpftrace".into(), e)),
            PeerRun::BpftraceProgram {
                label,
                how,
                args,
                program,
            } => Ok(Condition {
                label: label.into(),
                role,
                how: how.into(),
                launch: Some(Launch {
                    program: "bpftrace".into(),
                    args: strings(args)
                        .into_iter()
                        .chain([
                            "-e".to_string(),
                            // BEGIN runs once every other probe is attached.
                            format!("BEGIN {{ printf(\"bench: attached\\n\"); }} {program}"),
                        ])
                        .collect(),
                    env: self.bpftrace_env(),
                    ready,
                }),
            }),
            PeerRun::OurTool { label, tool, args } => Ok(Condition {
                label: label.into(),
                role,
                how: format!("release build: {tool} {}", args.join(" ")),
                launch: Some(Launch {
                    program: self.ours.join(tool),
                    args: strings(args),
                    env: Vec::new(),
                    ready,
                }),
            }),
            PeerRun::Command {
                label,
                program,
                args,
            } => Ok(Condition {
                label: label.into(),
                role,
                how: format!("{program} {}", args.join(" ")),
                launch: Some(Launch {
                    program: program.into(),
                    args: strings(args),
                    env: Vec::new(),
                    ready,
                }),
            }),
            PeerRun::Floor { label, how, hooks } => {
                let floor = |program: &PathBuf| -> Result<Condition, String> {
                    let btf = if hooks.iter().any(|h| h.starts_with("tp_btf/")) {
                        Some(vmlinux_btf()?)
                    } else {
                        None
                    };
                    Ok(Condition {
                        label: label.into(),
                        role,
                        how: format!("{how}: {}", hooks.join(", ")),
                        launch: Some(Launch {
                            program: program.clone(),
                            args: floor_args(hooks, btf.as_deref())?,
                            env: Vec::new(),
                            ready,
                        }),
                    })
                };
                self.floor
                    .as_ref()
                    .map_err(Clone::clone)
                    .and_then(floor)
                    .map_err(|e| (label.into(), e))
            }
        }
    }

    /// libbpf-tools' stdio buffers a pipe fully: stdbuf makes it line-buffered
    /// so that its first event can be seen when it is printed.
    fn libbpf_tools(&self, tool: &str, args: &[&str], ready: Ready) -> Result<Condition, String> {
        let bin = Path::new(SBIN).join(tool);
        if !bin.exists() {
            return Err(format!(
                "the libbpf-tools package has no {tool} ({} is missing)",
                bin.display()
            ));
        }
        Ok(Condition {
            label: "libbpf-tools".into(),
            role: Role::Peer,
            how: format!("{} (Debian libbpf-tools)", bin.display()),
            launch: Some(Launch {
                program: "stdbuf".into(),
                args: ["-oL".to_string(), bin.to_string_lossy().into_owned()]
                    .into_iter()
                    .chain(strings(args))
                    .collect(),
                env: Vec::new(),
                ready,
            }),
        })
    }

    /// The script bpftrace ships where it loads here (tracepoints only),
    /// else our tracepoint rewrite, tools/<tool>/bench.bt.
    fn bpftrace(&self, tool: &str, ready: Ready) -> Result<Condition, String> {
        let stock = stock_bpftrace_script(tool);
        let rewrite = crate::root_dir().join("tools").join(tool).join("bench.bt");
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
                    format!("tools/{tool}/bench.bt, on tracepoints ({why})"),
                )
            }
            Some(path) => {
                return Err(format!(
                    "{} needs kprobes, and there is no rewrite (tools/{tool}/bench.bt)",
                    path.display()
                ))
            }
            None => return Err(format!("bpftrace ships no {tool}.bt")),
        };
        // bpftrace flushes each line itself: no stdbuf.
        Ok(Condition {
            label: "bpftrace".into(),
            role: Role::Peer,
            how,
            launch: Some(Launch {
                program: "bpftrace".into(),
                args: vec![script.to_string_lossy().into_owned()],
                env: self.bpftrace_env(),
                ready,
            }),
        })
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
    fn bcc(&self, tool: &str, args: &[&str], ready: Ready) -> Result<Condition, String> {
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
        Ok(Condition {
            label: "bcc".into(),
            role: Role::Peer,
            how: format!("{} (Debian bpfcc-tools), BCC_KERNEL_SOURCE", bin.display()),
            launch: Some(Launch {
                program: bin,
                args: strings(args),
                env,
                ready,
            }),
        })
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn unavailable(label: &str, reason: String) -> Unavailable {
    Unavailable {
        label: label.into(),
        reason,
    }
}

/// How the bench tells a tracer is attached; our banner, up to its first
/// "...", for [`registry::Ready::Banner`].
fn ready(r: registry::Ready, tool: &ToolInfo) -> Ready {
    match r {
        registry::Ready::Banner => {
            let banner = tool.banner.split("...").next().unwrap_or(tool.banner);
            Ready::Line(banner.trim().to_string())
        }
        registry::Ready::Line(l) => Ready::Line(l.to_string()),
        registry::Ready::FirstEvent => Ready::FirstEvent,
        registry::Ready::HoldsPrograms => Ready::HoldsPrograms,
    }
}

/// What `cargo xtask bench --list` says of a tool's bench.
pub fn describe(tool: &ToolInfo) -> String {
    let Some(b) = &tool.bench else {
        return "no bench workload (not benched)".into();
    };
    let peers: Vec<String> = b
        .peers
        .iter()
        .map(|p| match p.runs {
            PeerRun::LibbpfTools { .. } => "libbpf-tools".to_string(),
            PeerRun::Bcc { .. } => "bcc".to_string(),
            PeerRun::BpftraceScript => "bpftrace".to_string(),
            PeerRun::BpftraceProgram { label, .. }
            | PeerRun::OurTool { label, .. }
            | PeerRun::Command { label, .. }
            | PeerRun::Floor { label, .. } => label.to_string(),
        })
        .collect();
    let ours: Vec<&str> = b.ours.iter().map(|o| o.label).collect();
    let mut s = format!(
        "{:?}; {}; against {}",
        b.workload,
        ours.join(", "),
        peers.join(", ")
    );
    if !b.extras.is_empty() {
        s += &format!("; extras {:?}", b.extras);
    }
    s
}

/// floor.c, built in `dir`.
pub fn build_floor(dir: &Path) -> Result<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bench/floor.c");
    testbed::compile_c(&src, &dir.join("bench-floor"), &["-O1"])
}

/// vmlinux's BTF, as bpftool dumps it raw (`[ID] KIND 'name' ...` a line).
fn vmlinux_btf() -> Result<String, String> {
    crate::vmlinux_btf_dump("raw")
        .map(|out| String::from_utf8_lossy(&out).into_owned())
        .map_err(|e| format!("{e:#}"))
}

/// floor.c's arguments: `btf:NAME:ID` for `tp_btf/NAME`, ID being the
/// typedef `btf_trace_NAME` in `btf` (a raw dump), and `raw:NAME` for
/// `raw_tp/NAME`; `:clock` after either for a hook ending in `+clock`.
fn floor_args(hooks: &[&str], btf: Option<&str>) -> Result<Vec<String>, String> {
    hooks
        .iter()
        .map(|hook| {
            // `+clock`: the program reads the clock (floor.c's `:clock`).
            let (hook, clock) = match hook.strip_suffix("+clock") {
                Some(h) => (h, ":clock"),
                None => (*hook, ""),
            };
            match hook.split_once('/') {
                Some(("tp_btf", name)) => {
                    let typedef = format!("btf_trace_{name}");
                    btf.and_then(|dump| typedef_id(dump, &typedef))
                        .map(|id| format!("btf:{name}:{id}{clock}"))
                        .ok_or_else(|| format!("vmlinux's BTF has no typedef {typedef}"))
                }
                Some(("raw_tp", name)) => Ok(format!("raw:{name}{clock}")),
                _ => Err(format!("floor hook {hook}: not tp_btf/NAME or raw_tp/NAME")),
            }
        })
        .collect()
}

/// The id of typedef `name` in a raw BTF dump: `[11324] TYPEDEF 'name' type_id=...`.
fn typedef_id(dump: &str, name: &str) -> Option<u32> {
    let wanted = format!("] TYPEDEF '{name}' ");
    dump.lines()
        .find(|l| l.contains(&wanted))?
        .strip_prefix('[')?
        .split(']')
        .next()?
        .parse()
        .ok()
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
    fn floor_hooks_become_floor_c_arguments() {
        let dump = "[11323] FUNC_PROTO '(anon)' ret_type_id=0 vlen=3\n\
                    [11324] TYPEDEF 'btf_trace_sys_enter' type_id=11325\n\
                    [11328] TYPEDEF 'btf_trace_sys_exit' type_id=11325\n";
        assert_eq!(typedef_id(dump, "btf_trace_sys_exit"), Some(11328));
        assert_eq!(typedef_id(dump, "btf_trace_sys"), None);
        assert_eq!(
            floor_args(&["tp_btf/sys_enter", "raw_tp/sys_exit"], Some(dump)),
            Ok(vec!["btf:sys_enter:11324".into(), "raw:sys_exit".into()])
        );
        assert_eq!(
            floor_args(
                &["tp_btf/sys_enter+clock", "raw_tp/sys_exit+clock"],
                Some(dump)
            ),
            Ok(vec![
                "btf:sys_enter:11324:clock".into(),
                "raw:sys_exit:clock".into()
            ])
        );
        assert!(floor_args(&["tp_btf/sched_switch"], Some(dump)).is_err());
        assert!(floor_args(&["kprobe/vfs_read"], None).is_err());
    }

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
