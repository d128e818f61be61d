//! A stack tool's report, from symbolized entries to text: BCC's
//! multi-line stacks, folded lines or JSON lines, and each stack to the
//! report files. Entries in, an `impl Write` out: tested here with made-up
//! stacks.

use std::io::Write;

use anyhow::Result;
use serde_json::json;

use crate::export::pprof::Label;
use crate::kernel::cgroups::Resolver;
use crate::output::{c_string, escape, hist};
use crate::sym::{self, Joined, Part, Side, Stack};

use super::{Key, Parts, Report};

/// What a sum is, as the report shows it.
#[derive(Debug, Clone, Copy)]
pub struct Value {
    /// Its JSON field (`samples`, `us`).
    pub name: &'static str,
    /// The kernel's sum is divided by this for the text, JSON and flame
    /// graph (nanoseconds shown as microseconds: 1000).
    pub divisor: u64,
}

/// How a stack tool's report looks.
#[derive(Debug, Clone)]
pub struct Look {
    pub value: Value,
    /// The pprof profile's values of a sum: one multiplier per sample type
    /// (profile at -F: nanoseconds a sample, and 1 for the count).
    pub scales: Vec<u64>,
    /// Counted by thread: `tid` in JSON and the profile's labels.
    pub per_thread: bool,
    /// `name+0x1c` (-s).
    pub offsets: bool,
    /// Kernel frames marked `_[k]` (profile -a).
    pub annotate: bool,
    /// Each frame's address in multi-line text (BCC's -v).
    pub addresses: bool,
    /// Set by the kind from the shared options: `--` between the kernel
    /// and user frames (-d), JSON, folded lines.
    pub delimited: bool,
    pub json: bool,
    pub folded: bool,
    /// The waker tools' layouts.
    pub join: Join,
    /// A histogram under each stack in place of its sum (biostacks).
    pub hists: Option<PerStack>,
}

/// A log2 histogram by key besides the sum (biostacks' latencies): the
/// kernel side's `stack_hists` map, keyed as `counts` is. The text report
/// shows libbpf-tools' layout (`comm pid labels`, the frames, the
/// histogram); JSON gains the key's labels and the histogram; folded lines
/// and the files keep the sum.
#[derive(Debug, Clone, Copy)]
pub struct PerStack {
    /// The slots' unit (`usecs`, `msecs`).
    pub unit: &'static str,
    /// The kernel's totals are finer than the slots: this many to a unit
    /// (nanoseconds kept for microsecond slots: 1000).
    pub total_divisor: u64,
    /// The key's own labels (biostacks' `disk`): in the text header after
    /// comm and pid, as JSON fields, as pprof labels.
    pub labels: fn(&Key) -> Vec<(&'static str, String)>,
}

/// The histograms of [`PerStack`], by key.
pub type Hists = std::collections::HashMap<Key, crate::skel::types::hist>;

/// Whose stacks a key shows: its task's, or (the waker tools) its task's
/// joined with its waker's, or its waker's only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Join {
    None,
    /// offwaketime: the woken task's stacks joined with its waker's.
    OffWake,
    /// wakeuptime: the waker's stacks, by the task woken.
    WakeUp,
}

impl Look {
    /// A value shown as counted, in one sample type.
    pub fn new(value: Value) -> Look {
        Look {
            value,
            scales: vec![1],
            per_thread: false,
            delimited: false,
            offsets: false,
            annotate: false,
            addresses: false,
            json: false,
            folded: false,
            join: Join::None,
            hists: None,
        }
    }
}

