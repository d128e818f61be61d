//! The contract every tool keeps (testkit::contract), for wakeuptime.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_wakeuptime"),
    args: &[],
    final_report: Some("    waker:"),
    needs: None,
    heavy: false,
    conflicts: &[(&["-f", "--json"], &["--folded", "--json"])],
    refused: &[
        &["0"],
        &["-p", "x"],
        &["-u", "-k"],
        &["-U", "-K"],
        &["-p", "1", "-t", "1"],
        &["--perf-max-stack-depth", "128"],
        &["--stack-storage-size", "0"],
        &["-f", "--json"],
        &["-m", "x"],
        &["18446744073709551615"],
        &["--unwind", "frames"],
        &["--stack-copy-size", "65537"],
    ],
});
