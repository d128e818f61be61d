//! The contract every tool keeps (testkit::contract), for llcstat.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_llcstat"),
    args: &[],
    final_report: None,
    needs: Some(("a PMU with cache counters", llcstat::hooks_present)),
    heavy: false,
    conflicts: &[],
    refused: &[
        &["-p", "x"],
        &["0"],
        &["-c", "0"],
        &["-d", "0"],
        &["1", "2"],
        &["--cgroup", "/no/such/cgroup"],
    ],
});
