//! Errors to exit codes, hints, the privilege check and libbpf's log.

pub mod launch;
pub mod lifecycle;
pub mod process;
pub mod schedule;
pub mod tool;

use std::io;
use std::path::Path;
use std::process::ExitCode;

/// The name this program runs under (`ext4slower`, `bpf-biolatency`):
/// its argv[0]'s last component.
pub fn program_name() -> String {
    let argv0 = std::env::args_os().next().unwrap_or_default();
    Path::new(&argv0)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The exit status of a tool short of a privilege (sysexits' EX_NOPERM).
pub const EXIT_NO_PRIVILEGE: u8 = 77;

/// A privilege this process lacks, named in its message.
#[derive(Debug)]
pub struct PrivilegeError(pub String);

impl std::fmt::Display for PrivilegeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PrivilegeError {}

/// Turns a tool's result into its exit code: 0, the started command's own
/// status, 1 for an error (its cause chain and a hint where one helps),
/// 2 for a usage error, 77 for a missing privilege. A closed stdout
/// (`| head`) ends quietly with 0.
pub fn exit_code(result: anyhow::Result<u8>) -> ExitCode {
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        // Errors name what the user gave and what the system holds: shown
        // escaped, on one line.
        Err(e) if e.downcast_ref::<crate::usage::UsageError>().is_some() => {
            crate::note!("error: {}", crate::output::escape(e.to_string().as_bytes()));
            ExitCode::from(2)
        }
        Err(e) if e.downcast_ref::<PrivilegeError>().is_some() => {
            crate::note!("error: {}", crate::output::escape(e.to_string().as_bytes()));
            ExitCode::from(EXIT_NO_PRIVILEGE)
        }
        Err(e) => {
            crate::note!(
                "error: {}",
                crate::output::escape(format!("{e:#}").as_bytes())
            );
            if let Some(hint) = hint(&e) {
                crate::note!("hint: {hint}");
            }
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Capability bits (linux/capability.h).
const CAP_SYS_ADMIN: u32 = 21;
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
        return Ok(());
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

fn hint(e: &anyhow::Error) -> Option<String> {
    if !Path::new("/sys/kernel/btf/vmlinux").exists() {
        return Some(
            "this kernel exposes no BTF (/sys/kernel/btf/vmlinux is missing); \
             the tools need a kernel built with CONFIG_DEBUG_INFO_BTF=y"
                .into(),
        );
    }
    // Only libbpf's refusals point at the verifier or a security policy;
    // a file we could not read says so in its own message.
    let bpf_denied = e.chain().any(|c| {
        c.downcast_ref::<libbpf_rs::Error>()
            .is_some_and(|e| e.kind() == libbpf_rs::ErrorKind::PermissionDenied)
    });
    if bpf_denied {
        return Some(
            "the kernel refused a BPF program: the verifier rejected it, or a \
             lockdown mode, seccomp or an LSM forbids BPF here; run with -v to \
             see libbpf's log and the verifier's reason"
                .into(),
        );
    }
    if e.chain()
        .any(|c| c.downcast_ref::<libbpf_rs::Error>().is_some())
    {
        return Some("run with -v to see libbpf's log".into());
    }
    None
}

/// Routes libbpf's log to stderr with `-v`, and silences it otherwise:
/// failures still reach the user as errors.
pub fn libbpf_log(verbose: bool) {
    use libbpf_rs::PrintLevel;
    fn to_stderr(_: PrintLevel, msg: String) {
        use std::io::Write;
        let _ = io::stderr().lock().write_all(msg.as_bytes());
    }
    if verbose {
        libbpf_rs::set_print(Some((PrintLevel::Debug, to_stderr)));
    } else {
        libbpf_rs::set_print(None);
    }
}
