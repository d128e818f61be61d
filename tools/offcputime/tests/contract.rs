//! The contract every tool keeps (common::testing::contract), for offcputime.

common::contract_tests!(common::testing::contract::Spec {
    bin: env!("CARGO_BIN_EXE_offcputime"),
    args: &[],
    final_report: Some("    -"),
});
