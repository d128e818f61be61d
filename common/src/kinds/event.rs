//! The event tools' kind: columns declared once, from which the header,
//! each text row (padded, escaped) and each JSON object follow.
//!
//! A column reads its cell from the tool's state `E` (the tool itself,
//! holding the current event), so only the cells of the mode in use are
//! made: text columns for a table, JSON keys for `--json`.
//!
//! Every record starts with the same header (`struct task_header`,
//! bpf/include/task.h): [`Stamps::read`] decodes it, and [`columns`]
//! declares its columns (TIME, TIME(s), PID, TID, COMM, the cgroup id) once.

use std::borrow::Cow;
use std::io::{self, Write};

use std::rc::Rc;

use crate::kernel::cgroups::{Names, Resolver};
use crate::output::{c_bytes, escape, Clock};

/// The head of every event tool's record: bpf/include/task.h's
/// `struct task_header`, the record's first member.
pub type Header = crate::skel::types::task_header;

// SAFETY: a repr(C) struct of integers and a byte array, valid for any bytes.
unsafe impl plain::Plain for Header {}

/// Marks a tool's record type as plain bytes and checks, at compile time,
/// that it starts with the shared header (a member `task` at offset 0 of
/// the header's size): `common::event_record!(types::event, types::task_header);`
#[macro_export]
macro_rules! event_record {
    ($record:ty, $header:ty) => {
        // SAFETY: a repr(C) struct of integers and byte arrays (the
        // generated skeleton type), valid for any bytes.
        unsafe impl plain::Plain for $record {}
        const _: () = assert!(
            ::std::mem::offset_of!($record, task) == 0
                && ::std::mem::size_of::<$header>()
                    == ::std::mem::size_of::<$crate::kinds::event::Header>()
        );
    };
}

/// The run's view of its records' headers: the clock that turns their
/// kernel times into wall-clock and elapsed times, the first record's time
/// (BCC's "seconds since the first event" columns) and the current header.
pub struct Stamps {
    pub clock: Clock,
    first_ns: Option<u64>,
    head: Header,
    /// With `--containers`: names for the records' cgroups, and the
    /// current record's.
    resolver: Option<Resolver>,
    names: Option<Rc<Names>>,
    names_of: u64,
}

impl Default for Stamps {
    fn default() -> Self {
        Stamps::start()
    }
}

impl Stamps {
    /// Times count from now.
    pub fn start() -> Stamps {
        Stamps {
            clock: Clock::start(),
            first_ns: None,
            head: Header::default(),
            resolver: None,
            names: None,
            names_of: 0,
        }
    }

    /// Names each record's cgroup (container, pod, unit) when `on`.
    pub fn containers(mut self, on: bool) -> Stamps {
        self.resolver = on.then(Resolver::default);
        self
    }

    /// Decodes the header at the front of a record (what the kernel sent).
    pub fn read(&mut self, record: &[u8]) -> &Header {
        crate::kernel::maps::copy_record(&mut self.head, record);
        self.first_ns.get_or_insert(self.head.ts_ns);
        if let Some(r) = &mut self.resolver {
            // Events come in runs from one cgroup: its names are kept.
            let id = self.head.cgroup_id;
            if self.names.is_none() || self.names_of != id {
                self.names = r.names(id);
                self.names_of = id;
            }
        }
        &self.head
    }

    /// The current record's cgroup names (with `--containers`; None for a
    /// cgroup gone before it could be looked up).
    pub fn names(&self) -> Option<&Names> {
        self.names.as_deref()
    }

    /// The current record's header.
    pub fn head(&self) -> &Header {
        &self.head
    }

    /// Seconds from the start of tracing to the current record.
    pub fn elapsed(&self) -> f64 {
        self.clock.elapsed(self.head.ts_ns)
    }

    /// Seconds from the first record to the current one.
    pub fn since_first(&self) -> f64 {
        let first = self.first_ns.unwrap_or(self.head.ts_ns);
        self.head.ts_ns.saturating_sub(first) as f64 / 1e9
    }

