//! The contract every tool keeps (testkit::contract), for dcsnoop.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_dcsnoop"),
    args: &[],
    final_report: None,
    needs: Some((
        "fentry or kprobes on lookup_fast and d_lookup",
        dcsnoop::hooks_present,
    )),
    heavy: false,
    conflicts: &[],
    refused: &[
        &["-p", "x"],
        &["-t", "x"],
        &["-d", "x"],
        &["-d", "0"],
        &["-c", "/no/such/cgroup"],
        &["5"],
    ],
});
