//! profile against real CPU-bound programs: pr-spin.c (main → outer →
//! middle → inner, spinning in inner; other modes in its comment), built
//! here with frame pointers and without.

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;
use testkit::{require_root, Finished, ReadyProcess, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_profile");
/// The spinning program's chain, root first, as folded stacks show it.
const CHAIN: &str = "main;outer;middle;inner";

/// Sample counts are compared with CPU time, and the idle task is looked
/// for: the tests take turns, so that each spinner has a CPU to itself and
/// a CPU is left idle.
use testkit::one_at_a_time;

/// pr-spin with frame pointers, or (`fp` false) -O2 without them.
fn spinner(fp: bool) -> &'static PathBuf {
    static WITH: OnceLock<PathBuf> = OnceLock::new();
    static WITHOUT: OnceLock<PathBuf> = OnceLock::new();
    let (cell, out, flags): (_, _, &[&str]) = if fp {
        // -O0: gcc 12 leaves out the frame of a leaf function that needs
        // no stack (inner) at -O1 even with -mno-omit-leaf-frame-pointer,
        // and a frame pointer walk from it then loses its caller.
        (&WITH, "pr-spin", &["-O0", "-g", "-fno-omit-frame-pointer"])
    } else {
        (
            &WITHOUT,
            "pr-spin-nofp",
            &[
                "-O2",
                "-g",
                "-fomit-frame-pointer",
                "-fno-optimize-sibling-calls",
            ],
        )
    };
    cell.get_or_init(|| {
        testkit::build_c_program_with(
            env!("CARGO_MANIFEST_DIR"),
            env!("CARGO_TARGET_TMPDIR"),
            "pr-spin",
            out,
            flags,
        )
    })
}

fn start(mode: &str) -> ReadyProcess {
    ReadyProcess::start(spinner(true), &[mode])
}

/// Runs profile for `secs` seconds (its own duration).
fn profile_for(args: &[&str], secs: &str) -> Finished {
    require_root();
    let mut all = args.to_vec();
    all.push(secs);
    let tool = Traced::start_command(Command::new(BIN).args(&all));
    let finished = tool.wait(Duration::from_secs(60));
    assert!(finished.status.success(), "{finished:?}");
    finished
}

/// The folded lines as (stack, samples).
fn folded(f: &Finished) -> Vec<(&str, u64)> {
    f.stdout
        .iter()
        .map(|l| {
            let (stack, n) = l.rsplit_once(' ').unwrap_or_else(|| panic!("{l}"));
            (stack, n.parse().unwrap_or_else(|_| panic!("{l}")))
        })
        .collect()
}

/// Of the samples of lines starting with `comm;`, those whose stack
/// contains `chain`, and all of them but those the tool reported it could
/// not record for a hash collision in the stack map (one stack of the
/// handful a spinner has can share a bucket with another: a CI run once
/// lost a quarter of its samples so, and said so on stderr).
fn share(f: &Finished, comm: &str, chain: &str) -> (u64, u64) {
    let prefix = format!("{comm};");
    let mut through = 0;
    let mut total = 0;
    for (stack, n) in folded(f) {
        if stack.starts_with(&prefix) {
            total += n;
            if stack.contains(chain) {
                through += n;
            }
        }
    }
    (through, total.saturating_sub(collisions(f)))
}

/// The stacks the tool said it lost to hash collisions (its stderr note).
fn collisions(f: &Finished) -> u64 {
    f.stderr
        .lines()
        .filter(|l| l.contains("hash collisions"))
        .filter_map(|l| l.split_whitespace().find_map(|w| w.parse::<u64>().ok()))
        .sum()
}

/// The CPU time a process has had, in seconds: the scheduler's own count
/// (/proc/PID/schedstat), exact where utime and stime are tick samples.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/schedstat"))
        .expect("/proc/PID/schedstat (CONFIG_SCHED_INFO)");
    let ns: u64 = stat.split_whitespace().next().unwrap().parse().unwrap();
    ns as f64 / 1e9
}

