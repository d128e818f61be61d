//! Which container, pod or systemd unit a cgroup v2 id stands for, from
//! the cgroup's path alone: no container runtime is asked, so the names
//! work on any host that runs Docker, containerd/CRI (Kubernetes), CRI-O,
//! Podman or systemd, and on one that runs none of them.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// What a cgroup's path says about it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Names {
    /// From the cgroup2 mount, `/` for the root.
    pub path: String,
    /// The container's id as `docker ps` shows it (12 hex digits).
    pub container: Option<String>,
    /// Whose container path it is: docker, containerd, cri-o, podman.
    pub runtime: Option<&'static str>,
    /// A Kubernetes pod's UID, with its QoS class.
    pub pod: Option<String>,
    pub qos: Option<&'static str>,
    /// The innermost systemd service or scope that is not a container's
    /// (`nginx.service`, `session-3.scope`).
    pub unit: Option<String>,
}

/// Container cgroup names with the systemd driver: prefix, runtime.
const SCOPES: [(&str, &str); 4] = [
    ("docker-", "docker"),
    ("cri-containerd-", "containerd"),
    ("crio-", "cri-o"),
    ("libpod-", "podman"),
];

fn is_id(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

impl Names {
    /// Reads a path relative to the cgroup2 mount (`/system.slice/…`).
    pub fn of_path(path: &str) -> Names {
        let mut n = Names {
            path: if path.is_empty() {
                "/".into()
            } else {
                path.into()
            },
            ..Names::default()
        };
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        for (i, part) in parts.iter().enumerate() {
            let parent = i.checked_sub(1).map(|j| parts[j]);
            if let Some((id, runtime)) = container_of(part, parent) {
                n.container = Some(id[..12].to_string());
                n.runtime = Some(runtime);
                continue;
            }
            if let Some((pod, qos)) = pod_of(part, parent) {
                n.pod = Some(pod);
                n.qos = Some(qos);
                continue;
            }
            if part.ends_with(".service") || part.ends_with(".scope") {
                n.unit = Some(part.to_string());
            }
        }
        n
    }

    /// What a CONTAINER column shows: the container, else the unit, else
    /// the path.
    pub fn label(&self) -> &str {
        self.container
            .as_deref()
            .or(self.unit.as_deref())
            .unwrap_or(&self.path)
    }

    /// The JSON keys that name the cgroup, those known: `cgroup` (its
    /// path), `container`, `pod`, `unit`.
    pub fn keys(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [
            ("cgroup", Some(self.path.as_str())),
            ("container", self.container.as_deref()),
            ("pod", self.pod.as_deref()),
            ("unit", self.unit.as_deref()),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k, v?)))
    }
}

/// How every kind shows cgroup `id` (a CONTAINER cell, a histogram's
/// section, a stack's root): its label, or `cgroup ID` for a cgroup gone
/// before it could be named. Not escaped.
pub fn shown(id: u64, names: Option<&Names>) -> std::borrow::Cow<'_, str> {
    match names {
        Some(n) => n.label().into(),
        None => format!("cgroup {id}").into(),
    }
}

/// Adds `cgroup_id` and the keys that name it ([`Names::keys`]) to a JSON
/// object: what every kind's `--json` and labels carry.
pub fn add_json(
    o: &mut serde_json::Map<String, serde_json::Value>,
    id: u64,
    names: Option<&Names>,
) {
    o.insert("cgroup_id".into(), id.into());
    for (k, v) in names.into_iter().flat_map(Names::keys) {
        o.insert(k.into(), v.into());
    }
}

/// A container's full id and runtime, from one path component.
fn container_of<'a>(part: &'a str, parent: Option<&str>) -> Option<(&'a str, &'static str)> {
    if let Some(stem) = part.strip_suffix(".scope") {
        for (prefix, runtime) in SCOPES {
            if let Some(id) = stem.strip_prefix(prefix).filter(|id| is_id(id)) {
                return Some((id, runtime));
            }
        }
    }
    // The cgroupfs driver: docker/<id>, or kubepods/…/pod<uid>/<id>.
    if is_id(part) {
        return match parent {
            Some("docker") => Some((part, "docker")),
            Some(p) if p.starts_with("pod") => Some((part, "kubernetes")),
            _ => None,
        };
    }
    None
}

