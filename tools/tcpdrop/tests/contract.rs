//! The contract every tool keeps (testkit::contract), for tcpdrop.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_tcpdrop"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[(&["-4", "-6"], &["--ipv4", "--ipv6"])],
    refused: &[&["-4", "-6"], &["-P", "http"], &["5"]],
});
