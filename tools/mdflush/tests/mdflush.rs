//! mdflush against an md RAID1 array of two loop devices the test makes
//! (mdadm) and removes: each `dd conv=fsync` by a dd of the test's own
//! sends one flush to the array. This machine's kernel has no md: the
//! tests that need an array run in the VM guests (md_mod and raid1 are
//! loaded there), and skip here, saying so.

use std::path::Path;

use testkit::block::{Dd, Direct, MdArray};
use testkit::{feature_present, require_root, stop_and_check_unloaded, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_mdflush");
const FLUSHES: usize = 3;

fn array() -> Option<MdArray> {
    require_root();
    let md = MdArray::raid1(env!("CARGO_TARGET_TMPDIR"));
    feature_present(md.is_some(), "md (software RAID: md_mod, raid1)", None).then(|| md.unwrap())
}

/// `FLUSHES` runs of a dd of the test's own, each a 4 KiB direct write
/// and an fsync of the array, under the tool run with `args` and `env`.
fn trace_flushes(md: &MdArray, args: &[&str], env: &[(&str, &str)]) -> (Finished, Dd) {
    let dd = Dd::new("md-dd");
    let traced = Traced::start_command(
        std::process::Command::new(BIN)
            .args(args)
            .envs(env.iter().copied()),
    );
    for _ in 0..FLUSHES {
        let mut cmd = dd.command(
            Path::new(&md.dev),
            Direct::Write {
                bs: 4096,
                seek: 0,
                count: 1,
            },
        );
        let status = cmd.arg("conv=fsync,notrunc").status().unwrap();
        assert!(status.success(), "{status}");
    }
    let f = stop_and_check_unloaded(traced);
    assert!(f.status.success(), "{f:?}");
    (f, dd)
}

/// The hooks this kernel offers for md's function, as --dry-run lists them.
fn dry_run(env: &[(&str, &str)]) -> String {
    let f = testkit::run_with_env(BIN, &["--dry-run"], env);
    assert!(f.status.success(), "{f:?}");
    f.stdout.join("\n")
}

/// BCC's lines: TIME PID COMM DEVICE, one per flush, at md's function
/// (fentry or kprobe: md_mod is loaded) where the kernel allows.
#[test]
fn mdflush_shows_each_flush_to_an_md_array() {
    let Some(md) = array() else { return };
    let hooks = dry_run(&[]);
    let probed = ["fentry md_flush_request", "kprobe md_flush_request"];
    // The guests have kprobes (and fentry on 6.12); md_mod is loaded now.
    if Path::new("/sys/bus/event_source/devices/kprobe/type").exists() {
        assert!(probed.iter().any(|h| hooks.contains(h)), "{hooks}");
    }
    let (f, dd) = trace_flushes(&md, &[], &[]);
    assert_eq!(
        f.stdout[0], "TIME     PID     COMM             DEVICE",
        "{f:?}"
    );
    let mine: Vec<&String> = f
        .stdout
        .iter()
        .filter(|l| l.split_whitespace().nth(2) == Some(dd.comm()))
        .collect();
    assert_eq!(mine.len(), FLUSHES, "{f:?}");
    for l in mine {
        let cols: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(cols.len(), 4, "{l}");
        assert_eq!(cols[3], md.name(), "{l}");
        assert_eq!(cols[0].len(), 8, "HH:MM:SS: {l}");
    }
}

/// Without md's function (no fentry or kprobes, md_mod loaded after the
/// start): flush bios queued to md devices, at block_bio_queue, tp_btf
/// else raw_tp; each in JSON with the array and its number.
#[test]
fn mdflush_block_layer_mode_sees_the_same_flushes() {
    let Some(md) = array() else { return };
    for (disable, hook) in [
        ("md_flush_request", "tp_btf block_bio_queue"),
        ("md_flush_request,tp_btf", "raw_tp block_bio_queue"),
    ] {
        let env = [("BPFTOOLS_DISABLE", disable)];
        let hooks = dry_run(&env);
        assert!(hooks.contains(hook), "{disable}: {hooks}");
        let (f, dd) = trace_flushes(&md, &["--json"], &env);
        let mine: Vec<serde_json::Value> = f
            .json()
            .into_iter()
            .filter(|o| o["comm"] == dd.comm())
            .collect();
        assert_eq!(mine.len(), FLUSHES, "{disable}: {f:?}");
        for o in mine {
            assert_eq!(o["device"], md.name(), "{o}");
            assert!(o["dev"].as_str().unwrap().starts_with("9:"), "{o}");
        }
    }
}

/// Where md has no module loaded (this machine: no md at all), the block
/// layer's hook, and a note that says why.
#[test]
fn mdflush_without_md_says_which_hook() {
    require_root();
    let hooks = dry_run(&[("BPFTOOLS_DISABLE", "md_flush_request")]);
    assert!(hooks.contains("block_bio_queue"), "{hooks}");
    assert!(
        hooks.contains("md_flush_request takes no fentry or kprobe"),
        "{hooks}"
    );
}