    /// The current record's wall-clock time, `HH:MM:SS`.
    pub fn hms(&self) -> String {
        self.clock.hms(self.head.ts_ns)
    }
}

/// An event tool's current record, as the kernel sent it, with the run's
/// [`Stamps`]: the tool's columns read its fields through `Deref`
/// (`t.event.pid`), the shared ones its header through [`Stamped`].
pub struct Record<R> {
    record: Box<R>,
    stamps: Stamps,
}

impl<R: plain::Plain + Default> Record<R> {
    /// Times count from now; `containers`: cgroups are named (`--containers`).
    pub fn new(containers: bool) -> Record<R> {
        Record {
            record: Box::default(),
            stamps: Stamps::start().containers(containers),
        }
    }

    /// Takes the next record: its bytes, and its header decoded.
    pub fn read(&mut self, data: &[u8]) {
        crate::kernel::maps::copy_record(&mut *self.record, data);
        self.stamps.read(data);
    }
}

impl<R> Record<R> {
    pub fn stamps(&self) -> &Stamps {
        &self.stamps
    }
}

impl<R> std::ops::Deref for Record<R> {
    type Target = R;
    fn deref(&self) -> &R {
        &self.record
    }
}

impl<R> std::ops::DerefMut for Record<R> {
    fn deref_mut(&mut self) -> &mut R {
        &mut self.record
    }
}

/// The event kind's part of a tool's `impl Tool`, over its fields `table`
/// and `event` (a [`Record`]): `table()`, and `event()` that takes each
/// record and prints its row. `common::event_kind!(table)`: `table()`
/// alone, for a tool whose `event()` does more.
#[macro_export]
macro_rules! event_kind {
    () => {
        $crate::event_kind!(table);

        fn event(&mut self, data: &[u8], out: &mut $crate::output::Out) -> ::std::io::Result<()> {
            self.event.read(data);
            self.table.row(out, self)
        }
    };
    (table) => {
        fn table(&self) -> Option<&$crate::kinds::event::Table<Self>> {
            Some(&self.table)
        }
    };
}

/// Makes an event tool [`Stamped`] by its [`Record`], the field `event`:
/// `common::stamped_by_record!(Opensnoop);`
#[macro_export]
macro_rules! stamped_by_record {
    ($tool:ty) => {
        impl $crate::kinds::event::Stamped for $tool {
            fn stamps(&self) -> &$crate::kinds::event::Stamps {
                self.event.stamps()
            }
        }

        impl $crate::kinds::event::InCgroup for $tool {
            fn cgroup_id(&self) -> u64 {
                self.event.stamps().head().cgroup_id
            }

            fn names(&self) -> Option<&$crate::kernel::cgroups::Names> {
                self.event.stamps().names()
            }

            fn ns_pid(&self) -> Option<u32> {
                Some(self.event.stamps().head().ns_pid).filter(|p| *p != 0)
            }
        }
    };
}

/// A tool whose records carry the shared header: its columns read it here.
pub trait Stamped {
    fn stamps(&self) -> &Stamps;
}

/// What the container columns read: a cgroup v2 id, and its names (with
/// `--containers`; None for a cgroup gone before it could be looked up).
/// An event tool's from its record's header, a top tool's row's from the
/// kernel's entry.
pub trait InCgroup {
    fn cgroup_id(&self) -> u64;
    fn names(&self) -> Option<&Names>;
    /// The process's id in its own pid namespace, where the kernel gave it.
    fn ns_pid(&self) -> Option<u32> {
        None
    }
}

/// The header's columns, declared once for every event tool. Widths and
/// decimals follow each tool's BCC layout, so they are arguments.
pub mod columns {
    use super::{c_bytes, Cell, Column, InCgroup, Stamped};
    use crate::kernel::cgroups::{self, Names};

    /// `TIME`: wall-clock `HH:MM:SS` (BCC's `-T`); JSON `time`.
    pub const fn time<E: Stamped>() -> Column<E> {
        Column::new("TIME", 8, "time", |t| t.stamps().hms().into())
    }

