//! Flags every tool shares, and value parsers for the ones whose letters
//! differ from tool to tool (BCC's `-t` is a timestamp in one tool, a tid in
//! another), so each tool declares those itself with these parsers.

use std::ffi::CString;
use std::net::IpAddr;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::usage::usage;

pub use crate::output::file::OutFile;

/// `-v`, `--json`, `--dry-run`: flattened into every tool's arguments.
#[derive(Args, Debug, Clone, Default)]
pub struct CommonArgs {
    /// Print libbpf's debug log (program loading, verifier) to stderr
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// Print one JSON object per line instead of a table
    #[arg(long)]
    pub json: bool,
    /// Open, load and verify the BPF programs, print the hooks chosen, and
    /// exit without attaching
    #[arg(long)]
    pub dry_run: bool,
}

/// `--containers`, flattened into the event tools' arguments.
#[derive(Args, Debug, Clone, Default)]
pub struct ContainerArgs {
    /// Add a CONTAINER column: the container's id (Docker, containerd,
    /// CRI-O, Podman), else the systemd unit, else the cgroup path; JSON
    /// gains cgroup, container, pod and unit
    #[arg(long)]
    pub containers: bool,
}

/// The cgroup filter: one cgroup v2 and its descendants, named by its
/// directory (`-c`), a container's id (`--container`) or a systemd unit
/// (`--unit`), each resolved to the directory at start. [`CgroupArgs`]
/// where the tool has `-c` free, [`CgroupLongArgs`] where not.
macro_rules! cgroup_args {
    ($name:ident, $($short:expr)?) => {
        #[derive(Args, Debug, Clone, Default)]
        pub struct $name {
            /// Only tasks in this cgroup v2 (its directory) or below it
            #[arg($(short = $short,)? long, value_name = "PATH", value_parser = cgroup_path)]
            cgroup: Option<PathBuf>,
            /// Only tasks in this container (its id, or the start of it,
            /// as `docker ps` or `crictl ps` shows) or below it
            #[arg(long, value_name = "ID", value_parser = container_cgroup,
                  conflicts_with = "cgroup")]
            container: Option<PathBuf>,
            /// Only tasks in this systemd unit (`nginx`, `session-3.scope`)
            /// or below it
            #[arg(long, value_name = "NAME", value_parser = unit_cgroup,
                  conflicts_with_all = ["cgroup", "container"])]
            unit: Option<PathBuf>,
        }

        impl $name {
            /// The cgroup directory chosen, by whichever option.
            pub fn path(&self) -> Option<PathBuf> {
                self.cgroup.clone().or_else(|| self.container.clone()).or_else(|| self.unit.clone())
            }

            /// The chosen cgroup's id (its directory's inode), for a
            /// filter the BPF side applies to another task than the
            /// current one (task_in_cgroup); 0 where none was chosen.
            pub fn id(&self) -> anyhow::Result<u64> {
                use anyhow::Context;
                use std::os::unix::fs::MetadataExt;
                match self.path() {
                    Some(path) => Ok(std::fs::metadata(&path)
                        .with_context(|| format!("reading cgroup {}", path.display()))?
                        .ino()),
                    None => Ok(0),
                }
            }
        }
    };
}

cgroup_args!(CgroupArgs, 'c');
cgroup_args!(CgroupLongArgs,);

fn container_cgroup(s: &str) -> Result<PathBuf, String> {
    crate::kernel::cgroups::find_container(s)
}

fn unit_cgroup(s: &str) -> Result<PathBuf, String> {
    crate::kernel::cgroups::find_unit(s)
}

/// `-4`/`-6`, flattened into the TCP tools' arguments.
#[derive(Args, Debug, Clone, Default)]
pub struct FamilyArgs {
    /// Trace IPv4 only
    #[arg(short = '4', long, conflicts_with = "ipv6")]
    pub ipv4: bool,
    /// Trace IPv6 only
    #[arg(short = '6', long)]
    pub ipv6: bool,
}

