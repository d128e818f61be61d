//! filelife against a program that creates a file, keeps it 1.5 s and
//! deletes it: one line, its age 1.5 s. Where the kernel has neither
//! fentry nor kprobes (this project's own build machine), the tracepoint
//! mode on an ext4 of the test's own; the fentry and kprobe modes in the
//! VMs.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use testkit::block::Mount;
use testkit::{require_root, run_with_env, Finished};

const BIN: &str = env!("CARGO_BIN_EXE_filelife");
const KEPT_MS: u64 = 1500;

/// fentry or kprobes: what filelife needs.
fn hooks_present() -> bool {
    let f = common::kernel::probe::features();
    testkit::feature_present(f.fentry || f.kprobe, "fentry or kprobes", None)
}

/// life-work under `filelife --json -p PID`, its file in `dir` (the
/// scratch directory if None), kept `kept` ms or ("old") existing before:
/// what the tool printed and the file's name.
fn traced_life(env: &[(&str, &str)], dir: Option<&Path>, kept: &str) -> (Finished, String) {
    let prog = testkit::build_c_program(
        env!("CARGO_MANIFEST_DIR"),
        env!("CARGO_TARGET_TMPDIR"),
        "life-work",
    );
    let name = testkit::unique("life");
    let dir = dir.map_or_else(
        || testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR")),
        Path::to_path_buf,
    );
    let f = testkit::trace_stopped(Command::new(&prog).arg(dir.join(&name)).arg(kept), |pid| {
        let mut tool = Command::new(BIN);
        tool.args(["--json", "-p", &pid.to_string()])
            .envs(env.iter().copied());
        tool
    });
    (f, name)
}

/// The one line filelife printed: for file `name`, deleted by life-work.
fn one_life(f: &Finished, name: &str) -> f64 {
    let rows = f.json();
    assert_eq!(rows.len(), 1, "{f:?}");
    let r = &rows[0];
    assert_eq!(r["file"], name, "{r}");
    assert_eq!(r["comm"], "life-work", "{r}");
    r["age_s"].as_f64().unwrap()
}

fn check_age(env: &[(&str, &str)], dir: Option<&Path>) {
    let (f, name) = traced_life(env, dir, &KEPT_MS.to_string());
    let age = one_life(&f, &name);
    assert!((age - 1.5).abs() <= 0.2, "age {age}: {f:?}");
}

/// Whatever this kernel offers (here: ext4's tracepoint), on an ext4.
#[test]
fn filelife_shows_a_files_age() {
    let _turn = testkit::one_at_a_time();
    require_root();
    let ext4 = Mount::ext4(env!("CARGO_TARGET_TMPDIR"), 64);
    check_age(&[], Some(&ext4.dir));
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
        check_age(&env, None);
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
        check_age(&env, None);
    }
}

/// Neither fentry nor kprobes (this machine; forced elsewhere): the file
/// systems' own tracepoints, the age from the inode's creation time. On
/// `fs`, a file made and deleted shows its age; a file made before the tool
/// started, its whole age (not the time since tracing began).
fn check_tracepoint_mode(fs: &Mount, hook: &str) {
    let env = [("BPFTOOLS_DISABLE", "fentry,kprobe")];
    let f = run_with_env(BIN, &["--dry-run"], &env);
    let out = f.stdout.join("\n");
    assert!(
        out.contains(&format!("tp_btf {hook}")) && out.contains("tracepoint mode"),
        "{f:?}"
    );
    check_age(&env, Some(&fs.dir));

    // Made 1 s before tracing starts: its age at deletion is at least that
    // and at most the time since it was made.
    let name = testkit::unique("old");
    let made = Instant::now();
    std::fs::write(fs.dir.join(&name), b"x").unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    let prog = testkit::build_c_program(
        env!("CARGO_MANIFEST_DIR"),
        env!("CARGO_TARGET_TMPDIR"),
        "life-work",
    );
    let f = testkit::trace_stopped(
        Command::new(&prog).arg(fs.dir.join(&name)).arg("old"),
        |pid| {
            let mut tool = Command::new(BIN);
            tool.args(["--json", "-p", &pid.to_string()]).envs(env);
            tool
        },
    );
    let lived = made.elapsed().as_secs_f64();
    let age = one_life(&f, &name);
    check_no_false_deaths(fs, &prog, &env);
    // The creation time is the coarse clock's (a tick, 10 ms at most,
    // behind).
    assert!(
        age >= 0.99 && age <= lived + 0.02,
        "age {age}, lived {lived}: {f:?}"
    );
    assert!(f.stderr.contains("tracepoint mode"), "{f:?}");
}

