//! profile as it is run on a build machine (all processes, -f): processes
//! living 100 ms on a busy machine are named as perf names them.
//! A test binary of its own: cargo runs the binaries one after another, so
//! nothing else of the tool's runs beside these (their spinners keep both
//! CPUs busy).

testkit::short_lived_tests!(env!("CARGO_BIN_EXE_profile"), "spin", ["-F", "99", "-f"]);

/// --unwind dwarf: each stack copy is unwound with the tables of the files
/// the side band kept, when the tool reads it after the process is gone
/// (the tool stopped meanwhile; copies of 4 KiB, enough for the workload's
/// stack, so that the ring holds them all).
#[test]
fn processes_gone_before_their_stacks_are_read_are_unwound_with_dwarf() {
    let args = |_: &std::path::Path| {
        [
            "-F",
            "99",
            "-f",
            "--unwind",
            "dwarf",
            "--stack-copy-size",
            "4096",
        ]
        .map(String::from)
        .to_vec()
    };
    let bin = env!("CARGO_BIN_EXE_profile");
    testkit::stacks::check_stopped(bin, args, "spin", env!("CARGO_TARGET_TMPDIR"));
}
