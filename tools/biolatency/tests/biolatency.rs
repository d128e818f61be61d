//! biolatency against real block I/O: O_DIRECT writes to a loop device the
//! test sets up, and to the disk that holds the build directory.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use testkit::block::{disk_of, Dd, Direct, LoopDevice};
use testkit::{require_root, run, stop_and_check_unloaded, unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_biolatency");
const WRITES: u64 = 200;

/// A loop device of the test's own.
fn loop_device() -> LoopDevice {
    LoopDevice::new(env!("CARGO_TARGET_TMPDIR"), 8)
}

/// `count` synchronous 4 KiB O_DIRECT writes: one I/O each.
fn direct_writes(target: &Path, count: u64) {
    let io = Direct::Write {
        bs: 4096,
        seek: 0,
        count,
    };
    Dd::system().run(target, io);
}

fn histograms(f: &Finished) -> Vec<Value> {
    f.json()
}

fn for_disk<'a>(hists: &'a [Value], disk: &str) -> Vec<&'a Value> {
    hists.iter().filter(|h| h["disk"] == disk).collect()
}

fn start(args: &[&str]) -> Traced {
    require_root();
    Traced::start(BIN, args)
}

#[test]
fn biolatency_counts_direct_writes_to_a_loop_device() {
    let lo = loop_device();
    let tool = start(&["--json", "-D", "-d", lo.name()]);
    direct_writes(Path::new(&lo.dev), WRITES);
    let finished = stop_and_check_unloaded(tool);
    assert!(finished.status.success(), "{finished:?}");
    let hists = histograms(&finished);
    assert!(
        hists.iter().all(|h| h["disk"] == lo.name()),
        "-d keeps other disks out: {hists:?}"
    );
    let count: u64 = hists.iter().map(|h| h["count"].as_u64().unwrap()).sum();
    assert!(
        (WRITES..=WRITES + 5).contains(&count),
        "{count} I/Os for {WRITES} writes"
    );
    let bucketed: u64 = hists[0]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["count"].as_u64().unwrap())
        .sum();
    assert_eq!(bucketed, hists[0]["count"].as_u64().unwrap());
    assert_eq!(hists[0]["unit"], "usecs");
}

#[test]
fn biolatency_sees_the_real_disk_and_names_it() {
    let dir = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"));
    let disk = disk_of(&dir);
    let file = dir.join(unique("bio-real"));
    // On disk before tracing: a direct write over dirty page cache makes the
    // kernel write those pages first, and where it cannot drop them (writeback
    // under way) ext4 does that write through the cache: no I/O while traced.
    let mut f = fs::File::create(&file).unwrap();
    f.write_all(&vec![0u8; 4096 * WRITES as usize]).unwrap();
    f.sync_all().unwrap();
    drop(f);
    let tool = start(&["--json", "-D"]);
    direct_writes(&file, WRITES);
    let finished = tool.stop();
    let _ = fs::remove_file(&file);
    let hists = histograms(&finished);
    let on_disk: u64 = for_disk(&hists, &disk)
        .iter()
        .map(|h| h["count"].as_u64().unwrap())
        .sum();
    assert!(on_disk >= WRITES, "{on_disk} I/Os on {disk}: {hists:?}");
}

#[test]
fn biolatency_queued_time_is_at_least_issue_time() {
    let lo = loop_device();
    let plain = start(&["--json", "-d", lo.name()]);
    let queued = start(&["--json", "-Q", "-d", lo.name()]);
    direct_writes(Path::new(&lo.dev), WRITES);
    let (plain, queued) = (plain.stop(), queued.stop());
    let total = |f: &Finished| -> (u64, u64) {
        let h = &histograms(f)[0];
        (h["count"].as_u64().unwrap(), h["total"].as_u64().unwrap())
    };
    let ((n_plain, t_plain), (n_queued, t_queued)) = (total(&plain), total(&queued));
    assert!(
        n_plain >= WRITES && n_queued >= WRITES,
        "{n_plain} {n_queued}"
    );
    assert!(
        t_queued >= t_plain,
        "queued total {t_queued} < issue total {t_plain}"
    );
}

