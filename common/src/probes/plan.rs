//! Probes resolved to the points they attach to, and attached: each point's
//! index is its BPF cookie, so one program per kind of hook serves every
//! point of that kind.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use libbpf_rs::{
    KprobeMultiOpts, KprobeOpts, Link, MapCore, MapFlags, Object, OpenObject, ProgramMut,
    TracepointCategory, TracepointOpts, UprobeMultiOpts, UprobeOpts, UsdtOpts,
};

use super::{elf, tracepoints, At, Probe, Target};
use crate::kernel::probe::{self, UprobeLinks};
use crate::kernel::syscalls::{self, NR_SYSCALLS};

/// Where one probe point goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Point {
    /// A function at `offset` in the file.
    Uprobe {
        path: PathBuf,
        offset: u64,
    },
    Usdt {
        path: PathBuf,
        provider: String,
        name: String,
    },
    Tracepoint {
        category: String,
        event: String,
        id: u32,
    },
    Kernel {
        func: String,
    },
    /// A `syscalls:*` tracepoint served by the tool's program at the raw
    /// sys_enter or sys_exit tracepoint (bpf/include/syscall_points.bpf.h):
    /// call `nr`'s entry, or its exit.
    Syscall {
        event: String,
        exit: bool,
        nr: u32,
    },
}

/// How a tool serves its points.
#[derive(Debug, Clone, Copy, Default)]
pub struct Serving {
    /// User functions' entry probes go past their frame setup
    /// ([`elf::after_frame_setup`]), where a frame pointer walk finds their
    /// caller (stack tools).
    pub whole_frames: bool,
    /// System call tracepoints become [`Point::Syscall`]s: the tool has
    /// programs at the raw sys_enter and sys_exit and a syscall_points map
    /// ([`Programs::sys_enter`]). `BPFTOOLS_DISABLE=raw_syscalls` keeps
    /// them classic tracepoints.
    pub raw_syscalls: bool,
}

/// A point and how the report names it.
#[derive(Debug, Clone)]
pub struct Planned {
    pub label: String,
    pub at: At,
    pub point: Point,
}

/// Every point of the probes given, in their order; a point named twice
/// once. A probe that matches nothing, a library not found, or kernel
/// functions on a kernel without kprobes, is an error naming it.
pub fn plan(probes: &[Probe], pid: Option<u32>) -> Result<Vec<Planned>> {
    plan_with(probes, pid, Serving::default())
}

