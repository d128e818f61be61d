//! The contract every tool keeps (testkit::contract), for tcptracer.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_tcptracer"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[(&["-4", "-6"], &["--ipv4", "--ipv6"])],
    refused: &[
        &["-p", "x"],
        &["-N", "0"],
        &["-u", "no-such-user-here"],
        &["-N", "x"],
        &["-d", "0"],
        &["--cgroup", "/no/such/cgroup"],
        &["5"],
    ],
});
