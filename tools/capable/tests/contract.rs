//! The contract every tool keeps (testkit::contract), for capable.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_capable"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["-c", "/no/such/cgroup"],
        &["5"],
        &["-u", "thread"],
        &["--perf-max-stack-depth", "0"],
        &["--perf-max-stack-depth", "128"],
        &["-p", "x"],
    ],
});
