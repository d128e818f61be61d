//! The contract every tool keeps (testkit::contract), for biolatency.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_biolatency"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["0"],
        &["-1"],
        &["1", "0"],
        &["x"],
        &["-c", "/no/such/cgroup"],
        &["18446744073709551615"],
    ],
});
