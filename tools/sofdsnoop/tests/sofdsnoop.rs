//! sofdsnoop against a program of the test's own (fd-pass.c) that passes
//! descriptors over a unix socket pair: 3 in one sendmsg() (a file, a
//! pipe, an eventfd), received by recvmsg(), then 2 by sendmmsg() (one a
//! message) received by recvmmsg(). Each descriptor is seen once at each
//! end, with its number there, the socket, and its file named.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;
use testkit::{unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_sofdsnoop");

fn start(args: &[&str], disable: &str) -> Traced {
    testkit::start_disabled(BIN, args, disable)
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(300))
}

/// fd-pass.c, built once.
fn program() -> &'static PathBuf {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fd-pass.c");
        let out = std::env::temp_dir().join(unique("fd-pass-"));
        testbed::compile_c(&src, &out, &["-O1"]).expect("compiling fd-pass.c")
    })
}

/// A file of the test's own to pass; removed on drop.
struct File(PathBuf);

impl File {
    fn new() -> File {
        let path = std::env::temp_dir().join(unique("sofd-"));
        std::fs::write(&path, b"passed").unwrap();
        File(path)
    }
}

impl Drop for File {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// What fd-pass printed before it passed anything.
struct Passer {
    child: Child,
    out: BufReader<ChildStdout>,
    pid: u64,
    /// Sending and receiving sockets.
    socks: [i64; 2],
    /// The file's, the pipe's and the eventfd's descriptors and inodes.
    fds: [i64; 3],
    inos: [u64; 3],
}

impl Passer {
    /// Starts fd-pass on `file`; it waits for [`Passer::pass`].
    fn start(file: &File) -> Passer {
        let mut child = Command::new(program())
            .arg(&file.0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let n = numbers(&mut out);
        assert_eq!(n.len(), 9, "{n:?}");
        Passer {
            child,
            out,
            pid: n[0] as u64,
            socks: [n[1], n[2]],
            fds: [n[3], n[4], n[5]],
            inos: [n[6] as u64, n[7] as u64, n[8] as u64],
        }
    }

    /// Lets it pass them: the descriptors recvmsg() and recvmmsg() gave.
    fn pass(&mut self) -> (Vec<i64>, Vec<i64>) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(b"go\n").unwrap();
        stdin.flush().unwrap();
        (numbers(&mut self.out), numbers(&mut self.out))
    }

    fn end(mut self) {
        drop(self.child.stdin.take());
        assert!(self.child.wait().unwrap().success());
    }
}

fn numbers(out: &mut BufReader<ChildStdout>) -> Vec<i64> {
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    line.split_whitespace()
        .map(|w| w.parse().unwrap_or_else(|_| panic!("{line:?}")))
        .collect()
}

fn of_call<'a>(events: &'a [Value], pid: u64, call: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["pid"] == pid && e["call"] == call)
        .collect()
}

/// Each descriptor of each call once, in order: number, socket, inode and
/// name (the file's path; pipe:[N]; anon_inode:[eventfd]).
fn check(events: &[Value], p: &Passer, file: &File, got: &[i64], got_mm: &[i64]) {
    let names = [
        file.0.display().to_string(),
        format!("pipe:[{}]", p.inos[1]),
        "anon_inode:[eventfd]".to_string(),
    ];
    let each = |call: &str, sock: i64, fds: &[i64], per_msg: bool| {
        let seen = of_call(events, p.pid, call);
        assert_eq!(seen.len(), fds.len(), "{call}: {events:#?}");
        for (i, (e, fd)) in seen.iter().zip(fds).enumerate() {
            assert_eq!(e["fd"], *fd, "{call}: {e}");
            assert_eq!(e["sock_fd"], sock, "{call}: {e}");
            assert_eq!(e["ino"], p.inos[i], "{call}: {e}");
            assert_eq!(e["name"], names[i].as_str(), "{call}: {e}");
            let action = if call.starts_with("send") {
                "SEND"
            } else {
                "RECV"
            };
            assert_eq!(e["action"], action, "{call}: {e}");
            if per_msg {
                assert_eq!(
                    (&e["msg"], &e["count"], &e["index"]),
                    (&i.into(), &1.into(), &0.into())
                );
            } else {
                assert_eq!(
                    (&e["msg"], &e["count"], &e["index"]),
                    (&0.into(), &3.into(), &i.into())
                );
            }
        }
    };
    each("sendmsg", p.socks[0], &p.fds, false);
    each("recvmsg", p.socks[1], got, false);
    each("sendmmsg", p.socks[0], &p.fds[..2], true);
    each("recvmmsg", p.socks[1], got_mm, true);
}

