//! The two stack formats (BCC's multi-line stacks and flame graph "folded"
//! lines) and JSON, from symbolized frames.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::rc::Rc;

use super::Frame;

/// What a tool has for one half (kernel or user) of a stack.
#[derive(Debug, Clone)]
pub enum Part {
    /// Not asked for (-U, -K), or there is none (a kernel thread's user
    /// stack).
    Absent,
    /// The stack could not be taken (stack map full or a hash collision).
    Missed,
    /// Frames, leaf first.
    Frames(Vec<Rc<Frame>>),
}

impl Part {
    fn present(&self) -> bool {
        !matches!(self, Part::Absent)
    }
}

/// One aggregated stack, for printing.
pub struct Stack<'a> {
    pub kernel: &'a Part,
    pub user: &'a Part,
    pub comm: &'a str,
    pub pid: u32,
    /// The container (or unit, or cgroup) the stack is rooted at
    /// (`--containers`): `[ID]` below the process in both layouts.
    pub container: Option<&'a str>,
    /// Print `--` between the kernel and user frames (-d).
    pub delimited: bool,
    /// Print `name+0x1c` instead of `name` (-s).
    pub offsets: bool,
    /// Mark kernel frames `name_[k]` (profile -a).
    pub annotate: bool,
    /// Each frame's address before its name (BCC's -v: stackcount,
    /// wakeuptime).
    pub addresses: bool,
    /// Another task's side (the waker tools).
    pub joined: Joined<'a>,
}

impl<'a> Stack<'a> {
    /// A task's own stack, shown plain: no delimiter, offsets, marks or
    /// addresses.
    pub fn plain(
        kernel: &'a Part,
        user: &'a Part,
        comm: &'a str,
        pid: u32,
        container: Option<&'a str>,
    ) -> Stack<'a> {
        Stack {
            kernel,
            user,
            comm,
            pid,
            container,
            delimited: false,
            offsets: false,
            annotate: false,
            addresses: false,
            joined: Joined::None,
        }
    }
}

/// What a stack is joined with: the waker tools' two layouts.
#[derive(Clone, Copy)]
pub enum Joined<'a> {
    None,
    /// offwaketime: the stack is a woken task's, joined at its leaf with
    /// the stack of the task that woke it.
    Waker(Side<'a>),
    /// wakeuptime: the stack is a waker's, by the process it woke (its
    /// name and pid).
    Woke(&'a str, u32),
}

/// One task's side of a joined stack.
#[derive(Clone, Copy)]
pub struct Side<'a> {
    pub kernel: &'a Part,
    pub user: &'a Part,
    pub comm: &'a str,
    pub pid: u32,
    /// The process whose memory map names its user frames.
    pub tgid: u32,
}

impl Stack<'_> {
    pub(crate) fn kernel_label(&self, f: &Frame) -> String {
        let mut label = self.user_label(f);
        if self.annotate {
            label.push_str("_[k]");
        }
        label
    }

    fn user_label(&self, f: &Frame) -> String {
        if self.addresses {
            format!("{:<16x} {}", f.addr, f.label(self.offsets))
        } else {
            f.label(self.offsets)
        }
    }
}

/// Appends `;` and one frame's name to a folded line (`;` in the name
/// becomes `:`), without a string of its own in the common case.
fn push_folded(line: &mut String, f: &Frame, offsets: bool, suffix: &str) {
    line.push(';');
    let start = line.len();
    match (&f.name, offsets) {
        (Some(name), false) => line.push_str(name),
        _ => line.push_str(&f.label(offsets)),
    }
    line.push_str(suffix);
    if line[start..].contains([';', '\n']) {
        let fixed = line[start..].replace([';', '\n'], ":");
        line.truncate(start);
        line.push_str(&fixed);
    }
}

