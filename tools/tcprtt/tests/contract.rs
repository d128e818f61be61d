//! The contract every tool keeps (testkit::contract), for tcprtt.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_tcprtt"),
    args: &[],
    final_report: None,
    needs: None,
});
