//! `cargo xtask dist`: the distribution bundle in target/dist/: a .deb and
//! an .rpm (cargo-deb with metadata in dist/Cargo.toml; rpmbuild with a spec made
//! here from the stage, so that rpm owns every tool's link) and
//! a tarball of binaries that need nothing beyond glibc (libbpf, libelf and
//! zlib linked in), each with man pages and bash, zsh and fish completions
//! generated from the tools' clap definitions and descriptions
//! (`bpftools --generate WHAT TOOL`).
//!
//! `cargo xtask dist --test` then proves each artifact on a machine that
//! never saw the source: see dist_test.rs.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::{build_release, cargo, check, deps, root_dir};

/// The packaging tools, from crates.io, installed when missing (the .rpm
/// is rpmbuild's, from Debian's rpm package).
const CARGO_TOOLS: &[(&str, &str)] = &[("cargo-deb", "deb")];

/// What `dist` made.
pub struct Artifacts {
    pub deb: PathBuf,
    pub rpm: PathBuf,
    pub tarball: PathBuf,
}

/// The Debian packages packaging and its test use.
const PACKAGES: &[&str] = &["dpkg-dev", "rpm", "mmdebstrap", "lintian"];

pub fn main(args: &[String]) -> Result<()> {
    // --fetch: the packages only, so that CI installs them while its first
    // build compiles.
    if args.iter().any(|a| a == "--fetch") {
        return deps(PACKAGES);
    }
    if args.iter().any(|a| a == "--build") {
        return compile();
    }
    let test = args.iter().any(|a| a == "--test");
    let bare = test.then(crate::dist_test::BareRoot::start).transpose()?;
    let artifacts = build()?;
    for a in [&artifacts.deb, &artifacts.rpm, &artifacts.tarball] {
        let size = fs::metadata(a)?.len();
        println!("{} ({} KiB)", a.display(), size / 1024);
    }
    if let Some(bare) = bare {
        // Packaged again from the same commit: byte for byte the same.
        let first = digests(&artifacts)?;
        let again = build()?;
        if digests(&again)? != first {
            bail!("packaging twice from the same commit gave different archives");
        }
        println!("dist: the same commit packaged twice gives identical archives");
        crate::dist_test::run(&again, bare)?;
    }
    Ok(())
}

fn digests(a: &Artifacts) -> Result<Vec<String>> {
    [&a.deb, &a.rpm, &a.tarball]
        .iter()
        .map(|p| {
            let out = Command::new("sha256sum").arg(p).output()?;
            Ok(String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string())
        })
        .collect()
}

/// The workspace version, from Cargo.toml.
fn version() -> Result<String> {
    let manifest = fs::read_to_string(root_dir().join("Cargo.toml"))?;
    manifest
        .lines()
        .skip_while(|l| l.trim() != "[workspace.package]")
        .find_map(|l| l.strip_prefix("version = "))
        .map(|v| v.trim_matches('"').to_string())
        .context("no version in [workspace.package]")
}

/// SOURCE_DATE_EPOCH, or the last commit's time: the same commit gives
/// byte-identical archives.
fn source_date_epoch() -> Result<String> {
    if let Ok(v) = std::env::var("SOURCE_DATE_EPOCH") {
        return Ok(v);
    }
    let out = Command::new("git")
        .args(["log", "-1", "--format=%ct"])
        .current_dir(root_dir())
        .output()
        .context("running git log")?;
    let epoch = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || epoch.is_empty() {
        bail!("no SOURCE_DATE_EPOCH and no git commit to take it from");
    }
    Ok(epoch)
}

fn install_cargo_tools() -> Result<()> {
    for (krate, sub) in CARGO_TOOLS {
        let present = cargo()
            .args([sub, "--version"])
            .output()
            .is_ok_and(|o| o.status.success());
        if !present {
            eprintln!("xtask: installing {krate}");
            check(cargo().args(["install", "--locked", krate]))?;
        }
    }
    Ok(())
}

