//! The traced workloads: what each tool watches while it is measured. A
//! workload runs the same way under every condition; it reports one value
//! (wall time, or the program's own per-operation time).

use std::ffi::CString;
use std::fs;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::rc::Rc;
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use testbed::Netns;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Wall time of the whole run.
    Millis,
    /// The program's own mean time per malloc+free pair.
    NsPerPair,
}

impl Unit {
    pub fn label(self) -> &'static str {
        match self {
            Unit::Millis => "ms",
            Unit::NsPerPair => "ns per malloc+free",
        }
    }
}

/// One run of a workload, started and ready to go: tracers that follow a
/// process attach to `pid` before `run`.
pub trait Target {
    fn pid(&self) -> Option<u32> {
        None
    }
    fn run(&mut self) -> Result<f64>;
}

/// Per-event output: each event the workload causes prints a line holding
/// `marker`; `sent` of them per run, where the count is known.
pub struct Events {
    pub marker: String,
    pub sent: Option<u64>,
}

/// Causes one event whose line holds `marker` and not the workload's own
/// marker: start-up ends at its first line, without counting as an event.
#[derive(Clone)]
pub struct Probe {
    pub marker: String,
    pub fire: Arc<dyn Fn() + Send + Sync>,
}

type Start = Box<dyn Fn() -> Result<Box<dyn Target>>>;

pub struct Workload {
    pub name: String,
    pub unit: Unit,
    pub events: Option<Events>,
    pub probe: Option<Probe>,
    start: Start,
}

impl Workload {
    pub fn new(name: String, unit: Unit, start: Start) -> Workload {
        Workload {
            name,
            unit,
            events: None,
            probe: None,
            start,
        }
    }

    /// A workload timed as a whole by the bench.
    fn timed(name: impl Into<String>, body: impl Fn() -> Result<()> + 'static) -> Workload {
        let body: Rc<dyn Fn() -> Result<()>> = Rc::new(body);
        Workload::new(
            name.into(),
            Unit::Millis,
            Box::new(move || Ok(Box::new(Timed(body.clone())))),
        )
    }

    pub fn start(&self) -> Result<Box<dyn Target>> {
        (self.start)()
    }
}

struct Timed(Rc<dyn Fn() -> Result<()>>);

impl Target for Timed {
    fn run(&mut self) -> Result<f64> {
        let start = Instant::now();
        (self.0)()?;
        Ok(start.elapsed().as_secs_f64() * 1e3)
    }
}

/// The bench's files, on the target disk (not tmpfs: cachestat's and fio's
/// workloads need a real page cache and block device). Removed on drop.
pub struct Scratch {
    pub dir: PathBuf,
}

