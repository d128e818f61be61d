//! offcputime against a real sleeper: a small C program, built here with
//! frame pointers, whose main thread naps 100 ms at a time in a named
//! function and whose second thread naps 50 ms at a time in another.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;
use testkit::{require_root, run, stop_and_check_unloaded, Finished, ReadyProcess, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_offcputime");
const MAIN_FN: &str = "sleep_forever_in_named_function";
const THREAD_FN: &str = "second_thread_sleeps";

fn sleeper_binary() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        testkit::build_c_program(
            env!("CARGO_MANIFEST_DIR"),
            env!("CARGO_TARGET_TMPDIR"),
            "oc-sleeper",
        )
    })
}

/// The running sleeper, killed when dropped.
struct Sleeper(ReadyProcess);

impl Sleeper {
    fn start() -> Sleeper {
        Sleeper(ReadyProcess::start(sleeper_binary(), &[]))
    }

    fn pid(&self) -> u32 {
        self.0.pid()
    }

    fn thread_tid(&self) -> u32 {
        std::fs::read_dir(format!("/proc/{}/task", self.pid()))
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .find(|tid| *tid != self.pid())
            .expect("the sleeper's second thread")
    }
}

/// Runs offcputime for `secs` seconds (its own duration) and returns what
/// it printed.
fn trace_for(args: &[&str], secs: &str) -> Finished {
    require_root();
    let mut all = args.to_vec();
    all.push(secs);
    let tool = Traced::start_command(Command::new(BIN).args(&all));
    let finished = tool.wait(Duration::from_secs(30));
    assert!(finished.status.success(), "{finished:?}");
    finished
}

/// The folded lines whose stack goes through `function`, with their values.
fn lines_through<'a>(
    finished: &'a Finished,
    function: &'a str,
) -> impl Iterator<Item = (&'a str, u64)> + 'a {
    finished.stdout.iter().filter_map(move |l| {
        let (stack, value) = l.rsplit_once(' ')?;
        stack
            .split(';')
            .any(|f| f == function)
            .then(|| (stack, value.parse().unwrap()))
    })
}

/// The heaviest folded line through `function` (lighter ones are the odd
/// preemption, on a slow machine often), and its value.
fn folded_through<'a>(finished: &'a Finished, function: &'a str) -> Option<(&'a str, u64)> {
    lines_through(finished, function).max_by_key(|(_, value)| *value)
}

/// The total of every folded line through `function`.
fn total_through(finished: &Finished, function: &str) -> u64 {
    lines_through(finished, function).map(|(_, v)| v).sum()
}

#[test]
fn folded_output_attributes_the_sleep_to_the_named_function() {
    let sleeper = Sleeper::start();
    let pid = sleeper.pid().to_string();
    let finished = trace_for(&["-p", &pid, "-f"], "3");
    let (stack, _) = folded_through(&finished, MAIN_FN)
        .unwrap_or_else(|| panic!("no stack through {MAIN_FN}: {:?}", finished.stdout));
    // About 3 s: all of it but the nap in progress at each end (a nap
    // preempted on its way in or out may end in another kernel stack).
    let us = total_through(&finished, MAIN_FN);
    assert!(
        (2_500_000..=3_200_000).contains(&us),
        "{us} us off CPU in 3 s: {:?}",
        finished.stdout
    );
    let frames: Vec<&str> = stack.split(';').collect();
    assert_eq!(frames[0], "oc-sleeper", "{stack}");
    let at = |name: &str| frames.iter().position(|f| *f == name);
    // Root first: main, then the named function, then the kernel.
    assert!(at("main") < at(MAIN_FN), "{stack}");
    assert!(at(MAIN_FN) < at("do_nanosleep"), "{stack}");
    assert!(
        !frames.iter().any(|f| f.starts_with("bpf_")),
        "the BPF program's own frames are trimmed: {stack}"
    );
    // Only the traced process.
    assert!(finished.stdout.iter().all(|l| l.starts_with("oc-sleeper;")));
}

