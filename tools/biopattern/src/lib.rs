//! biopattern: how much of each disk's I/O is random and how much
//! sequential, each interval: a completion that starts where the disk's
//! previous one ended is sequential.

mod info;

use std::collections::HashMap;

use anyhow::Result;
use clap::Parser;
use common::cli::{CommonArgs, IntervalCount};
use common::kernel::disks;
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::event::{Column, Table};
use common::kinds::table::{self, Counts, Deltas, Heading, Timed};
use common::run::lifecycle::{self, Banner, Schedule, Setup, SkelOf, Tool, When};

common::skeleton!("biopattern");
use skel::{types, BiopatternSkelBuilder, OpenBiopatternSkel};

// SAFETY: a repr(C) struct of integers (the generated skeleton type),
// valid for any bytes.
unsafe impl plain::Plain for types::pattern {}

const EXAMPLES: &str = "\
EXAMPLES:
    biopattern              # show block I/O pattern, once at Ctrl-C
    biopattern 1 10         # print 1 second summaries, 10 times
    biopattern -T 1         # 1s summaries with timestamps
    biopattern -d sdc       # trace sdc only
    biopattern --json 1 5 | jq .";

/// Show the block device I/O pattern: random against sequential I/O per
/// disk.
#[derive(Parser, Debug)]
#[command(name = "biopattern", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Trace this disk only
    #[arg(short = 'd', long, value_name = "DISK")]
    disk: Option<String>,
    /// Include a timestamp on each line
    #[arg(short = 'T', long)]
    timestamp: bool,
    #[command(flatten)]
    every: IntervalCount,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Biopattern>();

/// A disk's completions in one interval.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct Pattern {
    sequential: u64,
    random: u64,
    bytes: u64,
}

impl Counts for Pattern {
    fn since(self, b: Pattern) -> Pattern {
        Pattern {
            sequential: self.sequential.saturating_sub(b.sequential),
            random: self.random.saturating_sub(b.random),
            bytes: self.bytes.saturating_sub(b.bytes),
        }
    }

    fn is_zero(&self) -> bool {
        self.sequential == 0 && self.random == 0
    }
}

impl Pattern {
    fn count(&self) -> u64 {
        self.sequential + self.random
    }

    /// The random share in percent, rounded (BCC's; the sequential share
    /// is the rest, so the two add up to 100).
    fn random_pct(&self) -> u64 {
        (self.random * 200 + self.count()) / (2 * self.count().max(1))
    }
}

/// A row: the disk's number and name, and its interval's completions.
struct Row {
    dev: u32,
    disk: String,
    p: Pattern,
}

pub(crate) struct Biopattern {
    args: Args,
    targ_dev: Option<u32>,
    disks: disks::Names,
    totals: Deltas<u32, Pattern>,
    table: Table<Timed<Row>>,
}

impl Tool for Biopattern {
    common::tool_types!(BiopatternSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let targ_dev = args.disk.as_deref().map(disks::resolve).transpose()?;
        Ok(Biopattern {
            table: table(&args),
            args,
            targ_dev,
            disks: disks::Names::default(),
            totals: Deltas::default(),
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            disk: self.targ_dev,
            ..Filters::default()
        }
    }

    fn configure(&mut self, open: &mut OpenBiopatternSkel<'_>, _: &Setup) -> Result<()> {
        let hook = probe::tracepoint_hook("block", "block_rq_complete", "2.6.24")?;
        let p = &mut open.progs;
        probe::hook_variant(
            hook,
            &mut p.bp_btf_complete,
            &mut p.bp_raw_complete,
            &mut p.bp_tp_complete,
        );
        Ok(())
    }

    fn banner(&self) -> Banner {
        Banner::Header {
            header: self.table.header(),
            note: Self::INFO.banner.into(),
        }
    }

    fn interval_table(&self) -> Option<table::Spec<'_>> {
        Some(table::Spec {
            json: self.args.common.json,
            heading: Heading::Lines,
            clear: false,
            max: usize::MAX,
            schedule: Schedule::from(&self.args.every),
            last_line: None,
            banner: None,
            metrics: None,
        })
    }

