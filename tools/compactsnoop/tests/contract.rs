//! The contract every tool keeps (testkit::contract), for compactsnoop.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_compactsnoop"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["-p", "x"],
        &["-d", "0"],
        &["-c", "/no/such/cgroup"],
        &["5"],
    ],
});
