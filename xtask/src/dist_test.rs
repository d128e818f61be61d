//! `cargo xtask dist --test`: each artifact on a machine that never saw the
//! source. A bare Debian 12 root (mmdebstrap) gets the .deb through apt, so
//! a missing dependency fails; in a chroot of it (with /proc, /sys and
//! tracefs) the installed tools trace for real, `man` reads a page and a
//! bash completion completes. The tarball's binaries run in the same root
//! with nothing installed for them, and need no library but glibc's.
//! lintian checks the .deb, `rpm -qlp` the .rpm's file list.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::dist::Artifacts;
use crate::{check, deps, root_dir};

/// The bare Debian root, built by mmdebstrap in a thread of its own while
/// the artifacts build: it downloads and unpacks (network and disk) while
/// cargo compiles, a minute or two that CI no longer waits for.
pub struct BareRoot {
    path: PathBuf,
    built: std::thread::JoinHandle<Result<()>>,
}

impl BareRoot {
    /// Installs what the test needs and starts the root. Outside
    /// target/dist, which each packaging run clears.
    pub fn start() -> Result<BareRoot> {
        deps(&["mmdebstrap", "lintian", "rpm"])?;
        let path = root_dir().join("target/dist-test/bare-root");
        remove_root(&path)?;
        fs::create_dir_all(path.parent().expect("a parent"))?;
        let target = path.clone();
        let built = std::thread::spawn(move || {
            step("building a bare Debian 12 root (mmdebstrap), while the artifacts build");
            let out = Command::new("mmdebstrap")
                .args([
                    "--quiet",
                    "--variant=apt",
                    "--include=man-db,bash-completion",
                    "bookworm",
                ])
                .arg(&target)
                .stdin(Stdio::null())
                .output()
                .context("running mmdebstrap")?;
            if !out.status.success() {
                bail!(
                    "mmdebstrap failed ({}):\n{}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            Ok(())
        });
        Ok(BareRoot { path, built })
    }

    /// The root, once mmdebstrap has made it.
    fn ready(self) -> Result<PathBuf> {
        self.built
            .join()
            .map_err(|_| anyhow::anyhow!("the mmdebstrap thread panicked"))??;
        Ok(self.path)
    }
}

pub fn run(a: &Artifacts, bare: BareRoot) -> Result<()> {
    let started = Instant::now();
    // lintian (a minute of CPU) beside the steps in the root, which mostly
    // wait on apt and the tools.
    let deb = a.deb.clone();
    let lint = std::thread::spawn(move || lintian(&deb));
    rpm_file_list(&a.rpm)?;
    let root = bare.ready()?;
    let mounts = Mounts::new(&root)?;
    let in_root = |script: &str| -> Result<String> {
        let out = Command::new("chroot")
            .arg(&root)
            .args(["/bin/bash", "-euo", "pipefail", "-c", script])
            .env(
                "PATH",
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            )
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("chroot: {script}"))?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            bail!(
                "in the bare root, `{script}` failed ({}):\n{stdout}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(stdout)
    };

    step("installing the .deb with apt");
    fs::copy(&a.deb, root.join("tmp/bpftools.deb"))?;
    // apt resolves the .deb's dependencies from the archive, as a user's
    // would: lists first (mmdebstrap leaves none), with the host's resolver.
    fs::copy("/etc/resolv.conf", root.join("etc/resolv.conf"))?;
    in_root("apt-get update -q >/dev/null && apt-get install -y -q /tmp/bpftools.deb")?;
    for tool in crate::tools::TOOLS.iter().flat_map(|t| t.all_names()) {
        in_root(&format!(
            "test -x /usr/sbin/{tool} && test -f /usr/share/man/man8/{tool}.8.gz"
        ))?;
    }
    step("biolatency 1 1, installed");
    let out = in_root("biolatency 1 1")?;
    expect(&out, "Tracing block device I/O", "biolatency's banner")?;
    step("execsnoop catching an exec, installed");
    let out = in_root(
        "execsnoop --json > /tmp/exec.json 2>/dev/null & pid=$!; sleep 2; \
         /bin/true bpftools-dist-check; sleep 0.5; kill -INT $pid; wait $pid; cat /tmp/exec.json",
    )?;
    expect(&out, "bpftools-dist-check", "execsnoop's event")?;
    step("bpftools doctor, installed");
    let out = in_root("bpftools doctor runqlat")?;
    expect(&out, "runqlat ", "doctor's row for runqlat")?;
    expect(&out, "THIS MACHINE", "doctor's machine")?;
    step("man and bash completion, installed");
    let out = in_root("MANWIDTH=80 man -P cat bpftools-doctor 2>/dev/null")?;
    expect(&out, "DEGRADED", "man bpftools-doctor")?;
    let out = in_root("MANWIDTH=80 man -P cat biolatency 2>/dev/null")?;
    expect(&out, "EXAMPLES", "man biolatency")?;
    let out = in_root("MANWIDTH=80 man -P cat -l /usr/share/man/man8/runqlat.8.gz 2>/dev/null")?;
    expect(&out, "FIELDS", "man -l on runqlat's page")?;
    let out = in_root(
        "source /usr/share/bash-completion/bash_completion; \
         source /usr/share/bash-completion/completions/biolatency; \
         COMP_WORDS=(biolatency --perc); COMP_CWORD=1; COMP_LINE='biolatency --perc'; \
         COMP_POINT=${#COMP_LINE}; _biolatency biolatency --perc biolatency; \
         echo \"${COMPREPLY[@]}\"",
    )?;
    expect(&out, "--percentiles", "the bash completion")?;
    in_root("apt-get remove -y -q bpftools >/dev/null")?;

    step("the tarball's binaries, in the same root with nothing installed for them");
    let name = a
        .tarball
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".tar.gz"))
        .context("tarball name")?
        .to_string();
    check(
        Command::new("tar")
            .arg("-xzf")
            .arg(&a.tarball)
            .arg("-C")
            .arg(root.join("opt")),
    )?;
    in_root(&format!(
        "cd /opt/{name} && DESTDIR=/tmp/staged PREFIX=/usr PROGRAM_PREFIX=bpf- ./install.sh >/dev/null \
         && test -x /tmp/staged/usr/sbin/bpf-runqlat"
    ))?;
    let libs = in_root(&format!("ldd /opt/{name}/sbin/bpftools"))?;
    for line in libs.lines() {
        let lib = line.split_whitespace().next().unwrap_or_default();
        // libgcc_s comes with glibc wherever glibc is (its pthread_cancel
        // loads it; Debian's libc6 depends on it).
        let glibc = [
            "linux-vdso",
            "libc.so",
            "libm.so",
            "ld-linux",
            "libgcc_s.so",
        ]
        .iter()
        .any(|g| lib.contains(g));
        if !glibc {
            bail!("the tarball's binary needs {lib}, not only glibc:\n{libs}");
        }
    }
    for t in crate::tools::TOOLS {
        // Its first dry run's arguments (fsslower needs a file system).
        let (tool, args) = (t.name, t.dry_runs[0].args);
        let Err(e) = in_root(&format!(
            "/opt/{name}/sbin/{tool} --dry-run {} >/dev/null",
            crate::shell_words(args)
        )) else {
            continue;
        };
        // A tool that cannot load on this kernel at all fails the same way
        // outside the root: the kernel's doing, not the package's.
        let outside = Command::new(root.join(format!("opt/{name}/sbin/{tool}")))
            .arg("--dry-run")
            .args(args.split_whitespace())
            .output()?;
        if outside.status.success() || outside.status.code() != Some(1) {
            return Err(e);
        }
        let why = String::from_utf8_lossy(&outside.stderr);
        println!(
            "dist test: {tool} does not load on this kernel, outside the root either: {}",
            why.lines().next().unwrap_or_default()
        );
    }
    let out = in_root(&format!("/opt/{name}/sbin/runqlat 1 1"))?;
    expect(&out, "usecs", "runqlat's histogram from the tarball")?;
    drop(mounts);
    remove_root(&root)?;
    lint.join()
        .map_err(|_| anyhow::anyhow!("the lintian thread panicked"))??;
    println!(
        "dist test: all artifacts checked in {} s",
        started.elapsed().as_secs()
    );
    Ok(())
}

