//! stackcount against a program of known calls (sc-work.c): each round
//! calls leaf() 3N times through caller_a and N times through caller_b,
//! and fires its USDT probe N times in caller_b, with getppid() there.

use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use testkit::{require_root, Finished, Rounds, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_stackcount");
const N: u64 = 1000;

/// sc-work with a frame in every function (-O0), or (`frames` false) -O1,
/// where gcc leaves leaf() without one.
fn work_binary(frames: bool) -> &'static std::path::PathBuf {
    static O0: OnceLock<std::path::PathBuf> = OnceLock::new();
    static O1: OnceLock<std::path::PathBuf> = OnceLock::new();
    let (cell, out, opt) = if frames {
        (&O0, "sc-work", "-O0")
    } else {
        (&O1, "sc-work-o1", "-O1")
    };
    cell.get_or_init(|| {
        testkit::build_c_program_with(
            env!("CARGO_MANIFEST_DIR"),
            env!("CARGO_TARGET_TMPDIR"),
            "sc-work",
            out,
            &[opt, "-g", "-fno-omit-frame-pointer"],
        )
    })
}

/// stackcount with `args` (and -p) over one round of a fresh program.
fn counted(frames: bool, args: &[&str], env: &[(&str, &str)]) -> Finished {
    require_root();
    let mut work = Rounds::start(work_binary(frames), &[N.to_string()]);
    let pid = work.pid();
    let mut cmd = Command::new(BIN);
    cmd.args(["-p", &pid]).args(args).envs(env.iter().copied());
    let tool = Traced::start_command(&mut cmd);
    work.round();
    let f = testkit::settle_and_stop(tool, Duration::from_millis(200));
    assert!(f.status.success(), "{f:?}");
    f
}

/// The count of the folded line whose frames end with `tail`.
fn folded_count(f: &Finished, tail: &str) -> Option<u64> {
    f.stdout.iter().find_map(|l| {
        let (stack, n) = l.rsplit_once(' ')?;
        stack.ends_with(tail).then(|| n.parse().unwrap())
    })
}

fn leaf(frames: bool) -> String {
    format!("{}:leaf", work_binary(frames).display())
}

#[test]
fn stackcount_counts_each_caller_of_a_function_in_its_ratio() {
    let f = counted(true, &["-f", &leaf(true)], &[]);
    assert_eq!(
        folded_count(&f, ";main;caller_a;leaf"),
        Some(3 * N),
        "{f:?}"
    );
    assert_eq!(folded_count(&f, ";main;caller_b;leaf"), Some(N), "{f:?}");
    assert_eq!(f.stdout.len(), 2, "{f:?}");
    assert!(f.stdout.iter().all(|l| l.starts_with("sc-work;")), "{f:?}");
}

#[test]
fn stackcount_multi_line_stacks_are_bccs_with_their_counts() {
    let f = counted(true, &["-U", &leaf(true)], &[]);
    let text = f.stdout.join("\n");
    let a = "    leaf\n    caller_a\n    main\n";
    let at = text.find(a).unwrap_or_else(|| panic!("{text}"));
    let rest = &text[at + a.len()..];
    let owner = rest
        .lines()
        .find(|l| l.trim_start().starts_with('-'))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(owner.contains("sc-work ("), "{text}");
    let count = rest
        .lines()
        .skip_while(|l| !l.trim_start().starts_with('-'))
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(count.trim(), (3 * N).to_string(), "{text}");
}

#[test]
fn stackcount_single_uprobes_count_the_same_where_uprobe_multi_is_off() {
    let env = [("BPFTOOLS_DISABLE", "uprobe_multi")];
    let f = counted(true, &["-f", &leaf(true)], &env);
    assert_eq!(
        folded_count(&f, ";main;caller_a;leaf"),
        Some(3 * N),
        "{f:?}"
    );
    assert_eq!(folded_count(&f, ";main;caller_b;leaf"), Some(N), "{f:?}");
}

#[test]
fn stackcount_dwarf_finds_the_caller_of_a_leaf_without_a_frame() {
    // A small copy: the round's 4,000 hits come at once, and 16 KiB copies
    // would fill the ring (which the tool counts and says).
    let args = ["--unwind", "dwarf", "--stack-copy-size", "1024", "-f"];
    let mut args = args.to_vec();
    let pattern = leaf(false);
    args.push(&pattern);
    let f = counted(false, &args, &[]);
    assert_eq!(
        folded_count(&f, ";main;caller_a;leaf"),
        Some(3 * N),
        "{f:?}"
    );
    assert_eq!(folded_count(&f, ";main;caller_b;leaf"), Some(N), "{f:?}");
}

