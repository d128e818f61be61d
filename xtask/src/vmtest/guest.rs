//! One guest: its initramfs, the script it runs on this machine's root
//! filesystem, qemu, and what came back.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::cpio::Archive;
use super::kernels::Kernel;
use super::{output, work_dir};
use crate::shell_quote;

/// Modules the initramfs loads to reach the root filesystem (with what
/// they depend on); the rest load from the real root by modprobe.
const BOOT_MODULES: &[&str] = &["virtio_pci", "9pnet_virtio", "9p"];

/// Modules the tests use, loaded in the guest when they are modules.
const TEST_MODULES: &[&str] = &[
    "virtio_scsi",
    "sd_mod",
    "ext4",
    "loop",
    "veth",
    "sch_netem",
    "nf_tables",
    "nft_chain_nat",
    // mdflush's array.
    "md_mod",
    "raid1",
];

/// How long one kernel's whole run may take under TCG.
const TIME_LIMIT: Duration = Duration::from_secs(60 * 60);
/// How long the guest may print nothing of its own (every test prints its
/// result; the slowest takes about 2 minutes under TCG). The kernel's lines
/// do not count: a guest in a soft lockup prints one every 20 s, for ever.
const SILENCE_LIMIT: Duration = Duration::from_secs(5 * 60);
/// How long one run of one test binary may take (the slowest binary of the
/// variant tests takes under 3 minutes, two guests side by side). A CI run
/// lost an hour to a 5.10 guest whose soft lockups kept the console busy.
const BINARY_LIMIT: Duration = Duration::from_secs(8 * 60);

/// A test binary, run from its package's directory as cargo runs it.
#[derive(Clone)]
pub struct TestBinary {
    pub name: String,
    pub path: PathBuf,
    pub dir: PathBuf,
    /// Its own test filter (--variants), in place of the run's.
    pub filter: Vec<String>,
}

/// Keeps each tool's hook-variant tests (its description's vm_tests): the
/// contract binaries go (the dry runs cover loading), the tools' own
/// binaries keep a filter of those tests.
pub fn select_variant_tests(tests: &mut Vec<TestBinary>) -> Result<()> {
    for t in tests.iter_mut() {
        t.filter = crate::tools::find(&t.tool())?
            .vm_tests
            .iter()
            .map(|f| f.to_string())
            .collect();
    }
    tests.retain(|t| !t.name.ends_with("/contract"));
    Ok(())
}

impl TestBinary {
    /// The tool whose tests these are (its directory's name).
    pub fn tool(&self) -> String {
        self.dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    }
}

/// Builds the tools' integration tests (the test profile, as `cargo xtask
/// test` does) and lists their binaries.
pub fn build_tests() -> Result<Vec<TestBinary>> {
    // The build CI's first step and `cargo xtask test` make: any other
    // cargo builds the crates once more (other units; two to four minutes
    // of CI's time).
    let out =
        output(crate::test_build().args(["--no-run", "--message-format=json-render-diagnostics"]))?;
    let tools = crate::root_dir().join("tools");
    let mut tests = Vec::new();
    for line in out.lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let is_test = msg["target"]["kind"]
            .as_array()
            .is_some_and(|k| k.iter().any(|k| k == "test"));
        let (Some(exe), Some(manifest)) =
            (msg["executable"].as_str(), msg["manifest_path"].as_str())
        else {
            continue;
        };
        let dir = Path::new(manifest).parent().unwrap().to_path_buf();
        if is_test && dir.starts_with(&tools) {
            let name = format!(
                "{}/{}",
                dir.file_name().unwrap().to_string_lossy(),
                msg["target"]["name"].as_str().unwrap_or("?")
            );
            tests.push(TestBinary {
                name,
                path: PathBuf::from(exe),
                dir,
                filter: Vec::new(),
            });
        }
    }
    tests.sort_by(|a, b| a.name.cmp(&b.name));
    if tests.is_empty() {
        bail!("cargo test --no-run listed no integration tests");
    }
    Ok(tests)
}

