//! The contract every tool keeps (testkit::contract), for slabratetop.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_slabratetop"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["-p", "x"],
        &["-s", "pages"],
        &["-r", "0"],
        &["0"],
        &["1", "0"],
        &["-c", "/no/such/cgroup"],
    ],
});
