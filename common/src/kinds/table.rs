//! The interval-table kind (biotop, filetop, tcptop, syscount, funccount): a
//! pipeline the lifecycle drives. Every interval (and the part interval at
//! the end) the tool hands over its rows
//! ([`crate::run::lifecycle::Tool::interval_rows`]): drained from the
//! kernel, or what each key added since the last report where the kernel
//! keeps running totals ([`Deltas`]). The kind sorts them by the tool's
//! order, cuts them to the tool's maximum, clears the screen or not, prints
//! the interval's heading (the time, BCC's `[HH:MM:SS]`, or the time and
//! load average), the header and the rows, or JSON lines with the
//! interval's `time`. A tool's own part is its row type, its columns and
//! its order. Where the tool has `--prometheus`/`--prom-file`, the kind
//! answers the scrapes and writes the file after each report with the
//! tool's counters ([`crate::run::lifecycle::Tool::interval_metrics`]).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::Hash;
use std::io::{self, IsTerminal, Write};

use anyhow::Result;

use crate::cli::{MetricsArgs, TopArgs};
use crate::export::prom::Exporter;
use crate::kernel::cgroups::{Names, Resolver};
use crate::kinds::event::{Column, InCgroup, Table};
use crate::output::Out;
use crate::run::schedule::{Schedule, When};

/// What an interval-table tool's tables are.
pub struct Spec<'a> {
    pub json: bool,
    /// What each interval's table starts with, in text.
    pub heading: Heading,
    /// Clear the screen before each table (where stdout is a terminal).
    pub clear: bool,
    /// The most rows a table shows, the first in the tool's order.
    pub max: usize,
    pub schedule: Schedule,
    /// A line after the last table (funccount's `Detaching...`), in text.
    pub last_line: Option<&'static str>,
    /// The banner, where the tool has not its own.
    pub banner: Option<String>,
    /// `--prometheus`/`--prom-file`, where the tool has them.
    pub metrics: Option<&'a MetricsArgs>,
}

impl<'a> Spec<'a> {
    /// A top tool's (`-C`, `-r`, `[interval] [count]`): the screen cleared,
    /// the time and load average above the table where `summary` (tcptop
    /// -S: none).
    pub fn top(args: &TopArgs, json: bool, summary: bool) -> Spec<'static> {
        Spec {
            json,
            heading: if summary {
                Heading::LoadAvg
            } else {
                Heading::Nothing
            },
            clear: !args.noclear,
            max: usize::try_from(args.rows).unwrap_or(usize::MAX),
            schedule: Schedule::from(&args.every),
            last_line: None,
            banner: Some(args.banner()),
            metrics: None,
        }
    }

    /// A line per interval under the header the banner printed (vfsstat,
    /// cachestat).
    pub fn lines(json: bool, schedule: Schedule, metrics: Option<&'a MetricsArgs>) -> Spec<'a> {
        Spec {
            json,
            heading: Heading::Lines,
            clear: false,
            max: 1,
            schedule,
            last_line: None,
            banner: None,
            metrics,
        }
    }
}

/// What precedes a table: a blank line (or a cleared screen), then this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heading {
    Nothing,
    /// `HH:MM:SS` on a line of its own (funccount -T).
    Time,
    /// `[HH:MM:SS]` (BCC's syscount).
    BracketedTime,
    /// `HH:MM:SS loadavg: …` and a blank line (BCC's top tools).
    LoadAvg,
    /// Nothing, not even a blank line, and no header: a line per interval
    /// under the header the banner printed once (vfsstat, cachestat).
    Lines,
    /// The line the rows carry ([`Rows::titled`]: cachetop's time, page
    /// cache size and order), right above the header.
    Title,
}

/// A row as its table reads it: the tool's row and the interval's time.
pub struct Timed<R> {
    pub time: String,
    pub row: R,
}

/// One interval of per-CPU counters (slots 0..N of a per-CPU array, each
/// summed over the CPUs): their growth over the interval and its length.
/// The rows of vfsstat and dcstat.
pub struct Rates<const N: usize> {
    pub counts: [u64; N],
    pub secs: f64,
}

