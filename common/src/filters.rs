//! Filling the filter maps that filters.bpf.h declares.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

use anyhow::{Context, Result};
use libbpf_rs::{MapCore, MapFlags};

/// Puts each id into a set map (`pid_filter`, `tid_filter`).
pub fn set_ids(map: &dyn MapCore, ids: &[u32]) -> Result<()> {
    for id in ids {
        map.update(&id.to_ne_bytes(), &[1u8], MapFlags::ANY)
            .with_context(|| format!("adding {id} to {}", map.name().to_string_lossy()))?;
    }
    Ok(())
}

/// Makes `cgroup_filter` hold the cgroup v2 directory at `path`.
pub fn set_cgroup(map: &dyn MapCore, path: &Path) -> Result<()> {
    let dir = File::open(path).with_context(|| format!("opening cgroup {}", path.display()))?;
    let fd = dir.as_raw_fd() as u32;
    map.update(&0u32.to_ne_bytes(), &fd.to_ne_bytes(), MapFlags::ANY)
        .with_context(|| format!("{} is not a cgroup v2 directory", path.display()))
}