    /// JSON `ts`: seconds since tracing started, to the microsecond.
    pub const fn ts<E: Stamped>() -> Column<E> {
        Column::json("ts", |t| Cell::Float(t.stamps().elapsed(), 6))
    }

    /// `TIME(s)`: seconds since tracing started, with `D` decimals; JSON `ts`.
    pub const fn elapsed<E: Stamped, const D: usize>(width: usize) -> Column<E> {
        Column::new("TIME(s)", width, "ts", |t| {
            Cell::Float(t.stamps().elapsed(), D)
        })
    }

    /// `TIME(s)`: seconds since the first event shown, with `D` decimals;
    /// text only (JSON has `ts`).
    pub const fn since_first<E: Stamped, const D: usize>(width: usize) -> Column<E> {
        Column::new("TIME(s)", width, "", |t| {
            Cell::Float(t.stamps().since_first(), D)
        })
    }

    /// `PID` (the process, the kernel's tgid); JSON `pid`.
    pub const fn pid<E: Stamped>(width: usize) -> Column<E> {
        Column::new("PID", width, "pid", |t| t.stamps().head().pid.into())
    }

    /// `TID` (the thread); JSON `tid`.
    pub const fn tid<E: Stamped>(width: usize) -> Column<E> {
        Column::new("TID", width, "tid", |t| t.stamps().head().tid.into())
    }

    /// The task's name under `header` (`COMM`, or BCC's `PCOMM`); JSON `comm`.
    pub const fn comm<E: Stamped>(header: &'static str, width: usize) -> Column<E> {
        Column::new(header, width, "comm", |t| {
            Cell::bytes(c_bytes(&t.stamps().head().comm))
        })
    }

    /// JSON `cgroup_id`: the task's cgroup v2 id (its directory's inode).
    pub const fn cgroup_id<E: Stamped>() -> Column<E> {
        Column::json("cgroup_id", |t| t.stamps().head().cgroup_id.into())
    }

    /// `--containers`: `CONTAINER` (the container's id, else the systemd
    /// unit, else the cgroup's path: [`cgroups::shown`]), and in JSON the
    /// keys that name the cgroup and the namespaced pid, where known.
    pub const fn containers<E: InCgroup>() -> [Column<E>; 6] {
        fn key<'a>(n: Option<&'a Names>, key: &str) -> Cell<'a> {
            n.and_then(|n| n.keys().find(|(k, _)| *k == key))
                .map_or(Cell::Null, |(_, v)| v.into())
        }
        [
            Column::new("CONTAINER", 12, "", |t| {
                cgroups::shown(t.cgroup_id(), t.names()).into()
            }),
            Column::json("cgroup", |t: &E| key(t.names(), "cgroup")).optional(),
            Column::json("container", |t: &E| key(t.names(), "container")).optional(),
            Column::json("pod", |t: &E| key(t.names(), "pod")).optional(),
            Column::json("unit", |t: &E| key(t.names(), "unit")).optional(),
            Column::json("ns_pid", |t: &E| t.ns_pid().map_or(Cell::Null, Cell::from)).optional(),
        ]
    }
}

/// One cell's value.
pub enum Cell<'a> {
    Int(i64),
    Uint(u64),
    Bool(bool),
    /// Shown with `decimals` digits after the point.
    Float(f64, usize),
    /// Shown in octal, zero-padded to `digits`; a number in JSON.
    Octal(u64, usize),
    /// From the traced system: escaped in text, UTF-8 (lossy) in JSON.
    Bytes(Cow<'a, [u8]>),
    /// Made by the tool from safe parts (addresses, names, times).
    Text(Cow<'a, str>),
    /// A JSON array of strings from the traced system (arguments).
    List(Vec<&'a [u8]>),
    /// Not known: `-` in text, null in JSON.
    Null,
}

impl Cell<'_> {
    /// Bytes from the traced system, borrowed.
    pub fn bytes(b: &[u8]) -> Cell<'_> {
        Cell::Bytes(Cow::Borrowed(b))
    }

    /// A stack's frames as a JSON list where the option asked for them
    /// (`-K`, `-U`), else null (left out of an optional column).
    pub fn frames(wanted: bool, labels: &[String]) -> Cell<'_> {
        if !wanted {
            return Cell::Null;
        }
        Cell::List(labels.iter().map(|l| l.as_bytes()).collect())
    }
}

