//! The stack tools' kind: the stack options (`--stack-storage-size`,
//! `--perf-max-stack-depth`, `--unwind`, `--stack-copy-size`, `-f`,
//! `--svg`, `--pprof`), sizing the stack map and the copy slots, the notes
//! for the stack map's failures (stacks.h), and the reports' files: the
//! SVG flame graph and the pprof profile. The stack formats themselves are
//! in [`crate::stacks::sym`].

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use libbpf_rs::OpenMapMut;

use crate::export::pprof;
use crate::kernel::maps;
use crate::note;
use crate::output::file::OutFile;
use crate::skel::types::stack_error as E;
use crate::skel::types::stack_limits;
use crate::stacks::sym::{self, Stack};
use crate::stacks::unwind::UnwindArgs;

/// The deepest stack `--perf-max-stack-depth` takes.
pub const MAX_STACK_DEPTH: u32 = stack_limits::MAX_STACK_DEPTH.0;

/// What every stack tool takes.
#[derive(clap::Args, Debug, Clone)]
pub struct StackArgs {
    /// The number of unique stack traces that can be stored
    #[arg(long, value_name = "N", default_value_t = 16384,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub stack_storage_size: u32,
    /// The limit for both kernel and user stack traces
    #[arg(long, value_name = "DEPTH", default_value_t = 127,
          value_parser = clap::value_parser!(u32).range(1..=MAX_STACK_DEPTH as i64))]
    pub perf_max_stack_depth: u32,
    #[command(flatten)]
    pub unwind: UnwindArgs,
    /// Output folded format, one line per stack (for flame graphs)
    #[arg(short = 'f', long, conflicts_with = "json")]
    pub folded: bool,
    /// Also write a flame graph of each report to FILE (SVG; - for
    /// standard output)
    #[arg(long, value_name = "FILE")]
    pub svg: Option<OutFile>,
    /// Also write each report to FILE as a pprof profile (gzipped
    /// profile.proto, every stack, labelled with comm and pid), for go tool
    /// pprof, Pyroscope, Parca or Grafana (- for standard output)
    #[arg(long, value_name = "FILE")]
    pub pprof: Option<OutFile>,
}

impl StackArgs {
    /// Whether user stacks are unwound from copies (`--unwind`, auto judged
    /// from the executables of the processes or threads named): never when
    /// no user stack is shown.
    pub fn dwarf(&self, user_stacks: bool, ids: Option<&crate::cli::IdList>) -> bool {
        if !user_stacks {
            return false;
        }
        let exes: Vec<PathBuf> = ids
            .map(|ids| {
                ids.0
                    .iter()
                    .map(|p| crate::stacks::unwind::executable_of(*p))
                    .collect()
            })
            .unwrap_or_default();
        crate::stacks::unwind::choose(self.unwind.unwind, &exes)
    }

    /// Sizes the stack map (checked against the memory available) and
    /// `--unwind dwarf`'s copy slots before load.
    pub fn size_maps(
        &self,
        stack_map: &mut OpenMapMut,
        copies: &mut OpenMapMut,
        dwarf: bool,
    ) -> Result<()> {
        maps::size_stack_map(
            stack_map,
            self.stack_storage_size,
            self.perf_max_stack_depth,
        )?;
        maps::size_user_stack_copies(copies, dwarf)
    }
}

/// What a non-zero counter of the stack map's failures means (the first
/// values of a stack tool's error enum); None for the tool's own.
pub fn error_note(index: u32) -> Option<&'static str> {
    Some(match E(index) {
        E::ERR_STACK_COLLISION => {
            "stacks not recorded: hash collisions in the stack map (raise --stack-storage-size)"
        }
        E::ERR_STACK_FULL => {
            "stacks not recorded: the stack map was full (raise --stack-storage-size)"
        }
        E::ERR_STACK_USER_FAULT => {
            "user stacks could not be read (no frame pointers, or paged out)"
        }
        E::ERR_STACK_OTHER => "stacks not recorded for another error",
        _ => return None,
    })
}

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
        crate::output::file::one_on_stdout(&[
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
            p.add(stack.kernel, stack.user, pid, values, labels);
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

/// Keeps the memory map of each process whose user stacks the kernel side
/// recorded (seenpids.bpf.h's `seen_pids`, emptied here), so that its
/// stacks still have names when it has exited by the report. Every stack
/// tool that symbolizes the stack map's user stacks at its report uses it.
#[derive(Default)]
pub struct ProcessKeeper {
    seen: Option<libbpf_rs::MapHandle>,
    kept: std::collections::HashSet<u32>,
    checked: Option<std::time::Instant>,
}

impl ProcessKeeper {
    /// Starts reading the kernel side's `seen_pids` map.
    pub fn watch(&mut self, seen_pids: libbpf_rs::MapHandle) {
        self.seen = Some(seen_pids);
    }

    /// At most once a second (call it whenever the loop wakes): keeps the
    /// maps of the processes seen for the first time.
    pub fn poll(&mut self, symbolizer: &mut sym::Symbolizer) {
        use libbpf_rs::MapCore;
        let Some(seen) = &self.seen else { return };
        if self
            .checked
            .is_some_and(|t| t.elapsed() < std::time::Duration::from_secs(1))
        {
            return;
        }
        self.checked = Some(std::time::Instant::now());
        let pids: Vec<u32> = seen
            .keys()
            .filter_map(|k| Some(u32::from_ne_bytes(k.get(..4)?.try_into().ok()?)))
            .collect();
        for pid in pids {
            let _ = seen.delete(&pid.to_ne_bytes());
            if self.kept.insert(pid) {
                symbolizer.keep_process(pid);
            }
        }
    }
}

/// Where a count's user stack is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum User {
    /// In the kernel's stack map: its id; -1 for none, another negative
    /// id for the stack map's failure.
    Map(i32),
    /// None wanted (a kernel thread, -K).
    Absent,
    /// Its copy was lost (--unwind dwarf).
    Missed,
    /// Unwound from a copy (--unwind dwarf): its index in the stack table.
    Unwound(u32),
}

/// What a stack tool counts by: a process (or thread) and its two stacks.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    /// The process, whose memory map symbolizes the user stack.
    pub tgid: u32,
    /// What `comm (…)` shows: the thread, or the process.
    pub shown_id: u32,
    /// In the stack map; -1 for none, another negative id for a failure.
    pub kern_stack_id: i32,
    pub user: User,
    pub comm: [i8; 16],
}

