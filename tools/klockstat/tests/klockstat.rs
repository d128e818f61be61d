//! klockstat against a program of the test's own (lock-work.c): a writer
//! holding a pipe's mutex for 20 ms (its write faults on a userfaultfd page
//! answered late) while another waits for it, ten times: ten waits of
//! about 15 ms, on any machine (a VM guest on one host thread contends
//! little otherwise); eight threads writing into one pipe that a ninth
//! drains (every write takes the pipe's mutex: the holds); and eight
//! threads creating and unlinking files in one directory (its i_rwsem,
//! taken for writing).

use std::path::PathBuf;
use std::process::Command;

use common::kernel::probe;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_klockstat");

fn work() -> PathBuf {
    testkit::build_c_program(
        env!("CARGO_MANIFEST_DIR"),
        env!("CARGO_TARGET_TMPDIR"),
        "lock-work",
    )
}

/// The tool (`args`, hooks in `disable` off) on one run of lock-work
/// (`work_args`), tracing its pid; the workload's pid.
fn trace(work_args: &[&str], args: &[&str], disable: &str) -> (testkit::Finished, u32) {
    trace_in(work_args, args, disable, |_| {})
}

/// [`trace`], with `place` given the stopped workload's pid first.
fn trace_in(
    work_args: &[&str],
    args: &[&str],
    disable: &str,
    place: impl FnOnce(u32),
) -> (testkit::Finished, u32) {
    // One tool at a time: kprobes of two tools on one function interleave
    // their handlers, and before 5.13 a stack taken after another's
    // kretprobe took its return address ends there (the VM guests).
    let _one = testkit::one_at_a_time();
    testkit::trace_pid(
        Command::new(work()).args(work_args),
        BIN,
        args,
        disable,
        place,
    )
}

const PIPE: &[&str] = &["pipe", "8", "2000"];
const HELD: &[&str] = &["held", "10"];
const ROUNDS: u64 = 10;
const WRITES: u64 = 2000;

/// The holds the tool said it could not count (its note at exit).
fn unmatched_unlocks(stderr: &str) -> u64 {
    stderr
        .lines()
        .find(|l| l.contains("unlocks without their lock call seen"))
        .and_then(|l| {
            l.strip_prefix("klockstat: ")?
                .split(' ')
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// A table's rows, in the order printed.
fn table<'a>(rows: &'a [Value], name: &str) -> Vec<&'a Value> {
    rows.iter().filter(|r| r["table"] == name).collect()
}

/// The function names of a row's stack (`anon_pipe_write+0x43`: the
/// name).
fn functions(row: &Value) -> Vec<String> {
    row["stack"]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|f| f.as_str().unwrap().split('+').next().unwrap().to_string())
        .collect()
}

/// The pipe's writers and reader (pipe_write, anon_pipe_write on 6.16+).
fn in_pipe_code(row: &Value) -> bool {
    functions(row)
        .first()
        .is_some_and(|f| f.ends_with("pipe_write") || f.ends_with("pipe_read"))
}

/// Each row was the workload's, and its figures add up.
fn check_rows(rows: &[&Value], pid: u32) {
    for r in rows {
        assert_eq!(r["max_pid"], pid, "{r}");
        assert_eq!(r["max_comm"], "lock-work", "{r}");
        let count = r["count"].as_u64().unwrap();
        let total = r["total_ns"].as_u64().unwrap();
        let avg = r["avg_ns"].as_u64().unwrap();
        let max = r["max_ns"].as_u64().unwrap();
        assert!(count >= 1, "{r}");
        assert!(avg * count <= total && total < (avg + 1) * count, "{r}");
        assert!(max <= total && max >= avg, "{r}");
        assert!(r["max_lock"].as_str().unwrap().starts_with("0x"), "{r}");
    }
}

/// The waits of the held workload: the pipe's writer at the top by the
/// longest wait (the default order), waiting on a mutex in most rounds
/// (a loaded TCG guest made the writer late for the holder's hold in 2 of
/// 10), about 15 ms each (before 5.19 the lock calls' time is the wait,
/// and other calls may outnumber them).
fn check_pipe_waits(f: &testkit::Finished, pid: u32) {
    let rows = f.json();
    let waits = table(&rows, "wait");
    assert!(!waits.is_empty(), "{f:?}");
    check_rows(&waits, pid);
    let top = waits[0];
    assert!(in_pipe_code(top), "{top}");
    assert_eq!(top["kind"], "mutex", "{top}");
    assert!(top["count"].as_u64().unwrap() >= ROUNDS / 2, "{top}");
    assert!(top["max_ns"].as_u64().unwrap() >= 10_000_000, "{top}");
}