/// Numbers and flags as cells: `t.event.pid.into()`.
macro_rules! cell_from {
    ($($t:ty => $variant:ident),*) => {
        $(impl From<$t> for Cell<'_> {
            fn from(v: $t) -> Self {
                Cell::$variant(v.into())
            }
        })*
    };
}

cell_from!(u8 => Uint, u16 => Uint, u32 => Uint, u64 => Uint, i32 => Int, i64 => Int, bool => Bool);

impl From<String> for Cell<'_> {
    fn from(v: String) -> Self {
        Cell::Text(Cow::Owned(v))
    }
}

impl<'a> From<Cow<'a, str>> for Cell<'a> {
    fn from(v: Cow<'a, str>) -> Self {
        Cell::Text(v)
    }
}

impl<'a> From<&'a str> for Cell<'a> {
    fn from(v: &'a str) -> Self {
        Cell::Text(Cow::Borrowed(v))
    }
}

/// A column: its header and width in the table, its key in JSON (either
/// may be absent), and where its value comes from.
pub struct Column<E> {
    /// `""`: JSON only.
    pub header: &'static str,
    /// Padded to this width; 0 for the last, unpadded column.
    pub width: usize,
    /// Right-aligned (counts, return values), else left.
    pub right: bool,
    /// `""`: text only.
    pub key: &'static str,
    /// Left out of a JSON object when not known (its cell `Null`).
    pub optional: bool,
    pub value: for<'a> fn(&'a E) -> Cell<'a>,
}

impl<E> Clone for Column<E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E> Copy for Column<E> {}

impl<E> Column<E> {
    /// A left-aligned column in both text and JSON.
    pub const fn new(
        header: &'static str,
        width: usize,
        key: &'static str,
        value: for<'a> fn(&'a E) -> Cell<'a>,
    ) -> Column<E> {
        Column {
            header,
            width,
            right: false,
            key,
            optional: false,
            value,
        }
    }

    /// A right-aligned column (counts, return values).
    pub const fn right(
        header: &'static str,
        width: usize,
        key: &'static str,
        value: for<'a> fn(&'a E) -> Cell<'a>,
    ) -> Column<E> {
        let mut c = Column::new(header, width, key, value);
        c.right = true;
        c
    }

    /// In JSON only.
    pub const fn json(key: &'static str, value: for<'a> fn(&'a E) -> Cell<'a>) -> Column<E> {
        Column::new("", 0, key, value)
    }

    /// This column in JSON only (a shared column a tool does not show).
    pub const fn json_only(mut self) -> Column<E> {
        self.header = "";
        self.width = 0;
        self
    }

    /// Its JSON key left out where the value is not known, rather than
    /// null (a cgroup's names: a host process has no container).
    pub const fn optional(mut self) -> Column<E> {
        self.optional = true;
        self
    }

    /// This column in the text only (its JSON key dropped).
    pub const fn text_only(mut self) -> Column<E> {
        self.key = "";
        self
    }

    /// This column right-aligned (a shared column where a tool's BCC
    /// layout aligns it so).
    pub const fn right_aligned(mut self) -> Column<E> {
        self.right = true;
        self
    }

    /// This column under another header (`C-PID` for `PID`).
    pub const fn titled(mut self, header: &'static str) -> Column<E> {
        self.header = header;
        self
    }
}

/// The columns a run shows: text columns by the options, every JSON key.
pub struct Table<E> {
    json: bool,
    /// Text columns comma-separated, unpadded, quoted where needed (BCC's
    /// `-j`/`-s` CSV modes).
    csv: bool,
    text: Vec<Column<E>>,
    keys: Vec<Column<E>>,
    /// A row is made here, then written to stdout in one call: many small
    /// writes through `Out` cost more than the formatting.
    buf: std::cell::RefCell<Vec<u8>>,
}

