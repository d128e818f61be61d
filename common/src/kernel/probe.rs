//! Which hooks this kernel offers, found by probing (never by version), and
//! choosing among a tool's program variants with autoload.

use std::ffi::CString;
use std::fmt;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::sync::OnceLock;

use anyhow::{Context, Result};
use libbpf_rs::libbpf_sys;
use libbpf_rs::{OpenMapMut, OpenObject, OpenProgramMut};

/// A kind of attachment point, in the order tools prefer them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Hook {
    Fentry,
    TpBtf,
    RawTp,
    Tracepoint,
    Kprobe,
    Uprobe,
}

impl fmt::Display for Hook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Hook::Fentry => "fentry",
            Hook::TpBtf => "tp_btf",
            Hook::RawTp => "raw_tp",
            Hook::Tracepoint => "tracepoint",
            Hook::Kprobe => "kprobe",
            Hook::Uprobe => "uprobe",
        })
    }
}

/// What the running kernel supports; probed once per process.
#[derive(Debug, Clone)]
pub struct Features {
    pub fentry: bool,
    pub tp_btf: bool,
    pub raw_tp: bool,
    pub tracepoint: bool,
    pub kprobe: bool,
    pub uprobe: bool,
}

impl Features {
    pub fn has(&self, hook: Hook) -> bool {
        match hook {
            Hook::Fentry => self.fentry,
            Hook::TpBtf => self.tp_btf,
            Hook::RawTp => self.raw_tp,
            Hook::Tracepoint => {
                // Asking is looking in tracefs (it is there if it can be read).
                crate::kernel::tracefs::mark_looked();
                self.tracepoint
            }
            Hook::Kprobe => self.kprobe,
            Hook::Uprobe => self.uprobe,
        }
    }
}

/// Features named in `BPFTOOLS_DISABLE` (comma-separated, e.g.
/// `fentry,task_pt_regs`) are treated as missing, so that the fallbacks a
/// user's older kernel would take can be run and tested on a new one.
pub fn disabled(feature: &str) -> bool {
    static LIST: OnceLock<Vec<String>> = OnceLock::new();
    LIST.get_or_init(|| {
        std::env::var("BPFTOOLS_DISABLE")
            .unwrap_or_default()
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    })
    .iter()
    .any(|f| f == feature)
}

/// Probes the kernel (once) and returns what it offers.
pub fn features() -> &'static Features {
    static FEATURES: OnceLock<Features> = OnceLock::new();
    FEATURES.get_or_init(|| {
        let btf = Path::new("/sys/kernel/btf/vmlinux").exists();
        let f = Features {
            // Any traceable function will do; fentry either loads or it does not.
            fentry: btf && tracing_prog_loads("vfs_read", libbpf_sys::BPF_TRACE_FENTRY),
            tp_btf: btf && tracing_prog_loads("sched_switch", libbpf_sys::BPF_TRACE_RAW_TP),
            // SAFETY: a pure query with no pointer arguments.
            raw_tp: unsafe {
                libbpf_sys::libbpf_probe_bpf_prog_type(
                    libbpf_sys::BPF_PROG_TYPE_RAW_TRACEPOINT,
                    std::ptr::null(),
                )
            } == 1,
            tracepoint: crate::kernel::tracefs::available(),
            // Confidentiality lockdown refuses kprobes as perf events (and
            // on some kernels also as multi links): asked only then.
            kprobe: kprobe_pmu()
                && (!crate::kernel::lockdown::confidential()
                    || perf_kprobe_opens()
                    || multi_link_attaches()),
            uprobe: Path::new("/sys/bus/event_source/devices/uprobe/type").exists(),
        };
        Features {
            fentry: f.fentry && !disabled("fentry"),
            tp_btf: f.tp_btf && !disabled("tp_btf"),
            raw_tp: f.raw_tp && !disabled("raw_tp"),
            tracepoint: f.tracepoint && !disabled("tracepoint"),
            kprobe: f.kprobe && !disabled("kprobe"),
            uprobe: f.uprobe && !disabled("uprobe"),
        }
    })
}

/// Opens (and closes) a perf kprobe event on a function, as libbpf attaches
/// a kprobe: asked only under confidentiality lockdown, which refuses it on
/// some kernels and not others.
fn perf_kprobe_opens() -> bool {
    let Some(pmu) = std::fs::read_to_string("/sys/bus/event_source/devices/kprobe/type")
        .ok()
        .and_then(|t| t.trim().parse().ok())
    else {
        return false;
    };
    let func = c"vfs_read";
    let mut attr = libbpf_sys::perf_event_attr {
        size: std::mem::size_of::<libbpf_sys::perf_event_attr>() as u32,
        type_: pmu,
        ..Default::default()
    };
    attr.__bindgen_anon_3.kprobe_func = func.as_ptr() as u64;
    crate::kernel::perf::event_open(&attr, 0).is_ok()
}

/// Loads `r0 = 0; exit` as a BTF-typed tracing program on `target`; true if
/// the kernel accepts it. Here fentry fails with EPERM while tp_btf works.
fn tracing_prog_loads(target: &str, attach_type: libbpf_sys::bpf_attach_type) -> bool {
    // What libbpf_find_vmlinux_btf_id looks up, in the BTF parsed once.
    let btf_id = if attach_type == libbpf_sys::BPF_TRACE_RAW_TP {
        vmlinux_type(&format!("btf_trace_{target}"), libbpf_sys::BTF_KIND_TYPEDEF)
    } else {
        vmlinux_type(target, libbpf_sys::BTF_KIND_FUNC)
    };
    let Some(btf_id) = btf_id else {
        return false;
    };
    trivial_program(libbpf_sys::BPF_PROG_TYPE_TRACING, attach_type, btf_id).is_some()
}

