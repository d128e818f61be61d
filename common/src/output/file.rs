//! The output-file options (`--svg`, `--pprof`, `--prom-file`, `--hdr-log`):
//! one rule for what a path given to them gets, checked as the option is
//! parsed, so before anything is loaded.
//!
//! - A regular file, or a new name in an existing directory, is replaced
//!   whole through a temporary file created exclusively (an unpredictable
//!   name, never through a link) in the same directory and renamed over it:
//!   a reader sees the old file or the new one, never half of one.
//! - A symbolic link is resolved first; its target gets the same rule.
//! - A character device, FIFO or socket is written in place, never renamed
//!   over (`/dev/null`, a FIFO read by another program).
//! - `-` is standard output; the tool's own output then goes to stderr.
//!   A link to one of the tool's descriptors (/dev/stdout, /dev/stderr,
//!   /dev/fd/N, /proc/self/fd/N) is written through that descriptor, as
//!   `-` is: never replaced, so a log the shell appends to keeps its lines.
//! - A FIFO is opened as the option is read, before anything is loaded:
//!   the tool waits there for a reader, and a stop signal ends the wait.
//! - Anything else (a directory, a missing directory, a block device, a
//!   kernel interface such as /proc) is a usage error.

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::output::escape;

/// Set when an output-file option is `-`: the tool's own output then goes
/// to stderr, so that standard output holds the file alone.
static STDOUT_TAKEN: AtomicBool = AtomicBool::new(false);

/// True when an output-file option writes to standard output.
pub fn stdout_taken() -> bool {
    STDOUT_TAKEN.load(Ordering::Relaxed)
}

/// Where an output-file option writes, as checked when it was parsed.
#[derive(Clone, Debug)]
pub struct OutFile {
    /// The path as given, for messages.
    given: PathBuf,
    target: Target,
    /// A node written in place, kept open across reports (a FIFO's reader
    /// sees one stream).
    open: Arc<Mutex<Option<File>>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Target {
    Stdout,
    /// Another of this process's descriptors, named through a magic link
    /// (/dev/stderr, /dev/fd/N, /proc/self/fd/N): written through it, as
    /// `-` is through standard output, never replaced by path.
    Fd(i32),
    /// The resolved path of a regular file, or of a new name.
    Replace(PathBuf),
    /// A character device, FIFO or socket, by the path given (a magic link
    /// such as /dev/fd/63 opens the pipe itself).
    InPlace {
        path: PathBuf,
        socket: bool,
    },
}

/// What a path names: how it is written, or why it cannot be.
fn classify(given: &Path) -> Result<Target, String> {
    if given.as_os_str() == "-" {
        return Ok(Target::Stdout);
    }
    if given.as_os_str().is_empty() {
        return Err("an empty path".into());
    }
    match own_descriptor(given) {
        Some(1) => return Ok(Target::Stdout),
        Some(fd) => return Ok(Target::Fd(fd)),
        None => {}
    }
    match std::fs::metadata(given) {
        Ok(meta) => {
            let ft = meta.file_type();
            if ft.is_char_device() || ft.is_fifo() || ft.is_socket() {
                return Ok(Target::InPlace {
                    path: given.to_path_buf(),
                    socket: ft.is_socket(),
                });
            }
            if ft.is_dir() {
                return Err("is a directory".into());
            }
            if ft.is_block_device() {
                return Err("is a block device, not a file to write a report to".into());
            }
            if !ft.is_file() {
                return Err("is not a regular file, a character device or a FIFO".into());
            }
            let real = std::fs::canonicalize(given)
                .map_err(|e| format!("cannot resolve its links: {e}"))?;
            let dir = real.parent().unwrap_or(Path::new("/"));
            kernel_interface(dir)?;
            Ok(Target::Replace(real))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let path = follow_links(given)?;
            let name = match path.components().next_back() {
                Some(Component::Normal(name)) => name.to_owned(),
                _ => return Err("names no file".into()),
            };
            let parent = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            match std::fs::metadata(&parent) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => return Err(format!("{} is not a directory", escape_path(&parent))),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Err(format!("there is no directory {}", escape_path(&parent)))
                }
                Err(e) => return Err(format!("{}: {e}", escape_path(&parent))),
            }
            let dir = std::fs::canonicalize(&parent)
                .map_err(|e| format!("{}: {e}", escape_path(&parent)))?;
            kernel_interface(&dir)?;
            Ok(Target::Replace(dir.join(name)))
        }
        Err(e) if e.kind() == io::ErrorKind::NotADirectory => {
            Err("a directory in the path is not a directory".into())
        }
        Err(e) => Err(e.to_string()),
    }
}

