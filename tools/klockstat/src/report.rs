//! klockstat's tables, in libbpf-tools' layout: a wait table and a hold
//! table, a row per caller (or thread), sorted and cut to -n; with -s, the
//! caller's stack under it and who waited (held) longest, on which lock.

use std::io::{self, Write};
use std::rc::Rc;

use common::kernel::cgroups::{self, Names};
use common::output::escape;
use serde_json::{json, Value};

/// One key's waits or holds, as the kernel added them up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stat {
    pub count: u64,
    pub total_ns: u64,
    pub max_ns: u64,
    pub max_lock: u64,
    pub max_pid: u32,
    pub max_tid: u32,
    pub max_comm: Vec<u8>,
}

impl Stat {
    /// Adds another key's figures (the same caller from another stack, or
    /// the same lock kind seen spinning and sleeping).
    pub fn merge(&mut self, other: &Stat) {
        self.count += other.count;
        self.total_ns += other.total_ns;
        if other.max_ns > self.max_ns || self.max_comm.is_empty() {
            self.max_ns = other.max_ns;
            self.max_lock = other.max_lock;
            self.max_pid = other.max_pid;
            self.max_tid = other.max_tid;
            self.max_comm.clone_from(&other.max_comm);
        }
    }

    fn avg_ns(&self) -> u64 {
        self.total_ns.checked_div(self.count).unwrap_or(0)
    }
}

/// Whose row it is.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Who {
    /// The frames shown of the stack that asked for the lock, caller
    /// first (`pipe_write+0x43`).
    Stack(Vec<String>),
    /// --per-thread: a thread and its name.
    Thread { tid: u32, comm: Vec<u8> },
}

/// One row of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub who: Who,
    /// The lock's kind (`mutex`, `rwsem-write`, ...).
    pub kind: &'static str,
    pub stat: Stat,
    /// The longest one's lock, by name where it is a kernel variable.
    pub lock_name: Option<String>,
    /// --containers: the tasks' cgroup, and its names where known.
    pub cgroup: Option<(u64, Option<Rc<Names>>)>,
}

/// Which table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    Wait,
    Hold,
}

impl Table {
    fn word(self) -> &'static str {
        match self {
            Table::Wait => "Wait",
            Table::Hold => "Hold",
        }
    }

    pub fn json_name(self) -> &'static str {
        match self {
            Table::Wait => "wait",
            Table::Hold => "hold",
        }
    }
}

/// -S: a table's order, the largest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortBy {
    #[default]
    Max,
    Total,
    Count,
}

impl SortBy {
    fn value(self, s: &Stat) -> u64 {
        match self {
            SortBy::Max => s.max_ns,
            SortBy::Total => s.total_ns,
            SortBy::Count => s.count,
        }
    }
}

/// -S's text: `acq_max`, `hld_total`, or both comma-separated: the wait
/// and hold tables' orders.
pub fn parse_sort(s: &str) -> Result<(Option<SortBy>, Option<SortBy>), String> {
    let (mut acq, mut hld) = (None, None);
    for part in s.split(',') {
        let (table, field) = part.split_once('_').unwrap_or((part, ""));
        let by = match field {
            "max" => SortBy::Max,
            "total" => SortBy::Total,
            "count" => SortBy::Count,
            _ => return Err(bad_sort(part)),
        };
        let slot = match table {
            "acq" => &mut acq,
            "hld" => &mut hld,
            _ => return Err(bad_sort(part)),
        };
        if slot.replace(by).is_some() {
            return Err(format!("'{s}' orders the {table}_ table twice"));
        }
    }
    Ok((acq, hld))
}

fn bad_sort(part: &str) -> String {
    format!(
        "'{part}' is no sort field: acq_max, acq_total, acq_count, hld_max, hld_total or hld_count"
    )
}

/// Sorts rows by `by`, the largest first; ties by who, for a stable report.
pub fn sort(rows: &mut [Row], by: SortBy) {
    rows.sort_by(|a, b| {
        by.value(&b.stat)
            .cmp(&by.value(&a.stat))
            .then_with(|| a.who.cmp(&b.who))
    });
}