/// Prints `rows` (each with its stacks' parts, in order, and its
/// histogram in `hists` where the look has them) and adds each stack to
/// `files`.
pub fn print(
    w: &mut dyn Write,
    look: &Look,
    rows: &[(Key, u64)],
    parts: &[Parts],
    hists: &Hists,
    mut files: Option<&mut Report>,
    mut cgroups: Option<&mut Resolver>,
) -> Result<()> {
    let absent = (Part::Absent, Part::Absent);
    // Folded lines by stack, in the rows' order, summed where two rows
    // name the same frames.
    let mut folded: Vec<(String, u64)> = Vec::new();
    let mut folded_at: std::collections::HashMap<String, usize> = Default::default();
    for ((k, sum), p) in rows.iter().zip(parts) {
        let value = *sum / look.value.divisor.max(1);
        let comm = c_string(&k.comm);
        let shown = escape(comm.as_bytes());
        let waker_comm = k.waker.as_ref().map(|w| c_string(&w.comm));
        let waker_shown = waker_comm.as_ref().map(|c| escape(c.as_bytes()));
        let (waker_kernel, waker_user) = p.waker.as_ref().unwrap_or(&absent);
        // --containers: the cgroup's names, and the label its stacks are
        // rooted at (the id of a cgroup gone before it was named).
        let names = cgroups.as_deref_mut().map(|r| r.names(k.cgroup_id));
        let label = names
            .as_ref()
            .map(|n| crate::kernel::cgroups::shown(k.cgroup_id, n.as_deref()));
        let shown_label = label.as_ref().map(|l| escape(l.as_bytes()));
        let waker_side = k.waker.as_ref().map(|wk| Side {
            kernel: waker_kernel,
            user: waker_user,
            comm: waker_shown.as_deref().unwrap_or(""),
            pid: wk.shown_id,
            tgid: wk.tgid,
        });
        // wakeuptime's stack is its waker's, named by the task woken.
        let (kernel, user, stack_comm, pid, tgid, joined) = match (look.join, waker_side) {
            (Join::OffWake, Some(side)) => (
                &p.kernel,
                &p.user,
                &*shown,
                k.shown_id,
                k.tgid,
                Joined::Waker(side),
            ),
            (Join::WakeUp, Some(side)) => (
                side.kernel,
                side.user,
                side.comm,
                side.pid,
                side.tgid,
                Joined::Woke(&shown, k.shown_id),
            ),
            _ => (
                &p.kernel,
                &p.user,
                &*shown,
                k.shown_id,
                k.tgid,
                Joined::None,
            ),
        };
        let own = look.hists.map_or_else(Vec::new, |h| (h.labels)(k));
        let hist = look.hists.and_then(|h| Some((h, hists.get(k)?)));
        let stack = Stack {
            kernel,
            user,
            comm: stack_comm,
            pid,
            container: shown_label.as_deref(),
            delimited: look.delimited,
            offsets: look.offsets,
            annotate: look.annotate,
            addresses: look.addresses,
            joined,
        };
        if let Some(files) = files.as_deref_mut().filter(|f| f.wanted()) {
            let values: Vec<i64> = look
                .scales
                .iter()
                .map(|s| sum.saturating_mul(*s) as i64)
                .collect();
            let mut labels = vec![Label::Str("comm", &comm), Label::Num("pid", k.tgid.into())];
            if look.per_thread {
                labels.push(Label::Num("tid", k.shown_id.into()));
            }
            // No waker (a task preempted): no labels.
            if let (Some(c), Some(wk)) = (waker_comm.as_ref().filter(|c| !c.is_empty()), &k.waker) {
                labels.push(Label::Str("waker_comm", c));
                labels.push(Label::Num("waker_pid", wk.tgid.into()));
            }
            if let Some(label) = &label {
                labels.push(Label::Str("container", label));
            }
            if let Some(unit) = names.as_ref().and_then(|n| n.as_ref()?.unit.as_deref()) {
                labels.push(Label::Str("unit", unit));
            }
            for (name, v) in &own {
                labels.push(Label::Str(name, v));
            }
            files.add(&stack, value, tgid, &values, &labels);
        }
        if look.json {
            let mut o = json!({
                "pid": k.tgid,
                "comm": comm,
                look.value.name: value,
            });
            if look.join != Join::WakeUp {
                o["kernel_stack"] = sym::part_json(&p.kernel, look.offsets);
                o["user_stack"] = sym::part_json(&p.user, look.offsets);
            }
            if look.per_thread {
                o["tid"] = k.shown_id.into();
            }
            if let (Some(wk), Some(c)) = (&k.waker, &waker_comm) {
                if c.is_empty() {
                    // A task preempted, not woken.
                    o["waker"] = serde_json::Value::Null;
                } else {
                    let mut waker = json!({
                        "pid": wk.tgid,
                        "comm": c,
                        "kernel_stack": sym::part_json(waker_kernel, look.offsets),
                        "user_stack": sym::part_json(waker_user, look.offsets),
                    });
                    if look.per_thread {
                        waker["tid"] = wk.shown_id.into();
                    }
                    o["waker"] = waker;
                }
            }
            if let (Some(n), Some(o)) = (&names, o.as_object_mut()) {
                crate::kernel::cgroups::add_json(o, k.cgroup_id, n.as_deref());
            }
            for (name, v) in &own {
                o[*name] = v.as_str().into();
            }
            if let Some((ph, h)) = hist {
                o["hist"] = hist::to_json(
                    Default::default(),
                    ph.unit,
                    &h.slots,
                    h.count,
                    h.total / ph.total_divisor.max(1),
                    None,
                );
            }
            crate::output::json_to_writer(&mut *w, &o)?;
            w.write_all(b"\n")?;
        } else if look.folded {
            let line = sym::folded_stack(&stack);
            match folded_at.get(&line) {
                Some(&i) => folded[i].1 += value,
                None => {
                    folded_at.insert(line.clone(), folded.len());
                    folded.push((line, value));
                }
            }
        } else if let Some((ph, h)) = hist {
            write_with_hist(w, &stack, &own, ph.unit, &h.slots)?;
        } else {
            sym::write_multi_line(w, &stack, value)?;
        }
    }
    // The smallest first, as the rows are.
    folded.sort_by_key(|(_, v)| *v);
    for (line, value) in folded {
        writeln!(w, "{line} {value}")?;
    }
    Ok(())
}

