//! The contract every tool keeps (testkit::contract), for oomkill.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_oomkill"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[&["-c", "/no/such/cgroup"], &["5"], &["-p", "1"]],
});