/// Loads `r0 = 0; exit` as a program of `prog_type`, expecting
/// `attach_type` (on `btf_id` for BTF-typed ones).
fn trivial_program(
    prog_type: libbpf_sys::bpf_prog_type,
    attach_type: libbpf_sys::bpf_attach_type,
    btf_id: u32,
) -> Option<OwnedFd> {
    trivial_program_flagged(prog_type, attach_type, btf_id, 0)
}

fn trivial_program_flagged(
    prog_type: libbpf_sys::bpf_prog_type,
    attach_type: libbpf_sys::bpf_attach_type,
    btf_id: u32,
    prog_flags: u32,
) -> Option<OwnedFd> {
    let insns = [
        // BPF_MOV64_IMM(BPF_REG_0, 0)
        libbpf_sys::bpf_insn {
            code: (libbpf_sys::BPF_ALU64 | libbpf_sys::BPF_MOV | libbpf_sys::BPF_K) as u8,
            ..Default::default()
        },
        // BPF_EXIT_INSN()
        libbpf_sys::bpf_insn {
            code: (libbpf_sys::BPF_JMP | libbpf_sys::BPF_EXIT) as u8,
            ..Default::default()
        },
    ];
    let mut opts = libbpf_sys::bpf_prog_load_opts {
        sz: std::mem::size_of::<libbpf_sys::bpf_prog_load_opts>() as _,
        expected_attach_type: attach_type,
        attach_btf_id: btf_id,
        prog_flags,
        ..Default::default()
    };
    // SAFETY: insns and opts outlive the call; the license is a C string literal.
    let fd = unsafe {
        libbpf_sys::bpf_prog_load(
            prog_type,
            std::ptr::null(),
            c"GPL".as_ptr(),
            insns.as_ptr(),
            insns.len() as _,
            &mut opts,
        )
    };
    // SAFETY: a non-negative fd was just returned to us and is owned here.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// How the kernel can attach uprobes: many in one link (uprobe_multi,
/// 6.6+), with sessions (an entry program that returns non-zero skips its
/// return probe, 6.13+), or one perf event per probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UprobeLinks {
    Session,
    Multi,
    Single,
}

/// Probes how uprobes can be attached, as libbpf probes uprobe_multi: a
/// link on the directory "/" fails with EBADF only where the kernel knows
/// the attach type well enough to look at the path. `uprobe_multi` and
/// `uprobe_session` in BPFTOOLS_DISABLE pretend it does not.
pub fn uprobe_links() -> UprobeLinks {
    static LINKS: OnceLock<UprobeLinks> = OnceLock::new();
    *LINKS.get_or_init(|| {
        let knows = |attach_type| {
            let Some(prog) = trivial_program(libbpf_sys::BPF_PROG_TYPE_KPROBE, attach_type, 0)
            else {
                return false;
            };
            let offsets: [std::os::raw::c_ulong; 1] = [0];
            let mut opts = libbpf_sys::bpf_link_create_opts {
                sz: std::mem::size_of::<libbpf_sys::bpf_link_create_opts>() as _,
                ..Default::default()
            };
            opts.__bindgen_anon_1.uprobe_multi =
                libbpf_sys::bpf_link_create_opts__bindgen_ty_1__bindgen_ty_3 {
                    cnt: 1,
                    path: c"/".as_ptr(),
                    offsets: offsets.as_ptr(),
                    ..Default::default()
                };
            // SAFETY: the program fd is open; opts and what it points to
            // outlive the call.
            let fd =
                unsafe { libbpf_sys::bpf_link_create(prog.as_raw_fd(), 0, attach_type, &opts) };
            if fd >= 0 {
                // SAFETY: an fd we own (no kernel should get here with "/").
                drop(unsafe { OwnedFd::from_raw_fd(fd) });
                return true;
            }
            fd == -libc::EBADF
        };
        if disabled("uprobe_multi") || !knows(libbpf_sys::BPF_TRACE_UPROBE_MULTI) {
            UprobeLinks::Single
        } else if disabled("uprobe_session") || !knows(libbpf_sys::BPF_TRACE_UPROBE_SESSION) {
            UprobeLinks::Multi
        } else {
            UprobeLinks::Session
        }
    })
}

/// True if the kernel's BTF describes tracepoint `name` (what tp_btf and
/// raw_tp attach to), e.g. `block_io_done`; needs no tracefs.
pub fn btf_tracepoint_exists(name: &str) -> bool {
    !disabled(name)
        && vmlinux_type(&format!("btf_trace_{name}"), libbpf_sys::BTF_KIND_TYPEDEF).is_some()
}

/// How many arguments tracepoint `name` passes its programs, from the
/// kernel's BTF (its btf_trace_ typedef); None where BTF does not say.
/// Some tracepoints changed arguments (block_rq_issue lost its queue in
/// 5.11): a program must read the one the running kernel passes.
pub fn btf_tracepoint_args(name: &str) -> Option<u32> {
    // typedef -> pointer -> function prototype, whose first parameter is
    // the tracepoint's private data pointer, not an argument.
    btf_params(
        &format!("btf_trace_{name}"),
        libbpf_sys::BTF_KIND_TYPEDEF,
        2,
    )
    .map(|n| n.saturating_sub(1))
}