/// The descriptor of this process that `given` names through the links
/// to them (/dev/stdout -> /proc/self/fd/1, /dev/fd/N, /proc/PID/fd/N):
/// opened by path, a descriptor the shell redirected to a file would have
/// that file replaced, or written from its start.
fn own_descriptor(given: &Path) -> Option<i32> {
    let own = PathBuf::from(format!("/proc/{}", std::process::id()));
    let mut path = given.to_path_buf();
    for _ in 0..40 {
        let fd = path.file_name()?.to_str()?.parse::<i32>().ok();
        if let (Some(fd), Some(dir)) = (fd, path.parent()) {
            // /proc/self/fd, /dev/fd, /proc/thread-self/fd: ours.
            let dir = std::fs::canonicalize(dir).ok()?;
            let ours =
                dir == own.join("fd") || (dir.starts_with(own.join("task")) && dir.ends_with("fd"));
            if ours {
                return Some(fd);
            }
        }
        // Ordinary links followed (never the magic link itself).
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&path).ok()?;
                path = match path.parent() {
                    Some(dir) => dir.join(to),
                    None => to,
                };
            }
            _ => return None,
        }
    }
    None
}

/// A path whose last component may be a dangling link: the path the links
/// lead to (where a new file would be made).
fn follow_links(given: &Path) -> Result<PathBuf, String> {
    let mut path = given.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&path).map_err(|e| e.to_string())?;
                path = match path.parent() {
                    Some(dir) => dir.join(to),
                    None => to,
                };
            }
            _ => return Ok(path),
        }
    }
    Err("too many levels of symbolic links".into())
}

/// Refuses a directory on a kernel interface (proc, sysfs, cgroup, debugfs,
/// tracefs, bpffs...): writing a report there is never what was meant.
fn kernel_interface(dir: &Path) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return Err("a path with a NUL byte".into());
    };
    // SAFETY: an all-zero statfs is a valid out-parameter.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a valid out-parameter.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return Err(format!(
            "{}: {}",
            escape_path(dir),
            io::Error::last_os_error()
        ));
    }
    let name = match st.f_type as i64 {
        0x9fa0 => "proc",
        0x6265_6572 => "sysfs",
        0x6367_7270 | 0x0027_e0eb => "cgroup",
        0x6462_6720 => "debugfs",
        0x7472_6163 => "tracefs",
        0xcafe_4a11 => "bpffs",
        0x7363_6673 => "securityfs",
        0x6265_6570 => "configfs",
        0x6165_676c => "pstore",
        0xde5e_81e4 => "efivarfs",
        0x1cd1 => "devpts",
        _ => return Ok(()),
    };
    Err(format!(
        "is on {name}, a kernel interface, not a place for files"
    ))
}

fn escape_path(p: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    escape(p.as_os_str().as_bytes()).into_owned()
}

