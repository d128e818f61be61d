//! The contract every tool keeps (common::testing::contract), for tcpretrans.

common::contract_tests!(common::testing::contract::Spec {
    bin: env!("CARGO_BIN_EXE_tcpretrans"),
    args: &[],
    final_report: None,
});
