//! opensnoop against real opens. Root only: these load BPF programs.

use std::ffi::CString;
use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use testkit::{
    require_root, run, stop_and_check_unloaded, time_piped_into_head, unique, Finished, Traced,
};

const BIN: &str = env!("CARGO_BIN_EXE_opensnoop");

fn start(args: &[&str]) -> Traced {
    require_root();
    Traced::start(BIN, args)
}

fn me() -> String {
    std::process::id().to_string()
}

/// A fresh directory, canonical (so -F paths can be compared to it).
fn scratch_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(unique(tag));
    fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

fn opens_of(finished: &Finished, path: &Path) -> Vec<Value> {
    let path = path.to_str().unwrap();
    finished
        .json()
        .into_iter()
        .filter(|e| e["path"] == path)
        .collect()
}

#[test]
fn opensnoop_shows_open_of_unique_path() {
    let dir = scratch_dir("os-open");
    let present = dir.join("present");
    let missing = dir.join("missing");
    fs::write(&present, b"x").unwrap();
    let tool = start(&["--json", "-p", &me()]);
    let _file = File::open(&present).unwrap();
    assert!(File::open(&missing).is_err());
    let finished = stop_and_check_unloaded(tool);
    assert!(finished.status.success(), "{finished:?}");

    let ok = opens_of(&finished, &present);
    assert_eq!(ok.len(), 1, "{:?}", finished.stdout);
    assert!(ok[0]["fd"].as_i64().unwrap() >= 0);
    assert_eq!(ok[0]["err"], 0);
    assert_eq!(ok[0]["pid"], std::process::id());
    assert_eq!(ok[0]["flags"].as_i64().unwrap() & libc::O_ACCMODE as i64, 0);

    let failed = opens_of(&finished, &missing);
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["fd"], -1);
    assert_eq!(failed[0]["err"], libc::ENOENT);
}

#[test]
fn opensnoop_failed_only_shows_just_failures() {
    let dir = scratch_dir("os-x");
    let present = dir.join("present");
    let missing = dir.join("missing");
    fs::write(&present, b"x").unwrap();
    let tool = start(&["--json", "-x", "-p", &me()]);
    let _file = File::open(&present).unwrap();
    assert!(File::open(&missing).is_err());
    let finished = tool.stop();
    assert_eq!(
        opens_of(&finished, &missing).len(),
        1,
        "{:?}",
        finished.stdout
    );
    assert!(opens_of(&finished, &present).is_empty());
    assert!(finished
        .json()
        .iter()
        .all(|e| e["fd"] == -1 && e["err"] != 0));
}

#[test]
fn opensnoop_pid_filter_excludes_other_processes() {
    let dir = scratch_dir("os-p");
    let mine = dir.join("mine");
    let theirs = dir.join("theirs");
    fs::write(&mine, b"x").unwrap();
    fs::write(&theirs, b"x").unwrap();
    let tool = start(&["--json", "-p", &me()]);
    let _file = File::open(&mine).unwrap();
    Command::new("cat").arg(&theirs).output().unwrap();
    let finished = tool.stop();
    assert_eq!(opens_of(&finished, &mine).len(), 1);
    assert!(opens_of(&finished, &theirs).is_empty());
    assert!(finished
        .json()
        .iter()
        .all(|e| e["pid"] == std::process::id()));
}

#[test]
fn opensnoop_full_path_resolves_relative_opens_against_the_cwd() {
    let dir = scratch_dir("os-F");
    fs::create_dir_all(dir.join("sub")).unwrap();
    fs::write(dir.join("sub/file"), b"x").unwrap();
    let plain = start(&["--json", "-n", "cat"]);
    let full = start(&["--json", "-F", "-n", "cat"]);
    let status = Command::new("cat")
        .arg("sub/../sub/file")
        .current_dir(&dir)
        .output()
        .unwrap()
        .status;
    assert!(status.success());
    let (plain, full) = (plain.stop(), full.stop());
    assert_eq!(opens_of(&plain, Path::new("sub/../sub/file")).len(), 1);
    let absolute = dir.join("sub/../sub/file");
    assert_eq!(opens_of(&full, &absolute).len(), 1, "{:?}", full.stdout);
}

