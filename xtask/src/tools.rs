//! Every tool's description (`tools/<tool>/src/info.rs`), compiled in by
//! build.rs: what the bench, the VM suite, the bundle and the README checks
//! iterate over.

use anyhow::{bail, Result};
use registry::ToolInfo;

include!(concat!(env!("OUT_DIR"), "/registry.rs"));

/// Every tool's name, sorted.
pub fn names() -> Vec<String> {
    TOOLS.iter().map(|t| t.name.to_string()).collect()
}

/// The tool of that name, or an error listing the tools.
pub fn find(name: &str) -> Result<&'static ToolInfo> {
    match TOOLS.iter().find(|t| t.name == name) {
        Some(t) => Ok(t),
        None => bail!("no tool named '{name}'; tools: {}", names().join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_consistent() {
        registry::check(TOOLS).unwrap();
    }

    /// Each of a tool's vm_tests filters selects at least one of its tests.
    #[test]
    fn vm_test_filters_name_real_tests() {
        for t in TOOLS {
            let dir = crate::root_dir().join("tools").join(t.name).join("tests");
            let mut fns = String::new();
            for f in std::fs::read_dir(&dir).unwrap() {
                fns += &std::fs::read_to_string(f.unwrap().path()).unwrap_or_default();
            }
            for filter in t.vm_tests {
                assert!(
                    fns.lines()
                        .any(|l| l.trim_start().starts_with("fn ") && l.contains(filter)),
                    "{}'s vm_tests filter '{filter}' matches no test in {}",
                    t.name,
                    dir.display()
                );
            }
        }
    }

    /// A folder with a Cargo.toml is a tool only with its description.
    #[test]
    fn every_tool_folder_has_a_description() {
        let dir = crate::root_dir().join("tools");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.join("Cargo.toml").is_file() {
                assert!(
                    path.join("src/info.rs").is_file(),
                    "{} has no src/info.rs (pub const INFO: registry::ToolInfo)",
                    path.display()
                );
            }
        }
    }
}