impl Scratch {
    pub fn new() -> Result<Scratch> {
        let dir = crate::root_dir()
            .join("target/bench")
            .join(format!("scratch-{}", std::process::id()));
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(Scratch { dir })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// open()+close() of one file in a tight loop: opensnoop prints each.
pub fn open_loop(dir: &Path, n: u64) -> Result<Workload> {
    let target = dir.join("bench-open-target");
    let ready = dir.join("bench-open-ready");
    fs::write(&target, b"x")?;
    fs::write(&ready, b"x")?;
    let cpath = CString::new(target.to_string_lossy().as_bytes())?;
    let mut w = Workload::timed(format!("open()+close() loop, {n} opens"), move || {
        for _ in 0..n {
            // SAFETY: a valid C string; the fd is closed at once.
            unsafe {
                let fd = libc::open(cpath.as_ptr(), libc::O_RDONLY);
                if fd >= 0 {
                    libc::close(fd);
                }
            }
        }
        Ok(())
    });
    w.events = Some(Events {
        marker: target.to_string_lossy().into_owned(),
        sent: Some(n),
    });
    w.probe = Some(Probe {
        marker: ready.to_string_lossy().into_owned(),
        fire: Arc::new(move || {
            let _ = fs::File::open(&ready);
        }),
    });
    Ok(w)
}

/// stat() (glibc's: newfstatat or statx) of one file in a tight loop:
/// statsnoop prints each.
pub fn stat_loop(dir: &Path, n: u64) -> Result<Workload> {
    let target = dir.join("bench-stat-target");
    let ready = dir.join("bench-stat-ready");
    fs::write(&target, b"x")?;
    let cpath = CString::new(target.to_string_lossy().as_bytes())?;
    let mut w = Workload::timed(format!("stat() loop, {n} stats"), move || {
        for _ in 0..n {
            // SAFETY: a valid C string and an all-zero stat buffer.
            unsafe {
                let mut st: libc::stat = std::mem::zeroed();
                libc::stat(cpath.as_ptr(), &mut st);
            }
        }
        Ok(())
    });
    w.events = Some(Events {
        marker: target.to_string_lossy().into_owned(),
        sent: Some(n),
    });
    w.probe = Some(Probe {
        marker: ready.to_string_lossy().into_owned(),
        fire: Arc::new(move || {
            let _ = fs::metadata(&ready);
        }),
    });
    Ok(w)
}

/// fdatasync() of a clean file in a tight loop (each call one event, no
/// I/O to wait for): syncsnoop prints each with the file's path.
pub fn fdatasync_loop(dir: &Path, n: u64) -> Result<Workload> {
    use std::os::fd::AsRawFd;
    let target = dir.join("bench-fdatasync-target");
    let ready = dir.join("bench-fdatasync-ready");
    fs::write(&target, b"x")?;
    fs::write(&ready, b"x")?;
    let file = fs::File::open(&target)?;
    let mut w = Workload::timed(format!("fdatasync() loop, {n} syncs"), move || {
        for _ in 0..n {
            // SAFETY: an open descriptor this closure owns.
            unsafe { libc::fdatasync(file.as_raw_fd()) };
        }
        Ok(())
    });
    // Counted by the call's name, which bpftrace's lines hold too (its
    // probe's name; it shows no file); the probe fsync()s, not counted.
    w.events = Some(Events {
        marker: "fdatasync".into(),
        sent: Some(n),
    });
    let probe = fs::File::open(&ready)?;
    w.probe = Some(Probe {
        marker: ready.to_string_lossy().into_owned(),
        fire: Arc::new(move || {
            // SAFETY: an open descriptor this closure owns.
            unsafe { libc::fsync(probe.as_raw_fd()) };
        }),
    });
    Ok(w)
}

/// A file created and unlinked `n` times (one event each for filegone,
/// which prints its path), timed.
pub fn unlink_loop(dir: &Path, n: u64) -> Result<Workload> {
    let target = dir.join("bench-unlink-target");
    let ready = dir.join("bench-unlink-ready");
    let (t, r) = (target.clone(), ready.clone());
    let mut w = Workload::timed(format!("create+unlink loop, {n} files"), move || {
        for _ in 0..n {
            fs::File::create(&t)?;
            fs::remove_file(&t)?;
        }
        Ok(())
    });
    w.events = Some(Events {
        marker: target.to_string_lossy().into_owned(),
        sent: Some(n),
    });
    w.probe = Some(Probe {
        marker: ready.to_string_lossy().into_owned(),
        fire: Arc::new(move || {
            let _ = fs::File::create(&r).and_then(|_| fs::remove_file(&r));
        }),
    });
    Ok(w)
}

/// A 4 KiB write and a syncfs(), `n` times: the flusher writes each
/// round's page back (writeback's events, on the bench disk's backing
/// device), timed.
pub fn syncfs_loop(dir: &Path, n: u64) -> Result<Workload> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{FileExt, MetadataExt};
    let target = dir.join("bench-syncfs-target");
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(&target)?;
    let page = vec![0x5au8; 4096];
    let dev = file.metadata()?.dev();
    let mut w = Workload::timed(
        format!("4 KiB write + syncfs() loop, {n} syncs"),
        move || {
            for _ in 0..n {
                file.write_all_at(&page, 0)?;
                // SAFETY: an open descriptor this closure owns.
                if unsafe { libc::syncfs(file.as_raw_fd()) } != 0 {
                    return Err(std::io::Error::last_os_error().into());
                }
            }
            Ok(())
        },
    );
    // Lines on the disk's backing device; how many a syncfs makes is the
    // kernel's business (one round or two).
    w.events = backing_device(dev).map(|marker| Events { marker, sent: None });
    Ok(w)
}

/// The name writeback gives the device of a file system on `dev`: its
/// whole disk's MAJ:MIN (a partition's backing device is its disk's).
fn backing_device(dev: u64) -> Option<String> {
    let sys = fs::canonicalize(format!(
        "/sys/dev/block/{}:{}",
        libc::major(dev),
        libc::minor(dev)
    ))
    .ok()?;
    let disk = if sys.join("partition").exists() {
        sys.parent()?.to_path_buf()
    } else {
        sys
    };
    Some(
        fs::read_to_string(disk.join("dev"))
            .ok()?
            .trim()
            .to_string(),
    )
}

/// pread() of one byte of a cached file, `n` times: the tightest loop a
/// file tool sees (each call one event), timed.
pub fn read_loop(dir: &Path, n: u64) -> Result<Workload> {
    let target = dir.join("bench-read-target");
    fs::write(&target, b"x")?;
    let file = fs::File::open(&target)?;
    Ok(Workload::timed(
        format!("1-byte pread() loop, {n} reads"),
        move || {
            use std::os::fd::AsRawFd;
            let mut byte = 0u8;
            for _ in 0..n {
                // SAFETY: one byte into a valid buffer, on an open descriptor.
                let r =
                    unsafe { libc::pread(file.as_raw_fd(), (&mut byte as *mut u8).cast(), 1, 0) };
                if r != 1 {
                    bail!("pread: {}", std::io::Error::last_os_error());
                }
            }
            Ok(())
        },
    ))
}

/// fork+exec of a copy of /bin/true, one after another: execsnoop prints each.
pub fn exec_loop(dir: &Path, n: u64) -> Result<Workload> {
    // Names of at most 15 bytes: the markers are found in exec lines (the
    // path) and in exit lines (the comm, which the kernel cuts at 15).
    let prog = dir.join("bench-exec-true");
    let ready = dir.join("bench-exec-rdy");
    fs::copy("/bin/true", &prog)?;
    fs::copy("/bin/true", &ready)?;
    let run_prog = prog.clone();
    let w = Workload::timed(format!("exec loop, {n} execs"), move || {
        for _ in 0..n {
            let status = Command::new(&run_prog).status()?;
            if !status.success() {
                bail!("{} failed: {status}", run_prog.display());
            }
        }
        Ok(())
    });
    Ok(run_to_mark(
        w,
        "bench-exec-true",
        n,
        "bench-exec-rdy",
        ready,
    ))
}

/// Counts the event lines holding `marker` (`sent` of them), and makes
/// start-up's event by running `ready`, whose lines hold `ready_marker`.
fn run_to_mark(
    mut w: Workload,
    marker: &str,
    sent: u64,
    ready_marker: &str,
    ready: PathBuf,
) -> Workload {
    w.events = Some(Events {
        marker: marker.into(),
        sent: Some(sent),
    });
    w.probe = Some(Probe {
        marker: ready_marker.into(),
        fire: Arc::new(move || {
            let _ = Command::new(&ready).status();
        }),
    });
    w
}

/// A loop in C of the bench's own (src/bench/`src`), built as `name` and
/// run with `n` as its argument, timed: the `sent` event lines its comm
/// (`name`'s first 15 bytes) marks are counted, and a copy of it named
/// `ready` makes start-up's event (with `n` of 1). Short names: BCC's tools
/// show 12 characters of a comm.
fn c_loop(
    dir: &Path,
    src: &str,
    name: &str,
    ready: &str,
    what: String,
    n: u64,
    sent: u64,
) -> Result<Workload> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/bench")
        .join(src);
    let prog = testbed::compile_c(&src, &dir.join(name), &["-O1"])?;
    let ready_prog = dir.join(ready);
    fs::copy(&prog, &ready_prog)?;
    let w = Workload::timed(what, move || {
        let status = Command::new(&prog).arg(n.to_string()).status()?;
        if !status.success() {
            bail!("{} failed: {status}", prog.display());
        }
        Ok(())
    });
    let comm = &name[..name.len().min(15)];
    Ok(run_to_mark(w, comm, sent, ready, ready_prog))
}

