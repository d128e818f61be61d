//! biostacks against real block I/O: O_DIRECT writes by a dd of the test's
//! own (a unique comm) to a loop device the test sets up. Each 4 KiB write
//! is one request, submitted from dd's write(2): its stack and its count
//! are known exactly.

use std::path::Path;

use serde_json::Value;
use testkit::block::{Dd, Direct, LoopDevice};
use testkit::{require_root, stop_and_check_unloaded, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_biostacks");
const WRITES: u64 = 40;

fn loop_device() -> LoopDevice {
    LoopDevice::new(env!("CARGO_TARGET_TMPDIR"), 8)
}

fn writes(count: u64) -> Direct {
    Direct::Write {
        bs: 4096,
        seek: 0,
        count,
    }
}

/// Runs the tool with `args` (and `env`) around `WRITES` direct writes by
/// a dd of its own (`adopt` may move it into a cgroup first).
fn trace_writes(
    args: &[&str],
    env: &[(&str, &str)],
    adopt: impl FnOnce(&mut std::process::Command),
) -> (Finished, Dd, String) {
    require_root();
    let lo = loop_device();
    let dd = Dd::new("bs-dd");
    let disk = lo.name().to_string();
    let mut full: Vec<&str> = vec!["-d", &disk];
    full.extend_from_slice(args);
    let mut tool = std::process::Command::new(BIN);
    tool.args(&full).envs(env.iter().copied());
    let traced = Traced::start_command(&mut tool);
    let mut cmd = dd.command(Path::new(&lo.dev), writes(WRITES));
    adopt(&mut cmd);
    let status = cmd.status().unwrap();
    assert!(status.success(), "{status}");
    let f = stop_and_check_unloaded(traced);
    assert!(f.status.success(), "{f:?}");
    (f, dd, disk)
}

fn frames(o: &Value) -> Vec<String> {
    o["kernel_stack"]
        .as_array()
        .unwrap_or_else(|| panic!("no kernel stack: {o}"))
        .iter()
        .map(|f| f["name"].as_str().unwrap_or("").to_string())
        .collect()
}

/// dd's write(2) into the block layer: its submission (block_io_start),
/// or the plug flushed as dd waits (5.10's insert), or a direct issue.
fn is_a_write_submission(frames: &[String]) -> bool {
    frames.iter().any(|f| f.contains("sys_write"))
        && frames
            .iter()
            .any(|f| f.contains("submit_bio") || f.starts_with("blk_mq_"))
}

/// dd's stacks in JSON: each one's histogram count, and all of them.
fn check_json(f: &Finished, dd: &Dd, disk: &str) -> Vec<Value> {
    let stacks = f.json();
    assert!(
        stacks.iter().all(|o| o["disk"] == disk),
        "-d keeps other disks out: {stacks:?}"
    );
    let mine: Vec<Value> = stacks
        .into_iter()
        .filter(|o| o["comm"] == dd.comm())
        .collect();
    let count: u64 = mine
        .iter()
        .map(|o| o["hist"]["count"].as_u64().unwrap())
        .sum();
    assert_eq!(count, WRITES, "{mine:#?}");
    for o in &mine {
        assert!(is_a_write_submission(&frames(o)), "{o}");
        let h = &o["hist"];
        assert_eq!(h["unit"], "usecs");
        let bucketed: u64 = h["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["count"].as_u64().unwrap())
            .sum();
        assert_eq!(bucketed, h["count"].as_u64().unwrap(), "{o}");
        // The total in µs, of writes of at least a microsecond each.
        assert!(
            o["us"].as_u64().unwrap() >= h["count"].as_u64().unwrap(),
            "{o}"
        );
    }
    mine
}

#[test]
fn biostacks_histograms_direct_writes_by_their_stack() {
    let (f, dd, disk) = trace_writes(&["--json"], &[], |_| {});
    check_json(&f, &dd, &disk);
}

/// libbpf-tools' layout: `comm pid disk`, the frames, the histogram.
#[test]
fn biostacks_text_is_libbpf_tools_layout_in_milliseconds() {
    let (f, dd, disk) = trace_writes(&["-m"], &[], |_| {});
    assert_eq!(
        f.stdout[0],
        "Tracing block I/O with init stacks. Hit Ctrl-C to end."
    );
    let mut counted = 0;
    let mut lines = f.stdout.iter().peekable();
    while let Some(line) = lines.next() {
        let head: Vec<&str> = line.split_whitespace().collect();
        if head.first() != Some(&dd.comm()) {
            continue;
        }
        assert_eq!(head.len(), 3, "{line}");
        assert_eq!(head[2], disk, "{line}");
        let mut frames = Vec::new();
        for l in lines.by_ref() {
            if l.trim_start().starts_with("msecs") {
                break;
            }
            assert!(!l.starts_with(' ') && !l.is_empty(), "a frame: {l:?}");
            frames.push(l.clone());
        }
        assert!(is_a_write_submission(&frames), "{frames:?}");
        // `  low -> high  : count  |***|` to the blank line.
        for l in lines.by_ref() {
            if l.is_empty() {
                break;
            }
            let count: u64 = l
                .split(':')
                .nth(1)
                .unwrap()
                .split_whitespace()
                .next()
                .unwrap()
                .parse()
                .unwrap();
            counted += count;
        }
    }
    assert_eq!(counted, WRITES, "{:#?}", f.stdout);
}

/// Before 6.5 (no block_io_start/done): the stack where the request is
/// inserted, or issued without an insert (a loop device's direct issue),
/// and the final block_rq_complete; raw_tp where tp_btf is missing.
#[test]
fn biostacks_raw_tp_fallback_before_block_io_start() {
    require_root();
    let listing = testkit::block::assert_pre_6_5_raw_tp_hooks(BIN, &[]);
    assert!(!listing.contains("block_io_start"), "{listing}");
    let disable = [("BPFTOOLS_DISABLE", testkit::block::PRE_6_5_RAW_TP)];
    let (f, dd, disk) = trace_writes(&["--json"], &disable, |_| {});
    check_json(&f, &dd, &disk);
}

/// -f's folded lines carry each stack's total latency; the flame graph
/// and the pprof profile are written from the same report, pprof's samples
/// labelled with the disk.
#[test]
fn biostacks_folded_svg_and_pprof() {
    let dir = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"));
    let svg = dir.join(testkit::unique("bs.svg"));
    let pb = dir.join(testkit::unique("bs.pb.gz"));
    let (f, dd, disk) = trace_writes(
        &[
            "-f",
            "--svg",
            svg.to_str().unwrap(),
            "--pprof",
            pb.to_str().unwrap(),
        ],
        &[],
        |_| {},
    );
    let mine: Vec<&String> = f
        .stdout
        .iter()
        .filter(|l| l.starts_with(&format!("{};", dd.comm())))
        .collect();
    assert!(!mine.is_empty(), "{f:?}");
    for l in &mine {
        let (stack, us) = l.rsplit_once(' ').unwrap();
        assert!(us.parse::<u64>().unwrap() > 0, "{l}");
        let frames: Vec<String> = stack.split(';').map(String::from).collect();
        assert!(is_a_write_submission(&frames), "{l}");
    }
    let text = std::fs::read_to_string(&svg).expect("the SVG file");
    assert!(
        text.contains("<svg") && text.contains("ksys_write"),
        "not the flame graph"
    );
    let tags = testkit::pprof::tags(&pb);
    assert!(tags.contains(&disk), "{tags}");
    assert!(tags.contains(dd.comm()), "{tags}");
    let (header, rows) = testkit::pprof::top(&pb, "", "ns");
    assert!(header.contains("Type: io_latency"), "{header}");
    assert!(testkit::pprof::row(&rows, "ksys_write").cum > 0);
    std::fs::remove_file(&svg).unwrap();
    std::fs::remove_file(&pb).unwrap();
}

/// --containers: the submitter's container roots its stacks (the cgroup is
/// dd's, taken where it submitted), and names them in JSON.
#[test]
fn biostacks_containers_root_each_stack() {
    require_root();
    let docker = testkit::FakeContainer::docker();
    let (f, dd, _) = trace_writes(&["-f", "--containers"], &[], |cmd| {
        docker.adopt(cmd);
    });
    let root = format!("[{}];{};", docker.short_id(), dd.comm());
    let mine: Vec<&String> = f.stdout.iter().filter(|l| l.starts_with(&root)).collect();
    assert!(!mine.is_empty(), "{f:?}");
    assert!(
        f.stdout
            .iter()
            .all(|l| !l.contains(&format!(";{};", dd.comm())) || l.starts_with(&root)),
        "dd outside its container: {:?}",
        f.stdout
    );
    let (j, dd, disk) = trace_writes(&["--json", "--containers"], &[], |cmd| {
        docker.adopt(cmd);
    });
    for o in check_json(&j, &dd, &disk) {
        assert_eq!(o["container"], docker.short_id(), "{o}");
    }
}

/// -p: only the I/O this process submitted.
#[test]
fn biostacks_pid_filter_keeps_one_process() {
    require_root();
    let lo = loop_device();
    let dd = Dd::new("bs-dd");
    // Stopped before its exec of dd, so that the tool starts on its pid.
    let script = format!(
        "kill -STOP $$; exec {} if=/dev/zero of={} oflag=direct conv=notrunc bs=4096 count={WRITES} 2>/dev/null",
        dd.path.display(),
        lo.dev
    );
    let mut stopped = std::process::Command::new("sh");
    stopped.args(["-c", &script]);
    let f = testkit::trace_stopped(&mut stopped, |pid| {
        let mut c = std::process::Command::new(BIN);
        c.args(["--json", "-p", &pid.to_string()]);
        c
    });
    let stacks = f.json();
    assert!(stacks.iter().all(|o| o["comm"] == dd.comm()), "{stacks:?}");
    let count: u64 = stacks
        .iter()
        .map(|o| o["hist"]["count"].as_u64().unwrap())
        .sum();
    assert_eq!(count, WRITES, "{stacks:#?}");
}
