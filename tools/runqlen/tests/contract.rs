//! The contract every tool keeps (testkit::contract), for runqlen.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_runqlen"),
    args: &[],
    final_report: Some("runqlen"),
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["0"],
        &["1", "0"],
        &["-f", "0"],
        &["-f", "x"],
        &["-f", "100000000"]
    ],
});
