//! The contract every tool keeps (testkit::contract), for tcplife.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_tcplife"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[
        (&["-4", "-6"], &["--ipv4", "--ipv6"]),
        (&["--json", "-s"], &["--json", "--csv"]),
    ],
    refused: &[
        &["-4", "-6"],
        &["-L", "http"],
        &["-D", "70000"],
        &["-p", "x"],
        &["-s", "-w"],
        &["5"],
    ],
});
