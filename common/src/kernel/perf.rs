//! Sampling perf events that run a BPF program on each sample: one event
//! per CPU, on the hardware cycles counter where the machine has a PMU,
//! else the software CPU clock. CPUs that come online while a tool runs
//! (or go offline and come back, which leaves their old event dead) get a
//! new event at the next [`Sampler::check`].

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use libbpf_rs::libbpf_sys as sys;

/// What the events count: a sample every N of it, or F times a second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    /// CPU cycles (a hardware PMU).
    Cycles,
    /// The software CPU clock (nanoseconds of a CPU's time).
    CpuClock,
    /// Last-level cache references and misses (a hardware PMU; llcstat).
    CacheReferences,
    CacheMisses,
    /// Page faults (software; llcstat's stand-in for misses where there
    /// is no PMU, in its tests).
    PageFaults,
}

impl Counter {
    /// perf's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Counter::Cycles => "cycles",
            Counter::CpuClock => "cpu-clock",
            Counter::CacheReferences => "cache-references",
            Counter::CacheMisses => "cache-misses",
            Counter::PageFaults => "page-faults",
        }
    }

    /// Counted by the machine's PMU, not by the kernel.
    pub fn hardware(self) -> bool {
        matches!(
            self,
            Counter::Cycles | Counter::CacheReferences | Counter::CacheMisses
        )
    }
}

/// How often a sample is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rate {
    /// Samples per second on each CPU (-F).
    Frequency(u64),
    /// One sample every this many events (-c).
    Period(u64),
}

impl Rate {
    /// A frequency above the kernel's limit (kernel.perf_event_max_sample_rate)
    /// is a usage error here naming `option` (profile's -F, runqlen's -f),
    /// not EINVAL from the first event opened.
    pub fn check(self, option: &str) -> Result<()> {
        if let Rate::Frequency(f) = self {
            let max = std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok());
            if let Some(max) = max.filter(|m| f > *m) {
                return Err(crate::usage::usage(format!(
                    "{option} {f} is above the kernel's limit of {max} samples a second \
                     (kernel.perf_event_max_sample_rate)"
                )));
            }
        }
        Ok(())
    }

    /// The sampling as `--dry-run` and `-v` list it with the hooks:
    /// `perf_event cpu-clock (software: ...) at 49 Hz on every online CPU`.
    pub fn hook(self, counter: Counter, cpu: Option<u32>) -> String {
        let why = match counter {
            Counter::CpuClock => "software: no hardware PMU answered",
            c if c.hardware() => "hardware",
            _ => "software",
        };
        let rate = match self {
            Rate::Frequency(f) => format!("{f} Hz"),
            Rate::Period(n) => format!("every {n} events"),
        };
        let cpus = match cpu {
            Some(c) => format!("CPU {c}"),
            None => "every online CPU".into(),
        };
        format!("perf_event {} ({why}) at {rate} on {cpus}", counter.name())
    }

    /// The CPU time one sample stands for, where it is known: at a
    /// frequency, 1/F s; every N ticks of the CPU clock, N ns; every N
    /// cycles, unknown.
    pub fn ns_per_sample(self, counter: Counter) -> Option<u64> {
        match (self, counter) {
            (Rate::Frequency(f), _) => Some(1_000_000_000 / f.max(1)),
            (Rate::Period(n), Counter::CpuClock) => Some(n),
            (Rate::Period(_), _) => None,
        }
    }
}

fn attr(counter: Counter, rate: Rate) -> sys::perf_event_attr {
    let mut a = sys::perf_event_attr {
        size: std::mem::size_of::<sys::perf_event_attr>() as u32,
        ..Default::default()
    };
    match counter {
        Counter::Cycles => {
            a.type_ = sys::PERF_TYPE_HARDWARE;
            a.config = sys::PERF_COUNT_HW_CPU_CYCLES as u64;
        }
        Counter::CpuClock => {
            a.type_ = sys::PERF_TYPE_SOFTWARE;
            a.config = sys::PERF_COUNT_SW_CPU_CLOCK as u64;
        }
        Counter::CacheReferences => {
            a.type_ = sys::PERF_TYPE_HARDWARE;
            a.config = sys::PERF_COUNT_HW_CACHE_REFERENCES as u64;
        }
        Counter::CacheMisses => {
            a.type_ = sys::PERF_TYPE_HARDWARE;
            a.config = sys::PERF_COUNT_HW_CACHE_MISSES as u64;
        }
        Counter::PageFaults => {
            a.type_ = sys::PERF_TYPE_SOFTWARE;
            a.config = sys::PERF_COUNT_SW_PAGE_FAULTS as u64;
        }
    }
    match rate {
        Rate::Frequency(f) => {
            a.set_freq(1);
            a.__bindgen_anon_1.sample_freq = f;
        }
        Rate::Period(n) => a.__bindgen_anon_1.sample_period = n,
    }
    // Enabled once the program is set.
    a.set_disabled(1);
    // Dead events (their CPU went offline) are found by this not moving.
    a.read_format = sys::PERF_FORMAT_TOTAL_TIME_ENABLED as u64;
    a
}

