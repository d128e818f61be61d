//! cachetop: cachestat per process, as a top screen each interval.

mod info;

use std::cmp::Ordering;
use std::time::Duration;

use anyhow::Result;
use clap::{Parser, ValueEnum};
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::pagecache::{self, meminfo_mb, Stats};
use common::kernel::probe::Hook;
use common::kinds::event::{Cell, Column, Table};
use common::kinds::table::{self, Heading, Timed};
use common::output::c_bytes;
use common::output::users::UserNames;
use common::run::lifecycle::{self, Schedule, Setup, SkelOf, Tool, When};
use libbpf_rs::skel::Skel;
use libbpf_rs::Link;

common::skeleton!("cachetop");
use skel::{types, CachetopSkelBuilder, OpenCachetopSkel};

// SAFETY: repr(C) structs of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::proc_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::proc_counts {}

common::page_cache_counters_match!(skel::types::cache_counter);

const EXAMPLES: &str = "\
EXAMPLES:
    cachetop              # page cache hits and misses per process, every 5 seconds
    cachetop 1            # every second
    cachetop -s misses    # the most misses first
    cachetop -s pid -R    # by pid, smallest first
    cachetop -p 1234      # only process 1234
    cachetop -C 1 10      # ten 1 second tables, without clearing the screen
    cachetop --containers # with each process's container
    cachetop --json 1 3 | jq .";

/// Page cache hits and misses per process, as a top screen: each
/// interval, the processes that used the page cache, with their hits,
/// misses, dirtied pages and read and write hit ratios.
///
/// The figures are cachestat's, counted per process. Where fentry works, the page cache functions are traced as BCC
/// does; elsewhere the filemap and writeback tracepoints serve, and hits
/// are approximated from the page ranges of reads and faults (stated on
/// stderr).
#[derive(Parser, Debug)]
#[command(name = "cachetop", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Sort by this column
    #[arg(short = 's', long, value_enum, ignore_case = true, default_value_t = Field::Hits)]
    sort: Field,
    /// Sort in ascending order (BCC's key `r`; descending by default)
    #[arg(short = 'R', long)]
    reverse: bool,
    /// Count only what these processes do (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Don't clear the screen between intervals
    #[arg(short = 'C', long)]
    noclear: bool,
    /// Maximum rows to print
    #[arg(short = 'r', long, alias = "maxrows", value_name = "ROWS", default_value_t = 20,
          value_parser = clap::value_parser!(u64).range(1..))]
    rows: u64,
    /// Output interval, in seconds
    #[arg(default_value_t = 5, value_parser = cli::seconds)]
    interval: u64,
    /// Number of outputs before exiting (default: unlimited)
    #[arg(value_parser = cli::positive_u64)]
    count: Option<u64>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// BCC's columns, which its keys `<` and `>` sort by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Field {
    Pid,
    Uid,
    #[value(alias = "comm")]
    Cmd,
    Hits,
    Misses,
    Dirties,
    #[value(name = "read_hit", alias = "read_hit%")]
    ReadHit,
    #[value(name = "write_hit", alias = "write_hit%")]
    WriteHit,
}

impl Field {
    /// Its column's header, as BCC's heading names it.
    fn header(self) -> &'static str {
        match self {
            Field::Pid => "PID",
            Field::Uid => "UID",
            Field::Cmd => "CMD",
            Field::Hits => "HITS",
            Field::Misses => "MISSES",
            Field::Dirties => "DIRTIES",
            Field::ReadHit => "READ_HIT%",
            Field::WriteHit => "WRITE_HIT%",
        }
    }
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Cachetop>();

/// What a row shows beyond the kernel's entry: its figures and user name.
#[derive(Default)]
struct Figures {
    stats: Stats,
    user: String,
}

type Row = table::Entry<types::proc_key, types::proc_counts, Figures>;

pub(crate) struct Cachetop {
    args: Args,
    mode: Hook,
    kprobes: Option<pagecache::Kprobes>,
    cgroups: table::Cgroups,
    users: UserNames,
    /// Pages of processes the full table left out, as last said.
    uncounted: u64,
    table: Table<Timed<Row>>,
}

