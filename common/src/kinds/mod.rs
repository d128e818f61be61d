//! The kinds of tool, each one's shared part written once: [`event`] tools
//! declare their columns; [`histogram`] tools say what their histograms
//! are, [`stack`] tools what they count, [`table`] tools their rows. Each
//! kind but the event tools' is a [`Pipeline`], which the lifecycle
//! (crate::run::lifecycle) drives without knowing which it is: the
//! schedule, the reports, the outputs.

pub mod event;
pub mod histogram;
pub mod stack;
pub mod table;

use std::os::fd::RawFd;

use anyhow::Result;
use libbpf_rs::{Object, OpenObject};

use crate::export::prom::Counters;
use crate::output::hist::Section;
use crate::output::Out;
use crate::run::schedule::{Schedule, When};

/// What a pipeline asks of its tool (the lifecycle binds the tool and its
/// loaded skeleton).
pub trait Source {
    fn object(&self) -> &Object;
    /// Histogram tools: the histograms the kernel holds, drained (a
    /// report) or left in place (a scrape).
    fn sections(&mut self, drain: bool) -> Result<Vec<Section>>;
    /// Interval-table tools: this interval's rows.
    fn rows(&mut self, when: When) -> Result<Box<dyn table::Print + '_>>;
    /// Interval-table tools: their counters since the start.
    fn metrics(&mut self, asked: table::Asked) -> Result<Counters>;
    /// A tool that reports itself: its report.
    fn report(&mut self, out: &mut Out, when: When) -> Result<()>;
    /// A tool that reports itself: its own descriptor is readable.
    fn ready(&mut self) -> Result<()>;
}

/// A kind's part of a run, from the object's configuration to the last
/// report.
pub trait Pipeline {
    /// The kind, as the registry names kinds; `None`: the tool's own
    /// report (event tools).
    fn kind(&self) -> Option<registry::Kind>;
    /// Before load: the kind's switches and map sizes.
    fn configure(&mut self, _obj: &mut OpenObject) -> Result<()> {
        Ok(())
    }
    /// After load, before attach.
    fn loaded(&mut self, _obj: &Object) -> Result<()> {
        Ok(())
    }
    /// Stdout is read by a program (folded stacks): notes go to stderr.
    fn machine_readable(&self) -> bool {
        false
    }
    /// The kind's own schedule (a stack tool's DURATION); `None`: the
    /// tool's.
    fn schedule(&self) -> Option<Schedule> {
        None
    }
    /// A ring buffer record, where the kind reads them; false: the tool's.
    fn record(&mut self, _data: &[u8]) -> bool {
        false
    }
    /// A descriptor the loop waits on (`--prometheus`'s socket).
    fn fd(&self) -> Option<RawFd> {
        None
    }
    /// `fd` is readable.
    fn serve(&mut self, _src: &mut dyn Source) -> Result<()> {
        Ok(())
    }
    /// Whenever the loop wakes.
    fn idle(&mut self) {}
    /// A report: every interval, and once at the end.
    fn report(&mut self, src: &mut dyn Source, out: &mut Out, when: When) -> Result<()>;
    /// What a non-zero counter of the `errors` map at `index` means, where
    /// the kind's programs count it.
    fn error_note(&self, _index: u32) -> Option<&'static str> {
        None
    }
}

/// What a tool declares of its kind.
pub struct Declared<'a> {
    pub histograms: Option<histogram::Spec<'a>>,
    pub table: Option<table::Spec<'a>>,
    pub stacks: Option<stack::Spec<'a>>,
    /// A tool that reports itself: a descriptor of its own to wait on.
    pub own_fd: Option<RawFd>,
}

/// The pipeline of what a tool declares: the first of histograms, an
/// interval table, stacks; else [`Own`].
pub fn pipeline(d: Declared) -> Result<Box<dyn Pipeline>> {
    // A kind waits on its own descriptors: a tool's would never be read.
    let kind = d.histograms.is_some() || d.table.is_some() || d.stacks.is_some();
    anyhow::ensure!(
        !(kind && d.own_fd.is_some()),
        "a tool of a kind gives its descriptor through the kind's spec, not extra_fd"
    );
    Ok(if let Some(spec) = d.histograms {
        Box::new(histogram::Histograms::open(&spec)?)
    } else if let Some(spec) = d.table {
        Box::new(table::IntervalTable::open(&spec)?)
    } else if let Some(spec) = d.stacks {
        Box::new(stack::Stacks::open(spec)?)
    } else {
        Box::new(Own { fd: d.own_fd })
    })
}

/// The pipeline of a tool that reports itself: its report, its descriptor.
pub struct Own {
    fd: Option<RawFd>,
}

impl Pipeline for Own {
    fn kind(&self) -> Option<registry::Kind> {
        None
    }

    fn fd(&self) -> Option<RawFd> {
        self.fd
    }

    fn serve(&mut self, src: &mut dyn Source) -> Result<()> {
        src.ready()
    }

    fn report(&mut self, src: &mut dyn Source, out: &mut Out, when: When) -> Result<()> {
        src.report(out, when)
    }
}