impl<const N: usize> Rates<N> {
    /// Counter `i` per second over the interval.
    pub fn per_s(&self, i: usize) -> f64 {
        self.counts[i] as f64 / self.secs
    }
}

/// Reads per-CPU counters that only grow, each interval, as [`Rates`].
pub struct RateReader<const N: usize> {
    previous: [u64; N],
    since: std::time::Instant,
}

impl<const N: usize> Default for RateReader<N> {
    fn default() -> Self {
        RateReader {
            previous: [0; N],
            since: std::time::Instant::now(),
        }
    }
}

impl<const N: usize> RateReader<N> {
    /// The counters' growth in `map` since the last read (or the start),
    /// and the time that passed.
    pub fn read(&mut self, map: &dyn libbpf_rs::MapCore) -> Result<Rates<N>> {
        let mut counts = [0u64; N];
        for (i, c) in counts.iter_mut().enumerate() {
            let now = crate::kernel::maps::percpu_sum_at(map, i as u32)?;
            *c = now.saturating_sub(self.previous[i]);
            self.previous[i] = now;
        }
        let secs = self.since.elapsed().as_secs_f64().max(1e-3);
        self.since = std::time::Instant::now();
        Ok(Rates { counts, secs })
    }
}

/// Counter `I`'s columns: its rate per second under `header`, 8 wide
/// (rounded, or cut to a whole number where `CUT`, as BCC's dcstat prints
/// it); in JSON its count (`key`) and its rate (`rate`).
pub fn rate_columns<const N: usize, const I: usize, const CUT: bool>(
    header: &'static str,
    key: &'static str,
    rate: &'static str,
) -> [Column<Timed<Rates<N>>>; 3] {
    use crate::kinds::event::Cell;
    fn shown<const N: usize, const I: usize, const CUT: bool>(t: &Timed<Rates<N>>) -> Cell<'_> {
        let r = t.row.per_s(I);
        (if CUT { r.trunc() } else { r.round() } as u64).into()
    }
    [
        Column::right(header, 8, "", shown::<N, I, CUT>),
        Column::json(key, |t: &Timed<Rates<N>>| t.row.counts[I].into()),
        Column::json(rate, |t: &Timed<Rates<N>>| Cell::Float(t.row.per_s(I), 3)),
    ]
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

/// A top tool's row: the kernel's key and value (drained from its map),
/// the value's cgroup, and what the tool adds (`extra`: biotop's disk name).
pub struct Entry<K, V, X = ()> {
    pub key: K,
    pub value: V,
    pub cgroup: Cgroup,
    pub extra: X,
}

impl<K, V, X> AsRef<Cgroup> for Entry<K, V, X> {
    fn as_ref(&self) -> &Cgroup {
        &self.cgroup
    }
}

