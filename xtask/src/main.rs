//! `cargo xtask <job>`: the project's chores, in plain Rust.

mod bench;
mod dist;
mod dist_test;
mod protos;
mod readme;
mod tools;
mod vmtest;

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};

/// Each job: its synopsis and what it does (`cargo xtask JOB --help`).
const JOBS: &[(&str, &str, &str)] = &[
    (
        "deps",
        "deps [--test]",
        "install the system packages a build (--test: and the tests) needs; mount tracefs",
    ),
    (
        "run",
        "run TOOL [ARGS]",
        "build TOOL in release mode and run it (through sudo when not root)",
    ),
    (
        "test",
        "test [CARGO ARGS | --no-run]",
        "deps, cargo fmt --check, and every test, the root integration\n\
         tests included (through sudo when not root), built with clippy's\n\
         lints as errors (-D warnings); --no-run: only the checks and the\n\
         build, without packages or root",
    ),
    (
        "bench",
        "bench [TOOL...] [--rounds N] [--allow-foreign] | --list",
        "measure the tools against libbpf-tools, bpftrace and BCC in\n\
         interleaved rounds; results in target/bench/results.json;\n\
         --list: each tool's workload and peers (or that it has no bench)",
    ),
    (
        "bench-table",
        "bench-table",
        "regenerate README.md's performance table from those results",
    ),
    (
        "dist",
        "dist [--test|--fetch|--build]",
        "the .deb, .rpm and tarball in target/dist/ (man pages and\n\
         completions included); --test proves each in a bare Debian root;\n\
         --fetch installs the packages they need, --build compiles what\n\
         they need (cargo-deb, the release builds), and nothing else",
    ),
    (
        "readme",
        "readme [--check]",
        "regenerate README.md's tools table from the tools' descriptions",
    ),
    (
        "vmlinux",
        "vmlinux",
        "regenerate bpf/include/<arch>/vmlinux.h from this kernel's BTF",
    ),
    (
        "vmtest",
        "vmtest [--kernel 5.10|6.1|6.12|all]... [--variants] [--run CMD] [-- TEST FILTER] | --list | --matrix",
        "the root integration suite on Debian's kernels, in qemu (TCG);\n\
         --variants: each tool's dry runs and hook-variant tests only (CI);\n\
         --list: what each kernel runs, tool by tool;\n\
         --matrix: README.md's kernel matrix again, from the last runs' dry runs",
    ),
    (
        "protos",
        "protos",
        "regenerate common/src/export/pprof/profile.rs from common/proto/profile.proto",
    ),
];

fn usage() -> String {
    let mut s =
        String::from("usage: cargo xtask <job> [args]  (cargo xtask <job> --help)\n\njobs:\n");
    for (_, synopsis, what) in JOBS {
        s += &format!("  {synopsis}\n");
        for line in what.lines() {
            s += &format!("      {line}\n");
        }
    }
    s
}

/// `--help` or `-h` anywhere before a `--`: the job's own usage.
fn wants_help(args: &[String]) -> bool {
    args.iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "--help" || a == "-h")
}