/// Removes a bare root left by an earlier run, after unmounting what is
/// mounted in it: never delete through a mount of the host's /dev or /sys.
fn remove_root(root: &Path) -> Result<()> {
    if !root.exists() {
        return Ok(());
    }
    let prefix = format!("{}/", root.display());
    let mounted = || -> Vec<String> {
        fs::read_to_string("/proc/self/mounts")
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_whitespace().nth(1).map(String::from))
            .filter(|p| p.starts_with(&prefix))
            .collect()
    };
    for point in mounted().iter().rev() {
        let _ = Command::new("umount").args(["-l", point]).status();
    }
    if let Some(still) = mounted().first() {
        bail!("{still} is still mounted: not removing {}", root.display());
    }
    fs::remove_dir_all(root).with_context(|| format!("removing {}", root.display()))
}

fn step(what: &str) {
    eprintln!("xtask: dist test: {what}");
}

fn expect(output: &str, needle: &str, what: &str) -> Result<()> {
    if !output.contains(needle) {
        bail!("{what}: no {needle:?} in:\n{output}");
    }
    Ok(())
}

/// lintian: no errors. Warnings kept, and why, are in the README.
fn lintian(deb: &Path) -> Result<()> {
    step("lintian");
    let out = Command::new("lintian")
        .args(["--fail-on", "error", "--no-tag-display-limit"])
        .arg(deb)
        .output()
        .context("running lintian")?;
    let text = String::from_utf8_lossy(&out.stdout);
    print!("{text}");
    if !out.status.success() {
        bail!("lintian found errors in {}", deb.display());
    }
    Ok(())
}