impl<E> Table<E> {
    pub fn new(json: bool) -> Table<E> {
        Table {
            json,
            csv: false,
            text: Vec::new(),
            keys: Vec::new(),
            buf: std::cell::RefCell::new(Vec::with_capacity(512)),
        }
    }

    /// A table whose text columns are written as CSV (RFC 4180): the
    /// header the columns' names, a field quoted when it holds a comma, a
    /// quote or a line break.
    pub fn csv() -> Table<E> {
        let mut t = Table::new(false);
        t.csv = true;
        t
    }

    /// Adds a column, in the text table only when `shown` (its JSON key
    /// always).
    pub fn column(mut self, shown: bool, c: Column<E>) -> Table<E> {
        if !c.key.is_empty() {
            self.keys.push(c);
        }
        if shown && !c.header.is_empty() {
            self.text.push(c);
        }
        self
    }

    /// `--containers`: the CONTAINER column first in the text, and the
    /// cgroup's names in JSON ([`columns::containers`]).
    pub fn containers(mut self, on: bool) -> Table<E>
    where
        E: InCgroup,
    {
        if on {
            let [label, json @ ..] = columns::containers::<E>();
            self.text.insert(0, label);
            self.keys.extend(json);
        }
        self
    }

    /// Adds columns that are always shown.
    pub fn columns<const N: usize>(self, cs: [Column<E>; N]) -> Table<E> {
        cs.into_iter().fold(self, |t, c| t.column(true, c))
    }

    /// The table's header line (no newline).
    pub fn header(&self) -> String {
        let mut h = Vec::new();
        // Into a Vec, which takes every write; headers are &'static str.
        let _ = self.line(&mut h, |c| Cell::Text(Cow::Borrowed(c.header)));
        String::from_utf8_lossy(&h).into_owned()
    }

    /// One event: a text row or a JSON object, and a newline.
    pub fn row(&self, out: &mut (impl Write + ?Sized), e: &E) -> io::Result<()> {
        let mut buf = self.buf.borrow_mut();
        buf.clear();
        if self.json {
            self.object(&mut buf, e)?;
        } else {
            self.line(&mut buf, |c| (c.value)(e))?;
        }
        buf.push(b'\n');
        out.write_all(&buf)
    }

    /// What [`Table::row`] writes for `e`, without its newline (trace's
    /// -A counts identical lines).
    pub fn render(&self, e: &E) -> io::Result<Vec<u8>> {
        let mut buf = Vec::new();
        if self.json {
            self.object(&mut buf, e)?;
        } else {
            self.line(&mut buf, |c| (c.value)(e))?;
        }
        Ok(buf)
    }

    fn line<'a>(
        &'a self,
        out: &mut Vec<u8>,
        cell: impl Fn(&'a Column<E>) -> Cell<'a>,
    ) -> io::Result<()> {
        if self.csv {
            for (i, c) in self.text.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_csv(out, &cell(c))?;
            }
            return Ok(());
        }
        let last = self.text.len().saturating_sub(1);
        for (i, c) in self.text.iter().enumerate() {
            let cell = cell(c);
            // An empty last cell adds no separator: no trailing blank.
            if i > 0 && !(i == last && cell.is_empty()) {
                out.write_all(b" ")?;
            }
            write_padded(out, &cell, c.width, c.right)?;
        }
        Ok(())
    }

    fn object(&self, out: &mut Vec<u8>, e: &E) -> io::Result<()> {
        out.write_all(b"{")?;
        let mut first = true;
        for c in &self.keys {
            let cell = (c.value)(e);
            if c.optional && matches!(cell, Cell::Null) {
                continue;
            }
            if !std::mem::take(&mut first) {
                out.write_all(b",")?;
            }
            crate::output::json_to_writer(&mut *out, c.key)?;
            out.write_all(b":")?;
            match cell {
                Cell::Int(v) => crate::output::json_to_writer(&mut *out, &v)?,
                Cell::Uint(v) | Cell::Octal(v, _) => crate::output::json_to_writer(&mut *out, &v)?,
                Cell::Bool(v) => crate::output::json_to_writer(&mut *out, &v)?,
                Cell::Float(v, _) => crate::output::json_to_writer(&mut *out, &v)?,
                Cell::Bytes(b) => {
                    crate::output::json_to_writer(&mut *out, &String::from_utf8_lossy(&b))?
                }
                Cell::Text(t) => crate::output::json_to_writer(&mut *out, &t)?,
                Cell::List(items) => {
                    let items: Vec<Cow<str>> =
                        items.iter().map(|b| String::from_utf8_lossy(b)).collect();
                    crate::output::json_to_writer(&mut *out, &items)?
                }
                Cell::Null => out.write_all(b"null")?,
            }
        }
        out.write_all(b"}")
    }
}

