//! The contract every tool keeps (testkit::contract), for threadsnoop.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_threadsnoop"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["-p", "x"],
        &["-d", "x"],
        &["-d", "0"],
        &["-c", "/no/such/cgroup"],
        &["5"],
    ],
});
