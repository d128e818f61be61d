//! The contract every tool keeps (testkit::contract), for runqlat.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_runqlat"),
    args: &[],
    final_report: Some("usecs"),
    needs: None,
    conflicts: &[],
});