/// How the tables look: -s frames per stack, -P, -n rows.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub stack_lines: usize,
    pub per_thread: bool,
    pub max_rows: usize,
    /// --containers: a CONTAINER column.
    pub containers: bool,
}

/// libbpf-tools' time: one decimal in the largest unit it reaches.
pub fn time(ns: u64) -> String {
    const UNITS: [(f64, &str); 5] = [
        (1e9 * 3600.0, "h "),
        (1e9 * 60.0, "m "),
        (1e9, "s "),
        (1e6, "ms"),
        (1e3, "us"),
    ];
    for (base, unit) in UNITS {
        if ns as f64 >= base {
            return format!("{:.1} {unit}", ns as f64 / base);
        }
    }
    format!("{ns} ns")
}

/// A table in text, its rows sorted already.
pub fn print(w: &mut impl Write, table: Table, rows: &[Row], layout: Layout) -> io::Result<()> {
    let word = table.word();
    for (i, row) in rows.iter().take(layout.max_rows).enumerate() {
        if i == 0 || layout.stack_lines > 1 {
            let label = if layout.per_thread {
                "                Tid              Comm"
            } else {
                "                               Caller"
            };
            let column = if layout.containers { "  CONTAINER" } else { "" };
            writeln!(
                w,
                "\n{label}  Avg {word}    Count   Max {word}   Total {word}{column}"
            )?;
        }
        let s = &row.stat;
        let (first, more): (String, &[String]) = match &row.who {
            Who::Stack(frames) => match frames.split_first() {
                Some((f, rest)) => (f.clone(), rest),
                None => ("[unknown]".into(), &[]),
            },
            Who::Thread { tid, comm } => (format!("{tid}  {:>16}", escape(comm)), &[]),
        };
        let container = match &row.cgroup {
            Some((id, names)) => {
                let shown = cgroups::shown(*id, names.as_deref());
                format!("  {}", escape(shown.as_bytes()))
            }
            None => String::new(),
        };
        writeln!(
            w,
            "{first:>37} {:>9} {:>8} {:>10} {:>12}{container}",
            time(s.avg_ns()),
            s.count,
            time(s.max_ns),
            time(s.total_ns)
        )?;
        for frame in more.iter().take(layout.stack_lines.saturating_sub(1)) {
            writeln!(w, "{frame:>37}")?;
        }
        if layout.stack_lines > 1 && !layout.per_thread {
            writeln!(
                w,
                "                              Max PID {}, COMM {}, Lock {} ({:#x})",
                s.max_pid,
                escape(&s.max_comm),
                row.lock_name.as_deref().unwrap_or("no-ksym"),
                s.max_lock
            )?;
        }
    }
    Ok(())
}

/// A row as a JSON line's object.
pub fn json(table: Table, row: &Row, time: &str) -> Value {
    let s = &row.stat;
    let mut v = json!({
        "time": time,
        "table": table.json_name(),
        "kind": row.kind,
        "count": s.count,
        "avg_ns": s.avg_ns(),
        "max_ns": s.max_ns,
        "total_ns": s.total_ns,
        "max_pid": s.max_pid,
        "max_tid": s.max_tid,
        "max_comm": escape(&s.max_comm),
        "max_lock": format!("{:#x}", s.max_lock),
        "max_lock_name": row.lock_name,
    });
    match &row.who {
        Who::Stack(frames) => {
            v["caller"] = frames.first().map_or(Value::Null, |f| f.as_str().into());
            v["stack"] = frames.clone().into();
        }
        Who::Thread { tid, comm } => {
            v["tid"] = (*tid).into();
            v["comm"] = escape(comm).into();
        }
    }
    if let (Some((id, names)), Some(o)) = (&row.cgroup, v.as_object_mut()) {
        cgroups::add_json(o, *id, names.as_deref());
    }
    v
}

