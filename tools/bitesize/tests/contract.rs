//! The contract every tool keeps (testkit::contract), for bitesize.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_bitesize"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["0"],
        &["1", "0"],
        &["-c", ""],
        &["-c", "a-name-of-16-byt"],
        &["-p", "x"],
    ],
});