/// sig-loop.c: `n` signals a program sends itself (its name is the comm
/// every signal tool shows as the sender).
pub fn signal_loop(dir: &Path, n: u64) -> Result<Workload> {
    let what = format!("kill() loop, {n} signals");
    c_loop(
        dir,
        "sig-loop.c",
        "bench-sig-loop",
        "bench-sig-rdy",
        what,
        n,
        n,
    )
}

/// chown-loop.c: `n` fchown()s of a file of its own, each a capability
/// check.
pub fn chown_loop(dir: &Path, n: u64) -> Result<Workload> {
    let what = format!("fchown() loop, {n} capability checks");
    c_loop(
        dir,
        "chown-loop.c",
        "bench-chown-loop",
        "bench-chown-rdy",
        what,
        n,
        n,
    )
}

/// shm-loop.c: `n` rounds of four shared memory calls in one process.
pub fn shm_loop(dir: &Path, n: u64) -> Result<Workload> {
    let what = format!("shm*() loop, {n} rounds of 4 calls");
    c_loop(
        dir,
        "shm-loop.c",
        "bench-shm-loop",
        "bench-shm-rdy",
        what,
        n,
        4 * n,
    )
}

/// bind-loop.c: `n` sockets bound and listening, one after another.
pub fn bind_loop(dir: &Path, n: u64) -> Result<Workload> {
    let what = format!("bind()+listen() loop, {n} sockets");
    c_loop(dir, "bind-loop.c", "bench-bind", "bench-brdy", what, n, n)
}

