//! The contract every tool keeps (testkit::contract), for cachestat.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_cachestat"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["0"],
        &["1", "0"],
        &["-p", "x"],
        &["-2"],
        &["18446744073709551615"],
    ],
});
