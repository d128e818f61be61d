//! execsnoop against real execs. Root only: these load BPF programs.

use std::ffi::CString;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use testkit::{
    require_root, run, stop_and_check_unloaded, time_piped_into_head, unique_program, Finished,
    Traced,
};

const BIN: &str = env!("CARGO_BIN_EXE_execsnoop");

fn start(args: &[&str]) -> Traced {
    require_root();
    Traced::start(BIN, args)
}

/// Events whose first argument is `program`.
fn execs_of(finished: &Finished, program: &Path) -> Vec<Value> {
    let program = program.to_str().unwrap();
    finished
        .json()
        .into_iter()
        .filter(|e| e["args"][0] == program)
        .collect()
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect()
}

#[test]
fn execsnoop_shows_exec_with_pid_ppid_and_arguments() {
    let prog = unique_program("es");
    let tool = start(&["--json"]);
    let mut child = Command::new(&prog)
        .args(["alpha", "beta gamma"])
        .spawn()
        .unwrap();
    let pid = child.id();
    child.wait().unwrap();
    let finished = stop_and_check_unloaded(tool);
    assert!(finished.status.success(), "{finished:?}");

    let events = execs_of(&finished, &prog);
    assert_eq!(events.len(), 1, "{events:?}");
    let e = &events[0];
    assert_eq!(e["pid"], pid);
    assert_eq!(e["ppid"], std::process::id());
    assert_eq!(e["ret"], 0);
    assert_eq!(e["uid"], 0);
    assert_eq!(e["comm"], prog.file_name().unwrap().to_str().unwrap());
    assert_eq!(
        strings(&e["args"]),
        [prog.to_str().unwrap(), "alpha", "beta gamma"]
    );
    assert_eq!(e["truncated"], false);
}

#[test]
fn execsnoop_hides_failed_exec_unless_asked() {
    let missing = Path::new("/nonexistent-dir-for-execsnoop")
        .join(unique_program("esx").file_name().unwrap());
    let marker = unique_program("esm");
    let with_x = start(&["--json", "-x"]);
    let without = start(&["--json"]);
    assert!(Command::new(&missing).spawn().is_err());
    Command::new(&marker).status().unwrap();
    let with_x = with_x.stop();
    let without = without.stop();

    let failed = execs_of(&with_x, &missing);
    assert_eq!(failed.len(), 1, "{:?}", with_x.stdout);
    assert_eq!(failed[0]["ret"], -2, "ENOENT is reported as -2");
    assert_eq!(execs_of(&without, &marker).len(), 1);
    assert!(execs_of(&without, &missing).is_empty());
}

#[test]
fn execsnoop_sees_fexecve_through_execveat() {
    let prog = unique_program("esf");
    let path = CString::new(prog.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string; the fd is inherited by the child below.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY) };
    assert!(fd >= 0);
    let argv: Vec<CString> = ["fexecve-arg0", "via-execveat"]
        .iter()
        .map(|s| CString::new(*s).unwrap())
        .collect();
    let tool = start(&["--json"]);
    let mut cmd = Command::new("/bin/false");
    // SAFETY: fexecve is async-signal-safe; argv is prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
            ptrs.push(std::ptr::null());
            let envp = [std::ptr::null()];
            libc::fexecve(fd, ptrs.as_ptr(), envp.as_ptr());
            Err(std::io::Error::last_os_error())
        });
    }
    let status = cmd.status().unwrap();
    assert!(
        status.success(),
        "the fexecve'd /bin/true copy must succeed"
    );
    let finished = tool.stop();
    // SAFETY: closing the fd opened above.
    unsafe { libc::close(fd) };

    let events: Vec<Value> = finished
        .json()
        .into_iter()
        .filter(|e| e["args"][1] == "via-execveat")
        .collect();
    assert_eq!(events.len(), 1, "{:?}", finished.stdout);
    assert_eq!(
        strings(&events[0]["args"]),
        ["fexecve-arg0", "via-execveat"]
    );
    assert_eq!(events[0]["ret"], 0);
}

