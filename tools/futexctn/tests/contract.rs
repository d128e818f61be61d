//! The contract every tool keeps (testkit::contract), for futexctn.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_futexctn"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["-p", "x"],
        &["-t", "0"],
        &["-l", "0"],
        &["-l", "nolock"],
        &["--perf-max-stack-depth", "0"],
        &["--stack-storage-size", "0"],
        &["-c", "/no/such/cgroup"],
        &["0"],
        &["1", "0"],
    ],
});