#[test]
fn klockstat_shows_the_pipe_writers_waiting_on_its_mutex() {
    let (f, pid) = trace(HELD, &["--json", "-s", "4"], "");
    check_pipe_waits(&f, pid);
    // Four frames: the caller, then what called it (the write system call).
    let top = &table(&f.json(), "wait")[0].clone();
    let frames = functions(top);
    assert!(frames.len() >= 2 && frames.len() <= 4, "{top}");
    assert!(
        frames
            .iter()
            .any(|f| f.contains("vfs_write") || f.contains("vfs_read")),
        "{top}"
    );
}

/// libbpf-tools' tables: a header over each row with -s 2 or more, the
/// caller's frames, and who waited longest on which lock; -c keeps only
/// the callers named so.
#[test]
fn klockstat_prints_libbpf_tools_tables() {
    let (f, _) = trace(HELD, &["--json", "-n", "1"], "");
    let caller = functions(table(&f.json(), "wait")[0])[0].clone();
    let (f, pid) = trace(HELD, &["-s", "3", "-c", &caller], "");
    let out = &f.stdout;
    assert_eq!(
        out[0], "Tracing mutex/sem lock events...  Hit Ctrl-C to end",
        "{f:?}"
    );
    assert_eq!(
        out.last().unwrap(),
        "Exiting trace of mutex/sem locks",
        "{f:?}"
    );
    let header = "                               Caller  Avg Wait    Count   Max Wait   Total Wait";
    let starts: Vec<usize> = (0..out.len()).filter(|i| out[*i] == header).collect();
    assert!(!starts.is_empty(), "{f:?}");
    for i in starts {
        assert_eq!(out[i - 1], "", "{f:?}");
        let row: Vec<&str> = out[i + 1].split_whitespace().collect();
        assert!(row[0].starts_with(&format!("{caller}+0x")), "{f:?}");
        assert_eq!(out[i + 1].find(row[0]).unwrap() + row[0].len(), 37, "{f:?}");
        // The caller's callers, right-aligned, then the longest wait's.
        assert!(out[i + 2].len() == 37 && out[i + 3].len() == 37, "{f:?}");
        let max = format!("                              Max PID {pid}, COMM lock-work, Lock ");
        assert!(out[i + 4].starts_with(&max), "{f:?}");
        assert!(
            out[i + 4].ends_with(')') && out[i + 4].contains("(0x"),
            "{f:?}"
        );
    }
}

/// Each variant of the contention tracepoints (raw_tp, the classic one)
/// sees the same waits.
#[test]
fn klockstat_hook_variants() {
    let present = probe::tracepoint_exists("lock", "contention_begin");
    if !testkit::feature_present(present, "the lock:contention tracepoints", Some((5, 19))) {
        return;
    }
    // Without kprobes (the holds' test has them): attaching two dozen
    // kprobes takes most of a minute in the VM guests.
    for (disable, hook) in [
        ("tp_btf,kprobe", "raw_tp contention_begin"),
        ("tp_btf,raw_tp,kprobe", "tracepoint lock:contention_begin"),
    ] {
        let (f, pid) = trace(HELD, &["--json", "-v"], disable);
        assert!(f.stderr.contains(hook), "{hook}: {}", f.stderr);
        check_pipe_waits(&f, pid);
    }
}

