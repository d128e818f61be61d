//! tracefs, where classic tracepoints are found: mounted by the tools when
//! a fresh machine has not mounted it.

use std::path::Path;
use std::sync::OnceLock;

use anyhow::Result;

/// The tracefs mount point, mounting it at /sys/kernel/tracing when no
/// tracefs is mounted: classic tracepoints are found through it.
pub fn mount_point() -> Result<&'static Path> {
    static MOUNTED: OnceLock<Result<&'static Path, String>> = OnceLock::new();
    MOUNTED
        .get_or_init(|| {
            for dir in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
                if Path::new(dir).join("events").is_dir() {
                    return Ok(Path::new(dir));
                }
            }
            let target = "/sys/kernel/tracing";
            // SAFETY: all pointers are valid C strings for the duration of the call.
            let rc = unsafe {
                libc::mount(
                    c"nodev".as_ptr(),
                    c"/sys/kernel/tracing".as_ptr(),
                    c"tracefs".as_ptr(),
                    0,
                    std::ptr::null(),
                )
            };
            if rc != 0 {
                let err = std::io::Error::last_os_error();
                return Err(format!(
                    "tracefs is not mounted and mounting it on {target} failed: {err} \
                     (as root: mount -t tracefs nodev {target})"
                ));
            }
            Ok(Path::new(target))
        })
        .as_ref()
        .map(|p| *p)
        .map_err(|e| anyhow::anyhow!("{e}"))
}
