//! The contract every tool keeps (testkit::contract), for readahead.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_readahead"),
    args: &[],
    final_report: None,
    needs: Some((
        "fentry or kprobes on the read-ahead functions",
        readahead::hooks_present,
    )),
    heavy: true,
    conflicts: &[],
    refused: &[
        &["-p", "x"],
        &["-d", "x"],
        &["-d", "0"],
        &["0"],
        &["1", "0"],
        &["-c", "/no/such/cgroup"],
    ],
});
