//! The contract every tool keeps (testkit::contract), for mountsnoop.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_mountsnoop"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[&["-p", "x"], &["-c", "/no/such/cgroup"], &["5"]],
});
