//! The waker tools' workload (tests/ping-pong.c): two processes, `pp-a`
//! and `pp-b`, waking each other through pipes in functions of their own,
//! that measure how long each waited.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Command, Stdio};

/// The functions of ping-pong.c: where each process blocks, and where it
/// wakes the other.
pub const A_WAKES_B: &str = "a_wakes_b";
pub const B_WAKES_A: &str = "b_wakes_a";
pub const A_WAITS: &str = "a_waits_for_b";
pub const B_WAITS: &str = "b_waits_for_a";

/// The two processes, ready and waiting for [`PingPong::run`]; killed when
/// dropped.
pub struct PingPong {
    child: Child,
    out: BufReader<ChildStdout>,
    pub a: u32,
    pub b: u32,
}

/// How long each process waited in its read, as it measured, in
/// microseconds, and how long it was asleep there (from the read's start
/// to the start of the other's write that woke it: the wait without the
/// run queue wait after the wakeup). b's from its second round on: its
/// first wait begins before `run`.
#[derive(Debug, Clone, Copy)]
pub struct Blocked {
    pub a_us: u64,
    pub b_us: u64,
    pub a_asleep_us: u64,
    pub b_asleep_us: u64,
}

impl PingPong {
    /// Builds the program (with frame pointers or without) and starts it
    /// for `rounds` rounds (25 ms each).
    pub fn start(tmp_dir: &str, rounds: u32, frame_pointers: bool) -> PingPong {
        Self::start_with(tmp_dir, rounds, frame_pointers, false)
    }

    /// As [`PingPong::start`]; `fast`: without the naps, each process waking
    /// the other as soon as it runs (waits of microseconds).
    pub fn start_with(tmp_dir: &str, rounds: u32, frame_pointers: bool, fast: bool) -> PingPong {
        let (name, fp) = if frame_pointers {
            ("ping-pong", "-fno-omit-frame-pointer")
        } else {
            ("ping-pong-nofp", "-fomit-frame-pointer")
        };
        let bin = super::build_c_program_with(
            env!("CARGO_MANIFEST_DIR"),
            tmp_dir,
            "ping-pong",
            name,
            &["-O1", "-g", fp],
        );
        let mut child = Command::new(&bin)
            .arg(rounds.to_string())
            .args(fast.then_some("fast"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", bin.display()));
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let pids: Vec<u32> = line
            .strip_prefix("ready ")
            .unwrap_or_else(|| panic!("ping-pong did not start: {line:?}"))
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect();
        PingPong {
            child,
            out,
            a: pids[0],
            b: pids[1],
        }
    }

    /// Both pids, as `-p` takes them.
    pub fn pids(&self) -> String {
        format!("{},{}", self.a, self.b)
    }

    /// Runs the rounds under `bin` (`args`, and -p with both pids, `env`
    /// in its environment), stopped with Ctrl-C once they are over: what it
    /// printed, and what the processes measured.
    pub fn trace(
        &mut self,
        bin: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> (super::Finished, Blocked) {
        super::require_root();
        let tool = super::Traced::start_command(
            Command::new(bin)
                .args(["-p", &self.pids()])
                .args(args)
                .envs(env.iter().copied()),
        );
        let blocked = self.run();
        let finished = super::stop_and_check_unloaded(tool);
        assert!(finished.status.success(), "{finished:?}");
        (finished, blocked)
    }

    /// Runs the rounds and returns what the processes measured.
    pub fn run(&mut self) -> Blocked {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(b"go\n").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        let f: Vec<&str> = line.split_whitespace().collect();
        match f[..] {
            ["blocked", "a", a, "b", b, "asleep", "a", a_asleep, "b", b_asleep] => Blocked {
                a_us: a.parse().unwrap(),
                b_us: b.parse().unwrap(),
                a_asleep_us: a_asleep.parse().unwrap(),
                b_asleep_us: b_asleep.parse().unwrap(),
            },
            _ => panic!("ping-pong ended without its figures: {line:?}"),
        }
    }
}

impl Drop for PingPong {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // pp-b ends with its rounds; killed too where they never ran (and
        // only it: its pid is free for reuse once it has gone).
        let comm = std::fs::read_to_string(format!("/proc/{}/comm", self.b));
        if comm.is_ok_and(|c| c.trim() == "pp-b") {
            // SAFETY: kill with a pid and a valid signal.
            unsafe { libc::kill(self.b as i32, libc::SIGKILL) };
        }
    }
}