/// System packages a build needs (the BPF compiler, libbpf's link deps).
const BUILD_PACKAGES: &[&str] = &["clang", "libelf-dev", "zlib1g-dev", "pkg-config", "make"];

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    if let Some((_, synopsis, what)) = args
        .first()
        .and_then(|job| JOBS.iter().find(|(name, _, _)| name == job))
        .filter(|_| wants_help(&args[1..]))
    {
        println!("usage: cargo xtask {synopsis}\n\n{what}");
        return ExitCode::SUCCESS;
    }
    let result = match args.first().map(String::as_str) {
        // --test: the integration tests' packages too.
        Some("deps") => deps(match args.get(1).map(String::as_str) {
            Some("--test") => TEST_PACKAGES,
            _ => &[],
        }),
        Some("run") => run_tool(&args[1..]),
        Some("test") => test(&args[1..]),
        Some("bench") => bench::main(&args[1..]),
        Some("bench-table") => bench::bench_table(),
        Some("dist") => dist::main(&args[1..]),
        Some("vmlinux") => vmlinux(),
        Some("readme") => readme::main(&args[1..]),
        Some("protos") => protos::main(),
        Some("vmtest") => vmtest::main(&args[1..]),
        Some("-h" | "--help" | "help") => {
            print!("{}", usage());
            Ok(())
        }
        _ => {
            eprint!("{}", usage());
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// `s` as one word for sh: single-quoted.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A dry run's arguments as words for sh (a probe's specifier holds `(`
/// and `$`); `$$`, the shell's pid, as it is.
pub fn shell_words(args: &str) -> String {
    args.split_whitespace()
        .map(|w| if w == "$$" { w.into() } else { shell_quote(w) })
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn root_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// A command run as root: directly when we are root, else through sudo.
pub fn privileged(program: &str) -> Result<Command> {
    if is_root() {
        return Ok(Command::new(program));
    }
    if !sudo_works() {
        bail!(
            "`{program}` needs root, and sudo cannot be used without a password: run this as root"
        );
    }
    let mut cmd = Command::new("sudo");
    cmd.arg(program);
    Ok(cmd)
}

/// True if `sudo -n` runs commands here (present, and needs no password).
fn sudo_works() -> bool {
    Command::new("sudo")
        .args(["-n", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

pub fn check(cmd: &mut Command) -> Result<()> {
    let shown = format!("{cmd:?}");
    let status = cmd.status().with_context(|| format!("running {shown}"))?;
    if !status.success() {
        bail!("{shown} failed ({status})");
    }
    Ok(())
}

fn installed(package: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", package])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        .unwrap_or(false)
}

/// Installs what is missing of the build packages and `extra`, and mounts
/// tracefs when it is not mounted (classic tracepoints are found there).
pub fn deps(extra: &[&str]) -> Result<()> {
    let missing: Vec<&str> = BUILD_PACKAGES
        .iter()
        .chain(extra)
        .copied()
        .filter(|p| !installed(p))
        .collect();
    if !missing.is_empty() {
        eprintln!("xtask: installing {}", missing.join(" "));
        check(privileged("apt-get")?.args(["update", "-q"]))?;
        check(
            privileged("apt-get")?
                .env("DEBIAN_FRONTEND", "noninteractive")
                .args(["install", "-y", "-q", "--no-install-recommends"])
                .args(&missing),
        )?;
    }
    let mounted = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .any(|d| Path::new(d).join("events").is_dir());
    if !mounted {
        eprintln!("xtask: mounting tracefs on /sys/kernel/tracing");
        check(privileged("mount")?.args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"]))?;
    }
    Ok(())
}

pub fn cargo() -> Command {
    let mut cmd = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root_dir());
    cmd
}

/// Builds the named tools (all when empty) in release mode; returns the
/// directory holding the binaries.
pub fn build_release(names: &[String]) -> Result<PathBuf> {
    let mut cmd = cargo();
    cmd.args(["build", "--release"]);
    // The linker of every release build here (the same for all: cargo
    // builds every crate again when it changes), so that bpftools' link
    // also makes the tarball's static binary (dist::static_binary).
    let linker = root_dir().join("xtask/dist/link-twice");
    for triple in ["X86_64_UNKNOWN_LINUX_GNU", "AARCH64_UNKNOWN_LINUX_GNU"] {
        cmd.env(format!("CARGO_TARGET_{triple}_LINKER"), &linker);
    }
    for name in names {
        cmd.args(["-p", name]);
    }
    if names.is_empty() {
        for name in tools::names() {
            cmd.args(["-p", &name]);
        }
    }
    check(&mut cmd)?;
    Ok(root_dir().join("target/release"))
}

fn run_tool(args: &[String]) -> Result<()> {
    let Some(tool) = args.first() else {
        bail!(
            "usage: cargo xtask run TOOL [ARGS]; tools: {}",
            tools::names().join(", ")
        );
    };
    tools::find(tool)?;
    deps(&[])?;
    let bin = build_release(std::slice::from_ref(tool))?.join(tool);
    let status = privileged(bin.to_str().unwrap())?
        .args(&args[1..])
        .status()
        .with_context(|| format!("running {}", bin.display()))?;
    std::process::exit(status.code().unwrap_or(1));
}

/// What the integration tests use besides the build: network namespaces
/// and nftables (tcpretrans's lossy link), memleak's other allocators, and
/// the real consumers of the tools' exports: Prometheus and promtool,
/// go tool pprof; perf, which profile's samples are checked against;
/// losetup, mount, mkfs.ext4 and mkfs.xfs for the block and file system tools' own
/// devices (in Debian's base, named so a slimmer image still gets them).
/// (clang, a build package, compiles the traced programs.)
const TEST_PACKAGES: &[&str] = &[
    "iproute2",
    // ausyscall, syscount's independent check of its names.
    "auditd",
    "mount",
    "e2fsprogs",
    // mkfs.xfs: filelife's xfs tracepoints on an xfs of the test's own.
    "xfsprogs",
    "bpftrace",
    "nftables",
    "libjemalloc2",
    "libtcmalloc-minimal4",
    "prometheus",
    "golang-go",
    "linux-perf",
    // The container tests' clients: a connection made inside a cgroup.
    "python3",
    // <sys/sdt.h>: the USDT probes of the probe tools' test programs.
    "systemtap-sdt-dev",
    // setcap: the tools run by a user holding file capabilities.
    "libcap2-bin",
    // mdflush's RAID1 of two loop devices (in the VM guests: this
    // machine's kernel has no md).
    "mdadm",
];

fn test(cargo_args: &[String]) -> Result<()> {
    // `--no-run` alone: the build CI makes first (formatting checked, the
    // crates linted and compiled), with no packages and no root.
    let build_only = cargo_args == ["--no-run"];
    if !build_only {
        deps(TEST_PACKAGES)?;
        if !is_root() && !sudo_works() {
            bail!(
                "the integration tests load BPF programs and need root: run as root or with sudo"
            );
        }
    }
    check(cargo().args(["fmt", "--all", "--", "--check"]))
        .context("formatting (run cargo fmt --all)")?;
    // Every crate's tests but the doc tests (there are none: rustdoc on each
    // of fifty crates to find none cost CI a minute). Given arguments,
    // cargo's own choice.
    let mut cmd = if cargo_args.is_empty() || build_only {
        test_build()
    } else {
        let mut cmd = linted(cargo());
        cmd.arg("test");
        // The whole workspace unless the arguments name packages.
        if !cargo_args
            .iter()
            .take_while(|a| *a != "--")
            .any(|a| a.starts_with("-p") || a.starts_with("--package"))
        {
            cmd.arg("--workspace");
        }
        cmd.args(cargo_args);
        cmd
    };
    let whole = cargo_args.is_empty();
    if build_only {
        cmd.arg("--no-run");
    } else if !is_root() {
        // Build as the user, run the test binaries as root.
        cmd.env("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER", "sudo -E");
        cmd.env("CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER", "sudo -E");
    }
    if whole {
        // The contract's checks after the rest, several tools at once.
        cmd.args(["--", "--skip", CONTRACT]);
    }
    check(&mut cmd).context("the linted build (clippy -D warnings) or the tests")?;
    if whole {
        contracts()?;
    }
    Ok(())
}

/// The module every tool's `tests/contract.rs` holds its checks in
/// (testkit::contract_tests).
const CONTRACT: &str = "contract::";

/// Every tool's contract binary, `CONTRACT_AT_ONCE` at a time. Its checks
/// spend most of their time waiting (a tool's start, its stop after a
/// signal, dry runs refused at once): one after another the 68 took 223 s
/// of CI's 692 s of tests, three at a time about half. The other tests
/// run one binary at a time, as cargo runs them: they measure what the
/// machine does. A heavy tool's checks (memleak's, tracing every kernel
/// allocation) wait for the others' and hold them off
/// (testkit::contract::turn).
fn contracts() -> Result<()> {
    const CONTRACT_AT_ONCE: usize = 3;
    let binaries: Vec<vmtest::guest::TestBinary> = vmtest::guest::build_tests()?
        .into_iter()
        .filter(|t| t.name.ends_with("/contract"))
        .collect();
    println!(
        "\n== the contract of {} tools, {CONTRACT_AT_ONCE} at a time",
        binaries.len()
    );
    let queue = std::sync::Mutex::new(binaries.iter());
    let printing = std::sync::Mutex::new(());
    let failed = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..CONTRACT_AT_ONCE {
            scope.spawn(|| loop {
                let Some(t) = queue.lock().unwrap().next() else {
                    return;
                };
                let mut cmd = if is_root() {
                    Command::new(&t.path)
                } else {
                    let mut sudo = Command::new("sudo");
                    sudo.arg("-E").arg(&t.path);
                    sudo
                };
                cmd.arg(CONTRACT).current_dir(&t.dir);
                let started = std::time::Instant::now();
                let out = cmd.output();
                // Each binary's output whole, as it ends.
                let _printing = printing.lock().unwrap();
                let ok = match &out {
                    Ok(o) => {
                        print!("{}", String::from_utf8_lossy(&o.stdout));
                        eprint!("{}", String::from_utf8_lossy(&o.stderr));
                        o.status.success()
                    }
                    Err(e) => {
                        eprintln!("xtask: running {}: {e}", t.path.display());
                        false
                    }
                };
                println!("xtask: {} took {} s", t.name, started.elapsed().as_secs());
                if !ok {
                    failed.lock().unwrap().push(t.name.clone());
                }
            });
        }
    });
    let failed = failed.into_inner().unwrap();
    if !failed.is_empty() {
        bail!("the contract failed: {}", failed.join(", "));
    }
    Ok(())
}

/// Every test binary, built as `cargo xtask test` runs them (the VM suite
/// and CI's first build take the same: other targets or another compiler
/// wrapper would be other units, and cargo would build the crates again).
pub fn test_build() -> Command {
    let mut cmd = linted(cargo());
    cmd.args(["test", "--workspace", "--lib", "--bins", "--tests"]);
    cmd
}

/// Clippy's lints as the workspace's crates compile: its driver is their
/// compiler (as `cargo clippy` makes it, by RUSTC_WORKSPACE_WRAPPER and
/// CLIPPY_ARGS, here with `-D warnings`), so that one build both lints and
/// makes the test binaries, where `cargo clippy` checked every crate once
/// more (147 s of CI's; the lints cost the build 44). Only for the test
/// profile: the driver turns MIR optimizations off, which a release build
/// must keep.
fn linted(mut cmd: Command) -> Command {
    cmd.env("RUSTC_WORKSPACE_WRAPPER", "clippy-driver").env(
        "CLIPPY_ARGS",
        "-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__",
    );
    cmd
}

/// The running kernel's BTF as bpftool dumps it: `format` "c" (vmlinux.h)
/// or "raw" (`[ID] KIND 'name' ...` a line).
pub fn vmlinux_btf_dump(format: &str) -> Result<Vec<u8>> {
    let out = Command::new("bpftool")
        .args([
            "btf",
            "dump",
            "file",
            "/sys/kernel/btf/vmlinux",
            "format",
            format,
        ])
        .output()
        .context("running bpftool")?;
    if !out.status.success() {
        bail!(
            "bpftool btf dump of /sys/kernel/btf/vmlinux: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out.stdout)
}

fn vmlinux() -> Result<()> {
    let arch = match env::consts::ARCH {
        "x86_64" => "x86_64",
        "aarch64" => "arm64",
        other => bail!("no vmlinux.h layout for {other}"),
    };
    if !installed("bpftool") {
        deps(&["bpftool"])?;
    }
    let header = vmlinux_btf_dump("c")?;
    let path = root_dir().join("bpf/include").join(arch).join("vmlinux.h");
    std::fs::write(&path, header)?;
    eprintln!("xtask: wrote {}", path.display());
    Ok(())
}
