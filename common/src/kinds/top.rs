//! The top tools' kind (biotop, filetop, tcptop), a pipeline the lifecycle
//! drives: every interval (and the part interval at the end) the tool hands
//! over its rows, drained from the kernel and merged where the kernel keeps
//! several entries for one row ([`crate::run::lifecycle::Tool::top_rows`]);
//! the kind sorts them by the tool's key (largest first, as BCC), cuts them
//! to `-r`, clears the screen or not (`-C`), prints the time and load
//! average, the header and the rows, or JSON lines with the interval's
//! `time`. A tool's own part is its row type, its columns and its order.

use std::cmp::Ordering;
use std::io::{self, IsTerminal, Write};

use anyhow::Result;

use crate::cli::TopArgs;
use crate::kernel::cgroups::{Names, Resolver};
use crate::kinds::event::{Column, InCgroup, Table};
use crate::output::Out;
use crate::run::lifecycle::Schedule;

/// What a top tool is.
pub struct Spec<'a> {
    pub args: &'a TopArgs,
    pub json: bool,
    /// The time and load average line above the table (tcptop -S: none).
    pub summary: bool,
}

/// A row as its table reads it: the tool's row and the interval's time.
pub struct Timed<R> {
    pub time: String,
    pub row: R,
}

/// A row's cgroup, for `--containers`: the id the kernel kept with the
/// entry, and its names.
#[derive(Default)]
pub struct Cgroup {
    pub id: u64,
    pub names: Option<std::rc::Rc<Names>>,
}

/// Names rows' cgroups when `--containers` asked for them (a cgroup's names
/// kept once seen).
pub struct Cgroups(Option<Resolver>);

impl Cgroups {
    pub fn new(on: bool) -> Cgroups {
        Cgroups(on.then(Resolver::default))
    }

    /// The cgroup of a row whose kernel entry holds `id`.
    pub fn of(&mut self, id: u64) -> Cgroup {
        Cgroup {
            id,
            names: self.0.as_mut().and_then(|r| r.names(id)),
        }
    }
}

impl<R: AsRef<Cgroup>> InCgroup for Timed<R> {
    fn cgroup_id(&self) -> u64 {
        self.row.as_ref().id
    }

    fn names(&self) -> Option<&Names> {
        self.row.as_ref().names.as_deref()
    }
}

/// A top tool's table: the interval's `time` and the row's `cgroup_id`
/// first (JSON only), then the tool's columns.
pub fn table<R: AsRef<Cgroup>>(json: bool) -> Table<Timed<R>> {
    Table::new(json)
        .column(
            false,
            Column::json("time", |t: &Timed<R>| t.time.as_str().into()),
        )
        .column(
            false,
            Column::json("cgroup_id", |t: &Timed<R>| t.row.as_ref().id.into()),
        )
}

/// How two rows compare: the larger first.
pub type Order<'t, R> = Box<dyn Fn(&R, &R) -> Ordering + 't>;

/// One interval's rows, on their way to the screen.
pub struct Rows<'t, R> {
    pub rows: Vec<R>,
    /// Largest first.
    pub order: Order<'t, R>,
    /// One table, or one per group of rows (tcptop: IPv4, then IPv6), each
    /// printed when it has rows, a later one after a blank line.
    pub tables: &'t [Table<Timed<R>>],
    /// The index in `tables` of a row's table.
    pub group: fn(&R) -> usize,
}

impl<'t, R> Rows<'t, R> {
    /// The rows of one table, in `order`.
    pub fn new(
        rows: Vec<R>,
        table: &'t Table<Timed<R>>,
        order: impl Fn(&R, &R) -> Ordering + 't,
    ) -> Self {
        Rows {
            rows,
            order: Box::new(order),
            tables: std::slice::from_ref(table),
            group: |_| 0,
        }
    }
}

/// [`Rows`] of any row type, as the lifecycle holds them.
pub trait Print {
    /// Sorts, cuts to `max` and prints the rows under their headers.
    fn print(self: Box<Self>, out: &mut Out, time: &str, max: usize, json: bool) -> io::Result<()>;
}

impl<R> Print for Rows<'_, R> {
    fn print(self: Box<Self>, out: &mut Out, time: &str, max: usize, json: bool) -> io::Result<()> {
        let Rows {
            mut rows,
            order,
            tables,
            group,
        } = *self;
        rows.sort_by(|a, b| order(a, b));
        rows.truncate(max);
        let mut groups: Vec<Vec<R>> = tables.iter().map(|_| Vec::new()).collect();
        for row in rows {
            let g = group(&row).min(tables.len().saturating_sub(1));
            if let Some(rows) = groups.get_mut(g) {
                rows.push(row);
            }
        }
        for (i, (table, rows)) in tables.iter().zip(groups).enumerate() {
            // One table: its header always; several: each that has rows,
            // a later one after a blank line (BCC's tcptop).
            if !json && (tables.len() == 1 || !rows.is_empty()) {
                let gap = if i > 0 { "\n" } else { "" };
                writeln!(out, "{gap}{}", table.header())?;
            }
            for row in rows {
                let timed = Timed {
                    time: time.to_owned(),
                    row,
                };
                table.row(out, &timed)?;
            }
        }
        Ok(())
    }
}

/// A top tool's pipeline.
pub struct Top {
    clear: bool,
    json: bool,
    summary: bool,
    max: usize,
}

impl Top {
    pub fn open(spec: &Spec) -> Top {
        Top {
            clear: !spec.args.noclear && !spec.json && io::stdout().is_terminal(),
            json: spec.json,
            summary: spec.summary,
            max: usize::try_from(spec.args.rows).unwrap_or(usize::MAX),
        }
    }

    /// One interval's screen.
    pub fn report(&self, out: &mut Out, rows: Box<dyn Print + '_>) -> Result<()> {
        let time = crate::output::now_hms();
        if !self.json {
            if self.clear {
                out.write_all(b"\x1b[H\x1b[2J")?;
            } else {
                out.write_all(b"\n")?;
            }
            if self.summary {
                let loadavg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
                writeln!(out, "{time:<8} loadavg: {}\n", loadavg.trim_end())?;
            }
        }
        rows.print(out, &time, self.max, self.json)?;
        out.flush()?;
        Ok(())
    }
}

impl From<&Spec<'_>> for Schedule {
    fn from(spec: &Spec) -> Schedule {
        Schedule::from(&spec.args.every)
    }
}
