//! cachestat: page cache hits, misses and dirtied pages per interval.

mod info;
mod stats;

use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Parser;
use common::cli::{self, CommonArgs, IdList};
use common::export::prom::Counters;
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, Hook};
use common::kinds::event::Table;
use common::kinds::table::{self, Timed};
use common::run::lifecycle::{self, Banner, Schedule, Setup, Tool, When};
use libbpf_rs::skel::Skel;
use libbpf_rs::Link;

common::skeleton!("cachestat");
use skel::{
    CachestatSkel, CachestatSkelBuilder, OpenCachestatMaps, OpenCachestatProgs, OpenCachestatSkel,
};

const EXAMPLES: &str = "\
EXAMPLES:
    cachestat             # show page cache hits and misses every second
    cachestat -T 1        # with a time column
    cachestat 5 3         # three 5 second summaries, then exit
    cachestat -p 1234     # only what process 1234 does
    cachestat --json 1 | jq .";

/// Count page cache hits and misses, and the hit ratio, every interval.
///
/// Where fentry works, the page cache functions are traced as BCC does.
/// Elsewhere the filemap and writeback tracepoints serve; accesses are then
/// counted from the page ranges of reads and faults, an approximation
/// (stated on stderr).
#[derive(Parser, Debug)]
#[command(name = "cachestat", version, after_help = EXAMPLES)]
struct Args {
    /// Include a time column (HH:MM:SS)
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Count only what these processes do (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Output interval, in seconds
    #[arg(default_value_t = 1, value_parser = cli::seconds)]
    interval: u64,
    /// Number of outputs before exiting (default: unlimited)
    #[arg(value_parser = cli::positive_u64)]
    count: Option<u64>,
    #[command(flatten)]
    metrics: cli::MetricsArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// The kernel side's counters (enum cache_counter in cachestat.h).
use skel::types::cache_counter as Counter;
const ACCESSED: usize = Counter::CNT_ACCESSED.0 as usize;
const ADDED: usize = Counter::CNT_ADDED.0 as usize;
const WRITE_ADDED: usize = Counter::CNT_WRITE_ADDED.0 as usize;
const DIRTIED: usize = Counter::CNT_DIRTIED.0 as usize;
const BUFFER_DIRTIED: usize = Counter::CNT_BUFFER_DIRTIED.0 as usize;
const COUNTERS: usize = Counter::CNT_MAX.0 as usize;

/// The functions BCC hooks, in one kernel generation's names.
struct Functions {
    add: &'static str,
    accessed: &'static str,
    /// The first of these that can be traced (one is inlined on some builds).
    dirtied: &'static [&'static str],
    buffer_dirty: &'static str,
}

/// 5.16+: folios. folio_account_dirtied is inlined on many builds; its
/// caller serves.
const FOLIO_FUNCTIONS: Functions = Functions {
    add: "filemap_add_folio",
    accessed: "folio_mark_accessed",
    dirtied: &["folio_account_dirtied", "__folio_mark_dirty"],
    buffer_dirty: "mark_buffer_dirty",
};

/// Before 5.16: pages, BCC's own names.
const PAGE_FUNCTIONS: Functions = Functions {
    add: "add_to_page_cache_lru",
    accessed: "mark_page_accessed",
    dirtied: &["account_page_dirtied"],
    buffer_dirty: "mark_buffer_dirty",
};

impl Functions {
    /// The functions, with the dirtying one found, if `traceable` says
    /// every one can be traced.
    fn traceable(&self, traceable: impl Fn(&str) -> bool) -> Option<[&'static str; 4]> {
        let dirtied = self.dirtied.iter().copied().find(|f| traceable(f))?;
        [self.add, self.accessed, self.buffer_dirty]
            .iter()
            .all(|f| traceable(f))
            .then_some([self.add, self.accessed, dirtied, self.buffer_dirty])
    }
}
const TRACEPOINTS: &[&str] = &[
    "mm_filemap_add_to_page_cache",
    "writeback_dirty_folio",
    "mm_filemap_get_pages",
    "mm_filemap_map_pages",
    "mm_filemap_fault",
];

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Cachestat>();

struct Cachestat {
    args: Args,
    mode: Hook,
    /// kprobe mode: each program and the function it goes on.
    /// Where the kprobe programs go, in kprobe mode.
    kprobes: Option<Kprobes>,
    previous: [u64; COUNTERS],
    table: Table<Timed<stats::Line>>,
    totals: stats::Totals,
}

impl Tool for Cachestat {
    common::tool_types!(CachestatSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        Ok(Cachestat {
            table: stats::table(&args),
            args,
            mode: Hook::Fentry,
            kprobes: None,
            previous: [0; COUNTERS],
            totals: stats::Totals::default(),
        })
    }

