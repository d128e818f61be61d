//! The contract every tool keeps (testkit::contract), for funccount.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_funccount"),
    args: &["t:syscalls:sys_enter_getppid"],
    final_report: Some("Detaching..."),
    needs: None,
    heavy: false,
    conflicts: &[(
        &["-P", "--prometheus", ":0", "c:malloc"],
        &["--process", "--prometheus"]
    )],
    refused: &[
        &["x:lib:func"],
        &["t:sched:a:b"],
        &["-r", "c:("],
        &["-i", "0", "c:malloc"],
        &["-d", "0", "c:malloc"],
        &["-d", "31536001", "c:malloc"],
        &["-i", "31536001", "c:malloc"],
        &["-p", "x", "c:malloc"],
        &["-c", "100000", "c:malloc"],
        &[],
    ],
});
