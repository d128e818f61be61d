//! A stack tool's report files: the SVG flame graph (`--svg`) and the
//! pprof profile (`--pprof`).

use anyhow::{bail, Context, Result};

use crate::export::pprof;
use crate::note;
use crate::output::file::OutFile;
use crate::sym::{self, Stack};

use super::StackArgs;

/// The flame graph's look.
#[derive(Debug, Clone, Copy)]
pub struct Svg {
    pub title: &'static str,
    /// What a stack's value counts (`us`, `bytes`, `samples`).
    pub count_name: &'static str,
    /// Blue for off-CPU, the hot palette for on-CPU and memory.
    pub cold: bool,
    /// A report with no stack is an error (a tool that reports once); else
    /// the file is left as it was, and that is said.
    pub required: bool,
}

/// The pprof profile's sample types: (type, unit) pairs, the default one
/// first.
#[derive(Debug, Clone, Copy)]
pub struct Profile {
    pub sample_types: &'static [(&'static str, &'static str)],
}

/// A stack tool's report files (`--svg`, `--pprof`), created before
/// tracing so that a bad path fails first.
pub struct Outputs {
    svg: Option<(OutFile, Svg)>,
    pprof: Option<(pprof::Output, Profile)>,
}

impl Outputs {
    pub fn open(args: &StackArgs, svg: Svg, profile: Profile) -> Result<Outputs> {
        crate::output::file::distinct_outputs(&[
            ("--svg", args.svg.as_ref()),
            ("--pprof", args.pprof.as_ref()),
        ])?;
        let svg = args.svg.as_ref().map(|path| (path.clone(), svg));
        let pprof = match &args.pprof {
            Some(path) => Some((pprof::Output::create(path)?, profile)),
            None => None,
        };
        Ok(Outputs { svg, pprof })
    }

    /// A report's files: stacks are added to it, and it is written at
    /// [`Report::finish`]. `duration` is how long the tool traced.
    pub fn report(&self, duration: std::time::Duration) -> Report<'_> {
        Report {
            outputs: self,
            folded: Vec::new(),
            profile: self.pprof.as_ref().map(|(_, p)| {
                pprof::Builder::new(
                    p.sample_types,
                    p.sample_types[0].0,
                    duration.as_nanos() as u64,
                )
            }),
        }
    }
}

/// One report's stacks on their way to the files.
pub struct Report<'a> {
    outputs: &'a Outputs,
    folded: Vec<String>,
    profile: Option<pprof::Builder>,
}

impl Report<'_> {
    /// True when any file is asked for.
    pub fn wanted(&self) -> bool {
        self.outputs.svg.is_some() || self.outputs.pprof.is_some()
    }

    /// One stack: `value` in the flame graph, `values` (one per sample
    /// type) and `labels` in the profile.
    pub fn add(
        &mut self,
        stack: &Stack,
        value: u64,
        pid: u32,
        values: &[i64],
        labels: &[pprof::Label],
    ) {
        if self.outputs.svg.is_some() {
            self.folded.push(sym::folded_line(stack, value));
        }
        if let Some(p) = &mut self.profile {
            match stack.joined {
                sym::Joined::Waker(w) => p.add_woken(
                    (stack.kernel, stack.user, pid),
                    (w.kernel, w.user, w.tgid),
                    values,
                    labels,
                ),
                _ => p.add(stack.kernel, stack.user, pid, values, labels),
            }
        }
    }

    /// Writes the files (each replaced whole); `announce`: and says where
    /// (once, at the end, for a tool that writes them every interval).
    pub fn finish(self, announce: bool) -> Result<()> {
        match &self.outputs.svg {
            Some((path, style)) if self.folded.is_empty() => {
                if style.required {
                    bail!("no stacks were recorded: {} not written", path.display());
                }
                note!(
                    "no stacks in this report: {} left as it was",
                    path.display()
                );
            }
            Some((path, style)) => {
                write_svg(path, style, &self.folded)?;
                if announce {
                    note!("flame graph written to {}", path.display());
                }
            }
            None => {}
        }
        if let (Some((output, _)), Some(profile)) = (&self.outputs.pprof, self.profile) {
            output.write(&profile.finish())?;
            if announce {
                note!("profile written to {}", output.path().display());
            }
        }
        Ok(())
    }
}

fn write_svg(path: &OutFile, style: &Svg, folded: &[String]) -> Result<()> {
    use inferno::flamegraph::color::{BackgroundColor, BasicPalette};
    use inferno::flamegraph::{self, Options, Palette};
    let mut options = Options::default();
    options.title = style.title.into();
    options.count_name = style.count_name.into();
    if style.cold {
        options.colors = Palette::Basic(BasicPalette::Blue);
        options.bgcolors = Some(BackgroundColor::Blue);
    }
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut options, folded.iter().map(String::as_str), &mut svg)
        .with_context(|| format!("drawing the flame graph for {}", path.display()))?;
    path.write(&svg)
        .with_context(|| format!("--svg: writing {}", path.display()))
}