impl Cgroups {
    /// A top tool's rows from its map's entries, each entry's cgroup
    /// (`cgroup_of` its key and value: the kernel keeps it in either)
    /// named where --containers asked.
    pub fn entries<K, V: Copy, X: Default>(
        &mut self,
        entries: Vec<(K, Box<V>)>,
        cgroup_of: impl Fn(&K, &V) -> u64,
    ) -> Vec<Entry<K, V, X>> {
        entries
            .into_iter()
            .map(|(key, value)| Entry {
                cgroup: self.of(cgroup_of(&key, &value)),
                key,
                value: *value,
                extra: X::default(),
            })
            .collect()
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

/// An interval table: the interval's `time` first (JSON only), then the
/// tool's columns.
pub fn timed<R>(json: bool) -> Table<Timed<R>> {
    Table::new(json).column(
        false,
        Column::json("time", |t: &Timed<R>| t.time.as_str().into()),
    )
}

/// A top tool's table: the interval's `time` and the row's `cgroup_id`
/// first (JSON only), then the tool's columns.
pub fn top_table<R: AsRef<Cgroup>>(json: bool) -> Table<Timed<R>> {
    timed(json).column(
        false,
        Column::json("cgroup_id", |t: &Timed<R>| t.row.as_ref().id.into()),
    )
}

/// Counters the kernel keeps as running totals.
pub trait Counts: Copy + Default {
    /// What was added since `before`.
    fn since(self, before: Self) -> Self;
    /// Nothing was counted.
    fn is_zero(&self) -> bool;
}

impl Counts for u64 {
    fn since(self, before: u64) -> u64 {
        self.saturating_sub(before)
    }

    fn is_zero(&self) -> bool {
        *self == 0
    }
}

/// Each key's totals at the last report, for the tools whose kernel side
/// keeps running totals (per-CPU arrays are not drained): each report
/// shows what the interval added.
pub struct Deltas<K, C>(HashMap<K, C>);

impl<K, C> Default for Deltas<K, C> {
    fn default() -> Self {
        Deltas(HashMap::new())
    }
}

impl<K: Eq + Hash + Clone, C: Counts> Deltas<K, C> {
    /// What each key added since the last call (keys that added nothing
    /// left out); `totals` are remembered for the next.
    pub fn added(&mut self, totals: HashMap<K, C>) -> Vec<(K, C)> {
        let added = totals
            .iter()
            .map(|(k, c)| {
                (
                    k.clone(),
                    c.since(self.0.get(k).copied().unwrap_or_default()),
                )
            })
            .filter(|(_, c)| !c.is_zero())
            .collect();
        self.0 = totals;
        added
    }

    /// The totals given at the last report.
    pub fn totals(&self) -> &HashMap<K, C> {
        &self.0
    }
}

/// When a tool's counters are asked for (Tool::interval_metrics).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// Right after its rows were read for a report (--prom-file): the
    /// totals those rows were taken from will do.
    AfterRows,
    /// A scrape between reports: read them now.
    Scrape,
}

/// How two rows compare: the one to show first is the lesser.
pub type Order<'t, R> = Box<dyn Fn(&R, &R) -> Ordering + 't>;

/// One interval's rows, on their way to the screen.
pub struct Rows<'t, R> {
    pub rows: Vec<R>,
    pub order: Order<'t, R>,
    /// One table, or one per group of rows (tcptop: IPv4, then IPv6), each
    /// printed when it has rows, a later one after a blank line.
    pub tables: &'t [Table<Timed<R>>],
    /// The index in `tables` of a row's table.
    pub group: fn(&R) -> usize,
    /// The line above the header, where the heading is [`Heading::Title`].
    pub title: Option<String>,
}

impl<'t, R> Rows<'t, R> {
    /// One row: the interval's line.
    pub fn one(row: R, table: &'t Table<Timed<R>>) -> Self {
        Rows::new(vec![row], table, |_, _| Ordering::Equal)
    }

    /// The rows of one table, in `order` (the first shown the lesser).
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
            title: None,
        }
    }

    /// With `title` above the header ([`Heading::Title`]).
    pub fn titled(self, title: String) -> Self {
        Rows {
            title: Some(title),
            ..self
        }
    }
}

/// [`Rows`] of any row type, as the lifecycle holds them.
pub trait Print {
    /// Sorts, cuts to `max` and prints the rows, under their headers
    /// where `headers`.
    fn print(
        self: Box<Self>,
        out: &mut dyn Write,
        time: &str,
        max: usize,
        headers: bool,
    ) -> io::Result<()>;

    /// The line above the header ([`Heading::Title`]).
    fn title(&self) -> Option<&str>;
}