/// BCC's multi-line stack: kernel frames, `--` with -d, user frames, then
/// `-    comm (pid)` and the value, each frame indented four spaces; a
/// joined stack in BCC's offwaketime or wakeuptime layout.
pub fn write_multi_line(out: &mut dyn Write, s: &Stack, value: u64) -> io::Result<()> {
    match s.joined {
        Joined::None => {}
        Joined::Waker(w) => return write_woken(out, s, &w, value),
        Joined::Woke(target, pid) => return write_waker(out, s, (target, pid), value),
    }
    match s.kernel {
        Part::Absent => {}
        Part::Missed => writeln!(out, "    [Missed Kernel Stack]")?,
        Part::Frames(frames) => {
            for f in frames {
                writeln!(out, "    {}", s.kernel_label(f))?;
            }
        }
    }
    if s.delimited && s.kernel.present() && s.user.present() {
        writeln!(out, "    --")?;
    }
    match s.user {
        Part::Absent => {}
        Part::Missed => writeln!(out, "    [Missed User Stack]")?,
        Part::Frames(frames) => {
            for f in frames {
                writeln!(out, "    {}", s.user_label(f))?;
            }
        }
    }
    if let Some(c) = s.container {
        writeln!(out, "    [{c}]")?;
    }
    writeln!(out, "    {:<16} {} ({})", "-", s.comm, s.pid)?;
    writeln!(out, "        {value}\n")
}

/// One half's frames, leaf first (or root first), four spaces in; a missed
/// half as BCC marks it.
fn write_part(
    out: &mut dyn Write,
    part: &Part,
    missed: &str,
    root_first: bool,
    label: &dyn Fn(&Frame) -> String,
) -> io::Result<()> {
    match part {
        Part::Absent => Ok(()),
        Part::Missed => writeln!(out, "    {missed}"),
        Part::Frames(frames) => {
            let mut write = |f: &Rc<Frame>| writeln!(out, "    {}", label(f));
            if root_first {
                frames.iter().rev().try_for_each(&mut write)
            } else {
                frames.iter().try_for_each(&mut write)
            }
        }
    }
}

/// BCC's offwaketime: the waker's name and stack root first (user, then
/// kernel), `--`, the woken task's stack leaf first (kernel, then user),
/// its name, and the value; `-` between halves with -d.
fn write_woken(out: &mut dyn Write, s: &Stack, w: &Side, value: u64) -> io::Result<()> {
    let both = |k: &Part, u: &Part| s.delimited && k.present() && u.present();
    writeln!(out, "    {:<16} {} {}", "waker:", w.comm, w.pid)?;
    let user = |f: &Frame| s.user_label(f);
    let kernel = |f: &Frame| s.kernel_label(f);
    write_part(out, w.user, "[Missed User Stack]", true, &user)?;
    if both(w.kernel, w.user) {
        writeln!(out, "    -")?;
    }
    write_part(out, w.kernel, "[Missed Kernel Stack]", true, &kernel)?;
    writeln!(out, "    {:<16} --", "--")?;
    write_part(out, s.kernel, "[Missed Kernel Stack]", false, &kernel)?;
    if both(s.kernel, s.user) {
        writeln!(out, "    -")?;
    }
    write_part(out, s.user, "[Missed User Stack]", false, &user)?;
    if let Some(c) = s.container {
        writeln!(out, "    [{c}]")?;
    }
    writeln!(out, "    {:<16} {} {}", "target:", s.comm, s.pid)?;
    writeln!(out, "        {value}\n")
}

/// BCC's wakeuptime: the woken process's name, the waker's stack leaf
/// first (with -v each frame's address), the waker's name, and the value;
/// each name with its pid (BCC's sums by name).
fn write_waker(
    out: &mut dyn Write,
    s: &Stack,
    (target, pid): (&str, u32),
    value: u64,
) -> io::Result<()> {
    if let Some(c) = s.container {
        writeln!(out, "    [{c}]")?;
    }
    writeln!(out, "    {:<16} {target} {pid}", "target:")?;
    let kernel = |f: &Frame| s.kernel_label(f);
    let user = |f: &Frame| s.user_label(f);
    write_part(out, s.kernel, "[Missed Kernel Stack]", false, &kernel)?;
    if s.delimited && s.kernel.present() && s.user.present() {
        writeln!(out, "    --")?;
    }
    write_part(out, s.user, "[Missed User Stack]", false, &user)?;
    writeln!(out, "    {:<16} {} {}", "waker:", s.comm, s.pid)?;
    writeln!(out, "        {value}\n")
}

/// A comm as a folded line's frame.
fn folded_name(comm: &str) -> String {
    comm.replace([';', ' ', '\n'], "_")
}

/// Appends one half's frames to a folded line, root first (or leaf first).
fn push_folded_part(
    line: &mut String,
    part: &Part,
    missed: &str,
    leaf_first: bool,
    offsets: bool,
    suffix: &str,
) {
    match part {
        Part::Absent => {}
        Part::Missed => {
            line.push(';');
            line.push_str(missed);
        }
        Part::Frames(frames) if leaf_first => {
            for f in frames {
                push_folded(line, f, offsets, suffix);
            }
        }
        Part::Frames(frames) => {
            for f in frames.iter().rev() {
                push_folded(line, f, offsets, suffix);
            }
        }
    }
}