/// As [`plan`], for a tool that serves points as `serving` says.
pub fn plan_with(probes: &[Probe], pid: Option<u32>, serving: Serving) -> Result<Vec<Planned>> {
    let whole_frames = serving.whole_frames;
    let raw_syscalls = serving.raw_syscalls && !probe::disabled("raw_syscalls");
    let mut out: Vec<Planned> = Vec::new();
    for probe in probes {
        let before = out.len();
        let at = probe.at;
        match &probe.target {
            Target::User { lib, func } => {
                let path = elf::resolve(lib, pid).with_context(|| probe.text.clone())?;
                for f in elf::functions(&path, func)? {
                    let offset = if whole_frames && at == At::Entry {
                        elf::after_frame_setup(&path, f.offset)
                    } else {
                        f.offset
                    };
                    out.push(Planned {
                        label: f.name,
                        at,
                        point: Point::Uprobe {
                            path: path.clone(),
                            offset,
                        },
                    });
                }
            }
            Target::Usdt {
                lib,
                provider,
                probe: name,
            } => {
                let path = elf::resolve(lib, pid).with_context(|| probe.text.clone())?;
                for u in elf::usdt_probes(&path)? {
                    if provider.as_ref().is_some_and(|p| !p.matches(&u.provider))
                        || !name.matches(&u.name)
                    {
                        continue;
                    }
                    out.push(Planned {
                        label: u.name.clone(),
                        at,
                        point: Point::Usdt {
                            path: path.clone(),
                            provider: u.provider,
                            name: u.name,
                        },
                    });
                }
            }
            Target::Tracepoint { category, event } => {
                for t in tracepoints::matching(category, event)? {
                    let call = (raw_syscalls && t.category == "syscalls")
                        .then(|| syscalls::of_tracepoint(&t.event))
                        .flatten();
                    out.push(Planned {
                        label: format!("{}:{}", t.category, t.event),
                        at,
                        point: match call {
                            Some((exit, nr)) => Point::Syscall {
                                event: t.event,
                                exit,
                                nr,
                            },
                            None => Point::Tracepoint {
                                category: t.category,
                                event: t.event,
                                id: t.id,
                            },
                        },
                    });
                }
            }
            Target::Kernel { func } => {
                if !probe::features().kprobe {
                    if probe::kprobe_pmu() && crate::kernel::lockdown::confidential() {
                        let why = crate::kernel::lockdown::refusal(&crate::output::tool_name());
                        return Err(
                            crate::run::PrivilegeError(format!("{}: {why}", probe.text)).into()
                        );
                    }
                    bail!(
                        "{}: kernel functions are probed with kprobes, which this kernel does not have{}; \
                         probe a user function (LIB:FUNC), a USDT probe (u:LIB:PROBE) or a tracepoint \
                         (t:CATEGORY:EVENT) instead",
                        probe.text,
                        if probe::features().fentry {
                            ""
                        } else {
                            " (fentry programs do not load here either)"
                        }
                    );
                }
                for name in kernel_functions(func)? {
                    out.push(Planned {
                        label: name.clone(),
                        at,
                        point: Point::Kernel { func: name },
                    });
                }
            }
        }
        if out.len() == before {
            bail!("{}: no probe point matches", probe.text);
        }
        // The same point from two probes: once.
        let mut i = before;
        while i < out.len() {
            let dup = out[..i]
                .iter()
                .any(|p| p.point == out[i].point && p.at == out[i].at);
            if dup {
                out.remove(i);
            } else {
                i += 1;
            }
        }
    }
    Ok(out)
}

/// The traceable kernel functions `func` matches (tracefs's
/// available_filter_functions; a name without wildcards as it is).
fn kernel_functions(func: &super::Pattern) -> Result<Vec<String>> {
    if let Some(name) = func.exact() {
        return Ok(vec![name.to_string()]);
    }
    let path = crate::kernel::tracefs::mount_point()?.join("available_filter_functions");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut names: Vec<String> = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| func.matches(n))
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

impl Point {
    pub fn is_uprobe(&self) -> bool {
        matches!(self, Point::Uprobe { .. })
    }

    pub fn is_usdt(&self) -> bool {
        matches!(self, Point::Usdt { .. })
    }

    pub fn is_tracepoint(&self) -> bool {
        matches!(self, Point::Tracepoint { .. })
    }

    pub fn is_kernel(&self) -> bool {
        matches!(self, Point::Kernel { .. })
    }

    pub fn is_syscall(&self) -> bool {
        matches!(self, Point::Syscall { .. })
    }
}

/// The labels of the points `which` picks, comma-separated: what
/// `--dry-run` shows as the target of the program that serves them.
pub fn labels(plan: &[Planned], which: fn(&Point) -> bool) -> String {
    let l: Vec<&str> = plan
        .iter()
        .filter(|p| which(&p.point))
        .map(|p| p.label.as_str())
        .collect();
    l.join(",")
}

/// True if `pid` is given and every point is placed in that process alone
/// (uprobes and USDT probes attach to one process): a BPF filter on the
/// process would then only cost.
pub fn placed_in_pid(plan: &[Planned], pid: Option<u32>) -> bool {
    pid.is_some()
        && plan
            .iter()
            .all(|p| p.point.is_uprobe() || p.point.is_usdt())
}