/// A cell as table text, padded to `w` (0: unpadded): numbers formatted in
/// place, no allocation per cell but for text that needs escaping.
fn write_padded(out: &mut Vec<u8>, cell: &Cell, w: usize, right: bool) -> io::Result<()> {
    macro_rules! pad {
        ($fmt_left:literal, $fmt_right:literal, $($arg:tt)*) => {
            if right {
                write!(out, $fmt_right, $($arg)*)
            } else {
                write!(out, $fmt_left, $($arg)*)
            }
        };
    }
    match cell {
        Cell::Int(v) => pad!("{:<w$}", "{:>w$}", v, w = w),
        Cell::Uint(v) => pad!("{:<w$}", "{:>w$}", v, w = w),
        Cell::Bool(v) => pad!("{:<w$}", "{:>w$}", v, w = w),
        Cell::Float(v, d) => pad!("{:<w$.d$}", "{:>w$.d$}", v, w = w, d = *d),
        Cell::Octal(v, d) => pad!("{:<w$}", "{:>w$}", format!("{v:0d$o}", d = *d), w = w),
        Cell::Bytes(b) => write_text(out, &escape(b), w, right),
        Cell::Text(t) => write_text(out, t, w, right),
        Cell::List(items) => {
            let line: Vec<Cow<str>> = items.iter().map(|b| escape(b)).collect();
            pad!("{:<w$}", "{:>w$}", line.join(" "), w = w)
        }
        Cell::Null => pad!("{:<w$}", "{:>w$}", "-", w = w),
    }
}

/// Text padded to `w` characters by hand: `write!` with a width goes
/// through the formatter for every cell, which costs more per event than
/// the rest of a row.
fn write_text(out: &mut Vec<u8>, t: &str, w: usize, right: bool) -> io::Result<()> {
    let chars = if t.is_ascii() {
        t.len()
    } else {
        t.chars().count()
    };
    let fill = w.saturating_sub(chars);
    if right {
        out.resize(out.len() + fill, b' ');
    }
    out.extend_from_slice(t.as_bytes());
    if !right {
        out.resize(out.len() + fill, b' ');
    }
    Ok(())
}

/// A cell as a CSV field: numbers as in the table, text escaped as in the
/// table and quoted when it must be.
fn write_csv(out: &mut Vec<u8>, cell: &Cell) -> io::Result<()> {
    let text: Cow<str> = match cell {
        Cell::Bytes(b) => escape(b),
        Cell::Text(t) => Cow::Borrowed(t.as_ref()),
        Cell::List(items) => {
            let line: Vec<Cow<str>> = items.iter().map(|b| escape(b)).collect();
            Cow::Owned(line.join(" "))
        }
        Cell::Null => return Ok(()),
        number => return write_padded(out, number, 0, false),
    };
    if text.contains([',', '"', '\n', '\r']) {
        write!(out, "\"{}\"", text.replace('"', "\"\""))
    } else {
        out.write_all(text.as_bytes())
    }
}

