//! The contract every tool keeps (testkit::contract), for tcpsynbl.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_tcpsynbl"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[(&["-4", "-6"], &["--ipv4", "--ipv6"])],
    refused: &[
        &["0"],
        &["1", "0"],
        &["-P", "x"],
        &["-P", "70000"],
        &["-P", ""],
    ],
});