/// The kind of lock the contention tracepoint's flags (or the kprobe's)
/// say; a mutex seen spinning before it slept is a mutex.
pub fn kind(flags: u32) -> &'static str {
    const SPIN: u32 = 1;
    const READ: u32 = 2;
    const WRITE: u32 = 4;
    const RT: u32 = 8;
    const PERCPU: u32 = 16;
    const MUTEX: u32 = 32;
    let rw = |read: &'static str, write: &'static str, other: &'static str| {
        if flags & READ != 0 {
            read
        } else if flags & WRITE != 0 {
            write
        } else {
            other
        }
    };
    if flags & RT != 0 {
        "rt-mutex"
    } else if flags & MUTEX != 0 {
        "mutex"
    } else if flags & PERCPU != 0 {
        rw("percpu-rwsem-read", "percpu-rwsem-write", "percpu-rwsem")
    } else if flags & SPIN != 0 {
        rw("rwlock-read", "rwlock-write", "spinlock")
    } else {
        rw("rwsem-read", "rwsem-write", "lock")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(count: u64, total_ns: u64, max_ns: u64, pid: u32) -> Stat {
        Stat {
            count,
            total_ns,
            max_ns,
            max_lock: 0xffff888100a0b0c0,
            max_pid: pid,
            max_tid: pid + 1,
            max_comm: b"lock-work".to_vec(),
        }
    }

    fn rows() -> Vec<Row> {
        vec![
            Row {
                who: Who::Stack(vec![
                    "pipe_write+0x43".into(),
                    "vfs_write+0x2b1".into(),
                    "ksys_write+0x6f".into(),
                ]),
                kind: "mutex",
                stat: stat(5, 6_100, 2_400, 100),
                lock_name: None,
                cgroup: None,
            },
            Row {
                who: Who::Stack(vec!["cgroup_mkdir+0x1e".into()]),
                kind: "mutex",
                stat: stat(2, 3_000_000, 2_500_000, 200),
                lock_name: Some("cgroup_mutex".into()),
                cgroup: None,
            },
        ]
    }

    fn text(table: Table, rows: &[Row], layout: Layout) -> String {
        let mut out = Vec::new();
        print(&mut out, table, rows, layout).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn times_are_libbpf_tools() {
        assert_eq!(time(999), "999 ns");
        assert_eq!(time(1_000), "1.0 us");
        assert_eq!(time(2_450_000), "2.5 ms");
        assert_eq!(time(3_000_000_000), "3.0 s ");
        assert_eq!(time(90_000_000_000), "1.5 m ");
        assert_eq!(time(7_200_000_000_000), "2.0 h ");
    }

    #[test]
    fn one_line_per_caller_under_one_header() {
        let mut r = rows();
        sort(&mut r, SortBy::Count);
        let layout = Layout {
            stack_lines: 1,
            per_thread: false,
            max_rows: 10,
            containers: false,
        };
        assert_eq!(
            text(Table::Wait, &r, layout),
            "
                               Caller  Avg Wait    Count   Max Wait   Total Wait
                      pipe_write+0x43    1.2 us        5     2.4 us       6.1 us
                    cgroup_mkdir+0x1e    1.5 ms        2     2.5 ms       3.0 ms
"
        );
        sort(&mut r, SortBy::Max);
        let one = Layout {
            max_rows: 1,
            ..layout
        };
        assert!(text(Table::Hold, &r, one).contains(
            "  Avg Hold    Count   Max Hold   Total Hold\n                    cgroup_mkdir+0x1e"
        ));
        assert_eq!(text(Table::Hold, &r, one).lines().count(), 3);
    }

    #[test]
    fn stacks_and_the_longest_under_each_row() {
        let r = rows();
        let layout = Layout {
            stack_lines: 2,
            per_thread: false,
            max_rows: 10,
            containers: false,
        };
        assert_eq!(
            text(Table::Wait, &r, layout),
            "
                               Caller  Avg Wait    Count   Max Wait   Total Wait
                      pipe_write+0x43    1.2 us        5     2.4 us       6.1 us
                      vfs_write+0x2b1
                              Max PID 100, COMM lock-work, Lock no-ksym (0xffff888100a0b0c0)

                               Caller  Avg Wait    Count   Max Wait   Total Wait
                    cgroup_mkdir+0x1e    1.5 ms        2     2.5 ms       3.0 ms
                              Max PID 200, COMM lock-work, Lock cgroup_mutex (0xffff888100a0b0c0)
"
        );
    }

    #[test]
    fn threads_in_per_thread_tables() {
        let r = vec![Row {
            who: Who::Thread {
                tid: 4321,
                comm: b"lock\x1bwork".to_vec(),
            },
            kind: "rwsem-write",
            stat: stat(3, 3_000, 1_500, 4320),
            lock_name: None,
            cgroup: None,
        }];
        let layout = Layout {
            stack_lines: 1,
            per_thread: true,
            max_rows: 10,
            containers: false,
        };
        assert_eq!(
            text(Table::Hold, &r, layout),
            "
                Tid              Comm  Avg Hold    Count   Max Hold   Total Hold
               4321      lock\\x1bwork    1.0 us        3     1.5 us       3.0 us
"
        );
        let v = json(Table::Hold, &r[0], "12:00:00");
        assert_eq!(v["tid"], 4321);
        assert_eq!(v["comm"], "lock\\x1bwork");
        assert_eq!(v["table"], "hold");
        assert_eq!(v["kind"], "rwsem-write");
        assert!(v.get("caller").is_none());
    }

    #[test]
    fn containers_in_a_last_column() {
        let mut r = rows();
        r.truncate(1);
        r[0].cgroup = Some((4242, None));
        let layout = Layout {
            stack_lines: 1,
            per_thread: false,
            max_rows: 10,
            containers: true,
        };
        assert_eq!(
            text(Table::Wait, &r, layout),
            "
                               Caller  Avg Wait    Count   Max Wait   Total Wait  CONTAINER
                      pipe_write+0x43    1.2 us        5     2.4 us       6.1 us  cgroup 4242
"
        );
        let v = json(Table::Wait, &r[0], "12:00:00");
        assert_eq!(v["cgroup_id"], 4242);
    }

    #[test]
    fn json_names_the_caller_its_stack_and_the_lock() {
        let r = rows();
        let v = json(Table::Wait, &r[1], "12:00:00");
        assert_eq!(v["caller"], "cgroup_mkdir+0x1e");
        assert_eq!(v["stack"], json!(["cgroup_mkdir+0x1e"]));
        assert_eq!(v["count"], 2);
        assert_eq!(v["avg_ns"], 1_500_000);
        assert_eq!(v["max_lock"], "0xffff888100a0b0c0");
        assert_eq!(v["max_lock_name"], "cgroup_mutex");
        assert_eq!(v["max_pid"], 200);
        assert_eq!(v["max_tid"], 201);
    }

    #[test]
    fn merging_keeps_the_longest_and_its_task() {
        let mut a = stat(5, 6_100, 2_400, 100);
        a.merge(&stat(2, 3_000_000, 2_500_000, 200));
        assert_eq!(
            (a.count, a.total_ns, a.max_ns, a.max_pid),
            (7, 3_006_100, 2_500_000, 200)
        );
        a.merge(&stat(1, 10, 10, 300));
        assert_eq!((a.count, a.max_pid), (8, 200));
        let mut empty = Stat::default();
        empty.merge(&stat(1, 10, 0, 300));
        assert_eq!(empty.max_pid, 300);
    }

    #[test]
    fn sort_fields_parse_as_libbpf_tools_takes_them() {
        assert_eq!(parse_sort("acq_count"), Ok((Some(SortBy::Count), None)));
        assert_eq!(
            parse_sort("acq_total,hld_count"),
            Ok((Some(SortBy::Total), Some(SortBy::Count)))
        );
        assert_eq!(parse_sort("hld_max"), Ok((None, Some(SortBy::Max))));
        for bad in [
            "",
            "acq",
            "acq_",
            "max",
            "acq_min",
            "foo_max",
            "acq_max,acq_count",
        ] {
            assert!(parse_sort(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn lock_kinds_from_the_flags() {
        assert_eq!(kind(32), "mutex");
        assert_eq!(kind(32 | 1), "mutex");
        assert_eq!(kind(1), "spinlock");
        assert_eq!(kind(1 | 2), "rwlock-read");
        assert_eq!(kind(2), "rwsem-read");
        assert_eq!(kind(4), "rwsem-write");
        assert_eq!(kind(16 | 2), "percpu-rwsem-read");
        assert_eq!(kind(8 | 32), "rt-mutex");
    }
}