#[test]
fn opensnoop_flag_filter_keeps_only_matching_opens() {
    let dir = scratch_dir("os-f");
    let created = dir.join("created");
    let read = dir.join("read");
    fs::write(&read, b"x").unwrap();
    let tool = start(&["--json", "-e", "-f", "O_CREAT", "-p", &me()]);
    let _r = File::open(&read).unwrap();
    let _c = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o640)
        .open(&created)
        .unwrap();
    let finished = tool.stop();
    let hits = opens_of(&finished, &created);
    assert_eq!(hits.len(), 1, "{:?}", finished.stdout);
    assert_ne!(hits[0]["flags"].as_i64().unwrap() & libc::O_CREAT as i64, 0);
    assert_eq!(hits[0]["mode"], 0o640);
    assert!(opens_of(&finished, &read).is_empty());
}

#[test]
fn opensnoop_sees_creat_and_openat2() {
    let dir = scratch_dir("os-c");
    let via_creat = dir.join("via-creat");
    let via_openat2 = dir.join("via-openat2");
    fs::write(&via_openat2, b"x").unwrap();
    let tool = start(&["--json", "-p", &me()]);
    let c1 = CString::new(via_creat.to_str().unwrap()).unwrap();
    let c2 = CString::new(via_openat2.to_str().unwrap()).unwrap();
    // SAFETY: valid C strings and a zeroed open_how of the size passed.
    unsafe {
        let fd = libc::creat(c1.as_ptr(), 0o600);
        assert!(fd >= 0);
        libc::close(fd);
        let mut how: libc::open_how = std::mem::zeroed();
        how.flags = libc::O_RDONLY as u64;
        let fd = libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c2.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        );
        assert!(fd >= 0, "openat2: {}", std::io::Error::last_os_error());
        libc::close(fd as i32);
    }
    let finished = tool.stop();
    let creat = opens_of(&finished, &via_creat);
    assert_eq!(creat.len(), 1, "{:?}", finished.stdout);
    let want = (libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC) as i64;
    assert_eq!(creat[0]["flags"].as_i64().unwrap() & want, want);
    assert_eq!(creat[0]["mode"], 0o600);
    assert_eq!(opens_of(&finished, &via_openat2).len(), 1);
}

#[test]
fn opensnoop_exec_traces_only_the_command_and_ends_with_it() {
    let dir = scratch_dir("os-exec");
    let target = dir.join("target");
    let other = dir.join("other");
    fs::write(&target, b"x").unwrap();
    fs::write(&other, b"x").unwrap();
    require_root();
    let started = Instant::now();
    let tool = Traced::start(
        BIN,
        &[
            "--json",
            "--exec",
            "sh",
            "-c",
            &format!("sleep 0.5; cat {}", target.display()),
        ],
    );
    let _f = File::open(&other).unwrap();
    let finished = tool.wait(Duration::from_secs(20));
    assert!(finished.status.success(), "{finished:?}");
    assert!(started.elapsed() < Duration::from_secs(15));
    let hits = opens_of(&finished, &target);
    assert_eq!(hits.len(), 1, "{:?}", finished.stdout);
    assert_eq!(hits[0]["comm"], "cat");
    assert!(opens_of(&finished, &other).is_empty());
}

#[test]
fn opensnoop_duration_ends_tracing() {
    require_root();
    let started = Instant::now();
    let tool = Traced::start(BIN, &["-d", "1", "-p", &me()]);
    let finished = tool.wait(Duration::from_secs(15));
    assert!(finished.status.success(), "{finished:?}");
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert!(
        finished.stdout[0].starts_with("PID"),
        "{:?}",
        finished.stdout
    );
}