    fn filters(&self) -> Filters {
        Filters::pids(&self.args.pid)
    }

    fn configure(&mut self, open: &mut OpenCachestatSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        // SAFETY: sysconf has no preconditions.
        let page_size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
        rodata.page_shift = page_size.trailing_zeros();
        (self.mode, self.kprobes) = choose_programs(&mut open.progs, &mut open.maps)?;
        Ok(())
    }

    fn attach(&mut self, skel: &mut CachestatSkel<'_>) -> Result<Vec<Link>> {
        let mut links = lifecycle::attach_all(skel.object())?;
        if let Some(k) = &self.kprobes {
            let p = &skel.progs;
            let (add, dirty) = if k.folio {
                (&p.cs_kprobe_add_folio, &p.cs_kprobe_dirty_folio)
            } else {
                (&p.cs_kprobe_add_page, &p.cs_kprobe_dirty_page)
            };
            let [f_add, f_accessed, f_dirty, f_buffer] = k.functions;
            for (prog, function) in [
                (add, f_add),
                (&p.cs_kprobe_accessed, f_accessed),
                (dirty, f_dirty),
                (&p.cs_kprobe_buffer_dirty, f_buffer),
            ] {
                links.push(
                    prog.attach_kprobe(false, function)
                        .with_context(|| format!("attaching a kprobe to {function}"))?,
                );
            }
        }
        Ok(links)
    }

    fn degraded(&self) -> Option<String> {
        (!stats::exact(self.mode)).then(|| {
            format!(
                "tracepoint mode ({}; fentry is not available): hits are \
                 approximated from the page ranges of reads and faults",
                self.mode
            )
        })
    }

    fn banner(&self) -> Banner {
        Banner::Header {
            header: self.table.header(),
            note: "Tracing page cache... Hit Ctrl-C to end.".into(),
        }
    }

    fn interval_table(&self) -> Option<table::Spec<'_>> {
        let schedule = Schedule {
            interval: Some(Duration::from_secs(self.args.interval)),
            count: self.args.count,
            duration: None,
        };
        let metrics = Some(&self.args.metrics);
        Some(table::Spec::lines(self.args.common.json, schedule, metrics))
    }

    /// One line per interval, and one for the part interval at the end, so
    /// that nothing counted goes unreported.
    fn interval_rows<'s>(
        &'s mut self,
        skel: &CachestatSkel<'_>,
        _: When,
    ) -> Result<Box<dyn table::Print + 's>> {
        let now = stats::read_counters(&skel.maps.counts)?;
        let mut delta = [0u64; COUNTERS];
        for (i, d) in delta.iter_mut().enumerate() {
            *d = now[i].saturating_sub(self.previous[i]);
        }
        self.previous = now;
        let line = stats::Line::new(&delta, self.mode)?;
        Ok(Box::new(table::Rows::new(
            vec![line],
            &self.table,
            |_, _| std::cmp::Ordering::Equal,
        )))
    }

    fn interval_metrics(&mut self, skel: &CachestatSkel<'_>, _: table::Asked) -> Result<Counters> {
        let now = stats::read_counters(&skel.maps.counts)?;
        self.totals.advance(&now, stats::exact(self.mode));
        Ok(self.totals.counters())
    }
}