/// -L: one lock, by the address a first run showed: the directory's
/// i_rwsem, which each create and unlink takes for writing.
#[test]
fn klockstat_traces_one_lock_by_its_address() {
    let dir = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR")).join("lock-dir");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // Held open: the directory's inode, and its lock, stay where they are.
    let _pinned = std::fs::File::open(&dir).unwrap();
    let d = dir.to_str().unwrap();
    let work = ["dir", d, "8", "2000"];
    let (f, _) = trace(&work, &["--json", "-s", "4"], "");
    let rows = f.json();
    let unlinks: Vec<&Value> = table(&rows, "wait")
        .into_iter()
        .filter(|r| functions(r).iter().any(|f| f == "do_unlinkat"))
        .filter(|r| r["kind"] == "rwsem-write")
        .collect();
    assert!(!unlinks.is_empty(), "{f:?}");
    let lock = unlinks[0]["max_lock"].as_str().unwrap().to_string();
    let (f, pid) = trace(&work, &["--json", "-s", "4", "-L", &lock], "");
    let rows = f.json();
    let all: Vec<&Value> = rows.iter().collect();
    assert!(!table(&rows, "wait").is_empty(), "{f:?}");
    check_rows(&all, pid);
    for r in &all {
        assert_eq!(r["max_lock"], lock.as_str(), "{r}");
        assert_eq!(r["kind"], "rwsem-write", "{r}");
    }
}

/// -P: a row per thread of the workload, no stacks; the thread that
/// waited each round among them.
#[test]
fn klockstat_by_thread() {
    let (f, pid) = trace(HELD, &["--json", "-P"], "");
    let rows = f.json();
    let waits = table(&rows, "wait");
    check_rows(&waits, pid);
    // The main thread's second write waits each round for the writer
    // that faults.
    let main = waits
        .iter()
        .find(|r| r["tid"] == pid)
        .expect("the main thread's row");
    assert!(main["count"].as_u64().unwrap() >= ROUNDS, "{main}");
    assert!(main["max_ns"].as_u64().unwrap() >= 10_000_000, "{main}");
    for r in &waits {
        assert_eq!(r["comm"], "lock-work", "{r}");
        assert!(r.get("stack").is_none(), "{r}");
    }
}

/// --containers: each row is a container's, named; the workload's
/// threads all run in a Docker container of the test's own.
#[test]
fn klockstat_containers_name_the_waiters_container() {
    testkit::require_root();
    let docker = testkit::FakeContainer::docker();
    let (f, pid) = trace_in(HELD, &["--json", "--containers"], "", |p| {
        std::fs::write(docker.dir.join("cgroup.procs"), p.to_string()).unwrap();
    });
    let rows = f.json();
    let waits = table(&rows, "wait");
    check_rows(&waits, pid);
    assert!(in_pipe_code(waits[0]), "{f:?}");
    for r in &waits {
        assert_eq!(r["container"], docker.short_id(), "{r}");
        assert!(r["cgroup_id"].as_u64().unwrap() > 0, "{r}");
    }
}

/// True where the lock calls take kprobes (the VM guests; not this
/// machine).
fn lock_kprobes() -> bool {
    probe::kprobe_target("mutex_lock") || probe::kprobe_target("mutex_lock_nested")
}

/// Hold times where the lock calls take kprobes: the pipe's code holds its
/// mutex. Where they take none, the tool says so and prints waits only.
#[test]
fn klockstat_holds_where_kprobes_are() {
    let (f, pid) = trace(PIPE, &["--json", "-S", "hld_count"], "");
    let rows = f.json();
    let holds = table(&rows, "hold");
    if !lock_kprobes() {
        assert!(holds.is_empty(), "{f:?}");
        assert!(f.stderr.contains("no hold times"), "{f:?}");
        return;
    }
    assert!(!f.stderr.contains("no hold times"), "{f:?}");
    check_rows(&holds, pid);
    let pipe: Vec<&&Value> = holds.iter().filter(|r| in_pipe_code(r)).collect();
    assert!(!pipe.is_empty(), "{f:?}");
    assert!(pipe.iter().all(|r| r["kind"] == "mutex"), "{f:?}");
    let held: u64 = pipe.iter().map(|r| r["count"].as_u64().unwrap()).sum();
    // Each write and each read holds the pipe's mutex once at least; a
    // hold whose lock call's return the kretprobes missed (their instances
    // all in use by sleeping writers) is counted as such, never hidden.
    let missed = unmatched_unlocks(&f.stderr);
    assert!(held + missed >= 8 * WRITES, "{held} + {missed}: {f:?}");
    assert!(held >= WRITES, "{held}: {f:?}");
}