impl OutFile {
    /// Checks a path for an output-file option: what it is, and that it can
    /// be written (a new file in its directory: a temporary one is made and
    /// removed). `Err` says why not, without the path.
    pub fn check(given: &OsStr) -> Result<OutFile, String> {
        let given = PathBuf::from(given);
        let target = classify(&given)?;
        match &target {
            Target::Stdout => STDOUT_TAKEN.store(true, Ordering::Relaxed),
            Target::Replace(path) => {
                let dir = path.parent().unwrap_or(Path::new("/"));
                temporary(path, dir).map_err(|e| format!("cannot write there: {e}"))?;
            }
            Target::Fd(fd) => {
                // SAFETY: F_GETFL on any int is harmless.
                let flags = unsafe { libc::fcntl(*fd, libc::F_GETFL) };
                if flags < 0 || flags & libc::O_ACCMODE == libc::O_RDONLY {
                    return Err(format!("descriptor {fd} is not open for writing"));
                }
            }
            Target::InPlace { path, socket } => {
                if !socket && !writable(path) {
                    return Err(format!("cannot write it: {}", io::Error::last_os_error()));
                }
            }
        }
        // A FIFO is opened now, before anything is loaded or attached: the
        // open waits for a reader, and a stop signal ends the wait.
        let fifo = match &target {
            Target::InPlace {
                path,
                socket: false,
            } if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) => {
                Some(open_fifo(path)?)
            }
            _ => None,
        };
        Ok(OutFile {
            given,
            target,
            open: Arc::new(Mutex::new(fifo)),
        })
    }

    /// The path as given, escaped, for messages.
    pub fn display(&self) -> String {
        if self.target == Target::Stdout {
            return "standard output".into();
        }
        escape_path(&self.given)
    }

    /// True for `-`.
    pub fn is_stdout(&self) -> bool {
        self.target == Target::Stdout
    }

    /// Writes a report whole: a file is replaced, a node written to.
    pub fn write(&self, bytes: &[u8]) -> io::Result<()> {
        match &self.target {
            Target::Replace(path) => {
                let dir = path.parent().unwrap_or(Path::new("/"));
                let mut tmp = temporary(path, dir)?;
                tmp.write_all(bytes)?;
                if let Ok(old) = std::fs::metadata(path) {
                    // The replacement keeps the old file's mode and owner.
                    let f = tmp.as_file();
                    f.set_permissions(std::fs::Permissions::from_mode(old.mode() & 0o7777))?;
                    let _ = std::os::unix::fs::fchown(f, Some(old.uid()), Some(old.gid()));
                }
                tmp.persist(path).map_err(|e| e.error)?;
                Ok(())
            }
            _ => {
                let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
                let f = match open.as_mut() {
                    Some(f) => f,
                    None => open.insert(self.open_in_place()?),
                };
                f.write_all(bytes)?;
                f.flush()
            }
        }
    }

    /// A file to append to for the whole run (`--hdr-log`): a regular file
    /// or a new name is made anew now and put in place; a node is opened.
    pub fn create_stream(&self) -> io::Result<File> {
        match &self.target {
            Target::Replace(path) => {
                let dir = path.parent().unwrap_or(Path::new("/"));
                let tmp = temporary(path, dir)?;
                Ok(tmp.persist(path).map_err(|e| e.error)?)
            }
            _ => self.open_in_place(),
        }
    }

    fn open_in_place(&self) -> io::Result<File> {
        match &self.target {
            Target::Stdout => {
                use std::os::fd::AsFd;
                Ok(File::from(io::stdout().as_fd().try_clone_to_owned()?))
            }
            Target::Fd(fd) => {
                // SAFETY: the descriptor was open for writing when checked,
                // and is only borrowed for the dup.
                let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(*fd) };
                Ok(File::from(fd.try_clone_to_owned()?))
            }
            Target::InPlace { path, socket: true } => {
                let stream = std::os::unix::net::UnixStream::connect(path)?;
                Ok(File::from(std::os::fd::OwnedFd::from(stream)))
            }
            Target::InPlace { path, .. } => OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NOCTTY | libc::O_CLOEXEC)
                .open(path),
            // Callers open in place only what is not replaced.
            Target::Replace(path) => Err(io::Error::other(format!(
                "{} is replaced whole, not written in place",
                escape_path(path)
            ))),
        }
    }
}

