//! Facts about processes from /proc: whether one lives, its name, and
//! this process's own peak memory.

/// True while process `pid` exists.
pub fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid as i32, 0) == 0 }
}

/// The current name of a live process or thread (/proc/ID/comm works for
/// both); None once it has gone.
pub fn comm(id: u32) -> Option<String> {
    let comm = std::fs::read_to_string(format!("/proc/{id}/comm")).ok()?;
    Some(comm.trim_end_matches('\n').to_string())
}

/// This process's peak resident set (VmHWM), in KiB.
pub fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// The file a command name runs, as execvp(3) finds it: a name with a
/// slash as it is, else the first executable of that name in $PATH.
pub fn find_program(name: &std::ffi::OsStr) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::path::Path::new(name);
    if name.as_encoded_bytes().contains(&b'/') {
        return path.is_file().then(|| path.to_path_buf());
    }
    let dirs = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    std::env::split_paths(&dirs)
        .map(|d| d.join(name))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}
