//! cachetop against real page cache traffic: a file read cold by one
//! process and warm by another, each in its own row; a write's dirtied
//! pages; -p; the screen's heading, order and row limit. Each workload is
//! one process, held until the tool is tracing.

use std::collections::BTreeMap;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;
use testkit::pagecache::{drop_page_cache, exclusive, Held, TestFile, PAGES_PER_MIB};
use testkit::{require_root, stop_and_check_unloaded, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_cachetop");
const TMP: &str = env!("CARGO_TARGET_TMPDIR");

/// Runs the tool (JSON, 1 s intervals, `args`, `env`) while `workloads`
/// run one after another.
fn traced(args: &[&str], env: &[(&str, &str)], workloads: Vec<Held>) -> Finished {
    require_root();
    let tool = Traced::start_command(
        Command::new(BIN)
            .args(["--json"])
            .args(args)
            .arg("1")
            .envs(env.iter().copied()),
    );
    for w in workloads {
        w.run();
    }
    thread::sleep(Duration::from_millis(200));
    let finished = stop_and_check_unloaded(tool);
    assert!(finished.status.success(), "{finished:?}");
    finished
}

/// The rows of process `pid`.
fn rows_of<'a>(rows: &'a [Value], pid: &str) -> Vec<&'a Value> {
    let pid: u64 = pid.parse().unwrap();
    rows.iter().filter(|r| r["pid"] == pid).collect()
}

fn sum(rows: &[&Value], key: &str) -> u64 {
    rows.iter().map(|r| r[key].as_u64().unwrap()).sum()
}

#[test]
fn cachetop_cold_and_warm_reads_in_their_own_rows() {
    cold_then_warm(&[]);
}

/// A 32 MiB file read cold by one dd, then warm by another: the first's
/// row has the misses, the second's the hits; within each interval the
/// most hits come first.
fn cold_then_warm(env: &[(&str, &str)]) {
    let _cache = exclusive();
    let file = TestFile::new(TMP, "cachetop", 32);
    let read = format!("dd if={} of=/dev/null bs=128k status=none", file.path());
    let (cold, warm) = (Held::new(&read), Held::new(&read));
    let (cold_pid, warm_pid) = (cold.pid(), warm.pid());
    drop_page_cache();
    let f = traced(&[], env, vec![cold, warm]);
    let rows = f.json();
    let pages = (32 * PAGES_PER_MIB) as f64;

    let cold = rows_of(&rows, &cold_pid);
    let (hits, misses) = (sum(&cold, "hits"), sum(&cold, "misses"));
    assert!(
        (0.85 * pages..=1.15 * pages).contains(&(misses as f64)),
        "cold read: {misses} misses for {pages} pages: {cold:#?}"
    );
    assert!(hits as f64 <= 0.2 * pages, "cold read: {hits} hits");

    let warm = rows_of(&rows, &warm_pid);
    let (hits, misses) = (sum(&warm, "hits"), sum(&warm, "misses"));
    assert!(
        (0.95 * pages..=1.15 * pages).contains(&(hits as f64)),
        "warm read: {hits} hits for {pages} pages: {warm:#?}"
    );
    assert!(misses as f64 <= 0.02 * pages, "warm read: {misses} misses");
    for r in warm.iter().filter(|r| r["hits"].as_u64() > Some(1000)) {
        assert!(r["read_hit_percent"].as_f64() > Some(98.0), "{r}");
    }

    // The shell that execs dd reads dd's own pages first (its binary and
    // libraries: some 400 pages where every lookup counts, on 5.10's
    // kprobes): where an interval ends inside that exec (a slow guest),
    // that row still has the shell's name. The file's pages are dd's.
    let mut shell = 0;
    for r in cold.iter().chain(&warm) {
        let comm = if r["comm"] == "sh" {
            shell += sum(&[r], "hits") + sum(&[r], "misses");
            "sh"
        } else {
            "dd"
        };
        assert_eq!(
            (&r["comm"], &r["uid"], &r["user"]),
            (&comm.into(), &0.into(), &"root".into()),
            "{r}"
        );
    }
    assert!(
        (shell as f64) < 0.1 * pages,
        "{shell} pages in rows named sh"
    );
    let mut by_time: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for r in &rows {
        by_time
            .entry(r["time"].as_str().unwrap())
            .or_default()
            .push(r["hits"].as_u64().unwrap());
    }
    // Two tables can share a second (an interval's and the last, at
    // Ctrl-C): one rise in a second's rows, where the second table starts.
    for hits in by_time.values() {
        let rises = hits.windows(2).filter(|w| w[0] < w[1]).count();
        assert!(rises <= 1, "{hits:?}");
    }
}

/// A 16 MiB write: dirtied pages, not misses; its new pages are write
/// misses (a low WRITE_HIT%).
#[test]
fn cachetop_writes_show_dirties_not_misses() {
    let _cache = exclusive();
    let file = TestFile::named(TMP, "cachetop-w");
    let write = format!(
        "dd if=/dev/zero of={} bs=1M count=16 conv=fsync status=none",
        file.path()
    );
    let writer = Held::new(&write);
    let pid = writer.pid();
    let f = traced(&[], &[], vec![writer]);
    let rows = f.json();
    let mine = rows_of(&rows, &pid);
    let pages = (16 * PAGES_PER_MIB) as f64;
    let (dirties, misses) = (sum(&mine, "dirties"), sum(&mine, "misses"));
    assert!(
        (0.95 * pages..=1.1 * pages).contains(&(dirties as f64)),
        "{dirties} dirtied pages for a 16 MiB write: {mine:#?}"
    );
    assert!((misses as f64) < 0.05 * pages, "{misses} misses: {mine:#?}");
    for r in mine.iter().filter(|r| r["dirties"].as_u64() > Some(1000)) {
        assert!(r["write_hit_percent"].as_f64() < Some(10.0), "{r}");
    }
}

