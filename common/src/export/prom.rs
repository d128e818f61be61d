//! Prometheus metrics from the in-kernel aggregates: `--prometheus ADDR`
//! serves them at `/metrics` (read from the kernel at scrape time), and
//! `--prom-file PATH` writes them each interval for node_exporter's
//! textfile collector (atomically: a temporary file renamed over PATH).
//! The exposition format is prometheus-client's, never hand-written.
//!
//! Histograms are cumulative since the tool started, in seconds. BCC's log2
//! slot i holds the integer values 2^i to 2^(i+1)-1 of the tool's unit,
//! measured by truncating (a 3.9 us wait counts as 3): every value in it is
//! below 2^(i+1) units, which is the slot's `le` bound (slot 0 holds 0 and
//! 1: le 2 units). Hence no value is ever counted under a bound it exceeds.
//! A linear slot i of width w holds the values i·w to (i+1)·w-1, its `le`;
//! the last holds every value beyond, so its bound is +Inf.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use anyhow::{Context, Result};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit as MetricUnit};
use serde_json::Value;

use crate::output::file::OutFile;
use crate::output::hist::{Section, Unit};

/// One labelled histogram, cumulative.
#[derive(Debug, Clone, Default)]
struct Series {
    slots: Vec<u64>,
    count: u64,
    /// In the tool's unit.
    sum: u64,
}

/// A histogram metric's series by label set, cumulative since the start.
#[derive(Debug, Clone)]
pub struct Histograms {
    name: &'static str,
    help: &'static str,
    /// What the kernel counts; its values are divided by the units per
    /// base unit (1e6 usecs per second), which keeps decimal values exact
    /// where multiplying by 1e-6 would not.
    unit: Unit,
    /// Linear slots this wide, else log2 ones.
    linear_step: Option<u64>,
    series: BTreeMap<Vec<(String, String)>, Series>,
}

impl Histograms {
    /// Histograms of times, in seconds, or of sizes (Kbytes), in bytes.
    pub fn new(name: &'static str, help: &'static str, unit: Unit) -> Histograms {
        Histograms {
            name,
            help,
            unit,
            linear_step: None,
            series: BTreeMap::new(),
        }
    }

    /// Of linear slots `step` wide (runqlen's, cpufreq's), not log2 ones.
    pub fn linear(mut self, step: u64) -> Histograms {
        self.linear_step = Some(step);
        self
    }

    /// Slot `i`'s upper bound (`le`) in base units, of `n` slots.
    fn bound(&self, i: usize, n: usize) -> f64 {
        let units = match self.linear_step {
            Some(_) if i + 1 == n => return f64::MAX,
            Some(step) => (i as u64 + 1) * step - 1,
            None => 1u64 << (i + 1),
        };
        units as f64 / self.unit.per_base()
    }

    /// Adds histograms drained from the kernel (one interval's).
    pub fn add(&mut self, sections: &[Section]) {
        for s in sections {
            let labels = s
                .labels
                .iter()
                .map(|(k, v)| {
                    let v = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), v)
                })
                .collect();
            let series = self.series.entry(labels).or_default();
            if series.slots.len() < s.slots.len() {
                series.slots.resize(s.slots.len(), 0);
            }
            for (total, &c) in series.slots.iter_mut().zip(&s.slots) {
                *total += u64::from(c);
            }
            series.count += s.count;
            series.sum += s.total;
        }
    }

    /// The metrics in Prometheus's text format.
    pub fn encode(&self) -> Result<String> {
        encode(self.clone())
    }
}

impl Collector for Histograms {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        let hertz = MetricUnit::Other("hertz".into());
        let mut family = encoder.encode_descriptor(
            self.name,
            self.help,
            match self.unit {
                Unit::Kbytes => Some(&MetricUnit::Bytes),
                Unit::Nsecs | Unit::Usecs | Unit::Msecs => Some(&MetricUnit::Seconds),
                Unit::Mhz => Some(&hertz),
                Unit::Tasks | Unit::Backlog => None,
            },
            MetricType::Histogram,
        )?;
        for (labels, s) in &self.series {
            let n = s.slots.len();
            let mut buckets: Vec<(f64, u64)> = s
                .slots
                .iter()
                .enumerate()
                .map(|(i, &c)| (self.bound(i, n), c))
                .collect();
            if self.linear_step.is_none() {
                buckets.push((f64::MAX, 0));
            }
            family
                .encode_family(labels)?
                .encode_histogram::<NoLabelSet>(
                    s.sum as f64 / self.unit.per_base(),
                    s.count,
                    &buckets,
                    None,
                )?;
        }
        Ok(())
    }
}

/// Writes `text` to `path` whole (a file atomically: a reader sees the old
/// file or the new one, never half of one).
pub fn write_file(path: &OutFile, text: &str) -> Result<()> {
    path.write(text.as_bytes())
        .with_context(|| format!("--prom-file: writing {}", path.display()))
}

/// `--prometheus`'s listening socket; the tool's loop waits on it too.
pub struct Server {
    listener: TcpListener,
}

