//! The contract every tool keeps (testkit::contract), for softirqs.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_softirqs"),
    args: &["-d"],
    // The timer softirq runs at every tick: a histogram is certain.
    final_report: Some("softirq = timer"),
    needs: None,
    heavy: false,
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
