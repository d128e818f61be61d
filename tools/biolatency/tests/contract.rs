//! The contract every tool keeps (common::testing::contract), for biolatency.

common::contract_tests!(common::testing::contract::Spec {
    bin: env!("CARGO_BIN_EXE_biolatency"),
    args: &[],
    final_report: None,
});