/// fd-pass-loop.c: `n` descriptors passed over a unix socket pair and
/// received (a SEND and a RECV line each).
pub fn fd_pass_loop(dir: &Path, n: u64) -> Result<Workload> {
    let what = format!("SCM_RIGHTS pass loop, {n} descriptors");
    c_loop(
        dir,
        "fd-pass-loop.c",
        "bench-fdpass",
        "bench-fdrdy",
        what,
        n,
        2 * n,
    )
}

/// thread-loop.c: `n` threads made and joined in one process.
pub fn thread_loop(dir: &Path, n: u64) -> Result<Workload> {
    let what = format!("pthread_create() loop, {n} threads");
    c_loop(
        dir,
        "thread-loop.c",
        "bench-thr-loop",
        "bench-thr-rdy",
        what,
        n,
        n,
    )
}

/// pipe-lock-loop.c: `threads` threads writing `writes` bytes each into
/// one pipe, timed as a whole.
pub fn pipe_lock_loop(dir: &Path, threads: u32, writes: u32) -> Result<Workload> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bench/pipe-lock-loop.c");
    let prog = testbed::compile_c(&src, &dir.join("bench-pipe-lock"), &["-O1", "-pthread"])?;
    Ok(command(
        &format!("{threads} threads writing one pipe, {writes} 1-byte writes each"),
        &prog.display().to_string(),
        &[threads.to_string(), writes.to_string()],
    ))
}

/// mutex-loop.c: `threads` threads taking one pthread mutex `locks` times
/// each, timed as a whole.
pub fn mutex_loop(dir: &Path, threads: u32, locks: u32) -> Result<Workload> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bench/mutex-loop.c");
    let prog = testbed::compile_c(&src, &dir.join("bench-mutex-loop"), &["-O1", "-pthread"])?;
    Ok(command(
        &format!("{threads} threads taking one mutex, {locks} times each"),
        &prog.display().to_string(),
        &[threads.to_string(), locks.to_string()],
    ))
}