/// At -O1 gcc gives leaf() no frame, so its probe stays at the entry,
/// where the frame pointer walk skips the caller: the caller comes from
/// the top of the stack, and the two callers stay apart.
#[test]
fn stackcount_keeps_the_caller_of_a_leaf_without_a_frame() {
    let f = counted(false, &["-f", &leaf(false)], &[]);
    assert_eq!(
        folded_count(&f, ";main;caller_a;leaf"),
        Some(3 * N),
        "{f:?}"
    );
    assert_eq!(folded_count(&f, ";main;caller_b;leaf"), Some(N), "{f:?}");
    assert_eq!(f.stdout.len(), 2, "{f:?}");
}

#[test]
fn stackcount_counts_the_stacks_of_a_usdt_probe() {
    let probe = format!("u:{}:hit", work_binary(true).display());
    let f = counted(true, &["-f", &probe], &[]);
    assert_eq!(folded_count(&f, ";main;caller_b"), Some(N), "{f:?}");
    assert_eq!(f.stdout.len(), 1, "{f:?}");
}

/// A system call tracepoint from the raw sys_enter (the call picked by
/// its number), or the classic tracepoint: N calls either way, all this
/// program's.
#[test]
fn stackcount_counts_a_system_call_tracepoint_from_the_raw_one() {
    for (env, program) in [
        (vec![], "raw_tp sys_enter"),
        (
            vec![("BPFTOOLS_DISABLE", "raw_syscalls")],
            "tracepoint syscalls:",
        ),
    ] {
        let f = counted(true, &["-f", "t:syscalls:sys_enter_getppid"], &env);
        let total: u64 = f
            .stdout
            .iter()
            .map(|l| {
                assert!(l.starts_with("sc-work;"), "{env:?}: {f:?}");
                l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap()
            })
            .sum();
        assert_eq!(total, N, "{env:?}: {f:?}");
        let dry = testkit::run_with_env(BIN, &["--dry-run", "t:syscalls:sys_enter_getppid"], &env);
        assert!(
            dry.stdout.iter().any(|l| l.contains(program)),
            "{env:?}: {dry:?}"
        );
    }
}

#[test]
fn stackcount_kernel_functions_need_kprobes_and_say_so() {
    if testkit::refuses_kernel_functions_without_kprobes(BIN, &["-D", "1", "vfs_write"]) {
        return;
    }
    // Where kprobes exist (the VMs): the round's one write ("done"), from
    // the write system call.
    let f = counted(true, &["-K", "-f", "vfs_write"], &[]);
    let writes: u64 = f
        .stdout
        .iter()
        .filter(|l| l.contains("ksys_write") || l.contains("sys_write"))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
        .sum();
    assert!(writes >= 1, "{f:?}");
}

#[test]
fn stackcount_intervals_print_what_each_added() {
    require_root();
    let mut work = Rounds::start(work_binary(true), &[N.to_string()]);
    let pid = work.pid();
    let pattern = leaf(true);
    let tool = Traced::start(BIN, &["-f", "-i", "1", "-p", &pid, &pattern]);
    work.round();
    // A report with the round, one with nothing, then the second round's.
    std::thread::sleep(Duration::from_millis(2500));
    work.round();
    let f = testkit::settle_and_stop(tool, Duration::from_millis(1500));
    assert!(f.status.success(), "{f:?}");
    // Each round in a report of its own (a slow guest may split one
    // across two): both rounds' calls, in two reports at least. Where a
    // report falls inside a round, the call counted as the map is drained
    // may be lost (its count was read, then the entry deleted under its
    // add: BCC's drain has the same race): one a split at most.
    let a: Vec<u64> = f
        .stdout
        .iter()
        .filter(|l| l.contains(";main;caller_a;leaf "))
        .map(|l| l.rsplit_once(' ').unwrap().1.parse().unwrap())
        .collect();
    assert!(a.len() >= 2, "{f:?}");
    let splits = a.len() as u64 - 2;
    let sum = a.iter().sum::<u64>();
    assert!((6 * N - splits..=6 * N).contains(&sum), "{sum}: {f:?}");
}

/// stackcount on a function of processes that live 100 ms each, on a
/// busy machine: every call counted under its whole chain, each process
/// gone by the report.
#[test]
fn calls_in_processes_living_100_ms_are_named() {
    let args = |program: &std::path::Path| {
        vec![
            "-f".to_string(),
            "-U".to_string(),
            format!("{}:inner", program.display()),
        ]
    };
    testkit::stacks::check(
        BIN,
        args,
        "spin",
        testkit::stacks::Lives::Exec,
        env!("CARGO_TARGET_TMPDIR"),
    );
}

/// -v is BCC's: each frame's address before its name.
#[test]
fn stackcount_v_shows_raw_addresses() {
    let f = counted(true, &["-U", "-v", &leaf(true)], &[]);
    let text = f.stdout.join("\n");
    let line = f
        .stdout
        .iter()
        .find(|l| l.trim_end().ends_with(" leaf"))
        .unwrap_or_else(|| panic!("{text}"));
    let (addr, name) = line.trim().split_once(' ').unwrap();
    assert!(u64::from_str_radix(addr, 16).is_ok_and(|a| a > 0), "{line}");
    assert_eq!(name.trim(), "leaf", "{line}");
}
