//! The filters the shared BPF header (filters.bpf.h) implements. One value
//! sets the read-only flag that switches a filter on and fills the map it
//! reads, so that the two cannot drift apart.

use std::path::PathBuf;

use anyhow::Result;
use libbpf_rs::{MapCore, Object, OpenObject};

use crate::cli::PortList;
use crate::kernel::maps;
use crate::usage::UsageError;

/// What a tool filters on in the kernel. A started command's pid is added
/// to `pids` by the lifecycle.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    /// Processes (tgids), `-p`.
    pub pids: Option<Vec<u32>>,
    /// Threads, `-t`.
    pub tids: Option<Vec<u32>>,
    /// The tool's thread option, as errors name it (`-t`; profile: `-L`);
    /// None where it has none.
    pub thread_option: Option<&'static str>,
    /// A cgroup v2 directory, `-c`: the current task must be in it.
    pub cgroup: Option<PathBuf>,
    /// A uid, `-u`.
    pub uid: Option<u32>,
    /// The command the tool starts (`--exec`) is traced through `pids`.
    pub command_pid: bool,
    /// The TCP tools' filters (tcpsock.bpf.h): local ports, remote ports,
    /// and the family (-4, -6: AF_INET or AF_INET6; 0 both).
    pub lports: Option<PortList>,
    pub dports: Option<PortList>,
    pub family: u16,
    /// The block tools' disk (blkreq.bpf.h), `-d`: its device number.
    pub disk: Option<u32>,
}

/// A cgroup v2 directory's id (its inode) and depth below the hierarchy's
/// root (the root's is 0), as the kernel's `struct cgroup` has them.
fn cgroup_id_and_level(path: &std::path::Path) -> Result<(u64, u32)> {
    use std::os::unix::fs::MetadataExt;
    let dir = std::fs::canonicalize(path)?;
    let root = crate::kernel::cgroups::root()
        .and_then(|r| std::fs::canonicalize(r).ok())
        .ok_or_else(|| anyhow::anyhow!("no cgroup v2 hierarchy is mounted"))?;
    let below = dir
        .strip_prefix(&root)
        .map_err(|_| anyhow::anyhow!("{} is not below {}", dir.display(), root.display()))?;
    let level = u32::try_from(below.components().count())?;
    Ok((std::fs::metadata(&dir)?.ino(), level))
}

impl Filters {
    /// Only the processes of a `-p` list and the tasks of a cgroup, each
    /// if given.
    pub fn processes(list: &Option<IdList>, cgroup: Option<PathBuf>) -> Filters {
        Filters {
            cgroup,
            ..Filters::pids(list)
        }
    }

    /// Only the processes of a `-p` list, the threads of a thread list (the
    /// tool's `option`, as errors name it) and the tasks of a cgroup, each
    /// if given.
    pub fn threads(
        pids: &Option<IdList>,
        tids: &Option<IdList>,
        option: &'static str,
        cgroup: Option<PathBuf>,
    ) -> Filters {
        Filters {
            tids: tids.as_ref().map(|l| l.0.clone()),
            thread_option: Some(option),
            ..Filters::processes(pids, cgroup)
        }
    }

    /// Only the processes of a `-p` list, if one was given.
    pub fn pids(list: &Option<IdList>) -> Filters {
        Filters {
            pids: list.as_ref().map(|l| l.0.clone()),
            ..Filters::default()
        }
    }

    /// The policy for every tool: a process or thread named in a filter
    /// must be running when the tool starts (a typo would otherwise trace
    /// nothing, silently).
    pub fn check(&self) -> Result<()> {
        let thread_flag = self.thread_option.unwrap_or("-t");
        for (ids, what, flag) in [
            (&self.pids, "process", "-p"),
            (&self.tids, "thread", thread_flag),
        ] {
            for id in ids.iter().flatten() {
                if !std::path::Path::new(&format!("/proc/{id}")).exists() {
                    return Err(UsageError(format!("{flag}: there is no {what} {id}")).into());
                }
                // /proc/TID exists for a thread too: -p of one would match
                // no process, silently.
                if flag == "-p" {
                    if let Some(tgid) = crate::run::process::tgid(*id).filter(|t| t != id) {
                        let alone = match self.thread_option {
                            Some(t) => format!(", or {t} {id} to trace that thread alone"),
                            None => String::new(),
                        };
                        return Err(UsageError(format!(
                            "-p: {id} is a thread of process {tgid}: -p takes process ids \
                             (give -p {tgid}{alone})"
                        ))
                        .into());
                    }
                }
            }
        }
        Ok(())
    }

