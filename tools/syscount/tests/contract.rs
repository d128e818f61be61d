//! The contract every tool keeps (testkit::contract), for syscount.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_syscount"),
    args: &[],
    final_report: Some("COUNT"),
    needs: None,
    heavy: false,
    conflicts: &[(
        &["-P", "--prometheus", ":0"],
        &["--process", "--prometheus"]
    )],
    refused: &[
        &["-e", "ENOPE"],
        &["-T", "x"],
        &["-i", "0"],
        &["-d", "0"],
        &["-p", "x"],
        &["-c", "/no/such/cgroup"],
        &["5"],
        &["-d", "31536001"],
        &["-i", "31536001"],
    ],
});