#[test]
fn folded_chain_and_sample_count_match_the_cpu_used() {
    let _turn = one_at_a_time();
    let program = start("spin");
    let pid = program.pid();
    require_root();
    // No duration: the test ends the window itself. The spinner is stopped
    // (SIGSTOP) before the tool, so its CPU time is counted over exactly
    // the samples' window; a report that takes seconds (under qemu's TCG)
    // adds nothing to either.
    let tool =
        Traced::start_command(Command::new(BIN).args(["-F", "99", "-f", "-p", &pid.to_string()]));
    let before = cpu_seconds(pid);
    std::thread::sleep(Duration::from_secs(4));
    // SAFETY: kill(2) on the test's own child.
    unsafe { libc::kill(pid as i32, libc::SIGSTOP) };
    let used = cpu_seconds(pid) - before;
    let finished = tool.stop();
    assert!(finished.status.success(), "{finished:?}");

    let (through, total) = share(&finished, "pr-spin", CHAIN);
    assert!(
        through * 10 >= total * 9,
        "{through} of {total} samples through {CHAIN}: {:?} {}",
        finished.stdout,
        finished.stderr
    );
    // Root first: the user frames, no kernel frame under inner but the
    // odd interrupt's.
    assert!(
        finished
            .stdout
            .iter()
            .any(|l| l.starts_with("pr-spin;") && l.contains(";main;outer;middle;inner ")),
        "{:?}",
        finished.stdout
    );
    // 99 samples for each second of CPU the program used, within 10%.
    let expected = 99.0 * used;
    assert!(
        (total as f64 - expected).abs() <= expected * 0.1,
        "{total} samples for {used:.2} s of CPU at 99 Hz (expected {expected:.0}): {}",
        finished.stderr
    );
}

#[test]
fn multi_line_output_shows_the_stack_and_the_process() {
    let _turn = one_at_a_time();
    let program = start("spin");
    let pid = program.pid().to_string();
    let finished = profile_for(&["-p", &pid, "-a", "-d"], "2");
    assert_eq!(
        finished.stdout[0],
        format!("Sampling at 49 Hertz of PID {pid} by user + kernel stack for 2 secs.")
    );
    let out = finished.stdout.join("\n");
    let owner = format!("    -                pr-spin ({pid})");
    assert!(out.contains(&owner), "{out}");
    // The most sampled stack is printed last: inner, leaf first; its
    // frames are the indented lines above its owner.
    let lines = &finished.stdout;
    let owner_line = lines.iter().rposition(|l| *l == owner).unwrap();
    let first = lines[..owner_line]
        .iter()
        .rposition(|l| !l.starts_with("    "))
        .map_or(0, |i| i + 1);
    let frames: Vec<&str> = lines[first..owner_line].iter().map(|l| l.trim()).collect();
    assert_eq!(&frames[..4], ["inner", "middle", "outer", "main"], "{out}");
    // A stack is its addresses, as BCC's: the spin loop's samples fall on
    // its few instructions, each a stack of the same names. All of the
    // process's, together: most of 2 s at 49 Hz.
    let samples: u64 = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| **l == owner)
        .map(|(i, _)| lines[i + 1].trim().parse::<u64>().unwrap())
        .sum();
    assert!(samples > 49, "{samples} samples in 2 s: {out}");
    // -a marks kernel frames, wherever a sample caught one.
    for line in out.lines().filter(|l| l.starts_with("    ")) {
        let f = line.trim();
        if (f.starts_with("asm_") || f.starts_with("entry_SYSCALL")) && !f.ends_with("_[k]") {
            panic!("kernel frame {f} without _[k]: {out}");
        }
    }
}

