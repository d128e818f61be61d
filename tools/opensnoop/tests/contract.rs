//! The contract every tool keeps (testkit::contract), for opensnoop.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_opensnoop"),
    args: &[],
    final_report: None,
    needs: None,
    conflicts: &[],
});
