//! The stack kind's shared workload: processes that live about 100 ms
//! (builds, test suites, scripts), started while the tool runs on a
//! machine kept busy, and the share of their samples (or time) whose stack
//! is named down to the known function. Every stack tool's tests run it.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The workload's chain, root first, as folded stacks show it (a forked
/// child's has run_forks between main and outer).
pub const CHAIN: &str = "main;[run_forks;]outer;middle;inner";
const CHAIN_TAIL: &str = "outer;middle;inner";
/// The workload's comm (its file name).
pub const COMM: &str = "sk-brief";
/// The comm of the reader each process wakes in mode `wake`: the target
/// that ends a waker tool's folded lines (`waker;frames;target value`).
/// Only those lines are the workload's wakeups: the others the processes
/// make are their exits waking whoever waits for them.
pub const WOKEN: &str = "sk-woken";

/// How the short-lived processes come and go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lives {
    /// Each executed from its file by a shell, one after another.
    Exec,
    /// Forked by one process (the program) whose file is deleted once it
    /// has started.
    Deleted,
    /// Forked by one process in a mount namespace of its own, from a file
    /// that exists only there.
    Namespace,
}

/// testkit/c/brief.c built with frame pointers, once per test binary.
pub fn program(tmp_dir: &str) -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| build(tmp_dir, "-fno-omit-frame-pointer"))
        .clone()
}

/// testkit/c/brief.c built without frame pointers (only its .eh_frame
/// tables lead to its callers), once per test binary.
pub fn program_without_frame_pointers(tmp_dir: &str) -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| build(tmp_dir, "-fomit-frame-pointer"))
        .clone()
}

/// Builds brief.c with `-O1 -g` and `flag`, as [`COMM`] in a directory
/// of its own.
fn build(tmp_dir: &str, flag: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("c/brief.c");
    let dir = crate::scratch_dir(tmp_dir).join(format!("brief{flag}"));
    std::fs::create_dir_all(&dir).unwrap();
    let partial = dir.join(crate::unique(COMM));
    testbed::compile_c(&src, &partial, &["-O1", "-g", flag]).unwrap_or_else(|e| panic!("{e:#}"));
    let out = dir.join(COMM);
    std::fs::rename(&partial, &out).unwrap();
    out
}

/// Runs `n` processes of `program` (see [`program`]) in `mode` (`spin`,
/// `sleep` or `wake`), each living `ms` milliseconds, as `lives` says, while both
/// CPUs are kept busy by spinning processes; returns when the last has
/// exited.
pub fn run(program: &Path, mode: &str, ms: u32, n: u32, lives: Lives) {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let _busy: Vec<crate::Spinners> = (0..cpus)
        .map(|cpu| crate::Spinners::on_cpu(cpu, 1, |_| {}))
        .collect();
    let (ms, n) = (ms.to_string(), n.to_string());
    match lives {
        Lives::Exec => {
            let status = Command::new("sh")
                .args([
                    "-c",
                    "i=0; while [ $i -lt \"$3\" ]; do \"$0\" \"$1\" \"$2\"; i=$((i+1)); done",
                ])
                .arg(program)
                .args([mode, &ms, &n])
                .status()
                .expect("sh");
            assert!(status.success(), "the shell loop failed: {status}");
        }
        Lives::Deleted => {
            let copy = crate::unique_copy_named(COMM, &program.to_string_lossy());
            let mut child = Command::new(&copy)
                .args([mode, &ms, &n])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("starting the copy");
            let mut line = String::new();
            BufReader::new(child.stdout.as_mut().unwrap())
                .read_line(&mut line)
                .unwrap();
            assert_eq!(line.trim(), "ready");
            std::fs::remove_file(&copy).unwrap();
            writeln!(child.stdin.as_mut().unwrap(), "go").unwrap();
            let status = child.wait().unwrap();
            assert!(status.success(), "{status}");
        }
        Lives::Namespace => {
            let mut ns = crate::Namespaced::start(program, &[mode, &ms, &n]);
            ns.send_line("go");
            let status = ns.wait();
            assert!(status.success(), "{status}");
        }
    }
}

/// Of the folded lines (`comm;frames value`) of the workload's processes
/// (not the forking parent, named apart; in mode `wake`, only those ending
/// in the reader woken, [`WOKEN`]), the value of those whose stack holds
/// [`CHAIN`], and the value of all but the user stacks the tool said it
/// could not record (`collisions`, hash collisions in the stack map: a
/// loss counted and said, not a naming failure).
pub fn named_share(folded: &[String], collisions: u64, mode: &str) -> (u64, u64) {
    let prefix = format!("{COMM};");
    let suffix = format!(";{WOKEN}");
    let (mut named, mut total, mut missed) = (0, 0, 0);
    for line in folded {
        let Some((stack, value)) = line.rsplit_once(' ') else {
            continue;
        };
        if !stack.starts_with(&prefix) || (mode == "wake" && !stack.ends_with(&suffix)) {
            continue;
        }
        let value: u64 = value.parse().unwrap_or_else(|_| panic!("{line}"));
        total += value;
        if stack.contains("main;") && stack.contains(CHAIN_TAIL) {
            named += value;
        } else if stack.contains(";[Missed User Stack]") {
            missed += value;
        }
    }
    // A stack lost to a collision is a [Missed User Stack] line. Samples
    // (`spin`) count one each: at most `collisions` of them are the loss.
    // Times do not say how many stacks they sum: where the tool said it
    // lost any, the missed lines' time is its loss.
    let lost = match (collisions, mode) {
        (0, _) => 0,
        (_, "spin") => missed.min(collisions),
        _ => missed,
    };
    (named, total - lost)
}