/// A pod's UID and QoS class: `kubepods-burstable-pod<uid>.slice` (systemd
/// driver, dashes in the UID written as underscores) or `pod<uid>` below
/// `kubepods/burstable` (cgroupfs driver).
fn pod_of(part: &str, parent: Option<&str>) -> Option<(String, &'static str)> {
    let qos_of = |s: &str| match s {
        "burstable" => "burstable",
        "besteffort" => "besteffort",
        _ => "guaranteed",
    };
    if let Some(rest) = part
        .strip_prefix("kubepods-")
        .and_then(|r| r.strip_suffix(".slice"))
    {
        let (qos, uid) = match rest.split_once("-pod") {
            Some((qos, uid)) => (qos_of(qos), uid),
            None => ("guaranteed", rest.strip_prefix("pod")?),
        };
        return Some((uid.replace('_', "-"), qos));
    }
    let uid = part.strip_prefix("pod")?;
    let under_kubepods = matches!(parent, Some("kubepods" | "burstable" | "besteffort"));
    (under_kubepods && uid.len() >= 32).then(|| (uid.to_string(), qos_of(parent.unwrap_or(""))))
}

/// A live process's cgroup: its id (the directory's inode) and names,
/// from its cgroup v2 line in /proc/PID/cgroup.
pub fn of_pid(pid: u32) -> Option<(u64, Names)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let path = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    let path = path.trim_end_matches('/');
    let id = root()?
        .join(path.trim_start_matches('/'))
        .metadata()
        .ok()?
        .ino();
    Some((id, Names::of_path(path)))
}

/// Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or
/// /sys/fs/cgroup/unified on a hybrid host).
pub fn root() -> Option<PathBuf> {
    mount_of("cgroup2")
}

/// The first mount point of file system type `fstype`.
pub fn mount_of(fstype: &str) -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(2) == Some(&fstype)).then(|| PathBuf::from(f[1]))
    })
}

/// Cgroup ids to names: the hierarchy indexed by inode (a cgroup's id) on
/// the first question, and again for an id not seen yet (a container
/// started while tracing), at most once a second.
pub struct Resolver {
    root: Option<PathBuf>,
    known: HashMap<u64, Rc<Names>>,
    scanned: Option<Instant>,
}

impl Default for Resolver {
    fn default() -> Self {
        Resolver {
            root: root(),
            known: HashMap::new(),
            scanned: None,
        }
    }
}

impl Resolver {
    /// The names of cgroup `id`; None for a cgroup gone before it was
    /// looked up, or a host without cgroup v2.
    pub fn names(&mut self, id: u64) -> Option<Rc<Names>> {
        if let Some(n) = self.known.get(&id) {
            return Some(n.clone());
        }
        let stale = self
            .scanned
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1));
        if stale {
            self.scan();
        }
        self.known.get(&id).cloned()
    }

    fn scan(&mut self) {
        self.scanned = Some(Instant::now());
        let Some(root) = self.root.clone() else {
            return;
        };
        for (dir, ino) in walk(&root) {
            self.known
                .entry(ino)
                .or_insert_with(|| Rc::new(Names::of_path(&relative(&root, &dir))));
        }
    }
}

/// Every cgroup directory from `root` down, with its inode (its cgroup id).
fn walk(root: &Path) -> Vec<(PathBuf, u64)> {
    let mut found = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(meta) = std::fs::metadata(&dir) else {
            continue;
        };
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    dirs.push(e.path());
                }
            }
        }
        found.push((dir, meta.ino()));
    }
    found
}

/// The cgroup directory of the one container whose id starts with
/// `prefix` (`--container`: the id `docker ps` shows, or more of it).
pub fn find_container(prefix: &str) -> Result<PathBuf, String> {
    let prefix = prefix.to_ascii_lowercase();
    if prefix.is_empty() || prefix.len() > 64 || !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!(
            "'{}' is not a container id (hex digits, as `docker ps` shows)",
            crate::output::escape(prefix.as_bytes())
        ));
    }
    let root = root().ok_or("no cgroup v2 hierarchy is mounted")?;
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    for (dir, _) in walk(&root) {
        let part = dir.file_name().and_then(|p| p.to_str()).unwrap_or("");
        let parent = dir
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|p| p.to_str());
        if let Some((id, _)) = container_of(part, parent).filter(|(id, _)| id.starts_with(&prefix))
        {
            found.push((id.to_string(), dir.clone()));
        }
    }
    one_of(found, &root, || {
        format!("no container's cgroup has an id starting with {prefix}")
    })
}

/// The cgroup directory of systemd unit `name` (`--unit`; `.service`
/// when the name has no type).
pub fn find_unit(name: &str) -> Result<PathBuf, String> {
    let shown = crate::output::escape(name.as_bytes());
    if name.is_empty() || name.contains('/') {
        return Err(format!("'{shown}' is not a unit name"));
    }
    let full = if name.contains('.') {
        name.to_string()
    } else {
        format!("{name}.service")
    };
    let root = root().ok_or("no cgroup v2 hierarchy is mounted")?;
    let found = walk(&root)
        .into_iter()
        .filter(|(dir, _)| dir.file_name().is_some_and(|p| p == full.as_str()))
        .map(|(dir, _)| (relative(&root, &dir), dir))
        .collect();
    one_of(found, &root, || {
        format!("no cgroup of a unit named {shown}")
    })
}

