//! Fixtures shared by the tools' integration tests and `cargo xtask bench`,
//! which must measure on the same setup the tests check: light (no BPF), so
//! the xtask stays quick to build.

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

/// Which data segments an nftables rule drops (SYNs always pass, so that
/// connecting never waits for the 1 s SYN timeout).
#[derive(Debug, Clone, Copy)]
pub enum Loss {
    /// This percentage, at random.
    Percent(u32),
    /// Every n-th segment: a steady count of retransmits.
    Every(u32),
}

/// A network namespace with its loopback up (MTU 1500, so that transfers
/// make many segments to drop), deleted with its rules when dropped, on
/// every exit path.
pub struct Netns {
    name: String,
}

const TABLE: &str = "bpftools_testbed";

fn run(cmd: &mut Command) -> Result<()> {
    let out = cmd.output().with_context(|| format!("running {cmd:?}"))?;
    if !out.status.success() {
        bail!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

impl Netns {
    /// A new namespace named `name` (at most 15 bytes are kept).
    pub fn new(name: &str) -> Result<Netns> {
        let ns = Netns {
            name: name[..name.len().min(15)].to_string(),
        };
        run(Command::new("ip").args(["netns", "add", &ns.name]))?;
        run(Command::new("ip").args(["-n", &ns.name, "link", "set", "lo", "up", "mtu", "1500"]))?;
        Ok(ns)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Drops data segments sent to `port` inside the namespace.
    pub fn drop_segments(&self, port: u16, loss: Loss) -> Result<()> {
        let rule = match loss {
            Loss::Percent(p) => format!("numgen random mod 100 < {p}"),
            Loss::Every(n) => format!("numgen inc mod {n} == 0"),
        };
        self.input_rule(&format!(
            "tcp dport {port} tcp flags & syn == 0 {rule} drop"
        ))
    }

    /// Drops the first SYN sent to `port` inside the namespace (and every
    /// second one after it): a connect then takes the SYN's retransmission
    /// timeout, one second.
    pub fn drop_first_syn(&self, port: u16) -> Result<()> {
        self.input_rule(&format!(
            "tcp dport {port} tcp flags & (syn | ack) == syn numgen inc mod 2 == 0 drop"
        ))
    }

    /// Drops, and counts, every segment sent to `port` inside the namespace
    /// ([`Netns::dropped`] reads the count).
    pub fn drop_port(&self, port: u16) -> Result<()> {
        self.input_rule(&format!("tcp dport {port} counter drop"))
    }

    /// Drops, and counts, every segment sent to `port` as it leaves its
    /// socket (the output hook): the dropped packet still belongs to the
    /// socket that sent it, where an input drop's has none yet.
    pub fn drop_port_on_output(&self, port: u16) -> Result<()> {
        self.rule("output", &format!("tcp dport {port} counter drop"))
    }

    /// The packets the namespace's rule counted ([`Netns::drop_port`]).
    pub fn dropped(&self) -> Result<u64> {
        let out = Command::new("ip")
            .args([
                "netns", "exec", &self.name, "nft", "list", "table", "inet", TABLE,
            ])
            .output()
            .context("running nft")?;
        let text = String::from_utf8_lossy(&out.stdout);
        text.split_whitespace()
            .skip_while(|w| *w != "packets")
            .nth(1)
            .and_then(|n| n.parse().ok())
            .with_context(|| format!("no counter in the rules: {text}"))
    }

    /// Puts `rule` in the input hook's chain of the namespace's own table.
    fn input_rule(&self, rule: &str) -> Result<()> {
        self.rule("input", rule)
    }

    /// Puts `rule` in the chain of netfilter hook `hook` of the
    /// namespace's own table.
    fn rule(&self, hook: &str, rule: &str) -> Result<()> {
        let rules = format!(
            "table inet {TABLE} {{\n chain {hook} {{\n  type filter hook {hook} priority 0; \
             policy accept;\n  {rule}\n }}\n}}\n"
        );
        let mut nft = Command::new("ip")
            .args(["netns", "exec", &self.name, "nft", "-f", "-"])
            .stdin(Stdio::piped())
            .spawn()
            .context("starting nft")?;
        nft.stdin
            .take()
            .context("nft's stdin")?
            .write_all(rules.as_bytes())?;
        if !nft.wait()?.success() {
            bail!("nft refused the rule: {rules}");
        }
        Ok(())
    }

    /// Removes the drop rule.
    pub fn stop_dropping(&self) -> Result<()> {
        run(Command::new("ip").args([
            "netns", "exec", &self.name, "nft", "delete", "table", "inet", TABLE,
        ]))
    }

    /// A connected pair of sockets inside the namespace: (client, server).
    /// Sockets keep their namespace, so any thread may use them.
    pub fn connect(&self, addr: SocketAddr) -> Result<(TcpStream, TcpStream)> {
        Self::connect_in(&self.name, addr)
    }

    /// Moves the calling thread (only) into namespace `name`: for a thread
    /// made for the purpose, whose sockets then live there.
    pub fn enter(name: &str) -> Result<()> {
        let path = format!("/run/netns/{name}");
        let ns = std::fs::File::open(&path).with_context(|| format!("opening {path}"))?;
        // SAFETY: a valid namespace fd; setns changes only this thread.
        if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            return Err(std::io::Error::last_os_error()).context("setns");
        }
        Ok(())
    }

    /// [`Netns::connect`] by the namespace's name.
    pub fn connect_in(name: &str, addr: SocketAddr) -> Result<(TcpStream, TcpStream)> {
        let name = name.to_string();
        std::thread::spawn(move || -> Result<(TcpStream, TcpStream)> {
            // This thread ends here.
            Self::enter(&name)?;
            let listener = TcpListener::bind(addr)?;
            let client = TcpStream::connect(addr)?;
            let (server, _) = listener.accept()?;
            Ok((client, server))
        })
        .join()
        .map_err(|_| anyhow::anyhow!("the connecting thread panicked"))?
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

/// Compiles C source `src` into `out` with `flags` (and -pthread): the one
/// helper the tests' and the bench's C workloads are built with. Fails with
/// the compiler's own messages.
pub fn compile_c(src: &Path, out: &Path, flags: &[&str]) -> Result<PathBuf> {
    let status = Command::new("cc")
        .args(flags)
        .args(["-pthread", "-o"])
        .arg(out)
        .arg(src)
        .status()
        .context("running cc (package gcc or clang)")?;
    if !status.success() {
        bail!("cc failed to build {}", src.display());
    }
    Ok(out.to_path_buf())
}

/// Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or
/// /sys/fs/cgroup/unified on hybrid systems).
pub fn cgroup2_root() -> Result<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/mounts")?;
    mounts
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(2) == Some(&"cgroup2")).then(|| PathBuf::from(f[1]))
        })
        .context("no cgroup v2 hierarchy is mounted")
}

