//! The contract every tool keeps (testkit::contract), for cpufreq.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_cpufreq"),
    args: &[],
    final_report: None,
    needs: Some(("a cpufreq driver", cpufreq::hooks_present)),
    heavy: false,
    conflicts: &[],
    refused: &[
        &["-p", "x"],
        &["0"],
        &["-f", "0"],
        &["-d", "0"],
        &["-f", "100000000"],
        &["--cgroup", "/no/such/cgroup"],
    ],
});
