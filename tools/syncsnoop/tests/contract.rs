//! The contract every tool keeps (testkit::contract), for syncsnoop.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_syncsnoop"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["-p", "x"],
        &["-m", "x"],
        &["-m", "-1"],
        &["-d", "x"],
        &["-c", "/no/such/cgroup"],
        &["5"],
        &["-d", "0"],
    ],
});
