//! The histogram tools' kind: a tool says what its histograms are
//! ([`Spec`], from [`crate::run::lifecycle::Tool::histograms`]) and reads them from
//! its maps ([`crate::run::lifecycle::Tool::sections`]); the report on its
//! schedule, the percentiles, `--hdr-log`, `--prometheus` and `--prom-file`
//! are done here, once for every such tool.

use anyhow::Result;

use crate::cli::HistogramArgs;
use crate::output::hist::{print_report, Section, Style};
use crate::output::Out;

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
}

pub use crate::output::hist::Unit;

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
        crate::output::file::one_on_stdout(&[
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
            },
            hdr_log,
            metrics: crate::export::prom::Metrics::new(
                crate::export::prom::Histograms::new(spec.metric, spec.help, spec.unit),
                spec.args.metrics.exporter()?,
            ),
        })
    }

    /// A report of the (drained) histograms: printed, then logged and
    /// added to the metrics.
    pub fn report(&mut self, out: &mut Out, sections: &[Section]) -> Result<()> {
        print_report(out, &self.style, sections)?;
        if let Some(log) = &mut self.hdr_log {
            log.write(sections)?;
        }
        self.metrics.reported(sections)
    }

    /// --prometheus's socket, for the loop to wait on.
    pub fn fd(&self) -> Option<std::os::fd::RawFd> {
        self.metrics.fd()
    }

    /// Answers the scrapes waiting; `current` reads what the kernel holds.
    pub fn serve(&self, current: impl FnMut() -> Result<Vec<Section>>) -> Result<()> {
        self.metrics.serve(current)
    }
}