#[test]
fn sofdsnoop_shows_each_descriptor_at_both_ends() {
    let file = File::new();
    let mut p = Passer::start(&file);
    let pid = p.pid.to_string();
    let json = start(&["--json", "-p", &pid], "");
    let text = start(&["-T", "-p", &pid], "");
    let none = start(&["--json", "-n", "no-such-name"], "");
    let (got, got_mm) = p.pass();
    let (json, text, none) = (stop(json), stop(text), stop(none));
    check(&json.json(), &p, &file, &got, &got_mm);
    assert!(
        of_call(&none.json(), p.pid, "sendmsg").is_empty(),
        "{:?}",
        none.stdout
    );
    // BCC's layout: TIME(s) ACTION TID COMM SOCKET FD NAME.
    assert_eq!(
        text.stdout[0],
        "TIME(s)        ACTION TID    COMM             SOCKET                    FD    NAME"
    );
    let name = program().file_name().unwrap().to_str().unwrap();
    let comm = &name[..name.len().min(15)];
    let send = format!("SEND   {:<6} {comm:<16} {}:socket:[", p.pid, p.socks[0]);
    let lines: Vec<&String> = text
        .stdout
        .iter()
        .filter(|l| l.get(15..).is_some_and(|l| l.starts_with(&send)))
        .collect();
    assert_eq!(lines.len(), 5, "{:#?}", text.stdout);
    assert!(
        lines[0].ends_with(&format!(" {:<5} {}", p.fds[0], file.0.display())),
        "{lines:#?}"
    );
    p.end();
}

/// Each variant: the calls' own tracepoints; tp_btf sys_enter/sys_exit
/// where they are missing; the two side by side on one run.
#[test]
fn sofdsnoop_hook_variants() {
    let file = File::new();
    let mut p = Passer::start(&file);
    let pid = p.pid.to_string();
    let variants = [
        ("", "tracepoint syscalls:sys_enter_sendmsg"),
        ("tracepoint", "tp_btf sys_enter"),
    ];
    let tools: Vec<Traced> = variants
        .iter()
        .map(|(disable, _)| start(&["--json", "-v", "-p", &pid], disable))
        .collect();
    let (got, got_mm) = p.pass();
    for ((_, hook), tool) in variants.into_iter().zip(tools) {
        let done = stop(tool);
        assert!(done.stderr.contains(hook), "{hook}: {}", done.stderr);
        check(&done.json(), &p, &file, &got, &got_mm);
    }
    p.end();
}

/// A SEND names the file even when the sender has closed it before the
/// line is printed: the kernel's name (its last component) then.
#[test]
fn sofdsnoop_names_a_file_closed_since() {
    let file = File::new();
    let script = format!(
        "import os, socket\n\
         a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n\
         f = os.open({path:?}, os.O_RDONLY)\n\
         socket.send_fds(a, [b'x'], [f])\n\
         os.close(f)\n",
        path = file.0.display().to_string()
    );
    let tool = start(&["--json", "-n", "python3"], "");
    let mut child = Command::new("python3")
        .args(["-c", &script])
        .spawn()
        .unwrap();
    let pid = child.id();
    assert!(child.wait().unwrap().success());
    let events = stop(tool).json();
    let seen = of_call(&events, pid.into(), "sendmsg");
    assert_eq!(seen.len(), 1, "{events:#?}");
    let base = file.0.file_name().unwrap().to_str().unwrap();
    let name = seen[0]["name"].as_str().unwrap();
    assert!(
        name == base || name == file.0.display().to_string(),
        "{name} for {}",
        file.0.display()
    );
}
