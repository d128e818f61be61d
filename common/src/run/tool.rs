//! What a tool is to the lifecycle ([`Tool`]): its options, its variant
//! choice, what its kind needs of it, and its own report where it has one.
//! The kind's pipeline is chosen here, once, from what the tool declares
//! ([`Tool::pipeline`]); the lifecycle drives it without knowing which
//! kind it is.

use std::ffi::OsString;
use std::io;

use anyhow::{Context, Result};
use clap::Parser;
use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use libbpf_rs::{Link, Object};

use crate::export::prom::Counters;
use crate::kernel::filters::Filters;
use crate::kinds::event::Table;
use crate::kinds::{self, histogram, stack, table, Pipeline, Source};
use crate::output::hist;
use crate::output::Out;
use crate::run::schedule::{Schedule, When};

/// The opened (not yet loaded) skeleton of tool `T`.
pub type OpenOf<'o, T> = <<T as Tool>::Builder as SkelBuilder<'o>>::Output;
/// The loaded skeleton of tool `T`.
pub type SkelOf<'o, T> = <OpenOf<'o, T> as OpenSkel<'o>>::Output;

/// What a tool says when it is attached.
pub enum Banner {
    /// A table header on stdout (text mode); in machine-readable mode the
    /// note goes to stderr instead.
    Header { header: String, note: String },
    /// `Tracing ... Hit Ctrl-C to end.`: on stdout, or on stderr when stdout
    /// is read by a program.
    Note(String),
}

/// What the lifecycle knows that a tool's configuration may need.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    /// The pid of the command the tool started (`--exec`, `-c`).
    pub child: Option<u32>,
}

/// What every tool's `impl Tool` names the same way: its `Args`, its
/// skeleton's builder, its `info::INFO`: `common::tool_types!(XSkelBuilder);`
#[macro_export]
macro_rules! tool_types {
    ($builder:ty) => {
        type Args = Args;
        type Builder = $builder;
        const INFO: &'static $crate::run::lifecycle::ToolInfo = &info::INFO;
    };
}

pub use registry::ToolInfo;

/// A tool: its options, variant choice and report.
pub trait Tool: Sized {
    /// The tool's arguments (clap derive, with EXAMPLES).
    type Args: Parser;
    /// The skeleton builder libbpf-cargo generated for the tool.
    type Builder: Default + for<'o> SkelBuilder<'o>;

    /// What the tool says about itself (`src/info.rs`): its name, summary,
    /// banner, man page sections, dry runs and bench.
    const INFO: &'static registry::ToolInfo;

    /// Builds the tool from its arguments: checks that need no BPF.
    fn new(args: Self::Args) -> Result<Self>;

    /// True when stdout is read by a program for a reason of the tool's
    /// own (folded stacks; `--json` is the lifecycle's): notes then go to
    /// stderr.
    fn machine_readable(&self) -> bool {
        false
    }

    /// A command to start and trace (`--exec`, `-c`): forked before the
    /// programs load, held until they are attached.
    fn command(&self) -> Option<Vec<OsString>> {
        None
    }

    /// The shared filters (filters.bpf.h) this tool applies.
    fn filters(&self) -> Filters {
        Filters::default()
    }

    /// Sets the read-only data and map sizes, and chooses the program
    /// variants this kernel can run.
    fn configure(&mut self, open: &mut OpenOf<'_, Self>, setup: &Setup) -> Result<()>;

    /// Whether `-v` is one of the tool's own options (capable's, as BCC's:
    /// non-audit checks too): it then prints the hooks chosen, not libbpf's
    /// log, which would bury the tool's output under hundreds of lines.
    fn verbose_is_own(&self) -> bool {
        false
    }

    /// What the hooks chosen here cannot see, where this kernel lacks the
    /// tool's best (fsslower's system call mode): a note as tracing starts,
    /// and a line of `--dry-run` and `-v`, before the hook notes.
    fn degraded(&self) -> Option<String> {
        None
    }

    /// What `--dry-run` and `-v` say under the hooks, beyond the programs:
    /// a choice made outside BPF (profile's perf event).
    fn hook_notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// The function a program whose section names none attaches to (the
    /// tool attaches it itself): for `--dry-run` and `-v`.
    fn hook_target(&self, _program: &str) -> Option<String> {
        None
    }

    /// After load, before attach: tail calls, maps the tool fills itself.
    fn loaded(&mut self, _skel: &mut SkelOf<'_, Self>) -> Result<()> {
        Ok(())
    }

    /// Attaches the programs; by default every loaded program whose section
    /// names its attach point.
    fn attach(&mut self, skel: &mut SkelOf<'_, Self>) -> Result<Vec<Link>> {
        attach_all(skel.object())
    }

    /// Event tools: the columns of their table ([`Table`]), which give
    /// the banner's header.
    fn table(&self) -> Option<&Table<Self>> {
        None
    }

    /// By default the table's header (event tools), an interval table's
    /// line (BCC's for a top tool), or the description's banner line.
    fn banner(&self) -> Banner {
        if let Some(line) = self.interval_table().and_then(|t| t.banner) {
            return Banner::Note(line);
        }
        match self.table() {
            Some(t) => Banner::Header {
                header: t.header(),
                note: Self::INFO.banner.into(),
            },
            None => Banner::Note(Self::INFO.banner.into()),
        }
    }

    /// By default a histogram tool's `[interval] [count]` (a stack tool's
    /// DURATION is the kind's).
    fn schedule(&self) -> Schedule {
        if let Some(t) = self.interval_table() {
            return Schedule::from(&t);
        }
        self.histograms()
            .map(|h| Schedule::from(&h.args.interval))
            .unwrap_or_default()
    }

    /// Histogram tools: what their histograms are. The lifecycle then
    /// reports them on the schedule, answers scrapes and writes the
    /// exports; the tool reads its maps in [`Tool::sections`].
    fn histograms(&self) -> Option<histogram::Spec<'_>> {
        None
    }