impl Tool for Cachetop {
    common::tool_types!(CachetopSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        Ok(Cachetop {
            table: table(args.common.json).containers(args.containers.containers),
            cgroups: table::Cgroups::new(args.containers.containers),
            users: UserNames::default(),
            mode: Hook::Fentry,
            kprobes: None,
            uncounted: 0,
            args,
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenCachetopSkel<'_>, _: &Setup) -> Result<()> {
        maps::rodata(&mut open.maps.rodata_data)?.page_shift = pagecache::page_shift();
        (self.mode, self.kprobes) = common::choose_page_cache_programs!(open.progs, open.maps)?;
        Ok(())
    }

    fn attach(&mut self, skel: &mut SkelOf<'_, Self>) -> Result<Vec<Link>> {
        let mut links = lifecycle::attach_all(skel.object())?;
        if let Some(k) = &self.kprobes {
            links.extend(common::attach_page_cache_kprobes!(k, skel.progs)?);
        }
        Ok(links)
    }

    fn degraded(&self) -> Option<String> {
        pagecache::degraded(self.mode)
    }

    fn interval_table(&self) -> Option<table::Spec<'_>> {
        Some(table::Spec {
            json: self.args.common.json,
            heading: Heading::Title,
            clear: !self.args.noclear,
            max: usize::try_from(self.args.rows).unwrap_or(usize::MAX),
            schedule: Schedule {
                interval: Some(Duration::from_secs(self.args.interval)),
                count: self.args.count,
                duration: None,
            },
            last_line: None,
            banner: Some(format!(
                "Tracing... Output every {} secs. Hit Ctrl-C to end",
                self.args.interval
            )),
            metrics: None,
        })
    }

    /// The interval's counts, drained, a row per process that used the
    /// page cache, under BCC's heading line.
    fn interval_rows<'s>(
        &'s mut self,
        skel: &SkelOf<'_, Self>,
        _: When,
    ) -> Result<Box<dyn table::Print + 's>> {
        let drained: Vec<(types::proc_key, Box<types::proc_counts>)> =
            maps::read_as(&skel.maps.procs, true)?;
        let exact = pagecache::exact(self.mode);
        let mut rows = self.cgroups.entries(drained, |_, v| v.cgroup_id);
        for row in &mut rows {
            row.extra = Figures {
                stats: Stats::from_counters(&row.value.counts, exact),
                user: self.users.of(row.key.uid).to_owned(),
            };
        }
        rows.retain(|r| {
            let s = &r.extra.stats;
            s.hits + s.misses + s.dirties > 0
        });
        let uncounted = maps::percpu_sum_at(&skel.maps.uncounted, 0)?;
        if uncounted > self.uncounted {
            common::note!(
                "{} pages of page cache work left uncounted: more processes than \
                 the table holds ({uncounted} so far)",
                uncounted - self.uncounted
            );
            self.uncounted = uncounted;
        }
        let (buffers_mb, cached_mb) = meminfo_mb()?;
        let (by, ascending) = (self.args.sort, self.args.reverse);
        let title = format!(
            "{:<8} Buffers MB: {buffers_mb} / Cached MB: {cached_mb} / Sort: {} / Order: {}",
            common::output::now_hms(),
            by.header(),
            if ascending { "ascending" } else { "descending" }
        );
        Ok(Box::new(
            table::Rows::new(rows, &self.table, move |a, b| {
                let o = compare(a, b, by);
                let o = if ascending { o } else { o.reverse() };
                o.then(a.key.pid.cmp(&b.key.pid))
            })
            .titled(title),
        ))
    }
}

/// How two rows compare on `by`, the lesser first.
fn compare(a: &Row, b: &Row, by: Field) -> Ordering {
    let (x, y) = (&a.extra.stats, &b.extra.stats);
    match by {
        Field::Pid => a.key.pid.cmp(&b.key.pid),
        Field::Uid => a.key.uid.cmp(&b.key.uid),
        Field::Cmd => c_bytes(&a.value.comm).cmp(c_bytes(&b.value.comm)),
        Field::Hits => x.hits.cmp(&y.hits),
        Field::Misses => x.misses.cmp(&y.misses),
        Field::Dirties => x.dirties.cmp(&y.dirties),
        Field::ReadHit => x.ratio_percent().total_cmp(&y.ratio_percent()),
        Field::WriteHit => x.write_hit_percent().total_cmp(&y.write_hit_percent()),
    }
}

