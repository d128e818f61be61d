//! The contract every tool keeps (testkit::contract), for biopattern.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_biopattern"),
    args: &["1"],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["-d", "no-such-disk"],
        &["-d", ""],
        &["x"],
        &["0"],
        &["1", "0"],
        &["1", "x"],
    ],
});
