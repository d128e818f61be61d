//! dcstat against a program of the test's own doing a known number of
//! dentry cache lookups (dc-work.c). This machine's kernel offers neither
//! fentry nor kprobes: the tests that attach run in the VM guests and skip
//! here, saying so; the refusal is tested everywhere.

use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use testkit::{feature_present, require_root, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_dcstat");
const FILES: u64 = 300;

/// The sums of refs, slow and miss over every interval printed.
fn sums(rows: &[Value]) -> [u64; 3] {
    let mut s = [0; 3];
    for r in rows {
        for (i, k) in ["refs", "slow", "miss"].iter().enumerate() {
            s[i] += r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}"));
        }
    }
    s
}

/// What dcstat -p saw of one run of dc-work, and its dry run's hooks.
fn counts(env: &[(&str, &str)]) -> [u64; 3] {
    let prog = testkit::build_c_program(
        env!("CARGO_MANIFEST_DIR"),
        env!("CARGO_TARGET_TMPDIR"),
        "dc-work",
    );
    let dir = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR")).join(testkit::unique("dc"));
    std::fs::create_dir_all(&dir).unwrap();
    let f = testkit::trace_stopped(
        Command::new(&prog).arg(&dir).arg(FILES.to_string()),
        |pid| {
            let mut tool = Command::new(BIN);
            tool.args(["--json", "-p", &pid.to_string(), "1"])
                .envs(env.iter().copied());
            tool
        },
    );
    let _ = std::fs::remove_dir_all(&dir);
    let rows = f.json();
    for r in &rows {
        assert!(r["interval_s"].as_f64().unwrap() > 0.0, "{r}");
        let refs = r["refs"].as_u64().unwrap();
        let hit = &r["hit_percent"];
        assert_eq!(hit.is_f64(), refs > 0, "{r}");
    }
    sums(&rows)
}

/// Each create of a new name is one slow lookup that misses (d_lookup at
/// lookup_open, then d_alloc_parallel for the same name, counted once), and
/// so is each stat of a name never seen (d_alloc_parallel, which BCC's
/// dcstat does not see since 4.7); each stat looks its one component up in
/// the cache (lookup_fast), whether or not the name exists; nothing else of
/// the process's is counted.
fn assert_counts(s: [u64; 3], hooks: &str) {
    let [refs, slow, miss] = s;
    assert_eq!((slow, miss), (2 * FILES, 2 * FILES), "{hooks}: {s:?}");
    assert!(refs >= 2 * FILES, "{hooks}: {s:?}");
    assert!(refs <= 3 * FILES + 20, "{hooks}: {s:?}");
}

const NEEDS: &str = "fentry or kprobes on lookup_fast, d_lookup and d_alloc_parallel";

/// What `--dry-run` prints under `env`; None where dcstat cannot attach
/// here: the test is skipped, said.
fn dry_run(env: &[(&str, &str)]) -> Option<String> {
    testkit::dry_run_where_it_runs(BIN, &[], env, NEEDS)
}

#[test]
fn dcstat_counts_known_lookups_with_fentry() {
    let Some(hooks) = dry_run(&[]) else {
        return;
    };
    // The guests allow fentry (5.10, 6.1, 6.12): the first choice.
    assert!(
        hooks.contains("fentry lookup_fast")
            && hooks.contains("d_alloc_parallel")
            && hooks.contains("fexit d_lookup"),
        "{hooks}"
    );
    assert_counts(counts(&[]), &hooks);
}

#[test]
fn dcstat_counts_known_lookups_with_kprobes() {
    let env = [("BPFTOOLS_DISABLE", "fentry")];
    let Some(hooks) = dry_run(&env) else {
        return;
    };
    assert!(
        hooks.contains("kprobe lookup_fast")
            && hooks.contains("d_alloc_parallel")
            && hooks.contains("kretprobe d_lookup"),
        "{hooks}"
    );
    assert_counts(counts(&env), &hooks);
}

/// BCC's lines: a header, then one line per interval with its rates and
/// the hit ratio.
#[test]
fn dcstat_text_lines_each_interval() {
    require_root();
    if !feature_present(dcstat::hooks_present(), NEEDS, None) {
        return;
    }
    let tool = Traced::start(BIN, &["1", "2"]);
    let f = tool.wait(Duration::from_secs(20));
    assert!(f.status.success(), "{f:?}");
    let words: Vec<&str> = f.stdout[0].split_whitespace().collect();
    assert_eq!(words, ["TIME", "REFS/s", "SLOW/s", "MISS/s", "HIT%"]);
    assert_eq!(f.stdout.len(), 3, "a header and two intervals: {f:?}");
    for l in &f.stdout[1..] {
        let cols: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(cols.len(), 5, "{l}");
        assert!(cols[0].ends_with(':'), "{l}");
        for c in &cols[1..4] {
            c.parse::<u64>().unwrap_or_else(|_| panic!("{l}"));
        }
    }
}

/// Without fentry and kprobes (this machine, or forced): one line naming
/// what is missing, exit 1 (before anything loads: the hooks are chosen
/// before the object is).
#[test]
fn dcstat_without_fentry_or_kprobes_says_what_is_missing() {
    testkit::assert_refused_in_one_line(
        BIN,
        &["1", "1"],
        &[("BPFTOOLS_DISABLE", "fentry,kprobe")],
        &[
            "fentry",
            "kprobes",
            "lookup_fast",
            "d_lookup",
            "d_alloc_parallel",
        ],
    );
}