impl FamilyArgs {
    /// The address family the BPF side keeps (`target_family`), 0 for both.
    pub fn family(&self) -> u16 {
        use crate::output::net::{AF_INET, AF_INET6};
        match (self.ipv4, self.ipv6) {
            (true, _) => AF_INET,
            (_, true) => AF_INET6,
            _ => 0,
        }
    }

    /// Fails with a usage error where the addresses given (each with its
    /// option's name) cannot match a connection at once: an address of
    /// the family -4/-6 excludes, or two of different families.
    pub fn check_addresses(&self, addrs: &[(&str, Option<IpAddr>)]) -> Result<()> {
        let given: Vec<(&str, IpAddr)> = addrs
            .iter()
            .filter_map(|(f, a)| Some((*f, (*a)?)))
            .collect();
        for (flag, addr) in &given {
            let (family, excluded, by) = match addr {
                IpAddr::V4(_) => ("IPv4", self.ipv6, "-6/--ipv6"),
                IpAddr::V6(_) => ("IPv6", self.ipv4, "-4/--ipv4"),
            };
            if excluded {
                return Err(usage(format!(
                    "{flag} {addr} is an {family} address: it cannot match with {by}"
                )));
            }
        }
        if let [(f1, a1), (f2, a2), ..] = given[..] {
            if a1.is_ipv4() != a2.is_ipv4() {
                return Err(usage(format!(
                    "{f1} {a1} and {f2} {a2} are of different families: no connection has both"
                )));
            }
        }
        Ok(())
    }
}

/// `[interval] [count]`, for tools that print every interval.
#[derive(Args, Debug, Clone, Default)]
pub struct IntervalCount {
    /// Output interval, in seconds (default: print once, at Ctrl-C)
    #[arg(value_parser = seconds)]
    pub interval: Option<u64>,
    /// Number of outputs before exiting (default: unlimited)
    #[arg(value_parser = positive_u64, requires = "interval")]
    pub count: Option<u64>,
}

/// `[interval] [count]` for the tools that print every interval from the
/// start (vfsstat, biotop, filetop): one second unless given.
#[derive(Args, Debug, Clone)]
pub struct EveryInterval {
    /// Output interval, in seconds
    #[arg(value_parser = seconds, default_value_t = 1)]
    pub interval: u64,
    /// Number of outputs before exiting (default: unlimited)
    #[arg(value_parser = positive_u64)]
    pub count: Option<u64>,
}

/// What the top tools (biotop, filetop) share: `-C`, `-r`, and `[interval]
/// [count]` from one second.
#[derive(Args, Debug, Clone)]
pub struct TopArgs {
    /// Don't clear the screen between intervals
    #[arg(short = 'C', long)]
    pub noclear: bool,
    /// Maximum rows to print
    #[arg(short = 'r', long, alias = "maxrows", value_name = "ROWS", default_value_t = 20,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub rows: u64,
    #[command(flatten)]
    pub every: EveryInterval,
}

impl TopArgs {
    /// BCC's banner for its top tools.
    pub fn banner(&self) -> String {
        format!(
            "Tracing... Output every {} secs. Hit Ctrl-C to end",
            self.every.interval
        )
    }
}

/// What the interrupt tools (softirqs, hardirqs) share: BCC's options and
/// libbpf-tools' (each tool's long names for -C both).
#[derive(Args, Debug, Clone, Default)]
pub struct IrqArgs {
    /// Include a timestamp on each output (HH:MM:SS)
    #[arg(short = 'T', long)]
    pub timestamp: bool,
    /// Output in nanoseconds (default: microseconds)
    #[arg(short = 'N', long)]
    pub nanoseconds: bool,
    /// Count the runs instead of timing them
    #[arg(short = 'C', long = "count", visible_alias = "events",
          conflicts_with_all = ["dist", "nanoseconds", "percentiles", "hdr_log"])]
    pub events: bool,
    /// Show the times of each as a histogram
    #[arg(short = 'd', long = "dist", visible_alias = "distributed")]
    pub dist: bool,
    /// This CPU only
    #[arg(short = 'c', long, value_name = "CPU", value_parser = cpu)]
    pub cpu: Option<u32>,
}

