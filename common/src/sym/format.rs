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
}

impl Stack<'_> {
    fn kernel_label(&self, f: &Frame) -> String {
        let mut label = f.label(self.offsets);
        if self.annotate {
            label.push_str("_[k]");
        }
        label
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
/// `-    comm (pid)` and the value, each frame indented four spaces.
pub fn write_multi_line(out: &mut dyn Write, s: &Stack, value: u64) -> io::Result<()> {
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
                writeln!(out, "    {}", f.label(s.offsets))?;
            }
        }
    }
    if let Some(c) = s.container {
        writeln!(out, "    [{c}]")?;
    }
    writeln!(out, "    {:<16} {} ({})", "-", s.comm, s.pid)?;
    writeln!(out, "        {value}\n")
}

/// A folded line: `comm;user frames root first;kernel frames value`, with
/// `-` between user and kernel frames under -d; what flamegraph.pl and
/// inferno read.
pub fn folded_line(s: &Stack, value: u64) -> String {
    let mut line = match s.container {
        Some(c) => format!("[{}];", c.replace([';', ' ', '\n'], "_")),
        None => String::new(),
    };
    line.push_str(&s.comm.replace([';', ' ', '\n'], "_"));
    match s.user {
        Part::Absent => {}
        Part::Missed => line.push_str(";[Missed User Stack]"),
        Part::Frames(frames) => {
            for f in frames.iter().rev() {
                push_folded(&mut line, f, s.offsets, "");
            }
        }
    }
    if s.delimited && s.kernel.present() && s.user.present() {
        line.push_str(";-");
    }
    let suffix = if s.annotate { "_[k]" } else { "" };
    match s.kernel {
        Part::Absent => {}
        Part::Missed => line.push_str(";[Missed Kernel Stack]"),
        Part::Frames(frames) => {
            for f in frames.iter().rev() {
                push_folded(&mut line, f, s.offsets, suffix);
            }
        }
    }
    let _ = write!(line, " {value}");
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
        };
        assert_eq!(folded_line(&s, 3), "[4f1e2d3c4b5a];app;main;spin 3");
        let mut out = Vec::new();
        write_multi_line(&mut out, &s, 3).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "    spin\n    main\n    [4f1e2d3c4b5a]\n    -                app (7)\n        3\n\n"
        );
    }
}