/// A name deleted while another link keeps its file, then a rename over a
/// third file: no file's last link went by an unlink, so no line.
fn check_no_false_deaths(fs: &Mount, prog: &Path, env: &[(&str, &str)]) {
    let name = testkit::unique("linked");
    let file = fs.dir.join(&name);
    std::fs::write(&file, b"x").unwrap();
    std::fs::hard_link(&file, fs.dir.join(format!("{name}.link"))).unwrap();
    std::fs::write(fs.dir.join(format!("{name}.over")), b"y").unwrap();
    let f = testkit::trace_stopped(Command::new(prog).arg(&file).arg("relink"), |pid| {
        let mut tool = Command::new(BIN);
        tool.args(["--json", "-p", &pid.to_string()])
            .envs(env.iter().copied());
        tool
    });
    assert_eq!(f.json().len(), 0, "{f:?}");
    std::fs::remove_file(fs.dir.join(format!("{name}.over"))).unwrap();
}

#[test]
fn filelife_tracepoint_mode_on_ext4() {
    let _turn = testkit::one_at_a_time();
    require_root();
    let ext4 = Mount::ext4(env!("CARGO_TARGET_TMPDIR"), 64);
    if ext4_tracepoint() {
        check_tracepoint_mode(&ext4, "ext4_unlink_exit");
    }
}

/// ext4's unlink tracepoint as a BTF tracepoint (where ext4 is a module, as
/// on Debian, in its own BTF: 5.11+); an ext4 must be mounted, so that its
/// module is loaded.
fn ext4_tracepoint() -> bool {
    let present = common::kernel::probe::btf_tracepoint_in_module("ext4_unlink_exit", "ext4");
    testkit::feature_present(present, "ext4's unlink tracepoint in BTF", Some((5, 11)))
}

/// xfs where it is built in or its module loads, with its tracepoints in
/// BTF (a module's own from 5.11).
#[test]
fn filelife_tracepoint_mode_on_xfs() {
    let _turn = testkit::one_at_a_time();
    require_root();
    let Some(xfs) = Mount::xfs(env!("CARGO_TARGET_TMPDIR"), 300) else {
        testkit::feature_present(false, "xfs", None);
        return;
    };
    let hooks = ["xfs_remove", "xfs_iunlink"];
    let present = hooks
        .iter()
        .all(|h| common::kernel::probe::btf_tracepoint_in_module(h, "xfs"));
    if testkit::feature_present(present, "xfs's tracepoints in BTF", Some((5, 11))) {
        check_tracepoint_mode(&xfs, "xfs_iunlink");
    }
}

/// tmpfs keeps no tracepoints for this: not covered in the tracepoint
/// mode, and the note on stderr names it among the file systems mounted.
#[test]
fn filelife_tracepoint_mode_names_tmpfs_unseen() {
    let _turn = testkit::one_at_a_time();
    require_root();
    let env = [("BPFTOOLS_DISABLE", "fentry,kprobe")];
    let _ext4 = Mount::ext4(env!("CARGO_TARGET_TMPDIR"), 64);
    if !ext4_tracepoint() {
        return;
    }
    let tmpfs = Mount::tmpfs(env!("CARGO_TARGET_TMPDIR"));
    let (f, _) = traced_life(&env, Some(&tmpfs.dir), "200");
    assert_eq!(f.json().len(), 0, "{f:?}");
    let note = f
        .stderr
        .lines()
        .find(|l| l.contains("tracepoint mode"))
        .unwrap_or_default();
    assert!(
        note.contains("not seen in this mode") && note.contains("tmpfs"),
        "{f:?}"
    );
}

/// Neither fentry nor kprobes nor a file system's unlink tracepoint: a
/// clear error naming what is missing, exit 1, nothing left loaded.
#[test]
fn filelife_without_fentry_kprobes_or_tracepoints() {
    let _turn = testkit::one_at_a_time();
    require_root();
    let before = testkit::loaded_program_ids();
    let env = [(
        "BPFTOOLS_DISABLE",
        "fentry,kprobe,ext4_unlink_exit,xfs_iunlink",
    )];
    for args in [&[][..], &["--dry-run"]] {
        let f = run_with_env(BIN, args, &env);
        assert_eq!(f.status.code(), Some(1), "{f:?}");
        assert!(
            f.stderr.contains("needs fentry or kprobes")
                && f.stderr.contains("vfs_unlink")
                && f.stderr.contains("ext4_unlink_exit"),
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
