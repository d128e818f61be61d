//! The contract every tool keeps (testkit::contract), for tcppktlat.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_tcppktlat"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[
        (&["-p", "1", "-t", "1"], &["--pid", "--tid"]),
        (&["-4", "-6"], &["--ipv4", "--ipv6"]),
        (&["5", "-m", "5"], &["--min", "MIN_US"]),
    ],
    refused: &[
        &["-p", "x"],
        &["-l", "x"],
        &["-r", "70000"],
        &["-m", "x"],
        &["x"],
        &["-d", "0"],
        &["-c", "/no/such/cgroup"],
    ],
});