/// libbpf-tools' biostacks layout: `comm pid labels`, the kernel frames
/// leaf first, the container, the histogram, a blank line.
fn write_with_hist(
    w: &mut dyn Write,
    s: &Stack,
    labels: &[(&str, String)],
    unit: &str,
    slots: &[u32],
) -> Result<()> {
    let mut head = format!("{:<14} {:<6}", s.comm, s.pid);
    for (_, v) in labels {
        head += &format!(" {v:<7}");
    }
    writeln!(w, "{}", head.trim_end())?;
    match s.kernel {
        Part::Absent => {}
        Part::Missed => writeln!(w, "[Missed Kernel Stack]")?,
        Part::Frames(frames) => {
            for f in frames {
                writeln!(w, "{}", s.kernel_label(f))?;
            }
        }
    }
    if let Some(c) = s.container {
        writeln!(w, "[{c}]")?;
    }
    hist::print_log2(w, slots, unit)?;
    writeln!(w)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::super::User;
    use super::*;
    use crate::sym::Frame;

    fn frame(name: &str, addr: u64) -> Rc<Frame> {
        Rc::new(Frame {
            addr,
            name: Some(name.into()),
            offset: 0x1c,
            module: None,
            source: None,
        })
    }

    fn comm(s: &str) -> [i8; 16] {
        let mut c = [0i8; 16];
        for (d, b) in c.iter_mut().zip(s.bytes()) {
            *d = b as i8;
        }
        c
    }

    /// Two stacks of one process in two threads: a kernel and user stack,
    /// and a user stack whose kernel half was missed.
    type Rows = (Vec<(Key, u64)>, Vec<Parts>);

    fn parts(kernel: Part, user: Part) -> Parts {
        Parts {
            kernel,
            user,
            waker: None,
        }
    }

    fn rows() -> Rows {
        let key = |tid, kern| Key {
            tgid: 10,
            shown_id: tid,
            kern_stack_id: kern,
            user: User::Map(1),
            comm: comm("app"),
            cgroup_id: 0,
            waker: None,
            entry_caller: 0,
            dev: 0,
        };
        (
            vec![(key(11, -14), 2500), (key(12, 3), 7000)],
            vec![
                parts(Part::Missed, Part::Frames(vec![frame("work", 0x401000)])),
                parts(
                    Part::Frames(vec![frame("schedule", 0xffff1000)]),
                    Part::Frames(vec![frame("poll", 0x402000), frame("main", 0x403000)]),
                ),
            ],
        )
    }

    fn printed(look: &Look) -> String {
        let (rows, parts) = rows();
        let mut w = Vec::new();
        print(&mut w, look, &rows, &parts, &Hists::new(), None, None).unwrap();
        String::from_utf8(w).unwrap()
    }

    fn microseconds() -> Look {
        Look {
            per_thread: true,
            ..Look::new(Value {
                name: "us",
                divisor: 1000,
            })
        }
    }

    #[test]
    fn multi_line_stacks_are_bccs() {
        let look = Look {
            delimited: true,
            ..microseconds()
        };
        assert_eq!(
            printed(&look),
            "    [Missed Kernel Stack]\n    --\n    work\n    -                app (11)\n        2\n\n\
             \x20   schedule\n    --\n    poll\n    main\n    -                app (12)\n        7\n\n"
        );
    }

    #[test]
    fn folded_lines_are_root_first() {
        let look = Look {
            folded: true,
            annotate: true,
            ..Look::new(Value {
                name: "samples",
                divisor: 1,
            })
        };
        assert_eq!(
            printed(&look),
            "app;work;[Missed Kernel Stack] 2500\napp;main;poll;schedule_[k] 7000\n"
        );
    }

    #[test]
    fn folded_lines_of_the_same_frames_are_one_line() {
        let key = |user| Key {
            tgid: 10,
            shown_id: 0,
            kern_stack_id: -1,
            user: User::Map(user),
            comm: comm("app"),
            cgroup_id: 0,
            waker: None,
            entry_caller: 0,
            dev: 0,
        };
        // Two stack ids (the loop at two addresses of spin), and another
        // stack in between by value.
        let rows = vec![(key(1), 2), (key(3), 5), (key(2), 40)];
        let user = |leaf: u64| {
            parts(
                Part::Absent,
                Part::Frames(vec![frame("spin", leaf), frame("main", 0x403000)]),
            )
        };
        let parts = vec![
            user(0x401000),
            parts(Part::Absent, Part::Frames(vec![frame("other", 0x405000)])),
            user(0x401008),
        ];
        let look = Look {
            folded: true,
            ..Look::new(Value {
                name: "samples",
                divisor: 1,
            })
        };
        let mut w = Vec::new();
        print(&mut w, &look, &rows, &parts, &Hists::new(), None, None).unwrap();
        assert_eq!(
            String::from_utf8(w).unwrap(),
            "app;other 5\napp;main;spin 42\n"
        );
    }

    #[test]
    fn json_names_the_value_and_the_thread() {
        let look = Look {
            json: true,
            offsets: true,
            ..microseconds()
        };
        let lines: Vec<serde_json::Value> = printed(&look)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["us"], 2);
        assert_eq!(lines[0]["tid"], 11);
        assert_eq!(lines[0]["pid"], 10);
        assert_eq!(lines[0]["kernel_stack"], serde_json::Value::Null);
        assert_eq!(lines[1]["user_stack"][1]["name"], "main+0x1c");
        assert_eq!(lines[1]["kernel_stack"][0]["addr"], "0xffff1000");
        let by_process = Look {
            per_thread: false,
            ..look
        };
        assert!(printed(&by_process).lines().all(|l| !l.contains("\"tid\"")));
    }

    fn per_disk(look: Look) -> (Look, Hists) {
        let (rows, _) = rows();
        let mut hists = Hists::new();
        let mut h = crate::skel::types::hist {
            count: 3,
            total: 9_000,
            ..Default::default()
        };
        h.slots[1] = 2;
        h.slots[2] = 1;
        hists.insert(rows[1].0.clone(), h);
        let look = Look {
            hists: Some(PerStack {
                unit: "usecs",
                total_divisor: 1000,
                labels: |k| vec![("disk", format!("dev{}", k.dev))],
            }),
            ..look
        };
        (look, hists)
    }

    #[test]
    fn a_histogram_under_each_stack_is_libbpf_tools_layout() {
        let (look, hists) = per_disk(Look {
            per_thread: false,
            ..microseconds()
        });
        let (rows, parts) = rows();
        let mut w = Vec::new();
        // The first row has no histogram: shown as its sum, as BCC's.
        print(&mut w, &look, &rows, &parts, &hists, None, None).unwrap();
        assert_eq!(
            String::from_utf8(w).unwrap(),
            "    [Missed Kernel Stack]\n    work\n    -                app (11)\n        2\n\n\
             app            12     dev0\n\
             schedule\n\
             \x20    usecs               : count    distribution\n\
             \x20        0 -> 1          : 0        |                                        |\n\
             \x20        2 -> 3          : 2        |****************************************|\n\
             \x20        4 -> 7          : 1        |********************                    |\n\n"
        );
        let json = Look { json: true, ..look };
        let mut w = Vec::new();
        print(&mut w, &json, &rows[1..], &parts[1..], &hists, None, None).unwrap();
        let line: serde_json::Value = serde_json::from_slice(&w).unwrap();
        assert_eq!(line["disk"], "dev0");
        assert_eq!(line["us"], 7);
        assert_eq!(line["hist"]["count"], 3);
        // Nanoseconds in the kernel, microseconds shown.
        assert_eq!(line["hist"]["total"], 9);
        assert_eq!(line["hist"]["unit"], "usecs");
        assert_eq!(line["hist"]["buckets"][0]["low"], 2);
    }

    #[test]
    fn a_hostile_comm_is_escaped_in_text() {
        let (mut rows, parts) = rows();
        rows[0].0.comm = comm("a\x1b[2Jb");
        let mut w = Vec::new();
        print(
            &mut w,
            &Look::new(Value {
                name: "samples",
                divisor: 1,
            }),
            &rows,
            &parts,
            &Hists::new(),
            None,
            None,
        )
        .unwrap();
        let text = String::from_utf8(w).unwrap();
        assert!(!text.contains('\x1b'), "{text}");
        assert!(text.contains("a\\x1b[2Jb (11)"), "{text}");
    }
}
