//! numamove: NUMA misplaced-page migrations per interval and the time they
//! took (BCC's and libbpf-tools' numamove), from the kernel's migrate_pages()
//! tracepoints where theirs need kprobes or fentry; any other migration
//! reason (compaction, system calls, demotion, …) with `--reason`.

mod info;

use anyhow::{bail, Result};
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, EveryInterval, IdList, MetricsArgs};
use common::export::prom::Counters;
use common::kernel::enums;
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, Hook};
use common::kinds::event::{Cell, Column, Table};
use common::kinds::table::{self, RateReader, Timed};
use common::run::lifecycle::{self, Banner, Schedule, Setup, SkelOf, Tool, When};

common::skeleton!("numamove");
use skel::{types, NumamoveSkelBuilder, OpenNumamoveSkel};

use types::numamove_stat as S;
const STATS: usize = S::NM_MAX.0 as usize;

const EXAMPLES: &str = "\
EXAMPLES:
    numamove                       # NUMA balancing's migrations, every second
    numamove 5 10                  # every 5 seconds, 10 times
    numamove -P                    # with the pages moved and failed
    numamove -r compaction         # compaction's migrations instead
    numamove -r all                # every migration, whatever its reason
    numamove -p 181                # migrations in process 181's faults
    numamove --json | jq .";

/// Show page migrations of type NUMA misplaced per second (or of other
/// reasons), and the milliseconds they took.
#[derive(Parser, Debug)]
#[command(name = "numamove", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// The migrations counted: the kernel's reasons, comma-separated
    /// (numa_misplaced, compaction, syscall, mempolicy_mbind, demotion, …),
    /// or all
    #[arg(
        short = 'r',
        long = "reason",
        value_name = "REASONS",
        default_value = "numa_misplaced"
    )]
    reason: String,
    /// Also show the pages migrated and the pages that failed to
    #[arg(short = 'P', long)]
    pages: bool,
    /// Only migrations in these processes (comma-separated pids): NUMA
    /// balancing migrates in the faulting task
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    every: EveryInterval,
    #[command(flatten)]
    metrics: MetricsArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Numamove>();

/// True where a migration's start is the migrate:mm_migrate_pages_start
/// tracepoint (5.13+), false where it is a kprobe on migrate_pages.
pub fn start_is_tracepoint() -> bool {
    probe::btf_tracepoint_exists("mm_migrate_pages_start")
}

/// The reason BCC's numamove counts.
const MISPLACED: &str = "numa_misplaced";

/// The kernel's migration reasons as (value, name): `MR_COMPACTION` is
/// `compaction`, as the migrate tracepoints print most of them.
fn reason_names() -> Vec<(i64, String)> {
    enums::named("migrate_reason")
        .into_iter()
        .filter(|(_, n)| n != "MR_TYPES")
        .filter_map(|(v, n)| Some((v, n.strip_prefix("MR_")?.to_lowercase())))
        .collect()
}

