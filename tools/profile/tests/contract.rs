//! The contract every tool keeps (testkit::contract), for profile.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_profile"),
    // The idle task: samples on any machine.
    args: &["-I"],
    final_report: Some("    -"),
    needs: None,
    heavy: false,
    conflicts: &[(&["-f", "--json"], &["--folded", "--json"])],
    refused: &[
        &["0"],
        &["-p", "x"],
        &["-U", "-K"],
        &["-p", "1", "-L", "1"],
        &["-F", "0"],
        &["-F", "99", "-c", "1000"],
        &["-c", "0"],
        &["-C", "x"],
        &["--perf-max-stack-depth", "128"],
        &["--stack-storage-size", "0"],
        &["-f", "--json"],
        &["--unwind", "frames"],
        &["--cgroup", "/nonexistent"],
    ],
});
