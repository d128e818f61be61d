//! filelife against a program that creates a file, keeps it 1.5 s and
//! deletes it: one line, its age 1.5 s. Where the kernel has neither
//! fentry nor kprobes (this project's own build machine), only the clear
//! error is tested; the rest runs in the VMs.

use std::process::Command;

use testkit::{require_root, run_with_env, Finished};

const BIN: &str = env!("CARGO_BIN_EXE_filelife");
const KEPT_MS: u64 = 1500;

/// fentry or kprobes: what filelife needs.
fn hooks_present() -> bool {
    let f = common::kernel::probe::features();
    testkit::feature_present(f.fentry || f.kprobe, "fentry or kprobes", None)
}

/// life-work under `filelife --json -p PID`: what the tool printed and the
/// file's name.
fn traced_life(env: &[(&str, &str)]) -> (Finished, String) {
    let prog = testkit::build_c_program(
        env!("CARGO_MANIFEST_DIR"),
        env!("CARGO_TARGET_TMPDIR"),
        "life-work",
    );
    let name = testkit::unique("life");
    let dir = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"));
    let f = testkit::trace_stopped(
        Command::new(&prog)
            .arg(dir.join(&name))
            .arg(KEPT_MS.to_string()),
        |pid| {
            let mut tool = Command::new(BIN);
            tool.args(["--json", "-p", &pid.to_string()])
                .envs(env.iter().copied());
            tool
        },
    );
    (f, name)
}

fn check_age(env: &[(&str, &str)]) {
    let (f, name) = traced_life(env);
    let rows = f.json();
    assert_eq!(rows.len(), 1, "{f:?}");
    let r = &rows[0];
    assert_eq!(r["file"], name.as_str(), "{r}");
    assert_eq!(r["comm"], "life-work", "{r}");
    let age = r["age_s"].as_f64().unwrap();
    assert!((age - 1.5).abs() <= 0.2, "age {age}: {r}");
}

#[test]
fn filelife_shows_a_files_age() {
    let _turn = testkit::one_at_a_time();
    require_root();
    if hooks_present() {
        check_age(&[]);
    }
}

/// Kernels with fentry: forced to kprobes and the return probe.
#[test]
fn filelife_kprobe_mode() {
    let _turn = testkit::one_at_a_time();
    require_root();
    let kprobes = common::kernel::probe::features().kprobe;
    if testkit::feature_present(kprobes, "kprobes", None) {
        let env = [("BPFTOOLS_DISABLE", "fentry")];
        let f = run_with_env(BIN, &["--dry-run"], &env);
        assert!(
            f.stdout.join("\n").contains("kretprobe vfs_unlink"),
            "{f:?}"
        );
        check_age(&env);
    }
}

/// Where security_inode_create cannot be hooked (a kernel built without
/// LSM hooks): vfs_create and vfs_open of a created file.
#[test]
fn filelife_without_security_inode_create() {
    let _turn = testkit::one_at_a_time();
    require_root();
    if hooks_present() {
        let env = [("BPFTOOLS_DISABLE", "security_inode_create")];
        let f = run_with_env(BIN, &["--dry-run"], &env);
        let out = f.stdout.join("\n");
        assert!(
            out.contains(" vfs_open") && !out.contains("security_inode_create"),
            "{f:?}"
        );
        check_age(&env);
    }
}

/// Neither fentry nor kprobes (this machine; forced elsewhere): a clear
/// error naming what is missing, exit 1, nothing left loaded.
#[test]
fn filelife_without_fentry_or_kprobes() {
    let _turn = testkit::one_at_a_time();
    require_root();
    let before = testkit::loaded_program_ids();
    for args in [&[][..], &["--dry-run"]] {
        let f = run_with_env(BIN, args, &[("BPFTOOLS_DISABLE", "fentry,kprobe")]);
        assert_eq!(f.status.code(), Some(1), "{f:?}");
        assert!(
            f.stderr.contains("needs fentry or kprobes") && f.stderr.contains("vfs_unlink"),
            "{f:?}"
        );
        assert_eq!(f.stderr.lines().count(), 1, "{f:?}");
    }
    let new: Vec<u32> = testkit::loaded_program_ids()
        .into_iter()
        .filter(|id| !before.contains(id))
        .collect();
    assert_eq!(new, Vec::<u32>::new(), "left loaded");
}
