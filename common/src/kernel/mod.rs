//! The kernel side: which hooks this kernel offers and how a tool picks its
//! variants ([`probe`]), maps ([`maps`]), the shared filters ([`filters`]),
//! tracefs ([`tracefs`]).

pub mod cgroups;
pub mod disks;
pub mod enums;
pub mod fileio;
pub mod filters;
pub mod kallsyms;
pub mod lockdown;
pub mod maps;
pub mod pagecache;
pub mod perf;
pub mod probe;
pub mod sideband;
pub mod syscalls;
pub mod tcp;
pub mod tracefs;

/// Mounts a pseudo file system (tracefs, securityfs) of `fstype` on
/// `target`, for a fresh machine that has not.
pub(crate) fn mount_pseudo(
    fstype: &std::ffi::CStr,
    target: &std::ffi::CStr,
) -> std::io::Result<()> {
    // SAFETY: all pointers are valid C strings for the duration of the call.
    let rc = unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