#[test]
fn opensnoop_text_columns_follow_bcc() {
    let dir = scratch_dir("os-txt");
    let missing = dir.join("missing");
    let tool = start(&["-T", "-U", "-e", "-p", &me()]);
    assert!(File::open(&missing).is_err());
    let finished = tool.stop();
    let header: Vec<&str> = finished.stdout[0].split_whitespace().collect();
    assert_eq!(
        header,
        ["TIME", "UID", "PID", "COMM", "FD", "ERR", "FLAGS", "MODE", "PATH"]
    );
    let line = finished
        .stdout
        .iter()
        .find(|l| l.ends_with(missing.to_str().unwrap()))
        .unwrap_or_else(|| panic!("{:?}", finished.stdout));
    let cols: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cols[1], "0");
    assert_eq!(cols[2], me());
    assert_eq!(&cols[4..6], ["-1", "2"]);
}

#[test]
fn opensnoop_cgroup_filter_keeps_only_that_cgroup() {
    require_root();
    let dir = scratch_dir("os-cg");
    let (inside, outside) = (dir.join("inside"), dir.join("outside"));
    fs::write(&inside, b"x").unwrap();
    fs::write(&outside, b"x").unwrap();
    let cg = testkit::cgroup2_root().join(unique("os-cg-"));
    fs::create_dir(&cg).unwrap();
    let tool = Traced::start(BIN, &["--json", "-c", cg.to_str().unwrap()]);
    // The shell moves itself into the cgroup, then its cat opens the file.
    let status = Command::new("sh")
        .arg("-c")
        .arg(r#"echo $$ > "$0/cgroup.procs" && cat "$1""#)
        .arg(&cg)
        .arg(&inside)
        .output()
        .unwrap()
        .status;
    assert!(status.success());
    Command::new("cat").arg(&outside).output().unwrap();
    let finished = tool.stop();
    // The record's header carries the cgroup's id: its directory's inode.
    let id = fs::metadata(&cg).map(|m| m.ino());
    let _ = fs::remove_dir(&cg);
    let seen = opens_of(&finished, &inside);
    assert_eq!(seen.len(), 1, "{:?}", finished.stdout);
    assert_eq!(seen[0]["cgroup_id"], id.unwrap(), "{:?}", seen[0]);
    assert!(opens_of(&finished, &outside).is_empty());
}

#[test]
fn opensnoop_names_each_opens_container_and_pod() {
    require_root();
    let dir = scratch_dir("os-ctr");
    let (a, b, c) = (dir.join("docker"), dir.join("pod"), dir.join("host"));
    for f in [&a, &b, &c] {
        fs::write(f, b"x").unwrap();
    }
    let (docker, pod) = (
        testkit::FakeContainer::docker(),
        testkit::FakeContainer::kubernetes(),
    );
    let json = Traced::start(BIN, &["--containers", "--json", "-n", "cat"]);
    let text = Traced::start(BIN, &["--containers", "-n", "cat"]);
    assert!(docker.run(r#"cat "$1""#, &[a.to_str().unwrap()]).success());
    assert!(pod.run(r#"cat "$1""#, &[b.to_str().unwrap()]).success());
    Command::new("cat").arg(&c).output().unwrap();
    let (json, text) = (json.stop(), text.stop());
    let one = |path: &Path| {
        let seen = opens_of(&json, path);
        assert_eq!(seen.len(), 1, "{:?}", json.stdout);
        seen[0].clone()
    };
    let (ea, eb, ec) = (one(&a), one(&b), one(&c));
    assert_eq!(ea["container"], docker.short_id());
    assert_eq!(ea["pod"], Value::Null);
    assert!(ea["cgroup"]
        .as_str()
        .unwrap()
        .ends_with(&format!("docker-{}.scope", docker.id)));
    assert_eq!(eb["container"], pod.short_id());
    assert_eq!(eb["pod"], pod.pod.as_deref().unwrap());
    assert_eq!(ec["container"], Value::Null, "{ec}");
    assert_ne!(ec["cgroup_id"], ea["cgroup_id"]);
    // The text table's first column: the short id, on the line of its file.
    assert!(
        text.stdout[0].starts_with("CONTAINER    PID"),
        "{:?}",
        text.stdout
    );
    for (path, id) in [(&a, docker.short_id()), (&b, pod.short_id())] {
        let line = text
            .stdout
            .iter()
            .find(|l| l.ends_with(path.to_str().unwrap()));
        assert!(line.is_some_and(|l| l.starts_with(id)), "{:?}", text.stdout);
    }
}

#[test]
fn opensnoop_container_and_unit_filters_keep_theirs_only() {
    require_root();
    let dir = scratch_dir("os-sel");
    let (a, b, c) = (dir.join("docker"), dir.join("pod"), dir.join("unit"));
    for f in [&a, &b, &c] {
        fs::write(f, b"x").unwrap();
    }
    let (docker, pod, unit) = (
        testkit::FakeContainer::docker(),
        testkit::FakeContainer::kubernetes(),
        testkit::FakeContainer::unit("bars-test"),
    );
    // The unit by its name without the type: `.service` is implied.
    let full = unit.unit.as_deref().unwrap();
    let unit_name = full.strip_suffix(".service").unwrap();
    let by_container = Traced::start(
        BIN,
        &["--json", "-n", "cat", "--container", docker.short_id()],
    );
    let by_unit = Traced::start(
        BIN,
        &["--json", "--containers", "-n", "cat", "--unit", unit_name],
    );
    for (who, path) in [(&docker, &a), (&pod, &b), (&unit, &c)] {
        assert!(who.run(r#"cat "$1""#, &[path.to_str().unwrap()]).success());
    }
    let (by_container, by_unit) = (by_container.stop(), by_unit.stop());
    let counts = |f: &Finished| [&a, &b, &c].map(|p| opens_of(f, p).len());
    assert_eq!(
        counts(&by_container),
        [1, 0, 0],
        "{:?}",
        by_container.stdout
    );
    assert_eq!(counts(&by_unit), [0, 0, 1], "{:?}", by_unit.stdout);
    // A unit's cgroup is named by the unit: the CONTAINER column's label.
    let e = &opens_of(&by_unit, &c)[0];
    assert_eq!(e["unit"], full, "{e}");
    assert_eq!(e["container"], Value::Null, "{e}");
}

#[test]
fn opensnoop_a_container_gone_while_tracing_keeps_its_name() {
    require_root();
    let dir = scratch_dir("os-gone");
    let (before, after) = (dir.join("before"), dir.join("after"));
    for f in [&before, &after] {
        fs::write(f, b"x").unwrap();
    }
    let docker = testkit::FakeContainer::docker();
    let id = docker.short_id().to_string();
    let tool = Traced::start(BIN, &["--containers", "--json", "-n", "cat"]);
    assert!(docker
        .run(r#"cat "$1""#, &[before.to_str().unwrap()])
        .success());
    // Named while it exists; then the cgroup is removed.
    std::thread::sleep(Duration::from_millis(300));
    drop(docker);
    Command::new("cat").arg(&after).output().unwrap();
    let finished = tool.stop();
    assert!(finished.status.success(), "{finished:?}");
    assert!(!finished.stderr.contains("error"), "{:?}", finished.stderr);
    assert_eq!(opens_of(&finished, &before)[0]["container"], id.as_str());
    assert_eq!(opens_of(&finished, &after)[0]["container"], Value::Null);
}

#[test]
fn opensnoop_container_and_unit_names_that_match_nothing_or_many_are_refused() {
    require_root();
    // Two containers whose ids share their first digits (a count of this
    // process's containers comes first).
    let (one, two) = (
        testkit::FakeContainer::docker(),
        testkit::FakeContainer::docker(),
    );
    let shared = &one.id[..2];
    assert_eq!(&two.id[..2], shared);
    for (args, says) in [
        (&["--container", "fffffffffffe"][..], "no container"),
        (&["--container", "not-hex"], "not a container id"),
        (&["--container", shared], "cgroups match"),
        (&["--unit", "no-such-unit-here"], "no cgroup of a unit"),
        (&["--unit", "a/b"], "not a unit name"),
    ] {
        let f = run(BIN, args);
        assert_eq!(f.status.code(), Some(2), "{args:?}: {f:?}");
        assert_eq!(f.stderr.lines().count(), 1, "{args:?}: {}", f.stderr);
        assert!(f.stderr.contains(says), "{args:?}: {}", f.stderr);
    }
    // One cgroup: a path and a container at once is a usage error.
    let root = testkit::cgroup2_root();
    let f = run(BIN, &["-c", root.to_str().unwrap(), "--container", &one.id]);
    assert_eq!(f.status.code(), Some(2), "{f:?}");
    assert!(f.stderr.contains("cannot be used"), "{}", f.stderr);
    // Each container of the ambiguous prefix is named.
    let f = run(BIN, &["--container", shared]);
    for c in [&one, &two] {
        assert!(f.stderr.contains(&c.id), "{}", f.stderr);
    }
}

#[test]
fn opensnoop_piped_into_head_exits_at_once() {
    require_root();
    // Filtered on an idle process, the tool prints nothing after its header:
    // only noticing that head has gone can end it, not a failed write.
    let mut idle = Command::new("sleep").arg("60").spawn().unwrap();
    let took = time_piped_into_head(BIN, &["-p", &idle.id().to_string()]);
    let _ = idle.kill();
    let _ = idle.wait();
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

#[test]
fn opensnoop_rejects_bad_arguments() {
    for (args, needle) in [
        (&["-p", "notapid"][..], "notapid"),
        (&["-t", "0"], "0"),
        (&["-d", "0"], "greater than zero"),
        (&["-f", "O_BOGUS"], "O_BOGUS"),
        (&["-u", "no-such-user-xyz"], "no-such-user-xyz"),
    ] {
        let finished = run(BIN, args);
        assert_eq!(finished.status.code(), Some(2), "{args:?}: {finished:?}");
        assert!(
            finished.stderr.contains(needle),
            "{args:?}: {}",
            finished.stderr
        );
    }
    let finished = run(BIN, &["--exec", "/no/such/program-xyz"]);
    assert_eq!(finished.status.code(), Some(1), "{finished:?}");
    assert!(
        finished.stderr.contains("/no/such/program-xyz"),
        "{}",
        finished.stderr
    );
}

/// The programs `--dry-run -F` loads with `disable` in BPFTOOLS_DISABLE.
fn dry_run_listing(disable: &str) -> String {
    let dry = Command::new(BIN)
        .args(["--dry-run", "-F"])
        .env("BPFTOOLS_DISABLE", disable)
        .output()
        .unwrap();
    assert!(dry.status.success(), "{dry:?}");
    String::from_utf8_lossy(&dry.stdout).into_owned()
}

#[test]
fn opensnoop_dry_run_loads_without_attaching() {
    require_root();
    // One program on sys_exit as tp_btf (it detaches at once; -F walks
    // in it).
    let out = dry_run_listing("");
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(out.contains("tp_btf sys_exit (open_btf_exit)"), "{out}");
    // Without tp_btf: the classic exit tracepoints.
    let out = dry_run_listing("tp_btf");
    for hook in [
        "sys_exit_open ",
        "sys_exit_openat ",
        "sys_exit_openat2",
        "sys_exit_creat",
    ] {
        assert!(out.contains(hook), "{hook} missing: {out}");
    }
    assert!(out.contains("(open_walk_dirs)"), "{out}");
    assert!(!out.contains("open_btf_"), "{out}");
}

/// Runs opensnoop -F with `disable` in BPFTOOLS_DISABLE and checks that it
/// sees cat open a relative path, resolved.
fn sees_a_relative_open_with(disable: &str) {
    let dir = scratch_dir("os-fallback");
    fs::create_dir_all(dir.join("sub")).unwrap();
    fs::write(dir.join("sub/file"), b"x").unwrap();
    let tool = Traced::start_command(
        Command::new(BIN)
            .args(["--json", "-F", "-n", "cat"])
            .env("BPFTOOLS_DISABLE", disable),
    );
    Command::new("cat")
        .arg("sub/file")
        .current_dir(&dir)
        .output()
        .unwrap();
    let finished = tool.stop();
    let hits = opens_of(&finished, &dir.join("sub/file"));
    assert_eq!(hits.len(), 1, "{disable}: {:?}", finished.stdout);
    assert_eq!(hits[0]["comm"], "cat");
    assert!(hits[0]["fd"].as_i64().unwrap() >= 0);
}

/// The default: tp_btf sys_exit, walking -F's directories itself.
#[test]
fn opensnoop_btf_sys_exit_resolves_relative_paths() {
    require_root();
    sees_a_relative_open_with("");
}

/// Without tp_btf, the classic exit tracepoints with the arguments from
/// bpf_task_pt_regs (5.15+).
#[test]
fn opensnoop_classic_tracepoints_work_too() {
    require_root();
    sees_a_relative_open_with("tp_btf");
}

/// Without tp_btf or bpf_task_pt_regs: the entry+exit variant.
#[test]
fn opensnoop_entry_exit_fallback_works_too() {
    require_root();
    let listing = dry_run_listing("tp_btf,task_pt_regs");
    assert!(listing.contains("(open_enter_openat)"), "{listing}");
    assert!(!listing.contains("open_regs_"), "{listing}");
    sees_a_relative_open_with("tp_btf,task_pt_regs");
}

/// The tool's child processes (its started command), from /proc.
fn children_of(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// opensnoop on this process with stdout and stderr piped to the test,
/// attached, and a file to open: for tests of a reader that lags.
fn piped_on_me(tag: &str) -> (std::process::Child, PathBuf) {
    use std::process::Stdio;
    let target = scratch_dir(tag).join("target");
    fs::write(&target, b"x").unwrap();
    let tool = Command::new(BIN)
        .args(["-p", &me()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while testkit::program_ids_of(tool.id()).is_empty() {
        std::thread::sleep(Duration::from_millis(10));
    }
    (tool, target)
}

#[test]
fn opensnoop_stalled_reader_still_stops_and_counts_what_it_dropped() {
    require_root();
    // stdout is a pipe nobody reads: it fills, and writes block.
    let (mut tool, target) = piped_on_me("os-stall");
    let stdout = tool.stdout.take().unwrap();
    // Far more lines than a pipe holds: the tool blocks writing them.
    let until = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < until {
        for _ in 0..1000 {
            let _ = File::open(&target);
        }
    }
    // SAFETY: kill with our child's pid.
    unsafe { libc::kill(tool.id() as i32, libc::SIGINT) };
    let asked = Instant::now();
    let status = loop {
        if let Some(s) = tool.try_wait().unwrap() {
            break s;
        }
        assert!(
            asked.elapsed() < Duration::from_secs(10),
            "blocked on its stdout after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    drop(stdout);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut tool.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("lines of output dropped"), "{stderr}");
}

#[test]
fn opensnoop_slow_reader_hears_of_lost_events_during_the_run() {
    require_root();
    use std::io::{BufRead, BufReader, Read};
    let (mut tool, target) = piped_on_me("os-slow");
    let mut stdout = tool.stdout.take().unwrap();
    // A reader that keeps up with ~1000 lines a second, not with a storm.
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 1024];
        while stdout.read(&mut buf).is_ok_and(|n| n > 0) {
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let (tx, notes) = std::sync::mpsc::channel();
    let stderr = tool.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let until = Instant::now() + Duration::from_secs(4);
    let mut heard = None;
    while Instant::now() < until && heard.is_none() {
        for _ in 0..1000 {
            let _ = File::open(&target);
        }
        heard = notes.try_iter().find(|l| l.contains("so far"));
    }
    // SAFETY: kill with our child's pid.
    unsafe { libc::kill(tool.id() as i32, libc::SIGINT) };
    let status = tool.wait().unwrap();
    let _ = reader.join();
    let note = heard.expect("no lost-event notice while the tool was running");
    assert!(note.contains("events lost"), "{note}");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn opensnoop_exec_reports_a_command_that_cannot_run() {
    require_root();
    let f = run(BIN, &["--exec", "/etc/passwd"]);
    assert_eq!(f.status.code(), Some(1), "{f:?}");
    assert!(f.stderr.contains("cannot run /etc/passwd"), "{}", f.stderr);
    let f = run(BIN, &["--exec", "/no/such/program-xyz"]);
    assert_eq!(f.status.code(), Some(1), "{f:?}");
}

#[test]
fn opensnoop_exec_exits_with_the_commands_status() {
    require_root();
    let f = run(BIN, &["--exec", "sh", "-c", "exit 3"]);
    assert_eq!(f.status.code(), Some(3), "{f:?}");
    let f = run(BIN, &["--exec", "sh", "-c", "kill -TERM $$"]);
    assert_eq!(f.status.code(), Some(128 + libc::SIGTERM), "{f:?}");
}

#[test]
fn opensnoop_stop_signal_ends_the_started_command_too() {
    require_root();
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let tool = Traced::start(BIN, &["--exec", "sleep", "78"]);
        let children = children_of(tool.pid());
        assert_eq!(children.len(), 1, "{children:?}");
        // Released and running: its comm is the command's.
        let comm = format!("/proc/{}/comm", children[0]);
        let deadline = Instant::now() + Duration::from_secs(10);
        while fs::read_to_string(&comm).unwrap_or_default().trim() != "sleep" {
            assert!(Instant::now() < deadline, "the command never started");
            std::thread::sleep(Duration::from_millis(5));
        }
        let finished = tool.signal(sig);
        assert!(
            !std::path::Path::new(&format!("/proc/{}", children[0])).exists(),
            "signal {sig}: the command still runs: {finished:?}"
        );
        assert_eq!(finished.status.code(), Some(128 + sig), "{finished:?}");
    }
}

#[test]
fn opensnoop_json_shows_a_hostile_comm_escaped() {
    use testkit::contract::{holds_raw_controls, HOSTILE_NAME};
    let dir = scratch_dir("os-hostile");
    let target = dir.join("opened");
    fs::write(&target, b"x").unwrap();
    let shell = testkit::unique_copy_named(HOSTILE_NAME, "/bin/sh");
    let tool = start(&["--json"]);
    let status = Command::new(&shell)
        .arg("-c")
        .arg(format!(": < {}", target.display()))
        .status()
        .unwrap();
    assert!(status.success());
    let finished = stop_and_check_unloaded(tool);
    let opens = opens_of(&finished, &target);
    assert_eq!(opens.len(), 1, "{:?}", finished.stdout);
    assert_eq!(opens[0]["comm"], HOSTILE_NAME);
    let line = finished
        .stdout
        .iter()
        .find(|l| l.contains("os-hostile"))
        .unwrap();
    assert!(!holds_raw_controls(line), "{line:?}");
    assert!(line.contains(r#""comm":"x\u202ey\u009bz\u007f""#), "{line}");
}

#[test]
fn opensnoop_containers_give_the_pid_the_namespace_sees() {
    require_root();
    let dir = scratch_dir("os-nspid");
    let file = dir.join("nspid");
    fs::write(&file, b"x").unwrap();
    let tool = Traced::start(BIN, &["--containers", "--json", "-n", "cat"]);
    // The namespace's first process: sh, which execs cat.
    let status = Command::new("unshare")
        .args(["--pid", "--fork", "sh", "-c", r#"exec cat "$0""#])
        .arg(&file)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let finished = tool.stop();
    let seen = opens_of(&finished, &file);
    assert_eq!(seen.len(), 1, "{:?}", finished.stdout);
    assert_eq!(seen[0]["ns_pid"], 1, "{}", seen[0]);
    assert_ne!(seen[0]["pid"], 1, "{}", seen[0]);
    // Without --containers there is no such key.
    let plain = Traced::start(BIN, &["--json", "-n", "cat"]);
    Command::new("cat").arg(&file).output().unwrap();
    let plain = plain.stop();
    let seen = opens_of(&plain, &file);
    assert_eq!(seen.len(), 1, "{:?}", plain.stdout);
    assert!(seen[0].get("ns_pid").is_none(), "{}", seen[0]);
}
