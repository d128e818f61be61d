//! The contract every tool keeps (testkit::contract), for fileslower.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_fileslower"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[&["-1"], &["x"], &["-p", "x"], &["1", "2"]],
});
