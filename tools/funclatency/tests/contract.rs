//! The contract every tool keeps (testkit::contract), for funclatency.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_funclatency"),
    args: &["c:malloc"],
    final_report: Some("count"),
    needs: None,
    heavy: false,
    conflicts: &[(
        &["-u", "-m", "c:malloc"],
        &["--microseconds", "--milliseconds"]
    )],
    refused: &[
        &["x:lib:func"],
        &["t:sched:sched_switch"],
        &["u:/bin/sh:probe"],
        &["-r", "c:("],
        &["-i", "0", "c:malloc"],
        &["-d", "0", "c:malloc"],
        &["-d", "31536001", "c:malloc"],
        &["-i", "1", "c:malloc", "3"],
        &["-l", "0", "c:malloc"],
        &["-l", "17", "c:malloc"],
        &["--per-container", "c:malloc"],
        &[],
    ],
});
