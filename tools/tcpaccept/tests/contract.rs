//! The contract every tool keeps (testkit::contract), for tcpaccept.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_tcpaccept"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[(&["-4", "-6"], &["--ipv4", "--ipv6"])],
    refused: &[&["-4", "-6"], &["-P", "http"], &["-p", "x"], &["5"]],
});