    /// Histogram tools: the histograms the kernel holds, drained (a report)
    /// or left in place (a scrape).
    fn sections(&self, _skel: &SkelOf<'_, Self>, _drain: bool) -> Result<Vec<hist::Section>> {
        // A histogram tool that reads no maps would print empty reports.
        anyhow::bail!(
            "{} declares histograms but reads none (Tool::sections)",
            Self::INFO.name
        )
    }

    /// Stack tools: what they count and how the report looks. The
    /// lifecycle then sets the kernel side's switches, sizes its maps,
    /// unwinds, keeps the processes' maps and reports (kinds::stack).
    fn stacks(&self) -> Option<stack::Spec<'_>> {
        None
    }

    /// Interval-table tools: what their tables are. The lifecycle then
    /// prints their rows every interval (kinds::table).
    fn interval_table(&self) -> Option<table::Spec<'_>> {
        None
    }

    /// Interval-table tools with `--prometheus`/`--prom-file`: their
    /// counters since the start (running totals, never an interval's).
    fn interval_metrics(&mut self, _skel: &SkelOf<'_, Self>, _: table::Asked) -> Result<Counters> {
        Ok(Counters::default())
    }

    /// Interval-table tools: this interval's rows (drained from the
    /// kernel, or what it added to running totals), with their table and
    /// order; `when`: the run's last report or not.
    fn interval_rows<'s>(
        &'s mut self,
        _skel: &SkelOf<'_, Self>,
        _when: When,
    ) -> Result<Box<dyn table::Print + 's>> {
        anyhow::bail!(
            "{} has no rows: it is not an interval-table tool",
            Self::INFO.name
        )
    }

    /// Tracing has ended and the links are detached, before the final
    /// report: what the tool attached itself stops (profile's perf events).
    fn detached(&mut self) {}

    /// One record from the `events` ring buffer (not a stack tool's: the
    /// kind reads those).
    fn event(&mut self, _data: &[u8], _out: &mut Out) -> io::Result<()> {
        Ok(())
    }

    /// A tool that reports itself (no kind's pipeline): a descriptor the
    /// loop waits on too (its `--prometheus` socket). A kind's tools give
    /// theirs through the kind's spec.
    fn extra_fd(&self) -> Option<std::os::fd::RawFd> {
        None
    }

    /// `extra_fd` is readable.
    fn extra_ready(&mut self, _skel: &SkelOf<'_, Self>) -> Result<()> {
        Ok(())
    }

    /// The command (`command`) has been exec'd, as tracing starts.
    fn command_started(&mut self, _pid: u32) {}

    /// Called whenever the loop wakes (at least every 100 ms); true ends
    /// tracing, with a final report (memleak: every traced process is gone).
    fn idle(&mut self) -> bool {
        false
    }

    /// Prints a report: every interval, and once at the end.
    fn report(&mut self, _skel: &SkelOf<'_, Self>, _out: &mut Out, _when: When) -> Result<()> {
        Ok(())
    }

    /// What a non-zero counter at `index` of the kernel side's `errors`
    /// map means (the tool's error enum).
    fn error_note(&self, _index: u32) -> Option<&'static str> {
        None
    }

    /// The pipeline of the tool's kind, chosen once from what it declares:
    /// histograms, an interval table or stacks; else its own report.
    fn pipeline(&self) -> Result<Box<dyn Pipeline>> {
        kinds::pipeline(kinds::Declared {
            histograms: self.histograms(),
            table: self.interval_table(),
            stacks: self.stacks(),
            own_fd: self.extra_fd(),
        })
    }
}

/// A tool and its loaded skeleton, as its pipeline asks them.
pub(crate) struct Bound<'a, 'o, T: Tool> {
    pub tool: &'a mut T,
    pub skel: &'a SkelOf<'o, T>,
}

impl<T: Tool> Source for Bound<'_, '_, T> {
    fn object(&self) -> &Object {
        self.skel.object()
    }

    fn sections(&mut self, drain: bool) -> Result<Vec<hist::Section>> {
        self.tool.sections(self.skel, drain)
    }

    fn rows(&mut self, when: When) -> Result<Box<dyn table::Print + '_>> {
        self.tool.interval_rows(self.skel, when)
    }

    fn metrics(&mut self, asked: table::Asked) -> Result<Counters> {
        self.tool.interval_metrics(self.skel, asked)
    }

    fn report(&mut self, out: &mut Out, when: When) -> Result<()> {
        self.tool.report(self.skel, out, when)
    }

    fn ready(&mut self) -> Result<()> {
        self.tool.extra_ready(self.skel)
    }
}

/// Attaches every loaded program whose section names its attach point
/// (`tp_btf/sched_switch`); programs without one (tail calls, uprobes the
/// tool attaches itself) are left alone.
pub fn attach_all(obj: &Object) -> Result<Vec<Link>> {
    let mut links = Vec::new();
    for prog in obj.progs_mut() {
        if !prog.autoload() || !prog.section().to_string_lossy().contains('/') {
            continue;
        }
        let link = prog.attach().with_context(|| {
            format!(
                "attaching {} ({})",
                prog.name().to_string_lossy(),
                prog.section().to_string_lossy()
            )
        })?;
        links.push(link);
    }
    Ok(links)
}
