//! The contract every tool keeps (testkit::contract), for cachetop.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_cachetop"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["0"],
        &["1", "0"],
        &["-r", "0"],
        &["-s", "size"],
        &["-p", "x"],
    ],
});