#[test]
fn cachetop_pid_filter_leaves_out_other_processes() {
    let _cache = exclusive();
    let file = TestFile::new(TMP, "cachetop-p", 8);
    let idle = Held::new("sleep 30");
    let reader = Held::new(&format!("cat {}", file.path()));
    let reader_pid = reader.pid();
    drop_page_cache();
    let f = traced(&["-p", &idle.pid()], &[], vec![reader]);
    let rows = f.json();
    assert!(rows_of(&rows, &reader_pid).is_empty(), "{rows:#?}");
    for r in &rows {
        assert_eq!(r["pid"].to_string(), idle.pid(), "{r}");
    }
}

/// The screen as BCC's: the heading line (time, Buffers and Cached, the
/// sort column and order), the header, at most -r rows; it ends by itself
/// after the count.
#[test]
fn cachetop_screen_heads_sorts_and_cuts() {
    let _cache = exclusive();
    let file = TestFile::new(TMP, "cachetop-s", 4);
    for (args, heading) in [
        (
            &["-C", "-r", "2", "1", "2"][..],
            "Sort: HITS / Order: descending",
        ),
        (
            &["-C", "-r", "2", "-s", "READ_HIT%", "-R", "1", "2"][..],
            "Sort: READ_HIT% / Order: ascending",
        ),
    ] {
        require_root();
        let started = Instant::now();
        let tool = Traced::start(BIN, args);
        // Readers through both intervals, so that each has rows.
        let busy = Held::new(&format!(
            "sh -c 'while :; do cat {} >/dev/null; sleep 0.05; done'",
            file.path()
        ));
        let pid = busy.pid();
        let gate = thread::spawn(move || busy.run());
        let f = tool.wait(Duration::from_secs(30));
        let _ = Command::new("kill").arg(&pid).status();
        let _ = gate.join();
        assert!(f.status.success(), "{f:?}");
        assert!(started.elapsed() >= Duration::from_secs(2));
        let titles: Vec<&String> = f
            .stdout
            .iter()
            .filter(|l| l.contains("Buffers MB: "))
            .collect();
        assert_eq!(titles.len(), 2, "{:#?}", f.stdout);
        for (i, line) in f.stdout.iter().enumerate() {
            if !line.contains("Buffers MB: ") {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(fields[0].len(), 8, "HH:MM:SS: {line}");
            assert!(line.ends_with(heading), "{line}");
            assert!(line.contains(" / Cached MB: "), "{line}");
            assert_eq!(
                f.stdout[i + 1].split_whitespace().collect::<Vec<_>>(),
                [
                    "PID",
                    "UID",
                    "CMD",
                    "HITS",
                    "MISSES",
                    "DIRTIES",
                    "READ_HIT%",
                    "WRITE_HIT%"
                ]
            );
            let rows: Vec<&String> = f.stdout[i + 2..]
                .iter()
                .take_while(|l| !l.is_empty())
                .collect();
            assert!((1..=2).contains(&rows.len()), "-r 2: {rows:#?}");
            for row in rows {
                let cells: Vec<&str> = row.split_whitespace().collect();
                assert_eq!(cells.len(), 8, "{row}");
                cells[0].parse::<u32>().unwrap();
                assert!(cells[6].ends_with('%') && cells[7].ends_with('%'), "{row}");
            }
        }
    }
}

/// raw_tp programs where tp_btf is missing (5.x kernels with the filemap
/// tracepoints backported; forced here).
#[test]
fn cachetop_raw_tp_variant_counts_too() {
    require_root();
    let tracepoints = common::kernel::probe::btf_tracepoint_exists("mm_filemap_get_pages");
    if !testkit::feature_present(tracepoints, "the filemap tracepoints", Some((6, 10))) {
        return;
    }
    let _cache = exclusive();
    let file = TestFile::new(TMP, "cachetop-raw", 8);
    let reader = Held::new(&format!("cat {}", file.path()));
    let pid = reader.pid();
    drop_page_cache();
    let env = [("BPFTOOLS_DISABLE", "tp_btf,fentry,kprobe")];
    let f = traced(&["-v"], &env, vec![reader]);
    assert!(
        f.stderr.contains("raw_tp mm_filemap_get_pages"),
        "{}",
        f.stderr
    );
    let rows = f.json();
    let misses = sum(&rows_of(&rows, &pid), "misses");
    assert!(
        misses >= 8 * PAGES_PER_MIB * 85 / 100,
        "{misses} misses for 2048 pages"
    );
}

/// kprobes on BCC's functions, where fentry would be chosen (6.1, 6.12)
/// or is missing.
#[test]
fn cachetop_kprobe_mode_counts_reads() {
    require_root();
    if !testkit::feature_present(common::kernel::probe::features().kprobe, "kprobes", None) {
        return;
    }
    cold_then_warm(&[("BPFTOOLS_DISABLE", "fentry")]);
}