/// The programs of each kind of hook; a kind the plan has none of may be
/// None (not loaded).
#[derive(Default)]
pub struct Programs<'a, 'obj> {
    pub uprobe: Option<&'a ProgramMut<'obj>>,
    pub uprobe_multi: Option<&'a ProgramMut<'obj>>,
    pub usdt: Option<&'a ProgramMut<'obj>>,
    pub tracepoint: Option<&'a ProgramMut<'obj>>,
    pub kprobe: Option<&'a ProgramMut<'obj>>,
    pub kprobe_multi: Option<&'a ProgramMut<'obj>>,
    /// Copies of the tracepoint program for a tracepoint probed again (the
    /// kernel attaches one program once to one tracepoint).
    pub tracepoint_again: Vec<&'a ProgramMut<'obj>>,
    /// [`Point::Syscall`]s: the programs at the raw sys_enter and sys_exit,
    /// and the map that tells them each call's point.
    pub sys_enter: Option<&'a ProgramMut<'obj>>,
    pub sys_exit: Option<&'a ProgramMut<'obj>>,
    pub syscall_points: Option<&'a dyn MapCore>,
}

/// The names in a tool's BPF object of its programs for each kind of
/// point, where one program serves every point of a kind (funccount,
/// stackcount): the plan says which load, what each serves, and attaches
/// them, from the names alone.
#[derive(Debug, Clone, Copy)]
pub struct Hooks {
    pub uprobe: &'static str,
    pub uprobe_multi: &'static str,
    pub usdt: &'static str,
    pub tracepoint: &'static str,
    pub kprobe: &'static str,
    pub kprobe_multi: &'static str,
    /// [`Point::Syscall`]s: at the raw sys_enter and sys_exit, with the
    /// object's `syscall_points` map.
    pub sys_enter: &'static str,
    pub sys_exit: &'static str,
}

impl Hooks {
    /// No program for any kind ("" is no program's name): a base for a
    /// tool that serves only some kinds.
    pub const NONE: Hooks = Hooks {
        uprobe: "",
        uprobe_multi: "",
        usdt: "",
        tracepoint: "",
        kprobe: "",
        kprobe_multi: "",
        sys_enter: "",
        sys_exit: "",
    };

    /// Each program's name and whether `need` uses it.
    fn used(&self, need: &Needs) -> [(&'static str, bool); 8] {
        [
            (self.uprobe, need.uprobe),
            (self.uprobe_multi, need.uprobe_multi),
            (self.usdt, need.usdt),
            (self.tracepoint, need.tracepoint),
            (self.kprobe, need.kprobe),
            (self.kprobe_multi, need.kprobe_multi),
            (self.sys_enter, need.sys_enter),
            (self.sys_exit, need.sys_exit),
        ]
    }

    /// Loads only the programs `plan` needs here. A name the object has
    /// no program of is an error, whatever the plan: names are data, so a
    /// renamed program fails every run (each tool's dry runs), not only
    /// the runs that would attach it.
    pub fn load_needed(&self, open: &mut OpenObject, plan: &[Planned]) -> Result<()> {
        let used = self.used(&needs(plan));
        let mut found = Vec::new();
        for mut prog in open.progs_mut() {
            let name = prog.name().to_string_lossy().into_owned();
            let Some((n, on)) = used.iter().find(|(n, _)| *n == name) else {
                continue;
            };
            found.push(*n);
            if !on {
                prog.set_autoload(false);
            }
        }
        match used
            .iter()
            .find(|(n, _)| !n.is_empty() && !found.contains(n))
        {
            Some((n, _)) => bail!("the BPF object has no program {n}"),
            None => Ok(()),
        }
    }

    /// What `--dry-run` shows as the target of program `name`: the labels
    /// of the points it serves (None: not one of these programs).
    pub fn target(&self, plan: &[Planned], name: &str) -> Option<String> {
        let which: fn(&Point) -> bool = if name == self.tracepoint {
            Point::is_tracepoint
        } else if name == self.kprobe || name == self.kprobe_multi {
            Point::is_kernel
        } else if name == self.usdt {
            Point::is_usdt
        } else if name == self.sys_enter || name == self.sys_exit {
            Point::is_syscall
        } else {
            return None;
        };
        Some(labels(plan, which))
    }

    /// `f` given these programs of the loaded `obj`, those `plan` needs.
    fn with_programs<T>(
        &self,
        obj: &Object,
        plan: &[Planned],
        f: impl FnOnce(&Programs) -> Result<T>,
    ) -> Result<T> {
        let used = self.used(&needs(plan));
        let loaded: Vec<ProgramMut> = obj.progs_mut().collect();
        let find = |name: &str| {
            let on = used.iter().any(|(n, on)| *n == name && *on);
            loaded
                .iter()
                .find(|p| on && p.name().to_string_lossy() == name)
        };
        let points = crate::kernel::maps::by_name(obj, "syscall_points");
        f(&Programs {
            uprobe: find(self.uprobe),
            uprobe_multi: find(self.uprobe_multi),
            usdt: find(self.usdt),
            tracepoint: find(self.tracepoint),
            kprobe: find(self.kprobe),
            kprobe_multi: find(self.kprobe_multi),
            tracepoint_again: Vec::new(),
            sys_enter: find(self.sys_enter),
            sys_exit: find(self.sys_exit),
            syscall_points: points.as_ref().map(|m| m as &dyn MapCore),
        })
    }

    /// Attaches the points of `plan` (from index `base` of the tool's plan
    /// on) with these programs of the loaded `obj`, as [`attach_at`].
    pub fn attach_at(
        &self,
        obj: &Object,
        plan: &[Planned],
        pid: Option<u32>,
        cookies: bool,
        base: usize,
    ) -> Result<Vec<Link>> {
        self.with_programs(obj, plan, |progs| {
            attach_at(plan, progs, pid, cookies, base)
        })
    }

    /// The [`Point::Syscall`]s of `plan` alone, as [`attach_syscalls`].
    pub fn attach_syscalls(&self, obj: &Object, plan: &[Planned]) -> Result<Vec<Link>> {
        self.with_programs(obj, plan, |progs| attach_syscalls(plan, progs, 0))
    }
}

/// Which programs a plan needs loaded, as they will attach here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Needs {
    pub uprobe: bool,
    pub uprobe_multi: bool,
    pub usdt: bool,
    pub tracepoint: bool,
    pub kprobe: bool,
    pub kprobe_multi: bool,
    /// The most points on one tracepoint (each use past the first needs a
    /// copy of the program).
    pub tracepoint_uses: usize,
    pub sys_enter: bool,
    pub sys_exit: bool,
}

