//! trace -U over processes that live 100 ms each on a busy machine (the
//! stack kind's workload, testkit::stacks), the tool stopped (Ctrl-Z) while
//! they run: each process's one call of inner() is printed with its user
//! stack named down to main, though the process is gone by the time its
//! event is read (its mappings followed from the kernel's records; none
//! is named without them). A test binary of its own: nothing else of
//! trace's runs beside its spinners.

use std::process::Command;

use testkit::stacks::{self, Lives};

const BIN: &str = env!("CARGO_BIN_EXE_trace");

#[test]
fn each_call_of_a_process_living_100_ms_is_named_down_to_main() {
    let _turn = testkit::one_at_a_time();
    testkit::require_root();
    let program = stacks::program(env!("CARGO_TARGET_TMPDIR"));
    let probe = format!("{}:inner", program.display());
    let tool = testkit::Traced::start_command(Command::new(BIN).args(["--json", "-U", &probe]));
    let signal = |sig| {
        // SAFETY: kill with our own child's pid.
        assert_eq!(unsafe { libc::kill(tool.pid() as i32, sig) }, 0);
    };
    signal(libc::SIGSTOP);
    stacks::run(&program, "spin", 100, 40, Lives::Exec);
    signal(libc::SIGCONT);
    let f = testkit::settle_and_stop(tool, std::time::Duration::from_millis(300));
    assert!(f.status.success(), "{f:?}");
    let events = f.json();
    let calls: Vec<Vec<String>> = events
        .iter()
        .filter(|e| e["comm"] == stacks::COMM)
        .map(|e| {
            e["user_stack"]
                .as_array()
                .unwrap_or_else(|| panic!("{e}"))
                .iter()
                .map(|v| {
                    let frame = v.as_str().unwrap_or_default();
                    frame.split('+').next().unwrap_or(frame).to_string()
                })
                .collect()
        })
        .collect();
    // One call a process: exactly 40 events.
    assert_eq!(calls.len(), 40, "{f:?}");
    let named = calls
        .iter()
        .filter(|s| s.starts_with(&["inner", "middle", "outer", "main"].map(String::from)))
        .count();
    assert!(named * 100 >= 40 * 95, "{named} of 40 named: {calls:#?}");
}