/// An exclusive, unpredictably named file beside `path`, readable as a
/// new file would be (the umask applies).
fn temporary(path: &Path, dir: &Path) -> io::Result<tempfile::NamedTempFile> {
    let name = path.file_name().unwrap_or(OsStr::new("out"));
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
}

/// Opens a FIFO for writing, waiting for its reader; a stop signal (the
/// handlers take no SA_RESTART) ends the wait with an error.
fn open_fifo(path: &Path) -> Result<File, String> {
    use std::os::fd::FromRawFd;
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| "a path with a NUL byte".to_string())?;
    loop {
        // SAFETY: a NUL-terminated path; the descriptor returned is ours.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_WRONLY | libc::O_NOCTTY | libc::O_CLOEXEC,
            )
        };
        if fd >= 0 {
            // SAFETY: a new descriptor, owned by nobody else.
            return Ok(unsafe { File::from_raw_fd(fd) });
        }
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            if crate::signals::stop_requested() {
                return Err("stopped while waiting for a reader of the FIFO".into());
            }
            continue;
        }
        return Err(format!("cannot open it: {e}"));
    }
}

fn writable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a NUL-terminated path.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// clap's parser for [`OutFile`]: an unusable path is a usage error naming
/// the option, the path and why.
#[derive(Clone, Copy, Debug)]
pub struct OutFileParser;

impl clap::builder::TypedValueParser for OutFileParser {
    type Value = OutFile;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<OutFile, clap::Error> {
        OutFile::check(value).map_err(|why| {
            let option = arg
                .and_then(|a| a.get_long().map(|l| format!("--{l}")))
                .unwrap_or_else(|| "output file".into());
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("{option} {}: {why}\n", escape_path(Path::new(value))),
            )
        })
    }
}

impl clap::builder::ValueParserFactory for OutFile {
    type Parser = OutFileParser;
    fn value_parser() -> OutFileParser {
        OutFileParser
    }
}

/// Fails when two output-file options write to one place: both to
/// standard output, or both to one file (each report of one would replace
/// or interleave with the other's).
pub fn distinct_outputs(options: &[(&str, Option<&OutFile>)]) -> anyhow::Result<()> {
    let given: Vec<(&str, &OutFile)> = options
        .iter()
        .filter_map(|(name, f)| Some((*name, (*f)?)))
        .collect();
    let on: Vec<&str> = given
        .iter()
        .filter(|(_, f)| f.is_stdout())
        .map(|(name, _)| *name)
        .collect();
    if on.len() > 1 {
        return Err(crate::usage::usage(format!(
            "{} cannot both write to standard output (-)",
            on.join(" and ")
        )));
    }
    for (i, (a, fa)) in given.iter().enumerate() {
        for (b, fb) in &given[i + 1..] {
            if !fa.is_stdout() && fa.same_place(fb) {
                return Err(crate::usage::usage(format!(
                    "{a} and {b} cannot both write to {}",
                    fa.display()
                )));
            }
        }
    }
    Ok(())
}

