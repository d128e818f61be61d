//! The contract every tool keeps (testkit::contract), for biotop.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_biotop"),
    args: &[],
    final_report: None,
    needs: None,
    conflicts: &[],
});
