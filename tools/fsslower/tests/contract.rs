//! The contract every tool keeps (testkit::contract), for fsslower.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_ext4slower"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["-t", "vfat"],
        &["-m", "x"],
        &["-m", "1", "2"],
        &["-j", "--json"],
        &["-p", "x"],
        &["1", "2"],
    ],
});
