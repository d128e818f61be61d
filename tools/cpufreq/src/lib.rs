//! cpufreq: the CPUs' frequency while tasks run, sampled: linear
//! histograms (200 MHz slots) of the whole machine and of each process
//! (libbpf-tools' cpufreq). The frequency is the kernel's, as its cpufreq
//! driver sets it: where the machine has none (virtual machines, this
//! project's CI), it says so in one line and ends.

mod info;

use std::os::fd::AsFd;
use std::time::Duration;

use anyhow::{anyhow, Result};
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, HistogramArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::perf::{self, Counter, Rate, Sampler};
use common::kernel::probe::{self, Hook};
use common::kinds::histogram::{self, Layout, Unit};
use common::output::{c_bytes, hist};
use common::run::lifecycle::{self, Schedule, Setup, SkelOf, Tool};
use libbpf_rs::skel::Skel;
use libbpf_rs::{Link, MapCore, MapFlags};
use serde_json::{Map, Value};

common::skeleton!("cpufreq");
use skel::{types, CpufreqSkelBuilder, OpenCpufreqSkel};

// SAFETY: repr(C) structs of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::freq_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::hist {}

const EXAMPLES: &str = "\
EXAMPLES:
    cpufreq               # the CPUs' frequency, system-wide and by process
    cpufreq -d 10         # for 10 seconds
    cpufreq -f 99         # sample at 99 Hz
    cpufreq -P            # by process id too
    cpufreq 5 3           # every 5 seconds, 3 times
    cpufreq -p 181        # only while process 181 runs
    cpufreq --json | jq .";

/// The stand-in where there is no cpufreq driver, for tests: every CPU at
/// this many MHz (said on stderr).
const STANDIN_ENV: &str = "BPFTOOLS_CPUFREQ_STANDIN_MHZ";

/// The histograms' slot width, as libbpf-tools' cpufreq.
const STEP_MHZ: u32 = 200;

/// Sample the CPUs' frequency, system-wide and by process.
#[derive(Parser, Debug)]
#[command(name = "cpufreq", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Sample for this many seconds, then report and end
    #[arg(short = 'd', long, value_name = "SECONDS", value_parser = cli::seconds)]
    duration: Option<u64>,
    /// Samples a second on each CPU
    #[arg(short = 'f', long, value_name = "HZ", default_value_t = 50,
          value_parser = clap::value_parser!(u64).range(1..))]
    frequency: u64,
    /// A histogram per process id (and name), not per name
    #[arg(short = 'P', long)]
    per_pid: bool,
    /// Include a timestamp before each report
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Only these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    hist: HistogramArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Cpufreq>();

/// Each possible CPU's frequency in MHz as its cpufreq driver reports it
/// (scaling_cur_freq), or the stand-in; None where no CPU has a driver.
fn starting_mhz(cpus: &[u32]) -> Option<Vec<(u32, u32)>> {
    if let Some(mhz) = std::env::var(STANDIN_ENV).ok().and_then(|v| v.parse().ok()) {
        return Some(cpus.iter().map(|&c| (c, mhz)).collect());
    }
    let known: Vec<(u32, u32)> = cpus
        .iter()
        .filter_map(|&c| {
            let path = format!("/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_cur_freq");
            let khz: u32 = std::fs::read_to_string(path).ok()?.trim().parse().ok()?;
            Some((c, khz / 1000))
        })
        .collect();
    (!known.is_empty()).then_some(known)
}

/// True where the kernel knows the CPUs' frequency: where cpufreq runs.
pub fn hooks_present() -> bool {
    std::path::Path::new("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq").exists()
}

pub(crate) struct Cpufreq {
    args: Args,
    hook: Hook,
    sampler: Option<Sampler>,
    containers: histogram::Containers,
}

