//! The contract every tool keeps (testkit::contract), for swapin.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_swapin"),
    args: &[],
    final_report: None,
    needs: Some((
        "kprobes on swap_read_folio or swap_readpage",
        swapin::hooks_present,
    )),
    heavy: false,
    conflicts: &[],
    refused: &[
        &["-p", "x"],
        &["0"],
        &["1", "0"],
        &["-i", "0"],
        &["-c", "0"],
        &["--cgroup", "/no/such/cgroup"],
    ],
});