/// `--reason`'s list as a mask of the kernel's values (bit N: reason N).
fn reason_mask(list: &str, names: &[(i64, String)]) -> Result<u64> {
    let mut mask = 0u64;
    for word in list.split(',').map(str::trim) {
        if word == "all" {
            mask = names.iter().fold(mask, |m, (v, _)| m | 1u64 << v);
            continue;
        }
        match names.iter().find(|(_, n)| n == word) {
            Some((v, _)) if (0..64).contains(v) => mask |= 1u64 << v,
            _ => {
                return Err(common::usage::usage(format!(
                    "--reason: no migration reason {word:?} in this kernel; it has {} (or all)",
                    names
                        .iter()
                        .map(|(_, n)| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
        }
    }
    Ok(mask)
}

pub(crate) struct Numamove {
    args: Args,
    mask: u64,
    table: Table<Timed<Rates>>,
    rates: RateReader<STATS>,
}

type Rates = table::Rates<STATS>;

impl Tool for Numamove {
    common::tool_types!(NumamoveSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let names = reason_names();
        if names.is_empty() {
            bail!("the kernel's BTF has no enum migrate_reason: numamove needs BTF (CONFIG_DEBUG_INFO_BTF)");
        }
        let mask = reason_mask(&args.reason, &names)?;
        Ok(Numamove {
            table: table(args.common.json, args.reason == MISPLACED, args.pages),
            mask,
            args,
            rates: RateReader::default(),
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenNumamoveSkel<'_>, _: &Setup) -> Result<()> {
        let end_args = probe::btf_tracepoint_args("mm_migrate_pages");
        let hook = probe::pick(&[Hook::TpBtf, Hook::RawTp]);
        let (Some(hook), Some(n @ (4 | 7 | 8))) = (hook, end_args) else {
            bail!(
                "numamove needs tp_btf or raw_tp programs on migrate:mm_migrate_pages \
                 (with BTF); this kernel has {}",
                end_args.map_or("no BTF of it".into(), |n| format!(
                    "a form of it with {n} arguments"
                ))
            );
        };
        let start_tp = start_is_tracepoint();
        // Before 5.13 the start is migrate_pages() itself, whose sixth
        // argument is the reason.
        let start_kprobe = !start_tp
            && probe::kprobe_target("migrate_pages")
            && probe::function_args("migrate_pages") == Some(6);
        if !start_tp && !start_kprobe {
            bail!(
                "numamove needs the migrate:mm_migrate_pages_start tracepoint (Linux 5.13) or a \
                 kprobe on migrate_pages, and this kernel has {}",
                if probe::features().kprobe {
                    "neither"
                } else {
                    "no kprobes"
                }
            );
        }
        let p = &mut open.progs;
        let btf = hook == Hook::TpBtf;
        probe::load_when(start_tp && btf, [&mut p.start_btf]);
        probe::load_when(start_tp && !btf, [&mut p.start_raw]);
        probe::load_when(start_kprobe, [&mut p.start_kprobe]);
        probe::load_when(btf && n == 4, [&mut p.end_btf4]);
        probe::load_when(!btf && n == 4, [&mut p.end_raw4]);
        probe::load_when(btf && n == 7, [&mut p.end_btf7]);
        probe::load_when(btf && n == 8, [&mut p.end_btf8]);
        probe::load_when(!btf && n == 7, [&mut p.end_raw7]);
        probe::load_when(!btf && n == 8, [&mut p.end_raw8]);
        maps::rodata(&mut open.maps.rodata_data)?.reasons = self.mask;
        Ok(())
    }

    fn banner(&self) -> Banner {
        Banner::Header {
            header: self.table.header(),
            note: Self::INFO.banner.into(),
        }
    }

    fn interval_table(&self) -> Option<table::Spec<'_>> {
        let schedule = Schedule::from(&self.args.every);
        Some(table::Spec::lines(
            self.args.common.json,
            schedule,
            Some(&self.args.metrics),
        ))
    }

    fn interval_rows<'s>(
        &'s mut self,
        skel: &SkelOf<'_, Self>,
        _: When,
    ) -> Result<Box<dyn table::Print + 's>> {
        let row = self.rates.read(&skel.maps.stats)?;
        Ok(Box::new(table::Rows::one(row, &self.table)))
    }

    fn interval_metrics(&mut self, skel: &SkelOf<'_, Self>, _: table::Asked) -> Result<Counters> {
        let total = |s: S| maps::percpu_sum_at(&skel.maps.stats, s.0);
        let lone = |n: u64| vec![(Vec::new(), n)];
        Ok(Counters {
            families: vec![
                (
                    "numamove_migrations",
                    "Page migrations (migrate_pages calls) of the reasons asked for",
                    lone(total(S::NM_MIGRATIONS)?),
                ),
                (
                    "numamove_migration_nanoseconds",
                    "Time those migrations took, in nanoseconds",
                    lone(total(S::NM_NS)?),
                ),
                (
                    "numamove_pages_migrated",
                    "Pages those migrations moved",
                    lone(total(S::NM_PAGES)?),
                ),
                (
                    "numamove_pages_failed",
                    "Pages those migrations failed to move",
                    lone(total(S::NM_FAILED)?),
                ),
            ],
        })
    }
}

/// Whole milliseconds of the interval's migrations.
fn millis(t: &Timed<Rates>) -> Cell<'_> {
    (t.row.counts[S::NM_NS.0 as usize] / 1_000_000).into()
}

fn count<const I: usize>(t: &Timed<Rates>) -> Cell<'_> {
    t.row.counts[I].into()
}

/// BCC's `TIME NUMA_migrations NUMA_migrations_ms` (for reasons other than
/// NUMA balancing's, `MIGRATIONS MIGRATIONS_ms`); with -P the pages.
fn table(json: bool, misplaced: bool, pages: bool) -> Table<Timed<Rates>> {
    const M: usize = S::NM_MIGRATIONS.0 as usize;
    const P: usize = S::NM_PAGES.0 as usize;
    const F: usize = S::NM_FAILED.0 as usize;
    let migrations = Column::right("NUMA_migrations", 18, "migrations", count::<M>);
    let ms = Column::right("NUMA_migrations_ms", 18, "", millis);
    table::timed::<Rates>(json)
        .columns([
            Column::new("TIME", 10, "", |t| t.time.as_str().into()),
            Column::json("interval_s", |t| Cell::Float(t.row.secs, 3)),
        ])
        .column(
            true,
            if misplaced {
                migrations
            } else {
                migrations.titled("MIGRATIONS")
            },
        )
        .column(
            true,
            if misplaced {
                ms
            } else {
                ms.titled("MIGRATIONS_ms")
            },
        )
        .columns([
            Column::json("latency_ms", |t| {
                Cell::Float(t.row.counts[S::NM_NS.0 as usize] as f64 / 1e6, 3)
            }),
            Column::json("pages", count::<P>),
            Column::json("failed", count::<F>),
        ])
        .column(pages, Column::right("PAGES", 10, "", count::<P>))
        .column(pages, Column::right("FAILED", 8, "", count::<F>))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_bccs() {
        assert_eq!(
            table(false, true, false).header(),
            format!(
                "{:<10} {:>18} {:>18}",
                "TIME", "NUMA_migrations", "NUMA_migrations_ms"
            )
        );
        assert_eq!(
            table(false, false, true).header(),
            format!(
                "{:<10} {:>18} {:>18} {:>10} {:>8}",
                "TIME", "MIGRATIONS", "MIGRATIONS_ms", "PAGES", "FAILED"
            )
        );
    }

    #[test]
    fn reasons_are_the_kernels() {
        let names = reason_names();
        assert!(names.iter().any(|(_, n)| n == MISPLACED), "{names:?}");
        assert!(names.iter().any(|(_, n)| n == "compaction"), "{names:?}");
        let misplaced = names.iter().find(|(_, n)| n == MISPLACED).unwrap().0;
        assert_eq!(reason_mask(MISPLACED, &names).unwrap(), 1 << misplaced);
        let all = reason_mask("all", &names).unwrap();
        assert_eq!(all.count_ones() as usize, names.len());
        let two = reason_mask("compaction, numa_misplaced", &names).unwrap();
        assert_eq!(two.count_ones(), 2);
        let e = reason_mask("numa,compaction", &names)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("\"numa\"") && e.contains("numa_misplaced"),
            "{e}"
        );
    }

    #[test]
    fn options_parse_as_bcc_takes_them() {
        let a = Args::try_parse_from(["numamove", "5", "10", "-P", "-r", "all"]).unwrap();
        assert_eq!((a.every.interval, a.every.count), (5, Some(10)));
        assert!(a.pages);
        for bad in [
            &["numamove", "0"][..],
            &["numamove", "1", "0"],
            &["numamove", "-p", "x"],
            &["numamove", "1", "2", "3"],
        ] {
            assert!(Args::try_parse_from(bad).is_err(), "{bad:?}");
        }
    }
}