/// `rounds` writes of 1 to /proc/sys/vm/compact_memory, timed as a whole:
/// each compacts every zone, in the writer.
pub fn compact_loop(rounds: u32) -> Workload {
    Workload::timed(
        format!("{rounds} writes to /proc/sys/vm/compact_memory"),
        move || {
            for _ in 0..rounds {
                fs::write("/proc/sys/vm/compact_memory", "1")?;
            }
            Ok(())
        },
    )
}

/// reclaim-read.c in a 16 MiB memory cgroup of the bench's own (removed
/// with the workload): `passes` reads of a 64 MiB file, timed as a whole.
pub fn cgroup_reclaim(dir: &Path, passes: u32) -> Result<Workload> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bench/reclaim-read.c");
    let prog = testbed::compile_c(&src, &dir.join("bench-reclaim-read"), &["-O1"])?;
    let file = dir.join("bench-reclaim-64m");
    let mut f = fs::File::create(&file)?;
    f.write_all(&vec![7u8; 64 << 20])?;
    // Clean pages, which each pass's fadvise drops.
    f.sync_all()?;
    let name = format!("bpfbench-reclaim-{}", std::process::id());
    let cage = testbed::MemoryCage::new(&name, 16 << 20)?;
    Ok(Workload::timed(
        format!("{passes} reads of a 64 MiB file in a 16 MiB memory cgroup"),
        move || {
            let mut cmd = Command::new(&prog);
            cmd.arg(&file).arg(passes.to_string());
            cage.run_inside(&mut cmd);
            let status = cmd.status()?;
            if !status.success() {
                bail!("{} failed: {status}", prog.display());
            }
            Ok(())
        },
    ))
}

/// getppid-loop.c: `n` getppid() calls in one process, timed as a whole.
pub fn getppid_loop(dir: &Path, n: u32) -> Result<Workload> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bench/getppid-loop.c");
    let prog = testbed::compile_c(&src, &dir.join("bench-getppid"), &["-O2"])?;
    Ok(command(
        &format!("getppid() loop, {n} calls"),
        &prog.display().to_string(),
        &[n.to_string()],
    ))
}

/// An external benchmark, timed as a whole; it must succeed.
pub fn command(name: &str, program: &str, args: &[String]) -> Workload {
    let (program, args) = (program.to_string(), args.to_vec());
    Workload::timed(name, move || {
        let out = Command::new(&program)
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("running {program}"))?;
        if !out.status.success() {
            bail!(
                "{program} failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(())
    })
}

/// cpu-job.c: `units` of CPU-bound work in each of two processes, through
/// 64 call paths (frame pointers kept, so every sampler sees them).
pub fn cpu_job(dir: &Path, units: u32) -> Result<Workload> {
    let program = build_cpu_job(dir)?;
    Ok(command(
        &format!("cpu-job, {units} units of work in each of two processes"),
        &program.display().to_string(),
        &[units.to_string()],
    ))
}

/// Builds cpu-job.c into `dir`.
pub fn build_cpu_job(dir: &Path) -> Result<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bench/cpu-job.c");
    testbed::compile_c(
        &src,
        &dir.join("cpu-job"),
        &["-O1", "-fno-omit-frame-pointer"],
    )
}

/// Two processes passing a token over pipes: a context switch per message.
pub fn sched_pipe(loops: u32) -> Workload {
    command(
        &format!("perf bench sched pipe, {loops} round trips"),
        "perf",
        &["bench", "sched", "pipe", "-l", &loops.to_string()].map(String::from),
    )
}

/// fio: 4 KiB random O_DIRECT reads at queue depth 1 on a 64 MiB file.
pub fn fio_randread(dir: &Path) -> Result<Workload> {
    let file = dir.join("bench-fio");
    fs::write(&file, vec![1u8; 64 << 20])?;
    let args = [
        "--name=randread".to_string(),
        format!("--filename={}", file.display()),
        "--rw=randread".into(),
        "--bs=4k".into(),
        "--direct=1".into(),
        "--iodepth=1".into(),
        "--ioengine=psync".into(),
        "--size=64M".into(),
        "--io_size=48M".into(),
        "--output-format=terse".into(),
    ];
    Ok(command(
        "fio 4k random reads, O_DIRECT, QD 1, 48 MiB",
        "fio",
        &args,
    ))
}

