//! The contract every tool keeps (testkit::contract), for sofdsnoop.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_sofdsnoop"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[(&["-p", "1", "-t", "1"], &["--pid", "--tid"])],
    refused: &[
        &["-p", "x"],
        &["-t", "x"],
        &["-d", "x"],
        &["-d", "0"],
        &["-n", ""],
        &["-c", "/no/such/cgroup"],
        &["5"],
    ],
});
