//! The contract every tool keeps (testkit::contract), for runqslower.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_runqslower"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[(&["-p", "1", "-t", "1"], &["--pid", "--tid"])],
    refused: &[
        &["-c", "/no/such/cgroup"],
        &["-p", "x"],
        &["-t", "x"],
        &["-5"],
        &["1", "2"],
    ],
});
