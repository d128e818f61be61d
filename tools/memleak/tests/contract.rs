//! The contract every tool keeps (common::testing::contract), for memleak.

common::contract_tests!(common::testing::contract::Spec {
    bin: env!("CARGO_BIN_EXE_memleak"),
    args: &["1"],
    final_report: Some("stacks with outstanding allocations"),
});
