//! Each process's executable mappings, followed from the kernel's side-band
//! records as the process makes them ([`crate::kernel::sideband`]), as perf
//! follows them: a process that has exited by the report (a build's
//! compiler, a script's commands), whose binary was deleted since, or that
//! lives in a mount namespace of its own is still symbolized.
//!
//! Each mapped file is opened when its record is read, while the process
//! still has it (`/proc/PID/map_files`), and kept open for the run: a file
//! deleted or replaced later is read through the descriptor. Processes
//! that were running before the tool started are not listed here until
//! they fork or exec; the symbolizer reads those from /proc.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;

use crate::kernel::sideband::{self, Record, SideBand};

/// A file some process mapped executable.
#[derive(Debug)]
pub struct MappedFile {
    /// The path the process mapped it by.
    pub path: String,
    /// Its device (major, minor) and inode: which file it is.
    pub id: FileId,
    /// The file, held open: None where it could not be opened.
    file: Option<File>,
}

/// A file's device (major, minor) and inode.
pub type FileId = ((u32, u32), u64);

impl MappedFile {
    /// A file not opened here (read from /proc/PID/maps by whoever needs
    /// it, while the process lives).
    pub fn unopened(path: String, id: FileId) -> MappedFile {
        MappedFile {
            path,
            id,
            file: None,
        }
    }

    /// The file, held open since it was mapped (None where it could not
    /// be opened then).
    pub fn file(&self) -> Option<&File> {
        self.file.as_ref()
    }

    /// A path that opens this very file for as long as the run lasts
    /// (`/proc/self/fd/N`), even once it is deleted.
    pub fn open_path(&self) -> Option<String> {
        use std::os::fd::AsRawFd;
        self.file
            .as_ref()
            .map(|f| format!("/proc/self/fd/{}", f.as_raw_fd()))
    }

    /// The file's name, as frames show their module.
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

#[derive(Debug, Clone)]
struct Mapping {
    start: u64,
    end: u64,
    pgoff: u64,
    file: Arc<MappedFile>,
}

/// One program's mappings (a process has a new image at each exec),
/// sorted by start and never overlapping.
type Image = Vec<Mapping>;

/// Maps `[start, end)` in `image`, over whatever was there before (a new
/// mapping replaces the overlapped parts of older ones, as mmap does).
fn map_into(image: &mut Image, new: Mapping) {
    let mut kept = Vec::with_capacity(image.len() + 2);
    for m in image.drain(..) {
        if m.end <= new.start || m.start >= new.end {
            kept.push(m);
            continue;
        }
        if m.start < new.start {
            kept.push(Mapping {
                end: new.start,
                ..m.clone()
            });
        }
        if m.end > new.end {
            kept.push(Mapping {
                start: new.end,
                pgoff: m.pgoff + (new.end - m.start),
                ..m
            });
        }
    }
    kept.push(new);
    kept.sort_by_key(|m| m.start);
    *image = kept;
}

/// The images of one process, the newest last: a stack sampled before an
/// exec is still looked up in the image it ran in, where the newest
/// does not cover an address.
#[derive(Default, Debug)]
struct Process {
    images: Vec<Image>,
}

/// Images kept per process: the program and the one before it (a shell's
/// fork that then executed the command).
const IMAGES: usize = 2;
/// Exited processes remembered (the oldest forgotten first): about 40 MB
/// of mappings at ten a process.
const EXITED: usize = 100_000;
/// Files held open at most: beyond, a file is read by its path.
const OPEN_FILES: usize = 4096;

#[derive(Default)]
struct State {
    processes: HashMap<u32, Process>,
    files: HashMap<((u32, u32), u64), Arc<MappedFile>>,
    exited: VecDeque<u32>,
    lost: u64,
    opened: usize,
}

impl State {
    fn apply(&mut self, record: Record) {
        match record {
            Record::Mmap {
                pid,
                start,
                len,
                pgoff,
                dev,
                ino,
                path,
            } => {
                // Anonymous code ("//anon"), the vDSO and other specials.
                if !path.starts_with('/') || path.starts_with("//") {
                    return;
                }
                let file = self.file(pid, start, len, dev, ino, path);
                let process = self.processes.entry(pid).or_default();
                if process.images.is_empty() {
                    process.images.push(Image::new());
                }
                if let Some(image) = process.images.last_mut() {
                    let end = start.saturating_add(len);
                    map_into(
                        image,
                        Mapping {
                            start,
                            end,
                            pgoff,
                            file,
                        },
                    );
                }
            }
            Record::Exec { pid } => {
                let process = self.processes.entry(pid).or_default();
                process.images.push(Image::new());
                if process.images.len() > IMAGES {
                    process.images.remove(0);
                }
            }
            Record::Fork { pid, parent } => {
                if !self.processes.contains_key(&parent) {
                    self.read_proc(parent);
                }
                let image = self
                    .processes
                    .get(&parent)
                    .and_then(|p| p.images.last().cloned());
                if let Some(image) = image {
                    self.processes.insert(
                        pid,
                        Process {
                            images: vec![image],
                        },
                    );
                }
            }
            Record::Exit { pid } => {
                if self.processes.contains_key(&pid) {
                    self.exited.push_back(pid);
                    if self.exited.len() > EXITED {
                        if let Some(old) = self.exited.pop_front() {
                            self.processes.remove(&old);
                        }
                    }
                }
            }
            Record::Lost(n) => self.lost += n,
        }
    }

