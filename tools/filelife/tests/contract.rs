//! The contract every tool keeps (testkit::contract), for filelife.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_filelife"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[&["-p", "x"], &["1"], &["-x"]],
});
