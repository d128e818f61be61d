//! The contract every tool keeps (testkit::contract), for filegone.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_filegone"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["-p", "x"],
        &["-d", "x"],
        &["-c", "/no/such/cgroup"],
        &["5"],
        &["-d", "0"],
    ],
});