#[test]
fn kernel_frames_under_user_frames_and_minus_k_minus_u_keep_one_side() {
    let _turn = one_at_a_time();
    let program = start("read");
    let pid = program.pid().to_string();
    let both = profile_for(&["-F", "99", "-f", "-a", "-p", &pid], "2");
    // The read(2) loop: kernel frames on top of the user frames.
    let syscall = folded(&both)
        .into_iter()
        .filter(|(s, _)| s.contains(";middle;"))
        .filter(|(s, _)| s.contains(";entry_SYSCALL_64"))
        .max_by_key(|(_, n)| *n)
        .unwrap_or_else(|| panic!("no system call stack: {:?}", both.stdout));
    let frames: Vec<&str> = syscall.0.split(';').collect();
    let main = frames.iter().position(|f| *f == "main");
    let entry = frames
        .iter()
        .position(|f| f.starts_with("entry_SYSCALL_64"));
    assert!(main < entry, "{}", syscall.0);
    assert!(frames[entry.unwrap()].ends_with("_[k]"), "{}", syscall.0);
    assert!(
        frames.last().unwrap().ends_with("_[k]"),
        "a kernel leaf: {}",
        syscall.0
    );

    let kernel = profile_for(&["-K", "--json", "-p", &pid], "2");
    let objs = kernel.json();
    assert!(!objs.is_empty(), "{kernel:?}");
    for o in &objs {
        assert_eq!(o["user_stack"], Value::Array(vec![]), "{o}");
    }
    assert!(
        objs.iter().any(|o| names(&o["kernel_stack"])
            .iter()
            .any(|f| f.starts_with("entry_SYSCALL_64"))),
        "{objs:?}"
    );

    let user = profile_for(&["-U", "--json", "-p", &pid], "2");
    let objs = user.json();
    assert!(!objs.is_empty(), "{user:?}");
    for o in &objs {
        assert_eq!(o["kernel_stack"], Value::Array(vec![]), "{o}");
    }
    assert!(
        objs.iter()
            .any(|o| names(&o["user_stack"]).contains(&"main".into())),
        "{objs:?}"
    );
}

