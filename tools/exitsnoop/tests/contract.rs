//! The contract every tool keeps (testkit::contract), for exitsnoop.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_exitsnoop"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["-p", "x"],
        &["-p", "0"],
        &["-c", "/no/such/cgroup"],
        &["5"]
    ],
});
