//! The contract every tool keeps (testkit::contract), for argdist.

testkit::contract_tests!(testkit::contract::Spec {
    bin: env!("CARGO_BIN_EXE_argdist"),
    args: &[
        "-C",
        "t:syscalls:sys_enter_getppid():int:args->__syscall_nr"
    ],
    final_report: Some("t:syscalls:sys_enter_getppid"),
    needs: None,
    heavy: false,
    conflicts: &[(
        &["-p", "1", "-t", "1", "-C", "p:c:malloc()"],
        &["--pid", "--tid"]
    )],
    refused: &[
        &["-C", "x:c:malloc()"],
        &["-H", "p:c:malloc()"],
        &["-C", "p:c:malloc(size_t size):float:size"],
        &["-C", "p:c:malloc(size_t size):u64,u64:size"],
        &["-H", "p:c:malloc(size_t size):u64:$latency"],
        &["-H", "r:c:malloc(size_t size):u64:$entry(sz)"],
        &["-C", "t:syscalls:sys_enter_openat():u64:args->nope"],
        &["-z", "0", "-C", "p:c:malloc()"],
        &["-i", "0", "-C", "p:c:malloc()"],
        &["-d", "31536001", "-C", "p:c:malloc()"],
        &["-p", "x", "-C", "p:c:malloc()"],
        &[],
    ],
});
