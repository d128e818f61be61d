//! The contract every tool keeps (testkit::contract), for softirqslower.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_softirqslower"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["0"],
        &["-1"],
        &["1", "2"],
        &["-c", "x"],
        &["-c", "100000"],
        &["-d", "0"],
        &["--cgroup", "/no/such/cgroup"],
    ],
});