#[test]
fn multi_line_output_shows_the_stack_and_the_process() {
    let sleeper = Sleeper::start();
    let pid = sleeper.pid().to_string();
    let finished = trace_for(&["-p", &pid, "-d"], "2");
    assert!(finished.stdout[0].starts_with("Tracing off-CPU time (us) of PID"));
    let out = finished.stdout.join("\n");
    let at_fn = out.find(&format!("    {MAIN_FN}")).expect(&out);
    let at_delim = out.find("    --\n").expect(&out);
    let owner = format!("    -                oc-sleeper ({pid})");
    let at_owner = out.find(&owner).expect(&out);
    assert!(at_delim < at_fn && at_fn < at_owner, "{out}");
    let value: u64 = out[at_owner..]
        .lines()
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(value > 0, "{value}");
}

#[test]
fn svg_flame_graph_is_written() {
    let sleeper = Sleeper::start();
    let pid = sleeper.pid().to_string();
    let svg = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR")).join(format!("oc-{pid}.svg"));
    let finished = trace_for(&["-p", &pid, "--svg", svg.to_str().unwrap()], "2");
    let text = std::fs::read_to_string(&svg).expect("the SVG file");
    std::fs::remove_file(&svg).unwrap();
    assert!(text.contains("<svg"), "not an SVG");
    assert!(text.contains(MAIN_FN), "the flame graph lacks {MAIN_FN}");
    assert!(finished.stderr.contains("flame graph written"));
}

#[test]
fn min_and_max_block_times_filter_naps_by_length() {
    let sleeper = Sleeper::start();
    let pid = sleeper.pid().to_string();
    // 100 ms naps pass -m 80 ms; 50 ms naps do not.
    let long = trace_for(&["-p", &pid, "-f", "-m", "80000"], "2");
    assert!(
        folded_through(&long, MAIN_FN).is_some(),
        "{:?}",
        long.stdout
    );
    assert!(
        folded_through(&long, THREAD_FN).is_none(),
        "{:?}",
        long.stdout
    );
    let short = trace_for(&["-p", &pid, "-f", "-M", "80000"], "2");
    assert!(
        folded_through(&short, THREAD_FN).is_some(),
        "{:?}",
        short.stdout
    );
    assert!(
        folded_through(&short, MAIN_FN).is_none(),
        "{:?}",
        short.stdout
    );
}

#[test]
fn thread_filter_and_stack_kinds() {
    let sleeper = Sleeper::start();
    let tid = sleeper.thread_tid().to_string();
    let only_thread = trace_for(&["-t", &tid, "--json", "-U"], "2");
    let entries = only_thread.json();
    assert!(!entries.is_empty());
    for e in &entries {
        assert_eq!(e["tid"].to_string(), tid, "{e}");
        assert_eq!(e["kernel_stack"], Value::Array(vec![]), "-U: {e}");
        let user: Vec<&str> = e["user_stack"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap())
            .collect();
        assert!(user.contains(&THREAD_FN), "{user:?}");
    }
    let kernel_only = trace_for(&["-t", &tid, "--json", "-K"], "1");
    for e in kernel_only.json() {
        assert_eq!(e["user_stack"], Value::Array(vec![]), "-K: {e}");
        assert!(e["kernel_stack"].as_array().is_some_and(|k| !k.is_empty()));
    }
}

/// PF_KTHREAD in the task's flags (/proc/PID/stat's ninth field; the
/// status file's "Kthread:" line is newer than some supported kernels).
fn is_kernel_thread(pid: u64) -> bool {
    const PF_KTHREAD: u64 = 0x0020_0000;
    common::run::process::stat_field(pid as u32, 9)
        .and_then(|f| f.parse::<u64>().ok())
        .is_some_and(|flags| flags & PF_KTHREAD != 0)
}

#[test]
fn user_and_kernel_thread_filters_split_threads() {
    let sleeper = Sleeper::start();
    let users = trace_for(&["-u", "--json"], "2");
    let kernels = trace_for(&["-k", "--json"], "2");
    let users = users.json();
    let kernels = kernels.json();
    assert!(users.iter().any(|e| e["pid"] == sleeper.pid()));
    assert!(
        users
            .iter()
            .all(|e| !is_kernel_thread(e["pid"].as_u64().unwrap())),
        "-u let a kernel thread through"
    );
    assert!(!kernels.is_empty(), "-k saw no kernel thread block in 2 s");
    for e in &kernels {
        let pid = e["pid"].as_u64().unwrap();
        // Threads that exited since cannot be checked.
        if std::path::Path::new(&format!("/proc/{pid}")).exists() {
            assert!(is_kernel_thread(pid), "-k let a user thread through: {e}");
        }
        assert_eq!(e["user_stack"], Value::Array(vec![]), "{e}");
    }
}

