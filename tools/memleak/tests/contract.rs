//! The contract every tool keeps (testkit::contract), for memleak.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_memleak"),
    args: &["1"],
    final_report: Some("stacks with outstanding allocations"),
    needs: None,
    conflicts: &[(&["-f", "--json"], &["--folded", "--json"])],
});
