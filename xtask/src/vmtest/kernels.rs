//! Debian's kernels, from its package registry: the newest build of each
//! series, downloaded (not installed) and unpacked under target/vmtest/.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use super::{output, work_dir};

/// A kernel series and where its packages are.
pub struct Spec {
    pub name: &'static str,
    /// Package names: `prefix` N `suffix`, the newest N taken.
    prefix: &'static str,
    suffix: &'static str,
    /// A Debian suite read through a private apt list; None: this
    /// machine's own lists.
    suite: Option<&'static str>,
}

/// Debian 11's kernel (the oldest with BTF a Debian release ships), Debian
/// 12's, and Debian 12's backport of 6.12.
pub const KERNELS: &[Spec] = &[
    Spec {
        name: "5.10",
        prefix: "linux-image-5.10.0-",
        suffix: "-amd64",
        suite: Some("bullseye"),
    },
    Spec {
        name: "6.1",
        prefix: "linux-image-6.1.0-",
        suffix: "-amd64",
        suite: None,
    },
    Spec {
        name: "6.12",
        prefix: "linux-image-6.12.",
        suffix: "+deb12-amd64",
        suite: None,
    },
];

/// An unpacked kernel.
pub struct Kernel {
    pub package: String,
    /// `uname -r` in the guest, and the modules' directory name.
    pub release: String,
    pub vmlinuz: PathBuf,
    /// The unpacked lib/modules/RELEASE, with modules.dep.
    pub modules: PathBuf,
}

/// apt-get / apt-cache, with a private list for `suite` if there is one.
fn apt(program: &str, suite: Option<&str>) -> Result<Command> {
    let mut cmd = Command::new(program);
    let Some(suite) = suite else {
        return Ok(cmd);
    };
    let dir = work_dir().join(format!("apt-{suite}"));
    for sub in ["lists/partial", "cache/archives/partial", "parts"] {
        fs::create_dir_all(dir.join(sub))?;
    }
    let keyring = "/usr/share/keyrings/debian-archive-keyring.gpg";
    fs::write(
        dir.join("sources.list"),
        format!(
            "deb [signed-by={keyring}] http://deb.debian.org/debian {suite} main\n\
             deb [signed-by={keyring}] http://deb.debian.org/debian-security {suite}-security main\n"
        ),
    )?;
    let opt = |k: &str, v: &Path| format!("{k}={}", v.display());
    cmd.arg("-o")
        .arg(opt("Dir::Etc::SourceList", &dir.join("sources.list")))
        .arg("-o")
        .arg(opt("Dir::Etc::SourceParts", &dir.join("parts")))
        .arg("-o")
        .arg(opt("Dir::State::Lists", &dir.join("lists")))
        .arg("-o")
        .arg(opt("Dir::Cache", &dir.join("cache")));
    Ok(cmd)
}

/// The newest package of the series.
fn newest(spec: &Spec) -> Result<String> {
    if spec.suite.is_some() {
        output(apt("apt-get", spec.suite)?.args(["-q", "update"]))
            .with_context(|| format!("reading Debian's {} lists", spec.suite.unwrap()))?;
    }
    let names = output(apt("apt-cache", spec.suite)?.args(["pkgnames", spec.prefix]))?;
    names
        .lines()
        .filter_map(|n| {
            let middle = n.strip_prefix(spec.prefix)?.strip_suffix(spec.suffix)?;
            Some((middle.parse::<u32>().ok()?, n.to_string()))
        })
        .max()
        .map(|(_, n)| n)
        .with_context(|| {
            format!(
                "no {}N{} package in the apt lists (apt-get update?)",
                spec.prefix, spec.suffix
            )
        })
}

/// The series' newest kernel, downloaded and unpacked once.
pub fn fetch(spec: &Spec) -> Result<Kernel> {
    let package = newest(spec)?;
    let dir = work_dir().join("kernels").join(&package);
    let root = dir.join("root");
    let done = dir.join("unpacked");
    if !done.exists() {
        println!("vmtest: downloading {package}");
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir)?;
        output(
            apt("apt-get", spec.suite)?
                .args(["-q", "download", &package])
                .current_dir(&dir),
        )?;
        let deb = fs::read_dir(&dir)?
            .filter_map(|e| Some(e.ok()?.path()))
            .find(|p| p.extension().is_some_and(|x| x == "deb"))
            .context("apt-get download left no .deb")?;
        output(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&root))?;
        fs::remove_file(&deb)?;
    }
    let modules_root = root.join("lib/modules");
    let release = fs::read_dir(&modules_root)
        .with_context(|| format!("{} has no lib/modules", package))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .next()
        .context("no modules directory in the package")?;
    let modules = modules_root.join(&release);
    if !done.exists() {
        // The package leaves modules.dep to its postinst.
        output(Command::new("depmod").arg("-b").arg(&root).arg(&release))?;
        fs::write(&done, &package)?;
    }
    let vmlinuz = root.join(format!("boot/vmlinuz-{release}"));
    if !vmlinuz.exists() {
        bail!("{} has no boot/vmlinuz-{release}", package);
    }
    Ok(Kernel {
        package,
        release,
        vmlinuz,
        modules,
    })
}
