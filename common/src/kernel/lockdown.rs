//! The kernel's lockdown mode (the lockdown LSM), read from securityfs,
//! which the tools mount where a fresh machine has not (as tracefs). Under
//! `integrity` the tools run as before (it forbids only BPF writes to user
//! memory, which they never make). Under `confidentiality` BPF programs may
//! not read kernel memory (`bpf_probe_read_kernel`: most tools' programs are
//! refused as they load) and kernels before kprobe_multi links refuse
//! kprobes; what does not read kernel memory still runs.

use std::sync::OnceLock;

/// A lockdown mode, as securityfs names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    None,
    Integrity,
    Confidentiality,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::None => "none",
            Mode::Integrity => "integrity",
            Mode::Confidentiality => "confidentiality",
        }
    }

    /// The mode in brackets of securityfs' `none integrity [confidentiality]`.
    fn parse(text: &str) -> Option<Mode> {
        let chosen = text.split_once('[')?.1.split_once(']')?.0;
        [Mode::None, Mode::Integrity, Mode::Confidentiality]
            .into_iter()
            .find(|m| m.name() == chosen)
    }
}

/// This kernel's lockdown mode (read once), or why it is not known: no
/// lockdown module in this kernel, or securityfs neither mounted nor
/// mountable here.
pub fn mode() -> Result<Mode, &'static str> {
    static MODE: OnceLock<Result<Mode, String>> = OnceLock::new();
    MODE.get_or_init(|| {
        let dir = match super::cgroups::mount_of("securityfs") {
            Some(dir) => dir,
            None => {
                let target = "/sys/kernel/security";
                super::mount_pseudo(c"securityfs", c"/sys/kernel/security").map_err(|e| {
                    format!("securityfs is not mounted and mounting it on {target} failed: {e}")
                })?;
                target.into()
            }
        };
        match std::fs::read_to_string(dir.join("lockdown")) {
            Ok(text) => Mode::parse(&text).ok_or_else(|| format!("unreadable: {}", text.trim())),
            Err(_) => Err("no lockdown module in this kernel".into()),
        }
    })
    .as_ref()
    .map(|m| *m)
    .map_err(String::as_str)
}

/// True when lockdown forbids BPF programs to read kernel memory.
pub fn confidential() -> bool {
    mode() == Ok(Mode::Confidentiality)
}

/// Why `tool`'s failure to load or attach is the lockdown's doing (asked
/// when it is in confidentiality mode): one line for the tool's error.
pub fn refusal(tool: &str) -> String {
    format!(
        "the kernel is locked down (confidentiality), which forbids what {tool} needs \
         here: BPF reads of kernel memory, or kprobes; the mode is set at boot \
         (lockdown= on the kernel command line, or Secure Boot) and cannot be lowered \
         while the kernel runs"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_bracketed_mode() {
        assert_eq!(
            Mode::parse("[none] integrity confidentiality\n"),
            Some(Mode::None)
        );
        assert_eq!(
            Mode::parse("none integrity [confidentiality]\n"),
            Some(Mode::Confidentiality)
        );
        assert_eq!(
            Mode::parse("none [integrity] confidentiality"),
            Some(Mode::Integrity)
        );
        assert_eq!(Mode::parse("none integrity"), None);
    }
}
