//! memleak against a real leaker: a small C program, built here with frame
//! pointers, that leaks 4 KiB every 10 ms from `leak_4k_here` and frees all
//! that `allocate_to_be_freed` allocates.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;
use testkit::{require_root, run, stop_and_check_unloaded, Finished, ReadyProcess, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_memleak");
const LEAKER_FN: &str = "leak_4k_here";
const FREED_FN: &str = "allocate_to_be_freed";

fn leaker_binary() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        testkit::build_c_program(
            env!("CARGO_MANIFEST_DIR"),
            env!("CARGO_TARGET_TMPDIR"),
            "ml-leaker",
        )
    })
}

/// The running leaker, killed when dropped.
struct Leaker(ReadyProcess);

impl Leaker {
    fn start() -> Leaker {
        Leaker(ReadyProcess::start(leaker_binary(), &[]))
    }

    fn pid(&self) -> String {
        self.0.pid().to_string()
    }
}

/// Runs memleak until it ends by itself (count, or the command's exit).
fn run_until_done(args: &[&str]) -> Finished {
    require_root();
    let finished = run(BIN, args);
    assert!(finished.status.success(), "{finished:?}");
    finished
}

fn frame_names(stack: &Value) -> Vec<String> {
    stack
        .as_array()
        .map(|frames| {
            frames
                .iter()
                .map(|f| {
                    f["name"]
                        .as_str()
                        .unwrap()
                        .split('+')
                        .next()
                        .unwrap()
                        .to_string()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The JSON report entry whose first frame is `function`.
fn entry_from<'a>(entries: &'a [Value], function: &str) -> Option<&'a Value> {
    entries
        .iter()
        .find(|e| frame_names(&e["stack"]).first().map(String::as_str) == Some(function))
}

#[test]
fn reports_the_leaking_function_as_the_direct_caller() {
    let leaker = Leaker::start();
    let pid = leaker.pid();
    let finished = run_until_done(&["-p", &pid, "3", "1"]);
    let out = finished.stdout.join("\n");
    assert!(finished.stdout[0].starts_with("Attaching to pid"), "{out}");
    assert!(
        out.contains("] Top 10 stacks with outstanding allocations:"),
        "{out}"
    );
    // The leak, charged to the function that called malloc, and only that.
    let header = finished
        .stdout
        .iter()
        .position(|l| l.ends_with("allocations from stack") && l.contains(" bytes in "))
        .expect(&out);
    let mut biggest = None;
    for (i, line) in finished.stdout.iter().enumerate().skip(header) {
        if line.starts_with('\t') && line.contains(" bytes in ") {
            let f: Vec<&str> = line.split_whitespace().collect();
            let first_frame = finished.stdout[i + 1].trim();
            if first_frame.starts_with(&format!("{LEAKER_FN}+")) {
                biggest = Some((f[0].parse::<u64>().unwrap(), f[3].parse::<u64>().unwrap()));
            }
        }
    }
    let (bytes, count) = biggest.unwrap_or_else(|| panic!("no stack from {LEAKER_FN}: {out}"));
    // 3 s of one leak per 10 ms (a little more with the sleep's slack),
    // less the last 500 ms (-o): about 250; more when a loaded machine
    // (the parallel tests' allocation storms) delays the report, fewer
    // when its sleeps overshoot (148 in a TCG guest beside a build).
    assert!((100..=450).contains(&count), "{count} allocations: {out}");
    assert_eq!(bytes, count * 4096, "{out}");
    assert!(!out.contains(FREED_FN), "freed memory reported: {out}");
    assert!(out.contains("leaker.c:"), "file:line from DWARF: {out}");
}

#[test]
fn folded_output_is_flame_graph_input() {
    let leaker = Leaker::start();
    let pid = leaker.pid();
    let svg = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("ml-{}.svg", std::process::id()));
    let svg_arg = svg.to_string_lossy().into_owned();
    let finished = run_until_done(&["-p", &pid, "-f", "--svg", &svg_arg, "2", "1"]);
    // The same stacks drawn: the leaking function is a frame of the graph.
    let drawn = std::fs::read_to_string(&svg).unwrap();
    let _ = std::fs::remove_file(&svg);
    assert!(
        drawn.contains("<svg") && drawn.contains(LEAKER_FN),
        "{drawn:.300}"
    );
    let line = finished
        .stdout
        .iter()
        .find(|l| l.contains(&format!(";main;{LEAKER_FN} ")))
        .unwrap_or_else(|| panic!("{:?}", finished.stdout));
    assert!(line.starts_with("ml-leaker;"), "{line}");
    let bytes: u64 = line.rsplit_once(' ').unwrap().1.parse().unwrap();
    assert!(bytes > 0 && bytes.is_multiple_of(4096), "{line}");
    // Nothing but folded lines on stdout.
    assert!(finished.stdout.iter().all(|l| l
        .rsplit_once(' ')
        .is_some_and(|(_, n)| n.parse::<u64>().is_ok())));
}

/// `--containers`: the leaks are rooted at the process's container in
/// folded lines, and named in JSON.
#[test]
fn containers_root_the_leaks_at_the_processs_container() {
    require_root();
    let docker = testkit::FakeContainer::docker();
    let leaker = Leaker::start();
    let pid = leaker.pid();
    std::fs::write(docker.dir.join("cgroup.procs"), &pid).unwrap();
    let folded = run_until_done(&["-p", &pid, "-f", "--containers", "2", "1"]);
    let json = run_until_done(&["-p", &pid, "--json", "--containers", "1", "1"]);
    drop(leaker);
    let root = format!("[{}];ml-leaker;", docker.short_id());
    assert!(
        folded
            .stdout
            .iter()
            .any(|l| l.starts_with(&root) && l.contains(&format!(";main;{LEAKER_FN} "))),
        "{:?}",
        folded.stdout
    );
    assert!(
        folded.stdout.iter().all(|l| l.starts_with(&root)),
        "{:?}",
        folded.stdout
    );
    let entries = json.json();
    let leak = entry_from(&entries, LEAKER_FN).unwrap_or_else(|| panic!("{entries:#?}"));
    assert_eq!(leak["container"], docker.short_id(), "{leak}");
}

/// A report with no outstanding allocation leaves --svg's file alone, says
/// so, and the tool goes on (a quiet interval is no error).
#[test]
fn svg_of_a_report_without_stacks_is_left_alone() {
    let mut quiet = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let svg = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("ml-q-{}.svg", std::process::id()));
    let svg_arg = svg.to_string_lossy().into_owned();
    let pid = quiet.id().to_string();
    let finished = run_until_done(&["-p", &pid, "--svg", &svg_arg, "1", "2"]);
    let _ = quiet.kill();
    let _ = quiet.wait();
    let _ = std::fs::remove_file(&svg);
    assert_eq!(
        finished.stderr.matches("left as it was").count(),
        2,
        "{finished:?}"
    );
}

#[test]
fn command_is_started_traced_and_reported_at_exit() {
    let cmd = format!("{} 100", leaker_binary().display());
    let finished = run_until_done(&["-c", &cmd, "--json", "-o", "0", "60"]);
    let entries = finished.json();
    let leak = entry_from(&entries, LEAKER_FN).unwrap_or_else(|| panic!("{entries:?}"));
    // Every one of the 100 leaks, none of the freed blocks.
    assert_eq!(leak["allocations"], 100, "{leak}");
    assert_eq!(leak["bytes"], 100 * 4096, "{leak}");
    assert!(entry_from(&entries, FREED_FN).is_none(), "{entries:?}");
    let frames = frame_names(&leak["stack"]);
    assert_eq!(frames[1], "main", "{frames:?}");
}

#[test]
fn pprof_profile_charges_the_leaks_to_the_leaking_function() {
    use testkit::pprof::{row, top};
    let path = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("ml-{}.pb.gz", std::process::id()));
    let cmd = format!("{} 100", leaker_binary().display());
    // -T 1: the printed report is cut to one stack, the profile is not.
    let args = [
        "-c",
        &cmd,
        "-o",
        "0",
        "-T",
        "1",
        "--pprof",
        path.to_str().unwrap(),
        "60",
    ];
    run_until_done(&args);
    let (header, bytes) = top(&path, "", "B");
    assert!(header.contains("Type: inuse_space"), "{header}");
    assert!(header.contains("File: ml-leaker"), "{header}");
    // Every one of the 100 leaks, under main, and none of the freed blocks.
    assert_eq!(row(&bytes, LEAKER_FN).flat, 100 * 4096);
    assert!(row(&bytes, "main").cum >= 100 * 4096);
    assert!(bytes.iter().all(|r| r.name != FREED_FN), "{bytes:#?}");
    let (_, objects) = top(&path, "inuse_objects", "");
    assert_eq!(row(&objects, LEAKER_FN).flat, 100);

    let profile = common::export::pprof::decode(&std::fs::read(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).unwrap();
    let s = |i: i64| profile.string_table[i as usize].as_str();
    // More stacks than the one printed (libc's stdio buffer, at least).
    assert!(profile.sample.len() > 1, "{profile:?}");
    // file:line from DWARF.
    let leak = profile
        .function
        .iter()
        .find(|f| s(f.name) == LEAKER_FN)
        .unwrap();
    assert!(s(leak.filename).ends_with("ml-leaker.c"), "{leak:?}");
    for sample in &profile.sample {
        let label = |key: &str| sample.label.iter().find(|l| s(l.key) == key).unwrap();
        assert_eq!(s(label("comm").str), "ml-leaker");
        assert!(label("pid").num > 0);
    }
}

#[test]
fn sampling_keeps_about_one_in_n() {
    let cmd = format!("{} 300", leaker_binary().display());
    let finished = run_until_done(&["-c", &cmd, "--json", "-o", "0", "-s", "10", "60"]);
    let entries = finished.json();
    let sampled = entry_from(&entries, LEAKER_FN).map_or(0, |e| e["allocations"].as_u64().unwrap());
    assert!(
        (5..=90).contains(&sampled),
        "{sampled} of 300 sampled at 1 in 10"
    );
}

#[test]
fn size_filters_and_combined_totals() {
    let cmd = format!("{} 50", leaker_binary().display());
    let small = run_until_done(&["-c", &cmd, "--json", "-o", "0", "-Z", "3000", "60"]);
    assert!(
        entry_from(&small.json(), LEAKER_FN).is_none(),
        "-Z 3000 kept 4 KiB blocks"
    );
    let combined = run_until_done(&["-c", &cmd, "--json", "-C", "-z", "4000", "60"]);
    let entries = combined.json();
    let leak = entry_from(&entries, LEAKER_FN).unwrap_or_else(|| panic!("{entries:?}"));
    assert_eq!(leak["allocations"], 50);
}

#[test]
fn trace_mode_prints_each_call_and_show_allocs_lists_them() {
    let cmd = format!("{} 20", leaker_binary().display());
    let finished = run_until_done(&["-c", &cmd, "-t", "-a", "-o", "0", "60"]);
    let allocs = finished
        .stdout
        .iter()
        .filter(|l| l.contains(" alloc 4096 bytes at 0x"))
        .count();
    let frees = finished
        .stdout
        .iter()
        .filter(|l| l.contains(" free 0x"))
        .count();
    assert!(allocs >= 20, "{allocs} allocations traced");
    assert!(frees >= 20, "{frees} frees traced");
    let listed = finished
        .stdout
        .iter()
        .filter(|l| l.starts_with("\taddr = ") && l.ends_with("size = 4096"))
        .count();
    // The leaks, and stdio's buffer.
    assert!(listed >= 20, "{:?}", finished.stdout);
}

#[test]
fn kernel_mode_prints_kernel_stacks() {
    require_root();
    let tool = Traced::start(BIN, &["--json", "-o", "0", "-T", "5", "2", "1"]);
    // Some kernel allocations to be sure: processes and files.
    for _ in 0..20 {
        let _ = Command::new("true").status();
    }
    let finished = tool.wait(Duration::from_secs(30));
    assert!(finished.status.success(), "{finished:?}");
    let entries = finished.json();
    assert!(!entries.is_empty() && entries.len() <= 5, "{entries:?}");
    for e in &entries {
        // A stack the kernel could not record (a hash collision in the
        // stack map: once in a 5.10 guest) is null, and said so.
        if e["stack"].is_null() {
            assert!(
                finished.stderr.contains("stacks not recorded"),
                "{e}: a null stack not said: {}",
                finished.stderr
            );
            continue;
        }
        let frames = frame_names(&e["stack"]);
        assert!(!frames.is_empty(), "{e}");
        assert!(
            !frames[0].starts_with("bpf_") && !frames[0].starts_with("perf_trace"),
            "{e}"
        );
        assert!(e["bytes"].as_u64().unwrap() > 0);
    }
}

#[test]
fn ctrl_c_reports_and_detaches() {
    let leaker = Leaker::start();
    require_root();
    let tool = Traced::start(BIN, &["-p", &leaker.pid(), "--json", "60"]);
    std::thread::sleep(Duration::from_millis(1500));
    let finished = stop_and_check_unloaded(tool);
    assert!(finished.status.success(), "{finished:?}");
    assert!(
        entry_from(&finished.json(), LEAKER_FN).is_some(),
        "{finished:?}"
    );
}

#[test]
fn bad_targets_are_errors() {
    require_root();
    let out = run(BIN, &["-p", "999999999", "1", "1"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        out.stderr.contains("there is no process 999999999"),
        "{}",
        out.stderr
    );
    let out = run(BIN, &["-c", "/no/such/leaker-xyz", "1", "1"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stderr.contains("/no/such/leaker-xyz"), "{}", out.stderr);
    let out = run(BIN, &["-p", "1", "-O", "/no/such/lib.so", "1", "1"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    // Not an ELF object: named as such, not as an attach failure.
    let out = run(BIN, &["-p", "1", "-O", "/etc/passwd", "1", "1"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stderr.contains("not an ELF object"), "{}", out.stderr);
    let out = run(BIN, &["-P", "-p", "1"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    // A --pprof in a missing directory is a usage error, before anything
    // is traced.
    let out = run(BIN, &["-p", "1", "--pprof", "/nonexistent/dir/m", "1", "1"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stderr.contains("--pprof"), "{}", out.stderr);
    assert!(out.stdout.is_empty(), "{out:?}");
}

#[test]
fn dry_runs_load_both_modes() {
    require_root();
    let leaker = Leaker::start();
    let user = run(BIN, &["--dry-run", "-p", &leaker.pid()]);
    assert!(user.status.success(), "{user:?}");
    // Where each probe would go, from the allocator's code.
    assert!(user.stderr.contains("free: probe +0x"), "{}", user.stderr);
    let kernel = run(BIN, &["--dry-run", "-P"]);
    assert!(kernel.status.success(), "{kernel:?}");
    let text = kernel.stdout.join("\n");
    assert!(
        text.contains("kmem:kmalloc") && text.contains("percpu:percpu_alloc_percpu"),
        "{text}"
    );
}

#[test]
fn a_command_that_cannot_run_is_reported() {
    require_root();
    use std::os::unix::fs::PermissionsExt;
    let script =
        testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR")).join(testkit::unique("ml-no-shebang"));
    std::fs::write(&script, "echo hi\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = run(BIN, &["-c", script.to_str().unwrap(), "1"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stderr.contains("cannot run"), "{}", out.stderr);
    assert!(out.stderr.contains("Exec format error"), "{}", out.stderr);
}

#[test]
fn the_commands_exit_status_is_the_tools() {
    require_root();
    let out = run(BIN, &["-c", "sh -c exit", "1"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = run(BIN, &["-c", "false", "1"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

#[test]
fn stack_storage_is_bounded_by_available_memory() {
    require_root();
    let out = run(BIN, &["--stack-storage-size", "20000000", "1"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stderr.contains("kernel memory"), "{}", out.stderr);
}

/// Runs ml-churn under `memleak -p` (with `env` set) and returns memleak's
/// final report and its stderr (with -v: where each probe went).
fn churn_under_memleak(env: &[(&str, &str)]) -> (Vec<Value>, String) {
    churn_with_allocator(None, env)
}

/// ml-churn with `allocator` preloaded and given to memleak's -O.
fn churn_with_allocator(allocator: Option<&str>, env: &[(&str, &str)]) -> (Vec<Value>, String) {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    require_root();
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let bin = BUILT.get_or_init(|| {
        testkit::build_c_program(
            env!("CARGO_MANIFEST_DIR"),
            env!("CARGO_TARGET_TMPDIR"),
            "ml-churn",
        )
    });
    let mut target = Command::new(bin);
    if let Some(lib) = allocator {
        assert!(
            std::path::Path::new(lib).exists(),
            "{lib} is missing (cargo xtask test installs it)"
        );
        target.env("LD_PRELOAD", lib);
    }
    let mut target = target
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(target.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "ready");
    let pid = target.id().to_string();
    let mut args = vec!["-p", &pid, "--json", "-v", "-o", "0", "-T", "100"];
    if let Some(lib) = allocator {
        args.extend(["-O", lib]);
    }
    args.push("3600");
    let tool = Traced::start_command(Command::new(BIN).args(&args).envs(env.iter().copied()));
    let mut stdin = target.stdin.take().unwrap();
    writeln!(stdin, "go").unwrap();
    assert_eq!(lines.next().unwrap().unwrap(), "done");
    let finished = stop_and_check_unloaded(tool);
    writeln!(stdin, "go").unwrap();
    let _ = target.wait();
    assert!(finished.status.success(), "{finished:?}");
    (finished.json(), finished.stderr)
}

fn allocations(entries: &[Value]) -> u64 {
    entries
        .iter()
        .map(|e| e["allocations"].as_u64().unwrap())
        .sum()
}

#[test]
fn free_probe_moved_past_the_null_check_misses_nothing() {
    let (entries, stderr) = churn_under_memleak(&[]);
    // glibc's free begins with a NULL check that would be single-stepped.
    assert!(
        stderr.contains("free: probe +0x"),
        "the free probe was not moved: {stderr}"
    );
    assert_eq!(allocations(&entries), 500, "{entries:?}");
    let leaks = entry_from(&entries, "leak_one").expect("no stack from leak_one");
    assert_eq!(leaks["allocations"], 500);
}

#[test]
fn free_probe_at_the_entry_counts_the_same() {
    let (entries, stderr) = churn_under_memleak(&[("BPFTOOLS_DISABLE", "probe_move")]);
    assert!(stderr.contains("free: probe at the entry"), "{stderr}");
    assert_eq!(allocations(&entries), 500, "{entries:?}");
}

/// Runs ml-paths under `memleak -c` with `disable` in BPFTOOLS_DISABLE;
/// checks that each allocator path is counted once with its size, and
/// returns memleak's stderr (-v: how the probes were attached).
fn allocator_paths_counted(disable: &str) -> String {
    require_root();
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let bin = BUILT.get_or_init(|| {
        testkit::build_c_program(
            env!("CARGO_MANIFEST_DIR"),
            env!("CARGO_TARGET_TMPDIR"),
            "ml-paths",
        )
    });
    let finished = testkit::run_with_env(
        BIN,
        &[
            "-c",
            &bin.display().to_string(),
            "--json",
            "-v",
            "-o",
            "0",
            "-T",
            "100",
            // Each of the paths' stacks must have its own bucket in the
            // stack map: two of ~20 stacks sharing one of 16384 (about 1%
            // of runs) left one path without a stack. 262144 shallow
            // buckets: 32 MiB, and odds below 0.1%.
            "--stack-storage-size",
            "262144",
            "--perf-max-stack-depth",
            "16",
            "60",
        ],
        &[("BPFTOOLS_DISABLE", disable)],
    );
    assert!(finished.status.success(), "{finished:?}");
    let entries = finished.json();
    let rounds = 20;
    for (function, size) in [
        ("leak_calloc", 1000),
        ("leak_realloc_grown", 5000),
        ("leak_realloc_null", 3000),
        ("leak_reallocarray", 4000),
        ("leak_posix_memalign", 700),
        ("leak_aligned_alloc", 640),
        ("leak_large", 1 << 20),
    ] {
        let e = entry_from(&entries, function)
            .unwrap_or_else(|| panic!("nothing from {function} ({disable}): {entries:?}"));
        assert_eq!(e["allocations"], rounds, "{function} ({disable}): {e}");
        assert_eq!(e["bytes"], rounds * size, "{function} ({disable}): {e}");
    }
    for function in ["freed_by_realloc_zero", "frees_null"] {
        assert!(
            entry_from(&entries, function).is_none(),
            "{function} ({disable}): {entries:?}"
        );
    }
    finished.stderr
}

/// Session uprobe_multi links (6.13+) here, or the test is skipped.
fn session_links() -> bool {
    use common::kernel::probe::{uprobe_links, UprobeLinks};
    let present = uprobe_links() == UprobeLinks::Session;
    testkit::feature_present(present, "session uprobe_multi links", Some((6, 13)))
}

/// uprobe_multi links (6.6+) here, or the test is skipped.
fn multi_links() -> bool {
    use common::kernel::probe::{uprobe_links, UprobeLinks};
    let present = uprobe_links() != UprobeLinks::Single;
    testkit::feature_present(present, "uprobe_multi links", Some((6, 6)))
}

#[test]
fn every_allocator_path_counted_once_with_session_probes() {
    if !session_links() {
        return;
    }
    let stderr = allocator_paths_counted("");
    assert!(stderr.contains("a session uprobe_multi link"), "{stderr}");
}

#[test]
fn every_allocator_path_counted_once_with_multi_probes() {
    if !multi_links() {
        return;
    }
    let stderr = allocator_paths_counted("uprobe_session");
    assert!(
        stderr.contains("uprobe_multi links, entry and return"),
        "{stderr}"
    );
}

#[test]
fn every_allocator_path_counted_once_with_a_probe_per_function() {
    let stderr = allocator_paths_counted("uprobe_multi");
    assert!(
        stderr.contains("a uprobe (and uretprobe) per function"),
        "{stderr}"
    );
}

/// ml-churn under memleak with `disable` in BPFTOOLS_DISABLE: probes
/// attached as `mode` says, the free probe moved, 500 leaks exactly.
fn churn_counted_exactly_in_mode(disable: &str, mode: &str) {
    let (entries, stderr) = churn_under_memleak(&[("BPFTOOLS_DISABLE", disable)]);
    assert!(stderr.contains(mode), "{stderr}");
    assert!(stderr.contains("free: probe +0x"), "{stderr}");
    assert_eq!(allocations(&entries), 500, "{entries:?}");
}

#[test]
fn churn_counted_exactly_with_multi_probes() {
    if !multi_links() {
        return;
    }
    churn_counted_exactly_in_mode("uprobe_session", "uprobe_multi links, entry and return");
}

#[test]
fn churn_counted_exactly_with_a_probe_per_function() {
    churn_counted_exactly_in_mode("uprobe_multi", "a uprobe (and uretprobe) per function");
}

const JEMALLOC: &str = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";
const TCMALLOC: &str = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4";

/// ml-churn with `lib` preloaded and given to -O: 500 leaks from leak_one.
fn churn_counted_exactly_with(lib: &str) {
    let (entries, stderr) = churn_with_allocator(Some(lib), &[]);
    let name = lib.rsplit('/').next().unwrap();
    assert!(stderr.contains(name), "{stderr}");
    assert_eq!(allocations(&entries), 500, "{entries:?}");
    let leaks = entry_from(&entries, "leak_one").expect("no stack from leak_one");
    assert_eq!(leaks["allocations"], 500);
}

#[test]
fn jemalloc_churn_counted_exactly() {
    churn_counted_exactly_with(JEMALLOC);
}

#[test]
fn tcmalloc_churn_counted_exactly() {
    churn_counted_exactly_with(TCMALLOC);
}

/// ml-nofp, built without frame pointers.
fn nofp_binary() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        testkit::build_c_program_with(
            env!("CARGO_MANIFEST_DIR"),
            env!("CARGO_TARGET_TMPDIR"),
            "ml-nofp",
            "ml-nofp",
            &[
                "-O2",
                "-g",
                "-fomit-frame-pointer",
                "-fno-optimize-sibling-calls",
            ],
        )
    })
}

/// The report's stack (root first) with the most bytes.
fn biggest_folded(finished: &Finished) -> (String, u64) {
    finished
        .stdout
        .iter()
        .filter_map(|l| {
            let (stack, bytes) = l.rsplit_once(' ')?;
            Some((stack.to_string(), bytes.parse::<u64>().ok()?))
        })
        .max_by_key(|(_, b)| *b)
        .unwrap_or_else(|| panic!("no folded lines: {:?}", finished.stdout))
}

#[test]
fn dwarf_unwinding_charges_leaks_to_their_callers_without_frame_pointers() {
    let cmd = format!("{} 100", nofp_binary().display());
    let dwarf = run_until_done(&["--unwind", "dwarf", "-c", &cmd, "-f", "-o", "0", "60"]);
    let (stack, bytes) = biggest_folded(&dwarf);
    // Every leak, under its whole call chain, leaf last.
    assert_eq!(bytes, 100 * 4096, "{:?}", dwarf.stdout);
    assert!(
        stack.starts_with("ml-nofp;") && stack.ends_with(";main;outer;middle;inner;wrapped_malloc"),
        "{stack}"
    );
    assert!(!dwarf.stderr.contains("not unwound"), "{}", dwarf.stderr);

    // Frame pointers lose the chain.
    let fp = run_until_done(&["--unwind", "fp", "-c", &cmd, "-f", "-o", "0", "60"]);
    let (stack, bytes) = biggest_folded(&fp);
    assert_eq!(bytes, 100 * 4096, "{:?}", fp.stdout);
    assert!(!stack.contains("main;outer;middle;inner;"), "{stack}");
}

#[test]
fn dwarf_unwinding_needs_a_process() {
    require_root();
    let finished = run(BIN, &["--unwind", "dwarf", "1", "1"]);
    assert_eq!(finished.status.code(), Some(2), "{finished:?}");
    assert!(
        finished.stderr.contains("--unwind dwarf"),
        "{}",
        finished.stderr
    );
}
