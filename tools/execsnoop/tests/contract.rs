//! The contract every tool keeps (testkit::contract), for execsnoop.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_execsnoop"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["--max-args", "0"],
        &["--max-args", "61"],
        &["--max-args", "-3"],
        &["-P", "notapid"],
        &["-n", "("],
        &["-u", "no-such-user-xyz"],
        &["-c", "/no/such/cgroup"],
    ],
});
