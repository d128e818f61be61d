//! slabratetop: top for the kernel's slab caches: allocations and bytes
//! per cache each interval (BCC's and libbpf-tools' slabratetop), from the
//! kmem_cache_alloc tracepoint where it names the cache (6.1+), else a
//! kprobe on kmem_cache_alloc, else by call site.

mod info;

use std::collections::HashMap;

use anyhow::Result;
use clap::{Parser, ValueEnum};
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList, TopArgs};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, load_when, Hook};
use common::kinds::event::{Column, Table};
use common::kinds::table::{self, Timed};
use common::output::c_string;
use common::run::lifecycle::{self, Setup, SkelOf, Tool, When};
use common::sym::Symbolizer;
use libbpf_rs::skel::Skel;
use libbpf_rs::Link;

common::skeleton!("slabratetop");
use skel::{types, OpenSlabratetopSkel, SlabratetopSkelBuilder};

// SAFETY: repr(C) structs of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::slab_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::slab_total {}

const EXAMPLES: &str = "\
EXAMPLES:
    slabratetop            # slab rate top, refresh every 1s
    slabratetop -p 181     # only allocations by process 181
    slabratetop -s count   # sort by allocations
    slabratetop -r 100     # print 100 rows
    slabratetop -C 5 10    # 5s summaries, 10 times, the screen not cleared
    slabratetop --containers  # per cache and container
    slabratetop --json 1 3 | jq .";

/// Slab cache allocation top: allocations and bytes per kernel slab cache
/// each interval.
#[derive(Parser, Debug)]
#[command(name = "slabratetop", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Sort by: size (bytes), count (allocations) or name
    #[arg(short = 's', long, value_enum, default_value_t = Sort::Size)]
    sort: Sort,
    /// Only allocations by these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    top: TopArgs,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Sort {
    #[value(alias = "bytes")]
    Size,
    #[value(alias = "allocs")]
    Count,
    #[value(alias = "cache")]
    Name,
}

/// How allocations reach us.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// The tracepoint's kmem_cache (6.1+), by this hook.
    Tracepoint(Hook),
    /// A kprobe on this kernel's kmem_cache_alloc.
    Kprobe(&'static str),
    /// The tracepoint of before 6.1: by call site.
    CallSite,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Slabratetop>();

/// One row: the kernel's key and totals, and the cache's (or call site's)
/// name.
type Row = table::Entry<types::slab_key, types::slab_total, String>;

pub(crate) struct Slabratetop {
    args: Args,
    source: Source,
    cgroups: table::Cgroups,
    table: Table<Timed<Row>>,
    symbolizer: Symbolizer,
}

impl Tool for Slabratetop {
    common::tool_types!(SlabratetopSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        Ok(Slabratetop {
            table: table(args.common.json, "CACHE").containers(args.containers.containers),
            cgroups: table::Cgroups::new(args.containers.containers),
            args,
            source: Source::CallSite,
            symbolizer: Symbolizer::with_source_lines(false),
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenSlabratetopSkel<'_>, _: &Setup) -> Result<()> {
        let names_cache = probe::btf_tracepoint_arg_struct("kmem_cache_alloc", 2)
            .is_some_and(|s| s == "kmem_cache");
        let tracepoint = names_cache
            .then(|| probe::pick(&[Hook::TpBtf, Hook::RawTp]))
            .flatten();
        let kprobe = ["kmem_cache_alloc", "kmem_cache_alloc_noprof"]
            .into_iter()
            .find(|f| probe::kprobe_target(f));
        // Before 6.1 the tracepoint passes sizes where it now passes the
        // cache: its call-site programs read the old arguments.
        let old_tracepoint = !names_cache
            && probe::btf_tracepoint_exists("kmem_cache_alloc")
            && probe::pick(&[Hook::RawTp]).is_some();
        self.source = match (tracepoint, kprobe) {
            (Some(hook), _) => Source::Tracepoint(hook),
            (None, Some(f)) => Source::Kprobe(f),
            (None, None) if old_tracepoint => Source::CallSite,
            (None, None) => anyhow::bail!(
                "slabratetop needs the kmem:kmem_cache_alloc tracepoint (tp_btf or raw_tp) or \
                 a kprobe on kmem_cache_alloc, and this kernel offers neither"
            ),
        };
        if self.source == Source::CallSite {
            self.table = table(self.args.common.json, "CALL SITE")
                .containers(self.args.containers.containers);
        }
        let p = &mut open.progs;
        load_when(
            self.source == Source::Tracepoint(Hook::TpBtf),
            [&mut p.cache_btf],
        );
        load_when(
            self.source == Source::Tracepoint(Hook::RawTp),
            [&mut p.cache_raw],
        );
        load_when(
            matches!(self.source, Source::Kprobe(_)),
            [&mut p.cache_kprobe],
        );
        load_when(
            self.source == Source::CallSite,
            [&mut p.site_raw, &mut p.site_node_raw],
        );
        if self.source == Source::CallSite && !probe::btf_tracepoint_exists("kmem_cache_alloc_node")
        {
            load_when(false, [&mut p.site_node_raw]);
        }
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.by_cgroup = self.args.containers.containers;
        Ok(())
    }

    fn degraded(&self) -> Option<String> {
        (self.source == Source::CallSite).then(|| {
            "kmem_cache_alloc's tracepoint names no cache before Linux 6.1 and there are no \
             kprobes: allocations by call site"
                .into()
        })
    }

    fn hook_target(&self, program: &str) -> Option<String> {
        match (program, self.source) {
            ("cache_kprobe", Source::Kprobe(f)) => Some(f.into()),
            _ => None,
        }
    }

    fn attach(&mut self, skel: &mut SkelOf<'_, Self>) -> Result<Vec<Link>> {
        let mut links = lifecycle::attach_all(skel.object())?;
        if let Source::Kprobe(f) = self.source {
            links.push(skel.progs.cache_kprobe.attach_kprobe(false, f)?);
        }
        Ok(links)
    }

    fn interval_table(&self) -> Option<table::Spec<'_>> {
        Some(table::Spec::top(
            &self.args.top,
            self.args.common.json,
            true,
        ))
    }

    /// The totals the kernel summed since the last report, drained; call
    /// sites merged by function.
    fn interval_rows<'s>(
        &'s mut self,
        skel: &SkelOf<'_, Self>,
        _: When,
    ) -> Result<Box<dyn table::Print + 's>> {
        let totals: Vec<(types::slab_key, Box<types::slab_total>)> =
            maps::read_as(&skel.maps.totals, true)?;
        // The cgroup is in the key (the allocating task's).
        let mut rows: Vec<Row> = self.cgroups.entries(totals, |k, _| k.cgroup_id);
        for row in &mut rows {
            row.extra = if self.source == Source::CallSite {
                let f = self.symbolizer.kernel(&[row.key.call_site]);
                f.first()
                    .map_or_else(|| format!("{:#x}", row.key.call_site), |f| f.label(false))
            } else {
                c_string(&row.value.name)
            };
        }
        if self.source == Source::CallSite {
            rows = merge_by_name(rows);
        }
        let by = self.args.sort;
        Ok(Box::new(table::Rows::new(
            rows,
            &self.table,
            move |a, b| order(a, b, by),
        )))
    }
}

