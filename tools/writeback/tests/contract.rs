//! The contract every tool keeps (testkit::contract), for writeback.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_writeback"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["-m", "x"],
        &["-d", "0"],
        &["extra"],
        &["-c", "/no/such/cgroup"],
    ],
});
