//! The contract every tool keeps (common::testing::contract), for cachestat.

common::contract_tests!(common::testing::contract::Spec {
    bin: env!("CARGO_BIN_EXE_cachestat"),
    args: &[],
    final_report: None,
});
