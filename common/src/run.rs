//! The `main` wrapper: error reporting, exit codes, signals, libbpf's log.

use std::io;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// True once SIGINT or SIGTERM has arrived: the tool should print what it
/// has and exit 0.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Runs a tool: installs the signal handlers, calls `body`, and turns its
/// result into an exit code. Usage errors never get here (clap exits 2).
/// A closed stdout (`| head`) ends quietly with 0; any other error prints
/// its cause chain, a hint where one helps, and exits 1.
pub fn main(body: impl FnOnce() -> anyhow::Result<()>) -> ExitCode {
    install_signal_handlers();
    match body() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let tool = tool_name();
            eprintln!("{tool}: error: {e:#}");
            if let Some(hint) = hint(&e) {
                eprintln!("{tool}: hint: {hint}");
            }
            ExitCode::FAILURE
        }
    }
}

fn install_signal_handlers() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is
        // async-signal-safe; no SA_RESTART, so a blocking poll returns EINTR
        // and the loop sees the flag at once.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_stop_signal as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// The tool's name, as the user invoked it.
pub fn tool_name() -> String {
    std::env::args_os()
        .next()
        .and_then(|a| {
            Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "tool".into())
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

fn hint(e: &anyhow::Error) -> Option<String> {
    let denied = e.chain().any(|c| {
        c.downcast_ref::<libbpf_rs::Error>()
            .is_some_and(|e| e.kind() == libbpf_rs::ErrorKind::PermissionDenied)
            || c.downcast_ref::<io::Error>()
                .is_some_and(|e| e.kind() == io::ErrorKind::PermissionDenied)
    });
    if !Path::new("/sys/kernel/btf/vmlinux").exists() {
        return Some(
            "this kernel exposes no BTF (/sys/kernel/btf/vmlinux is missing); \
             the tools need a kernel built with CONFIG_DEBUG_INFO_BTF=y"
                .into(),
        );
    }
    if denied {
        // SAFETY: geteuid has no preconditions and cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        return Some(if root {
            "the kernel refused a BPF program although running as root: the \
             verifier rejected it, or a lockdown mode, seccomp or an LSM forbids \
             BPF here; run with -v to see libbpf's log and the verifier's reason"
                .into()
        } else {
            "run as root, or grant CAP_BPF and CAP_PERFMON \
             (e.g. `sudo setcap cap_bpf,cap_perfmon+ep <tool>`)"
                .into()
        });
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
        eprint!("{msg}");
    }
    if verbose {
        libbpf_rs::set_print(Some((PrintLevel::Debug, to_stderr)));
    } else {
        libbpf_rs::set_print(None);
    }
}
