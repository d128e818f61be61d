//! The contract every tool keeps (testkit::contract), for hardirqs.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_hardirqs"),
    args: &[],
    final_report: Some("TOTAL_usecs"),
    needs: None,
    conflicts: &[],
    refused: &[
        &["0"],
        &["1", "0"],
        &["-c", "9999"],
        &["-c", "x"],
        &["-C", "-d"],
        &["--per-container"],
        &["--percentiles"],
    ],
});
