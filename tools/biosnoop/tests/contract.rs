//! The contract every tool keeps (testkit::contract), for biosnoop.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_biosnoop"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["0"],
        &["x"],
        &["-p", "x"],
        &["-m", "-1"],
        &["-t", "-T"],
        &["-c", "/no/such/cgroup"],
        &["1", "2"],
    ],
});
