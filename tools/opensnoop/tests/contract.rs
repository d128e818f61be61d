//! The contract every tool keeps (common::testing::contract), for opensnoop.

common::contract_tests!(common::testing::contract::Spec {
    bin: env!("CARGO_BIN_EXE_opensnoop"),
    args: &[],
    final_report: None,
});
