//! The privileges a tool needs: root, or CAP_BPF and CAP_PERFMON with
//! those its chosen programs need here; checked up front, named when
//! lacking (exit status 77), listed in its dry run for `bpftools doctor`.

use std::io;

use libbpf_rs::libbpf_sys;

/// A privilege this process lacks, named in its message.
#[derive(Debug)]
pub struct PrivilegeError(pub String);

impl std::fmt::Display for PrivilegeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PrivilegeError {}

/// Capability bits (linux/capability.h).
const CAP_SYS_PTRACE: u32 = 19;
const CAP_SYS_ADMIN: u32 = 21;
const CAP_SYS_RESOURCE: u32 = 24;
const CAP_SYSLOG: u32 = 34;
const CAP_PERFMON: u32 = 38;
const CAP_BPF: u32 = 39;

/// This process's effective capabilities (a bit per capability).
pub fn effective_capabilities() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .unwrap_or(0)
}

/// Fails, naming what is lacking, unless this process may load and attach
/// tracing programs: root, or CAP_BPF with CAP_PERFMON (or CAP_SYS_ADMIN).
/// Checked once, up front, so that a missing privilege is not mistaken for
/// a missing kernel feature later.
pub fn check_privilege() -> anyhow::Result<()> {
    let eff = effective_capabilities();
    let has = |cap: u32| eff & (1u64 << cap) != 0;
    if has(CAP_SYS_ADMIN) || (has(CAP_BPF) && has(CAP_PERFMON)) {
        return check_memlock(has(CAP_SYS_RESOURCE));
    }
    let lacking: Vec<&str> = [(CAP_BPF, "CAP_BPF"), (CAP_PERFMON, "CAP_PERFMON")]
        .into_iter()
        .filter(|(cap, _)| !has(*cap))
        .map(|(_, name)| name)
        .collect();
    let tool = crate::output::tool_name();
    Err(PrivilegeError(format!(
        "{tool} lacks {}: it needs root, or CAP_BPF and CAP_PERFMON (e.g. `sudo setcap \
         cap_bpf,cap_perfmon,cap_dac_read_search,cap_syslog+ep {}`), to load tracing programs",
        lacking.join(" and "),
        std::env::current_exe().map_or_else(|_| tool.clone(), |p| p.display().to_string())
    ))
    .into())
}

/// A capability a tool may need besides CAP_BPF and CAP_PERFMON, and what
/// for (README's "Running without root", doctor's list).
pub const CAPABILITY_USES: &[(&str, &str)] = &[
    (
        "CAP_DAC_READ_SEARCH",
        "tracefs: classic tracepoints, kernel function lists",
    ),
    ("CAP_SYSLOG", "kernel function names in stacks"),
    (
        "CAP_SYS_PTRACE",
        "other users' processes: their maps and user stacks",
    ),
    (
        "CAP_SYS_RESOURCE",
        "maps charged to the locked-memory limit (no memcg accounting)",
    ),
];

/// The capabilities a tool needs here with the programs and maps it
/// chose: CAP_BPF and CAP_PERFMON; CAP_DAC_READ_SEARCH for tracefs
/// (classic tracepoints, kprobes' function lists, or a look there while
/// choosing); CAP_SYSLOG and CAP_SYS_PTRACE for stacks (kernel symbols,
/// other users' maps); CAP_SYS_PTRACE for uprobes (other users'
/// processes); CAP_SYS_RESOURCE where BPF memory is charged to
/// RLIMIT_MEMLOCK.
pub fn needed_capabilities(obj: &libbpf_rs::OpenObject) -> Vec<&'static str> {
    use crate::kernel::probe::{self, Hook};
    let progs = || obj.progs().filter(|p| p.autoload());
    let hooks: Vec<Hook> = progs()
        .filter_map(|p| probe::hook_of_section(&p.section().to_string_lossy()))
        .collect();
    // A program that takes stacks calls bpf_get_stackid or bpf_get_stack.
    let helpers = [
        libbpf_sys::BPF_FUNC_get_stackid,
        libbpf_sys::BPF_FUNC_get_stack,
    ];
    let stacks = progs().any(|p| {
        p.insns().iter().any(|i| {
            i.code == (libbpf_sys::BPF_JMP | libbpf_sys::BPF_CALL) as u8
                && i.src_reg() == 0
                && helpers.contains(&(i.imm as u32))
        })
    });
    let mut caps = vec!["CAP_BPF", "CAP_PERFMON"];
    if crate::kernel::tracefs::looked()
        || hooks
            .iter()
            .any(|h| matches!(h, Hook::Tracepoint | Hook::Kprobe))
    {
        caps.push("CAP_DAC_READ_SEARCH");
    }
    if stacks {
        caps.push("CAP_SYSLOG");
    }
    if stacks || hooks.contains(&Hook::Uprobe) {
        caps.push("CAP_SYS_PTRACE");
    }
    if !probe::memcg_accounting() {
        caps.push("CAP_SYS_RESOURCE");
    }
    caps
}

/// What this process will not see for lack of a capability the tool's
/// programs would use (`needed`): kernel function names (CAP_SYSLOG, when
/// /proc/kallsyms hides its addresses), other users' processes
/// (CAP_SYS_PTRACE). The tool runs without them, saying so.
pub fn short_of(needed: &[&str]) -> Vec<String> {
    let eff = effective_capabilities();
    let lacks = |cap: u32, name: &str| needed.contains(&name) && eff & (1u64 << cap) == 0;
    let tool = crate::output::tool_name();
    let mut short = Vec::new();
    if lacks(CAP_SYSLOG, "CAP_SYSLOG") && kallsyms_hidden() {
        short.push(format!(
            "kernel frames are [unknown]: {tool} lacks CAP_SYSLOG, without which /proc/kallsyms \
             hides the kernel's addresses"
        ));
    }
    if lacks(CAP_SYS_PTRACE, "CAP_SYS_PTRACE") {
        short.push(format!(
            "other users' processes are out of reach (their maps, user stacks and symbols): \
             {tool} lacks CAP_SYS_PTRACE"
        ));
    }
    short
}

/// True when /proc/kallsyms shows this process no addresses (kptr_restrict).
fn kallsyms_hidden() -> bool {
    use std::io::BufRead;
    let Ok(file) = std::fs::File::open("/proc/kallsyms") else {
        return true;
    };
    let first = io::BufReader::new(file).lines().next();
    first
        .and_then(Result::ok)
        .and_then(|l| Some(u64::from_str_radix(l.split_whitespace().next()?, 16).ok()? == 0))
        .unwrap_or(true)
}

/// Before memory cgroups took BPF memory (5.11), maps are charged to the
/// locked-memory limit, which libbpf raises, as only CAP_SYS_RESOURCE may;
/// the kernel's refusal would be "Operation not permitted" alone.
fn check_memlock(may_raise: bool) -> anyhow::Result<()> {
    if may_raise || crate::kernel::probe::memcg_accounting() {
        return Ok(());
    }
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct we own.
    let unlimited = unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut limit) } == 0
        && limit.rlim_cur == libc::RLIM_INFINITY;
    if unlimited {
        return Ok(());
    }
    let tool = crate::output::tool_name();
    Err(PrivilegeError(format!(
        "{tool} lacks CAP_SYS_RESOURCE: this kernel charges BPF maps to the locked-memory \
         limit ({} KiB here), which only it may raise; grant it with the others, or run \
         with an unlimited limit (ulimit -l unlimited, LimitMEMLOCK=infinity)",
        limit.rlim_cur / 1024
    ))
    .into())
}
