//! The histogram tools' kind: a tool says what its histograms are
//! ([`Spec`], from [`crate::run::lifecycle::Tool::histograms`]) and makes
//! sections of what [`read_maps`] reads from its maps
//! ([`crate::run::lifecycle::Tool::sections`]); the report on its
//! schedule, the percentiles, `--hdr-log`, `--prometheus` and `--prom-file`
//! are done here, once for every such tool.

use std::collections::HashMap;

use anyhow::Result;
use libbpf_rs::MapCore;

use crate::cli::HistogramArgs;
use crate::output::hist::{print_report, Section, Style};
use crate::output::Out;
use crate::run::schedule::When;

/// One histogram as a tool's map holds it, and its fine twin (the map of
/// the same keys that --percentiles and --hdr-log fill).
pub struct Entry<K, H, F> {
    pub key: K,
    pub hist: Box<H>,
    pub fine: Option<Box<F>>,
}

/// A tool's histogram map `coarse` and, where `fine` is given (the tool
/// asked for fine slots), its fine twin, each histogram with its twin,
/// sorted by `order` of its key; drained (a report) or left in place (a
/// scrape between reports).
pub fn read_maps<K, H, F, O>(
    coarse: &dyn MapCore,
    fine: Option<&dyn MapCore>,
    drain: bool,
    order: impl Fn(&K) -> O,
) -> Result<Vec<Entry<K, H, F>>>
where
    K: plain::Plain + Default,
    H: plain::Plain + Default,
    F: plain::Plain + Default,
    O: Ord,
{
    let hists = crate::kernel::maps::read_as(coarse, drain)?;
    let fine = match fine {
        Some(map) => crate::kernel::maps::read_as(map, drain)?,
        None => Vec::new(),
    };
    Ok(join(hists, fine, order))
}

/// Each histogram with the fine one of the same key: the same bytes, as
/// the kernel's hash maps compare keys.
fn join<K: plain::Plain, H, F, O: Ord>(
    hists: Vec<(K, Box<H>)>,
    fine: Vec<(K, Box<F>)>,
    order: impl Fn(&K) -> O,
) -> Vec<Entry<K, H, F>> {
    fn bytes<K: plain::Plain>(key: &K) -> Vec<u8> {
        // SAFETY: keys are decoded from a map's key bytes, each byte of
        // them written (padding too); a plain type has no invalid bytes.
        unsafe { plain::as_bytes(key) }.to_vec()
    }
    let mut fine: HashMap<Vec<u8>, Box<F>> =
        fine.into_iter().map(|(k, f)| (bytes(&k), f)).collect();
    let mut entries: Vec<Entry<K, H, F>> = hists
        .into_iter()
        .map(|(key, hist)| Entry {
            fine: fine.remove(&bytes(&key)),
            key,
            hist,
        })
        .collect();
    entries.sort_by_key(|e| order(&e.key));
    entries
}

/// What a histogram tool's histograms are.
pub struct Spec<'a> {
    /// The shared options: percentiles, outputs, `[interval] [count]`.
    pub args: &'a HistogramArgs,
    pub json: bool,
    /// The histogram in words (`runqlat, run queue latency`), for --hdr-log.
    pub what: &'static str,
    /// Its metric name and help, for --prometheus.
    pub metric: &'static str,
    pub help: &'static str,
    /// What the kernel counts: microseconds, milliseconds (-m), Kbytes.
    pub unit: Unit,
    /// A time line before each report (-T).
    pub timestamp: bool,
    /// Average, total and count under each histogram (-e).
    pub extension: bool,
    /// How the reports look: log2 histograms, linear ones, a table of
    /// totals, occupancy.
    pub layout: Layout,
}

pub use crate::output::hist::{Layout, Totals, Unit};

/// `--per-container`: names each histogram's cgroup, from the id the kernel
/// keyed it by. The names of a cgroup are kept once seen, so a container
/// gone before the report keeps its name.
#[derive(Default)]
pub struct Containers {
    resolver: std::cell::RefCell<crate::kernel::cgroups::Resolver>,
}

