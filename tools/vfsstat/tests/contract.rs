//! The contract every tool keeps (testkit::contract), for vfsstat.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_vfsstat"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[&["0"], &["1", "0"], &["-p", "x"], &["x"]],
});
