//! The contract every tool keeps (testkit::contract), for wqlat.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_wqlat"),
    args: &[],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[(&["-N", "-m"], &["--nanoseconds", "--milliseconds"])],
    refused: &[
        &["0"],
        &["1", "0"],
        &["-w", ""],
        &["-w", "a_name_of_thirty_two_bytes_long!"],
        &["--per-container"],
    ],
});