pub fn build() -> Result<Artifacts> {
    // dpkg-dev: dpkg-shlibdeps, for the .deb's real dependencies.
    deps(PACKAGES)?;
    install_cargo_tools()?;
    let version = version()?;
    let epoch = source_date_epoch()?;
    let root = root_dir();
    let out = root.join("target/dist");
    let _ = fs::remove_dir_all(&out);
    fs::create_dir_all(&out)?;

    // The .deb and .rpm: the regular release build, linked against the
    // distribution's libelf and zlib (their security updates apply).
    let bin = build_release(&["bpftools".to_string()])?;
    let stage = out.join("stage");
    stage_tree(&bin, &stage, &epoch)?;
    let deb = out.join(format!("bpftools_{version}_amd64.deb"));
    check(
        cargo()
            .env("SOURCE_DATE_EPOCH", &epoch)
            .args([
                "deb",
                "--quiet",
                "--no-build",
                "--manifest-path",
                "dist/Cargo.toml",
            ])
            // A Debian revision: the changelog is then changelog.Debian.gz.
            .args(["--deb-version", &format!("{version}-1"), "-o"])
            .arg(&deb),
    )?;
    let rpm = out.join(format!("bpftools-{version}.x86_64.rpm"));
    build_rpm(&stage, &out, &version, &epoch, &rpm)?;

    let name = format!("bpftools-{version}-x86_64-linux");
    let tree = out.join(&name);
    stage_tarball(&static_binary(&bin)?, &tree, &epoch)?;
    let tarball = out.join(format!("{name}.tar.gz"));
    let tar = format!(
        "tar --sort=name --mtime=@{epoch} --owner=0 --group=0 --numeric-owner \
         --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
         -C {} -cf - {name} | gzip -9 -n > {}",
        out.display(),
        tarball.display()
    );
    check(Command::new("bash").args(["-o", "pipefail", "-c", &tar]))?;
    Ok(Artifacts { deb, rpm, tarball })
}

/// The directory of the tarball's binary (everything static but glibc),
/// which the release build's link of bpftools makes beside it
/// (xtask/dist/link-twice), so that both come from one LTO: a build with
/// libbpf-sys's static features compiled every crate again and ran LTO
/// once more (three minutes of CI's). A binary linked before it was there
/// (or without it since) is linked again.
fn static_binary(release: &Path) -> Result<PathBuf> {
    let dir = release.join("static");
    let fresh = || -> Option<bool> {
        let built = fs::metadata(release.join("bpftools"))
            .ok()?
            .modified()
            .ok()?;
        let linked = fs::metadata(dir.join("bpftools")).ok()?.modified().ok()?;
        Some(linked >= built)
    };
    if fresh() != Some(true) {
        // The package's own artifacts cleaned: cargo links it again.
        check(cargo().args(["clean", "--release", "-p", "bpftools"]))?;
        build_release(&["bpftools".to_string()])?;
        if fresh() != Some(true) {
            bail!(
                "the release build linked no static binary in {} \
                 (libelf.a and libz.a: libelf-dev and zlib1g-dev)",
                dir.display()
            );
        }
    }
    Ok(dir)
}

/// `dist --build`: what packaging compiles (cargo-deb, the release build,
/// which links both binaries), and no more, so that CI runs it at the lowest priority beside
/// the VM suite, on the CPU time the guests leave; `dist --test` then
/// finds it built.
fn compile() -> Result<()> {
    deps(PACKAGES)?;
    install_cargo_tools()?;
    build_release(&["bpftools".to_string()])?;
    Ok(())
}

/// The .rpm, by rpmbuild from a spec made here: its %files list every
/// tool's link, so rpm owns each (`rpm -qf /usr/sbin/biolatency` names the
/// package) and no scriptlet replaces another package's file.
fn build_rpm(stage: &Path, out: &Path, version: &str, epoch: &str, rpm: &Path) -> Result<()> {
    let top = out.join("rpmbuild");
    let _ = fs::remove_dir_all(&top);
    fs::create_dir_all(&top)?;
    let root = root_dir();
    let mut files = String::new();
    for entry in walk(stage)? {
        let rel = entry.strip_prefix(stage).expect("under the stage");
        let path = format!("/{}", rel.display());
        if path.starts_with("/usr/share/man/") {
            files += &format!("%doc {path}\n");
        } else {
            files += &format!("{path}\n");
        }
    }
    let spec = format!(
        "Name: bpftools\n\
         Version: {version}\n\
         Release: 1\n\
         Summary: BCC's tracing tools rebuilt on libbpf-rs\n\
         License: GPL-2.0-only\n\
         Conflicts: libbpf-tools\n\
         %define debug_package %{{nil}}\n\
         %define __os_install_post %{{nil}}\n\
         %define _build_id_links none\n\
         %description\n\
         The tracing tools every Linux performance engineer reaches for, with the names,\n\
         flags and output of BCC and libbpf-tools, as one multi-call binary that chooses\n\
         its hooks by probing the running kernel.\n\
         %install\n\
         cp -a {stage}/. %{{buildroot}}/\n\
         install -Dm644 {readme} %{{buildroot}}/usr/share/doc/bpftools/README.md\n\
         install -Dm644 {license} %{{buildroot}}/usr/share/licenses/bpftools/LICENSE\n\
         %files\n\
         {files}\
         %doc /usr/share/doc/bpftools/README.md\n\
         %license /usr/share/licenses/bpftools/LICENSE\n",
        stage = stage.display(),
        readme = root.join("README.md").display(),
        license = root.join("LICENSE").display(),
    );
    let spec_path = top.join("bpftools.spec");
    fs::write(&spec_path, spec)?;
    check(
        Command::new("rpmbuild")
            .env("SOURCE_DATE_EPOCH", epoch)
            .arg("-bb")
            .arg("--quiet")
            .args(["--define", &format!("_topdir {}", top.display())])
            .args(["--define", "use_source_date_epoch_as_buildtime 1"])
            .args(["--define", "clamp_mtime_to_source_date_epoch 1"])
            .args(["--define", "_binary_payload w9.gzdio"])
            .args(["--target", "x86_64"])
            .arg(&spec_path),
    )?;
    let built = top.join(format!("RPMS/x86_64/bpftools-{version}-1.x86_64.rpm"));
    fs::rename(&built, rpm).with_context(|| format!("moving {}", built.display()))?;
    Ok(())
}

