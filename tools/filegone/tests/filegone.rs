//! filegone against deletes and renames of the test's own, made by a
//! Python child in a directory of the test's own (its working directory):
//! unlink, unlinkat by a directory descriptor, rmdir, rename within the
//! directory and to an absolute path, and an unlink that fails (not shown).
//! Each is seen once with its absolute paths.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use testkit::{unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_filegone");

fn start(args: &[&str], disable: &str) -> Traced {
    testkit::start_disabled(BIN, args, disable)
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(200))
}

/// The calls, in a new directory under `scratch`; returns it (absolute,
/// as the kernel walks it) and the other directory the rename goes to.
fn calls(scratch: &Path) -> (String, String) {
    let dir = scratch.join(unique("gone-"));
    let other = scratch.join(unique("gone-to-"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    let dir = std::fs::canonicalize(dir).unwrap();
    let other = std::fs::canonicalize(other).unwrap();
    let script = format!(
        "import os\n\
         open('f1', 'w').close(); os.unlink('f1')\n\
         fd = os.open('.', os.O_RDONLY); open('f2', 'w').close(); os.unlink('f2', dir_fd=fd)\n\
         os.mkdir('d1'); os.rmdir('d1')\n\
         open('a', 'w').close(); os.rename('a', 'b')\n\
         os.rename('b', {:?})\n\
         try:\n    os.unlink('missing')\nexcept FileNotFoundError:\n    pass\n",
        other.join("c").to_string_lossy()
    );
    let ok = Command::new("python3")
        .args(["-c", &script])
        .current_dir(&dir)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    (
        dir.to_string_lossy().into_owned(),
        other.to_string_lossy().into_owned(),
    )
}

fn check(events: &[Value], dir: &str, other: &str) {
    let mine: Vec<&Value> = events
        .iter()
        .filter(|e| e["path"].as_str().is_some_and(|p| p.starts_with(dir)))
        .collect();
    let seen: Vec<(&str, &str, &str)> = mine
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap(),
                e["path"].as_str().unwrap(),
                e["new_path"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    let p = |n: &str| format!("{dir}/{n}");
    let c = format!("{other}/c");
    assert_eq!(
        seen,
        [
            ("DELETE", p("f1").as_str(), "-"),
            ("DELETE", p("f2").as_str(), "-"),
            ("DELETE", p("d1").as_str(), "-"),
            ("RENAME", p("a").as_str(), p("b").as_str()),
            ("RENAME", p("b").as_str(), c.as_str()),
        ],
        "{mine:#?}"
    );
    assert!(mine.iter().all(|e| e["comm"] == "python3"), "{mine:#?}");
    assert_eq!(mine[1]["call"], "unlinkat", "{}", mine[1]);
    assert_eq!(mine[2]["directory"], true, "{}", mine[2]);
    assert_eq!(mine[0]["directory"], false, "{}", mine[0]);
}

#[test]
fn filegone_shows_each_delete_and_rename_with_absolute_paths() {
    let scratch = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"));
    let json = start(&["--json"], "");
    let text = start(&[], "");
    let (dir, other) = calls(&scratch);
    let (json, text) = (stop(json), stop(text));
    check(&json.json(), &dir, &other);
    assert_eq!(
        text.stdout[0], "TIME     PID     COMM             ACTION FILE",
        "{:?}",
        text.stdout
    );
    let line = text
        .stdout
        .iter()
        .find(|l| l.ends_with(&format!("{dir}/a > {dir}/b")))
        .unwrap_or_else(|| panic!("{:?}", text.stdout));
    assert!(line.contains(" RENAME "), "{line}");
}

/// The calls' own tracepoints, and tp_btf sys_enter/sys_exit where they are
/// missing.
#[test]
fn filegone_hook_variants() {
    let scratch = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"));
    for (disable, hook) in [
        ("", "tracepoint syscalls:sys_enter_unlinkat"),
        ("tracepoint", "tp_btf sys_enter"),
    ] {
        let dry = testkit::run_with_env(BIN, &["--dry-run"], &[("BPFTOOLS_DISABLE", disable)]);
        assert!(dry.status.success(), "{dry:?}");
        assert!(dry.stdout.join("\n").contains(hook), "{hook}: {dry:?}");
        let tool = start(&["--json"], disable);
        let (dir, other) = calls(&scratch);
        check(&stop(tool).json(), &dir, &other);
    }
}