impl Server {
    /// Listens on `addr`: `HOST:PORT`, `[V6]:PORT`, or `:PORT` for every
    /// address, IPv4 and IPv6 (one dual-stack socket; IPv4 alone where the
    /// kernel has no IPv6).
    pub fn bind(addr: &str) -> Result<Server> {
        let bad = || {
            crate::usage::usage(format!(
                "--prometheus {}: not HOST:PORT or :PORT",
                crate::output::escape(addr.as_bytes())
            ))
        };
        let listener = match addr.strip_prefix(':') {
            Some(port) => {
                let port: u16 = port.parse().map_err(|_| bad())?;
                match dual_stack(port) {
                    Ok(l) => l,
                    Err(_) => TcpListener::bind(SocketAddr::from(([0, 0, 0, 0], port)))
                        .with_context(|| format!("--prometheus: listening on port {port}"))?,
                }
            }
            None => {
                let sock: SocketAddr = addr.parse().map_err(|_| bad())?;
                TcpListener::bind(sock)
                    .with_context(|| format!("--prometheus: listening on {sock}"))?
            }
        };
        listener.set_nonblocking(true)?;
        Ok(Server { listener })
    }

    pub fn fd(&self) -> RawFd {
        self.listener.as_raw_fd()
    }

    /// Answers the connections waiting, each with `metrics()` for GET
    /// /metrics (read when asked), 404 otherwise.
    pub fn serve(&self, mut metrics: impl FnMut() -> Result<String>) -> Result<()> {
        while let Ok((stream, _)) = self.listener.accept() {
            // A client that stalls costs the loop a second at most.
            let _ = answer(stream, &mut metrics);
        }
        Ok(())
    }
}

/// A socket on every IPv6 and IPv4 address (IPV6_V6ONLY off, whatever
/// the system's default).
fn dual_stack(port: u16) -> std::io::Result<TcpListener> {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::IPV6, Type::STREAM, None)?;
    socket.set_only_v6(false)?;
    socket.set_reuse_address(true)?;
    socket.bind(&SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, port)).into())?;
    socket.listen(128)?;
    Ok(socket.into())
}

/// Where the metrics go: `--prometheus`'s socket, `--prom-file`'s file.
pub struct Exporter {
    server: Option<Server>,
    file: Option<OutFile>,
}

impl Exporter {
    pub fn new(server: Option<Server>, file: Option<OutFile>) -> Exporter {
        Exporter { server, file }
    }

    /// After a report: writes --prom-file.
    pub fn reported(&self, text: impl FnOnce() -> Result<String>) -> Result<()> {
        match &self.file {
            Some(path) => write_file(path, &text()?),
            None => Ok(()),
        }
    }

    pub fn fd(&self) -> Option<RawFd> {
        self.server.as_ref().map(Server::fd)
    }

    /// Answers the scrapes waiting with `text()`.
    pub fn serve(&self, text: impl FnMut() -> Result<String>) -> Result<()> {
        match &self.server {
            Some(server) => server.serve(text),
            None => Ok(()),
        }
    }
}

/// --prom-file for an event tool's counters: written at most once a
/// second, when a counter changed, and at exit.
#[derive(Debug, Default)]
pub struct FileThrottle {
    written: Option<std::time::Instant>,
    changed: bool,
}

impl FileThrottle {
    /// A counter changed since the file was written.
    pub fn changed(&mut self) {
        self.changed = true;
    }

    /// Writes the file with `text()` when due, or at once when `force`.
    pub fn write(
        &mut self,
        exporter: &Exporter,
        force: bool,
        text: impl FnOnce() -> Result<String>,
    ) -> Result<()> {
        let due = self
            .written
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1));
        if !(force || (self.changed && due)) {
            return Ok(());
        }
        self.written = Some(std::time::Instant::now());
        self.changed = false;
        exporter.reported(text)
    }
}

/// --prometheus and --prom-file, for a histogram tool: the histograms of
/// the reports so far; the scrapes add what the kernel holds since.
pub struct Metrics {
    histograms: Histograms,
    exporter: Option<Exporter>,
}

impl Metrics {
    pub fn new(histograms: Histograms, exporter: Option<Exporter>) -> Metrics {
        Metrics {
            histograms,
            exporter,
        }
    }

    /// After a report: adds its (drained) histograms, writes --prom-file.
    pub fn reported(&mut self, sections: &[Section]) -> Result<()> {
        let Some(exporter) = &self.exporter else {
            return Ok(());
        };
        self.histograms.add(sections);
        exporter.reported(|| self.histograms.encode())
    }

    pub fn fd(&self) -> Option<RawFd> {
        self.exporter.as_ref().and_then(Exporter::fd)
    }

    /// Answers the scrapes waiting: the reports' histograms plus `current`
    /// (what the kernel holds, read and left in place).
    pub fn serve(&self, mut current: impl FnMut() -> Result<Vec<Section>>) -> Result<()> {
        let Some(exporter) = &self.exporter else {
            return Ok(());
        };
        exporter.serve(|| {
            let mut snapshot = self.histograms.clone();
            snapshot.add(&current()?);
            snapshot.encode()
        })
    }
}

