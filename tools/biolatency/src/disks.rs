//! Disk names and the kernel's dev_t encoding (major << 20 | minor).

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};
use common::usage::usage;

pub fn dev(major: u32, minor: u32) -> u32 {
    (major << 20) | minor
}

/// The disk's name for a kernel dev_t, from sysfs; `MAJ:MIN` if unknown.
pub fn name(dev: u32) -> String {
    let (major, minor) = (dev >> 20, dev & 0xfffff);
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
            common::output::escape(name.as_bytes())
        )));
    }
    if dir.join("partition").exists() {
        return Err(usage(format!(
            "-d: {name} is a partition: give its whole disk (biolatency counts per disk)"
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