/// The kernel modules `names` need, dependencies first, as paths under the
/// modules directory; built-in ones left out.
fn module_closure(modules: &Path, names: &[&str]) -> Result<Vec<String>> {
    let deps_text = fs::read_to_string(modules.join("modules.dep"))?;
    let mut deps: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut by_name: BTreeMap<String, String> = BTreeMap::new();
    for line in deps_text.lines() {
        let Some((path, rest)) = line.split_once(':') else {
            continue;
        };
        let base = Path::new(path).file_name().unwrap().to_string_lossy();
        let name = base.split(".ko").next().unwrap().replace('-', "_");
        by_name.insert(name, path.to_string());
        deps.insert(
            path.to_string(),
            rest.split_whitespace().map(String::from).collect(),
        );
    }
    let builtin = fs::read_to_string(modules.join("modules.builtin")).unwrap_or_default();
    let builtin: HashSet<String> = builtin
        .lines()
        .filter_map(|l| {
            Some(
                Path::new(l)
                    .file_name()?
                    .to_string_lossy()
                    .replace(".ko", ""),
            )
        })
        .map(|n| n.replace('-', "_"))
        .collect();
    let mut order = Vec::new();
    fn visit(p: &str, deps: &BTreeMap<String, Vec<String>>, order: &mut Vec<String>) {
        if order.iter().any(|o| o == p) {
            return;
        }
        for d in deps.get(p).into_iter().flatten() {
            visit(d, deps, order);
        }
        order.push(p.to_string());
    }
    for name in names {
        match by_name.get(*name) {
            Some(path) => visit(path, &deps, &mut order),
            None if builtin.contains(*name) => {}
            None => bail!("the kernel has no module {name}, built in or not"),
        }
    }
    Ok(order)
}