/// Kprobe mode: the functions probed (add, accessed, dirtied, buffer
/// dirtied), in their folio form or their page form.
struct Kprobes {
    folio: bool,
    functions: [&'static str; 4],
}

/// Chooses the mode: BCC's functions by fentry (folio names, or page names
/// before 5.16), by kprobes where fentry is missing, else the filemap
/// tracepoints (6.10+, approximate). Switches the other programs (and their
/// maps) off; returns the mode and, for kprobes, where the programs go.
fn choose_programs<'obj>(
    p: &mut OpenCachestatProgs<'obj>,
    m: &mut OpenCachestatMaps<'obj>,
) -> Result<(Hook, Option<Kprobes>)> {
    let folio_fentry = FOLIO_FUNCTIONS.traceable(probe::fentry_target);
    let page_fentry =
        folio_fentry.is_none() && PAGE_FUNCTIONS.traceable(probe::fentry_target).is_some();
    let kprobes = if folio_fentry.is_some() || page_fentry {
        None
    } else {
        match (
            FOLIO_FUNCTIONS.traceable(probe::kprobe_target),
            PAGE_FUNCTIONS.traceable(probe::kprobe_target),
        ) {
            (Some(functions), _) => Some(Kprobes {
                folio: true,
                functions,
            }),
            (None, Some(functions)) => Some(Kprobes {
                folio: false,
                functions,
            }),
            (None, None) => None,
        }
    };
    let tracepoints = folio_fentry.is_none() && !page_fentry && kprobes.is_none();
    if tracepoints {
        if let Some(missing) = TRACEPOINTS
            .iter()
            .find(|t| !probe::btf_tracepoint_exists(t))
        {
            bail!(
                "this kernel offers neither fentry nor kprobes on the page cache functions, \
                 nor the tracepoint {missing} (filemap tracepoints need Linux 6.10+)"
            );
        }
    }
    if let Some([.., dirtied, _]) = folio_fentry {
        p.cs_fentry_dirty
            .set_attach_target(0, Some(dirtied.to_string()))?;
    }
    probe::load_when(
        folio_fentry.is_some(),
        [
            &mut p.cs_fentry_add,
            &mut p.cs_fentry_accessed,
            &mut p.cs_fentry_buffer_dirty,
            &mut p.cs_fentry_dirty,
        ],
    );
    probe::load_when(
        page_fentry,
        [
            &mut p.cs_pfentry_add,
            &mut p.cs_pfentry_accessed,
            &mut p.cs_pfentry_dirty,
            &mut p.cs_pfentry_buffer_dirty,
        ],
    );
    let folio_k = kprobes.as_ref().is_some_and(|k| k.folio);
    let page_k = kprobes.as_ref().is_some_and(|k| !k.folio);
    probe::load_when(
        folio_k,
        [&mut p.cs_kprobe_add_folio, &mut p.cs_kprobe_dirty_folio],
    );
    probe::load_when(
        page_k,
        [&mut p.cs_kprobe_add_page, &mut p.cs_kprobe_dirty_page],
    );
    probe::load_when(
        kprobes.is_some(),
        [&mut p.cs_kprobe_accessed, &mut p.cs_kprobe_buffer_dirty],
    );
    let btf = vec![
        &mut p.cs_btf_add,
        &mut p.cs_btf_dirty,
        &mut p.cs_btf_get_pages,
        &mut p.cs_btf_map_pages,
        &mut p.cs_btf_fault,
    ];
    let raw = vec![
        &mut p.cs_raw_add,
        &mut p.cs_raw_dirty,
        &mut p.cs_raw_get_pages,
        &mut p.cs_raw_map_pages,
        &mut p.cs_raw_fault,
    ];
    let storage_maps = vec![&mut m.reads_storage, &mut m.last_added_storage];
    let hash_maps = vec![&mut m.reads, &mut m.last_added];
    if tracepoints {
        let mode = probe::task_state_variant(probe::TaskStateVariants {
            btf,
            raw,
            storage_maps,
            hash_maps,
        })?;
        return Ok((mode, None));
    }
    probe::load_when(false, btf.into_iter().chain(raw));
    // fentry programs keep per-task state in task storage, as tp_btf.
    probe::create_when(folio_fentry.is_some(), storage_maps)?;
    probe::create_when(folio_fentry.is_none(), hash_maps)?;
    let mode = if kprobes.is_some() {
        Hook::Kprobe
    } else {
        Hook::Fentry
    };
    Ok((mode, kprobes))
}
