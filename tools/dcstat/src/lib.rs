//! dcstat: dentry cache lookups per second, the slow ones and the misses,
//! with the hit ratio, each interval.

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, EveryInterval, IdList};
use common::kernel::filters::Filters;
use common::kernel::probe::{self, FunctionHooks};
use common::kinds::event::{Cell, Column, Table};
use common::kinds::table::{self, rate_columns, RateReader, Timed};
use common::run::lifecycle::{self, attach_all, Banner, Schedule, Setup, SkelOf, Tool, When};
use libbpf_rs::skel::Skel;
use libbpf_rs::Link;

common::skeleton!("dcstat");
use skel::{types, DcstatSkel, DcstatSkelBuilder, OpenDcstatSkel};

use types::dc_stat as S;
const STATS: usize = S::DC_MAX.0 as usize;
/// What BCC hooks (each path component's lookup in the dentry cache, and
/// the slow lookup that follows a miss there), and where the walk has
/// allocated a name the cache lacked since 4.7.
pub const FUNCTIONS: [&str; 3] = ["lookup_fast", "d_lookup", "d_alloc_parallel"];

const EXAMPLES: &str = "\
EXAMPLES:
    dcstat            # dentry cache statistics per second, every second
    dcstat 5 3        # 5 second summaries, 3 times
    dcstat -p 181     # only the lookups of process 181
    dcstat --json 1 5 | jq .";

/// Show dentry cache (dcache) statistics: lookups, slow lookups and misses
/// per second, and the hit ratio.
#[derive(Parser, Debug)]
#[command(name = "dcstat", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Count only the lookups of these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    every: EveryInterval,
    #[command(flatten)]
    common: CommonArgs,
}

/// fentry where the kernel allows it on both functions, else kprobes; else
/// the error the user reads.
fn choose_hooks() -> Result<FunctionHooks> {
    FunctionHooks::choose(&FUNCTIONS, "the dentry cache")
}

/// True if this kernel lets dcstat attach (for its tests).
pub fn hooks_present() -> bool {
    choose_hooks().is_ok()
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Dcstat>();

pub(crate) struct Dcstat {
    args: Args,
    table: Table<Timed<Rates>>,
    hooks: FunctionHooks,
    rates: RateReader<STATS>,
}

impl Tool for Dcstat {
    common::tool_types!(DcstatSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        Ok(Dcstat {
            hooks: FunctionHooks::Fentry,
            table: table(args.common.json),
            args,
            rates: RateReader::default(),
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    /// Chosen here, after the arguments and the privileges are checked, so
    /// that those errors come first.
    fn configure(&mut self, open: &mut OpenDcstatSkel<'_>, _: &Setup) -> Result<()> {
        self.hooks = choose_hooks()?;
        let fentry = self.hooks == FunctionHooks::Fentry;
        let p = &mut open.progs;
        probe::load_when(
            fentry,
            [
                &mut p.dc_fentry_fast,
                &mut p.dc_fexit_lookup,
                &mut p.dc_fentry_alloc,
            ],
        );
        probe::load_when(
            !fentry,
            [
                &mut p.dc_kprobe_fast,
                &mut p.dc_kprobe_lookup,
                &mut p.dc_kretprobe_lookup,
                &mut p.dc_kprobe_alloc,
            ],
        );
        Ok(())
    }

    fn hook_target(&self, program: &str) -> Option<String> {
        (program == "dc_kprobe_fast").then(|| self.hooks.symbol(0))?
    }

    /// lookup_fast's kprobe names no function in its section: attached
    /// here to the symbol found (a compiler's copy, where the kernel has
    /// only that).
    fn attach(&mut self, skel: &mut SkelOf<'_, Self>) -> Result<Vec<Link>> {
        let mut links = attach_all(skel.object())?;
        links.extend(self.hooks.attach_kprobe(0, &skel.progs.dc_kprobe_fast)?);
        Ok(links)
    }

    fn banner(&self) -> Banner {
        Banner::Header {
            header: self.table.header(),
            note: "Tracing dentry cache lookups... Hit Ctrl-C to end.".into(),
        }
    }

    fn interval_table(&self) -> Option<table::Spec<'_>> {
        let schedule = Schedule::from(&self.args.every);
        Some(table::Spec::lines(self.args.common.json, schedule, None))
    }

    /// One line per interval, and one for the part interval at the end, as
    /// rates over the time that passed.
    fn interval_rows<'s>(
        &'s mut self,
        skel: &DcstatSkel<'_>,
        _: When,
    ) -> Result<Box<dyn table::Print + 's>> {
        let row = self.rates.read(&skel.maps.stats)?;
        Ok(Box::new(table::Rows::new(
            vec![row],
            &self.table,
            |_, _| std::cmp::Ordering::Equal,
        )))
    }
}

type Rates = table::Rates<STATS>;

/// BCC's HIT%: the references that did not miss, of all; none without
/// references.
fn hit_percent(r: &Rates) -> Option<f64> {
    let refs = r.counts[S::DC_REFS.0 as usize];
    let miss = r.counts[S::DC_MISS.0 as usize];
    (refs > 0).then(|| 100.0 * refs.saturating_sub(miss) as f64 / refs as f64)
}

/// BCC's line: the time, each counter per second, the hit ratio (`-`
/// without lookups); in JSON the counts, their rates and the interval.
fn table(json: bool) -> Table<Timed<Rates>> {
    table::timed::<Rates>(json)
        .columns([
            Column::new("TIME", 10, "", |t| format!("{}:", t.time).into()),
            Column::json("interval_s", |t| Cell::Float(t.row.secs, 3)),
        ])
        .columns(rate_columns::<STATS, 0, true>(
            "REFS/s",
            "refs",
            "refs_per_s",
        ))
        .columns(rate_columns::<STATS, 1, true>(
            "SLOW/s",
            "slow",
            "slow_per_s",
        ))
        .columns(rate_columns::<STATS, 2, true>(
            "MISS/s",
            "miss",
            "miss_per_s",
        ))
        .columns([Column::right(
            "HIT%",
            8,
            "hit_percent",
            |t| match hit_percent(&t.row) {
                Some(p) => Cell::Float(p, 2),
                None => "-".into(),
            },
        )])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_arguments_parse() {
        let ok = Args::try_parse_from(["dcstat", "5", "3"]).unwrap();
        assert_eq!((ok.every.interval, ok.every.count), (5, Some(3)));
    }

    #[test]
    fn lines_are_laid_out_as_bccs() {
        let t = table(false);
        assert_eq!(t.header(), "TIME         REFS/s   SLOW/s   MISS/s     HIT%");
        let row = |counts| Timed {
            time: "12:34:56".into(),
            row: Rates { counts, secs: 2.0 },
        };
        assert_eq!(
            String::from_utf8(t.render(&row([400, 10, 5])).unwrap()).unwrap(),
            "12:34:56:       200        5        2    98.75"
        );
        assert_eq!(
            String::from_utf8(t.render(&row([0, 0, 0])).unwrap()).unwrap(),
            "12:34:56:         0        0        0        -"
        );
    }

    #[test]
    fn counters_are_in_bccs_order() {
        assert_eq!(
            (S::DC_REFS.0, S::DC_SLOW.0, S::DC_MISS.0, S::DC_MAX.0),
            (0, 1, 2, 3)
        );
    }
}