impl Containers {
    /// Adds the labels of cgroup `id` (`cgroup_id`, and `cgroup`,
    /// `container`, `pod`, `unit` where known) and returns the section's
    /// title: `container = ` what the CONTAINER column shows.
    pub fn label(
        &self,
        id: u64,
        labels: &mut serde_json::Map<String, serde_json::Value>,
    ) -> String {
        use crate::kernel::cgroups;
        let names = self.resolver.borrow_mut().names(id);
        cgroups::add_json(labels, id, names.as_deref());
        let shown = cgroups::shown(id, names.as_deref());
        format!("container = {}", crate::output::escape(shown.as_bytes()))
    }
}

/// A histogram tool's reports and exports, opened before tracing.
pub struct Histograms {
    style: Style<'static>,
    hdr_log: Option<crate::export::hdrlog::HdrLog>,
    metrics: crate::export::prom::Metrics,
}

impl Histograms {
    /// Opens the outputs (a bad --hdr-log path or --prometheus address is
    /// an error here, before anything is loaded).
    pub fn open(spec: &Spec) -> Result<Histograms> {
        let unit = spec.unit.label();
        crate::output::file::distinct_outputs(&[
            ("--hdr-log", spec.args.hdr_log.as_ref()),
            ("--prom-file", spec.args.metrics.prom_file.as_ref()),
        ])?;
        let hdr_log = spec
            .args
            .hdr_log
            .as_ref()
            .map(|p| crate::export::hdrlog::HdrLog::create(p, &format!("{} in {unit}", spec.what)))
            .transpose()?;
        Ok(Histograms {
            style: Style {
                unit,
                json: spec.json,
                timestamp: spec.timestamp,
                extension: spec.extension,
                layout: spec.layout,
            },
            hdr_log,
            metrics: crate::export::prom::Metrics::new(
                match spec.layout {
                    // runqlen -O's slots are its queue lengths too.
                    Layout::Occupancy => {
                        crate::export::prom::Histograms::new(spec.metric, spec.help, spec.unit)
                            .linear(1)
                    }
                    Layout::Linear { step, .. } => {
                        crate::export::prom::Histograms::new(spec.metric, spec.help, spec.unit)
                            .linear(step)
                    }
                    _ => crate::export::prom::Histograms::new(spec.metric, spec.help, spec.unit),
                },
                spec.args.metrics.exporter()?,
            ),
        })
    }
}

impl super::Pipeline for Histograms {
    fn kind(&self) -> Option<registry::Kind> {
        Some(registry::Kind::Histogram)
    }

    /// A report of the (drained) histograms: printed, then logged and
    /// added to the metrics.
    fn report(&mut self, src: &mut dyn super::Source, out: &mut Out, _: When) -> Result<()> {
        let sections = src.sections(true)?;
        print_report(out, &self.style, &sections)?;
        if let Some(log) = &mut self.hdr_log {
            log.write(&sections)?;
        }
        self.metrics.reported(&sections)
    }

    /// --prometheus's socket, for the loop to wait on.
    fn fd(&self) -> Option<std::os::fd::RawFd> {
        self.metrics.fd()
    }

    /// Answers the scrapes waiting with what the kernel holds, left in
    /// place.
    fn serve(&mut self, src: &mut dyn super::Source) -> Result<()> {
        self.metrics.serve(|| src.sections(false))
    }
}

/// What a scheduler histogram tool keys its histograms by (runqlat's and
/// cpudist's -P, -L, --pidnss, --per-container).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    All,
    Pid,
    Tid,
    Pidns,
    Container,
}

impl Key {
    /// The key the options ask for: the first given of --per-container,
    /// -P, -L and --pidnss (clap lets only one through).
    pub fn chosen(per_container: bool, pids: bool, tids: bool, pidnss: bool) -> Key {
        [
            (per_container, Key::Container),
            (pids, Key::Pid),
            (tids, Key::Tid),
            (pidnss, Key::Pidns),
        ]
        .into_iter()
        .find_map(|(on, key)| on.then_some(key))
        .unwrap_or(Key::All)
    }
}