/// Which halves of each stack the output wants (-U, -K).
#[derive(Debug, Clone, Copy)]
pub struct Halves {
    pub kernel: bool,
    pub user: bool,
}

/// The symbolized halves of each key's stacks, in the keys' order: every
/// stack read from the map once, the kernel's addresses symbolized in one
/// batch and each process's in one.
pub fn resolve<'k>(
    keys: impl Iterator<Item = &'k Key> + Clone,
    stack_map: &dyn libbpf_rs::MapCore,
    table: Option<&crate::stacks::unwind::StackTable>,
    symbolizer: &mut sym::Symbolizer,
    want: Halves,
) -> Result<Vec<(sym::Part, sym::Part)>> {
    use std::collections::{HashMap, HashSet};
    let mut stacks: HashMap<i32, Vec<u64>> = HashMap::new();
    for k in keys.clone() {
        let user = match k.user {
            User::Map(id) if want.user => id,
            _ => -1,
        };
        let kernel = if want.kernel { k.kern_stack_id } else { -1 };
        for id in [kernel, user] {
            if id >= 0 && !stacks.contains_key(&id) {
                if let Some(addrs) = maps::read_stack(stack_map, id)? {
                    stacks.insert(id, addrs);
                }
            }
        }
    }
    if want.kernel {
        let kernel_ids: HashSet<i32> = keys.clone().map(|k| k.kern_stack_id).collect();
        symbolizer.prefetch_kernel(
            kernel_ids
                .iter()
                .filter_map(|id| stacks.get(id))
                .flat_map(|s| sym::lookup_addresses(s)),
        );
    }
    if want.user {
        let mut by_process: HashMap<u32, HashSet<User>> = HashMap::new();
        for k in keys.clone() {
            by_process.entry(k.tgid).or_default().insert(k.user);
        }
        for (tgid, users) in &by_process {
            let addrs = users.iter().filter_map(|u| match u {
                User::Map(id) => stacks.get(id).map(Vec::as_slice),
                User::Unwound(i) => table.and_then(|t| t.get(*i)).map(|s| s.addrs.as_slice()),
                _ => None,
            });
            symbolizer.prefetch_user(
                *tgid,
                addrs.flat_map(|s| sym::lookup_addresses(sym::user_part(s))),
            );
        }
    }
    let part =
        |id: i32, frames: &mut dyn FnMut(&[u64]) -> Vec<std::rc::Rc<sym::Frame>>| match stacks
            .get(&id)
        {
            Some(addrs) => sym::Part::Frames(frames(addrs)),
            None if id == -1 => sym::Part::Absent,
            None => sym::Part::Missed,
        };
    let mut out = Vec::new();
    for k in keys {
        let kernel = if want.kernel {
            part(k.kern_stack_id, &mut |a| {
                sym::trim_tracing_frames(&symbolizer.kernel(a)).to_vec()
            })
        } else {
            sym::Part::Absent
        };
        let user = match (k.user, table) {
            _ if !want.user => sym::Part::Absent,
            (User::Map(id), _) => part(id, &mut |a| symbolizer.user(k.tgid, a)),
            (User::Unwound(i), Some(t)) => match t.get(i) {
                Some(stack) => sym::Part::Frames(symbolizer.unwound(k.tgid, stack)),
                None => sym::Part::Missed,
            },
            (User::Absent, _) => sym::Part::Absent,
            _ => sym::Part::Missed,
        };
        out.push((kernel, user));
    }
    Ok(out)
}