#[test]
fn biolatency_percentiles_lie_in_the_slot_of_their_rank() {
    let lo = loop_device();
    let tool = start(&["--json", "--percentiles", "-d", lo.name()]);
    direct_writes(Path::new(&lo.dev), WRITES);
    let finished = tool.stop();
    let h = &histograms(&finished)[0];
    let n = h["count"].as_u64().unwrap();
    let buckets = h["buckets"].as_array().unwrap();
    for (name, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999)] {
        let rank = ((q * n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        let slot = buckets
            .iter()
            .find(|b| {
                seen += b["count"].as_u64().unwrap();
                seen >= rank
            })
            .unwrap();
        let p = h["percentiles"][name].as_u64().unwrap();
        let (lo_, hi) = (
            slot["low"].as_u64().unwrap(),
            slot["high"].as_u64().unwrap(),
        );
        assert!(
            lo_ <= p && p <= hi,
            "{name} = {p} outside [{lo_}, {hi}]: {h}"
        );
    }
    let max = h["percentiles"]["max"].as_u64().unwrap();
    let top = buckets.last().unwrap();
    assert!(max >= top["low"].as_u64().unwrap() && max <= top["high"].as_u64().unwrap());
}

#[test]
fn biolatency_interval_and_count_end_by_themselves() {
    require_root();
    let started = Instant::now();
    let tool = Traced::start(BIN, &["-T", "-e", "-F", "1", "2"]);
    let finished = tool.wait(Duration::from_secs(20));
    assert!(finished.status.success(), "{finished:?}");
    assert!(started.elapsed() >= Duration::from_secs(2));
    assert_eq!(
        finished.stdout[0],
        "Tracing block device I/O... Hit Ctrl-C to end."
    );
    let stamps = finished
        .stdout
        .iter()
        .filter(|l| l.len() == 8 && l.as_bytes()[2] == b':')
        .count();
    assert_eq!(
        stamps, 2,
        "one timestamp per interval: {:?}",
        finished.stdout
    );
}

#[test]
fn biolatency_text_output_has_flags_sections_and_bcc_table() {
    let lo = loop_device();
    let tool = start(&["-F", "-e", "-m", "-d", lo.name()]);
    direct_writes(Path::new(&lo.dev), 50);
    let finished = tool.stop();
    let text = finished.stdout.join("\n");
    assert!(
        text.contains("flags = ") && text.contains("Write"),
        "{text}"
    );
    assert!(
        text.contains("     msecs               : count    distribution"),
        "{text}"
    );
    assert!(text.contains("         0 -> 1          : "), "{text}");
    assert!(
        text.contains("avg = ") && text.contains("count: "),
        "{text}"
    );
}

#[test]
fn biolatency_rejects_unknown_disks_and_bad_intervals() {
    require_root();
    let f = run(BIN, &["-d", "nosuchdisk9"]);
    assert_eq!(f.status.code(), Some(2), "{f:?}");
    assert!(f.stderr.contains("nosuchdisk9"), "{}", f.stderr);
    // An empty name is named as such, not as a failed read.
    let f = run(BIN, &["-d", ""]);
    assert_eq!(f.status.code(), Some(2), "{f:?}");
    assert!(f.stderr.contains("empty"), "{}", f.stderr);
    for bad in [&["0"][..], &["1", "0"], &["-5"]] {
        let f = run(BIN, bad);
        assert_eq!(f.status.code(), Some(2), "{bad:?}: {f:?}");
    }
}

#[test]
fn biolatency_dry_run_and_raw_tp_fallback_load() {
    require_root();
    let f = run(BIN, &["--dry-run", "-Q"]);
    assert!(f.status.success(), "{f:?}");
    let out = f.stdout.join("\n");
    assert!(out.contains("tp_btf block_rq_issue"), "{out}");
    // Completion by block_io_done where the kernel has it (6.5+), else by
    // the final block_rq_complete.
    let completion = if common::kernel::probe::btf_tracepoint_exists("block_io_done") {
        "tp_btf block_io_done"
    } else {
        "tp_btf block_rq_complete"
    };
    assert!(
        out.contains(completion),
        "completion by {completion}: {out}"
    );

    // Kernels without tp_btf, or without block_io_done, take these paths.
    testkit::block::assert_pre_6_5_raw_tp_hooks(BIN, &["-Q"]);
}

/// The fallbacks of kernels without tp_btf (raw_tp), or without raw_tp too
/// (classic tracepoints, requests keyed by disk and sector).
#[test]
fn biolatency_fallbacks_count_io_with_flags() {
    let lo = loop_device();
    require_root();
    for (disabled, hook) in [
        ("tp_btf,block_io_done", "raw_tp block_rq_complete"),
        ("tp_btf,raw_tp", "tracepoint block:block_rq_complete"),
    ] {
        let dry = Command::new(BIN)
            .arg("--dry-run")
            .env("BPFTOOLS_DISABLE", disabled)
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&dry.stdout).contains(hook),
            "{dry:?}"
        );
        let tool = Traced::start_command(
            Command::new(BIN)
                .args(["--json", "-F", "-d", lo.name()])
                .env("BPFTOOLS_DISABLE", disabled),
        );
        direct_writes(Path::new(&lo.dev), WRITES);
        let finished = tool.stop();
        let hists = histograms(&finished);
        let n: u64 = hists.iter().map(|h| h["count"].as_u64().unwrap()).sum();
        assert!((WRITES..=WRITES + 5).contains(&n), "{hook}: {n}");
        let writes: u64 = hists
            .iter()
            .filter(|h| h["flags"].as_str().unwrap().ends_with("Write"))
            .map(|h| h["count"].as_u64().unwrap())
            .sum();
        assert!(writes >= WRITES, "{hook}: {hists:?}");
    }
}

