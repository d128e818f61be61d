//! bitesize against real block I/O: dd under unique names reads blocks of
//! known sizes from a loop device of the test's own.

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use testkit::block::{Dd, Direct, LoopDevice};
use testkit::{require_root, stop_and_check_unloaded, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_bitesize");

fn loop_device() -> LoopDevice {
    LoopDevice::new(env!("CARGO_TARGET_TMPDIR"), 8)
}

/// The non-empty buckets of `comm`'s histogram, as (low, count).
fn buckets(hists: &[Value], comm: &str) -> Vec<(u64, u64)> {
    let h = hists
        .iter()
        .find(|h| h["comm"] == comm)
        .unwrap_or_else(|| panic!("no histogram for {comm}: {hists:#?}"));
    h["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["count"].as_u64() > Some(0))
        .map(|b| (b["low"].as_u64().unwrap(), b["count"].as_u64().unwrap()))
        .collect()
}

fn check_sizes(env: &[(&str, &str)]) {
    let lo = loop_device();
    require_root();
    let big = Dd::new("bzb");
    let small = Dd::new("bzs");
    let tool = Traced::start_command(
        Command::new(BIN)
            .args(["--json", "--percentiles", "-d", lo.name()])
            .envs(env.iter().copied()),
    );
    big.run(
        Path::new(&lo.dev),
        Direct::Read {
            bs: 16384,
            skip: 0,
            count: 30,
        },
    );
    small.run(
        Path::new(&lo.dev),
        Direct::Read {
            bs: 4096,
            skip: 0,
            count: 12,
        },
    );
    let f = stop_and_check_unloaded(tool);
    assert!(f.status.success(), "{f:?}");
    let hists = f.json();
    assert_eq!(
        buckets(&hists, big.comm()),
        [(16, 30)],
        "16 KiB reads: 16 -> 31"
    );
    assert_eq!(
        buckets(&hists, small.comm()),
        [(4, 12)],
        "4 KiB reads: 4 -> 7"
    );
    let h = hists.iter().find(|h| h["comm"] == big.comm()).unwrap();
    assert_eq!(h["unit"], "Kbytes");
    assert_eq!(h["total"], 30 * 16, "{h}");
    assert_eq!(h["percentiles"]["p50"], 16, "{h}");
}

#[test]
fn bitesize_sizes_fall_in_their_slots() {
    check_sizes(&[]);
}

/// Kernels without tp_btf and before 6.5: raw_tp, insert/issue/complete.
#[test]
fn bitesize_raw_tp_fallback_sizes_the_same() {
    check_sizes(&[("BPFTOOLS_DISABLE", "tp_btf,block_io_start,block_io_done")]);
}

#[test]
fn bitesize_comm_filter_and_bcc_layout() {
    let lo = loop_device();
    require_root();
    let shown = Dd::new("bzc");
    let hidden = Dd::new("bzh");
    let tool = Traced::start(BIN, &["-c", shown.comm(), "-d", lo.name()]);
    shown.run(
        Path::new(&lo.dev),
        Direct::Read {
            bs: 8192,
            skip: 0,
            count: 5,
        },
    );
    hidden.run(
        Path::new(&lo.dev),
        Direct::Read {
            bs: 8192,
            skip: 0,
            count: 5,
        },
    );
    let f = stop_and_check_unloaded(tool);
    let text = f.stdout.join("\n");
    assert!(
        text.contains(&format!("Process Name = {}", shown.comm())),
        "{text}"
    );
    assert!(
        !text.contains(hidden.comm()),
        "-c keeps other names out: {text}"
    );
    assert!(
        text.contains("     Kbytes              : count    distribution"),
        "{text}"
    );
    let row = f
        .stdout
        .iter()
        .find(|l| l.trim_start().starts_with("8 -> 15"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains(": 5 "), "{row}");
}

#[test]
fn bitesize_per_container_sizes_each_containers_io() {
    let lo = loop_device();
    require_root();
    let (docker, pod) = (
        testkit::FakeContainer::docker(),
        testkit::FakeContainer::kubernetes(),
    );
    let tool = Traced::start(BIN, &["--json", "--per-container", "-d", lo.name()]);
    // 8 KiB reads in one container, 64 KiB in the other: one slot each.
    for (who, bs, count) in [(&docker, 8192, 40), (&pod, 65536, 20)] {
        let io = Direct::Read { bs, skip: 0, count };
        let mut cmd = Dd::system().command(Path::new(&lo.dev), io);
        assert!(who.adopt(&mut cmd).status().unwrap().success());
    }
    let hists = stop_and_check_unloaded(tool).json();
    for (who, kb, count) in [(&docker, 8, 40), (&pod, 64, 20)] {
        let h = hists
            .iter()
            .find(|h| h["container"] == who.short_id())
            .unwrap_or_else(|| panic!("no section for {}: {hists:#?}", who.short_id()));
        let full: Vec<(u64, u64)> = h["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["count"].as_u64() > Some(0))
            .map(|b| (b["low"].as_u64().unwrap(), b["count"].as_u64().unwrap()))
            .collect();
        assert_eq!(full, [(kb, count)], "{h}");
    }
}