/// Every file and link under `dir` (not directories), sorted.
fn walk(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in fs::read_dir(&d)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                todo.push(entry.path());
            } else {
                found.push(entry.path());
            }
        }
    }
    found.sort();
    Ok(found)
}

/// The tools a bpftools binary holds (`bpftools --list`).
fn bundled_tools(multi: &Path) -> Result<Vec<String>> {
    let out = Command::new(multi)
        .arg("--list")
        .output()
        .with_context(|| format!("running {} --list", multi.display()))?;
    if !out.status.success() {
        bail!("bpftools --list: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(String::from)
        .collect())
}

/// Installs the tools' files under `stage` as a package installs them in
/// `/`: /usr/sbin, man8, and the completion directories.
fn stage_tree(bin: &Path, stage: &Path, epoch: &str) -> Result<()> {
    let _ = fs::remove_dir_all(stage);
    let dirs = Dirs {
        sbin: stage.join("usr/sbin"),
        man8: stage.join("usr/share/man/man8"),
        bash: stage.join("usr/share/bash-completion/completions"),
        zsh: stage.join("usr/share/zsh/vendor-completions"),
        fish: stage.join("usr/share/fish/vendor_completions.d"),
    };
    install_tools(bin, &dirs, epoch)
}

/// The tarball's tree: sbin/, man/man8/, completions/{bash,zsh,fish}/,
/// install.sh, README.md, LICENSE.
fn stage_tarball(bin: &Path, tree: &Path, epoch: &str) -> Result<()> {
    let dirs = Dirs {
        sbin: tree.join("sbin"),
        man8: tree.join("man/man8"),
        bash: tree.join("completions/bash"),
        zsh: tree.join("completions/zsh"),
        fish: tree.join("completions/fish"),
    };
    install_tools(bin, &dirs, epoch)?;
    let root = root_dir();
    fs::copy(root.join("xtask/dist/install.sh"), tree.join("install.sh"))?;
    fs::copy(root.join("README.md"), tree.join("README.md"))?;
    fs::copy(root.join("LICENSE"), tree.join("LICENSE"))?;
    Ok(())
}

struct Dirs {
    sbin: PathBuf,
    man8: PathBuf,
    bash: PathBuf,
    zsh: PathBuf,
    fish: PathBuf,
}

/// The multi-call binary, a link to it per tool, and each tool's man page
/// and completions (generated by the tool, run through its link).
fn install_tools(bin: &Path, d: &Dirs, epoch: &str) -> Result<()> {
    for dir in [&d.sbin, &d.man8, &d.bash, &d.zsh, &d.fish] {
        fs::create_dir_all(dir)?;
    }
    let multi = bin.join("bpftools");
    fs::copy(&multi, d.sbin.join("bpftools"))
        .with_context(|| format!("copying {}", multi.display()))?;
    // The binary's own registry names what it holds.
    let generate = |what: &str, tool: &str| -> Result<Vec<u8>> {
        let out = Command::new(&multi)
            .args(["--generate", what, tool])
            .env("SOURCE_DATE_EPOCH", epoch)
            .output()
            .with_context(|| format!("running bpftools --generate {what} {tool}"))?;
        if !out.status.success() {
            bail!(
                "bpftools --generate {what} {tool}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(out.stdout)
    };
    for name in ["bpftools", "bpftools-doctor"] {
        let page = d.man8.join(format!("{name}.8"));
        fs::write(&page, generate("man", name)?)?;
        check(Command::new("gzip").args(["-9", "-n", "-f"]).arg(&page))?;
    }
    for tool in bundled_tools(&multi)? {
        let exe = d.sbin.join(&tool);
        std::os::unix::fs::symlink("bpftools", &exe)
            .with_context(|| format!("linking {}", exe.display()))?;
        let generate = |what: &str| generate(what, &tool);
        let page = d.man8.join(format!("{tool}.8"));
        fs::write(&page, generate("man")?)?;
        // -n: no name or time stamp in the gzip header, for reproducibility.
        check(Command::new("gzip").args(["-9", "-n", "-f"]).arg(&page))?;
        fs::write(d.bash.join(&tool), generate("bash")?)?;
        fs::write(d.zsh.join(format!("_{tool}")), generate("zsh")?)?;
        fs::write(d.fish.join(format!("{tool}.fish")), generate("fish")?)?;
    }
    Ok(())
}