#[test]
fn state_filter_selects_the_sleep_state() {
    let sleeper = Sleeper::start();
    let pid = sleeper.pid().to_string();
    // nanosleep sleeps interruptibly (TASK_INTERRUPTIBLE = 1).
    let interruptible = trace_for(&["-p", &pid, "-f", "--state", "1"], "1");
    assert!(folded_through(&interruptible, MAIN_FN).is_some());
    let uninterruptible = trace_for(&["-p", &pid, "-f", "--state", "2"], "1");
    assert!(folded_through(&uninterruptible, MAIN_FN).is_none());
}

#[test]
fn ctrl_c_reports_and_unloads() {
    let sleeper = Sleeper::start();
    require_root();
    let tool = Traced::start(BIN, &["-p", &sleeper.pid().to_string(), "-f"]);
    std::thread::sleep(Duration::from_millis(1500));
    let finished = stop_and_check_unloaded(tool);
    assert!(finished.status.success());
    assert!(folded_through(&finished, MAIN_FN).is_some(), "{finished:?}");
}

#[test]
fn raw_tp_fallback_sees_the_same_stacks() {
    let sleeper = Sleeper::start();
    require_root();
    let tool = Traced::start_command(
        Command::new(BIN)
            .args(["-v", "-f", "-p", &sleeper.pid().to_string(), "2"])
            .env("BPFTOOLS_DISABLE", "tp_btf"),
    );
    let finished = tool.wait(Duration::from_secs(30));
    assert!(
        finished.stderr.contains("raw_tp sched_switch"),
        "{}",
        finished.stderr
    );
    assert!(folded_through(&finished, MAIN_FN).is_some(), "{finished:?}");
}