/// A real Prometheus server scrapes biolatency every second while writes
/// go to a loop device: its count is -e's, its p99 the tool's within one
/// log2 bucket.
#[test]
fn prometheus_scrapes_agree_with_the_report() {
    use testkit::prometheus::{free_port, promtool_check, Prometheus};
    let lo = loop_device();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let tool = start(&[
        "--json",
        "-e",
        "--percentiles",
        "-d",
        lo.name(),
        "--prometheus",
        &addr,
    ]);
    let prometheus = Prometheus::start(&addr);
    direct_writes(Path::new(&lo.dev), WRITES);
    promtool_check(port);
    // Two scrapes after the last write.
    std::thread::sleep(Duration::from_secs(3));
    let count = prometheus.query("biolatency_block_io_latency_seconds_count");
    let p99 =
        prometheus.query("histogram_quantile(0.99, biolatency_block_io_latency_seconds_bucket)");
    drop(prometheus);
    let finished = stop_and_check_unloaded(tool);
    assert!(finished.status.success(), "{finished:?}");
    let hists = histograms(&finished);
    assert_eq!(hists.len(), 1, "{hists:?}");
    assert!(count >= WRITES as f64, "{count}");
    assert_eq!(hists[0]["count"].as_u64(), Some(count as u64), "{hists:?}");
    testkit::prometheus::assert_same_log2_slot(
        p99 * 1e6,
        hists[0]["percentiles"]["p99"].as_u64().unwrap() as f64,
    );
}

#[test]
fn biolatency_per_container_gives_each_container_its_writes() {
    use std::os::unix::fs::MetadataExt;
    let lo = loop_device();
    let (docker, pod) = (
        testkit::FakeContainer::docker(),
        testkit::FakeContainer::kubernetes(),
    );
    let tool = start(&["--json", "--per-container", "-d", lo.name()]);
    for (who, count) in [(&docker, 120), (&pod, 80)] {
        let io = Direct::Write {
            bs: 4096,
            seek: 0,
            count,
        };
        let mut cmd = Dd::system().command(Path::new(&lo.dev), io);
        let status = who.adopt(&mut cmd).status().unwrap();
        assert!(status.success(), "{status}");
    }
    let finished = stop_and_check_unloaded(tool);
    let hists = histograms(&finished);
    for (who, count) in [(&docker, 120), (&pod, 80)] {
        let h = hists
            .iter()
            .find(|h| h["container"] == who.short_id())
            .unwrap_or_else(|| panic!("no section for {}: {hists:?}", who.short_id()));
        let seen = h["count"].as_u64().unwrap();
        assert!(
            (count..=count + 5).contains(&seen),
            "{seen} I/Os for {count} writes: {h}"
        );
        assert_eq!(h["cgroup_id"], fs::metadata(&who.dir).unwrap().ino());
        assert_eq!(h["pod"].as_str(), who.pod.as_deref(), "{h}");
    }
}

/// `--container` judges the task that submitted each request, at its
/// start (a loop device's worker issues them on some kernels): of two
/// containers' writes, the one's only.
#[test]
fn biolatency_container_filter_keeps_its_writes() {
    let lo = loop_device();
    let (docker, pod) = (
        testkit::FakeContainer::docker(),
        testkit::FakeContainer::kubernetes(),
    );
    let tool = start(&["--json", "-d", lo.name(), "--container", docker.short_id()]);
    for (who, count) in [(&docker, 90), (&pod, 60)] {
        let io = Direct::Write {
            bs: 4096,
            seek: 0,
            count,
        };
        let mut cmd = Dd::system().command(Path::new(&lo.dev), io);
        let status = who.adopt(&mut cmd).status().unwrap();
        assert!(status.success(), "{status}");
    }
    let finished = stop_and_check_unloaded(tool);
    let hists = histograms(&finished);
    assert_eq!(hists.len(), 1, "{hists:?}");
    let seen = hists[0]["count"].as_u64().unwrap();
    assert!(
        (90..=95).contains(&seen),
        "{seen} I/Os for 90 writes: {hists:?}"
    );
}
