//! numamove against migrations of the test's own (numa-work.c): compaction
//! of a region it fragments (every machine), and NUMA balancing moving
//! pages it placed on a second node back to its CPUs' node (the VM guests,
//! whose second node is memory without CPUs). Counted pages are checked
//! against /proc/vmstat's, which the kernel counts in the same call.

use std::process::{Command, Stdio};

use serde_json::Value;
use testkit::unique;

const BIN: &str = env!("CARGO_BIN_EXE_numamove");
const TMP: &str = env!("CARGO_TARGET_TMPDIR");

fn vmstat(name: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/vmstat").unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in /proc/vmstat"))
}

fn program() -> std::path::PathBuf {
    testkit::build_c_program(env!("CARGO_MANIFEST_DIR"), TMP, "numa-work")
}

/// The workload's region: a quarter of the machine's memory, at most 1 GiB
/// (compaction moves the pages that sit low in a zone; a large region
/// reaches there).
fn region_mib() -> u64 {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kb: u64 = meminfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("MemTotal:")?
                .trim()
                .strip_suffix("kB")?
                .trim()
                .parse()
                .ok()
        })
        .unwrap();
    (kb / 1024 / 4).min(1024)
}

/// A workload's run under the tool (started by `tool` with the stopped
/// workload's pid): the tool's run and what the workload printed.
fn traced(work: &[&str], tool: impl FnOnce(u32) -> Command) -> (testkit::Finished, String) {
    let out = testkit::scratch_dir(TMP).join(unique("numa-work-out-"));
    let file = std::fs::File::create(&out).unwrap();
    let f = testkit::trace_stopped(
        Command::new(program()).args(work).stdout(Stdio::from(file)),
        tool,
    );
    let printed = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    (f, printed)
}