impl Tool for Cpufreq {
    common::tool_types!(CpufreqSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        Rate::Frequency(args.frequency).check("-f")?;
        Ok(Cpufreq {
            args,
            hook: Hook::TpBtf,
            sampler: None,
            containers: histogram::Containers::default(),
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenCpufreqSkel<'_>, _: &Setup) -> Result<()> {
        self.hook = probe::btf_tracepoint_exists("cpu_frequency")
            .then(|| probe::pick(&[Hook::TpBtf, Hook::RawTp]))
            .flatten()
            .ok_or_else(|| {
                anyhow!("cpufreq needs tp_btf or raw_tp programs on power:cpu_frequency (with BTF)")
            })?;
        let p = &mut open.progs;
        probe::load_when(self.hook == Hook::TpBtf, [&mut p.cf_btf_change]);
        probe::load_when(self.hook == Hook::RawTp, [&mut p.cf_raw_change]);
        let cpus = perf::possible_cpus()?;
        let slots = cpus.iter().max().map_or(1, |m| m + 1);
        open.maps.freqs_mhz.set_max_entries(slots)?;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.step_mhz = STEP_MHZ;
        rodata.per_pid = self.args.per_pid;
        rodata.by_cgroup = self.args.hist.per_container;
        Ok(())
    }

    fn hook_notes(&self) -> Vec<String> {
        vec![Rate::Frequency(self.args.frequency).hook(Counter::CpuClock, None)]
    }

    /// Each CPU's frequency now, then the samples; the frequency's changes
    /// come from the tracepoint. Checked only here: a dry run loads the
    /// programs on a machine without a driver too.
    fn attach(&mut self, skel: &mut SkelOf<'_, Self>) -> Result<Vec<Link>> {
        let cpus = perf::possible_cpus()?;
        let start = starting_mhz(&cpus).ok_or_else(|| {
            anyhow!(
                "cpufreq needs a cpufreq driver to know the CPUs' frequency, and this machine \
                 has none (no /sys/devices/system/cpu/cpu0/cpufreq: a virtual machine, or no \
                 driver loaded)"
            )
        })?;
        if std::env::var_os(STANDIN_ENV).is_some() {
            common::note!(
                "{STANDIN_ENV}: every CPU taken to run at {} MHz",
                start[0].1
            );
        }
        // The tracepoint first, so that no change falls between the read
        // and it.
        let links = lifecycle::attach_all(skel.object())?;
        for (cpu, mhz) in start {
            skel.maps
                .freqs_mhz
                .update(&cpu.to_ne_bytes(), &mhz.to_ne_bytes(), MapFlags::ANY)?;
        }
        self.sampler = Some(Sampler::start(
            Counter::CpuClock,
            Rate::Frequency(self.args.frequency),
            None,
            skel.progs.cf_sample.as_fd(),
        )?);
        Ok(links)
    }

    fn idle(&mut self) -> bool {
        if let Some(s) = &mut self.sampler {
            s.watch(self.args.common.verbose);
        }
        false
    }

    fn detached(&mut self) {
        if let Some(s) = &mut self.sampler {
            s.stop();
        }
    }

    fn banner(&self) -> lifecycle::Banner {
        lifecycle::Banner::Note("Sampling CPU freq system-wide & by process. Ctrl-C to end.".into())
    }

    fn schedule(&self) -> Schedule {
        let mut s = Schedule::from(&self.args.hist.interval);
        s.duration = self.args.duration.map(Duration::from_secs);
        s
    }

    fn histograms(&self) -> Option<histogram::Spec<'_>> {
        Some(histogram::Spec {
            args: &self.args.hist,
            json: self.args.common.json,
            what: "cpufreq, CPU frequency",
            metric: "cpufreq_cpu_frequency",
            help: "CPU frequency while tasks run, sampled",
            unit: Unit::Mhz,
            timestamp: self.args.timestamp,
            extension: false,
            layout: Layout::Linear {
                label: "MHZ",
                step: STEP_MHZ as u64,
            },
        })
    }

    /// The machine's histogram, then each process's, the most sampled
    /// first.
    fn sections(&self, skel: &SkelOf<'_, Self>, drain: bool) -> Result<Vec<hist::Section>> {
        let mut entries: Vec<histogram::Entry<types::freq_key, types::hist, u8>> =
            histogram::read_maps(&skel.maps.hists, None, drain, |k: &types::freq_key| {
                (std::cmp::Reverse(k.machine), k.pid, k.comm, k.cgroup_id)
            })?;
        // The machine's first, then by samples (a stable sort: ties stay
        // in the key order read_maps gave them).
        entries.sort_by_key(|e| {
            (
                std::cmp::Reverse(e.key.machine),
                std::cmp::Reverse(e.hist.count),
            )
        });
        Ok(entries
            .iter()
            .map(|e| {
                let (k, h) = (&e.key, &e.hist);
                let mut labels = Map::new();
                let title = if k.machine != 0 {
                    labels.insert("scope".into(), "machine".into());
                    "syswide".to_string()
                } else {
                    // JSON takes the name as it is (serde escapes it); the
                    // text's title escapes control characters, as every
                    // tool's text does.
                    let raw = c_bytes(&k.comm);
                    let comm = common::output::escape(raw);
                    labels.insert("scope".into(), "process".into());
                    labels.insert(
                        "comm".into(),
                        Value::from(String::from_utf8_lossy(raw).into_owned()),
                    );
                    let mut title = format!("comm = {comm}");
                    if self.args.per_pid {
                        labels.insert("pid".into(), Value::from(k.pid));
                        title = format!("pid = {} {comm}", k.pid);
                    }
                    if self.args.hist.per_container {
                        let c = self.containers.label(k.cgroup_id, &mut labels);
                        title = format!("{c} {title}");
                    }
                    title
                };
                hist::Section {
                    title: Some(title),
                    labels,
                    slots: h.slots.to_vec(),
                    count: h.count,
                    total: h.total,
                    ..Default::default()
                }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse_as_libbpf_tools_takes_them() {
        let a = Args::try_parse_from(["cpufreq", "-d", "10", "-f", "99", "-P"]).unwrap();
        assert_eq!((a.duration, a.frequency, a.per_pid), (Some(10), 99, true));
        for bad in [
            &["cpufreq", "-f", "0"][..],
            &["cpufreq", "-d", "0"],
            &["cpufreq", "-p", "x"],
            &["cpufreq", "0"],
        ] {
            assert!(Args::try_parse_from(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_stand_in_frequency_is_every_cpus() {
        std::env::set_var(STANDIN_ENV, "1800");
        assert_eq!(starting_mhz(&[0, 3]), Some(vec![(0, 1800), (3, 1800)]));
        std::env::remove_var(STANDIN_ENV);
    }
}
