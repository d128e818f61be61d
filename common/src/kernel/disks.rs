//! Disk names and the kernel's dev_t encoding (major << MINORBITS |
//! minor; block.h), for the block tools' -d and DISK columns.

use std::fs;
use std::path::Path;

use anyhow::{bail, Context, Result};
use libbpf_rs::OpenProgramMut;

use crate::kernel::probe::{self, Hook};

use crate::skel::types::block_layout as L;
use crate::usage::usage;

const MINORBITS: u32 = L::BLK_MINORBITS.0;
const MINORMASK: u32 = L::BLK_MINORMASK.0;
/// The op in the low byte of a request's flags.
pub const OP_MASK: u32 = L::BLK_OP_MASK.0;

pub fn dev(major: u32, minor: u32) -> u32 {
    (major << MINORBITS) | minor
}

pub fn major(dev: u32) -> u32 {
    dev >> MINORBITS
}

pub fn minor(dev: u32) -> u32 {
    dev & MINORMASK
}

/// The disk's name for a kernel dev_t, from sysfs; `MAJ:MIN` if unknown.
pub fn name(dev: u32) -> String {
    let (major, minor) = (major(dev), minor(dev));
    fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/uevent"))
        .ok()
        .and_then(|u| {
            u.lines()
                .find_map(|l| l.strip_prefix("DEVNAME="))
                .map(String::from)
        })
        .unwrap_or_else(|| format!("{major}:{minor}"))
}

/// Disk names by dev_t, each read from sysfs once (the tools that name a
/// disk per event or per row).
#[derive(Debug, Default)]
pub struct Names(std::collections::HashMap<u32, String>);

impl Names {
    /// Reads `dev`'s name unless it is known.
    pub fn learn(&mut self, dev: u32) {
        self.0.entry(dev).or_insert_with(|| name(dev));
    }

    /// A name learnt before ("" for a dev never learnt).
    pub fn of(&self, dev: u32) -> &str {
        self.0.get(&dev).map_or("", String::as_str)
    }
}

/// The kernel dev_t of the whole disk called `name` (vda, nvme0n1, loop3).
pub fn resolve(name: &str) -> Result<u32> {
    let name = name.trim_start_matches("/dev/");
    if name.is_empty() {
        return Err(usage("-d: the disk name is empty"));
    }
    let dir = Path::new("/sys/class/block").join(name);
    if name.contains('/') || name.starts_with('.') || !dir.exists() {
        return Err(usage(format!(
            "-d: no such disk: {} (see /sys/class/block)",
            crate::output::escape(name.as_bytes())
        )));
    }
    if dir.join("partition").exists() {
        return Err(usage(format!(
            "-d: {name} is a partition: give its whole disk (I/O is counted per disk)"
        )));
    }
    let text =
        fs::read_to_string(dir.join("dev")).with_context(|| format!("reading {name}'s dev"))?;
    let (major, minor) = text
        .trim()
        .split_once(':')
        .with_context(|| format!("unexpected dev of {name}: {text}"))?;
    Ok(dev(major.parse()?, minor.parse()?))
}

/// One hook kind's programs of bpf/include/blkreq.bpf.h (block requests
/// followed from submission to completion), as the skeleton's handles.
pub struct RequestPrograms<'a, 'obj> {
    pub io_start: &'a mut OpenProgramMut<'obj>,
    pub insert: &'a mut OpenProgramMut<'obj>,
    pub insert_q: &'a mut OpenProgramMut<'obj>,
    pub issue: &'a mut OpenProgramMut<'obj>,
    pub issue_q: &'a mut OpenProgramMut<'obj>,
    pub io_done: &'a mut OpenProgramMut<'obj>,
    pub complete: &'a mut OpenProgramMut<'obj>,
}

/// Loads the request programs this kernel needs, in one hook kind (tp_btf,
/// else raw_tp): block_io_start and block_io_done where they exist (6.5+),
/// else block_rq_insert and the final block_rq_complete; block_rq_issue
/// always, each in the argument form the kernel's BTF describes.
pub fn choose_request_programs<'a, 'obj>(
    btf: RequestPrograms<'a, 'obj>,
    raw: RequestPrograms<'a, 'obj>,
) -> Result<Hook> {
    let Some(kind) = probe::pick(&[Hook::TpBtf, Hook::RawTp]) else {
        bail!("this kernel offers neither tp_btf nor raw_tp programs");
    };
    // Before 5.11 block_rq_insert and block_rq_issue passed the queue first.
    let queue_first = probe::btf_tracepoint_args("block_rq_issue") == Some(2);
    let io_start = probe::btf_tracepoint_exists("block_io_start");
    let io_done = probe::btf_tracepoint_exists("block_io_done");
    for (on, p) in [(kind == Hook::TpBtf, btf), (kind == Hook::RawTp, raw)] {
        probe::load_when(on && io_start, [p.io_start]);
        probe::load_when(on && !io_start && !queue_first, [p.insert]);
        probe::load_when(on && !io_start && queue_first, [p.insert_q]);
        probe::load_when(on && !queue_first, [p.issue]);
        probe::load_when(on && queue_first, [p.issue_q]);
        probe::load_when(on && io_done, [p.io_done]);
        probe::load_when(on && !io_done, [p.complete]);
    }
    Ok(kind)
}

/// [`choose_request_programs`] over a skeleton's `progs` (the programs
/// blkreq.bpf.h defines have the same names in every tool).
#[macro_export]
macro_rules! choose_block_request_programs {
    ($progs:expr) => {{
        let p = &mut $progs;
        $crate::kernel::disks::choose_request_programs(
            $crate::kernel::disks::RequestPrograms {
                io_start: &mut p.blk_btf_io_start,
                insert: &mut p.blk_btf_insert,
                insert_q: &mut p.blk_btf_insert_q,
                issue: &mut p.blk_btf_issue,
                issue_q: &mut p.blk_btf_issue_q,
                io_done: &mut p.blk_btf_io_done,
                complete: &mut p.blk_btf_complete,
            },
            $crate::kernel::disks::RequestPrograms {
                io_start: &mut p.blk_raw_io_start,
                insert: &mut p.blk_raw_insert,
                insert_q: &mut p.blk_raw_insert_q,
                issue: &mut p.blk_raw_issue,
                issue_q: &mut p.blk_raw_issue_q,
                io_done: &mut p.blk_raw_io_done,
                complete: &mut p.blk_raw_complete,
            },
        )
    }};
}

/// A request's op as one letter (biosnoop's and biotop's T and D columns).
pub fn op_letter(op: u32) -> &'static str {
    match op & OP_MASK {
        0 => "R",
        1 => "W",
        2 => "F",
        3 => "D",
        5 => "E",
        9 => "Z",
        _ => "?",
    }
}