/// The programs the points of `plan` attach with on this kernel.
pub fn needs(plan: &[Planned]) -> Needs {
    let mut n = Needs::default();
    let mut tracepoints: HashMap<(&str, &str), usize> = HashMap::new();
    for p in plan {
        if let Point::Tracepoint {
            category, event, ..
        } = &p.point
        {
            let uses = tracepoints.entry((category, event)).or_default();
            *uses += 1;
            n.tracepoint_uses = n.tracepoint_uses.max(*uses);
        }
        match p.point {
            Point::Uprobe { .. } => {
                if probe::uprobe_links() == UprobeLinks::Single {
                    n.uprobe = true;
                } else {
                    n.uprobe_multi = true;
                }
            }
            Point::Usdt { .. } => n.usdt = true,
            Point::Tracepoint { .. } => n.tracepoint = true,
            Point::Syscall { exit: false, .. } => n.sys_enter = true,
            Point::Syscall { exit: true, .. } => n.sys_exit = true,
            Point::Kernel { .. } => {
                if probe::kprobe_multi() {
                    n.kprobe_multi = true;
                } else {
                    n.kprobe = true;
                }
            }
        }
    }
    n
}

/// Checks that this kernel can attach `plan` with cookies: uprobes,
/// kprobes and tracepoints carry their index in one (5.15+; libbpf's USDT
/// support does without).
pub fn check_cookies(plan: &[Planned]) -> Result<()> {
    let probes = plan
        .iter()
        .any(|p| !matches!(p.point, Point::Usdt { .. } | Point::Syscall { .. }));
    if probes && !probe::attach_cookie() {
        bail!(
            "function probes and tracepoints need bpf_get_attach_cookie (Linux 5.15), which this \
             kernel lacks; USDT probes work here"
        );
    }
    Ok(())
}

