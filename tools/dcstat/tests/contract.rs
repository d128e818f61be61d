//! The contract every tool keeps (testkit::contract), for dcstat.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_dcstat"),
    args: &[],
    final_report: None,
    needs: Some((
        "fentry or kprobes on lookup_fast and d_lookup",
        dcstat::hooks_present,
    )),
    heavy: false,
    conflicts: &[],
    refused: &[&["0"], &["1", "0"], &["-p", "x"], &["x"]],
});
