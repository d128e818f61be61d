//! The contract every tool keeps (testkit::contract), for klockstat.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_klockstat"),
    args: &[],
    final_report: Some("Exiting trace of mutex/sem locks"),
    needs: None,
    heavy: false,
    conflicts: &[(&["-P", "-s", "2"], &["--per-thread", "--stacks"])],
    refused: &[
        &["-p", "x"],
        &["-t", "0"],
        &["-c", ""],
        &["-L", ""],
        &["-n", "0"],
        &["-s", "0"],
        &["-s", "128"],
        &["-S", "acq_min"],
        &["-S", "acq_max,acq_count"],
        &["-d", "0"],
        &["-i", "x"],
        &["--stack-storage-size", "0"],
        &["--cgroup", "/no/such/cgroup"],
        &["5"],
    ],
});
