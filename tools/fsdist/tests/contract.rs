//! The contract every tool keeps (testkit::contract), for fsdist.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_ext4dist"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["-t", "vfat"],
        &["0"],
        &["1", "0"],
        &["-p", "x"],
        &["-c", "/no/such/cgroup"],
        &["1", "2", "3"],
    ],
});