/// Rows of one name and cgroup (call sites of one function) as one.
fn merge_by_name(rows: Vec<Row>) -> Vec<Row> {
    let mut merged: HashMap<(String, u64), Row> = HashMap::new();
    for r in rows {
        match merged.entry((r.extra.clone(), r.cgroup.id)) {
            std::collections::hash_map::Entry::Occupied(mut o) => {
                o.get_mut().value.count += r.value.count;
                o.get_mut().value.bytes += r.value.bytes;
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(r);
            }
        }
    }
    merged.into_values().collect()
}

/// libbpf-tools' orders: the most bytes (or allocations) first, or by
/// name (case-insensitive); ties by name.
fn order(a: &Row, b: &Row, by: Sort) -> std::cmp::Ordering {
    let name = |r: &Row| r.extra.to_lowercase();
    match by {
        Sort::Size => b.value.bytes.cmp(&a.value.bytes),
        Sort::Count => b.value.count.cmp(&a.value.count),
        Sort::Name => std::cmp::Ordering::Equal,
    }
    .then_with(|| name(a).cmp(&name(b)))
}

/// libbpf-tools' columns: CACHE ALLOCS BYTES (the call site's function for
/// CACHE where the cache is not known).
fn table(json: bool, first: &'static str) -> Table<Timed<Row>> {
    let key = if first == "CACHE" {
        "cache"
    } else {
        "call_site"
    };
    table::top_table::<Row>(json).columns([
        Column::new(first, 32, key, |t| t.row.extra.as_str().into()),
        Column::right("ALLOCS", 6, "allocs", |t| t.row.value.count.into()),
        Column::right("BYTES", 10, "bytes", |t| t.row.value.bytes.into()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, count: u64, bytes: u64) -> Row {
        Row {
            key: types::slab_key::default(),
            value: types::slab_total {
                count,
                bytes,
                ..Default::default()
            },
            extra: name.into(),
            cgroup: table::Cgroup::default(),
        }
    }

    #[test]
    fn sorts_as_libbpf_tools() {
        let mut rows = [
            row("filp", 10, 2560),
            row("dentry", 20, 3840),
            row("Acpi", 5, 100),
        ];
        rows.sort_by(|a, b| order(a, b, Sort::Size));
        assert_eq!(rows[0].extra, "dentry");
        rows.sort_by(|a, b| order(a, b, Sort::Count));
        assert_eq!(rows[0].extra, "dentry");
        rows.sort_by(|a, b| order(a, b, Sort::Name));
        let names: Vec<&str> = rows.iter().map(|r| r.extra.as_str()).collect();
        assert_eq!(names, ["Acpi", "dentry", "filp"]);
    }

    #[test]
    fn call_sites_of_one_function_merge() {
        let rows = merge_by_name(vec![row("f", 1, 8), row("g", 2, 16), row("f", 3, 24)]);
        let f = rows.iter().find(|r| r.extra == "f").unwrap();
        assert_eq!((f.value.count, f.value.bytes), (4, 32));
        assert_eq!(rows.len(), 2);
    }

    #[test]
    fn header_is_libbpf_tools() {
        assert_eq!(
            table(false, "CACHE").header().trim_end(),
            "CACHE                            ALLOCS      BYTES"
        );
        let a =
            Args::try_parse_from(["slabratetop", "-s", "count", "-r", "100", "5", "10"]).unwrap();
        assert_eq!((a.sort, a.top.rows), (Sort::Count, 100));
        assert!(Args::try_parse_from(["slabratetop", "-s", "pages"]).is_err());
    }
}
