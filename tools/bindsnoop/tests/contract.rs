//! The contract every tool keeps (testkit::contract), for bindsnoop.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_bindsnoop"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[
        (&["-4", "-6"], &["--ipv4", "--ipv6"]),
        (&["--count", "-t"], &["--count", "--timestamp"]),
    ],
    refused: &[
        &["-p", "x"],
        &["-P", "x"],
        &["-P", "70000"],
        &["-u", "no-such-user-here"],
        &["-d", "0"],
        &["-c", "/no/such/cgroup"],
        &["5"],
    ],
});