/// The struct that argument `index` (from 0) of tracepoint `name` points
/// to, from the kernel's BTF: `kmem_cache` for kmem_cache_alloc's third
/// argument since 6.1 (before, a size). None where it is no struct pointer
/// or BTF does not say.
pub fn btf_tracepoint_arg_struct(name: &str, index: usize) -> Option<String> {
    let id = vmlinux_type(&format!("btf_trace_{name}"), libbpf_sys::BTF_KIND_TYPEDEF)?;
    with_caches(|c| {
        let btf = c.btf()?;
        // SAFETY: btf is valid under the cache's lock; every type pointer is
        // checked for null; a prototype's btf_type is followed by its vlen
        // btf_params (the BTF format), of which only the first vlen are read.
        unsafe {
            let by_id = |id: u32| libbpf_sys::btf__type_by_id(btf, id);
            let typedef = by_id(id);
            let ptr = by_id(typedef.as_ref()?.__bindgen_anon_1.type_);
            let proto = by_id(ptr.as_ref()?.__bindgen_anon_1.type_);
            let vlen = (proto.as_ref()?.info & 0xffff) as usize;
            // The first parameter is the tracepoint's private data.
            if index + 1 >= vlen {
                return None;
            }
            let params = proto.add(1) as *const libbpf_sys::btf_param;
            let arg = by_id((*params.add(index + 1)).type_);
            if (arg.as_ref()?.info >> 24) & 0x1f != libbpf_sys::BTF_KIND_PTR {
                return None;
            }
            let mut target = by_id((*arg).__bindgen_anon_1.type_);
            // Through const and volatile to the struct.
            while let Some(t) = target.as_ref() {
                let kind = (t.info >> 24) & 0x1f;
                if kind == libbpf_sys::BTF_KIND_STRUCT {
                    let name = libbpf_sys::btf__name_by_offset(btf, t.name_off);
                    return (!name.is_null()).then(|| {
                        std::ffi::CStr::from_ptr(name)
                            .to_string_lossy()
                            .into_owned()
                    });
                }
                if kind != libbpf_sys::BTF_KIND_CONST && kind != libbpf_sys::BTF_KIND_VOLATILE {
                    return None;
                }
                target = by_id(t.__bindgen_anon_1.type_);
            }
            None
        }
    })
}

/// How many parameters kernel function `name` takes, from the kernel's
/// BTF: some changed (vfs_unlink gained a namespace first in 5.12), and a
/// probe must read the arguments the running kernel passes.
pub fn function_args(name: &str) -> Option<u32> {
    btf_params(name, libbpf_sys::BTF_KIND_FUNC, 1)
}

/// The parameter count of the prototype reached from type `name` of
/// `kind` through `hops` references, in the kernel's BTF.
fn btf_params(name: &str, kind: u32, hops: usize) -> Option<u32> {
    let id = vmlinux_type(name, kind)?;
    with_caches(|c| {
        let btf = c.btf()?;
        // SAFETY: btf is a valid BTF object while the cache holds it (this
        // closure); btf__type_by_id returns null for a bad id (checked). A
        // typedef's, a pointer's and a function's union member is `type`.
        unsafe {
            let mut t = libbpf_sys::btf__type_by_id(btf, id);
            for _ in 0..hops {
                if !t.is_null() {
                    t = libbpf_sys::btf__type_by_id(btf, (*t).__bindgen_anon_1.type_);
                }
            }
            // A prototype's vlen is its parameter count.
            (!t.is_null()).then(|| (*t).info & 0xffff)
        }
    })
}

/// What probing reads of the kernel, read once per process (a tool asks a
/// dozen questions before it loads) and dropped after load
/// ([`release_caches`]): the kernel's BTF and its text symbols.
#[derive(Default)]
struct Caches {
    /// The kernel's BTF; null until parsed, or where it cannot be.
    btf: Option<*mut libbpf_sys::btf>,
    /// /proc/kallsyms, searched for the functions asked.
    kallsyms: Option<super::kallsyms::Kallsyms>,
}

// SAFETY: the BTF object is only used under the cache's mutex.
unsafe impl Send for Caches {}

impl Caches {
    fn btf(&mut self) -> Option<*mut libbpf_sys::btf> {
        let btf = *self.btf.get_or_insert_with(|| {
            // SAFETY: libbpf parses the kernel's BTF into a new object, owned
            // by the cache and freed in release_caches.
            unsafe { libbpf_sys::btf__load_vmlinux_btf() }
        });
        (!btf.is_null()).then_some(btf)
    }

    fn kallsyms(&mut self) -> &super::kallsyms::Kallsyms {
        self.kallsyms
            .get_or_insert_with(super::kallsyms::Kallsyms::read)
    }
}

static CACHES: std::sync::Mutex<Option<Caches>> = std::sync::Mutex::new(None);

fn with_caches<R>(f: impl FnOnce(&mut Caches) -> R) -> R {
    let mut guard = CACHES.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(Caches::default))
}

/// Frees what probing read of the kernel: called once the programs are
/// loaded, so that a tool does not keep megabytes it will not ask again
/// (a later question reads them anew).
pub fn release_caches() {
    let taken = CACHES.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(Some(btf)) = taken.map(|c| c.btf) {
        if !btf.is_null() {
            // SAFETY: the cache owned this object and no longer refers to it.
            unsafe { libbpf_sys::btf__free(btf) };
        }
    }
}

/// The id of type `name` of `kind` in the kernel's BTF.
fn vmlinux_type(name: &str, kind: u32) -> Option<u32> {
    let name = CString::new(name).ok()?;
    with_caches(|c| {
        let btf = c.btf()?;
        // SAFETY: a valid BTF object under the cache's lock, a C string.
        let id = unsafe { libbpf_sys::btf__find_by_name_kind(btf, name.as_ptr(), kind) };
        (id > 0).then_some(id as u32)
    })
}

/// True if an fentry program can attach to kernel function `name` here:
/// fentry works, and the function is in the kernel's BTF or in its loaded
/// module's (not inlined).
pub fn fentry_target(name: &str) -> bool {
    if !features().fentry || disabled(name) {
        return false;
    }
    let Ok(cname) = CString::new(name) else {
        return false;
    };
    // Looked up in BTF here rather than by libbpf_find_vmlinux_btf_id,
    // which warns on stderr of every function it does not find there
    // (ext4's, where ext4 is a module, as on Debian); the module, from
    // /proc/kallsyms, only for a function the kernel's BTF lacks.
    let func = libbpf_sys::BTF_KIND_FUNC;
    in_btf(None, &cname, func)
        || kallsyms_text(name)
            .flatten()
            .is_some_and(|m| in_btf(Some(&m), &cname, func))
}

