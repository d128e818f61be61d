//! The contract every tool keeps (testkit::contract), for solisten.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_solisten"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[(&["-4", "-6"], &["--ipv4", "--ipv6"])],
    refused: &[
        &["-p", "x"],
        &["-P", "x"],
        &["-n", "0"],
        &["-n", "x"],
        &["-d", "0"],
        &["-c", "/no/such/cgroup"],
        &["5"],
    ],
});