    /// Each disk that completed I/O in the interval: what its running
    /// totals added (the kernel keeps them, and where each disk's last
    /// completion ended, across intervals).
    fn interval_rows<'s>(
        &'s mut self,
        skel: &SkelOf<'_, Self>,
        _: When,
    ) -> Result<Box<dyn table::Print + 's>> {
        let entries: Vec<(u32, Box<types::pattern>)> = maps::read_as(&skel.maps.patterns, false)?;
        let totals: HashMap<u32, Pattern> = entries
            .into_iter()
            .map(|(dev, p)| {
                let p = Pattern {
                    sequential: p.sequential,
                    random: p.random,
                    bytes: p.bytes,
                };
                (dev, p)
            })
            .collect();
        let mut rows = Vec::new();
        for (dev, p) in self.totals.added(totals) {
            self.disks.learn(dev);
            let disk = self.disks.of(dev).to_owned();
            rows.push(Row { dev, disk, p });
        }
        Ok(Box::new(table::Rows::new(rows, &self.table, |a, b| {
            a.disk.cmp(&b.disk)
        })))
    }
}

/// BCC's and libbpf-tools' columns (TIME with -T); in JSON each count.
fn table(args: &Args) -> Table<Timed<Row>> {
    use common::kernel::disks::{major, minor};
    table::timed::<Row>(args.common.json)
        .column(
            args.timestamp,
            Column::new("TIME", 8, "", |t: &Timed<Row>| t.time.as_str().into()),
        )
        .columns([
            Column::new("DISK", 7, "disk", |t: &Timed<Row>| {
                t.row.disk.as_str().into()
            }),
            Column::json("major", |t: &Timed<Row>| major(t.row.dev).into()),
            Column::json("minor", |t: &Timed<Row>| minor(t.row.dev).into()),
            Column::right("%RND", 5, "random_pct", |t: &Timed<Row>| {
                t.row.p.random_pct().into()
            }),
            Column::right("%SEQ", 5, "sequential_pct", |t: &Timed<Row>| {
                (100 - t.row.p.random_pct()).into()
            }),
            Column::json("random", |t: &Timed<Row>| t.row.p.random.into()),
            Column::json("sequential", |t: &Timed<Row>| t.row.p.sequential.into()),
            Column::right("COUNT", 8, "count", |t: &Timed<Row>| t.row.p.count().into()),
            Column::right("KBYTES", 10, "kbytes", |t: &Timed<Row>| {
                (t.row.p.bytes / 1024).into()
            }),
            Column::json("bytes", |t: &Timed<Row>| t.row.p.bytes.into()),
        ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_laid_out_as_bccs() {
        let args = Args::try_parse_from(["biopattern", "-T", "1"]).unwrap();
        let t = table(&args);
        assert_eq!(
            t.header(),
            "TIME     DISK     %RND  %SEQ    COUNT     KBYTES"
        );
        let row = Timed {
            time: "12:34:56".into(),
            row: Row {
                dev: 7 << 20,
                disk: "loop0".into(),
                p: Pattern {
                    sequential: 2,
                    random: 1,
                    bytes: 12288,
                },
            },
        };
        assert_eq!(
            String::from_utf8(t.render(&row).unwrap()).unwrap(),
            "12:34:56 loop0      33    67        3         12"
        );
    }

    #[test]
    fn shares_round_and_add_up_to_100() {
        let p = |random, sequential| Pattern {
            random,
            sequential,
            bytes: 0,
        };
        assert_eq!(p(1, 2).random_pct(), 33);
        assert_eq!(p(2, 1).random_pct(), 67);
        assert_eq!(p(1, 1).random_pct(), 50);
        assert_eq!(p(0, 5).random_pct(), 0);
        assert_eq!(p(5, 0).random_pct(), 100);
        assert_eq!(p(0, 0).random_pct(), 0);
    }

    #[test]
    fn an_interval_reports_what_the_totals_added() {
        let mut d = Deltas::<u32, Pattern>::default();
        let at = |s, r| {
            HashMap::from([(
                1u32,
                Pattern {
                    sequential: s,
                    random: r,
                    bytes: 0,
                },
            )])
        };
        assert_eq!(d.added(at(3, 1)).len(), 1);
        let next = d.added(at(5, 1));
        assert_eq!(
            next[0].1,
            Pattern {
                sequential: 2,
                random: 0,
                bytes: 0
            }
        );
        assert!(
            d.added(at(5, 1)).is_empty(),
            "a disk that did nothing is left out"
        );
    }
}