/// What -v and --dry-run say of the plan: how many points of each kind,
/// and how they attach.
pub fn describe(plan: &[Planned]) -> Vec<String> {
    let mut by_file: BTreeMap<String, usize> = BTreeMap::new();
    let (mut usdt, mut tps, mut kernel, mut calls) = (0, 0, 0, 0);
    for p in plan {
        match &p.point {
            Point::Uprobe { path, .. } => {
                *by_file.entry(path.display().to_string()).or_default() += 1
            }
            Point::Usdt { .. } => usdt += 1,
            Point::Tracepoint { .. } => tps += 1,
            Point::Kernel { .. } => kernel += 1,
            Point::Syscall { .. } => calls += 1,
        }
    }
    let mut lines = Vec::new();
    for (file, n) in by_file {
        let how = if probe::uprobe_links() == UprobeLinks::Single {
            "a uprobe each (no uprobe_multi here)"
        } else {
            "one uprobe_multi link"
        };
        lines.push(format!("{n} functions in {file}: {how}"));
    }
    if usdt > 0 {
        lines.push(format!(
            "{usdt} USDT probes: libbpf's USDT support, semaphores counted"
        ));
    }
    if tps > 0 {
        lines.push(format!("{tps} tracepoints: one link each"));
    }
    if calls > 0 {
        lines.push(format!(
            "{calls} system call tracepoints: one program at the raw sys_enter and sys_exit each"
        ));
    }
    if kernel > 0 {
        let how = if probe::kprobe_multi() {
            "one kprobe_multi link"
        } else {
            "a kprobe each"
        };
        lines.push(format!("{kernel} kernel functions: {how}"));
    }
    lines
}

fn need<'a, 'obj>(p: Option<&'a ProgramMut<'obj>>, what: &str) -> Result<&'a ProgramMut<'obj>> {
    p.with_context(|| format!("no {what} program loaded for this plan"))
}

/// Attaches every point of `plan` (point i with cookie i, unless
/// `cookies` is false: a tool whose programs need none runs where the
/// kernel has none), for process `pid` only where one is given (uprobes
/// and USDT), else everywhere.
pub fn attach(
    plan: &[Planned],
    progs: &Programs,
    pid: Option<u32>,
    cookies: bool,
) -> Result<Vec<Link>> {
    attach_at(plan, progs, pid, cookies, 0)
}

/// Attaches the points of `plan` at `indices` one by one, `attach_one(n, i)`
/// the `n`th of them (point `i`), where a tool has a copy of its programs
/// for each point (no attach cookies). As [`attach_at`] does within one
/// file: a point the kernel refuses is skipped and named where there are
/// several, as BCC does; a lone one, or all of them, is an error.
pub fn attach_each(
    plan: &[Planned],
    indices: &[usize],
    mut attach_one: impl FnMut(usize, usize) -> Result<Vec<Link>>,
) -> Result<Vec<Link>> {
    let mut links = Vec::new();
    let mut skipped: Vec<(usize, anyhow::Error)> = Vec::new();
    for (n, &i) in indices.iter().enumerate() {
        match attach_one(n, i) {
            Ok(l) => links.extend(l),
            Err(e) if indices.len() > 1 => skipped.push((i, e)),
            Err(e) => return Err(e),
        }
    }
    if skipped.len() == indices.len() {
        if let Some((_, e)) = skipped.into_iter().next() {
            return Err(e);
        }
    } else if let Some((_, e)) = skipped.first() {
        let names: Vec<&str> = skipped
            .iter()
            .map(|(i, _)| plan[*i].label.as_str())
            .collect();
        crate::note!(
            "skipped {} of {} functions that cannot be probed ({}): {}",
            names.len(),
            indices.len(),
            e.root_cause(),
            names.join(" ")
        );
    }
    Ok(links)
}

