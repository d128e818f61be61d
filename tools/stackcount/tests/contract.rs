//! The contract every tool keeps (testkit::contract), for stackcount.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_stackcount"),
    args: &["t:raw_syscalls:sys_enter"],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[(
        &["-U", "-K", "c:malloc"],
        &["--user-stacks-only", "--kernel-stacks-only"]
    )],
    refused: &[
        &["x:lib:func"],
        &["r:c:malloc"],
        &["-r", "c:("],
        &["-D", "0", "c:malloc"],
        &["-p", "x", "c:malloc"],
        &["-c", "100000", "c:malloc"],
        &["--stack-storage-size", "0", "c:malloc"],
        &[],
    ],
});