/// One histogram as the kernel keeps it by [`Key`]: with the comm it saw
/// first (processes and threads) and its fine slots (--percentiles).
pub struct Keyed<'a> {
    pub key: u64,
    pub slots: &'a [u32],
    pub count: u64,
    pub total: u64,
    pub comm: &'a [i8],
    pub fine: Option<&'a [u32]>,
}

/// The [`Keyed`] of an [`Entry`] whose histogram has the scheduler tools'
/// shape (`hist.slots`, `hist.count`, `hist.total`, `comm`; runqlat's and
/// cpudist's generated types), with its fine slots.
#[macro_export]
macro_rules! keyed_entry {
    ($e:expr) => {
        $crate::kinds::histogram::Keyed {
            key: $e.key,
            slots: &$e.hist.hist.slots,
            count: $e.hist.hist.count,
            total: $e.hist.hist.total,
            comm: &$e.hist.comm,
            fine: $e.fine.as_ref().map(|f| &f.slots[..]),
        }
    };
}

/// The sections of histograms kept by [`Key`], titled as BCC titles them
/// (`pid = 42 bash`: the live comm, else the one the kernel kept).
pub fn keyed_sections<'a>(
    hists: impl IntoIterator<Item = Keyed<'a>>,
    by: Key,
    containers: &Containers,
    percentiles: bool,
) -> Vec<Section> {
    use crate::output::{c_string, escape};
    use serde_json::{Map, Value};
    hists
        .into_iter()
        .map(|h| {
            let mut labels = Map::new();
            let title = match by {
                Key::All => None,
                Key::Container => Some(containers.label(h.key, &mut labels)),
                Key::Pidns => {
                    labels.insert("pidns".into(), Value::from(h.key));
                    Some(format!("pidns = {}", h.key))
                }
                Key::Pid | Key::Tid => {
                    let kind = if by == Key::Pid { "pid" } else { "tid" };
                    labels.insert(kind.into(), Value::from(h.key));
                    let comm =
                        crate::run::process::comm(h.key as u32).unwrap_or_else(|| c_string(h.comm));
                    let title = format!("{kind} = {} {}", h.key, escape(comm.as_bytes()));
                    labels.insert("comm".into(), Value::from(comm));
                    Some(title)
                }
            };
            Section {
                title,
                labels,
                slots: h.slots.to_vec(),
                count: h.count,
                total: h.total,
                ..Default::default()
            }
            .with_fine(h.fine, percentiles)
        })
        .collect()
}

/// What the interrupt tools (softirqs, hardirqs) share: their checks, the
/// look of their reports and their sections.
pub mod irq {
    use anyhow::Result;

    use super::{Layout, Section, Spec, Totals, Unit};
    use crate::cli::{HistogramArgs, IrqArgs};

    /// An interrupt belongs to no container: --per-container is refused;
    /// percentiles and HDR logs are of histograms, which only -d makes.
    pub fn check(hist: &HistogramArgs, irq: &IrqArgs, what: &str) -> Result<()> {
        if hist.per_container {
            return Err(crate::usage::usage(format!(
                "--per-container: {what} run in no container's name (they interrupt \
                 whatever runs)"
            )));
        }
        let histogram_only = [
            ("--percentiles", hist.percentiles),
            ("--hdr-log", hist.hdr_log.is_some()),
        ];
        if let Some((option, _)) = histogram_only.iter().find(|(_, on)| *on && !irq.dist) {
            return Err(crate::usage::usage(format!(
                "{option} needs -d: without it there are totals, no histograms"
            )));
        }
        Ok(())
    }

