//! The contract every tool keeps (common::testing::contract), for runqlat.

common::contract_tests!(common::testing::contract::Spec {
    bin: env!("CARGO_BIN_EXE_runqlat"),
    args: &[],
    final_report: Some("usecs"),
});