/// BCC's columns: PID UID CMD HITS MISSES DIRTIES READ_HIT% WRITE_HIT%
/// (UID shows the user's name, as BCC's, cut to 8 characters).
fn table(json: bool) -> Table<Timed<Row>> {
    table::top_table::<Row>(json).columns([
        Column::right("PID", 8, "pid", |t: &Timed<Row>| t.row.key.pid.into()),
        Column::new("UID", 8, "", |t| {
            t.row.extra.user.chars().take(8).collect::<String>().into()
        }),
        Column::json("uid", |t| t.row.key.uid.into()),
        Column::json("user", |t| t.row.extra.user.as_str().into()),
        Column::new("CMD", 16, "comm", |t| {
            Cell::bytes(c_bytes(&t.row.value.comm))
        }),
        Column::right("HITS", 8, "hits", |t| t.row.extra.stats.hits.into()),
        Column::right("MISSES", 8, "misses", |t| t.row.extra.stats.misses.into()),
        Column::right("DIRTIES", 8, "dirties", |t| {
            t.row.extra.stats.dirties.into()
        }),
        Column::right("READ_HIT%", 10, "", |t| {
            percent(t.row.extra.stats.ratio_percent())
        }),
        Column::right("WRITE_HIT%", 10, "", |t| {
            percent(t.row.extra.stats.write_hit_percent())
        }),
        Column::json("read_hit_percent", |t| {
            Cell::Float(t.row.extra.stats.ratio_percent(), 1)
        }),
        Column::json("write_hit_percent", |t| {
            Cell::Float(t.row.extra.stats.write_hit_percent(), 1)
        }),
    ])
}

/// BCC's `{:9.1f}%`, in its column of ten.
fn percent(p: f64) -> Cell<'static> {
    Cell::from(format!("{p:.1}%"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_parse_as_bcc_gives_them() {
        let a = Args::try_parse_from(["cachetop"]).unwrap();
        assert_eq!(
            (a.sort, a.reverse, a.interval, a.count, a.rows),
            (Field::Hits, false, 5, None, 20)
        );
        let a = Args::try_parse_from(["cachetop", "-s", "READ_HIT%", "-R", "2", "3"]).unwrap();
        assert_eq!(
            (a.sort, a.reverse, a.interval, a.count),
            (Field::ReadHit, true, 2, Some(3))
        );
        assert_eq!(
            Args::try_parse_from(["cachetop", "-s", "cmd"])
                .unwrap()
                .sort,
            Field::Cmd
        );
        assert!(Args::try_parse_from(["cachetop", "-s", "size"]).is_err());
    }

    fn row(pid: u32, comm: &str, counts: [u64; pagecache::COUNTERS]) -> Row {
        let mut value = types::proc_counts {
            counts,
            ..Default::default()
        };
        for (d, s) in value.comm.iter_mut().zip(comm.bytes()) {
            *d = s as i8;
        }
        Row {
            key: types::proc_key { pid, uid: 0 },
            extra: Figures {
                stats: Stats::from_counters(&counts, false),
                user: "root".into(),
            },
            value,
            cgroup: table::Cgroup::default(),
        }
    }

    #[test]
    fn rows_compare_on_each_field() {
        // accessed, added, write added, dirtied, buffer dirtied
        let reader = row(20, "cat", [100, 40, 0, 0, 0]);
        let writer = row(10, "dd", [0, 8, 8, 10, 0]);
        let cmp = |by| compare(&reader, &writer, by);
        assert_eq!(cmp(Field::Pid), Ordering::Greater);
        assert_eq!(cmp(Field::Cmd), Ordering::Less);
        assert_eq!(cmp(Field::Hits), Ordering::Greater);
        assert_eq!(cmp(Field::Misses), Ordering::Greater);
        assert_eq!(cmp(Field::Dirties), Ordering::Less);
        // 60 of 100 reads hit; 2 of the writer's 10 dirtied pages were cached.
        assert_eq!(reader.extra.stats.ratio_percent(), 60.0);
        assert_eq!(writer.extra.stats.write_hit_percent(), 20.0);
        assert_eq!(cmp(Field::ReadHit), Ordering::Greater);
        assert_eq!(cmp(Field::WriteHit), Ordering::Less);
    }

    #[test]
    fn the_table_has_bccs_columns() {
        let header = table(false).header();
        assert_eq!(
            header.split_whitespace().collect::<Vec<_>>(),
            [
                "PID",
                "UID",
                "CMD",
                "HITS",
                "MISSES",
                "DIRTIES",
                "READ_HIT%",
                "WRITE_HIT%"
            ]
        );
    }
}
