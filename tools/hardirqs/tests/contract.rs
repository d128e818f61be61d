//! The contract every tool keeps (testkit::contract), for hardirqs.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_hardirqs"),
    args: &["-d"],
    // -d: the file options are of histograms; which interrupts come in
    // a second is not certain on every machine.
    final_report: None,
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
