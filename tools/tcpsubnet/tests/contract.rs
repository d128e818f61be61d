//! The contract every tool keeps (testkit::contract), for tcpsubnet.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_tcpsubnet"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[(&["-J", "--json"], &["-J", "--json"])],
    refused: &[
        &["10.0.0.0/33"],
        &["nonsense"],
        &["10.0.0.0/8,"],
        &["-f", "x"],
        &["-i", "0"],
        &["-d", "x"],
        &["-p", "x"],
    ],
});
