//! runqlat against real CPU contention: more busy tasks than cores.

use std::fs;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;
use testkit::{cgroup2_root, require_root, run, stop_and_check_unloaded, unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_runqlat");

fn start(args: &[&str]) -> Traced {
    require_root();
    Traced::start(BIN, args)
}

/// A process that spins until dropped: never sleeps, so it only waits on
/// the run queue after being preempted.
struct Spinner(Child);

impl Spinner {
    fn new() -> Spinner {
        Spinner(
            Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .spawn()
                .unwrap(),
        )
    }
    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// More spinners than cores, for `secs`, while `tool` traces.
fn contend(tool: Traced, secs: f64) -> (Finished, Vec<u32>) {
    let cores = thread::available_parallelism().map_or(2, |n| n.get());
    let spinners: Vec<Spinner> = (0..cores + 2).map(|_| Spinner::new()).collect();
    thread::sleep(Duration::from_secs_f64(secs));
    let pids = spinners.iter().map(Spinner::pid).collect();
    let finished = tool.stop();
    drop(spinners);
    (finished, pids)
}

fn count(h: &Value) -> u64 {
    h["count"].as_u64().unwrap()
}

#[test]
fn runqlat_counts_preempted_tasks_per_process() {
    let tool = start(&["--json", "-P"]);
    let held = testkit::program_ids_of(tool.pid());
    let (finished, pids) = contend(tool, 1.5);
    assert!(finished.status.success(), "{finished:?}");
    let left = testkit::still_loaded(&held);
    assert!(left.is_empty(), "programs {left:?} left loaded");
    let hists = finished.json();
    for pid in &pids {
        let h = hists
            .iter()
            .find(|h| h["pid"] == *pid)
            .unwrap_or_else(|| panic!("no histogram for spinner {pid}: {hists:?}"));
        assert!(count(h) > 0);
        assert_eq!(h["comm"], "sh");
    }
}

#[test]
fn runqlat_pid_filter_keeps_one_process() {
    require_root();
    let target = Spinner::new();
    let tool = Traced::start(BIN, &["--json", "-P", "-p", &target.pid().to_string()]);
    let (finished, _) = contend(tool, 1.0);
    let hists = finished.json();
    assert!(!hists.is_empty(), "{finished:?}");
    assert!(hists.iter().all(|h| h["pid"] == target.pid()), "{hists:?}");
    assert!(count(&hists[0]) > 0);
}

#[test]
fn runqlat_per_thread_histograms_name_the_threads() {
    let me = std::process::id().to_string();
    let tool = start(&["--json", "-L", "-p", &me]);
    let stop = Arc::new(AtomicBool::new(false));
    let cores = thread::available_parallelism().map_or(2, |n| n.get());
    let workers: Vec<_> = (0..cores + 2)
        .map(|_| {
            let stop = stop.clone();
            thread::Builder::new()
                .name("rqlat-spin".into())
                .spawn(move || {
                    let until = Instant::now() + Duration::from_secs(3);
                    while !stop.load(Ordering::Relaxed) && Instant::now() < until {
                        std::hint::spin_loop();
                    }
                })
                .unwrap()
        })
        .collect();
    thread::sleep(Duration::from_millis(1500));
    let finished = tool.stop();
    stop.store(true, Ordering::Relaxed);
    workers.into_iter().for_each(|w| w.join().unwrap());
    let hists = finished.json();
    let spinning: Vec<&Value> = hists.iter().filter(|h| h["comm"] == "rqlat-spin").collect();
    assert!(
        spinning.len() >= cores,
        "{} thread histograms",
        spinning.len()
    );
    let mut tids: Vec<u64> = spinning
        .iter()
        .map(|h| h["tid"].as_u64().unwrap())
        .collect();
    tids.dedup();
    assert_eq!(tids.len(), spinning.len(), "one histogram per tid");
}

#[test]
fn runqlat_interval_count_and_text_layout() {
    require_root();
    let started = Instant::now();
    let tool = Traced::start(BIN, &["-T", "--percentiles", "1", "2"]);
    let _spinners: Vec<Spinner> = (0..4).map(|_| Spinner::new()).collect();
    let finished = tool.wait(Duration::from_secs(20));
    assert!(finished.status.success(), "{finished:?}");
    assert!(started.elapsed() >= Duration::from_secs(2));
    let text = finished.stdout.join("\n");
    assert!(text.starts_with("Tracing run queue latency... Hit Ctrl-C to end."));
    assert_eq!(
        text.matches("     usecs               : count    distribution")
            .count(),
        2
    );
    assert_eq!(
        text.matches("percentiles (usecs): p50 ").count(),
        2,
        "{text}"
    );
}

#[test]
fn runqlat_pid_namespaces_are_keyed_by_inode() {
    let tool = start(&["--json", "--pidnss", "-m"]);
    let (finished, _) = contend(tool, 1.0);
    let ns = fs::read_link("/proc/self/ns/pid").unwrap();
    let inode: u64 = ns
        .to_str()
        .unwrap()
        .trim_start_matches("pid:[")
        .trim_end_matches(']')
        .parse()
        .unwrap();
    let hists = finished.json();
    let h = hists
        .iter()
        .find(|h| h["pidns"] == inode)
        .unwrap_or_else(|| panic!("no pidns {inode}: {hists:?}"));
    assert_eq!(h["unit"], "msecs");
    assert!(count(h) > 0);
}

#[test]
fn runqlat_cgroup_filter_judges_the_woken_task() {
    require_root();
    let cg = cgroup2_root().join(unique("rqlat-"));
    fs::create_dir(&cg).unwrap();
    let inside = Spinner::new();
    fs::write(cg.join("cgroup.procs"), inside.pid().to_string()).unwrap();
    let tool = Traced::start(BIN, &["--json", "-P", "-c", cg.to_str().unwrap()]);
    let (finished, outside) = contend(tool, 1.0);
    drop(inside);
    thread::sleep(Duration::from_millis(100));
    let _ = fs::remove_dir(&cg);
    let hists = finished.json();
    assert!(!hists.is_empty(), "{finished:?}");
    let pids: Vec<u64> = hists.iter().map(|h| h["pid"].as_u64().unwrap()).collect();
    assert!(
        outside.iter().all(|p| !pids.contains(&(*p as u64))),
        "tasks outside the cgroup were counted: {pids:?}"
    );
}

#[test]
fn runqlat_raw_tp_fallback_works() {
    require_root();
    let out = Command::new(BIN)
        .arg("--dry-run")
        .env("BPFTOOLS_DISABLE", "tp_btf")
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(listing.contains("raw_tp sched_switch"), "{listing}");
    let tool = Traced::start_command(
        Command::new(BIN)
            .args(["--json", "-P"])
            .env("BPFTOOLS_DISABLE", "tp_btf"),
    );
    let (finished, pids) = contend(tool, 1.0);
    let hists = finished.json();
    assert!(
        pids.iter().any(|p| hists.iter().any(|h| h["pid"] == *p)),
        "{hists:?}"
    );
}

#[test]
fn runqlat_dry_run_and_bad_arguments() {
    require_root();
    let f = run(BIN, &["--dry-run"]);
    assert!(f.status.success(), "{f:?}");
    // tp_btf with task storage (5.11+), else raw_tp with a hash map.
    let hook = common::kernel::probe::task_state_hook().expect("tp_btf or raw_tp");
    let listing = f.stdout.join("\n");
    assert!(
        listing.contains(&format!("{hook} sched_switch")),
        "{listing}"
    );
    for (bad, needle) in [(&["0"][..], "greater than zero"), (&["-p", "x"], "'x'")] {
        let f = run(BIN, bad);
        assert_eq!(f.status.code(), Some(2), "{f:?}");
        assert!(f.stderr.contains(needle), "{}", f.stderr);
    }
}

/// The histograms of an HdrHistogram interval log, in order.
fn read_hdr_log(path: &std::path::Path) -> Vec<hdrhistogram::Histogram<u64>> {
    use base64::Engine;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;
    let bytes = fs::read(path).unwrap();
    IntervalLogIterator::new(&bytes)
        .filter_map(|entry| match entry.expect("a well-formed interval log") {
            LogEntry::Interval(h) => Some(h),
            _ => None,
        })
        .map(|h| {
            let raw = base64::engine::general_purpose::STANDARD
                .decode(h.encoded_histogram())
                .unwrap();
            Deserializer::new()
                .deserialize(&mut std::io::Cursor::new(raw))
                .expect("a V2 histogram")
        })
        .collect()
}

#[test]
fn runqlat_hdr_log_holds_the_percentiles_it_printed() {
    let log = std::env::temp_dir().join(format!("{}.hlog", unique("rq-hdr")));
    let tool = start(&[
        "--json",
        "--percentiles",
        "--hdr-log",
        log.to_str().unwrap(),
        "1",
        "3",
    ]);
    let cores = thread::available_parallelism().map_or(2, |n| n.get());
    let spinners: Vec<Spinner> = (0..cores + 2).map(|_| Spinner::new()).collect();
    let finished = tool.wait(Duration::from_secs(20));
    drop(spinners);
    assert!(finished.status.success(), "{finished:?}");
    let printed = finished.json();
    let logged = read_hdr_log(&log);
    let _ = fs::remove_file(&log);
    assert_eq!(printed.len(), 3, "{printed:?}");
    assert_eq!(logged.len(), printed.len(), "one log entry per interval");
    for (p, h) in printed.iter().zip(&logged) {
        // The count is the log2 histogram's, the log the fine one's: the
        // two maps are drained one after the other, so a wakeup between the
        // two reads counts in this interval in one and the next in the
        // other (a few, on a slow machine).
        let count = p["count"].as_u64().unwrap();
        assert!(
            count.abs_diff(h.len()) <= 5 + count / 100,
            "{count} vs {}: {p}",
            h.len()
        );
        for (key, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999)] {
            assert_eq!(
                p["percentiles"][key].as_u64(),
                Some(h.value_at_quantile(q)),
                "{key}: {p}"
            );
        }
    }
}

/// A real Prometheus server (Debian's) scrapes runqlat every second; its
/// view agrees with the tool's own report: the same count, and p99 within
/// one log2 bucket.
#[test]
fn prometheus_scrapes_agree_with_the_report() {
    use testkit::prometheus::{free_port, promtool_check, Prometheus};
    require_root();
    let spinners: Vec<Spinner> = (0..thread::available_parallelism().map_or(2, |n| n.get()) + 2)
        .map(|_| Spinner::new())
        .collect();
    let pids = spinners
        .iter()
        .map(|s| s.pid().to_string())
        .collect::<Vec<_>>()
        .join(",");
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let tool = start(&[
        "--json",
        "--percentiles",
        "-p",
        &pids,
        "--prometheus",
        &addr,
    ]);
    promtool_check(port);
    let prometheus = Prometheus::start(&addr);
    // Load for a few scrapes, then none: the spinners' last waits are in.
    thread::sleep(Duration::from_secs(5));
    drop(spinners);
    thread::sleep(Duration::from_secs(3));
    let count = prometheus.query("runqlat_run_queue_latency_seconds_count");
    let p99 =
        prometheus.query("histogram_quantile(0.99, runqlat_run_queue_latency_seconds_bucket)");
    drop(prometheus);
    let finished = tool.stop();
    assert!(finished.status.success(), "{finished:?}");
    let report = finished.json();
    assert_eq!(report.len(), 1, "{report:?}");
    assert!(count > 0.0);
    assert_eq!(
        report[0]["count"].as_u64(),
        Some(count as u64),
        "{report:?}"
    );
    testkit::prometheus::assert_same_log2_slot(
        p99 * 1e6,
        report[0]["percentiles"]["p99"].as_u64().unwrap() as f64,
    );
}

/// --prom-file: the metrics written at each interval (atomically), with
/// the count of every report so far.
#[test]
fn prom_file_holds_the_cumulative_count() {
    let file = std::env::temp_dir().join(format!("{}.prom", unique("rq-prom")));
    let tool = start(&["--json", "--prom-file", file.to_str().unwrap(), "1", "2"]);
    let cores = thread::available_parallelism().map_or(2, |n| n.get());
    let spinners: Vec<Spinner> = (0..cores + 2).map(|_| Spinner::new()).collect();
    let finished = tool.wait(Duration::from_secs(20));
    drop(spinners);
    assert!(finished.status.success(), "{finished:?}");
    let total: u64 = finished
        .json()
        .iter()
        .map(|h| h["count"].as_u64().unwrap())
        .sum();
    let text = fs::read_to_string(&file).unwrap();
    let _ = fs::remove_file(&file);
    let count = text
        .lines()
        .find_map(|l| l.strip_prefix("runqlat_run_queue_latency_seconds_count{} "))
        .unwrap_or_else(|| panic!("no count in {text}"));
    assert_eq!(count.parse::<u64>().unwrap(), total, "{text}");
    assert!(!file.with_extension("tmp").exists());
}

/// `--prometheus :PORT` listens on every address: IPv4 and IPv6 loopback
/// both get the metrics.
#[test]
fn prometheus_port_alone_listens_on_ipv4_and_ipv6() {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    use testkit::prometheus::{free_port, http_get_at};
    require_root();
    let port = free_port();
    let tool = start(&["--prometheus", &format!(":{port}")]);
    for ip in [
        IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(Ipv6Addr::LOCALHOST),
    ] {
        let (status, body) =
            http_get_at(ip, port, "/metrics").unwrap_or_else(|| panic!("no answer on {ip}"));
        assert!(status.contains("200"), "{ip}: {status}");
        assert!(
            body.contains("runqlat_run_queue_latency_seconds"),
            "{ip}: {body}"
        );
    }
    let finished = stop_and_check_unloaded(tool);
    assert!(finished.status.success(), "{finished:?}");
}

#[test]
fn runqlat_per_container_gives_each_container_its_section() {
    use std::os::unix::fs::MetadataExt;
    require_root();
    let (docker, pod) = (
        testkit::FakeContainer::docker(),
        testkit::FakeContainer::kubernetes(),
    );
    let spin = |c: &testkit::FakeContainer| {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "while :; do :; done"]);
        Spinner(c.adopt(&mut cmd).spawn().unwrap())
    };
    let inside = [spin(&docker), spin(&pod)];
    let json = Traced::start(BIN, &["--json", "--per-container"]);
    let text = Traced::start(BIN, &["--per-container"]);
    let (json, _) = contend(json, 1.5);
    let text = text.stop();
    drop(inside);
    let hists = json.json();
    for c in [&docker, &pod] {
        let h = hists
            .iter()
            .find(|h| h["container"] == c.short_id())
            .unwrap_or_else(|| panic!("no section for {}: {hists:?}", c.short_id()));
        assert!(count(h) > 0, "{h}");
        assert_eq!(h["cgroup_id"], fs::metadata(&c.dir).unwrap().ino());
        let title = format!("container = {}", c.short_id());
        assert!(text.stdout.iter().any(|l| l == &title), "{:?}", text.stdout);
    }
}

/// The fine histograms' map (10,240 entries of 3 KB, allocated and zeroed
/// as it loads) is one entry unless percentiles or an HDR log ask for it.
#[test]
fn runqlat_fine_histograms_take_memory_only_when_asked() {
    for (args, entries) in [(&[][..], 1), (&["--percentiles"][..], 10240)] {
        let tool = start(args);
        let maps = testkit::maps_of(tool.pid());
        stop_and_check_unloaded(tool);
        let size = |name: &str| maps.iter().find(|(n, _)| n == name).map(|(_, e)| *e);
        assert_eq!(size("fine_hists"), Some(entries), "{args:?}: {maps:?}");
        assert_eq!(size("hists"), Some(10240), "{args:?}: {maps:?}");
    }
}
