//! The contract every tool keeps (testkit::contract), for cpudist.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_cpudist"),
    args: &[],
    final_report: Some("usecs"),
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["0"],
        &["-3"],
        &["1", "0"],
        &["-p", "notapid"],
        &["-P", "-L"],
        &["-L", "--per-container"],
        &["-c", "/no/such/cgroup"],
        &["18446744073709551615"],
    ],
});
