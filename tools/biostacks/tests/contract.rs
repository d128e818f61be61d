//! The contract every tool keeps (testkit::contract), for biostacks.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_biostacks"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[(&["-f", "--json"], &["--folded", "--json"])],
    refused: &[
        &["0"],
        &["-p", "x"],
        &["-d", "nosuchdisk0"],
        &["-c", "/no/such/cgroup"],
        &["-U"],
        &["--perf-max-stack-depth", "128"],
        &["--stack-storage-size", "0"],
        &["18446744073709551615"],
    ],
});