/// What the histogram tools (biolatency, runqlat) share: percentiles and
/// `[interval] [count]`.
#[derive(Args, Debug, Clone, Default)]
pub struct HistogramArgs {
    /// One histogram per container (else systemd unit, else cgroup), as
    /// the CONTAINER column of the event tools names it
    #[arg(long)]
    pub per_container: bool,
    /// Print p50, p90, p99, p99.9 and max of each histogram
    #[arg(long)]
    pub percentiles: bool,
    /// Also write each interval's histograms to FILE as an HdrHistogram
    /// interval log (V2, compressed), which HdrHistogram's tools read
    /// (- for standard output)
    #[arg(long, value_name = "FILE")]
    pub hdr_log: Option<OutFile>,
    #[command(flatten)]
    pub metrics: MetricsArgs,
    #[command(flatten)]
    pub interval: IntervalCount,
}

/// --prometheus and --prom-file.
#[derive(Args, Debug, Clone, Default)]
pub struct MetricsArgs {
    /// Serve the figures (cumulative, histograms in seconds) as Prometheus
    /// metrics at http://ADDR/metrics, read from the kernel at each scrape
    /// (ADDR: HOST:PORT, or :PORT for every address)
    #[arg(long, value_name = "ADDR")]
    pub prometheus: Option<String>,
    /// Write the same metrics to FILE each interval and at exit, atomically
    /// (node_exporter's textfile collector; - for standard output)
    #[arg(long, value_name = "FILE")]
    pub prom_file: Option<OutFile>,
}

impl MetricsArgs {
    /// The listening socket and file, if either was asked for; checked
    /// before tracing.
    pub fn exporter(&self) -> anyhow::Result<Option<crate::export::prom::Exporter>> {
        let server = self
            .prometheus
            .as_deref()
            .map(crate::export::prom::Server::bind)
            .transpose()?;
        Ok((server.is_some() || self.prom_file.is_some())
            .then(|| crate::export::prom::Exporter::new(server, self.prom_file.clone())))
    }
}

impl HistogramArgs {
    /// True if the kernel must keep the fine histograms too.
    pub fn fine(&self) -> bool {
        self.percentiles || self.hdr_log.is_some()
    }

    /// The fine histograms' map where the kernel keeps them, for
    /// [`crate::kinds::histogram::read_maps`].
    pub fn fine_map<'a>(
        &self,
        map: &'a dyn libbpf_rs::MapCore,
    ) -> Option<&'a dyn libbpf_rs::MapCore> {
        self.fine().then_some(map)
    }
}

pub use crate::kernel::filters::IdList;

/// A CPU of this machine (`-c CPU`, profile's `-C CPU`): its number, one
/// of the CPUs it may bring online.
pub fn cpu(s: &str) -> Result<u32, String> {
    let n: u32 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a CPU number"))?;
    let possible = crate::kernel::perf::possible_cpus().map_err(|e| e.to_string())?;
    if !possible.contains(&n) {
        return Err(format!(
            "no such CPU (this machine's CPUs are {}-{})",
            possible.first().unwrap_or(&0),
            possible.last().unwrap_or(&0)
        ));
    }
    Ok(n)
}

