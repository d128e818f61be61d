//! The contract every tool keeps (testkit::contract), for memleak.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_memleak"),
    args: &["1"],
    final_report: Some("stacks with outstanding allocations"),
    needs: None,
    heavy: true,
    conflicts: &[(&["-f", "--json"], &["--folded", "--json"])],
    refused: &[
        &["0"],
        &["-p", "x"],
        &["-p", "1", "-c", "ls"],
        &["-s", "0"],
        &["-T", "0"],
        &["--sort", "name"],
        &["-f", "--json"],
        &["--perf-max-stack-depth", "200"],
        &["18446744073709551615"],
        &["-p", "1", "--unwind", "lbr"],
    ],
});
