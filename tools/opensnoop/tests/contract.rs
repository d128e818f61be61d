//! The contract every tool keeps (testkit::contract), for opensnoop.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_opensnoop"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["-p", "notapid"],
        &["-p", "1, x"],
        &["-d", "0"],
        &["-f", "O_NOPE"],
        &["--exec"],
        &["-p", "1", "--exec", "true"],
        &["-n", ""],
        &["-d", "18446744073709551615"],
    ],
});