    /// The file of a mapping just made, opened once for every mapping of
    /// it: the very file mapped where the process still has the mapping,
    /// else by its path in the process's root, then in ours, if that is
    /// still the same file.
    fn file(
        &mut self,
        pid: u32,
        start: u64,
        len: u64,
        dev: (u32, u32),
        ino: u64,
        path: String,
    ) -> Arc<MappedFile> {
        if let Some(f) = self.files.get(&(dev, ino)) {
            return f.clone();
        }
        let same = |f: &File| {
            f.metadata().is_ok_and(|m| {
                m.ino() == ino && (libc::major(m.dev()), libc::minor(m.dev())) == dev
            })
        };
        let file = (self.opened < OPEN_FILES)
            .then(|| {
                let end = start.saturating_add(len);
                File::open(format!("/proc/{pid}/map_files/{start:x}-{end:x}"))
                    .ok()
                    .or_else(|| {
                        File::open(format!("/proc/{pid}/root{path}"))
                            .ok()
                            .filter(same)
                    })
                    .or_else(|| File::open(&path).ok().filter(same))
            })
            .flatten();
        self.opened += usize::from(file.is_some());
        let f = Arc::new(MappedFile {
            path,
            id: (dev, ino),
            file,
        });
        self.files.insert((dev, ino), f.clone());
        f
    }

    /// A process the side band has not seen map anything (it was running
    /// before the tool started), as /proc shows it now: read when it
    /// forks, so that its child starts with its mappings.
    fn read_proc(&mut self, pid: u32) {
        let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else {
            return;
        };
        let mut image = Image::new();
        for line in maps.lines() {
            let Some(m) = parse_maps_line(line) else {
                continue;
            };
            let file = self.file(pid, m.start, m.end - m.start, m.dev, m.ino, m.path);
            map_into(
                &mut image,
                Mapping {
                    start: m.start,
                    end: m.end,
                    pgoff: m.pgoff,
                    file,
                },
            );
        }
        self.processes.insert(
            pid,
            Process {
                images: vec![image],
            },
        );
    }

    fn regions(&self, pid: u32) -> Option<Vec<Region>> {
        let image = self.processes.get(&pid)?.images.last()?;
        Some(
            image
                .iter()
                .map(|m| Region {
                    range: m.start..m.end,
                    pgoff: m.pgoff,
                    file: m.file.clone(),
                })
                .collect(),
        )
    }