/// The directory of the one thing found (keyed by its name): the topmost
/// where one thing has several (its descendants are traced with it); an
/// error naming each where there are several things, or `none()`.
fn one_of(
    mut found: Vec<(String, PathBuf)>,
    root: &Path,
    none: impl FnOnce() -> String,
) -> Result<PathBuf, String> {
    found.sort_by_key(|(key, dir)| (key.clone(), dir.components().count()));
    found.dedup_by(|a, b| a.0 == b.0);
    match found.len() {
        0 => Err(none()),
        1 => Ok(found.remove(0).1),
        n => Err(format!(
            "{n} cgroups match: {} (give more of the name)",
            found
                .iter()
                .map(|(_, dir)| crate::output::escape(relative(root, dir).as_bytes()).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

fn relative(root: &Path, dir: &Path) -> String {
    let rel = dir.strip_prefix(root).unwrap_or(dir);
    format!("/{}", rel.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "4f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0";

    #[test]
    fn container_paths_of_each_runtime_are_named() {
        let cases = [
            (format!("/system.slice/docker-{ID}.scope"), "docker"),
            (format!("/docker/{ID}"), "docker"),
            (format!("/machine.slice/libpod-{ID}.scope"), "podman"),
            (
                format!(
                    "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c3d4e_5f60_7182_93a4_b5c6d7e8f901.slice/cri-containerd-{ID}.scope"
                ),
                "containerd",
            ),
            (
                format!("/kubepods.slice/kubepods-pod1b2c3d4e_5f60_7182_93a4_b5c6d7e8f901.slice/crio-{ID}.scope"),
                "cri-o",
            ),
            (
                format!("/kubepods/besteffort/pod1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901/{ID}"),
                "kubernetes",
            ),
        ];
        for (path, runtime) in cases {
            let n = Names::of_path(&path);
            assert_eq!(n.container.as_deref(), Some(&ID[..12]), "{path}");
            assert_eq!(n.runtime, Some(runtime), "{path}");
            assert_eq!(n.label(), &ID[..12]);
            assert_eq!(n.unit, None, "a container's scope is not a unit: {path}");
        }
    }

    #[test]
    fn pods_carry_their_uid_and_qos_class() {
        let uid = "1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901";
        let systemd = Names::of_path(&format!(
            "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{}.slice/cri-containerd-{ID}.scope",
            uid.replace('-', "_")
        ));
        assert_eq!(systemd.pod.as_deref(), Some(uid));
        assert_eq!(systemd.qos, Some("burstable"));
        let guaranteed = Names::of_path(&format!(
            "/kubepods.slice/kubepods-pod{}.slice/crio-{ID}.scope",
            uid.replace('-', "_")
        ));
        assert_eq!(guaranteed.qos, Some("guaranteed"));
        let cgroupfs = Names::of_path(&format!("/kubepods/besteffort/pod{uid}/{ID}"));
        assert_eq!(cgroupfs.pod.as_deref(), Some(uid));
        assert_eq!(cgroupfs.qos, Some("besteffort"));
    }

    #[test]
    fn units_and_plain_paths_label_the_rest() {
        let service = Names::of_path("/system.slice/nginx.service");
        assert_eq!(service.container, None);
        assert_eq!(service.label(), "nginx.service");
        let nested =
            Names::of_path("/user.slice/user-1000.slice/user@1000.service/app.slice/app-foo.scope");
        assert_eq!(nested.label(), "app-foo.scope");
        assert_eq!(
            Names::of_path("/session-3.scope").label(),
            "session-3.scope"
        );
        assert_eq!(Names::of_path("/batch/job7").label(), "/batch/job7");
        assert_eq!(Names::of_path("").label(), "/");
        // Not a container: too short, or not hex.
        assert_eq!(Names::of_path("/docker-abc.scope").container, None);
        assert_eq!(Names::of_path("/docker/not-an-id").container, None);
    }

    #[test]
    fn the_resolver_finds_this_process_cgroup_by_its_id() {
        let root = root().expect("a cgroup v2 hierarchy is mounted");
        let mut r = Resolver::default();
        let id = std::fs::metadata(&root).unwrap().ino();
        assert_eq!(r.names(id).unwrap().path, "/");
        assert!(r.names(u64::MAX).is_none());
    }
}