#[test]
fn execsnoop_truncates_at_max_args_with_ellipsis() {
    let prog = unique_program("est");
    let args: Vec<String> = (0..25).map(|i| format!("a{i:02}")).collect();
    let tool = start(&[]);
    Command::new(&prog).args(&args).status().unwrap();
    let finished = tool.stop();
    let line = finished
        .stdout
        .iter()
        .find(|l| l.contains(prog.to_str().unwrap()))
        .unwrap_or_else(|| panic!("no line for {prog:?}: {:?}", finished.stdout));
    // argv[0] and a00..a18 are the 20 captured arguments.
    assert!(line.ends_with(" a18 ..."), "{line}");
    assert!(!line.contains("a19"), "{line}");
    assert!(finished.stdout[0].contains("PCOMM") && finished.stdout[0].ends_with("ARGS"));

    let tool = start(&["--json", "--max-args", "3"]);
    Command::new(&prog).args(&args).status().unwrap();
    let finished = tool.stop();
    let events = execs_of(&finished, &prog);
    assert_eq!(
        strings(&events[0]["args"]),
        [prog.to_str().unwrap(), "a00", "a01"]
    );
    assert_eq!(events[0]["truncated"], true);
}

#[test]
fn execsnoop_escapes_control_characters_in_arguments() {
    let prog = unique_program("ese");
    let tool = start(&["-q"]);
    Command::new(&prog)
        .args(["one\ntwo", "tab\there", "say \"hi\""])
        .status()
        .unwrap();
    let finished = tool.stop();
    let line = finished
        .stdout
        .iter()
        .find(|l| l.contains(prog.to_str().unwrap()))
        .unwrap_or_else(|| panic!("no line for {prog:?}: {:?}", finished.stdout));
    assert!(
        line.ends_with(r#" "one\ntwo" "tab\there" "say \"hi\"""#),
        "{line}"
    );
    assert!(!finished.stdout.iter().any(|l| l.starts_with("two")));
}

#[test]
fn execsnoop_filters_by_uid_name_and_argument_line() {
    let as_root = unique_program("esr");
    let as_nobody = unique_program("esn");
    let nobody_comm = as_nobody.file_name().unwrap().to_str().unwrap();

    let by_uid = start(&["--json", "-u", "nobody"]);
    let by_name = start(&["--json", "-n", &format!("^{nobody_comm}$")]);
    let by_line = start(&["--json", "-l", "needle-[0-9]+"]);
    Command::new(&as_root).arg("needle-42").status().unwrap();
    Command::new(&as_nobody)
        .uid(65534)
        .gid(65534)
        .status()
        .unwrap();
    let (by_uid, by_name, by_line) = (by_uid.stop(), by_name.stop(), by_line.stop());

    assert_eq!(
        execs_of(&by_uid, &as_nobody).len(),
        1,
        "{:?}",
        by_uid.stdout
    );
    assert_eq!(execs_of(&by_uid, &as_nobody)[0]["uid"], 65534);
    assert!(execs_of(&by_uid, &as_root).is_empty());

    assert_eq!(execs_of(&by_name, &as_nobody).len(), 1);
    assert!(execs_of(&by_name, &as_root).is_empty());

    let hits = execs_of(&by_line, &as_root);
    assert_eq!(hits.len(), 1, "{:?}", by_line.stdout);
    assert_eq!(hits[0]["args"][1], "needle-42");
    assert!(execs_of(&by_line, &as_nobody).is_empty());
}

#[test]
fn execsnoop_filters_by_parent_pid() {
    let prog = unique_program("esp");
    let mut parent = Command::new("sh")
        .arg("-c")
        .arg("read _; \"$0\" from-the-shell")
        .arg(&prog)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let tool = start(&["--json", "-P", &parent.id().to_string()]);
    Command::new(&prog).arg("from-the-test").status().unwrap();
    drop(parent.stdin.take());
    parent.wait().unwrap();
    let finished = tool.stop();
    let events = execs_of(&finished, &prog);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["args"][1], "from-the-shell");
    assert_eq!(events[0]["ppid"], parent.id());
}

#[test]
fn execsnoop_prints_time_columns() {
    let prog = unique_program("esc");
    let tool = start(&["-T", "-t", "-U", "-C", "-M"]);
    Command::new(&prog).status().unwrap();
    let finished = tool.stop();
    let header: Vec<&str> = finished.stdout[0].split_whitespace().collect();
    assert_eq!(
        header,
        ["TIME", "TIME(s)", "UID", "CPU", "PCOMM", "PID", "PPID", "PPCOMM", "RET", "ARGS"]
    );
    let line = finished
        .stdout
        .iter()
        .find(|l| l.contains(prog.to_str().unwrap()))
        .unwrap();
    let cols: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cols[0].len(), 8, "HH:MM:SS: {line}");
    let secs: f64 = cols[1].parse().unwrap();
    assert!((0.0..60.0).contains(&secs), "{line}");
    assert_eq!(cols[2], "0");
    assert_eq!(cols[6], std::process::id().to_string());
}