    fn translate(&self, pid: u32, addr: u64) -> Option<(Arc<MappedFile>, u64)> {
        let process = self.processes.get(&pid)?;
        process.images.iter().rev().find_map(|image| {
            let i = image.partition_point(|m| m.start <= addr).checked_sub(1)?;
            let m = &image[i];
            (addr < m.end).then(|| (m.file.clone(), addr - m.start + m.pgoff))
        })
    }
}

/// One executable mapping of a file, as /proc/PID/maps shows it.
pub(crate) struct MapsLine {
    pub start: u64,
    pub end: u64,
    pub pgoff: u64,
    pub dev: (u32, u32),
    pub ino: u64,
    pub path: String,
}

/// A line of /proc/PID/maps, where it maps a file executable.
pub(crate) fn parse_maps_line(line: &str) -> Option<MapsLine> {
    let mut f = line.split_whitespace();
    let (range, perms, pgoff, dev, ino) = (f.next()?, f.next()?, f.next()?, f.next()?, f.next()?);
    let path = f.collect::<Vec<_>>().join(" ");
    if !perms.contains('x') || !path.starts_with('/') {
        return None;
    }
    let (start, end) = range.split_once('-')?;
    let (major, minor) = dev.split_once(':')?;
    Some(MapsLine {
        start: u64::from_str_radix(start, 16).ok()?,
        end: u64::from_str_radix(end, 16).ok()?,
        pgoff: u64::from_str_radix(pgoff, 16).ok()?,
        dev: (
            u32::from_str_radix(major, 16).ok()?,
            u32::from_str_radix(minor, 16).ok()?,
        ),
        ino: ino.parse().ok()?,
        path,
    })
}

struct Shared {
    band: Mutex<Option<SideBand>>,
    state: Mutex<State>,
    stop: AtomicBool,
}

impl Shared {
    /// Reads and applies every record written so far. The state is held
    /// from the read to the last record applied: a caller that finds the
    /// ring empty because the reader thread has just taken its records
    /// waits for them to be applied (else it would look up a process the
    /// state does not have yet).
    fn drain(&self) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        let records = match self.band.lock() {
            Ok(mut band) => band.as_mut().map(SideBand::read).unwrap_or_default(),
            Err(_) => return,
        };
        for r in records {
            state.apply(r);
        }
    }
}

/// Where an address is: a file, and the offset in it.
pub type Place = (Arc<MappedFile>, u64);

/// One executable mapping of a file in a process.
pub struct Region {
    pub range: std::ops::Range<u64>,
    /// The file offset mapped at the range's start.
    pub pgoff: u64,
    pub file: Arc<MappedFile>,
}

/// What [`Mappings`] knows, for another part of the tool (the DWARF
/// unwinder) to ask while the side band runs.
#[derive(Clone)]
pub struct View(Arc<Shared>);

impl View {
    /// Process `pid`'s executable mappings in its current program; None
    /// for a process the side band has not seen (running before the tool
    /// started). Reads what the kernel wrote so far first: the process's
    /// records are older than any stack of it read now.
    pub fn regions(&self, pid: u32) -> Option<Vec<Region>> {
        self.0.drain();
        self.0.state.lock().ok()?.regions(pid)
    }
}

/// The side band read by a thread of its own while the tool runs.
pub struct Mappings {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Mappings {
    /// Opens the side band on every online CPU and starts reading it.
    pub fn start() -> Result<Mappings> {
        let band = SideBand::open()?;
        let fds = band.fds();
        let shared = Arc::new(Shared {
            band: Mutex::new(Some(band)),
            state: Mutex::new(State::default()),
            stop: AtomicBool::new(false),
        });
        let reader = shared.clone();
        let thread = std::thread::Builder::new()
            .name("mappings".into())
            .spawn(move || {
                while !reader.stop.load(Ordering::Relaxed) {
                    // The descriptors stay open: the side band is only
                    // closed after this thread has ended.
                    sideband::wait(&fds, Duration::from_millis(100));
                    reader.drain();
                }
            })?;
        Ok(Mappings {
            shared,
            thread: Some(thread),
        })
    }

    /// A view of the mappings for another part of the tool.
    pub fn view(&self) -> View {
        View(self.shared.clone())
    }

    /// Reads what the kernel has written so far: call it before a report.
    pub fn sync(&self) {
        self.shared.drain();
    }

    /// Whether process `pid`'s mappings are known here.
    pub fn knows(&self, pid: u32) -> bool {
        self.shared
            .state
            .lock()
            .is_ok_and(|s| s.processes.contains_key(&pid))
    }

