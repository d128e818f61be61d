//! The contract every tool keeps (testkit::contract), for offcputime.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_offcputime"),
    args: &[],
    final_report: Some("    -"),
    needs: None,
    conflicts: &[(&["-f", "--json"], &["--folded", "--json"])],
});