fn number_after(text: &str, prefix: &str) -> u64 {
    text.lines()
        .find_map(|l| {
            l.strip_prefix(prefix)?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no {prefix:?} in {text:?}"))
}

fn sum(lines: &[Value], key: &str) -> u64 {
    lines.iter().map(|l| l[key].as_u64().unwrap()).sum()
}

struct Compaction {
    f: testkit::Finished,
    /// Pages the workload's compaction migrated (vmstat, around its write).
    workload: u64,
    /// Pages the machine migrated while the tool ran, and more (vmstat,
    /// before the tool's start and after its end).
    machine: u64,
}

/// The tool (`args`, hooks in `disable` off, the whole machine) while the
/// workload fragments a region and compacts memory; again (up to three
/// times) while its compaction finds nothing to move.
fn compaction(args: &[&str], disable: &str) -> Compaction {
    testkit::require_root();
    // Alone: /proc/vmstat counts every migration of the machine, and the
    // NUMA test's would be taken for compaction's.
    let _turn = testkit::one_at_a_time();
    let mib = region_mib().to_string();
    for _ in 0..3 {
        let before = vmstat("pgmigrate_success");
        let (f, printed) = traced(&["compact", &mib], |_| {
            let mut tool = Command::new(BIN);
            tool.args(args).env("BPFTOOLS_DISABLE", disable);
            tool
        });
        let machine = vmstat("pgmigrate_success") - before;
        let workload = number_after(&printed, "migrated ");
        if workload > 0 {
            return Compaction {
                f,
                workload,
                machine,
            };
        }
    }
    panic!("compaction of a fragmented {mib} MiB region moved no page in three tries");
}

/// Every page compaction moved while the tool ran, no more than the
/// machine moved around it.
fn check_compaction(c: &Compaction) {
    let lines = c.f.json();
    let pages = sum(&lines, "pages");
    assert!(
        (c.workload..=c.machine).contains(&pages),
        "{pages} pages counted, {} by the workload, {} in all: {:?}",
        c.workload,
        c.machine,
        c.f
    );
    let migrations = sum(&lines, "migrations");
    assert!(
        migrations > 0 && migrations <= pages + sum(&lines, "failed"),
        "{:?}",
        c.f
    );
    let ms: f64 = lines
        .iter()
        .map(|l| l["latency_ms"].as_f64().unwrap())
        .sum();
    assert!(ms > 0.0, "{:?}", c.f);
    for l in &lines {
        assert!(l["time"].as_str().unwrap().len() == 8, "{l}");
        assert!(l["interval_s"].as_f64().unwrap() > 0.0, "{l}");
    }
}

#[test]
fn numamove_counts_compactions_migrations() {
    check_compaction(&compaction(&["-r", "compaction", "--json"], ""));
}

/// BCC's reason only: compaction's migrations are not NUMA balancing's
/// (which a one-node machine, or one with balancing off, never does).
#[test]
fn numamove_counts_only_the_reasons_asked_for() {
    let c = compaction(&["--json"], "");
    let lines = c.f.json();
    assert!(!lines.is_empty(), "{:?}", c.f);
    assert_eq!(sum(&lines, "migrations"), 0, "{:?}", c.f);
    assert_eq!(sum(&lines, "pages"), 0, "{:?}", c.f);
    // Every reason: compaction's too.
    check_compaction(&compaction(&["-r", "all", "--json"], ""));
}

/// BCC's layout, every second, and -P's pages.
#[test]
fn numamove_prints_bccs_layout() {
    let c = compaction(&["-r", "compaction", "-P"], "");
    assert_eq!(
        c.f.stdout[0],
        format!(
            "{:<10} {:>18} {:>18} {:>10} {:>8}",
            "TIME", "MIGRATIONS", "MIGRATIONS_ms", "PAGES", "FAILED"
        ),
        "{:?}",
        c.f
    );
    let mut pages = 0;
    for line in &c.f.stdout[1..] {
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cells.len(), 5, "{line}");
        assert_eq!(cells[0].len(), 8, "{line}");
        for n in &cells[1..] {
            n.parse::<u64>().unwrap_or_else(|_| panic!("{line}"));
        }
        pages += cells[3].parse::<u64>().unwrap();
    }
    assert!((c.workload..=c.machine).contains(&pages), "{:?}", c.f);
    let f = testkit::run(BIN, &["1", "1"]);
    assert!(f.status.success(), "{f:?}");
    assert_eq!(
        f.stdout[0],
        format!(
            "{:<10} {:>18} {:>18}",
            "TIME", "NUMA_migrations", "NUMA_migrations_ms"
        )
    );
    assert_eq!(f.stdout.len(), 2, "{f:?}");
}

/// The hooks as tp_btf and as raw_tp (the start a kprobe before 5.13).
#[test]
fn numamove_hook_variants() {
    for (disable, hook) in [("", "tp_btf"), ("tp_btf", "raw_tp")] {
        let c = compaction(&["-r", "compaction", "--json", "-v"], disable);
        let start = if numamove::start_is_tracepoint() {
            format!("{hook} mm_migrate_pages_start")
        } else {
            "kprobe migrate_pages".into()
        };
        for h in [start, format!("{hook} mm_migrate_pages")] {
            assert!(c.f.stderr.contains(&h), "{h}: {}", c.f.stderr);
        }
        check_compaction(&c);
    }
}

/// NUMA balancing on, scanning at once and often, while it lives; as it
/// was after.
struct Balancing(Vec<(std::path::PathBuf, String)>);

impl Balancing {
    fn on() -> Balancing {
        let debugfs = std::path::Path::new("/sys/kernel/debug/sched/numa_balancing");
        if !debugfs.exists() {
            let _ = Command::new("mount")
                .args(["-t", "debugfs", "none", "/sys/kernel/debug"])
                .status();
        }
        // Its tunables are sysctls before 5.13, debugfs files since.
        let tunable = |name: &str| {
            let old = std::path::PathBuf::from(format!("/proc/sys/kernel/numa_balancing_{name}"));
            if old.exists() {
                old
            } else {
                debugfs.join(name)
            }
        };
        let mut saved = Vec::new();
        for (path, value) in [
            (tunable("scan_delay_ms"), "0"),
            (tunable("scan_period_min_ms"), "100"),
            ("/proc/sys/kernel/numa_balancing".into(), "1"),
        ] {
            let was = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            std::fs::write(&path, value).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            saved.push((path, was.trim().to_string()));
        }
        Balancing(saved)
    }
}

impl Drop for Balancing {
    fn drop(&mut self) {
        for (path, was) in self.0.iter().rev() {
            let _ = std::fs::write(path, was);
        }
    }
}

fn numa_nodes() -> usize {
    let online = std::fs::read_to_string("/sys/devices/system/node/online").unwrap_or_default();
    online
        .trim()
        .split(',')
        .filter(|r| !r.is_empty())
        .map(|r| match r.split_once('-') {
            Some((a, b)) => b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1,
            None => 1,
        })
        .sum()
}

/// 16 MiB placed on node 1, then NUMA balancing's to move: each page it
/// moved to node 0 is counted, in the workload, as numa_misplaced.
#[test]
fn numamove_counts_numa_balancing_migrations() {
    testkit::require_root();
    let guest_nodes: Option<usize> = std::env::var("BPFTOOLS_TEST_NUMA_NODES")
        .ok()
        .and_then(|n| n.parse().ok());
    if numa_nodes() < 2 {
        assert!(
            guest_nodes.unwrap_or(1) < 2,
            "this guest was given {guest_nodes:?} NUMA nodes, and has one"
        );
        testkit::feature_present(false, "a second NUMA node", None);
        return;
    }
    let _turn = testkit::one_at_a_time();
    let _balancing = Balancing::on();
    let mut pid = 0;
    let (f, printed) = traced(&["misplace", "16", "60"], |p| {
        pid = p;
        let mut tool = Command::new(BIN);
        tool.args(["--json", "-p", &p.to_string()]);
        tool
    });
    let moved = number_after(&printed, "on node 0: ");
    assert!(printed.trim().ends_with("of 4096"), "{printed}");
    assert!(
        moved > 0,
        "NUMA balancing moved none of the pages: {printed}"
    );
    let lines = f.json();
    // Each page moved to node 0 moved once, by a fault of the workload.
    assert_eq!(sum(&lines, "pages"), moved, "pid {pid}: {printed} {f:?}");
    assert!(sum(&lines, "migrations") >= moved, "{f:?}");
    let ms: f64 = lines
        .iter()
        .map(|l| l["latency_ms"].as_f64().unwrap())
        .sum();
    assert!(ms > 0.0, "{f:?}");
}
