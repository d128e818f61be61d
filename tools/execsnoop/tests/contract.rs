//! The contract every tool keeps (testkit::contract), for execsnoop.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_execsnoop"),
    args: &[],
    final_report: None,
    needs: None,
    conflicts: &[],
});