/// Appends one task's halves to a folded line: root first (user, `-`
/// under -d, kernel), or leaf first (kernel, `-`, user).
fn push_halves(line: &mut String, s: &Stack, kernel: &Part, user: &Part, leaf_first: bool) {
    let suffix = if s.annotate { "_[k]" } else { "" };
    let delimiter = s.delimited && kernel.present() && user.present();
    let halves = [
        (kernel, "[Missed Kernel Stack]", suffix),
        (user, "[Missed User Stack]", ""),
    ];
    let order = if leaf_first { [0, 1] } else { [1, 0] };
    for (i, half) in order.into_iter().enumerate() {
        if i == 1 && delimiter {
            line.push_str(";-");
        }
        let (part, missed, suffix) = halves[half];
        push_folded_part(line, part, missed, leaf_first, s.offsets, suffix);
    }
}

/// A folded line: `comm;user frames root first;kernel frames value`, with
/// `-` between user and kernel frames under -d; what flamegraph.pl and
/// inferno read. Joined: offwaketime's `target;…;--;…;waker value` (the
/// waker's stack leaf first, so that flamegraph.pl draws the wakeup
/// under the block), wakeuptime's `waker;…;target value`.
pub fn folded_line(s: &Stack, value: u64) -> String {
    let mut line = folded_stack(s);
    let _ = write!(line, " {value}");
    line
}

/// A folded line's stack, without its value: lines of one stack (two
/// stack ids that name the same frames, as a loop's different addresses
/// in one function do) are one line, their values summed.
pub fn folded_stack(s: &Stack) -> String {
    let mut line = match s.container {
        Some(c) => format!("[{}];", folded_name(c)),
        None => String::new(),
    };
    line.push_str(&folded_name(s.comm));
    push_halves(&mut line, s, s.kernel, s.user, false);
    match s.joined {
        Joined::None => {}
        Joined::Waker(w) => {
            line.push_str(";--");
            push_halves(&mut line, s, w.kernel, w.user, true);
            // No waker (a task preempted, not woken): no empty frame.
            if !w.comm.is_empty() {
                line.push(';');
                line.push_str(&folded_name(w.comm));
            }
        }
        Joined::Woke(target, _) => {
            line.push(';');
            line.push_str(&folded_name(target));
        }
    }
    line
}