impl OutFile {
    /// Both write to one file, node or descriptor.
    fn same_place(&self, other: &OutFile) -> bool {
        let node = |t: &Target| match t {
            Target::InPlace { path, .. } => {
                std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
            }
            _ => None,
        };
        self.target == other.target
            || node(&self.target).is_some_and(|n| Some(n) == node(&other.target))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn links_to_this_processs_descriptors_are_written_through_them() {
        assert_eq!(own_descriptor(Path::new("/dev/stderr")), Some(2));
        assert_eq!(own_descriptor(Path::new("/proc/self/fd/2")), Some(2));
        assert_eq!(own_descriptor(Path::new("/dev/fd/2")), Some(2));
        let own = format!("/proc/{}/fd/2", std::process::id());
        assert_eq!(own_descriptor(Path::new(&own)), Some(2));
        assert_eq!(own_descriptor(Path::new("/proc/1/fd/2")), None);
        assert_eq!(own_descriptor(Path::new("/tmp/2")), None);
        assert!(OutFile::check(OsStr::new("/dev/stdout"))
            .unwrap()
            .is_stdout());
        let d = dir();
        let f = d.path().join("f");
        let file = File::create(&f).unwrap();
        use std::os::fd::AsRawFd;
        let by_fd = format!("/proc/self/fd/{}", file.as_raw_fd());
        let out = OutFile::check(OsStr::new(&by_fd)).unwrap();
        out.write(b"one").unwrap();
        out.write(b"two").unwrap();
        // Written through the descriptor: appended, never replaced.
        assert_eq!(std::fs::read(&f).unwrap(), b"onetwo");
    }

    #[test]
    fn two_options_cannot_write_one_file() {
        let d = dir();
        let a = OutFile::check(d.path().join("x").as_os_str()).unwrap();
        let b = OutFile::check(d.path().join("./x").as_os_str()).unwrap();
        let c = OutFile::check(d.path().join("y").as_os_str()).unwrap();
        let e = distinct_outputs(&[("--a", Some(&a)), ("--b", Some(&b))]).unwrap_err();
        assert!(
            e.to_string().contains("--a and --b cannot both write to"),
            "{e}"
        );
        distinct_outputs(&[("--a", Some(&a)), ("--c", Some(&c)), ("--d", None)]).unwrap();
    }

    #[test]
    fn a_new_name_and_a_regular_file_are_replaced_whole() {
        let d = dir();
        let new = d.path().join("new.svg");
        let f = OutFile::check(new.as_os_str()).unwrap();
        assert!(!new.exists(), "checking made nothing");
        f.write(b"one").unwrap();
        f.write(b"two").unwrap();
        assert_eq!(std::fs::read(&new).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file left");
    }

    #[test]
    fn a_link_is_written_through_and_stays_a_link() {
        let d = dir();
        let target = d.path().join("real");
        std::fs::write(&target, "old").unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        OutFile::check(link.as_os_str())
            .unwrap()
            .write(b"new")
            .unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        // A dangling link: the file is made where it points.
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink("made", &dangling).unwrap();
        OutFile::check(dangling.as_os_str())
            .unwrap()
            .write(b"x")
            .unwrap();
        assert_eq!(std::fs::read(d.path().join("made")).unwrap(), b"x");
    }

    #[test]
    fn a_planted_temporary_link_is_never_followed() {
        let d = dir();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let out = d.path().join("out.prom");
        std::os::unix::fs::symlink(&victim, d.path().join("out.prom.tmp")).unwrap();
        OutFile::check(out.as_os_str())
            .unwrap()
            .write(b"metrics")
            .unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert_eq!(std::fs::read(&out).unwrap(), b"metrics");
    }

    #[test]
    fn nodes_are_written_in_place() {
        let f = OutFile::check(OsStr::new("/dev/null")).unwrap();
        f.write(b"x").unwrap();
        let m = std::fs::metadata("/dev/null").unwrap();
        assert!(m.file_type().is_char_device());
    }

    #[test]
    fn what_cannot_be_a_report_is_refused_with_its_reason() {
        let d = dir();
        let missing = d.path().join("no/such/dir/x");
        let err = |p: &Path| OutFile::check(p.as_os_str()).unwrap_err();
        assert_eq!(err(d.path()), "is a directory");
        assert!(
            err(&missing).starts_with("there is no directory"),
            "{}",
            err(&missing)
        );
        assert_eq!(err(Path::new("")), "an empty path");
        assert!(err(Path::new("/proc/version")).contains("proc"));
        assert!(err(Path::new("/proc/new-file")).contains("proc"));
        let file = d.path().join("file");
        std::fs::write(&file, "").unwrap();
        assert!(err(&file.join("x")).contains("is not a directory"));
        assert!(err(&file.join("x/y")).contains("is not a directory"));
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }
}