    /// The file and file offset of each address of process `pid` (None
    /// for an address in no known mapping); None for a process not known.
    pub fn translate(&self, pid: u32, addrs: &[u64]) -> Option<Vec<Option<Place>>> {
        let state = self.shared.state.lock().ok()?;
        state
            .processes
            .contains_key(&pid)
            .then(|| addrs.iter().map(|a| state.translate(pid, *a)).collect())
    }

    /// Records the kernel could not write for a full ring.
    pub fn lost(&self) -> u64 {
        self.shared.state.lock().map_or(0, |s| s.lost)
    }
}

impl Drop for Mappings {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if let Ok(mut band) = self.shared.band.lock() {
            band.take();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str) -> Arc<MappedFile> {
        Arc::new(MappedFile {
            path: path.into(),
            id: ((0, 0), 0),
            file: None,
        })
    }

    fn mmap(pid: u32, start: u64, len: u64, pgoff: u64, path: &str, ino: u64) -> Record {
        Record::Mmap {
            pid,
            start,
            len,
            pgoff,
            dev: (0, 0),
            ino,
            path: path.into(),
        }
    }

    fn at(s: &State, pid: u32, addr: u64) -> Option<(String, u64)> {
        s.translate(pid, addr).map(|(f, off)| (f.path.clone(), off))
    }

    #[test]
    fn a_new_mapping_replaces_the_part_it_overlaps() {
        let mut image = Image::new();
        let m = |start, end, pgoff, path| Mapping {
            start,
            end,
            pgoff,
            file: file(path),
        };
        map_into(&mut image, m(0x1000, 0x5000, 0, "a"));
        map_into(&mut image, m(0x2000, 0x3000, 0x100, "b"));
        let spans: Vec<(u64, u64, u64, &str)> = image
            .iter()
            .map(|m| (m.start, m.end, m.pgoff, m.file.path.as_str()))
            .collect();
        assert_eq!(
            spans,
            [
                (0x1000, 0x2000, 0, "a"),
                (0x2000, 0x3000, 0x100, "b"),
                (0x3000, 0x5000, 0x2000, "a"),
            ]
        );
    }

    #[test]
    fn exec_fork_and_exit_follow_a_process_to_its_end() {
        let mut s = State::default();
        // Pids far above pid_max: /proc has nothing to say of them.
        let (shell, child) = (0x7fff_fff0, 0x7fff_fff1);
        s.apply(mmap(shell, 0x1000, 0x1000, 0, "/bin/sh", 1));
        s.apply(Record::Fork {
            pid: child,
            parent: shell,
        });
        assert_eq!(at(&s, child, 0x1010), Some(("/bin/sh".into(), 0x10)));
        s.apply(Record::Exec { pid: child });
        s.apply(mmap(child, 0x40_0000, 0x2000, 0x1000, "/tmp/prog", 2));
        s.apply(Record::Exit { pid: child });
        // Gone, and still known: the new image first, the old one where
        // the new has nothing.
        assert_eq!(at(&s, child, 0x40_0010), Some(("/tmp/prog".into(), 0x1010)));
        assert_eq!(at(&s, child, 0x1010), Some(("/bin/sh".into(), 0x10)));
        assert_eq!(at(&s, child, 0x9000), None);
        // Specials are no files.
        s.apply(mmap(child, 0x9000, 0x1000, 0, "[vdso]", 0));
        s.apply(mmap(child, 0x9000, 0x1000, 0, "//anon", 0));
        assert_eq!(at(&s, child, 0x9000), None);
        assert!(s.translate(0x7fff_fff2, 0x1010).is_none());
    }

    #[test]
    fn maps_lines_give_executable_file_mappings_only() {
        let l = parse_maps_line(
            "7f1c2a028000-7f1c2a1bd000 r-xp 00028000 fe:01 1835098    /usr/lib/x86_64-linux-gnu/libc.so.6",
        )
        .unwrap();
        assert_eq!(
            (l.start, l.end, l.pgoff, l.dev, l.ino),
            (0x7f1c2a028000, 0x7f1c2a1bd000, 0x28000, (0xfe, 1), 1835098)
        );
        assert_eq!(l.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
        assert!(parse_maps_line("7ffd0000-7ffd1000 r-xp 00000000 00:00 0  [vdso]").is_none());
        assert!(parse_maps_line("55550000-55551000 r--p 00000000 fe:01 12 /bin/x").is_none());
    }
}