/// True if a kprobe can attach to kernel function `name` here: there is a
/// kprobe PMU, and the function is a text symbol in /proc/kallsyms (the
/// kernel's or a loaded module's).
pub fn kprobe_target(name: &str) -> bool {
    features().kprobe && !disabled(name) && kallsyms_text(name).is_some()
}

/// The symbol a kprobe on kernel function `name` attaches to: `name`
/// itself, else the copy a compiler made of it under a suffix
/// (`lookup_fast.constprop.0`, `.isra.0`, `.part.0`), as BCC's tools look
/// for them; none where there is no kprobe PMU or no such symbol.
fn kprobe_symbol(name: &str) -> Option<String> {
    if !features().kprobe || disabled(name) {
        return None;
    }
    if kallsyms_text(name).is_some() {
        return Some(name.to_string());
    }
    let prefix = format!("{name}.");
    with_caches(|c| {
        let copies = c.kallsyms().prefixed(&prefix).filter(|s| s.is_text());
        compiler_copy(copies.map(|s| s.name), name).map(str::to_string)
    })
}

/// The first (by name) of the copies a compiler made of function `name`
/// among `symbols`: `name.constprop.0`, `name.isra.0`, `name.part.0`; not
/// its cold part (`name.cold`), which is no entry.
fn compiler_copy<'a>(symbols: impl Iterator<Item = &'a str>, name: &str) -> Option<&'a str> {
    symbols
        .filter(|s| {
            s.strip_prefix(name)
                .and_then(|rest| rest.strip_prefix('.'))
                .is_some_and(|suffix| !suffix.is_empty() && !suffix.starts_with("cold"))
        })
        .min()
}

/// How a tool that only kernel functions can serve (no tracepoint covers
/// what it counts: dcstat, dcsnoop) attaches to `functions`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FunctionHooks {
    /// fentry and fexit on each.
    Fentry,
    /// Kprobes and kretprobes on these symbols, one per function.
    Kprobe(Vec<String>),
}

impl FunctionHooks {
    /// fentry where each function takes it, else kprobes where each has a
    /// symbol; else the error a user reads, naming what is missing (the
    /// tool then exits 1).
    pub fn choose(functions: &[&str], what: &str) -> Result<FunctionHooks> {
        if functions.iter().all(|f| fentry_target(f)) {
            return Ok(FunctionHooks::Fentry);
        }
        if let Some(symbols) = functions.iter().map(|f| kprobe_symbol(f)).collect() {
            return Ok(FunctionHooks::Kprobe(symbols));
        }
        let named = match functions.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => functions.join(""),
        };
        anyhow::bail!(
            "this kernel offers neither fentry nor kprobes on the functions of {what} \
             ({named}; no tracepoint covers it): this tool needs one of them"
        )
    }

    /// The symbol the kprobe on the `i`th function chosen attaches to;
    /// none with fentry.
    pub fn symbol(&self, i: usize) -> Option<String> {
        match self {
            FunctionHooks::Kprobe(symbols) => symbols.get(i).cloned(),
            FunctionHooks::Fentry => None,
        }
    }

    /// Attaches `prog`, a kprobe whose section names no function, to the
    /// `i`th function's symbol; nothing with fentry (the program is not
    /// loaded then).
    pub fn attach_kprobe(
        &self,
        i: usize,
        prog: &libbpf_rs::ProgramMut<'_>,
    ) -> Result<Option<libbpf_rs::Link>> {
        let Some(symbol) = self.symbol(i) else {
            return Ok(None);
        };
        prog.attach_kprobe(false, &symbol)
            .with_context(|| format!("attaching a kprobe to {symbol}"))
            .map(Some)
    }
}

/// Text symbol `name` in /proc/kallsyms: `Some(None)` in the kernel,
/// `Some(Some(module))` in a loaded module, `None` absent.
fn kallsyms_text(name: &str) -> Option<Option<String>> {
    with_caches(|c| {
        c.kallsyms()
            .named(name)
            .find(|s| s.is_text())
            .map(|s| s.module.map(str::to_string))
    })
}

/// True if tracepoint `name` is a BTF tracepoint here (tp_btf, raw_tp):
/// in the kernel's BTF, or in module `module`'s where it is loaded and has
/// BTF of its own (5.11+; Debian builds ext4 and xfs as modules).
pub fn btf_tracepoint_in_module(name: &str, module: &str) -> bool {
    if btf_tracepoint_exists(name) {
        return true;
    }
    let Ok(typedef) = CString::new(format!("btf_trace_{name}")) else {
        return false;
    };
    !disabled(name)
        && Path::new("/sys/kernel/btf").join(module).exists()
        && in_btf(Some(module), &typedef, libbpf_sys::BTF_KIND_TYPEDEF)
}

/// True if `name`, of BTF kind `kind`, is in the kernel's BTF, or in
/// `module`'s.
fn in_btf(module: Option<&str>, name: &CString, kind: u32) -> bool {
    let path = match module {
        Some(m) => match CString::new(format!("/sys/kernel/btf/{m}")) {
            Ok(p) => Some(p),
            Err(_) => return false,
        },
        None => None,
    };
    with_caches(|c| {
        let Some(base) = c.btf() else {
            return false;
        };
        // SAFETY: the kernel's BTF is valid under the cache's lock; a
        // module's is parsed on top of it and freed here.
        unsafe {
            let btf = match &path {
                Some(p) => libbpf_sys::btf__parse_split(p.as_ptr(), base),
                None => base,
            };
            let found =
                !btf.is_null() && libbpf_sys::btf__find_by_name_kind(btf, name.as_ptr(), kind) > 0;
            if !btf.is_null() && btf != base {
                libbpf_sys::btf__free(btf);
            }
            found
        }
    })
}