/// A module's contents, decompressed (busybox insmod reads plain ELF).
fn module_bytes(path: &Path) -> Result<Vec<u8>> {
    let name = path.to_string_lossy();
    let tool = if name.ends_with(".xz") {
        "xz"
    } else if name.ends_with(".zst") {
        "zstd"
    } else {
        return Ok(fs::read(path)?);
    };
    let out = Command::new(tool)
        .args(["-dc"])
        .arg(path)
        .output()
        .with_context(|| format!("running {tool}"))?;
    if !out.status.success() {
        bail!(
            "{tool} -dc {}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(out.stdout)
}

/// The initramfs: busybox, the boot modules, and an init that mounts this
/// machine's root over 9p and runs `script` there.
fn initramfs(kernel: &Kernel, script: &Path) -> Result<Vec<u8>> {
    let mut a = Archive::default();
    for d in ["bin", "dev", "proc", "sys", "newroot", "modules"] {
        a.dir(d);
    }
    // The kernel opens it for init's output before devtmpfs is mounted.
    a.char_device("dev/console", 5, 1);
    let busybox = fs::read("/bin/busybox").context("reading /bin/busybox (busybox-static)")?;
    a.file("bin/busybox", 0o755, &busybox);
    let mut order = String::new();
    for path in module_closure(&kernel.modules, BOOT_MODULES)? {
        let base = Path::new(&path).file_name().unwrap().to_string_lossy();
        let plain = base.split(".ko").next().unwrap().to_string() + ".ko";
        a.file(
            &format!("modules/{plain}"),
            0o644,
            &module_bytes(&kernel.modules.join(&path))?,
        );
        order.push_str(&plain);
        order.push('\n');
    }
    a.file("modules/order", 0o644, order.as_bytes());
    let init = format!(
        r#"#!/bin/busybox sh
bb=/bin/busybox
$bb mount -t proc proc /proc
$bb mount -t sysfs sysfs /sys
$bb mount -t devtmpfs devtmpfs /dev
for m in $($bb cat /modules/order); do
    $bb insmod /modules/$m || echo "vmtest: insmod $m failed"
done
if ! $bb mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=loose hostroot /newroot; then
    echo "vmtest: cannot mount the host's root over 9p"
    $bb poweroff -f
fi
$bb umount /proc /sys /dev
exec $bb switch_root /newroot /bin/sh {}
"#,
        script.display()
    );
    a.file("init", 0o755, init.as_bytes());
    Ok(a.finish())
}

/// What a guest does once booted.
pub enum Work<'a> {
    /// Doctor (every dry run), then the test binaries (with a filter), then (true)
    /// the tools under lockdown.
    Tests(&'a [TestBinary], &'a [String], bool),
    /// One shell command, from the workspace's root.
    Command(&'a str),
}

/// Two NUMA nodes, the second memory without CPUs (as a CXL or far-memory
/// node), unless BPFTOOLS_VMTEST_NUMA is 0: NUMA balancing then migrates
/// the pages numamove's test places there back to its CPUs' node, while
/// the scheduler sees the one node it always saw.
const NUMA_NODES: &[&str] = &[
    "-object",
    "memory-backend-ram,id=node0,size=1G",
    "-numa",
    "node,nodeid=0,cpus=0-1,memdev=node0",
    "-object",
    "memory-backend-ram,id=node1,size=1G",
    "-numa",
    "node,nodeid=1,memdev=node1",
];

fn two_numa_nodes() -> bool {
    std::env::var_os("BPFTOOLS_VMTEST_NUMA").is_none_or(|v| v != "0")
}

/// What the guest runs, on this machine's root filesystem.
fn guest_script(kernel: &Kernel, work: Work, results: &Path) -> String {
    let bins = crate::root_dir().join("target/debug");
    let mut s = format!(
        r#"export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 RUST_BACKTRACE=1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
# The guest's own temporary files; not a mount over /tmp, which may hold
# the workspace (a CI checkout).
mkdir -p /run/vmtest/tmp /run/vmtest/scratch
export TMPDIR=/run/vmtest/tmp
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t bpf bpf /sys/fs/bpf
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t tmpfs tmpfs /lib/modules
mkdir -p /lib/modules/{release}
mount --bind {modules} /lib/modules/{release}
# The kernel's configuration where distributions keep it (the tools read
# CONFIG_HZ there), over this machine's /boot.
mount -t tmpfs tmpfs /boot && cp {config} /boot/ || echo "vmtest: no kernel configuration"
hostname vmtest
ip link set lo up
for m in {test_modules}; do modprobe -q $m 2>/dev/null; done
for i in $(seq 100); do [ -b /dev/sda ] && break; sleep 0.1; done
mkfs.ext4 -q -F /dev/sda && mount /dev/sda /run/vmtest/scratch || echo "vmtest: no scratch disk"
export BPFTOOLS_TEST_SCRATCH=/run/vmtest/scratch
# The guest's NUMA nodes where it was given two (BPFTOOLS_VMTEST_NUMA):
# a test that needs two fails there rather than skips.
export BPFTOOLS_TEST_NUMA_NODES={numa_nodes}
R={results}
export BPFTOOLS_TEST_SKIPS=$R/skips
# sysrq from the host (qemu's monitor) dumps the CPUs' and blocked tasks'
# stacks when the guest goes silent.
echo 1 > /proc/sys/kernel/sysrq
echo "vmtest: Linux $(uname -r), $(nproc) CPUs"
# A long step that prints nothing to the console (doctor's dry runs of every
# tool: minutes under TCG) says each minute that it goes on, within the
# host's silence limit; fd 3 is the console whatever the step's output.
exec 3>&1
alive() {{
    ( while sleep 60; do echo "vmtest: ($1 goes on)" >&3; done ) &
    beat=$!
    "$@"
    rc=$?
    kill $beat
    return $rc
}}
"#,
        release = kernel.release,
        modules = kernel.modules.display(),
        config = kernel
            .vmlinuz
            .with_file_name(format!("config-{}", kernel.release))
            .display(),
        test_modules = TEST_MODULES.join(" "),
        results = results.display(),
        numa_nodes = if two_numa_nodes() { 2 } else { 1 },
    );
    let (tests, filter, lockdown) = match work {
        Work::Tests(tests, filter, lockdown) => (tests, filter, lockdown),
        Work::Command(command) => {
            return s + &format!(
                "cd {}
( {command} ); echo \"vmtest: exit $?\"\necho 0 > $R/failed\nsync\n\
                 echo o > /proc/sysrq-trigger\nsleep 30\n",
                crate::root_dir().display()
            );
        }
    };
    // Every tool's dry runs, through doctor (the kernel matrix and the
    // checks read its report: matrix::doctor_rows).
    s += &format!(
        "started=$(date +%s)\nalive {} doctor --json > $R/doctor.json 2> $R/doctor.err\n\
         echo \"vmtest: doctor's dry runs took $(( $(date +%s) - started )) s\"\n",
        bins.join("bpftools").display()
    );
    s += &privilege_runs(&bins);
    s += "failed=0\n";
    let quote = |f: &[String]| -> Vec<String> { f.iter().map(|f| shell_quote(f)).collect() };
    let run_filter = quote(filter);
    // A binary that fails is run once more: under TCG a test's timing can
    // go wrong once in a while. A pass then is reported as flaky, not hidden.
    for t in tests {
        let run = format!(
            "(cd {dir} && {bin} --test-threads=2 --color=never {filter})",
            dir = t.dir.display(),
            bin = t.path.display(),
            filter = if t.filter.is_empty() {
                run_filter.join(" ")
            } else {
                quote(&t.filter).join(" ")
            },
        );
        // $R/progress: each binary's verdict, for a boot that resumes after
        // a guest that hung.
        s += &format!(
            "echo \"vmtest: == {name}\"\nstarted=$(date +%s)\n\
             if {run}; then echo \"ok {name}\" >> $R/progress; else\n\
             \x20   echo \"vmtest: {name} failed: running it again\"\n\
             \x20   if {run}; then echo \"FLAKY {name}: failed, then passed\" >> $R/flaky;\n\
             \x20       echo \"ok {name}\" >> $R/progress\n\
             \x20   else failed=$((failed+1)); echo \"vmtest: FAILED {name}\";\n\
             \x20       echo \"failed {name}\" >> $R/progress; fi\n\
             fi\n\
             echo \"vmtest: {name} took $(( $(date +%s) - started )) s\"\n",
            name = t.name,
        );
    }
    if lockdown {
        s += &lockdown_phase(&bins);
    }
    s += "echo $failed > $R/failed\nsync\necho \"vmtest: done, $failed test binaries failed\"\n\
          echo o > /proc/sysrq-trigger\nsleep 30\n";
    s
}

/// runqlat run for real by a user who is not root, from a copy of the binary
/// (on the guest's tmpfs, which keeps file capabilities) holding CAP_BPF,
/// CAP_PERFMON and CAP_SYS_RESOURCE, then the first two only: where the
/// kernel charges maps to the locked-memory limit (5.10) the second must
/// name CAP_SYS_RESOURCE (matrix::privilege_disagrees).
fn privilege_runs(bins: &Path) -> String {
    let mut s = format!(
        "mkdir -p $R/privilege /run/vmtest/caps && chmod 755 /run/vmtest /run/vmtest/caps\n\
         cp {} /run/vmtest/caps/ && ln -sf bpftools /run/vmtest/caps/runqlat\n",
        bins.join("bpftools").display()
    );
    for (name, caps) in PRIVILEGE_RUNS {
        s += &format!(
            "setcap {caps}+ep /run/vmtest/caps/bpftools\n\
             (cd /run/vmtest && setpriv --reuid=65534 --regid=65534 --clear-groups -- \
             timeout 60 /run/vmtest/caps/runqlat 1 1) > $R/privilege/{name} 2>&1; \
             echo \"exit $?\" >> $R/privilege/{name}\n"
        );
    }
    s
}

/// The capabilities runqlat is given in each of its runs as that user.
pub const PRIVILEGE_RUNS: &[(&str, &str)] = &[
    ("with-sys-resource", "cap_bpf,cap_perfmon,cap_sys_resource"),
    ("without", "cap_bpf,cap_perfmon"),
];

/// The tools under lockdown, last (a mode can be raised while the kernel
/// runs, never lowered: one boot serves both): under `integrity` a real
/// run of a few tools; under `confidentiality` doctor's report and the
/// same runs. matrix::lockdown_disagrees reads what they said.
fn lockdown_phase(bins: &Path) -> String {
    let mut s = String::from(
        "echo \"vmtest: == lockdown\"\nstarted=$(date +%s)\nmkdir -p $R/lockdown\n\
         grep -q ' securityfs ' /proc/mounts || mount -t securityfs securityfs /sys/kernel/security\n",
    );
    for mode in ["integrity", "confidentiality"] {
        s += &format!(
            "echo {mode} > /sys/kernel/security/lockdown\n\
             cat /sys/kernel/security/lockdown > $R/lockdown/{mode}.mode\n"
        );
        // Every tool's dry run where most are refused (a minute under
        // TCG, so not under integrity, where the runs below show them run).
        if mode == "confidentiality" {
            s += &format!(
                "alive {} doctor --json > $R/lockdown/{mode}.json 2>&1\n",
                bins.join("bpftools").display()
            );
        }
        for run in LOCKDOWN_RUNS {
            let tool = run.split(' ').next().unwrap_or_default();
            s += &format!(
                "timeout 60 {bin}{args} > $R/lockdown/{mode}-{tool} 2>&1; \
                 echo \"exit $?\" >> $R/lockdown/{mode}-{tool}\n",
                bin = bins.join(tool).display(),
                args = &run[tool.len()..],
            );
        }
    }
    s + "echo \"vmtest: lockdown took $(( $(date +%s) - started )) s\"\n"
}

/// The real runs under each lockdown mode: tools that read kernel memory
/// and tools that need not; under integrity each must run, under
/// confidentiality each must fare as doctor says.
pub const LOCKDOWN_RUNS: &[&str] = &[
    "runqlat 1 1",
    "syscount -d 1",
    "softirqs 1 1",
    "vfsstat 1 1",
];

pub struct Outcome {
    pub passed: bool,
    pub summary: String,
    pub results: PathBuf,
    /// The guest ran to its end (else it hung or crashed, and was stopped).
    pub completed: bool,
    /// The test binaries that ran to their end, and whether they passed.
    pub finished: Vec<(String, bool)>,
    /// How long each part took, as the guest said ("TOOL/BINARY took N s",
    /// "doctor's dry runs", "lockdown").
    pub times: Vec<(String, u64)>,
}

/// Boots the kernel, runs the tests, and reads what came back.
/// Each console line is printed after `prefix` (the kernel's name, when
/// guests run side by side).
pub fn run(name: &str, kernel: &Kernel, work: Work, prefix: &str) -> Result<Outcome> {
    let results = work_dir().join("results").join(name);
    let _ = fs::remove_dir_all(&results);
    fs::create_dir_all(&results)?;
    fs::write(results.join("release"), &kernel.release)?;
    let script = results.join("guest.sh");
    fs::write(&script, guest_script(kernel, work, &results))?;
    let initrd = results.join("initrd.cpio");
    fs::write(&initrd, initramfs(kernel, &script)?)?;
    let disk = results.join("scratch.img");
    fs::File::create(&disk)?.set_len(2 << 30)?;

    let mut qemu = Command::new("qemu-system-x86_64");
    qemu.args([
        "-accel",
        // One host thread for both vCPUs: with a thread each (MTTCG), a vCPU
        // could run a breakpoint the kernel's text patching had already
        // removed (an int3 oops on 6.12), or wait on the other's IPI for
        // minutes. Guests run side by side instead (--parallel).
        "tcg,thread=single",
        "-cpu",
        "max",
        "-smp",
        "2",
        "-m",
        "2G",
    ])
    .args(if two_numa_nodes() { NUMA_NODES } else { &[] })
    .args([
        "-display",
        "none",
        "-monitor",
        &format!(
            "unix:{},server,nowait",
            results.join("monitor.sock").display()
        ),
        "-serial",
        "stdio",
        "-no-reboot",
    ])
    .args(["-nic", "none"])
    .arg("-kernel")
    .arg(&kernel.vmlinuz)
    .arg("-initrd")
    .arg(&initrd)
    .args([
        "-append",
        // A soft lockup prints every CPU's stack. Not a panic: under TCG,
        // text patching (a tracepoint's static call updated as a BPF link
        // detaches) has waited 45 s for the other vCPU to take its IPI, and
        // then gone on; a panic turned that stall into a failed run.
        // NUMA balancing off, as on a one-node machine (where there are two
        // nodes, numamove's test turns it on for its own run).
        "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/init softlockup_all_cpu_backtrace=1 \
         numa_balancing=disable",
        "-virtfs",
        "local,path=/,mount_tag=hostroot,security_model=none,multidevs=remap,id=hostroot",
    ])
    .arg("-drive")
    .arg(format!(
        "file={},format=raw,if=none,id=scratch",
        disk.display()
    ))
    .args([
        "-device",
        "virtio-scsi-pci",
        "-device",
        "scsi-hd,drive=scratch",
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::inherit());
    let started = Instant::now();
    let mut child = qemu.spawn().context("starting qemu-system-x86_64")?;
    let stdout = child.stdout.take().unwrap();
    let pid = child.id();
    // The time limits: qemu killed from a watchdog thread when the whole
    // run, or a silence on the console, lasts too long (a hung guest).
    let last_output = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let heard = last_output.clone();
    let binary_started = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let binary_since = binary_started.clone();
    let monitor = results.join("monitor.sock");
    let watchdog = std::thread::spawn(move || {
        loop {
            std::thread::sleep(Duration::from_secs(1));
            if !Path::new(&format!("/proc/{pid}")).exists() {
                return None;
            }
            let now = started.elapsed();
            let silent = now.saturating_sub(Duration::from_secs(
                heard.load(std::sync::atomic::Ordering::Relaxed),
            ));
            let silence_limit = limit("BPFTOOLS_VMTEST_SILENCE_SECS", SILENCE_LIMIT);
            let binary_limit = limit("BPFTOOLS_VMTEST_BINARY_SECS", BINARY_LIMIT);
            let binary_time = now.saturating_sub(Duration::from_secs(
                binary_since.load(std::sync::atomic::Ordering::Relaxed),
            ));
            let why = if now > TIME_LIMIT {
                format!("the run took over {} minutes", TIME_LIMIT.as_secs() / 60)
            } else if binary_time > binary_limit {
                format!("a test binary ran for over {} s", binary_limit.as_secs())
            } else if silent > silence_limit {
                format!(
                    "the guest printed nothing for {} s",
                    silence_limit.as_secs()
                )
            } else {
                continue;
            };
            if now <= TIME_LIMIT {
                sysrq_dumps(&monitor);
            }
            // SAFETY: kill(2) on qemu's pid, which we have not reaped yet.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            return Some(why);
        }
    });
    let mut log = fs::File::create(results.join("console.log"))?;
    let (mut passed, mut failed, mut ignored) = (0u64, 0u64, 0u64);
    let mut times = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap_or_default();
        let line = line.trim_end_matches('\r');
        let at = started.elapsed().as_secs();
        if !is_kernel_line(line) {
            last_output.store(at, std::sync::atomic::Ordering::Relaxed);
        }
        // Each binary's run, and its second run after a failure, starts
        // its own clock.
        if line.starts_with("vmtest: == ") || line.ends_with("failed: running it again") {
            binary_started.store(at, std::sync::atomic::Ordering::Relaxed);
        }
        println!("{prefix}{line}");
        writeln!(log, "{line}")?;
        if let Some((name, secs)) = line
            .strip_prefix("vmtest: ")
            .and_then(|l| l.strip_suffix(" s"))
            .and_then(|l| l.rsplit_once(" took "))
        {
            if let Ok(secs) = secs.parse() {
                times.push((name.to_string(), secs));
            }
        }
        if let Some(rest) = line.strip_prefix("test result: ") {
            // "ok. 8 passed; 0 failed; 0 ignored; ..."
            let count = |what: &str| {
                rest.split(';')
                    .find_map(|p| {
                        let n = p.trim().strip_suffix(what)?.split_whitespace().last()?;
                        n.parse::<u64>().ok()
                    })
                    .unwrap_or(0)
            };
            passed += count("passed");
            failed += count("failed");
            ignored += count("ignored");
        }
    }
    let status = child.wait()?;
    let killed = watchdog.join().ok().flatten();
    let took = started.elapsed();
    let binaries_failed = fs::read_to_string(results.join("failed"))
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    let skips = fs::read_to_string(results.join("skips")).unwrap_or_default();
    let flaky = fs::read_to_string(results.join("flaky")).unwrap_or_default();
    for line in skips.lines().chain(flaky.lines()) {
        println!("{prefix}vmtest: {line}");
    }
    let summary = match binaries_failed {
        Some(n) => format!(
            "{passed} passed ({} of them skipped: a feature absent), {failed} failed, \
             {ignored} ignored; {} test binaries flaky (failed, then passed); \
             {n} test binaries failed; {} min",
            skips.lines().count(),
            flaky.lines().count(),
            took.as_secs() / 60
        ),
        None => format!(
            "the guest did not finish (qemu {status}, after {} s{}): see {}",
            took.as_secs(),
            killed.map_or(String::new(), |why| format!("; killed: {why}")),
            results.join("console.log").display()
        ),
    };
    let _ = fs::remove_file(&disk);
    let finished = fs::read_to_string(results.join("progress"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (verdict, name) = l.split_once(' ')?;
            Some((name.to_string(), verdict == "ok"))
        })
        .collect();
    Ok(Outcome {
        passed: binaries_failed == Some(0),
        summary,
        results,
        completed: binaries_failed.is_some(),
        finished,
        times,
    })
}

/// A kernel message on the console: "[  682.270776] ...".
fn is_kernel_line(line: &str) -> bool {
    line.strip_prefix('[')
        .and_then(|r| r.split_once(']'))
        .is_some_and(|(stamp, _)| {
            let stamp = stamp.trim();
            !stamp.is_empty() && stamp.chars().all(|c| c.is_ascii_digit() || c == '.')
        })
}

/// A limit, or the seconds in `var` (to try what a hung guest does to a run).
fn limit(var: &str, default: Duration) -> Duration {
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(default, Duration::from_secs)
}

/// Asks a silent guest, through qemu's monitor, for the stacks of its CPUs
/// (sysrq l) and of its blocked tasks (sysrq w), and gives it 20 s to print
/// them: a hang's backtrace, if its kernel still takes interrupts.
fn sysrq_dumps(monitor: &Path) {
    let Ok(mut sock) = std::os::unix::net::UnixStream::connect(monitor) else {
        return;
    };
    // 9 first: the dumps print at KERN_INFO, below the console's level.
    for key in ["9", "l", "w"] {
        let _ = writeln!(sock, "sendkey alt-sysrq-{key}");
        std::thread::sleep(Duration::from_secs(2));
    }
    std::thread::sleep(Duration::from_secs(20));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_lines_are_told_from_the_tests() {
        assert!(is_kernel_line(
            "[ 3548.344887] watchdog: BUG: soft lockup - CPU#0 stuck for 22s!"
        ));
        assert!(is_kernel_line("[  682.270776] sysrq: Power Off"));
        assert!(!is_kernel_line("test cold_read_misses ... ok"));
        assert!(!is_kernel_line("[unknown] frame"));
        assert!(!is_kernel_line("[] x"));
        assert!(!is_kernel_line("vmtest: == cachestat/cachestat"));
    }
}
