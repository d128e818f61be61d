//! The contract's output-file checks: what `--svg`, `--pprof`, `--prom-file`
//! and `--hdr-log` do with every kind of path (common::output::file's rule),
//! for every tool that has such options (those whose value `-h` shows as
//! `<FILE>`, which only output files use).

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::contract::Spec;
use crate::{program_ids_of, require_root, run, still_loaded};

/// The output-file options `bin -h` lists.
pub fn file_options(bin: &str) -> Vec<String> {
    run(bin, &["-h"])
        .stdout
        .iter()
        .filter(|l| l.contains(" <FILE>"))
        .filter_map(|l| {
            l.split([',', ' '])
                .find(|w| w.starts_with("--"))
                .map(str::to_string)
        })
        .collect()
}

/// A tool run to its end: status, stdout's bytes, stderr.
struct Ran {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

/// Runs `bin args…` with stdout and stderr to files in `dir`: until it exits
/// by itself (a usage error), or once it holds its programs, for a second
/// more, then SIGINT. `fifo`: a FIFO read (non-blocking) meanwhile, whose
/// bytes are returned too.
fn run_in(bin: &str, args: &[String], dir: &Path, fifo: Option<&Path>) -> (Ran, Vec<u8>) {
    run_to(bin, args, dir, fifo, None)
}

/// [`run_in`], with standard output appended to `log` (a shell's `>>`)
/// where given.
fn run_to(
    bin: &str,
    args: &[String],
    dir: &Path,
    fifo: Option<&Path>,
    log: Option<&Path>,
) -> (Ran, Vec<u8>) {
    // Names of their own: runs share a directory side by side.
    let out_path = log.map_or_else(|| dir.join(crate::unique(".stdout")), Path::to_path_buf);
    let err_path = dir.join(crate::unique(".stderr"));
    let mut reader = fifo.map(|p| {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(p)
            .expect("opening the FIFO's read end")
    });
    let mut got = Vec::new();
    let mut drain = |reader: &mut Option<File>| {
        if let Some(r) = reader {
            let mut buf = [0u8; 65536];
            while let Ok(n @ 1..) = r.read(&mut buf) {
                got.extend_from_slice(&buf[..n]);
            }
        }
    };
    let mut child = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(match log {
            Some(log) => std::fs::OpenOptions::new().append(true).open(log).unwrap(),
            None => File::create(&out_path).unwrap(),
        })
        .stderr(File::create(&err_path).unwrap())
        .spawn()
        .expect("spawning the tool");
    let start = Instant::now();
    let mut loaded_at: Option<Instant> = None;
    let mut held = Vec::new();
    let status = loop {
        drain(&mut reader);
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if loaded_at.is_none() {
            held = program_ids_of(child.id());
            if !held.is_empty() {
                loaded_at = Some(Instant::now());
            }
        }
        let stop = loaded_at.is_some_and(|t| t.elapsed() > Duration::from_millis(1500))
            || start.elapsed() > Duration::from_secs(60);
        if stop {
            // SAFETY: kill with our own child's pid.
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            let deadline = Instant::now() + Duration::from_secs(20);
            let status = loop {
                drain(&mut reader);
                if let Some(status) = child.try_wait().unwrap() {
                    break status;
                }
                assert!(Instant::now() < deadline, "{bin} {args:?} did not end");
                std::thread::sleep(Duration::from_millis(10));
            };
            break status;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    drain(&mut reader);
    let left = still_loaded(&held);
    assert!(left.is_empty(), "{args:?}: programs {left:?} still loaded");
    let ran = Ran {
        code: status.code(),
        stdout: std::fs::read(&out_path).unwrap(),
        stderr: std::fs::read_to_string(&err_path).unwrap(),
    };
    if log.is_none() {
        let _ = std::fs::remove_file(out_path);
    }
    let _ = std::fs::remove_file(err_path);
    (ran, got)
}

/// Panics unless `bytes` are a whole output of the option's format.
fn assert_format(option: &str, bytes: &[u8], context: &str) {
    let text = || String::from_utf8_lossy(bytes).into_owned();
    match option {
        "--svg" => {
            let t = text();
            assert!(
                t.starts_with("<?xml") && t.trim_end().ends_with("</svg>"),
                "{context}: not an SVG: {:.200}",
                t
            );
        }
        "--pprof" => {
            let mut raw = Vec::new();
            flate2::read::GzDecoder::new(bytes)
                .read_to_end(&mut raw)
                .unwrap_or_else(|e| panic!("{context}: not a gzipped profile: {e}"));
            assert!(!raw.is_empty(), "{context}: an empty profile");
        }
        "--prom-file" => {
            let t = text();
            assert!(t.contains("# EOF"), "{context}: no '# EOF': {t:.300}");
            for line in t.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
                let value = line.rsplit(' ').next().unwrap_or_default();
                assert!(
                    value.parse::<f64>().is_ok() || value == "+Inf",
                    "{context}: not a sample line: {line}"
                );
            }
        }
        "--hdr-log" => {
            let t = text();
            assert!(
                t.starts_with('#') && t.contains("StartTime"),
                "{context}: not an HdrHistogram log: {t:.300}"
            );
        }
        other => panic!("no format check for {other}"),
    }
}

/// True when the tool said the report held nothing to write (a stack tool
/// whose report had no stack leaves its file alone, and says so).
fn nothing_to_write(ran: &Ran) -> bool {
    ran.stderr.contains("no stacks in this report")
}

fn is_symlink(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

fn mknod(path: &Path, mode: libc::mode_t, dev: libc::dev_t) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    let rc = unsafe { libc::mknod(c.as_ptr(), mode, dev) };
    assert_eq!(rc, 0, "mknod {}", path.display());
}

/// Every output-file option with each kind of path: a device node of the
/// test's own and a FIFO are written in place (unchanged, the FIFO's reader
/// gets the output), a link is written through and stays a link, a link
/// planted at PATH.tmp is never followed, a regular file is replaced, `-`
/// is standard output; a directory or a missing directory is a usage error
/// before anything loads, leaving nothing behind.
pub fn output_files_keep_what_they_name(spec: &Spec) {
    require_root();
    let options = file_options(spec.bin);
    if options.is_empty() {
        eprintln!("{}: no output-file option", spec.bin);
        return;
    }
    let base: Vec<String> = spec.args.iter().map(|s| s.to_string()).collect();
    let with = |opt: &str, path: &Path| with_file(&base, opt, path);
    let mut jobs: Vec<Box<dyn FnOnce() + Send>> = Vec::new();
    let mut dirs = Vec::new();
    for opt in &options {
        let dir: PathBuf = std::env::temp_dir().join(crate::unique("outfiles"));
        std::fs::create_dir_all(&dir).unwrap();

        // Refused before anything loads, leaving nothing.
        let sub = dir.join("sub");
        std::fs::create_dir(&sub).unwrap();
        for (path, why) in [
            (sub.clone(), "is a directory"),
            (dir.join("missing/x"), "no directory"),
        ] {
            let (ran, _) = run_in(spec.bin, &with(opt, &path), &dir, None);
            assert_eq!(
                ran.code,
                Some(2),
                "{opt} {}: {}",
                path.display(),
                ran.stderr
            );
            let lines: Vec<&str> = ran.stderr.lines().collect();
            assert_eq!(lines.len(), 1, "{opt}: not one line: {}", ran.stderr);
            assert!(
                lines[0].contains(opt.as_str()) && lines[0].contains(why),
                "{opt}: {}",
                lines[0]
            );
            assert!(ran.stdout.is_empty());
        }
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["sub"], "{opt}: the refused runs left files behind");
        assert!(!dir.join("sub.tmp").exists());

        if !spec.attaches() {
            let _ = std::fs::remove_dir_all(&dir);
            continue;
        }
        jobs.extend(attaching_cases(spec.bin, &base, opt, &dir));
        dirs.push(dir);
    }
    // Once, with the first option: a FIFO nobody reads, and /dev/stdout
    // appended to a log.
    if let Some(opt) = options.first().filter(|_| spec.attaches()) {
        jobs.extend(first_option_cases(spec.bin, &base, opt));
    }
    // Each case runs a tool for a second and a half after it has loaded:
    // all side by side (they mostly wait), one at a time for a heavy tool.
    let width = if spec.heavy { 1 } else { jobs.len() };
    crate::in_parallel(width, jobs);
    for dir in dirs {
        let _ = std::fs::remove_dir_all(&dir);
    }
    // Two options cannot both take standard output.
    if let [a, b, ..] = options.as_slice() {
        let mut args = base.clone();
        args.extend([a.clone(), "-".into(), b.clone(), "-".into()]);
        let dir = std::env::temp_dir().join(crate::unique("outfiles"));
        std::fs::create_dir_all(&dir).unwrap();
        let (ran, _) = run_in(spec.bin, &args, &dir, None);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(ran.code, Some(2), "{args:?}: {}", ran.stderr);
        assert!(
            ran.stderr.contains(a.as_str()) && ran.stderr.contains(b.as_str()),
            "{}",
            ran.stderr
        );
        // Nor both write one file: each would replace the other's.
        let mut args = base.clone();
        args.extend([a.clone(), "one".into(), b.clone(), "./one".into()]);
        let dir = std::env::temp_dir().join(crate::unique("outfiles"));
        std::fs::create_dir_all(&dir).unwrap();
        let (ran, _) = run_in(spec.bin, &args, &dir, None);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(ran.code, Some(2), "{args:?}: {}", ran.stderr);
        assert!(
            ran.stderr.contains(a.as_str()) && ran.stderr.contains(b.as_str()),
            "{}",
            ran.stderr
        );
    }
}

/// The cases run once, with the first output-file option: a FIFO nobody
/// reads (the tool waits for a reader before it loads anything, and a stop
/// signal ends the wait with a usage error), and /dev/stdout appended to a
/// log. Jobs for [`crate::in_parallel`], each in a directory of its own.
fn first_option_cases(
    bin: &'static str,
    base: &[String],
    opt: &str,
) -> Vec<Box<dyn FnOnce() + Send>> {
    let (b1, o1) = (base.to_vec(), opt.to_string());
    let (b2, o2) = (base.to_vec(), opt.to_string());
    vec![
        Box::new(move || {
            let (base, opt) = (b1, o1.as_str());
            let with = |opt: &str, path: &Path| with_file(&base, opt, path);
            let dir = std::env::temp_dir().join(crate::unique("outfiles"));
            std::fs::create_dir_all(&dir).unwrap();
            let fifo = dir.join("fifo");
            mknod(&fifo, libc::S_IFIFO | 0o600, 0);
            let mut child = Command::new(bin)
                .args(with(opt, &fifo))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            std::thread::sleep(Duration::from_millis(700));
            assert!(
                program_ids_of(child.id()).is_empty(),
                "{opt}: programs loaded while waiting for the FIFO's reader"
            );
            // SAFETY: kill with our own child's pid.
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            let deadline = Instant::now() + Duration::from_secs(5);
            let status = loop {
                if let Some(status) = child.try_wait().unwrap() {
                    break status;
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    panic!("{opt} FIFO without a reader: SIGINT did not end the wait");
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            let mut err = String::new();
            let _ = child.stderr.take().unwrap().read_to_string(&mut err);
            assert_eq!(status.code(), Some(2), "{opt}: {err}");
            assert!(err.contains(opt) && err.contains("reader"), "{err}");
            let _ = std::fs::remove_dir_all(&dir);
        }),
        Box::new(move || {
            let (base, opt) = (b2, o2.as_str());
            let with = |opt: &str, path: &Path| with_file(&base, opt, path);
            let dir = std::env::temp_dir().join(crate::unique("outfiles"));
            std::fs::create_dir_all(&dir).unwrap();
            let ctx = |case: &str| format!("{bin} {opt} ({case})");
            // /dev/stdout where the shell appends to a log: written through the
            // descriptor, as `-`; the log keeps what it had.
            let log = dir.join("log");
            std::fs::write(&log, "kept\n").unwrap();
            let (ran, _) = run_to(
                bin,
                &with(opt, Path::new("/dev/stdout")),
                &dir,
                None,
                Some(&log),
            );
            assert_eq!(ran.code, Some(0), "{}: {}", ctx("/dev/stdout"), ran.stderr);
            let logged = std::fs::read(&log).unwrap();
            assert!(
                logged.starts_with(b"kept\n"),
                "{}: the log was replaced",
                ctx("/dev/stdout")
            );
            if !nothing_to_write(&ran) {
                assert_format(opt, &logged[5..], &ctx("/dev/stdout"));
            }
            let _ = std::fs::remove_dir_all(&dir);
        }),
    ]
}

/// `base` with `opt PATH` added.
fn with_file(base: &[String], opt: &str, path: &Path) -> Vec<String> {
    let mut a = base.to_vec();
    a.push(opt.into());
    a.push(path.to_string_lossy().into_owned());
    a
}

/// One case: the tool, its arguments with the option naming a path, the
/// option, the case's directory.
type Case = fn(&'static str, &dyn Fn(&Path) -> Vec<String>, &str, &Path);

/// The cases of one output-file option that run the tool (in `dir`, each
/// on paths of its own): jobs for [`crate::in_parallel`].
fn attaching_cases(
    bin: &'static str,
    base: &[String],
    opt: &str,
    dir: &Path,
) -> Vec<Box<dyn FnOnce() + Send>> {
    let case = |f: Case| {
        let (base, opt, dir) = (base.to_vec(), opt.to_string(), dir.to_path_buf());
        Box::new(move || f(bin, &|p: &Path| with_file(&base, &opt, p), &opt, &dir))
            as Box<dyn FnOnce() + Send>
    };
    vec![
        // A file that cannot be written (/dev/full): an error, exit 1.
        case(|bin, with, opt, dir| {
            let (ran, _) = run_in(bin, &with(Path::new("/dev/full")), dir, None);
            if !nothing_to_write(&ran) {
                assert_eq!(ran.code, Some(1), "{bin} {opt} (/dev/full): {}", ran.stderr);
                assert!(ran.stderr.contains(opt), "{}", ran.stderr);
            }
        }),
        // A regular file: replaced, holding the output.
        case(|bin, with, opt, dir| {
            let ctx = format!("{bin} {opt} (regular file)");
            let regular = dir.join("regular");
            std::fs::write(&regular, "old").unwrap();
            let (ran, _) = run_in(bin, &with(&regular), dir, None);
            assert_eq!(ran.code, Some(0), "{ctx}: {}", ran.stderr);
            if !nothing_to_write(&ran) {
                assert_format(opt, &std::fs::read(&regular).unwrap(), &ctx);
            }
        }),
        // A link to a regular file: written through, still a link.
        case(|bin, with, opt, dir| {
            let ctx = format!("{bin} {opt} (link)");
            let target = dir.join("target");
            std::fs::write(&target, "old").unwrap();
            let link = dir.join("link");
            std::os::unix::fs::symlink(&target, &link).unwrap();
            let (ran, _) = run_in(bin, &with(&link), dir, None);
            assert_eq!(ran.code, Some(0), "{ctx}: {}", ran.stderr);
            assert!(is_symlink(&link), "{ctx}: the link was replaced");
            if !nothing_to_write(&ran) {
                assert_format(opt, &std::fs::read(&target).unwrap(), &ctx);
            }
        }),
        // A link planted at the old temporary name: never followed.
        case(|bin, with, opt, dir| {
            let ctx = format!("{bin} {opt} (planted link)");
            let victim = dir.join("victim");
            std::fs::write(&victim, "must not change").unwrap();
            let planted = dir.join("planted");
            std::os::unix::fs::symlink(&victim, dir.join("planted.tmp")).unwrap();
            let (ran, _) = run_in(bin, &with(&planted), dir, None);
            assert_eq!(ran.code, Some(0), "{ctx}: {}", ran.stderr);
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "must not change");
            if !nothing_to_write(&ran) {
                assert_format(opt, &std::fs::read(&planted).unwrap(), &ctx);
            }
        }),
        // A character device of the test's own (null's numbers).
        case(|bin, with, opt, dir| {
            let ctx = format!("{bin} {opt} (device)");
            let node = dir.join("null");
            mknod(&node, libc::S_IFCHR | 0o666, libc::makedev(1, 3));
            let (ran, _) = run_in(bin, &with(&node), dir, None);
            assert_eq!(ran.code, Some(0), "{ctx}: {}", ran.stderr);
            let m = std::fs::symlink_metadata(&node).unwrap();
            assert!(
                m.file_type().is_char_device() && m.rdev() == libc::makedev(1, 3),
                "{ctx}: the device node was replaced"
            );
        }),
        // A FIFO read by the test: it gets the output, and stays a FIFO.
        case(|bin, with, opt, dir| {
            let ctx = format!("{bin} {opt} (FIFO)");
            let fifo = dir.join("fifo");
            mknod(&fifo, libc::S_IFIFO | 0o600, 0);
            let (ran, got) = run_in(bin, &with(&fifo), dir, Some(&fifo));
            assert_eq!(ran.code, Some(0), "{ctx}: {}", ran.stderr);
            assert!(std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo());
            if !nothing_to_write(&ran) {
                assert_format(opt, &got, &ctx);
            }
        }),
        // `-`: standard output holds the file alone.
        case(|bin, with, opt, dir| {
            let ctx = format!("{bin} {opt} (-)");
            let (ran, _) = run_in(bin, &with(Path::new("-")), dir, None);
            assert_eq!(ran.code, Some(0), "{ctx}: {}", ran.stderr);
            if !nothing_to_write(&ran) {
                assert_format(opt, &ran.stdout, &ctx);
            }
        }),
    ]
}
