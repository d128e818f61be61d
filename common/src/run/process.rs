//! Facts about processes from /proc: whether one lives, its name, and
//! this process's own peak memory.

/// True while process `pid` exists.
pub fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid as i32, 0) == 0 }
}

/// Field `n` of /proc/PID/stat, numbered as in proc(5) from 3 (the state):
/// the name (field 2) may hold spaces and parentheses, so fields are
/// counted from its last ')'. None once the process has gone.
pub fn stat_field(pid: u32, n: usize) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace()
        .nth(n.checked_sub(3)?)
        .map(str::to_string)
}

fn stat_number(pid: u32, n: usize) -> Option<u64> {
    stat_field(pid, n)?.parse().ok()
}

/// The process (thread group) thread `id` belongs to, from /proc.
pub fn tgid(id: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{id}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// True once process `pid` has begun to exit (PF_EXITING in its flags,
/// field 9), or is gone: its memory map is then going or gone, and a copy
/// read now would replace a good one with an empty one.
pub fn exiting(pid: u32) -> bool {
    const PF_EXITING: u64 = 0x4;
    stat_number(pid, 9).is_none_or(|flags| flags & PF_EXITING != 0)
}

/// True once the program process `pid` executes has been mapped: exec
/// sets the code's bounds (startcode, field 26) after the loader has
/// mapped the program and its interpreter, while the close-on-exec
/// descriptors that announce the exec close before that.
pub fn image_mapped(pid: u32) -> bool {
    stat_number(pid, 26).is_some_and(|start| start != 0)
}

/// A process's name as a report shows it, as bytes: the one it has now
/// where it is still there (a shell that executed `dd` is `dd`), else
/// `last`, the name the kernel side last recorded for it.
pub fn name_now(pid: u32, last: &[u8]) -> Vec<u8> {
    match std::fs::read(format!("/proc/{pid}/comm")) {
        Ok(mut c) if pid != 0 => {
            if c.last() == Some(&b'\n') {
                c.pop();
            }
            c
        }
        _ => last.to_vec(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zombie_or_a_gone_process_is_exiting_a_live_one_is_not() {
        assert!(!exiting(std::process::id()));
        assert!(image_mapped(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Not reaped yet: a zombie, whose flags keep PF_EXITING.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while stat_field(pid, 3).unwrap() != "Z" {
            assert!(std::time::Instant::now() < deadline, "{pid} never exited");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(alive(pid));
        assert!(exiting(pid));
        assert!(!image_mapped(pid), "a zombie has no memory map");
        child.wait().unwrap();
        assert!(exiting(pid));
        assert_eq!(stat_field(pid, 3), None);
    }
}

/// The names of the processes a table lists (syscount -P, funccount -P),
/// kept raw: escaped for text, UTF-8 (lossy) in JSON.
#[derive(Default, Debug)]
pub struct Comms(std::collections::HashMap<u32, Vec<u8>>);

impl Comms {
    /// Process `pid`'s name for this report ([`name_now`]): `recorded` is
    /// the name the kernel side last saw.
    pub fn refresh(&mut self, pid: u32, recorded: &[u8]) {
        self.0.insert(pid, name_now(pid, recorded));
    }

    /// The name as text shows it (`?` where none is known).
    pub fn text(&self, pid: u32) -> std::borrow::Cow<'_, str> {
        self.0
            .get(&pid)
            .map_or(std::borrow::Cow::Borrowed("?"), |b| {
                crate::output::escape(b)
            })
    }

    /// The name as recorded (`?` where none is known).
    pub fn raw(&self, pid: u32) -> &[u8] {
        self.0.get(&pid).map_or(b"?", Vec::as_slice)
    }

    /// The name as a JSON string.
    pub fn json(&self, pid: u32) -> String {
        self.0
            .get(&pid)
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default()
    }

    /// Every entry of a per-CPU hash of processes' counts (syscount -P,
    /// funccount -P): its CPUs' values summed by `add`, and its process
    /// (`tgid`) named as the CPU that counted the most last recorded it
    /// (`counted`: a value's count and name; a shell's fork that executed
    /// a command is named after the command).
    pub fn read_percpu<K, V, S>(
        &mut self,
        map: &dyn libbpf_rs::MapCore,
        tgid: fn(&K) -> u32,
        counted: fn(&V) -> (u64, &[std::ffi::c_char]),
        add: fn(&mut S, &V),
    ) -> anyhow::Result<Vec<(K, S)>>
    where
        K: plain::Plain + Default,
        V: plain::Plain + Default,
        S: Default,
    {
        use crate::kernel::maps::copy_record;
        let mut out = Vec::new();
        for bytes in map.keys() {
            let Some(values) = map.lookup_percpu(&bytes, libbpf_rs::MapFlags::ANY)? else {
                continue; // Gone since the keys were listed.
            };
            let mut key = K::default();
            copy_record(&mut key, &bytes);
            let (mut sum, mut most, mut name) = (S::default(), 0, Vec::new());
            for v in &values {
                let mut value = V::default();
                copy_record(&mut value, v);
                add(&mut sum, &value);
                let (n, comm) = counted(&value);
                if comm.first().is_some_and(|c| *c != 0) && n >= most {
                    (most, name) = (n, crate::output::c_bytes(comm).to_vec());
                }
            }
            self.refresh(tgid(&key), &name);
            out.push((key, sum));
        }
        Ok(out)
    }
}