/// The stacks a tool said it lost to hash collisions (its stderr note).
pub fn collisions(stderr: &str) -> u64 {
    stderr
        .lines()
        .filter(|l| l.contains("hash collisions"))
        .filter_map(|l| l.split_whitespace().find_map(|w| w.parse::<u64>().ok()))
        .sum()
}

/// Asserts that at least 95% of the workload's samples (or time) in the
/// folded output `folded` are named down to [`CHAIN`].
pub fn assert_named(folded: &[String], stderr: &str, mode: &str, lives: Lives) {
    let (named, total) = named_share(folded, collisions(stderr), mode);
    eprintln!("{lives:?}: {named} of {total} named");
    assert!(
        total > 0 && named * 100 >= total * 95,
        "{lives:?}: {named} of {total} named down to {CHAIN}:\n{}",
        folded
            .iter()
            .filter(|l| l.starts_with(COMM))
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The shared tests of a stack tool, a test per [`Lives`]: `bin` run with
/// `args` over processes in `mode` (`spin`, `sleep` or `wake`), named ≥ 95%.
/// `testkit::short_lived_tests!(env!("CARGO_BIN_EXE_x"), "spin", ["-f"]);`
#[macro_export]
macro_rules! short_lived_tests {
    ($bin:expr, $mode:literal, [$($arg:literal),*]) => {
        mod short_lived {
            fn check(lives: $crate::stacks::Lives) {
                let args = |_: &std::path::Path| vec![$($arg.to_string()),*];
                let tmp = env!("CARGO_TARGET_TMPDIR");
                $crate::stacks::check($bin, args, $mode, lives, tmp);
            }

            #[test]
            fn processes_living_100_ms_are_named() {
                check($crate::stacks::Lives::Exec);
            }

            #[test]
            fn processes_of_a_deleted_program_are_named() {
                check($crate::stacks::Lives::Deleted);
            }

            #[test]
            fn processes_in_their_own_mount_namespace_are_named() {
                check($crate::stacks::Lives::Namespace);
            }
        }
    };
}

/// The shared test: `bin` run with `args` (the workload's path given, for
/// tools that probe it; folded output) while `n` = 40 processes of
/// [`program`] in `mode` live 100 ms each as `lives` says, and at least 95%
/// of their samples named down to [`CHAIN`].
pub fn check(
    bin: &str,
    args: impl Fn(&Path) -> Vec<String>,
    mode: &str,
    lives: Lives,
    tmp_dir: &str,
) {
    check_with(bin, args, mode, lives, tmp_dir, false);
}

/// [`check`] with the tool stopped (SIGSTOP, as Ctrl-Z stops it; a reader
/// far behind on a loaded machine is the same) while the processes, of the
/// program built without frame pointers, run, and continued once they have
/// all exited: every record of theirs is read after they are gone, and
/// only the DWARF unwinder (`--unwind dwarf`) finds their callers. The
/// tool's ring must hold every stack meanwhile (the spinners' too).
pub fn check_stopped(bin: &str, args: impl Fn(&Path) -> Vec<String>, mode: &str, tmp_dir: &str) {
    check_with(bin, args, mode, Lives::Exec, tmp_dir, true);
}

fn check_with(
    bin: &str,
    args: impl Fn(&Path) -> Vec<String>,
    mode: &str,
    lives: Lives,
    tmp_dir: &str,
    stopped: bool,
) {
    let _turn = crate::one_at_a_time();
    crate::require_root();
    let program = if stopped {
        program_without_frame_pointers(tmp_dir)
    } else {
        program(tmp_dir)
    };
    let tool = crate::Traced::start_command(Command::new(bin).args(args(&program)));
    let signal = |sig| {
        // SAFETY: kill with our own child's pid.
        let rc = unsafe { libc::kill(tool.pid() as i32, sig) };
        assert_eq!(rc, 0, "signal {sig}");
    };
    if stopped {
        // 20 of 200 ms: as many samples, half as many execs (whose loader
        // code the unwinder may not walk: unnamed, and rightly so).
        signal(libc::SIGSTOP);
        run(&program, mode, 200, 20, lives);
        signal(libc::SIGCONT);
    } else {
        run(&program, mode, 100, 40, lives);
    }
    let finished = tool.stop();
    assert!(finished.status.success(), "{finished:?}");
    assert_named(&finished.stdout, &finished.stderr, mode, lives);
}
