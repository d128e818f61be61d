//! tracefs, where classic tracepoints are found: mounted by the tools when
//! a fresh machine has not mounted it.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use anyhow::Result;

/// Set once a tool's setup has looked in tracefs (its needed capabilities
/// then include CAP_DAC_READ_SEARCH: run::needed_capabilities).
static LOOKED: AtomicBool = AtomicBool::new(false);

/// The tracefs mount point, mounting it at /sys/kernel/tracing when no
/// tracefs is mounted: classic tracepoints are found through it. For a
/// look inside it (the tool needs to read tracefs).
pub fn mount_point() -> Result<&'static Path> {
    mark_looked();
    find()
}

/// Notes that the tool's choice depends on what tracefs holds.
pub(crate) fn mark_looked() {
    LOOKED.store(true, Ordering::Relaxed);
}

/// Whether tracefs is there to be read (mounting it if need be), without
/// looking inside: the kernel's feature probe.
pub fn available() -> bool {
    find().is_ok()
}

/// True once this process has looked in tracefs.
pub fn looked() -> bool {
    LOOKED.load(Ordering::Relaxed)
}

/// Why tracefs cannot be used here.
struct Missing {
    why: String,
    /// Mounted, but this user may not read it (CAP_DAC_READ_SEARCH).
    unreadable: bool,
}

fn found() -> &'static Result<&'static Path, Missing> {
    static MOUNTED: OnceLock<Result<&'static Path, Missing>> = OnceLock::new();
    MOUNTED.get_or_init(|| {
        for dir in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
            if Path::new(dir).join("events").is_dir() {
                return Ok(Path::new(dir));
            }
        }
        // Mounted, but its mode (0700) keeps this user out.
        if let Some(dir) = super::cgroups::mount_of("tracefs") {
            if let Err(e) = std::fs::read_dir(&dir) {
                if e.kind() == std::io::ErrorKind::PermissionDenied {
                    return Err(Missing {
                        why: format!(
                            "tracefs ({}) is readable by root only, and {} lacks \
                             CAP_DAC_READ_SEARCH, which would let it read there (classic \
                             tracepoints, kernel function lists)",
                            dir.display(),
                            crate::output::tool_name()
                        ),
                        unreadable: true,
                    });
                }
            }
        }
        let target = "/sys/kernel/tracing";
        if let Err(err) = super::mount_pseudo(c"tracefs", c"/sys/kernel/tracing") {
            return Err(Missing {
                why: format!(
                    "tracefs is not mounted and mounting it on {target} failed: {err} \
                     (as root: mount -t tracefs nodev {target})"
                ),
                unreadable: false,
            });
        }
        Ok(Path::new(target))
    })
}

fn find() -> Result<&'static Path> {
    found()
        .as_ref()
        .map(|p| *p)
        .map_err(|m| anyhow::anyhow!("{}", m.why))
}

/// Why a tool that has classic tracepoint programs cannot use them here for
/// lack of a capability (its note, where it runs without them), if so.
pub fn privilege_note(obj: &libbpf_rs::OpenObject) -> Option<String> {
    let has_tracepoints = obj.progs().any(|p| {
        super::probe::hook_of_section(&p.section().to_string_lossy())
            == Some(super::probe::Hook::Tracepoint)
    });
    has_tracepoints.then(lacking_privilege).flatten()
}

/// Why tracefs cannot be read here when it is for lack of a capability.
pub fn lacking_privilege() -> Option<String> {
    match found() {
        Err(m) if m.unreadable => Some(m.why.clone()),
        _ => None,
    }
}
