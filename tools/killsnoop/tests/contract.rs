//! The contract every tool keeps (testkit::contract), for killsnoop.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_killsnoop"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["-s", "NOPE"],
        &["-s", "99"],
        &["-p", "x"],
        &["-T", "x"],
        &["-T", "0"],
        &["-c", "/no/such/cgroup"],
        &["5"],
    ],
});