/// Frame names (leaf first) as JSON strings; missed stacks as null.
pub fn part_json(part: &Part, offsets: bool) -> serde_json::Value {
    match part {
        Part::Absent => serde_json::Value::Array(Vec::new()),
        Part::Missed => serde_json::Value::Null,
        Part::Frames(frames) => frames
            .iter()
            .map(|f| {
                let mut o = serde_json::json!({
                    "name": f.label(offsets),
                    "addr": format!("{:#x}", f.addr),
                });
                if let Some(m) = &f.module {
                    o["module"] = m.clone().into();
                }
                if let Some(src) = &f.source {
                    o["source"] = src.clone().into();
                }
                o
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::frame;
    use super::*;

    #[test]
    fn multi_line_stacks_match_bcc() {
        let kernel = Part::Frames(vec![frame("schedule"), frame("do_nanosleep")]);
        let user = Part::Frames(vec![frame("nap"), frame("main")]);
        let s = Stack {
            kernel: &kernel,
            user: &user,
            comm: "sleeper",
            pid: 42,
            container: None,
            delimited: true,
            offsets: false,
            annotate: false,
            addresses: false,
            joined: Joined::None,
        };
        let mut out = Vec::new();
        write_multi_line(&mut out, &s, 3000000).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "    schedule\n    do_nanosleep\n    --\n    nap\n    main\n\
             \x20   -                sleeper (42)\n        3000000\n\n"
        );
    }

    #[test]
    fn folded_lines_are_root_first_user_then_kernel() {
        let kernel = Part::Frames(vec![frame("schedule"), frame("do_nanosleep")]);
        let user = Part::Frames(vec![frame("nap"), frame("main")]);
        let missed = Part::Missed;
        let mut s = Stack {
            kernel: &kernel,
            user: &user,
            comm: "my app",
            pid: 42,
            container: None,
            delimited: false,
            offsets: false,
            annotate: false,
            addresses: false,
            joined: Joined::None,
        };
        assert_eq!(
            folded_line(&s, 7),
            "my_app;main;nap;do_nanosleep;schedule 7"
        );
        s.annotate = true;
        assert_eq!(
            folded_line(&s, 7),
            "my_app;main;nap;do_nanosleep_[k];schedule_[k] 7"
        );
        s.annotate = false;
        // A frame's `;` would split it in two.
        let odd = Part::Frames(vec![frame("a;b")]);
        s.user = &odd;
        assert_eq!(folded_line(&s, 1), "my_app;a:b;do_nanosleep;schedule 1");
        s.delimited = true;
        s.user = &missed;
        assert_eq!(
            folded_line(&s, 7),
            "my_app;[Missed User Stack];-;do_nanosleep;schedule 7"
        );
    }

    #[test]
    fn a_container_roots_the_stack() {
        let user = Part::Frames(vec![frame("spin"), frame("main")]);
        let s = Stack {
            kernel: &Part::Absent,
            user: &user,
            comm: "app",
            pid: 7,
            container: Some("4f1e2d3c4b5a"),
            delimited: false,
            offsets: false,
            annotate: false,
            addresses: false,
            joined: Joined::None,
        };
        assert_eq!(folded_line(&s, 3), "[4f1e2d3c4b5a];app;main;spin 3");
        let mut out = Vec::new();
        write_multi_line(&mut out, &s, 3).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "    spin\n    main\n    [4f1e2d3c4b5a]\n    -                app (7)\n        3\n\n"
        );
    }

    fn joined_pair() -> (Part, Part, Part, Part) {
        (
            Part::Frames(vec![frame("schedule"), frame("pipe_read")]),
            Part::Frames(vec![frame("read"), frame("wait_for_a")]),
            Part::Frames(vec![frame("try_to_wake_up"), frame("pipe_write")]),
            Part::Frames(vec![frame("write"), frame("wake_b")]),
        )
    }

    #[test]
    fn offwaketime_joins_the_waker_root_first_then_the_blocked_leaf_first() {
        let (kernel, user, waker_kernel, waker_user) = joined_pair();
        let s = Stack {
            kernel: &kernel,
            user: &user,
            comm: "b",
            pid: 8,
            container: None,
            delimited: true,
            offsets: false,
            annotate: false,
            addresses: false,
            joined: Joined::Waker(Side {
                kernel: &waker_kernel,
                user: &waker_user,
                comm: "a",
                pid: 7,
                tgid: 7,
            }),
        };
        let mut out = Vec::new();
        write_multi_line(&mut out, &s, 20).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "    waker:           a 7\n    wake_b\n    write\n    -\n    pipe_write\n\
             \x20   try_to_wake_up\n    --               --\n    schedule\n    pipe_read\n\
             \x20   -\n    read\n    wait_for_a\n    target:          b 8\n        20\n\n"
        );
        assert_eq!(
            folded_line(&s, 20),
            "b;wait_for_a;read;-;pipe_read;schedule;--;try_to_wake_up;pipe_write;-;write;wake_b;a 20"
        );
    }

    #[test]
    fn wakeuptime_shows_the_wakers_stack_by_the_task_woken() {
        let (_, _, waker_kernel, waker_user) = joined_pair();
        let s = Stack {
            kernel: &waker_kernel,
            user: &Part::Absent,
            comm: "a",
            pid: 7,
            container: None,
            delimited: false,
            offsets: false,
            annotate: false,
            addresses: false,
            joined: Joined::Woke("b", 8),
        };
        let mut out = Vec::new();
        write_multi_line(&mut out, &s, 20).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "    target:          b 8");
        assert_eq!(lines[1], "    try_to_wake_up", "{text}");
        assert_eq!(lines[3], "    waker:           a 7", "{text}");
        assert_eq!(lines[4], "        20", "{text}");
        // -v: each frame's address first, as BCC's.
        let mut out = Vec::new();
        let verbose = Stack {
            addresses: true,
            ..s
        };
        write_multi_line(&mut out, &verbose, 20).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text.lines().nth(1),
            Some("    1000             try_to_wake_up"),
            "{text}"
        );
        assert_eq!(folded_line(&s, 20), "a;pipe_write;try_to_wake_up;b 20");
        let with_user = Stack {
            user: &waker_user,
            ..s
        };
        assert_eq!(
            folded_line(&with_user, 20),
            "a;wake_b;write;pipe_write;try_to_wake_up;b 20"
        );
    }
}
