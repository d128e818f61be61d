//! The contract every tool keeps (testkit::contract), for tcptop.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_tcptop"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[(&["-4", "-6"], &["--ipv4", "--ipv6"])],
    refused: &[
        &["-4", "-6"],
        &["-s", "bytes"],
        &["-r", "0"],
        &["0"],
        &["-p", "x"],
    ],
});