fn names(stack: &Value) -> Vec<String> {
    stack
        .as_array()
        .map(|a| {
            a.iter()
                .map(|f| f["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn pid_tid_and_cpu_filters_keep_what_they_say() {
    let _turn = one_at_a_time();
    let threads = start("threads");
    let pid = threads.pid();
    let tid: u32 = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .find(|t| *t != pid)
        .expect("the second thread");

    // -p: that process only.
    let by_pid = profile_for(&["--json", "-p", &pid.to_string()], "2");
    let objs = by_pid.json();
    assert!(objs.len() >= 2, "both threads' stacks: {objs:?}");
    assert!(objs.iter().all(|o| o["pid"] == pid), "{objs:?}");

    // -L: that thread only, counted per thread.
    let by_tid = profile_for(&["--json", "-L", &tid.to_string()], "2");
    let objs = by_tid.json();
    assert!(!objs.is_empty(), "{by_tid:?}");
    // A user stack the kernel could not record (a stack map collision on
    // a busy machine, counted and said on stderr) is shown as missed: few.
    let samples = |o: &serde_json::Value| o["samples"].as_u64().unwrap();
    let missed: u64 = objs
        .iter()
        .filter(|o| o["user_stack"].is_null())
        .map(samples)
        .sum();
    let all: u64 = objs.iter().map(samples).sum();
    assert!(
        missed * 10 <= all,
        "{missed} of {all} samples missed: {by_tid:?}"
    );
    if missed > 0 {
        assert!(
            by_tid.stderr.contains("not recorded") || by_tid.stderr.contains("could not"),
            "{by_tid:?}"
        );
    }
    assert!(objs.iter().all(|o| o["tid"] == tid), "{objs:?}");
    for o in objs.iter().filter(|o| !o["user_stack"].is_null()) {
        let user = names(&o["user_stack"]);
        assert!(user.contains(&"thread_spin".into()), "{o}");
        assert!(!user.contains(&"inner".into()), "{o}");
    }
    drop(threads);

    // -C: two spinners, one on each CPU; only CPU 1's is seen.
    let on = |cpu: &str| {
        let mut c = Command::new("taskset");
        c.args(["-c", cpu]).arg(spinner(true)).arg("spin");
        c.stdout(std::process::Stdio::null());
        c.spawn().expect("taskset (util-linux)")
    };
    let mut a = on("0");
    let mut b = on("1");
    std::thread::sleep(Duration::from_millis(200));
    let cpu1 = profile_for(&["--json", "-C", "1"], "2");
    let seen: HashSet<u64> = cpu1
        .json()
        .iter()
        .filter_map(|o| o["pid"].as_u64())
        .collect();
    let _ = (a.kill(), b.kill(), a.wait(), b.wait());
    assert!(seen.contains(&b.id().into()), "{seen:?} {cpu1:?}");
    assert!(!seen.contains(&a.id().into()), "{seen:?} {cpu1:?}");
    assert!(cpu1.stderr.contains("on CPU#1"), "{}", cpu1.stderr);
}

#[test]
fn the_idle_task_only_with_minus_i() {
    let _turn = one_at_a_time();
    let with = profile_for(&["-I", "-K", "-f"], "1");
    assert!(
        with.stdout.iter().any(|l| l.starts_with("swapper/")),
        "{:?}",
        with.stdout
    );
    let without = profile_for(&["-K", "-f"], "1");
    assert!(
        !without.stdout.iter().any(|l| l.starts_with("swapper/")),
        "{:?}",
        without.stdout
    );
}

#[test]
fn dwarf_unwinding_finds_the_chain_that_frame_pointers_lose() {
    let _turn = one_at_a_time();
    let program = ReadyProcess::start(spinner(false), &["spin"]);
    let pid = program.pid().to_string();

    let dwarf = profile_for(&["-F", "99", "--unwind", "dwarf", "-f", "-p", &pid], "3");
    let (through, total) = share(&dwarf, "pr-spin-nofp", CHAIN);
    assert!(total > 150, "{total} samples in 3 s: {dwarf:?}");
    assert!(
        through * 10 >= total * 9,
        "{through} of {total} samples through {CHAIN}: {:?} {}",
        dwarf.stdout,
        dwarf.stderr
    );
    let fp = profile_for(&["-F", "99", "--unwind", "fp", "-f", "-p", &pid], "2");
    let (through, total) = share(&fp, "pr-spin-nofp", CHAIN);
    assert!(total > 100, "{total} samples in 2 s: {fp:?}");
    assert!(
        through * 10 < total * 9,
        "frame pointers found {through} of {total} samples through {CHAIN}: {:?}",
        fp.stdout
    );
}

#[test]
fn folded_output_draws_in_inferno_and_pprof_agrees_with_it() {
    let _turn = one_at_a_time();
    let program = start("split");
    let pid = program.pid().to_string();
    let dir = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"));
    let pb = dir.join("profile.pb.gz");
    let f = profile_for(
        &[
            "-F",
            "99",
            "-f",
            "--pprof",
            pb.to_str().unwrap(),
            "-p",
            &pid,
        ],
        "3",
    );
    // inferno reads the output unchanged.
    let mut options = inferno::flamegraph::Options::default();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, f.stdout.iter().map(String::as_str), &mut svg)
        .expect("inferno reads the folded output");
    let svg = String::from_utf8(svg).unwrap();
    assert!(svg.contains(">inner (") && svg.contains(">side ("), "{svg}");

    // pprof's flat share of inner is the folded output's leaf share.
    let (inner, total) = leaf_share(&f, "inner");
    let (_, rows) = testkit::pprof::top(&pb, "samples", "");
    let row = testkit::pprof::row(&rows, "inner");
    let pprof_total: u64 = rows.iter().map(|r| r.flat).sum();
    assert_eq!((row.flat, pprof_total), (inner, total), "{rows:?}");
    // The default sample type is CPU time: seconds in pprof's header.
    let (header, rows) = testkit::pprof::top(&pb, "", "ns");
    assert!(header.contains("Type: cpu"), "{header}");
    let row = testkit::pprof::row(&rows, "inner");
    assert_eq!(row.flat, inner * (1_000_000_000 / 99), "{header}");
}

/// The samples whose leaf is `function`, and all samples.
fn leaf_share(f: &Finished, function: &str) -> (u64, u64) {
    let mut leaf = 0;
    let mut total = 0;
    for (stack, n) in folded(f) {
        total += n;
        if stack.rsplit(';').next() == Some(function) {
            leaf += n;
        }
    }
    (leaf, total)
}

#[test]
fn perf_record_agrees_on_the_top_function() {
    let _turn = one_at_a_time();
    let program = start("split");
    let pid = program.pid().to_string();
    let dir = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"));
    let data = dir.join("perf.data");
    require_root();
    // Both sample the same 4 seconds of the same process, at 499 Hz: with
    // ~2000 samples each, two honest samplers' shares differ by 1.4
    // points (one standard deviation), and 5 points is far out.
    let mut perf = Command::new("perf")
        .args(["record", "-q", "-F", "499", "-g", "-p", &pid, "-o"])
        .arg(&data)
        .args(["--", "sleep", "4"])
        .spawn()
        .expect("perf (package linux-perf)");
    let ours = profile_for(&["-F", "499", "-f", "-U", "-p", &pid], "4");
    assert!(perf.wait().unwrap().success());
    let report = Command::new("perf")
        .args([
            "report",
            "--stdio",
            "--no-children",
            "-q",
            "--sort",
            "sym",
            "-g",
            "none",
            "-i",
        ])
        .arg(&data)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    // `    74.80%  [.] inner`
    let perf_share = |function: &str| -> f64 {
        text.lines()
            .find(|l| l.trim_end().ends_with(&format!("] {function}")))
            .and_then(|l| l.trim().split('%').next()?.parse().ok())
            .unwrap_or_else(|| panic!("no {function} in perf report: {text}"))
    };
    let (inner, total) = leaf_share(&ours, "inner");
    let ours_share = inner as f64 * 100.0 / total as f64;
    let theirs = perf_share("inner");
    // On a failure, our leaves too: where the rest of our samples went.
    let mut leaves: std::collections::BTreeMap<String, u64> = Default::default();
    for (stack, n) in folded(&ours) {
        *leaves
            .entry(stack.rsplit(';').next().unwrap_or("").to_string())
            .or_default() += n;
    }
    assert!(
        theirs > 50.0 && (ours_share - theirs).abs() < 5.0,
        "inner: {ours_share:.1}% of our {total} samples, {theirs:.1}% of perf's: {text}\n\
         our leaves: {leaves:?}\nstderr: {}",
        ours.stderr
    );
}

#[test]
fn lost_stacks_are_counted_and_shown() {
    let _turn = one_at_a_time();
    let program = start("read");
    let _ = program;
    // One stack slot: every other distinct stack collides.
    let f = profile_for(&["-I", "-f", "--stack-storage-size", "1"], "2");
    assert!(
        f.stderr
            .contains("stacks not recorded: hash collisions in the stack map"),
        "{}",
        f.stderr
    );
    assert!(
        f.stdout.iter().any(|l| l.contains("[Missed ")),
        "{:?}",
        f.stdout
    );
}

#[test]
fn a_process_gone_before_the_report_keeps_its_names() {
    let _turn = one_at_a_time();
    require_root();
    // Built first: under qemu's TCG a compile takes seconds.
    let program = spinner(true);
    let tool = Traced::start_command(Command::new(BIN).args(["-F", "99", "-f", "-U"]));
    // Spins one second and exits, long before the report.
    let brief = Command::new(program)
        .arg("brief")
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(brief.success());
    std::thread::sleep(Duration::from_millis(500));
    let f = tool.stop();
    assert!(f.status.success(), "{f:?}");
    let (through, total) = share(&f, "pr-spin", CHAIN);
    assert!(
        total > 50,
        "{total} samples of a second's spin: {:?}",
        f.stdout
    );
    assert!(
        through * 10 >= total * 9,
        "{through} of {total} samples named through {CHAIN}: {:?}",
        f.stdout
    );
}

/// Puts a CPU back online when dropped.
struct Offline(&'static str);

impl Drop for Offline {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0, "1");
    }
}

#[test]
fn a_cpu_that_goes_offline_and_comes_back_is_sampled_again() {
    let _turn = one_at_a_time();
    require_root();
    let online = "/sys/devices/system/cpu/cpu1/online";
    assert!(
        std::path::Path::new(online).exists(),
        "this test needs a CPU 1 that can go offline ({online})"
    );
    // Built first: under qemu's TCG a compile takes seconds.
    let program = spinner(true);
    let tool = Traced::start_command(Command::new(BIN).args(["-F", "99", "-f", "-U", "-v"]));
    {
        let _back = Offline(online);
        std::fs::write(online, "0").expect("taking CPU 1 offline");
        std::thread::sleep(Duration::from_millis(300));
    }
    // Until the tool samples CPU 1 again (-v says so: "came online" or
    // "came back online"), not a fixed time: under TCG bringing a CPU back
    // can take longer than the tool's look each second.
    assert!(
        tool.wait_stderr("online: sampling it", Duration::from_secs(30)),
        "CPU 1 not sampled again within 30 s"
    );
    let mut spin = Command::new("taskset")
        .args(["-c", "1"])
        .arg(program)
        .arg("spin")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let used = cpu_seconds(spin.id());
    let f = tool.stop();
    let _ = (spin.kill(), spin.wait());
    assert!(f.status.success(), "{f:?}");
    let (_, total) = share(&f, "pr-spin", "");
    // Half at least: a CPU not sampled again gives none. Under TCG on 5.10
    // a re-onlined CPU's samples came to 76-78% of its spinner's time in 4
    // of 5 tries this session (with one node or two, waited for or not),
    // under 80%; not understood (timer overruns dropped under load?).
    let expected = 99.0 * used;
    assert!(
        total as f64 >= expected * 0.5,
        "{total} samples of {used:.2} s on CPU 1 (expected {expected:.0}): {}",
        f.stderr
    );
}

#[test]
fn cgroup_filter_keeps_only_that_cgroup() {
    let _turn = one_at_a_time();
    require_root();
    let cg = testkit::cgroup2_root().join(testkit::unique("pr-cg-"));
    std::fs::create_dir(&cg).unwrap();
    let inside = start("spin");
    let outside = start("spin");
    std::fs::write(cg.join("cgroup.procs"), inside.pid().to_string()).unwrap();
    let f = profile_for(&["--json", "-U", "--cgroup", cg.to_str().unwrap()], "2");
    let pids: HashSet<u64> = f.json().iter().filter_map(|o| o["pid"].as_u64()).collect();
    let (i, o) = (inside.pid(), outside.pid());
    drop(inside);
    drop(outside);
    // Its processes gone, the cgroup can go.
    std::thread::sleep(Duration::from_millis(100));
    let _ = std::fs::remove_dir(&cg);
    assert_eq!(
        pids,
        HashSet::from([u64::from(i)]),
        "outside was {o}: {f:?}"
    );
}

#[test]
fn containers_root_each_stack_at_its_container() {
    let _turn = one_at_a_time();
    require_root();
    let (docker, pod) = (
        testkit::FakeContainer::docker(),
        testkit::FakeContainer::kubernetes(),
    );
    let (a, b) = (start("spin"), start("spin"));
    for (c, p) in [(&docker, &a), (&pod, &b)] {
        std::fs::write(c.dir.join("cgroup.procs"), p.pid().to_string()).unwrap();
    }
    let pids = format!("{},{}", a.pid(), b.pid());
    let f = profile_for(&["-f", "-U", "--containers", "-p", &pids], "2");
    let pprof_dir = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"));
    let pprof = pprof_dir.join("containers.pb.gz");
    let j = profile_for(
        &[
            "--json",
            "-U",
            "--containers",
            "-p",
            &pids,
            "--pprof",
            pprof.to_str().unwrap(),
        ],
        "1",
    );
    let docker_pid = u64::from(a.pid());
    drop((a, b));
    // Every folded line of each spinner starts at its container's id.
    let lines = folded(&f);
    for c in [&docker, &pod] {
        let root = format!("[{}];pr-spin;", c.short_id());
        let n: u64 = lines
            .iter()
            .filter(|(s, _)| s.starts_with(&root))
            .map(|(_, n)| n)
            .sum();
        assert!(n > 20, "{root}: {n} samples in {:?}", f.stdout);
    }
    assert!(
        lines.iter().all(|(s, _)| s.starts_with('[')),
        "a stack not rooted at a container: {:?}",
        f.stdout
    );
    for o in j.json() {
        let want = if o["pid"] == docker_pid {
            &docker
        } else {
            &pod
        };
        assert_eq!(o["container"], want.short_id(), "{o}");
        assert_eq!(o["pod"].as_str(), want.pod.as_deref(), "{o}");
    }
    let tags = testkit::pprof::tags(&pprof);
    assert!(tags.contains("container:"), "{tags}");
    for c in [&docker, &pod] {
        assert!(tags.contains(c.short_id()), "{tags}");
    }
}

#[test]
fn a_process_in_its_own_mount_namespace_has_its_functions_named() {
    let _turn = one_at_a_time();
    require_root();
    let spin = testkit::Namespaced::start(spinner(true), &["spin"]);
    let f = profile_for(&["-f", "-U", "-p", &spin.pid.to_string()], "2");
    let (through, total) = share(&f, "pr-spin", CHAIN);
    assert!(
        total > 20 && through * 10 >= total * 9,
        "{through} of {total} samples through {CHAIN} ({} exists only in its namespace): {:?}",
        spin.inside,
        f.stdout
    );
}