    /// BCC's reports: a table of totals (`SOFTIRQ TOTAL_usecs`, or with
    /// -C `TOTAL_count`), or with -d a histogram per kind.
    #[allow(clippy::too_many_arguments)]
    pub fn spec<'a>(
        irq: &IrqArgs,
        hist: &'a HistogramArgs,
        json: bool,
        what: &'static str,
        metric: &'static str,
        help: &'static str,
        header: &'static str,
        label: &'static str,
    ) -> Spec<'a> {
        Spec {
            args: hist,
            json,
            what,
            metric,
            help,
            unit: if irq.nanoseconds {
                Unit::Nsecs
            } else {
                Unit::Usecs
            },
            timestamp: irq.timestamp,
            extension: false,
            layout: if irq.dist {
                Layout::Log2
            } else {
                Layout::Totals(Totals {
                    header,
                    label,
                    counts: irq.events,
                })
            },
        }
    }

    /// BCC's banner: `Tracing soft irq event time... Hit Ctrl-C to end.`
    /// (`events` with -C).
    pub fn banner(irq: &IrqArgs, kind: &str) -> String {
        let what = if irq.events { "events" } else { "event time" };
        format!("Tracing {kind} irq {what}... Hit Ctrl-C to end.")
    }

    /// One kind's section, from its histogram as the kernel keeps it: the
    /// total in nanoseconds (no truncation per run), shown in the unit.
    pub fn section(
        irq: &IrqArgs,
        hist: &HistogramArgs,
        title: String,
        labels: serde_json::Map<String, serde_json::Value>,
        (slots, count, total_ns): (&[u32], u64, u64),
        fine: Option<&[u32]>,
    ) -> Section {
        let div = if irq.nanoseconds { 1 } else { 1000 };
        Section {
            title: Some(title),
            labels,
            slots: slots.to_vec(),
            count,
            total: total_ns / div,
            ..Default::default()
        }
        .with_fine(fine, hist.percentiles)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::output::hist::{print_log2, print_percentiles};

    #[derive(Default, Clone, Copy)]
    #[repr(C)]
    struct Hist {
        slots: [u32; 6],
        count: u64,
        total: u64,
    }
    // SAFETY: repr(C) integers, valid for any bytes.
    unsafe impl plain::Plain for Hist {}

    #[derive(Default, Clone, Copy)]
    #[repr(C)]
    struct Fine {
        slots: [u32; 32],
    }
    // SAFETY: as above.
    unsafe impl plain::Plain for Fine {}

    /// Two histograms read in the map's order, a fine twin for one of them
    /// and one whose histogram is gone (drained between the two reads):
    /// sections in key order, each with its own percentiles.
    #[test]
    fn histograms_join_their_fine_twins_by_key_and_print_in_key_order() {
        let hist = |slots: [u32; 6]| {
            let count = slots.iter().map(|&s| u64::from(s)).sum();
            Box::new(Hist {
                slots,
                count,
                total: 0,
            })
        };
        let hists = vec![
            (7u64, hist([0, 1, 3, 0, 0, 0])),
            (3, hist([0, 0, 0, 4, 0, 1])),
        ];
        let mut seven = Fine::default();
        seven.slots[2] = 1;
        seven.slots[5] = 3;
        let fine = vec![(9u64, Box::new(Fine::default())), (7, Box::new(seven))];
        let entries = join(hists, fine, |k| *k);
        let keyed = entries.iter().map(|e| Keyed {
            key: e.key,
            slots: &e.hist.slots,
            count: e.hist.count,
            total: e.hist.total,
            comm: &[],
            fine: e.fine.as_ref().map(|f| &f.slots[..]),
        });
        let sections = keyed_sections(keyed, Key::Pidns, &Containers::default(), true);
        let mut out = Vec::new();
        for s in &sections {
            writeln!(out, "\n{}", s.title.as_deref().unwrap_or_default()).unwrap();
            print_log2(&mut out, &s.slots, "usecs").unwrap();
            if let Some(p) = &s.percentiles {
                print_percentiles(&mut out, p, "usecs").unwrap();
            }
        }
        let golden = "
pidns = 3
     usecs               : count    distribution
         0 -> 1          : 0        |                                        |
         2 -> 3          : 0        |                                        |
         4 -> 7          : 0        |                                        |
         8 -> 15         : 4        |****************************************|
        16 -> 31         : 0        |                                        |
        32 -> 63         : 1        |**********                              |

pidns = 7
     usecs               : count    distribution
         0 -> 1          : 0        |                                        |
         2 -> 3          : 1        |*************                           |
         4 -> 7          : 3        |****************************************|
";
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with(golden), "{text}");
        let last = text[golden.len()..].trim();
        assert_eq!(
            last, "percentiles (usecs): p50 5  p90 5  p99 5  p99.9 5  max 5",
            "{text}"
        );
    }
}
