//! The contract every tool keeps (testkit::contract), for statsnoop.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_statsnoop"),
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
        &["-d", "31536001"],
    ],
});
