//! The contract every tool keeps (testkit::contract), for tcpconnlat.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_tcpconnlat"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[(&["-4", "-6"], &["--ipv4", "--ipv6"])],
    refused: &[
        &["-4", "-6"],
        &["-1"],
        &["x"],
        &["1", "-m", "2"],
        &["-p", "x"],
        &["1", "2"],
    ],
});
