//! slabratetop against opens of the test's own (open-loop.c): each open()
//! allocates a struct file from the filp cache, OPENS of them.

use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_slabratetop");
const OPENS: u64 = 3000;

/// The tool (`args`, then `-p PID`, hooks in `disable` off) over one run
/// of the loop.
fn trace(args: &[&str], disable: &str) -> testkit::Finished {
    testkit::require_root();
    let prog = testkit::build_c_program(
        env!("CARGO_MANIFEST_DIR"),
        env!("CARGO_TARGET_TMPDIR"),
        "open-loop",
    );
    let (f, _) = testkit::trace_pid(
        Command::new(&prog).args(["/proc/self/stat", &OPENS.to_string()]),
        BIN,
        args,
        disable,
        |_| {},
    );
    f
}

/// The allocations of rows named `name` (field `key`) summed over the
/// intervals.
fn allocs(rows: &[Value], key: &str, name: impl Fn(&str) -> bool) -> u64 {
    rows.iter()
        .filter(|r| r[key].as_str().is_some_and(&name))
        .map(|r| r["allocs"].as_u64().unwrap())
        .sum()
}

#[test]
fn slabratetop_shows_the_filp_cache_of_opens() {
    let f = trace(&["--json", "-C"], "");
    let rows = f.json();
    assert!(allocs(&rows, "cache", |n| n == "filp") >= OPENS, "{f:?}");
    for r in &rows {
        assert!(
            r["bytes"].as_u64().unwrap() >= r["allocs"].as_u64().unwrap(),
            "{r}"
        );
    }
}

/// libbpf-tools' table under BCC's time and load average line; -s count.
#[test]
fn slabratetop_prints_libbpf_tools_table() {
    let f = trace(&["-C", "-s", "count"], "");
    let at = f
        .stdout
        .iter()
        .position(|l| l.trim_end() == "CACHE                            ALLOCS      BYTES")
        .unwrap_or_else(|| panic!("{f:?}"));
    assert!(f.stdout[at - 2].contains(" loadavg: "), "{f:?}");
    let filp: u64 = f
        .stdout
        .iter()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            (cells.len() == 3 && cells[0] == "filp").then(|| cells[1].parse::<u64>().unwrap())
        })
        .sum();
    assert!(filp >= OPENS, "{f:?}");
}

/// Each source of the allocations this kernel has: the tracepoint's cache
/// (6.1+, tp_btf or raw_tp), a kprobe on kmem_cache_alloc, and before 6.1
/// without kprobes the call sites (the function allocating the file).
#[test]
fn slabratetop_sources() {
    let names_cache = testkit::kernel_version() >= (6, 1);
    let kprobes = common::kernel::probe::kprobe_target("kmem_cache_alloc")
        || common::kernel::probe::kprobe_target("kmem_cache_alloc_noprof");
    let mut runs = Vec::new();
    if names_cache {
        runs.push(("", "tp_btf kmem_cache_alloc"));
        runs.push(("tp_btf", "raw_tp kmem_cache_alloc (cache_raw)"));
    }
    if kprobes {
        runs.push(("tp_btf,raw_tp", "kprobe kmem_cache_alloc"));
    }
    if !names_cache {
        runs.push(("kprobe", "raw_tp kmem_cache_alloc (site_raw)"));
    }
    for (disable, hook) in runs {
        let f = trace(&["--json", "-C", "-v"], disable);
        assert!(f.stderr.contains(hook), "{hook}: {}", f.stderr);
        let rows = f.json();
        let n = if hook.contains("site_raw") {
            allocs(&rows, "call_site", |n| n.contains("file"))
        } else {
            allocs(&rows, "cache", |n| n == "filp")
        };
        assert!(n >= OPENS, "{disable}: {f:?}");
    }
}