/// Parses `123` or `123,456`: each must be a positive id.
pub fn id_list(s: &str) -> Result<IdList, String> {
    let ids = s
        .split(',')
        .map(|part| {
            let part = part.trim();
            match part.parse::<u32>() {
                Ok(0) => Err(format!("'{part}' is not a valid id: ids start at 1")),
                Ok(id) if id <= i32::MAX as u32 => Ok(id),
                _ => Err(format!("'{part}' is not a process or thread id")),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(IdList(ids))
}

/// A comma-separated list of TCP ports (`-P 80,443`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortList(pub Vec<u16>);

/// Parses `80` or `80,443`: each a port from 1 to 65535; at most 1024.
pub fn port_list(s: &str) -> Result<PortList, String> {
    let ports = s
        .split(',')
        .map(|part| {
            let part = part.trim();
            match part.parse::<u16>() {
                Ok(p) if p > 0 => Ok(p),
                _ => Err(format!("'{part}' is not a port (1 to 65535)")),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    if ports.len() > 1024 {
        return Err(format!("{} ports: at most 1024", ports.len()));
    }
    Ok(PortList(ports))
}

/// Parses a single positive id.
pub fn id(s: &str) -> Result<u32, String> {
    match id_list(s)?.0.as_slice() {
        [one] => Ok(*one),
        _ => Err(format!("'{s}': expected one id")),
    }
}

/// Parses a numeric uid or a user name from the password database.
pub fn uid(s: &str) -> Result<u32, String> {
    if let Ok(uid) = s.parse::<u32>() {
        if uid == u32::MAX {
            return Err(format!("'{s}' is not a valid uid"));
        }
        return Ok(uid);
    }
    user_uid(s).ok_or_else(|| format!("no such user or uid: '{s}'"))
}

fn user_uid(name: &str) -> Option<u32> {
    let cname = CString::new(name).ok()?;
    let mut buf = vec![0u8; 16 * 1024];
    // SAFETY: an all-zero passwd is a valid out-parameter for getpwnam_r.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call and buf's length is passed;
    // the returned entry points into buf, which we do not read past here.
    let rc = unsafe {
        libc::getpwnam_r(
            cname.as_ptr(),
            &mut pwd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut result,
        )
    };
    (rc == 0 && !result.is_null()).then_some(pwd.pw_uid)
}

/// Parses a positive whole number (intervals, counts, durations).
pub fn positive_u64(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(0) => Err("must be greater than zero".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("'{s}' is not a positive whole number")),
    }
}

/// Parses a text that must not be empty (a name to match).
pub fn non_empty(s: &str) -> Result<String, String> {
    if s.is_empty() {
        return Err("must not be empty".into());
    }
    Ok(s.to_string())
}

/// The longest interval or duration accepted: a year.
pub const MAX_SECONDS: u64 = 365 * 24 * 3600;

/// Parses an interval or a duration in seconds: positive, at most a year
/// (what a deadline can be computed for, with room to spare).
pub fn seconds(s: &str) -> Result<u64, String> {
    match positive_u64(s)? {
        n if n > MAX_SECONDS => Err(format!(
            "{n} seconds is more than a year ({MAX_SECONDS} seconds)"
        )),
        n => Ok(n),
    }
}

/// Parses a cgroup v2 directory path, checking that it exists.
/// A cgroup v2 directory: a directory on a cgroup2 file system. A cgroup
/// v1 directory (a hybrid hierarchy's /sys/fs/cgroup/memory) is refused:
/// its inode is no cgroup v2 id, and would match nothing.
pub fn cgroup_path(s: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(s);
    if !path.is_dir() {
        return Err(format!("'{s}' is not a cgroup directory"));
    }
    let c = CString::new(s).map_err(|_| format!("'{s}' is not a path"))?;
    // SAFETY: an all-zero statfs is a valid value to fill.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is NUL-terminated, fs a valid statfs for the call.
    if unsafe { libc::statfs(c.as_ptr(), &mut fs) } != 0 {
        return Err(format!("'{s}': {}", std::io::Error::last_os_error()));
    }
    if fs.f_type != libc::CGROUP2_SUPER_MAGIC {
        let v1 = fs.f_type == libc::CGROUP_SUPER_MAGIC;
        return Err(format!(
            "'{s}' is {}, not a cgroup v2 directory (the tools filter by cgroup v2; \
             its hierarchy is mounted where `mount -t cgroup2` shows)",
            if v1 {
                "a cgroup v1 directory"
            } else {
                "not on a cgroup file system"
            }
        ));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_that_cannot_match_are_refused() {
        let v4: IpAddr = "10.0.0.1".parse().unwrap();
        let v6: IpAddr = "::1".parse().unwrap();
        let err = |f: FamilyArgs, addrs: &[(&str, Option<IpAddr>)]| {
            f.check_addresses(addrs).map_err(|e| e.to_string()).err()
        };
        let six = FamilyArgs {
            ipv4: false,
            ipv6: true,
        };
        assert_eq!(
            err(six.clone(), &[("-a", Some(v4)), ("-A", None)]).as_deref(),
            Some("-a 10.0.0.1 is an IPv4 address: it cannot match with -6/--ipv6")
        );
        assert_eq!(err(six, &[("-a", Some(v6))]), None);
        assert_eq!(
            err(FamilyArgs::default(), &[("-a", Some(v4)), ("-A", Some(v6))]).as_deref(),
            Some("-a 10.0.0.1 and -A ::1 are of different families: no connection has both")
        );
        assert_eq!(
            err(FamilyArgs::default(), &[("-a", None), ("-A", Some(v6))]),
            None
        );
    }

    #[test]
    fn cgroup_paths_must_be_cgroup_v2() {
        assert!(cgroup_path("/tmp")
            .unwrap_err()
            .contains("not on a cgroup file system"));
        assert!(cgroup_path("/no/such/dir").is_err());
        // Where the machine mounts a cgroup v1 hierarchy (hybrid), it is named.
        if let Some(v1) = cgroup_mount("cgroup") {
            let err = cgroup_path(&v1).unwrap_err();
            assert!(err.contains("cgroup v1 directory"), "{err}");
        }
        if let Some(v2) = cgroup_mount("cgroup2") {
            assert_eq!(cgroup_path(&v2), Ok(PathBuf::from(&v2)));
        }
    }

    fn cgroup_mount(fstype: &str) -> Option<String> {
        crate::kernel::cgroups::mount_of(fstype).map(|p| p.display().to_string())
    }

    #[test]
    fn id_lists_accept_commas_and_reject_junk() {
        assert_eq!(id_list("1"), Ok(IdList(vec![1])));
        assert_eq!(id_list("12, 34,56"), Ok(IdList(vec![12, 34, 56])));
        assert!(id_list("notapid").unwrap_err().contains("notapid"));
        assert!(id_list("0").is_err());
        assert!(id_list("1,").is_err());
        assert!(id_list("-3").is_err());
        assert!(id_list("4294967295").is_err());
        assert!(id("1,2").is_err());
    }

    #[test]
    fn port_lists_take_ports_only() {
        assert_eq!(port_list("80, 443"), Ok(PortList(vec![80, 443])));
        assert!(port_list("0").is_err());
        assert!(port_list("65536").unwrap_err().contains("65536"));
        assert!(port_list("http").is_err());
    }

    #[test]
    fn uids_are_numbers_or_user_names() {
        assert_eq!(uid("1000"), Ok(1000));
        assert_eq!(uid("root"), Ok(0));
        assert!(uid("no-such-user-xyz")
            .unwrap_err()
            .contains("no-such-user-xyz"));
    }

    #[test]
    fn intervals_must_be_positive() {
        assert_eq!(positive_u64("5"), Ok(5));
        assert!(positive_u64("0").is_err());
        assert!(positive_u64("-1").is_err());
        assert!(positive_u64("x").is_err());
        assert_eq!(seconds("60"), Ok(60));
        assert!(seconds("18446744073709551615").is_err());
        assert!(seconds(&(MAX_SECONDS + 1).to_string()).is_err());
    }
}