/// True if the classic tracepoint `category:name` exists.
pub fn tracepoint_exists(category: &str, name: &str) -> bool {
    crate::kernel::tracefs::mount_point()
        .is_ok_and(|t| t.join("events").join(category).join(name).is_dir())
}

/// The hook kind of a program, from its ELF section name.
pub fn hook_of_section(section: &str) -> Option<Hook> {
    let kind = section.split('/').next()?;
    Some(match kind {
        "fentry" | "fexit" | "fmod_ret" => Hook::Fentry,
        "tp_btf" => Hook::TpBtf,
        "raw_tp" | "raw_tracepoint" => Hook::RawTp,
        "tp" | "tracepoint" => Hook::Tracepoint,
        "kprobe" | "kretprobe" | "kprobe.multi" | "kretprobe.multi" | "ksyscall"
        | "kretsyscall" => Hook::Kprobe,
        "uprobe" | "uretprobe" | "uprobe.multi" | "uretprobe.multi" | "uprobe.session" => {
            Hook::Uprobe
        }
        _ => return None,
    })
}

/// Where each program that will load attaches, e.g. `tracepoint
/// syscalls:sys_enter_openat (open_enter_openat)`: what `--dry-run` and `-v` report.
/// A program whose section names no target (`SEC("fentry")`, attached by
/// its tool) gets the one `target` gives it by name, if any.
pub fn chosen_hooks(obj: &OpenObject, target: impl Fn(&str) -> Option<String>) -> Vec<String> {
    obj.progs()
        .filter(|p| p.autoload())
        .map(|p| {
            let section = p.section().to_string_lossy();
            let hook = match section.split_once('/') {
                Some((kind, target)) => format!("{kind} {}", target.replace('/', ":")),
                None => match target(&p.name().to_string_lossy()) {
                    Some(t) => format!("{section} {t}"),
                    None => section.into_owned(),
                },
            };
            format!("{hook} ({})", p.name().to_string_lossy())
        })
        .collect()
}

/// Turns off autoload for classic tracepoint programs whose tracepoint this
/// kernel lacks (e.g. `open` and `creat` on arm64); fails if the object
/// has such programs and none is left.
pub fn autoload_existing_tracepoints(obj: &mut OpenObject) -> Result<()> {
    let (mut seen, mut kept) = (0, 0);
    for mut prog in obj.progs_mut() {
        let section = prog.section().to_string_lossy().into_owned();
        if hook_of_section(&section) != Some(Hook::Tracepoint) || !prog.autoload() {
            continue;
        }
        let mut parts = section.splitn(3, '/').skip(1);
        let (Some(category), Some(name)) = (parts.next(), parts.next()) else {
            continue;
        };
        seen += 1;
        if tracepoint_exists(category, name) {
            kept += 1;
        } else {
            prog.set_autoload(false);
        }
    }
    if seen > 0 && kept == 0 {
        crate::kernel::tracefs::mount_point().context("finding tracepoints")?;
        anyhow::bail!("none of this tool's tracepoints exists on this kernel");
    }
    Ok(())
}

/// True if the kernel supports maps of `map_type`; `map:<number>` in
/// BPFTOOLS_DISABLE pretends it does not, to test the fallback.
pub fn map_type(map_type: libbpf_sys::bpf_map_type) -> bool {
    if disabled(&format!("map:{map_type}")) {
        return false;
    }
    // SAFETY: a pure query; the options pointer may be null.
    unsafe { libbpf_sys::libbpf_probe_bpf_map_type(map_type, std::ptr::null()) == 1 }
}

/// True if programs of `prog_type` may call BPF helper `helper` here.
pub fn helper(prog_type: libbpf_sys::bpf_prog_type, helper: libbpf_sys::bpf_func_id) -> bool {
    // SAFETY: a pure query; the options pointer may be null.
    unsafe { libbpf_sys::libbpf_probe_bpf_helper(prog_type, helper, std::ptr::null()) == 1 }
}

/// True if BPF memory is charged to memory cgroups (5.11+), not to the
/// locked-memory limit: probed as libbpf does, by a helper of the same
/// release (bpf_ktime_get_coarse_ns).
pub fn memcg_accounting() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        helper(
            libbpf_sys::BPF_PROG_TYPE_SOCKET_FILTER,
            libbpf_sys::BPF_FUNC_ktime_get_coarse_ns,
        )
    })
}

/// True if kprobe and uprobe programs can read their attach cookie
/// (bpf_get_attach_cookie, 5.15+): one program serves many probes.
pub fn attach_cookie() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        !disabled("attach_cookie")
            && helper(
                libbpf_sys::BPF_PROG_TYPE_KPROBE,
                libbpf_sys::BPF_FUNC_get_attach_cookie,
            )
    })
}

/// True if uprobe programs can be sleepable (6.1+ as Debian builds it):
/// they may then fault the traced process's pages in (bpf_copy_from_user).
/// `multi`: as uprobe_multi programs too (6.6+).
pub fn sleepable_uprobes(multi: bool) -> bool {
    static HAS: [OnceLock<bool>; 2] = [OnceLock::new(), OnceLock::new()];
    *HAS[usize::from(multi)].get_or_init(|| probe_sleepable_uprobes(multi))
}

