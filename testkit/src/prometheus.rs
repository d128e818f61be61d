//! A real Prometheus server (Debian's `prometheus`) scraping a tool, and
//! what the tests ask it.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// GET http://127.0.0.1:`port``path`: the status line and the body.
pub fn http_get(port: u16, path: &str) -> Option<(String, String)> {
    http_get_at(std::net::Ipv4Addr::LOCALHOST.into(), port, path)
}

/// GET `path` from `ip`:`port`: the status line and the body.
pub fn http_get_at(ip: std::net::IpAddr, port: u16, path: &str) -> Option<(String, String)> {
    let mut s = std::net::TcpStream::connect((ip, port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    Some((head.lines().next()?.to_string(), body.to_string()))
}

/// Scrapes the tool on `port` and lints the scrape with promtool.
pub fn promtool_check(port: u16) {
    let (status, scrape) = http_get(port, "/metrics").expect("scraping the tool");
    assert!(status.contains("200"), "{status}");
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (package prometheus; cargo xtask test installs it)");
    promtool
        .stdin
        .take()
        .unwrap()
        .write_all(scrape.as_bytes())
        .unwrap();
    let lint = promtool.wait_with_output().unwrap();
    assert!(lint.status.success(), "promtool: {lint:?}\n{scrape}");
}

/// Two log2 slots apart at most: `a` and `b` (in the same unit) lie in
/// the same or neighbouring log2 slots.
pub fn assert_same_log2_slot(a: f64, b: f64) {
    assert!(
        (a.max(1.0).log2() - b.max(1.0).log2()).abs() <= 1.0,
        "{a} and {b} are more than one log2 slot apart"
    );
}

/// Prometheus, scraping one target every second; killed on drop.
pub struct Prometheus {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Prometheus {
    pub fn start(target: &str) -> Prometheus {
        let dir = std::env::temp_dir().join(super::unique("prometheus"));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: tool\n    \
                 static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus (package prometheus; cargo xtask test installs it)");
        let deadline = Instant::now() + Duration::from_secs(30);
        while !http_get(port, "/-/ready").is_some_and(|(s, _)| s.contains("200")) {
            assert!(Instant::now() < deadline, "prometheus did not get ready");
            std::thread::sleep(Duration::from_millis(100));
        }
        let prometheus = Prometheus { child, port, dir };
        // Targets are handed to the scrapers some seconds after start:
        // wait for a first successful scrape.
        while prometheus.try_query("up") != Some(1.0) {
            assert!(
                Instant::now() < deadline,
                "prometheus never scraped {target}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        prometheus
    }

    /// An instant PromQL query's single value.
    pub fn query(&self, query: &str) -> f64 {
        self.try_query(query)
            .unwrap_or_else(|| panic!("{query}: no value from prometheus"))
    }

    fn try_query(&self, query: &str) -> Option<f64> {
        let encoded: String = query
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        let (_, body) = http_get(self.port, &format!("/api/v1/query?query={encoded}"))?;
        let v: Value = serde_json::from_str(&body).ok()?;
        v["data"]["result"][0]["value"][1].as_str()?.parse().ok()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