#[test]
fn a_missing_process_is_an_error() {
    require_root();
    let out = run(BIN, &["-p", "999999999", "1"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        out.stderr.contains("there is no process 999999999"),
        "{}",
        out.stderr
    );
    let out = run(BIN, &["-p", "not-a-pid", "1"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn sizes_the_kernel_cannot_afford_are_refused_up_front() {
    require_root();
    for size in ["20000000", "4294967295"] {
        let out = run(BIN, &["--stack-storage-size", size, "1"]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(out.stderr.contains("kernel memory"), "{}", out.stderr);
        assert!(out.stdout.is_empty(), "it started tracing: {out:?}");
    }
}

#[test]
fn output_paths_in_missing_directories_are_usage_errors() {
    require_root();
    for flag in ["--svg", "--pprof"] {
        let out = run(BIN, &[flag, "/nonexistent/dir/x", "60"]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(out.stderr.contains(flag), "{}", out.stderr);
        assert!(out.stderr.contains("/nonexistent/dir/x"), "{}", out.stderr);
        // No banner: it never attached, let alone traced for the minute.
        assert!(out.stdout.is_empty(), "{out:?}");
    }
}

#[test]
fn pprof_profile_gives_go_tool_pprof_the_sleepers_time() {
    use common::export::pprof::{decode, KERNEL_MAPPING};
    use testkit::pprof::{row, top};
    let sleeper = Sleeper::start();
    let pid = sleeper.pid().to_string();
    let path = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR")).join(format!("oc-{pid}.pb.gz"));
    let finished = trace_for(&["-p", &pid, "-f", "--pprof", path.to_str().unwrap()], "3");
    assert!(finished.stderr.contains("profile written"), "{finished:?}");
    let (header, rows) = top(&path, "", "ns");
    assert!(header.contains("Type: offcpu"), "{header}");
    assert!(header.contains("File: oc-sleeper"), "{header}");
    // pprof's figures are the tool's own: each function's time as in the
    // folded output (microseconds there), about 3 s each for both threads.
    for function in [MAIN_FN, THREAD_FN] {
        let ns = row(&rows, function).cum;
        let us = total_through(&finished, function);
        assert!(
            ns / 1000 >= us && ns / 1000 <= us + 100,
            "{function}: {ns} ns, {us} us"
        );
        assert!(
            (2_500_000_000..=3_200_000_000).contains(&ns),
            "{function}: {ns} ns"
        );
    }
    assert!(row(&rows, "do_nanosleep").cum >= row(&rows, MAIN_FN).cum);

    // Labels and frame kinds, from the file itself.
    let profile = decode(&std::fs::read(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).unwrap();
    let s = |i: i64| profile.string_table[i as usize].as_str();
    let tids: std::collections::HashSet<i64> = profile
        .sample
        .iter()
        .map(|sample| {
            let label = |key: &str| sample.label.iter().find(|l| s(l.key) == key).unwrap();
            assert_eq!(s(label("comm").str), "oc-sleeper");
            assert_eq!(label("pid").num.to_string(), pid);
            label("tid").num
        })
        .collect();
    assert_eq!(tids.len(), 2, "both threads: {tids:?}");
    let mapping_of = |function: &str| {
        let loc = profile
            .location
            .iter()
            .find(|l| {
                l.line
                    .iter()
                    .any(|line| s(profile.function[line.function_id as usize - 1].name) == function)
            })
            .unwrap_or_else(|| panic!("no location in {function}"));
        s(profile.mapping[loc.mapping_id as usize - 1].filename)
    };
    assert_eq!(mapping_of("do_nanosleep"), KERNEL_MAPPING);
    assert_eq!(mapping_of(MAIN_FN), "oc-sleeper");
}

/// oc-nofp built without frame pointers (or with, for --unwind auto).
fn nofp_binary(frame_pointers: bool) -> &'static PathBuf {
    static WITHOUT: OnceLock<PathBuf> = OnceLock::new();
    static WITH: OnceLock<PathBuf> = OnceLock::new();
    let (cell, out, fp) = if frame_pointers {
        (&WITH, "oc-nofp-with-fp", "-fno-omit-frame-pointer")
    } else {
        (&WITHOUT, "oc-nofp", "-fomit-frame-pointer")
    };
    cell.get_or_init(|| {
        testkit::build_c_program_with(
            env!("CARGO_MANIFEST_DIR"),
            env!("CARGO_TARGET_TMPDIR"),
            "oc-nofp",
            out,
            &["-O2", "-g", fp, "-fno-optimize-sibling-calls"],
        )
    })
}

/// The program's call chain, root first, as folded stacks show it.
const CHAIN: &str = "main;outer;middle;inner;usleep;";

/// Of a folded -p run's total, the part whose stack runs through `chain`.
fn chain_share(finished: &Finished, chain: &str) -> (u64, u64) {
    let mut total = 0;
    let mut through = 0;
    for line in &finished.stdout {
        let (stack, value) = line.rsplit_once(' ').expect(line);
        let value: u64 = value.parse().expect(line);
        total += value;
        if stack.contains(chain) {
            through += value;
        }
    }
    (through, total)
}

/// Asserts that a run saw more than `min_us` off CPU, at least 90% of it
/// through `chain`.
fn assert_mostly_through(finished: &Finished, chain: &str, min_us: u64) {
    let (through, total) = chain_share(finished, chain);
    assert!(total > min_us, "{total} us: {:?}", finished.stdout);
    assert!(
        through * 10 >= total * 9,
        "{through} of {total} us through {chain}: {:?} {}",
        finished.stdout,
        finished.stderr
    );
}

#[test]
fn dwarf_unwinding_finds_the_callers_that_frame_pointers_lose() {
    let program = ReadyProcess::start(nofp_binary(false), &[]);
    let pid = program.pid().to_string();

    let dwarf = trace_for(&["--unwind", "dwarf", "-f", "-p", &pid], "3");
    assert_mostly_through(&dwarf, CHAIN, 2_000_000);
    // The whole stack, down to the C runtime's start.
    let (stack, _) = folded_through(&dwarf, "inner").unwrap();
    assert!(stack.starts_with("oc-nofp;_start;"), "{stack}");
    assert!(!stack.contains("[incomplete]"), "{stack}");
    assert!(!dwarf.stderr.contains("not unwound"), "{}", dwarf.stderr);

    // The frame pointer walk, on the same process, loses them.
    let fp = trace_for(&["--unwind", "fp", "-f", "-p", &pid], "2");
    let (through, total) = chain_share(&fp, CHAIN);
    assert!(total > 1_000_000, "{total} us in 2 s: {:?}", fp.stdout);
    assert!(
        through * 10 < total * 9,
        "frame pointers found {through} of {total} us through {CHAIN}: {:?}",
        fp.stdout
    );
}

#[test]
fn dwarf_unwinding_with_a_short_copy_marks_and_counts_cut_stacks() {
    let program = ReadyProcess::start(nofp_binary(false), &[]);
    let pid = program.pid().to_string();
    // 256 bytes hold the program's frames (-O2 makes them small), not the
    // C runtime's below main.
    let cut = trace_for(
        &[
            "--unwind",
            "dwarf",
            "--stack-copy-size",
            "256",
            "-f",
            "-p",
            &pid,
        ],
        "2",
    );
    let (stack, _) = folded_through(&cut, "usleep")
        .unwrap_or_else(|| panic!("no stack through usleep: {:?}", cut.stdout));
    assert!(stack.starts_with("oc-nofp;[incomplete];"), "{stack}");
    assert!(!stack.contains("_start;"), "{stack}");
    assert!(
        cut.stderr.contains("user stacks not unwound to their root")
            && cut.stderr.contains("raise --stack-copy-size"),
        "{}",
        cut.stderr
    );
}

#[test]
fn unwind_auto_picks_dwarf_without_frame_pointers_and_fp_with_them() {
    for (frame_pointers, chosen) in [(false, "(dwarf)"), (true, "(fp)")] {
        let program = ReadyProcess::start(nofp_binary(frame_pointers), &[]);
        let pid = program.pid().to_string();
        let finished = trace_for(&["--unwind", "auto", "-f", "-p", &pid], "2");
        let said = finished
            .stderr
            .lines()
            .find(|l| l.contains("--unwind auto"))
            .unwrap_or_else(|| panic!("auto said nothing: {}", finished.stderr));
        assert!(said.contains(chosen), "{said}");
        // Either way main's callees are found (a frame pointer walk from
        // libc skips inner: libc's functions set up no frame of their own).
        assert_mostly_through(&finished, "main;outer;middle;", 500_000);
    }
}

#[test]
fn dwarf_unwinding_names_the_functions_of_a_rust_release_build() {
    let program = ReadyProcess::start(
        std::path::Path::new(concat!(env!("OUT_DIR"), "/oc-rust")),
        &[],
    );
    let pid = program.pid().to_string();
    // auto: Rust builds its release code without frame pointers.
    let finished = trace_for(&["--unwind", "auto", "-U", "-f", "-p", &pid], "2");
    assert!(
        finished
            .stderr
            .contains("no frame pointers: unwinding with .eh_frame (dwarf)"),
        "{}",
        finished.stderr
    );
    let (stack, _) = finished
        .stdout
        .iter()
        .filter_map(|l| l.rsplit_once(' '))
        .max_by_key(|(_, v)| v.parse::<u64>().unwrap())
        .unwrap_or_else(|| panic!("no stacks: {:?}", finished.stdout));
    let at = |name: &str| {
        stack
            .split(';')
            .position(|f| f.contains(name))
            .unwrap_or_else(|| panic!("no {name} in {stack}"))
    };
    assert!(at("::main") < at("rust_outer"), "{stack}");
    assert!(at("rust_outer") < at("rust_middle"), "{stack}");
    assert!(at("rust_middle") < at("rust_inner"), "{stack}");
    assert!(at("rust_inner") < at("sleep"), "{stack}");
}

/// Traces the chain program (with or without frame pointers) with
/// `--unwind how`; the program exits 1.5 s in, before the report, whose
/// stacks must still be named through `chain`.
fn gone_before_the_report(frame_pointers: bool, how: &str, chain: &str) {
    require_root();
    let program = ReadyProcess::start(nofp_binary(frame_pointers), &[]);
    let pid = program.pid().to_string();
    let tool = Traced::start_command(
        Command::new(BIN).args(["--unwind", how, "-U", "-f", "-p", &pid, "3"]),
    );
    std::thread::sleep(Duration::from_millis(1500));
    drop(program);
    let finished = tool.wait(Duration::from_secs(30));
    assert!(finished.status.success(), "{finished:?}");
    assert_mostly_through(&finished, chain, 500_000);
}

#[test]
fn dwarf_stacks_of_a_process_gone_before_the_report_keep_their_names() {
    gone_before_the_report(false, "dwarf", CHAIN);
}

/// With frame pointers, user stacks are symbolized at the report: a process
/// gone by then keeps its names (its map is kept when the kernel side first
/// records one of its stacks). Frame pointers lose glibc's frames (usleep
/// has none), not the program's own.
#[test]
fn stacks_of_a_process_gone_before_the_report_keep_their_names() {
    gone_before_the_report(true, "fp", "main;outer;middle;");
}

#[test]
fn a_process_in_its_own_mount_namespace_has_its_functions_named() {
    require_root();
    let sleeper = testkit::Namespaced::start(sleeper_binary(), &[]);
    let finished = trace_for(&["-p", &sleeper.pid.to_string(), "-f"], "2");
    let (stack, _) = folded_through(&finished, MAIN_FN).unwrap_or_else(|| {
        panic!(
            "no stack through {MAIN_FN} ({} exists only in its namespace): {:?}",
            sleeper.inside, finished.stdout
        )
    });
    assert!(stack.contains(";main;"), "{stack}");
}

#[test]
fn container_filter_keeps_only_its_tasks() {
    require_root();
    let docker = testkit::FakeContainer::docker();
    let (inside, outside) = (Sleeper::start(), Sleeper::start());
    std::fs::write(docker.dir.join("cgroup.procs"), inside.pid().to_string()).unwrap();
    let f = trace_for(&["--json", "-U", "--container", docker.short_id()], "2");
    let pids: std::collections::HashSet<u64> =
        f.json().iter().filter_map(|o| o["pid"].as_u64()).collect();
    let (i, o) = (inside.pid(), outside.pid());
    drop((inside, outside));
    assert_eq!(pids, [u64::from(i)].into(), "outside was {o}: {f:?}");
}

/// `--containers`: each blocked stack is rooted at the container of the
/// task that blocked (folded), and named in JSON; the two sleepers, one in
/// a Docker container and one in a pod's, each under its own.
#[test]
fn containers_root_each_blocked_stack_at_its_container() {
    require_root();
    let (docker, pod) = (
        testkit::FakeContainer::docker(),
        testkit::FakeContainer::kubernetes(),
    );
    let (a, b) = (Sleeper::start(), Sleeper::start());
    for (c, s) in [(&docker, &a), (&pod, &b)] {
        std::fs::write(c.dir.join("cgroup.procs"), s.pid().to_string()).unwrap();
    }
    let pids = format!("{},{}", a.pid(), b.pid());
    let f = trace_for(&["-f", "-U", "--containers", "-p", &pids], "2");
    let j = trace_for(&["--json", "-U", "--containers", "-p", &pids], "1");
    let docker_pid = u64::from(a.pid());
    drop((a, b));
    for c in [&docker, &pod] {
        let root = format!("[{}];", c.short_id());
        let through: Vec<(&str, u64)> = lines_through(&f, MAIN_FN)
            .filter(|(s, _)| s.starts_with(&root))
            .collect();
        // Most of the 2 s each sleeper spent off CPU.
        let us: u64 = through.iter().map(|(_, v)| v).sum();
        assert!(us > 1_000_000, "{root}: {us} us in {:?}", f.stdout);
    }
    assert!(
        f.stdout.iter().all(|l| l.starts_with('[')),
        "a stack not rooted at a container: {:?}",
        f.stdout
    );
    let stacks = j.json();
    assert!(!stacks.is_empty(), "{j:?}");
    for o in stacks {
        let want = if o["pid"] == docker_pid {
            &docker
        } else {
            &pod
        };
        assert_eq!(o["container"], want.short_id(), "{o}");
        assert_eq!(o["pod"].as_str(), want.pod.as_deref(), "{o}");
    }
}
