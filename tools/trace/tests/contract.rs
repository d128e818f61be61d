//! The contract every tool keeps (testkit::contract), for trace.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_trace"),
    args: &["t:syscalls:sys_enter_getppid \"nr=%d\", args->__syscall_nr"],
    final_report: None,
    needs: None,
    heavy: false,
    conflicts: &[(&["-p", "1", "-L", "1", "c:malloc"], &["--pid", "--tid"])],
    refused: &[
        &["x:lib:func"],
        &["t:sched:a:b"],
        &["c:malloc \"%d\", arg9"],
        &["c:malloc (arg1 == ) \"x\""],
        &["c:malloc \"%q\", arg1"],
        &["c:malloc \"%d %d\", arg1"],
        &["r:c:malloc \"%d\", arg1"],
        &["t:syscalls:sys_enter_openat \"%s\", args->nope"],
        &["-Z", "0", "c:malloc"],
        &["-Z", "257", "c:malloc"],
        &["-A", "c:malloc"],
        &["-u", "c:malloc"],
        &["-p", "x", "c:malloc"],
        &[],
    ],
});