/// perf_event_open(2) for all tasks on `cpu`.
fn open(counter: Counter, rate: Rate, cpu: u32) -> std::io::Result<OwnedFd> {
    event_open(&attr(counter, rate), cpu)
}

/// perf_event_open(2) of `a` (its size set) for all tasks on `cpu`.
pub(crate) fn event_open(a: &sys::perf_event_attr, cpu: u32) -> std::io::Result<OwnedFd> {
    // SAFETY: `a` is a valid perf_event_attr with its size set; the kernel
    // reads it during the call only.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            a as *const sys::perf_event_attr,
            -1 as libc::pid_t,
            cpu as libc::c_int,
            -1 as libc::c_int,
            sys::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel returned a new descriptor, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

// _IO('$', 0), _IOW('$', 8, __u32).
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
const PERF_EVENT_IOC_SET_BPF: libc::c_ulong = 0x4004_2408;

fn ioctl(fd: &OwnedFd, request: libc::c_ulong, arg: libc::c_int) -> std::io::Result<()> {
    // SAFETY: both requests take an int argument (or none); fd is open.
    if unsafe { libc::ioctl(fd.as_raw_fd(), request as _, arg) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The counter this machine samples with: cycles where a PMU answers, the
/// CPU clock where none does (virtual machines, this project's CI).
pub fn choose_counter(rate: Rate) -> Counter {
    let cpu = online_cpus()
        .ok()
        .and_then(|c| c.first().copied())
        .unwrap_or(0);
    match open(Counter::Cycles, rate, cpu) {
        Ok(_) => Counter::Cycles,
        Err(_) => Counter::CpuClock,
    }
}

/// Why `counter` cannot be counted here (no PMU, or none that counts it),
/// from opening it on the first online CPU; None where it can.
pub fn unavailable(counter: Counter) -> Option<std::io::Error> {
    let cpu = online_cpus()
        .ok()
        .and_then(|c| c.first().copied())
        .unwrap_or(0);
    open(counter, Rate::Period(1_000_000), cpu).err()
}

/// Parses a CPU list as sysfs writes it (`0-3,8,10-11`).
pub fn parse_cpu_list(s: &str) -> Result<Vec<u32>> {
    let mut cpus = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u32, u32) = (
            a.parse().with_context(|| format!("CPU list '{s}'"))?,
            b.parse().with_context(|| format!("CPU list '{s}'"))?,
        );
        cpus.extend(a..=b);
    }
    Ok(cpus)
}

fn cpu_list(file: &str) -> Result<Vec<u32>> {
    let path = format!("/sys/devices/system/cpu/{file}");
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    parse_cpu_list(&text)
}

/// The CPUs online now.
pub fn online_cpus() -> Result<Vec<u32>> {
    cpu_list("online")
}

/// Every CPU this machine may bring online.
pub fn possible_cpus() -> Result<Vec<u32>> {
    cpu_list("possible")
}

struct CpuEvent {
    fd: OwnedFd,
    /// Its enabled time at the last check: an event whose CPU went away
    /// stops counting it.
    enabled_ns: u64,
}

impl CpuEvent {
    /// The event's enabled time; None when it is dead (read fails or
    /// returns nothing: the error state).
    fn enabled_ns(&self) -> Option<u64> {
        let mut buf = [0u8; 16];
        // SAFETY: fd stays open while `self` lives; the File is forgotten
        // before it could close it.
        let mut f = unsafe { File::from_raw_fd(self.fd.as_raw_fd()) };
        let n = f.read(&mut buf);
        std::mem::forget(f);
        match n {
            Ok(16) => buf[8..16].try_into().ok().map(u64::from_ne_bytes),
            _ => None,
        }
    }
}

/// One sampling event per wanted CPU, each running the program.
pub struct Sampler {
    counter: Counter,
    rate: Rate,
    /// -C: these CPUs only; else all.
    only: Option<Vec<u32>>,
    prog: OwnedFd,
    events: BTreeMap<u32, CpuEvent>,
    checked: Instant,
}

/// How often [`Sampler::check`] looks at the CPUs.
const CHECK_EVERY: Duration = Duration::from_secs(1);

impl Sampler {
    /// Opens and enables an event on every online CPU of `only` (all when
    /// None), each running `prog`. A wanted CPU that is offline is said
    /// and sampled once it comes online.
    pub fn start(
        counter: Counter,
        rate: Rate,
        only: Option<Vec<u32>>,
        prog: BorrowedFd<'_>,
    ) -> Result<Sampler> {
        let mut s = Sampler {
            counter,
            rate,
            only,
            prog: prog
                .try_clone_to_owned()
                .context("keeping the sampling program")?,
            events: BTreeMap::new(),
            checked: Instant::now(),
        };
        let online = online_cpus()?;
        if let Some(only) = &s.only {
            for cpu in only.iter().filter(|c| !online.contains(c)) {
                crate::note!("CPU {cpu} is offline: it is sampled once it comes online");
            }
        }
        let wanted: Vec<u32> = online.into_iter().filter(|c| s.wanted(*c)).collect();
        for cpu in wanted {
            s.open_cpu(cpu)?;
        }
        if s.events.is_empty() && s.only.is_none() {
            bail!("no CPU is online to sample");
        }
        Ok(s)
    }

    fn wanted(&self, cpu: u32) -> bool {
        self.only.as_ref().is_none_or(|o| o.contains(&cpu))
    }

    fn open_cpu(&mut self, cpu: u32) -> Result<()> {
        let what = || format!("a {} event on CPU {cpu}", self.counter.name());
        let fd = match open(self.counter, self.rate, cpu) {
            Ok(fd) => fd,
            // It went offline since the list was read.
            Err(e) if e.raw_os_error() == Some(libc::ENODEV) => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                return Err(e).with_context(|| {
                    format!(
                    "opening {} (the sampling rate may be above kernel.perf_event_max_sample_rate)",
                    what()
                )
                })
            }
            Err(e) => return Err(e).with_context(|| format!("opening {}", what())),
        };
        ioctl(&fd, PERF_EVENT_IOC_SET_BPF, self.prog.as_raw_fd())
            .with_context(|| format!("attaching the program to {}", what()))?;
        ioctl(&fd, PERF_EVENT_IOC_ENABLE, 0).with_context(|| format!("enabling {}", what()))?;
        let mut e = CpuEvent { fd, enabled_ns: 0 };
        e.enabled_ns = e.enabled_ns().unwrap_or(0);
        self.events.insert(cpu, e);
        Ok(())
    }

    /// The CPUs sampled now.
    pub fn cpus(&self) -> Vec<u32> {
        self.events.keys().copied().collect()
    }

    /// At most once a second: opens events for wanted CPUs that came
    /// online, reopens those whose event died (the CPU went offline and
    /// came back between two looks), closes those of offline CPUs. Returns
    /// what changed, for the verbose log.
    pub fn check(&mut self) -> Result<Vec<String>> {
        if self.checked.elapsed() < CHECK_EVERY {
            return Ok(Vec::new());
        }
        self.checked = Instant::now();
        let online = online_cpus()?;
        let mut changes = Vec::new();
        let gone: Vec<u32> = self
            .events
            .keys()
            .copied()
            .filter(|c| !online.contains(c))
            .collect();
        for cpu in gone {
            self.events.remove(&cpu);
            changes.push(format!("CPU {cpu} went offline"));
        }
        let wanted: Vec<u32> = online.into_iter().filter(|c| self.wanted(*c)).collect();
        for cpu in wanted {
            let alive = match self.events.get_mut(&cpu) {
                None => None,
                Some(e) => match e.enabled_ns() {
                    Some(t) if t > e.enabled_ns => {
                        e.enabled_ns = t;
                        Some(true)
                    }
                    _ => Some(false),
                },
            };
            match alive {
                Some(true) => {}
                Some(false) => {
                    self.events.remove(&cpu);
                    self.open_cpu(cpu)?;
                    changes.push(format!("CPU {cpu} came back online: sampling it again"));
                }
                None => {
                    self.open_cpu(cpu)?;
                    changes.push(format!("CPU {cpu} came online: sampling it"));
                }
            }
        }
        Ok(changes)
    }

    /// [`Sampler::check`] from the loop: the changes said with `verbose`,
    /// a failure always (sampling goes on on the CPUs it has).
    pub fn watch(&mut self, verbose: bool) {
        match self.check() {
            Ok(changes) if verbose => {
                for c in changes {
                    crate::note!("{c}");
                }
            }
            Ok(_) => {}
            Err(e) => crate::note!("watching CPUs come and go: {e:#}"),
        }
    }

    /// Closes every event: no sample after this.
    pub fn stop(&mut self) {
        self.events.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_as_sysfs_writes_them() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11\n").unwrap(),
            [0, 1, 2, 3, 8, 10, 11]
        );
        assert_eq!(parse_cpu_list("0\n").unwrap(), [0]);
        assert!(parse_cpu_list("0-x").is_err());
    }

    #[test]
    fn a_sample_stands_for_its_period() {
        assert_eq!(
            Rate::Frequency(49).ns_per_sample(Counter::CpuClock),
            Some(20_408_163)
        );
        assert_eq!(
            Rate::Period(1000).ns_per_sample(Counter::CpuClock),
            Some(1000)
        );
        assert_eq!(Rate::Period(1000).ns_per_sample(Counter::Cycles), None);
    }
}
