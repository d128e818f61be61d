//! How long each tool's hook-variant tests take in a guest, and each
//! guest's own time (boot, dry runs, lockdown), as the last `--variants`
//! run measured them: the file `xtask/vmtest-times`, rewritten after such
//! a run and committed with README's matrix. `testers` reads it to give a
//! tool whose hooks several guests share to the guest whose chain ends
//! first, so that the chains end together.

use std::collections::HashMap;
use std::fs;
use std::path::PathBuf;

use anyhow::{Context, Result};

/// A tool the file does not list yet: about a tool's median.
const TOOL_DEFAULT: u64 = 25;
/// A guest the file does not list yet: a boot and the dry runs.
const GUEST_DEFAULT: u64 = 200;

fn path() -> PathBuf {
    crate::root_dir().join("xtask/vmtest-times")
}

#[derive(Debug, Default, Clone)]
pub struct Weights {
    /// Seconds of a tool's test binaries in one guest.
    tools: HashMap<String, u64>,
    /// Seconds of a guest besides its tools' tests, by kernel name.
    guests: HashMap<String, u64>,
}

impl Weights {
    /// The committed file's; none (the defaults) where it is missing.
    pub fn load() -> Self {
        fs::read_to_string(path())
            .map(|text| Self::parse(&text))
            .unwrap_or_default()
    }

    fn parse(text: &str) -> Self {
        let mut w = Self::default();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words[..] {
                ["guest", kernel, secs] => {
                    if let Ok(s) = secs.parse() {
                        w.guests.insert(kernel.to_string(), s);
                    }
                }
                [tool, secs] => {
                    if let Ok(s) = secs.parse() {
                        w.tools.insert(tool.to_string(), s);
                    }
                }
                _ => {}
            }
        }
        w
    }

    #[cfg(test)]
    pub fn new(tools: &[(&str, u64)], guests: &[(&str, u64)]) -> Self {
        let own = |pairs: &[(&str, u64)]| pairs.iter().map(|(k, s)| (k.to_string(), *s)).collect();
        Self {
            tools: own(tools),
            guests: own(guests),
        }
    }

    pub fn tool(&self, tool: &str) -> u64 {
        self.tools.get(tool).copied().unwrap_or(TOOL_DEFAULT)
    }

    pub fn guest(&self, kernel: &str) -> u64 {
        self.guests.get(kernel).copied().unwrap_or(GUEST_DEFAULT)
    }

    /// A guest's run: each "TOOL/BINARY took N s" of its tests summed by
    /// tool (the largest of the guests' where several tested it), and what
    /// the guest took besides them.
    pub fn record(&mut self, kernel: &str, took: u64, times: &[(String, u64)]) {
        let mut by_tool: HashMap<&str, u64> = HashMap::new();
        for (name, secs) in times {
            if let Some((tool, _)) = name.split_once('/') {
                *by_tool.entry(tool).or_default() += secs;
            }
        }
        let tests: u64 = by_tool.values().sum();
        self.guests
            .insert(kernel.to_string(), took.saturating_sub(tests));
        for (tool, secs) in by_tool {
            let w = self.tools.entry(tool.to_string()).or_default();
            *w = (*w).max(secs);
        }
    }

    /// A run's times in place of the ones before (the rest kept).
    pub fn merge(&mut self, run: Weights) {
        self.tools.extend(run.tools);
        self.guests.extend(run.guests);
    }

    pub fn save(&self) -> Result<()> {
        let mut text = String::from(
            "# Seconds in a TCG guest: each tool's hook-variant tests, and each guest's\n\
             # own (boot, dry runs, lockdown), as the last `cargo xtask vmtest --variants`\n\
             # measured them (rewritten by it). The VM suite reads them to share the tools\n\
             # that several guests could test among the guests' chains (vmtest::testers).\n",
        );
        let mut guests: Vec<_> = self.guests.iter().collect();
        guests.sort();
        for (k, s) in guests {
            text += &format!("guest {k} {s}\n");
        }
        let mut tools: Vec<_> = self.tools.iter().collect();
        tools.sort();
        for (t, s) in tools {
            text += &format!("{t} {s}\n");
        }
        fs::write(path(), text).with_context(|| format!("writing {}", path().display()))
    }
}

/// When the last of `queue`'s guests ends, `parallel` of them at a time,
/// each taken by the first free slot (as vmtest's threads take them), each
/// taking `load` seconds.
pub fn makespan(queue: &[&str], parallel: usize, load: &HashMap<&str, u64>) -> u64 {
    let mut slots = vec![0u64; parallel.clamp(1, queue.len().max(1))];
    for k in queue {
        let first_free = slots.iter_mut().min().expect("a slot");
        *first_free += load.get(k).copied().unwrap_or(0);
    }
    slots.into_iter().max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_round_trips_and_a_run_records_by_tool() {
        let w = Weights::parse("# note\nguest 5.10 150\nargdist 42\nbad line here\nx y\n");
        assert_eq!(w.guest("5.10"), 150);
        assert_eq!(w.guest("6.1"), GUEST_DEFAULT);
        assert_eq!(w.tool("argdist"), 42);
        assert_eq!(w.tool("new"), TOOL_DEFAULT);
        let mut w = Weights::default();
        let times = [
            ("profile/profile".to_string(), 60),
            ("profile/short_lived".to_string(), 2),
            ("doctor's dry runs".to_string(), 150),
        ];
        w.record("5.10", 400, &times);
        assert_eq!(w.tool("profile"), 62);
        // The dry runs are the guest's own time.
        assert_eq!(w.guest("5.10"), 338);
        w.record("6.12", 100, &[("profile/profile".to_string(), 30)]);
        assert_eq!(w.tool("profile"), 62, "the larger guest's");
    }

    #[test]
    fn the_chains_take_guests_as_slots_free() {
        let load: HashMap<&str, u64> = [("a", 100), ("b", 60), ("c", 50)].into();
        // a | b then c
        assert_eq!(makespan(&["a", "b", "c"], 2, &load), 110);
        assert_eq!(makespan(&["c", "b", "a"], 2, &load), 150);
        assert_eq!(makespan(&["a", "b", "c"], 1, &load), 210);
        assert_eq!(makespan(&["a", "b", "c"], 3, &load), 100);
    }
}