#[test]
fn execsnoop_names_the_container_of_each_exec() {
    let docker = testkit::FakeContainer::docker();
    let pod = testkit::FakeContainer::kubernetes();
    let (a, b, c) = (
        unique_program("ctr-d"),
        unique_program("ctr-k"),
        unique_program("ctr-h"),
    );
    let tool = start(&["--containers", "--json"]);
    assert!(docker.run(r#""$1""#, &[a.to_str().unwrap()]).success());
    assert!(pod.run(r#""$1""#, &[b.to_str().unwrap()]).success());
    assert!(Command::new(&c).status().unwrap().success());
    let finished = tool.stop();
    let one = |p: &Path| {
        let seen = execs_of(&finished, p);
        assert_eq!(seen.len(), 1, "{:?}", finished.stdout);
        seen[0].clone()
    };
    let (ea, eb, ec) = (one(&a), one(&b), one(&c));
    assert_eq!(ea["container"], docker.short_id(), "{ea}");
    assert_eq!(eb["container"], pod.short_id(), "{eb}");
    assert_eq!(eb["pod"], pod.pod.as_deref().unwrap(), "{eb}");
    assert_eq!(ec["container"], Value::Null, "{ec}");
    // The cgroup ids differ, and the container's is its directory's inode.
    use std::os::unix::fs::MetadataExt;
    let ino = std::fs::metadata(&docker.dir).unwrap().ino();
    assert_eq!(ea["cgroup_id"], ino);
    assert_ne!(ec["cgroup_id"], ino);
}

#[test]
fn execsnoop_piped_into_head_exits_at_once() {
    require_root();
    // Filtered on an idle process, the tool prints nothing after its header:
    // only noticing that head has gone can end it, not a failed write.
    let mut idle = Command::new("sleep").arg("60").spawn().unwrap();
    let took = time_piped_into_head(BIN, &["-P", &idle.id().to_string()]);
    let _ = idle.kill();
    let _ = idle.wait();
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

#[test]
fn execsnoop_rejects_bad_arguments() {
    for (args, needle) in [
        (&["--max-args", "-3"][..], "-3"),
        (&["--max-args", "0"], "0"),
        (&["-P", "notapid"], "notapid"),
        (&["-u", "no-such-user-xyz"], "no-such-user-xyz"),
        (&["-c", "/no/such/cgroup"], "/no/such/cgroup"),
    ] {
        let finished = run(BIN, args);
        assert_eq!(finished.status.code(), Some(2), "{args:?}: {finished:?}");
        assert!(
            finished.stderr.contains(needle),
            "{args:?}: {}",
            finished.stderr
        );
    }
}

/// The programs `--dry-run` loads with `disable` in BPFTOOLS_DISABLE.
fn dry_run_listing(disable: &str) -> String {
    let dry = Command::new(BIN)
        .arg("--dry-run")
        .env("BPFTOOLS_DISABLE", disable)
        .output()
        .unwrap();
    assert!(dry.status.success(), "{dry:?}");
    String::from_utf8_lossy(&dry.stdout).into_owned()
}

#[test]
fn execsnoop_dry_run_loads_without_attaching() {
    require_root();
    // sched_process_exec only: nothing runs on other syscalls.
    let out = dry_run_listing("");
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(
        out.contains("tp_btf sched_process_exec (exec_btf_exec)"),
        "{out}"
    );
    let out = dry_run_listing("tp_btf");
    assert!(
        out.contains("sys_enter_execve") && out.contains("sys_exit_execveat"),
        "{out}"
    );
    assert!(!out.contains("exec_btf_"), "{out}");
}

/// Without tp_btf: the syscalls:* tracepoints see an exec with its
/// arguments (cut at --max-args) as the default does.
#[test]
fn execsnoop_classic_tracepoints_work_too() {
    require_root();
    let prog = unique_program("esc");
    let tool = Traced::start_command(
        Command::new(BIN)
            .args(["--json", "--max-args", "3"])
            .env("BPFTOOLS_DISABLE", "tp_btf"),
    );
    Command::new(&prog)
        .args(["classic", "", "three", "four"])
        .status()
        .unwrap();
    let finished = stop_and_check_unloaded(tool);
    let events = execs_of(&finished, &prog);
    assert_eq!(events.len(), 1, "{:?}", finished.stdout);
    assert_eq!(
        strings(&events[0]["args"]),
        [prog.to_str().unwrap(), "classic", ""]
    );
    assert_eq!(events[0]["truncated"], true);
}