impl Cell<'_> {
    fn is_empty(&self) -> bool {
        match self {
            Cell::Bytes(b) => b.is_empty(),
            Cell::Text(t) => t.is_empty(),
            Cell::List(l) => l.is_empty(),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Ev {
        pid: u32,
        comm: Vec<u8>,
        ret: i32,
    }

    fn table(json: bool, uid: bool) -> Table<Ev> {
        Table::new(json)
            .column(uid, Column::new("UID", 6, "uid", |_| Cell::Uint(0)))
            .columns([
                Column::new("PID", 7, "pid", |e: &Ev| e.pid.into()),
                Column::new("COMM", 16, "comm", |e: &Ev| Cell::bytes(&e.comm)),
                Column::right("RET", 3, "ret", |e: &Ev| e.ret.into()),
                Column::new("PATH", 0, "", |_| "".into()),
            ])
    }

    #[test]
    fn csv_rows_are_unpadded_and_quoted_where_needed() {
        let t = Table::<Ev>::csv().columns([
            Column::new("PID", 7, "", |e: &Ev| e.pid.into()),
            Column::new("COMM", 16, "", |e: &Ev| Cell::bytes(&e.comm)),
            Column::right("RET", 3, "", |e: &Ev| e.ret.into()),
        ]);
        assert_eq!(t.header(), "PID,COMM,RET");
        let mut v = Vec::new();
        let e = Ev {
            pid: 42,
            comm: b"a,\"b\"".to_vec(),
            ret: -2,
        };
        t.line(&mut v, |c| (c.value)(&e)).unwrap();
        assert_eq!(String::from_utf8(v).unwrap(), "42,\"a,\"\"b\"\"\",-2");
    }

    struct Headed(Stamps);

    impl Stamped for Headed {
        fn stamps(&self) -> &Stamps {
            &self.0
        }
    }

    /// A record as the kernel sends it: the header, then the tool's fields.
    fn record(ts_ns: u64, pid: u32, comm: &[u8]) -> Vec<u8> {
        let mut h = Header {
            ts_ns,
            cgroup_id: 4242,
            pid,
            tid: pid + 1,
            ..Header::default()
        };
        for (d, s) in h.comm.iter_mut().zip(comm) {
            *d = *s as i8;
        }
        // SAFETY: Header is Plain (repr(C) integers and bytes).
        let mut v = unsafe { plain::as_bytes(&h) }.to_vec();
        v.extend_from_slice(&[0xee; 8]);
        v
    }

    #[test]
    fn the_shared_header_is_decoded_once_and_its_columns_follow() {
        let table = |json| {
            Table::<Headed>::new(json).columns([
                columns::since_first::<_, 3>(8),
                columns::ts(),
                columns::pid(7),
                columns::tid(0).json_only(),
                columns::cgroup_id(),
                columns::comm("COMM", 0),
            ])
        };
        assert_eq!(table(false).header(), "TIME(s)  PID     COMM");
        let mut t = Headed(Stamps::start());
        t.0.read(&record(5_000_000_000, 7, b"first"));
        t.0.read(&record(6_250_000_000, 42, b"a\nb"));
        assert_eq!(t.0.head().cgroup_id, 4242);
        assert_eq!(t.0.since_first(), 1.25);
        let mut v = Vec::new();
        table(false).line(&mut v, |c| (c.value)(&t)).unwrap();
        assert_eq!(String::from_utf8(v).unwrap(), "1.250    42      a\\nb");
        let mut v = Vec::new();
        table(true).object(&mut v, &t).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&v).unwrap();
        assert_eq!(v["pid"], 42);
        assert_eq!(v["tid"], 43);
        assert_eq!(v["cgroup_id"], 4242);
        assert_eq!(v["comm"], "a\nb");
        assert!(v.get("TIME(s)").is_none() && v["ts"].is_number());
    }

    #[test]
    fn header_and_rows_follow_the_columns() {
        assert_eq!(
            table(false, false).header(),
            "PID     COMM             RET PATH"
        );
        assert_eq!(
            table(false, true).header(),
            "UID    PID     COMM             RET PATH"
        );
        let e = Ev {
            pid: 42,
            comm: b"a\nb".to_vec(),
            ret: -2,
        };
        let mut v = Vec::new();
        table(false, false).line(&mut v, |c| (c.value)(&e)).unwrap();
        // Escaped, padded, and no blank for the empty last cell.
        assert_eq!(
            String::from_utf8(v).unwrap(),
            "42      a\\nb              -2"
        );
    }
}
