//! bpftools: every tool in one binary, run as the tool its name says
//! (`/usr/sbin/biolatency` is a link to it), with or without a program
//! prefix (`bpf-biolatency`).

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// A tool's `main`.
type Main = fn() -> ExitCode;

include!(concat!(env!("OUT_DIR"), "/tools.rs"));

fn main() -> ExitCode {
    let argv0 = std::env::args_os().next().unwrap_or_default();
    let name = Path::new(&argv0)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match tool_for(&name) {
        Some(run) => run(),
        None => {
            let names: Vec<&str> = TOOLS.iter().map(|(n, _)| *n).collect();
            let _ = writeln!(
                std::io::stderr(),
                "bpftools: run me as one of the tools (a link named {}), not as {name}",
                names.join(", ")
            );
            ExitCode::from(2)
        }
    }
}

/// The tool a program name names: `biolatency`, or with a prefix ending in
/// `-` (`bpf-biolatency`, Fedora's naming).
fn tool_for(name: &str) -> Option<Main> {
    TOOLS
        .iter()
        .find(|(tool, _)| {
            name == *tool
                || name
                    .strip_suffix(tool)
                    .is_some_and(|prefix| prefix.ends_with('-'))
        })
        .map(|(_, run)| *run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_and_without_a_prefix_find_their_tool() {
        assert!(tool_for("biolatency").is_some());
        assert!(tool_for("bpf-biolatency").is_some());
        assert!(tool_for("xbiolatency").is_none());
        assert!(tool_for("bpftools").is_none());
        assert_eq!(TOOLS.len(), 8);
    }
}
