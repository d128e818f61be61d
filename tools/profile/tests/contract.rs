//! The contract every tool keeps (testkit::contract), for profile.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_profile"),
    // The idle task: samples on any machine.
    args: &["-I"],
    final_report: Some("    -"),
    needs: None,
    conflicts: &[(&["-f", "--json"], &["--folded", "--json"])],
});