/// As [`attach`], for points that are a plan's from index `base` on (a
/// tool attaching its points one by one). USDT probes always carry their
/// index: libbpf's USDT support needs no kernel cookies.
pub fn attach_at(
    plan: &[Planned],
    progs: &Programs,
    pid: Option<u32>,
    cookies: bool,
    base: usize,
) -> Result<Vec<Link>> {
    let pid = pid.map_or(-1, |p| p as i32);
    let cookie = |i: usize| if cookies { (base + i) as u64 } else { 0 };
    let mut links = Vec::new();
    // How often each tracepoint was attached so far.
    let mut tracepoint_uses: HashMap<(&str, &str), usize> = HashMap::new();
    // Uprobes grouped by file (and by entry or return): one multi link each.
    let mut groups: BTreeMap<(PathBuf, bool), Vec<(usize, u64)>> = BTreeMap::new();
    let mut kernel: Vec<(usize, &str, bool)> = Vec::new();
    for (i, p) in plan.iter().enumerate() {
        let ret = p.at == At::Return;
        match &p.point {
            Point::Uprobe { path, offset } => {
                groups
                    .entry((path.clone(), ret))
                    .or_default()
                    .push((i, *offset));
            }
            Point::Usdt {
                path,
                provider,
                name,
            } => {
                let opts = UsdtOpts {
                    cookie: (base + i) as u64,
                    ..Default::default()
                };
                links.push(
                    need(progs.usdt, "USDT")?
                        .attach_usdt_with_opts(pid, path, provider, name, opts)
                        .with_context(|| {
                            format!(
                                "attaching to USDT probe {provider}:{name} in {}",
                                path.display()
                            )
                        })?,
                );
            }
            Point::Tracepoint {
                category, event, ..
            } => {
                let opts = TracepointOpts {
                    cookie: cookie(i),
                    ..Default::default()
                };
                let uses = tracepoint_uses.entry((category, event)).or_default();
                let prog = match *uses {
                    0 => need(progs.tracepoint, "tracepoint")?,
                    n => *progs.tracepoint_again.get(n - 1).with_context(|| {
                        format!(
                            "at most {} probes on one tracepoint ({category}:{event})",
                            progs.tracepoint_again.len() + 1
                        )
                    })?,
                };
                *uses += 1;
                links.push(
                    prog.attach_tracepoint_with_opts(
                        TracepointCategory::Custom(category.clone()),
                        event,
                        opts,
                    )
                    .with_context(|| format!("attaching to tracepoint {category}:{event}"))?,
                );
            }
            Point::Kernel { func } => kernel.push((i, func, ret)),
            // All at once, below.
            Point::Syscall { .. } => {}
        }
    }
    links.extend(attach_syscalls(plan, progs, base)?);
    for ((path, ret), all) in groups {
        for points in distinct(all, |p| p.1) {
            let context = || {
                format!(
                    "attaching to {} functions in {}",
                    points.len(),
                    path.display()
                )
            };
            // A function the kernel cannot probe (an instruction uprobes
            // refuse) is skipped and said where a pattern matched many, as
            // BCC does; a lone one, or all of them, is an error.
            let mut failed: Vec<(usize, libbpf_rs::Error)> = Vec::new();
            if let Some(prog) = progs.uprobe_multi {
                let attach = |part: &[(usize, u64)]| {
                    let opts = UprobeMultiOpts {
                        offsets: part.iter().map(|(_, o)| *o as usize).collect(),
                        cookies: part.iter().map(|(i, _)| cookie(*i)).collect(),
                        retprobe: ret,
                        ..Default::default()
                    };
                    prog.attach_uprobe_multi_with_opts(pid, &path, "", opts)
                };
                attach_halving(&points, &attach, &mut links, &mut failed);
            } else {
                let prog = need(progs.uprobe, "uprobe")?;
                for (i, offset) in &points {
                    let opts = UprobeOpts {
                        cookie: cookie(*i),
                        retprobe: ret,
                        ..Default::default()
                    };
                    match prog.attach_uprobe_with_opts(pid, &path, *offset as usize, opts) {
                        Ok(link) => links.push(link),
                        Err(e) => failed.push((*i, e)),
                    }
                }
            }
            if failed.len() == points.len() {
                if let Some((_, e)) = failed.into_iter().next() {
                    return Err(anyhow::Error::from(e).context(context()));
                }
                continue;
            }
            if let Some((_, e)) = failed.first() {
                let e =
                    std::error::Error::source(e).map_or_else(|| e.to_string(), |c| c.to_string());
                let names: Vec<&str> = failed
                    .iter()
                    .map(|(i, _)| plan[*i].label.as_str())
                    .collect();
                crate::note!(
                    "skipped {} of {} functions in {} that cannot be probed ({e}): {}",
                    names.len(),
                    points.len(),
                    path.display(),
                    names.join(" ")
                );
            }
        }
    }
    for ret in [false, true] {
        let all: Vec<&(usize, &str, bool)> = kernel.iter().filter(|k| k.2 == ret).collect();
        for funcs in distinct(all, |k| k.1) {
            if let Some(prog) = progs.kprobe_multi {
                let opts = KprobeMultiOpts {
                    symbols: funcs.iter().map(|k| k.1.to_string()).collect(),
                    cookies: funcs.iter().map(|k| cookie(k.0)).collect(),
                    retprobe: ret,
                    ..Default::default()
                };
                links.push(
                    prog.attach_kprobe_multi_with_opts(opts).with_context(|| {
                        format!("attaching to {} kernel functions", funcs.len())
                    })?,
                );
                continue;
            }
            let prog = need(progs.kprobe, "kprobe")?;
            for (i, func, ret) in funcs {
                let opts = KprobeOpts {
                    cookie: cookie(*i),
                    ..Default::default()
                };
                links.push(
                    prog.attach_kprobe_with_opts(*ret, func, opts)
                        .with_context(|| format!("attaching a kprobe to {func}"))?,
                );
            }
        }
    }
    Ok(links)
}