impl<R> Print for Rows<'_, R> {
    fn print(
        self: Box<Self>,
        out: &mut dyn Write,
        time: &str,
        max: usize,
        headers: bool,
    ) -> io::Result<()> {
        let Rows {
            mut rows,
            order,
            tables,
            group,
            title: _,
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
            if headers && (tables.len() == 1 || !rows.is_empty()) {
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

    fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }
}

/// An interval-table tool's pipeline.
pub struct IntervalTable {
    clear: bool,
    json: bool,
    heading: Heading,
    max: usize,
    last_line: Option<&'static str>,
    exporter: Option<Exporter>,
}

impl IntervalTable {
    pub fn open(spec: &Spec) -> Result<IntervalTable> {
        let exporter = match spec.metrics {
            Some(m) => m.exporter()?,
            None => None,
        };
        Ok(IntervalTable {
            clear: spec.clear && !spec.json && io::stdout().is_terminal(),
            json: spec.json,
            heading: spec.heading,
            max: spec.max,
            last_line: spec.last_line,
            exporter,
        })
    }

    /// One interval's table; `last`: the run's last.
    fn print(&self, out: &mut Out, rows: Box<dyn Print + '_>, last: bool) -> Result<()> {
        let time = crate::output::now_hms();
        let loadavg = (self.heading == Heading::LoadAvg)
            .then(|| std::fs::read_to_string("/proc/loadavg").unwrap_or_default());
        self.write(out, &time, loadavg.as_deref(), rows, last)?;
        out.flush()?;
        Ok(())
    }

    /// [`IntervalTable::print`] at `time`, with `loadavg` as
    /// /proc/loadavg reads.
    fn write(
        &self,
        out: &mut dyn Write,
        time: &str,
        loadavg: Option<&str>,
        rows: Box<dyn Print + '_>,
        last: bool,
    ) -> io::Result<()> {
        if !self.json && self.heading != Heading::Lines {
            if self.clear {
                out.write_all(b"\x1b[H\x1b[2J")?;
            } else {
                out.write_all(b"\n")?;
            }
            match self.heading {
                Heading::Nothing | Heading::Lines => {}
                Heading::Title => {
                    if let Some(title) = rows.title() {
                        writeln!(out, "{title}")?;
                    }
                }
                Heading::Time => writeln!(out, "{time:<8}")?,
                Heading::BracketedTime => writeln!(out, "[{time}]")?,
                Heading::LoadAvg => writeln!(
                    out,
                    "{time:<8} loadavg: {}\n",
                    loadavg.unwrap_or_default().trim_end()
                )?,
            }
        }
        let headers = !self.json && self.heading != Heading::Lines;
        rows.print(out, time, self.max, headers)?;
        if let Some(line) = self.last_line.filter(|_| last && !self.json) {
            writeln!(out, "{line}")?;
        }
        Ok(())
    }
}

impl super::Pipeline for IntervalTable {
    fn kind(&self) -> Option<registry::Kind> {
        Some(registry::Kind::IntervalTable)
    }

    /// The interval's table, then --prom-file with the tool's counters (a
    /// file that cannot be written ends the run).
    fn report(&mut self, src: &mut dyn super::Source, out: &mut Out, when: When) -> Result<()> {
        self.print(out, src.rows(when)?, when == When::End)?;
        match &self.exporter {
            Some(e) => e.reported(|| src.metrics(Asked::AfterRows)?.encode()),
            None => Ok(()),
        }
    }

    /// `--prometheus`'s socket, for the loop to wait on.
    fn fd(&self) -> Option<std::os::fd::RawFd> {
        self.exporter.as_ref().and_then(Exporter::fd)
    }

    /// Answers the scrapes waiting with the tool's counters.
    fn serve(&mut self, src: &mut dyn super::Source) -> Result<()> {
        match &self.exporter {
            Some(e) => e.serve(|| src.metrics(Asked::Scrape)?.encode()),
            None => Ok(()),
        }
    }
}

impl From<&Spec<'_>> for Schedule {
    fn from(spec: &Spec) -> Schedule {
        spec.schedule
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Row {
        name: &'static str,
        count: u64,
    }

    fn table(json: bool) -> Table<Timed<Row>> {
        timed(json).columns([
            Column::new("NAME", 10, "name", |t: &Timed<Row>| t.row.name.into()),
            Column::right("COUNT", 8, "count", |t: &Timed<Row>| t.row.count.into()),
        ])
    }

    fn kind(json: bool, heading: Heading, max: usize) -> IntervalTable {
        IntervalTable {
            clear: false,
            json,
            heading,
            max,
            last_line: Some("Detaching..."),
            exporter: None,
        }
    }

    /// Running totals over three reports: each shows what its interval
    /// added, the keys that added nothing left out.
    fn intervals() -> Vec<Vec<(&'static str, u64)>> {
        let mut deltas = Deltas::default();
        let totals = [
            vec![("read", 10u64), ("write", 3), ("open", 1)],
            vec![("read", 25), ("write", 3), ("open", 2), ("close", 4)],
            vec![("read", 25), ("write", 3), ("open", 2), ("close", 4)],
        ];
        totals
            .into_iter()
            .map(|t| {
                let mut added = deltas.added(t.into_iter().collect());
                added.sort();
                added
            })
            .collect()
    }

    fn printed(
        json: bool,
        heading: Heading,
        max: usize,
        rows: &[(&'static str, u64)],
        last: bool,
    ) -> String {
        let t = table(json);
        let rows = rows
            .iter()
            .map(|&(name, count)| Row { name, count })
            .collect();
        // The most first, then by name.
        let rows = Rows::new(rows, &t, |a, b| {
            b.count.cmp(&a.count).then(a.name.cmp(b.name))
        })
        .titled("Sorted by COUNT".into());
        let mut out = Vec::new();
        kind(json, heading, max)
            .write(
                &mut out,
                "12:34:56",
                Some("0.10 0.20 0.30 1/99 42\n"),
                Box::new(rows),
                last,
            )
            .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn entries_become_rows_with_their_cgroups() {
        #[derive(Clone, Copy)]
        struct Value {
            cgroup: u64,
        }
        let rows: Vec<Entry<u32, Value, String>> =
            Cgroups::new(false).entries(vec![(7, Box::new(Value { cgroup: 42 }))], |_, v| v.cgroup);
        let row = &rows[0];
        assert_eq!((row.key, row.value.cgroup, row.extra.as_str()), (7, 42, ""));
        // The cgroup's id always (JSON's cgroup_id); names only where asked.
        assert_eq!(row.as_ref().id, 42);
        assert!(row.as_ref().names.is_none());
    }

    #[test]
    fn deltas_show_what_each_interval_added() {
        assert_eq!(
            intervals(),
            [
                vec![("open", 1), ("read", 10), ("write", 3)],
                vec![("close", 4), ("open", 1), ("read", 15)],
                vec![],
            ]
        );
    }

    #[test]
    fn tables_sort_cut_and_head_as_asked() {
        let [first, second, third] = <[_; 3]>::try_from(intervals()).unwrap();
        assert_eq!(
            printed(false, Heading::BracketedTime, 2, &first, false),
            "\n[12:34:56]\nNAME          COUNT\nread             10\nwrite             3\n"
        );
        assert_eq!(
            printed(false, Heading::LoadAvg, 10, &second, false),
            "\n12:34:56 loadavg: 0.10 0.20 0.30 1/99 42\n\n\
             NAME          COUNT\nread             15\nclose             4\nopen              1\n"
        );
        assert_eq!(
            printed(false, Heading::Time, 10, &third, true),
            "\n12:34:56\nNAME          COUNT\nDetaching...\n"
        );
        assert_eq!(
            printed(false, Heading::Title, 1, &second, false),
            "\nSorted by COUNT\nNAME          COUNT\nread             15\n"
        );
        // A line per interval under the banner's header: no blank line, no
        // header, no last line.
        assert_eq!(
            printed(false, Heading::Lines, 1, &second, false),
            "read             15\n"
        );
        assert_eq!(
            printed(true, Heading::BracketedTime, 10, &second, true),
            "{\"time\":\"12:34:56\",\"name\":\"read\",\"count\":15}\n\
             {\"time\":\"12:34:56\",\"name\":\"close\",\"count\":4}\n\
             {\"time\":\"12:34:56\",\"name\":\"open\",\"count\":1}\n"
        );
    }
}