/// Counter families (`<name>_total`): name, help, and each series' labels
/// (none for a lone counter) and value.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    #[allow(clippy::type_complexity)]
    pub families: Vec<(
        &'static str,
        &'static str,
        Vec<(Vec<(String, String)>, u64)>,
    )>,
}

impl Counters {
    pub fn encode(&self) -> Result<String> {
        encode(self.clone())
    }
}

impl Collector for Counters {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        for (name, help, series) in &self.families {
            let mut family = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
            for (labels, value) in series {
                ConstCounter::new(*value).encode(family.encode_family(labels)?)?;
            }
        }
        Ok(())
    }
}

/// A collector's metrics in Prometheus's text format.
fn encode(collector: impl Collector) -> Result<String> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(collector));
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry)
        .context("encoding the metrics")?;
    Ok(text)
}

fn answer(mut stream: TcpStream, metrics: &mut impl FnMut() -> Result<String>) -> Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(1)))?;
    stream.set_write_timeout(Some(Duration::from_secs(1)))?;
    let mut request = Vec::new();
    let mut buf = [0u8; 2048];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < 16384 {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        request.extend_from_slice(&buf[..n]);
    }
    let line = request.split(|&b| b == b'\r').next().unwrap_or_default();
    let mut parts = line.split(|&b| b == b' ');
    let (method, target) = (parts.next(), parts.next());
    let path = target.map(|t| t.split(|&b| b == b'?').next().unwrap_or_default());
    let (status, kind, body) = if method == Some(b"GET") && path == Some(b"/metrics") {
        match metrics() {
            Ok(text) => (
                "200 OK",
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
                text,
            ),
            Err(e) => (
                "500 Internal Server Error",
                "text/plain",
                format!("{e:#}\n"),
            ),
        }
    } else {
        (
            "404 Not Found",
            "text/plain",
            "only /metrics is served\n".into(),
        )
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;

    #[test]
    fn log2_slots_become_cumulative_buckets_in_seconds() {
        let mut h = Histograms::new("x_latency", "latency", Unit::Usecs);
        let mut labels = Map::new();
        labels.insert("disk".into(), Value::from("vda"));
        let section = Section {
            labels,
            // slot 0: 0-1 us, slot 1: 2-3 us, slot 3: 8-15 us
            slots: vec![1, 2, 0, 4],
            count: 7,
            total: 50,
            ..Default::default()
        };
        h.add(std::slice::from_ref(&section));
        h.add(&[section]);
        let text = h.encode().unwrap();
        for line in [
            "x_latency_seconds_sum{disk=\"vda\"} 0.0001",
            "x_latency_seconds_count{disk=\"vda\"} 14",
            "x_latency_seconds_bucket{le=\"0.000002\",disk=\"vda\"} 2",
            "x_latency_seconds_bucket{le=\"0.000004\",disk=\"vda\"} 6",
            "x_latency_seconds_bucket{le=\"0.000016\",disk=\"vda\"} 14",
            "x_latency_seconds_bucket{le=\"+Inf\",disk=\"vda\"} 14",
        ] {
            assert!(text.contains(line), "{line} missing:\n{text}");
        }
    }

    #[test]
    fn linear_slots_end_at_their_last_value_and_the_last_at_infinity() {
        // 200 MHz slots: 2400-2599 MHz twice, 2600-2799 once; the last
        // slot (6200 and beyond) once.
        let mut slots = vec![0; 32];
        slots[12] = 2;
        slots[13] = 1;
        slots[31] = 1;
        let mut h = Histograms::new("x_frequency", "frequency", Unit::Mhz).linear(200);
        h.add(&[Section {
            slots,
            count: 4,
            total: 2400 * 2 + 2600 + 7000,
            ..Default::default()
        }]);
        let text = h.encode().unwrap();
        for line in [
            "x_frequency_hertz_bucket{le=\"2599000000.0\"} 2",
            "x_frequency_hertz_bucket{le=\"2799000000.0\"} 3",
            "x_frequency_hertz_bucket{le=\"6199000000.0\"} 3",
            "x_frequency_hertz_bucket{le=\"+Inf\"} 4",
            "x_frequency_hertz_count{} 4",
        ] {
            assert!(text.contains(line), "{line} missing:\n{text}");
        }
        assert_eq!(text.matches("le=\"+Inf\"").count(), 1, "{text}");
        // Queue lengths: slot N is N, without a unit.
        let mut h = Histograms::new("x_length", "length", Unit::Tasks).linear(1);
        h.add(&[Section {
            slots: vec![3, 0, 1, 0],
            count: 4,
            total: 2,
            ..Default::default()
        }]);
        let text = h.encode().unwrap();
        for line in [
            "x_length_bucket{le=\"0.0\"} 3",
            "x_length_bucket{le=\"2.0\"} 4",
        ] {
            assert!(text.contains(line), "{line} missing:\n{text}");
        }
    }
}
