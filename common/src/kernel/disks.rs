//! Disk names and the kernel's dev_t encoding (major << MINORBITS |
//! minor; block.h), for the block tools' -d and DISK columns.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};

use crate::skel::types::block_layout as L;
use crate::usage::usage;

const MINORBITS: u32 = L::BLK_MINORBITS.0;
const MINORMASK: u32 = L::BLK_MINORMASK.0;
/// The op in the low byte of a request's flags.
pub const OP_MASK: u32 = L::BLK_OP_MASK.0;

pub fn dev(major: u32, minor: u32) -> u32 {
    (major << MINORBITS) | minor
}

/// The disk's name for a kernel dev_t, from sysfs; `MAJ:MIN` if unknown.
pub fn name(dev: u32) -> String {
    let (major, minor) = (dev >> MINORBITS, dev & MINORMASK);
    fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/uevent"))
        .ok()
        .and_then(|u| {
            u.lines()
                .find_map(|l| l.strip_prefix("DEVNAME="))
                .map(String::from)
        })
        .unwrap_or_else(|| format!("{major}:{minor}"))
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