    /// Sets the filters' read-only flags, before load.
    pub(crate) fn configure(&self, obj: &mut OpenObject) -> Result<()> {
        let thread_flag = self.thread_option.unwrap_or("-t");
        let on = |b: bool| [u8::from(b)];
        if self.pids.is_some() {
            maps::set_rodata(obj, "filter_pids", &on(true))?;
        }
        if self.tids.is_some() {
            maps::set_rodata(obj, "filter_tids", &on(true))?;
        }
        if let Some(path) = &self.cgroup {
            // The current task's cgroup (filters.bpf.h), and where events
            // come with a socket, the socket's (tcpsock.bpf.h).
            let task = maps::has_rodata(obj, "filter_cgroup");
            let sock = maps::has_rodata(obj, "sock_cgroup_target");
            anyhow::ensure!(task || sock, "this tool's BPF object has no cgroup filter");
            if task {
                maps::set_rodata(obj, "filter_cgroup", &on(true))?;
            }
            if sock {
                let (id, level) = cgroup_id_and_level(path)?;
                maps::set_rodata(obj, "sock_cgroup_target", &id.to_ne_bytes())?;
                maps::set_rodata(obj, "sock_cgroup_level", &level.to_ne_bytes())?;
            }
        }
        if let Some(uid) = self.uid {
            maps::set_rodata(obj, "filter_uid", &uid.to_ne_bytes())?;
        }
        if self.lports.is_some() {
            maps::set_rodata(obj, "filter_lports", &on(true))?;
        }
        if self.dports.is_some() {
            maps::set_rodata(obj, "filter_dports", &on(true))?;
        }
        if let Some(dev) = self.disk {
            maps::set_rodata(obj, "filter_dev", &on(true))?;
            maps::set_rodata(obj, "targ_dev", &dev.to_ne_bytes())?;
        }
        if self.family != 0 {
            maps::set_rodata(obj, "target_family", &self.family.to_ne_bytes())?;
        }
        // Every tool with the shared filters leaves its own process out.
        if maps::has_rodata(obj, "self_tgid") {
            maps::set_rodata(obj, "self_tgid", &std::process::id().to_ne_bytes())?;
        }
        // Bounds from the maps the kernel will allocate.
        for (ids, map, flag) in [
            (&self.pids, "pid_filter", "-p"),
            (&self.tids, "tid_filter", thread_flag),
        ] {
            let Some(ids) = ids else { continue };
            let max = obj
                .maps()
                .find(|m| m.name().to_string_lossy() == map)
                .map_or(0, |m| m.max_entries()) as usize;
            if ids.len() > max {
                return Err(UsageError(format!(
                    "{flag}: {} ids given; this tool filters on at most {max}",
                    ids.len()
                ))
                .into());
            }
        }
        Ok(())
    }

    /// Fills the filter maps, after load.
    pub(crate) fn fill(&self, obj: &Object) -> Result<()> {
        let map = |name: &str| {
            maps::by_name(obj, name)
                .ok_or_else(|| anyhow::anyhow!("this tool's BPF object has no map {name}"))
        };
        if let Some(pids) = &self.pids {
            maps::set_ids(&map("pid_filter")? as &dyn MapCore, pids)?;
        }
        if let Some(tids) = &self.tids {
            maps::set_ids(&map("tid_filter")? as &dyn MapCore, tids)?;
        }
        if let Some(path) = self
            .cgroup
            .as_ref()
            .filter(|_| maps::by_name(obj, "cgroup_filter").is_some())
        {
            maps::set_cgroup(&map("cgroup_filter")? as &dyn MapCore, path)?;
        }
        for (ports, name) in [
            (&self.lports, "lport_filter"),
            (&self.dports, "dport_filter"),
        ] {
            for port in ports.iter().flat_map(|p| &p.0) {
                map(name)?.update(&port.to_ne_bytes(), &[1u8], libbpf_rs::MapFlags::ANY)?;
            }
        }
        Ok(())
    }
}

/// A comma-separated list of process or thread ids, e.g. `-p 123,456`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdList(pub Vec<u32>);

impl std::fmt::Display for IdList {
    /// As given: `123,456` (banners).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, id) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{id}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_tools_own_thread_option() {
        let f = Filters {
            tids: Some(vec![999_999_999]),
            thread_option: Some("-L"),
            ..Filters::default()
        };
        let e = f.check().unwrap_err().to_string();
        assert_eq!(e, "-L: there is no thread 999999999");
    }

    #[test]
    fn a_thread_given_to_p_names_its_process() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            // SAFETY: gettid has no preconditions.
            tx.send(unsafe { libc::gettid() } as u32).unwrap();
            let _ = done_rx.recv();
        });
        let tid = rx.recv().unwrap();
        let f = Filters {
            pids: Some(vec![tid]),
            thread_option: Some("-t"),
            ..Filters::default()
        };
        let e = f.check().unwrap_err().to_string();
        let me = std::process::id();
        assert_eq!(
            e,
            format!(
                "-p: {tid} is a thread of process {me}: -p takes process ids \
                 (give -p {me}, or -t {tid} to trace that thread alone)"
            )
        );
        done_tx.send(()).unwrap();
        t.join().unwrap();
    }
}