/// Without the contention tracepoints (before 5.19), the waits are the
/// lock calls' time, as libbpf-tools measures them; with neither those nor
/// kprobes (turned off here), one line and exit 1.
#[test]
fn klockstat_waits_from_the_lock_calls() {
    let off = "tp_btf,raw_tp,tracepoint";
    if !lock_kprobes() {
        testkit::assert_refused_in_one_line(
            BIN,
            &["-d", "1"],
            &[("BPFTOOLS_DISABLE", off)],
            &["lock:contention_begin", "5.19", "kprobes"],
        );
        return;
    }
    if probe::tracepoint_exists("lock", "contention_begin") {
        // The lock calls' waits are for kernels without the tracepoints
        // (5.10's guest runs them): here the tracepoints are chosen.
        let dry = testkit::run(BIN, &["--dry-run"]);
        assert!(dry.status.success(), "{dry:?}");
        let said = format!("{}{}", dry.stdout.join("\n"), dry.stderr);
        assert!(said.contains("contention_begin"), "{said}");
        assert!(
            !said.contains("waits are the time in the lock calls"),
            "{said}"
        );
        return;
    }
    let (f, pid) = trace(PIPE, &["--json", "-S", "acq_count"], "");
    assert!(
        f.stderr.contains("waits are the time in the lock calls"),
        "{f:?}"
    );
    let rows = f.json();
    let waits = table(&rows, "wait");
    check_rows(&waits, pid);
    let pipe: u64 = waits
        .iter()
        .filter(|r| in_pipe_code(r))
        .map(|r| r["count"].as_u64().unwrap())
        .sum();
    // Every write and read takes the mutex, contended or not (a call whose
    // return the kretprobes missed is counted as such).
    let missed = unmatched_unlocks(&f.stderr);
    assert!(pipe + missed >= 8 * WRITES, "{pipe} + {missed}: {f:?}");
    assert!(pipe >= WRITES, "{pipe}: {f:?}");
}

#[test]
fn klockstat_refuses_a_lock_it_cannot_find() {
    testkit::assert_refused_in_one_line(
        BIN,
        &["-L", "no_such_lock_var"],
        &[],
        &["'no_such_lock_var'"],
    );
}

/// -L by a lock variable's name, where the kernel lists its variables
/// (CONFIG_KALLSYMS_ALL, as the VM guests' kernels do): cgroup_mutex, which
/// each cgroup mkdir and rmdir takes, traced at the address /proc/kallsyms
/// gives it and each row named after it. Elsewhere (this machine) a
/// refusal that says what the kernel lacks.
#[test]
fn klockstat_finds_a_lock_variable_by_name() {
    testkit::require_root();
    let kallsyms = std::fs::read_to_string("/proc/kallsyms").unwrap();
    let listed = kallsyms.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        let (addr, kind, name) = (f.next()?, f.next()?, f.next()?);
        let data = matches!(kind, "d" | "D" | "b" | "B");
        (name == "cgroup_mutex" && data && f.next().is_none())
            .then(|| format!("{:#x}", u64::from_str_radix(addr, 16).unwrap()))
    });
    let Some(addr) = listed else {
        testkit::assert_refused_in_one_line(
            BIN,
            &["-L", "cgroup_mutex"],
            &[],
            &["'cgroup_mutex'", "CONFIG_KALLSYMS_ALL"],
        );
        return;
    };
    let tool = testkit::Traced::start(BIN, &["--json", "-L", "cgroup_mutex"]);
    let top = testkit::cgroup2_root().join(testkit::unique("kl-cg-"));
    std::fs::create_dir(&top).unwrap();
    std::thread::scope(|s| {
        for t in 0..8 {
            let top = &top;
            s.spawn(move || {
                for i in 0..150 {
                    let dir = top.join(format!("{t}-{i}"));
                    std::fs::create_dir(&dir).unwrap();
                    std::fs::remove_dir(&dir).unwrap();
                }
            });
        }
    });
    let f = tool.stop();
    let _ = std::fs::remove_dir(&top);
    assert!(f.status.success(), "{f:?}");
    let rows = f.json();
    let waits = table(&rows, "wait");
    assert!(!waits.is_empty(), "no wait on cgroup_mutex ({addr}): {f:?}");
    for r in rows.iter() {
        assert_eq!(r["max_lock"], addr.as_str(), "{r}");
        assert_eq!(r["max_lock_name"], "cgroup_mutex", "{r}");
    }
}
