//! The contract every tool keeps (common::testing::contract), for execsnoop.

common::contract_tests!(common::testing::contract::Spec {
    bin: env!("CARGO_BIN_EXE_execsnoop"),
    args: &[],
    final_report: None,
});
