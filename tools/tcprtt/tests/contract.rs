//! The contract every tool keeps (testkit::contract), for tcprtt.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_tcprtt"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[
        (&["-4", "-6"], &["--ipv4", "--ipv6"]),
        (&["-A", "::1", "-4"], &["-A/--raddr", "-4/--ipv4"]),
        (&["-a", "127.0.0.1", "-6"], &["-a/--laddr", "-6/--ipv6"]),
        (
            &["-a", "127.0.0.1", "-A", "::1"],
            &["-a/--laddr", "-A/--raddr"]
        ),
    ],
    refused: &[
        &["-4", "-6"],
        &["-b", "-B"],
        &["-a", "localhost"],
        &["-p", "http"],
        &["-i", "0"],
        &["-d", "x"],
    ],
});