/// A memory cgroup of the caller's own, limited to a size without swap:
/// cgroup v2's memory.max, or where the memory controller is on cgroup v1
/// (a hybrid host) memory.limit_in_bytes. Removed on drop, once its tasks
/// have gone.
pub struct MemoryCage {
    dir: PathBuf,
}

impl MemoryCage {
    /// A cage named `name` (unique to the caller) of `limit` bytes.
    pub fn new(name: &str, limit: u64) -> Result<MemoryCage> {
        let v1 = PathBuf::from("/sys/fs/cgroup/memory");
        if v1.join("memory.limit_in_bytes").exists() {
            let dir = v1.join(name);
            std::fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
            let cage = MemoryCage { dir };
            std::fs::write(cage.dir.join("memory.limit_in_bytes"), limit.to_string())?;
            return Ok(cage);
        }
        let root = cgroup2_root()?;
        let control = root.join("cgroup.subtree_control");
        if !std::fs::read_to_string(&control)?.contains("memory") {
            std::fs::write(&control, "+memory").context("enabling the memory controller")?;
        }
        let dir = root.join(name);
        std::fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let cage = MemoryCage { dir };
        std::fs::write(cage.dir.join("memory.max"), limit.to_string())?;
        // Absent without swap accounting: nothing to turn off then.
        let _ = std::fs::write(cage.dir.join("memory.swap.max"), "0");
        Ok(cage)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Lets the cage's memory go to swap (cgroup v2's memory.swap.max; v1
    /// limits memory alone unless memsw is set): for swap-ins to test.
    pub fn allow_swap(&self) -> Result<()> {
        let max = self.dir.join("memory.swap.max");
        if max.exists() {
            std::fs::write(&max, "max").context("allowing swap")?;
        }
        Ok(())
    }

    /// Moves process `pid` in.
    pub fn enter(&self, pid: u32) -> Result<()> {
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string())
            .with_context(|| format!("moving {pid} into {}", self.dir.display()))
    }

    /// `cmd` starts inside the cage: the child moves itself in before its
    /// exec.
    pub fn run_inside(&self, cmd: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        let procs = self.dir.join("cgroup.procs");
        let path = std::ffi::CString::new(procs.as_os_str().as_encoded_bytes())
            .expect("a cgroup path without NUL");
        // SAFETY: only async-signal-safe calls between fork and exec (open,
        // write, close), on a path made before the fork.
        unsafe {
            cmd.pre_exec(move || {
                let fd = libc::open(path.as_ptr(), libc::O_WRONLY);
                if fd < 0 || libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(fd);
                Ok(())
            });
        }
    }
}

impl Drop for MemoryCage {
    fn drop(&mut self) {
        // A task just killed or ended may take a moment to leave.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}