fn rpm_file_list(rpm: &Path) -> Result<()> {
    step("rpm -qlp");
    let out = Command::new("rpm")
        .arg("-qlp")
        .arg(rpm)
        .output()
        .context("running rpm")?;
    let list = String::from_utf8_lossy(&out.stdout);
    let scripts = Command::new("rpm")
        .args(["-qp", "--scripts"])
        .arg(rpm)
        .output()
        .context("running rpm")?;
    let scripts = String::from_utf8_lossy(&scripts.stdout);
    // The links are the package's files: no scriptlet makes or removes them.
    if !scripts.trim().is_empty() {
        bail!("{} has scriptlets:\n{scripts}", rpm.display());
    }
    if !list.lines().any(|l| l == "/usr/sbin/bpftools") {
        bail!("{} lacks /usr/sbin/bpftools:\n{list}", rpm.display());
    }
    for tool in crate::tools::names() {
        for want in [
            format!("/usr/share/man/man8/{tool}.8.gz"),
            format!("/usr/share/bash-completion/completions/{tool}"),
        ] {
            if !list.lines().any(|l| l == want) {
                bail!("{} lacks {want}:\n{list}", rpm.display());
            }
        }
        // Its link to the binary is the package's.
        let link = format!("/usr/sbin/{tool}");
        if !list.lines().any(|l| l == link) {
            bail!("{} lacks the link {link}:\n{list}", rpm.display());
        }
    }
    Ok(())
}

/// /proc, /sys (with /sys/kernel/btf) and tracefs in the bare root, for
/// the tools to run there; unmounted on drop, whatever happened.
struct Mounts {
    points: Vec<PathBuf>,
}

impl Mounts {
    fn new(root: &Path) -> Result<Mounts> {
        let mut m = Mounts { points: Vec::new() };
        for (what, kind, dir) in [
            ("proc", "proc", "proc"),
            ("sysfs", "sysfs", "sys"),
            ("nodev", "tracefs", "sys/kernel/tracing"),
            ("/dev", "bind", "dev"),
        ] {
            let point = root.join(dir);
            fs::create_dir_all(&point)?;
            let mut cmd = Command::new("mount");
            if kind == "bind" {
                cmd.args(["--bind", what]);
            } else {
                cmd.args(["-t", kind, what]);
            }
            check(cmd.arg(&point))?;
            m.points.push(point);
        }
        Ok(m)
    }
}

impl Drop for Mounts {
    fn drop(&mut self) {
        for point in self.points.iter().rev() {
            for _ in 0..20 {
                // -R: what the tools mounted beneath (securityfs, for
                // the lockdown mode) goes too.
                let ok = Command::new("umount")
                    .arg("-R")
                    .arg(point)
                    .status()
                    .is_ok_and(|s| s.success());
                if ok {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}