/// Re-reads a cached 64 MiB file 100 times: page cache hits only.
pub fn cached_reads(dir: &Path) -> Result<Workload> {
    let file = dir.join("bench-cached");
    fs::write(&file, vec![7u8; 64 << 20])?;
    // Read it once so that every timed read is a hit.
    fs::read(&file)?;
    Ok(Workload::timed(
        "re-reads of a cached 64 MiB file, 100 times",
        move || {
            let mut buf = vec![0u8; 128 << 10];
            for _ in 0..100 {
                let mut f = fs::File::open(&file)?;
                while f.read(&mut buf)? > 0 {}
            }
            Ok(())
        },
    ))
}

/// The tcpretrans workload's namespace (testbed::Netns, as in the tests):
/// its loopback drops every 50th data segment sent to LOSSY_PORT. Every
/// 50th, not a percentage at random: random losses now and then cost a
/// retransmit timeout that swamps the figures.
pub fn lossy_netns() -> Result<Netns> {
    let ns = Netns::new(&format!("bpfbench{}", std::process::id()))?;
    ns.drop_segments(LOSSY_PORT, testbed::Loss::Every(50))?;
    Ok(ns)
}

pub const LOSSY_PORT: u16 = 5001;

pub fn lossy_transfer(ns: &Netns) -> Workload {
    let addr = SocketAddr::from(([127, 0, 0, 1], LOSSY_PORT));
    let connect = {
        let name = ns.name().to_string();
        move || Netns::connect_in(&name, addr)
    };
    let mut w = Workload::timed(
        "100 MB over loopback TCP, every 50th segment dropped",
        move || transfer(connect()?),
    );
    w.events = Some(Events {
        marker: format!("127.0.0.1:{LOSSY_PORT}"),
        sent: None,
    });
    w
}

/// The port of the connect loop, in the same namespace as the lossy
/// transfer (whose rule drops segments to LOSSY_PORT only).
pub const CONNECT_PORT: u16 = 5002;

/// `n` connections to a listener in `ns`, one after another: the server
/// accepts and closes each (its side takes TIME_WAIT, so the client's
/// ports are not used up), the client reads the end and closes.
pub fn connect_loop(ns: &Netns, n: u32) -> Workload {
    let name = ns.name().to_string();
    Workload::timed(
        format!("{n} loopback TCP connections, each accepted and closed"),
        move || {
            let name = name.clone();
            thread::spawn(move || connections_in(&name, n))
                .join()
                .map_err(|_| anyhow::anyhow!("the connecting thread panicked"))?
        },
    )
}

fn connections_in(ns: &str, n: u32) -> Result<()> {
    // A thread of its own, which ends with the loop (the server thread it
    // starts inherits the namespace).
    Netns::enter(ns)?;
    let addr = SocketAddr::from(([127, 0, 0, 1], CONNECT_PORT));
    let listener = std::net::TcpListener::bind(addr)?;
    let server = thread::spawn(move || -> Result<()> {
        for _ in 0..n {
            drop(listener.accept()?);
        }
        Ok(())
    });
    let mut byte = [0u8; 1];
    for _ in 0..n {
        let mut client = TcpStream::connect(addr)?;
        // The server's close: a FIN, read as the end.
        while client.read(&mut byte)? > 0 {}
    }
    server
        .join()
        .map_err(|_| anyhow::anyhow!("the server thread panicked"))?
}

fn transfer((mut client, mut server): (TcpStream, TcpStream)) -> Result<()> {
    client.set_nodelay(true)?;
    let reader = thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        while server.read(&mut buf).is_ok_and(|n| n > 0) {}
    });
    let chunk = [b'x'; 1000];
    for _ in 0..100_000 {
        client.write_all(&chunk)?;
    }
    drop(client);
    reader
        .join()
        .map_err(|_| anyhow::anyhow!("the reader thread panicked"))?;
    Ok(())
}
