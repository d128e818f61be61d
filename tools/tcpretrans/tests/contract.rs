//! The contract every tool keeps (testkit::contract), for tcpretrans.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_tcpretrans"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[(&["-4", "-6"], &["--ipv4", "--ipv6"])],
    refused: &[
        &["-4", "-6"],
        &["-p", "notapid"],
        &["-c", "-s"],
        &["-l", "--lossprobe-if-available"],
        &["5"],
        &["-c", "--containers"],
    ],
});