fn probe_sleepable_uprobes(multi: bool) -> bool {
    if disabled("sleepable_uprobe") {
        return false;
    }
    let attach = if multi {
        libbpf_sys::BPF_TRACE_UPROBE_MULTI
    } else {
        0
    };
    trivial_program_flagged(
        libbpf_sys::BPF_PROG_TYPE_KPROBE,
        attach,
        0,
        libbpf_sys::BPF_F_SLEEPABLE,
    )
    .is_some()
}

/// True if many kprobes attach as one link (kprobe_multi, 5.18+, with
/// fprobe configured: Debian's 6.1 loads such a program but refuses the
/// link): an empty program is attached to vfs_read so for an instant.
pub fn kprobe_multi() -> bool {
    features().kprobe && !disabled("kprobe_multi") && multi_link_attaches()
}

/// The kernel's kprobe PMU exists (kprobes are built in), whether or not
/// they may be attached here.
pub fn kprobe_pmu() -> bool {
    Path::new("/sys/bus/event_source/devices/kprobe/type").exists()
}

/// kprobe_multi()'s probe, on the kernel alone.
fn multi_link_attaches() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        if !kprobe_pmu() {
            return false;
        }
        let Some(prog) = trivial_program(
            libbpf_sys::BPF_PROG_TYPE_KPROBE,
            libbpf_sys::BPF_TRACE_KPROBE_MULTI,
            0,
        ) else {
            return false;
        };
        let mut syms = [c"vfs_read".as_ptr()];
        let mut opts = libbpf_sys::bpf_link_create_opts {
            sz: std::mem::size_of::<libbpf_sys::bpf_link_create_opts>() as _,
            ..Default::default()
        };
        opts.__bindgen_anon_1.kprobe_multi =
            libbpf_sys::bpf_link_create_opts__bindgen_ty_1__bindgen_ty_2 {
                cnt: 1,
                syms: syms.as_mut_ptr(),
                ..Default::default()
            };
        // SAFETY: the program fd is open; opts and the names it points to
        // outlive the call.
        let fd = unsafe {
            libbpf_sys::bpf_link_create(
                prog.as_raw_fd(),
                0,
                libbpf_sys::BPF_TRACE_KPROBE_MULTI,
                &opts,
            )
        };
        if fd < 0 {
            return false;
        }
        // SAFETY: a link fd we own: closing it detaches the probe.
        drop(unsafe { OwnedFd::from_raw_fd(fd) });
        true
    })
}

/// True if tracepoint programs can read a task's saved user registers
/// (bpf_task_pt_regs, 5.15+): syscall arguments are then at hand at exit.
pub fn task_pt_regs() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        !disabled("task_pt_regs")
            && helper(
                libbpf_sys::BPF_PROG_TYPE_TRACEPOINT,
                libbpf_sys::BPF_FUNC_task_pt_regs,
            )
    })
}

/// The kernel's build configuration, where distributions keep it
/// (/boot/config-RELEASE, else /proc/config.gz), read once; None where
/// neither is there.
fn kernel_config() -> Option<&'static str> {
    static CONFIG: OnceLock<Option<String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
            std::fs::read_to_string(format!("/boot/config-{}", release.trim()))
                .ok()
                .or_else(|| {
                    let gz = std::fs::File::open("/proc/config.gz").ok()?;
                    let mut text = String::new();
                    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(gz), &mut text)
                        .ok()?;
                    Some(text)
                })
        })
        .as_deref()
}

/// The value of option `name` (`CONFIG_HZ`) in the kernel's configuration:
/// None where it is not set or the configuration is not there.
pub fn kernel_config_value(name: &str) -> Option<&'static str> {
    config_value(kernel_config()?, name)
}

/// The value of option `name` in a configuration's text.
fn config_value<'a>(config: &'a str, name: &str) -> Option<&'a str> {
    config
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
        .map(str::trim)
}

/// The length of the kernel's tick (1/CONFIG_HZ s) in nanoseconds, from its
/// configuration.
pub fn tick_ns() -> Option<u64> {
    let hz: u64 = kernel_config_value("CONFIG_HZ")?.parse().ok()?;
    (hz > 0).then(|| 1_000_000_000 / hz)
}

/// True if tracing programs can have the current task as a BTF pointer
/// (bpf_get_current_task_btf, 5.11+), to follow its pointers with direct
/// loads. Probed with a raw_tp program, which has the same tracing helpers:
/// libbpf cannot probe a helper for tracing (fentry, tp_btf) programs,
/// which need an attach target, and says no.
pub fn current_task_btf() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        !disabled("current_task_btf")
            && helper(
                libbpf_sys::BPF_PROG_TYPE_RAW_TRACEPOINT,
                libbpf_sys::BPF_FUNC_get_current_task_btf,
            )
    })
}

/// True if tracing programs can call bpf_find_vma (5.17+): the mapping,
/// and its file, at a user address.
pub fn find_vma() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        !disabled("find_vma")
            && current_task_btf()
            && helper(
                libbpf_sys::BPF_PROG_TYPE_TRACEPOINT,
                libbpf_sys::BPF_FUNC_find_vma,
            )
    })
}

/// True if the kernel has the bpf_rdonly_cast kfunc (6.2+) and tracing
/// programs the current task as a BTF pointer: files.bpf.h then reads a
/// descriptor's file with direct loads.
pub fn rdonly_cast() -> bool {
    !disabled("rdonly_cast")
        && current_task_btf()
        && vmlinux_type("bpf_rdonly_cast", libbpf_sys::BTF_KIND_FUNC).is_some()
}

/// True if tracing programs can keep state in task storage (5.11+).
pub fn task_storage() -> bool {
    !disabled("task_storage") && map_type(libbpf_sys::BPF_MAP_TYPE_TASK_STORAGE)
}

/// The hook kind [`task_state_variant`] chooses here: tp_btf where task
/// storage exists (5.11+), else raw_tp.
pub fn task_state_hook() -> Option<Hook> {
    pick(if task_storage() {
        &[Hook::TpBtf, Hook::RawTp]
    } else {
        &[Hook::RawTp]
    })
}

