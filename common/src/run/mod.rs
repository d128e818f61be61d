//! Errors to exit codes, hints and libbpf's log; the privileges a tool
//! needs ([`privilege`]).

pub mod launch;
pub mod lifecycle;
mod privilege;
pub mod process;
pub mod schedule;
pub mod tool;

use std::io;
use std::path::Path;
use std::process::ExitCode;

pub use privilege::{
    check_privilege, effective_capabilities, needed_capabilities, short_of, PrivilegeError,
    CAPABILITY_USES,
};

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

/// Turns a tool's result into its exit code: 0, the started command's own
/// status, 1 for an error (its cause chain and a hint where one helps),
/// 2 for a usage error, 77 for a missing privilege (or a refusal of
/// the kernel's confidentiality lockdown, which no privilege lifts). A closed stdout
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
        // A failure whose cause is a privilege no option changes (the
        // lockdown, an unreadable tracefs): that first, then the error.
        Err(e) if privilege_cause(&e).is_some() => {
            crate::note!(
                "error: {}: {}",
                privilege_cause(&e).unwrap_or_default(),
                crate::output::escape(format!("{e:#}").as_bytes())
            );
            ExitCode::from(EXIT_NO_PRIVILEGE)
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

/// Why `e` is a privilege's doing rather than its own: under
/// confidentiality lockdown any refusal by libbpf is the lockdown's; a tool
/// that looked in tracefs and could not read it fails for that, whatever
/// its own error says (a tracepoint "missing").
fn privilege_cause(e: &anyhow::Error) -> Option<String> {
    if is_bpf_refusal(e) && crate::kernel::lockdown::confidential() {
        return Some(crate::kernel::lockdown::refusal(&crate::output::tool_name()));
    }
    if crate::kernel::tracefs::looked() {
        return crate::kernel::tracefs::lacking_privilege();
    }
    None
}

/// libbpf (loading or attaching) failed somewhere in `e`'s chain.
fn is_bpf_refusal(e: &anyhow::Error) -> bool {
    e.chain()
        .any(|c| c.downcast_ref::<libbpf_rs::Error>().is_some())
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
    if is_bpf_refusal(e) {
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
