//! The contract every tool keeps (testkit::contract), for numamove.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_numamove"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[],
    refused: &[
        &["-p", "x"],
        &["0"],
        &["1", "0"],
        &["-r", "nosuchreason"],
        &["-r", ""],
        &["--cgroup", "/no/such/cgroup"],
    ],
});