/// Hook variants are data: a variant is the skeleton's typed handles of its
/// programs (`&mut open.progs.rq_btf_switch`), so a renamed program fails
/// the build, not a run. Loads `progs` only when `on` (never turns a
/// program back on: conditions combine).
pub fn load_when<'a, 'obj: 'a>(
    on: bool,
    progs: impl IntoIterator<Item = &'a mut OpenProgramMut<'obj>>,
) {
    if !on {
        for p in progs {
            p.set_autoload(false);
        }
    }
}

/// The few system calls a tool traces (callset.bpf.h): at their own
/// tracepoints where the kernel has them (true), which cost the other
/// calls nothing; else at tp_btf sys_enter/sys_exit, whose programs match
/// the calls' numbers, written here into the table (`nr_calls`) in the
/// tool's order.
pub fn own_call_tracepoints(
    nr_calls: &mut [libc::c_long],
    numbers: impl IntoIterator<Item = libc::c_long>,
) -> bool {
    let own = features().has(Hook::Tracepoint);
    if !own {
        for (slot, nr) in nr_calls.iter_mut().zip(numbers) {
            *slot = nr;
        }
    }
    own
}

/// A tracepoint's program written once per hook form: loads the one
/// `hook` names.
pub fn hook_variant<'a, 'obj: 'a>(
    hook: Hook,
    btf: &'a mut OpenProgramMut<'obj>,
    raw: &'a mut OpenProgramMut<'obj>,
    classic: &'a mut OpenProgramMut<'obj>,
) {
    load_when(hook == Hook::TpBtf, [btf]);
    load_when(hook == Hook::RawTp, [raw]);
    load_when(hook == Hook::Tracepoint, [classic]);
}

/// A tracepoint pair (an entry and its exit) written once per hook form:
/// loads the form `hook` names, and with `entries_only` its entry alone
/// (softirqs' and hardirqs' -C).
pub fn entry_exit_variant<'a, 'obj: 'a>(
    hook: Hook,
    btf: [&'a mut OpenProgramMut<'obj>; 2],
    raw: [&'a mut OpenProgramMut<'obj>; 2],
    classic: [&'a mut OpenProgramMut<'obj>; 2],
    entries_only: bool,
) {
    for (form, [entry, exit]) in [
        (Hook::TpBtf, btf),
        (Hook::RawTp, raw),
        (Hook::Tracepoint, classic),
    ] {
        load_when(hook == form, [entry]);
        load_when(hook == form && !entries_only, [exit]);
    }
}

/// For programs on the system calls' own tracepoints, when `on`: loads the
/// ones that read a call's arguments from the task's registers at its exit
/// where the kernel has bpf_task_pt_regs (5.15+), else the pairs that keep
/// them at entry (callstash.bpf.h). Returns whether the registers are
/// read.
pub fn syscall_args_variant<'a, 'obj: 'a>(
    on: bool,
    regs: impl IntoIterator<Item = &'a mut OpenProgramMut<'obj>>,
    entry_exit: impl IntoIterator<Item = &'a mut OpenProgramMut<'obj>>,
) -> bool {
    let from_regs = on && task_pt_regs();
    load_when(from_regs, regs);
    load_when(on && !from_regs, entry_exit);
    from_regs
}

/// Creates `maps` only when `on`: maps only the programs of an unchosen
/// variant use.
pub fn create_when<'a, 'obj: 'a>(
    on: bool,
    maps: impl IntoIterator<Item = &'a mut OpenMapMut<'obj>>,
) -> Result<()> {
    if !on {
        for m in maps {
            m.set_autocreate(false)?;
        }
    }
    Ok(())
}

/// A tool whose tp_btf programs keep per-task state in task local storage
/// maps, and whose raw_tp twins (untrusted task pointers) keep it in hash
/// maps by tid.
pub struct TaskStateVariants<'a, 'obj> {
    pub btf: Vec<&'a mut OpenProgramMut<'obj>>,
    pub raw: Vec<&'a mut OpenProgramMut<'obj>>,
    pub storage_maps: Vec<&'a mut OpenMapMut<'obj>>,
    pub hash_maps: Vec<&'a mut OpenMapMut<'obj>>,
}

/// Picks tp_btf where task storage exists, else raw_tp
/// ([`task_state_hook`]), and turns off the other variant's programs and
/// maps.
pub fn task_state_variant(v: TaskStateVariants) -> Result<Hook> {
    let Some(kind) = task_state_hook() else {
        anyhow::bail!("this kernel offers neither tp_btf nor raw_tp programs");
    };
    let btf = kind == Hook::TpBtf;
    load_when(btf, v.btf);
    create_when(btf, v.storage_maps)?;
    load_when(!btf, v.raw);
    create_when(!btf, v.hash_maps)?;
    Ok(kind)
}

/// [`task_state_variant`] for a tool whose every tp_btf program has a
/// raw_tp twin, each pair keeping its task's state in maps.bpf.h.s
/// `start_storage` or `start` (TASK_START_MAPS): the programs known by
/// their sections, not listed.
pub fn task_state_sections(open: &mut OpenObject) -> Result<Hook> {
    let Some(kind) = task_state_hook() else {
        anyhow::bail!("this kernel offers neither tp_btf nor raw_tp programs");
    };
    let btf = kind == Hook::TpBtf;
    tp_sections(open, kind);
    for mut map in open.maps_mut() {
        let name = map.name().to_string_lossy();
        if (name == "start_storage" && !btf) || (name == "start" && btf) {
            map.set_autocreate(false)?;
        }
    }
    Ok(kind)
}