/// Attaches the [`Point::Syscall`]s of `plan` (a plan's from index `base`
/// on): each call's point set in the map, and one link at each of the raw
/// sys_enter and sys_exit that any point needs.
pub fn attach_syscalls(plan: &[Planned], progs: &Programs, base: usize) -> Result<Vec<Link>> {
    let mut raw = [false; 2];
    for (i, p) in plan.iter().enumerate() {
        let Point::Syscall { exit, nr, .. } = p.point else {
            continue;
        };
        let map = progs
            .syscall_points
            .context("no syscall_points map for system call points")?;
        let key = nr + if exit { NR_SYSCALLS } else { 0 };
        let point = (base + i + 1) as u32;
        map.update(&key.to_ne_bytes(), &point.to_ne_bytes(), MapFlags::ANY)
            .with_context(|| format!("setting the point of {}", p.label))?;
        raw[exit as usize] = true;
    }
    let mut links = Vec::new();
    for (exit, tp) in [(false, "sys_enter"), (true, "sys_exit")] {
        if raw[exit as usize] {
            let prog = if exit {
                progs.sys_exit
            } else {
                progs.sys_enter
            };
            links.push(
                need(prog, tp)?
                    .attach_raw_tracepoint(tp)
                    .with_context(|| format!("attaching to raw tracepoint {tp}"))?,
            );
        }
    }
    Ok(links)
}

/// `items` in groups without two of the same key: a multi link refuses a
/// function twice (argdist's entry kept for a return, beside the same
/// function's own entry probe).
/// Attaches `points` as one multi link, or where the kernel refuses it, as
/// two halves, down to the single points it refuses (`failed`): a few
/// functions that cannot be probed cost a few links more, not the run.
/// Points of one file: (index in the plan, offset).
type FilePoints = [(usize, u64)];

fn attach_halving(
    points: &FilePoints,
    attach: &dyn Fn(&FilePoints) -> libbpf_rs::Result<Link>,
    links: &mut Vec<Link>,
    failed: &mut Vec<(usize, libbpf_rs::Error)>,
) {
    match attach(points) {
        Ok(link) => links.push(link),
        Err(e) if points.len() == 1 => failed.push((points[0].0, e)),
        Err(_) => {
            let (a, b) = points.split_at(points.len() / 2);
            attach_halving(a, attach, links, failed);
            attach_halving(b, attach, links, failed);
        }
    }
}

fn distinct<T, K: PartialEq>(items: Vec<T>, key: impl Fn(&T) -> K) -> Vec<Vec<T>> {
    let mut groups: Vec<Vec<T>> = Vec::new();
    for item in items {
        let k = key(&item);
        match groups.iter_mut().find(|g| g.iter().all(|x| key(x) != k)) {
            Some(g) => g.push(item),
            None => groups.push(vec![item]),
        }
    }
    groups
}