/// Loads the tool's tp_btf programs where `hook` is TpBtf, its raw_tp ones
/// where it is RawTp (each known by its section); others as they are.
pub fn tp_sections(open: &mut OpenObject, hook: Hook) {
    for mut prog in open.progs_mut() {
        let of = hook_of_section(&prog.section().to_string_lossy());
        if matches!(of, Some(Hook::TpBtf | Hook::RawTp)) && of != Some(hook) {
            prog.set_autoload(false);
        }
    }
}

/// The hook for the tool's tp_btf/raw_tp programs at tracepoint
/// `category:name`, the others switched off ([`tp_sections`]); an error
/// naming the tracepoint and the Linux release that added it where BTF
/// does not describe it.
pub fn btf_tracepoint_sections(
    open: &mut OpenObject,
    category: &str,
    name: &str,
    since: &str,
) -> Result<Hook> {
    let candidates = if btf_tracepoint_exists(name) {
        vec![Hook::TpBtf, Hook::RawTp]
    } else {
        Vec::new()
    };
    let Some(hook) = pick(&candidates) else {
        anyhow::bail!(
            "this kernel has no {category}:{name} tracepoint that BPF can attach to \
             (Linux {since} added it)"
        );
    };
    tp_sections(open, hook);
    Ok(hook)
}

/// The best way this kernel offers to attach to tracepoint
/// `category:name`: tp_btf, raw_tp (where its BTF describes it), or the
/// classic tracepoint (where tracefs lists it); an error naming the
/// tracepoint and the Linux release that added it where there is none.
pub fn tracepoint_hook(category: &str, name: &str, since: &str) -> Result<Hook> {
    let mut candidates = Vec::new();
    if btf_tracepoint_exists(name) {
        candidates.extend([Hook::TpBtf, Hook::RawTp]);
    }
    if tracepoint_exists(category, name) {
        candidates.push(Hook::Tracepoint);
    }
    match pick(&candidates) {
        Some(hook) => Ok(hook),
        None => anyhow::bail!(
            "this kernel has no {category}:{name} tracepoint that BPF can attach to \
             (Linux {since} added it)"
        ),
    }
}

/// The most preferred hook of `candidates` that this kernel offers.
pub fn pick(candidates: &[Hook]) -> Option<Hook> {
    let f = features();
    // In order of preference, asking no more than needed (asking for
    // classic tracepoints is a look in tracefs).
    let mut sorted = candidates.to_vec();
    sorted.sort();
    sorted.into_iter().find(|h| f.has(*h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tracepoints_struct_arguments_are_named() {
        // sched_switch(bool preempt, struct task_struct *prev, ...).
        assert_eq!(
            btf_tracepoint_arg_struct("sched_switch", 1).as_deref(),
            Some("task_struct")
        );
        assert_eq!(btf_tracepoint_arg_struct("sched_switch", 0), None);
        assert_eq!(btf_tracepoint_arg_struct("sched_switch", 99), None);
        assert_eq!(btf_tracepoint_arg_struct("no_such_tracepoint", 0), None);
    }

    #[test]
    fn a_compilers_copy_is_found_by_its_suffix() {
        let syms = [
            "lookup_fastpath",
            "lookup_fast.cold",
            "lookup_fast.isra.0",
            "lookup_fast.constprop.0",
            "d_lookup",
        ];
        let find = |name| compiler_copy(syms.iter().copied(), name);
        assert_eq!(find("lookup_fast"), Some("lookup_fast.constprop.0"));
        assert_eq!(find("d_lookup"), None);
        assert_eq!(find("lookup"), None);
    }

    #[test]
    fn config_values_are_read_from_the_configuration() {
        let config =
            "# CONFIG_HZ_100 is not set\nCONFIG_HZ_250=y\nCONFIG_HZ=250\nCONFIG_NO_HZ_FULL=y\n";
        assert_eq!(config_value(config, "CONFIG_HZ"), Some("250"));
        assert_eq!(config_value(config, "CONFIG_NO_HZ_FULL"), Some("y"));
        assert_eq!(config_value(config, "CONFIG_HZ_100"), None);
        assert_eq!(config_value(config, "CONFIG_FAIR_GROUP_SCHED"), None);
    }

    #[test]
    fn tracepoint_arguments_are_counted_from_btf() {
        // sched_switch: (preempt, prev, next[, prev_state since 5.18]).
        let n = btf_tracepoint_args("sched_switch").expect("BTF for sched_switch");
        assert!((3..=4).contains(&n), "{n}");
        assert_eq!(btf_tracepoint_args("no_such_tracepoint_here"), None);
        // vfs_unlink: (dir, dentry, delegated), with a namespace first since 5.12.
        let n = function_args("vfs_unlink").expect("BTF for vfs_unlink");
        assert!((3..=4).contains(&n), "{n}");
        assert_eq!(function_args("no_such_function_here"), None);
    }

    #[test]
    fn hook_kinds_follow_section_prefixes() {
        assert_eq!(hook_of_section("tp_btf/sched_switch"), Some(Hook::TpBtf));
        assert_eq!(
            hook_of_section("tracepoint/syscalls/sys_enter_openat"),
            Some(Hook::Tracepoint)
        );
        assert_eq!(hook_of_section("raw_tp/sched_switch"), Some(Hook::RawTp));
        assert_eq!(hook_of_section("fentry/vfs_read"), Some(Hook::Fentry));
        assert_eq!(hook_of_section("uretprobe"), Some(Hook::Uprobe));
        assert_eq!(hook_of_section("license"), None);
    }

    #[test]
    fn preference_order_is_fentry_first() {
        assert!(Hook::Fentry < Hook::TpBtf);
        assert!(Hook::TpBtf < Hook::RawTp);
        assert!(Hook::RawTp < Hook::Tracepoint);
        assert!(Hook::Tracepoint < Hook::Kprobe);
    }
}
