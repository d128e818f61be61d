//! --prometheus and --prom-file: sessions and their bytes as counters, by
//! role and service port: a server's sessions by its local port, a
//! client's by the remote port it connected to (a client's local port is a
//! new ephemeral one each time: a series each). At most MAX_PORTS ports get
//! series of their own, the rest are counted under `other`.

use std::collections::BTreeMap;

use anyhow::Result;
use common::export::prom::{Counters, Exporter, FileThrottle};

use crate::skel::types;

pub const MAX_PORTS: usize = 500;

#[derive(Debug, Default, Clone, Copy)]
struct Totals {
    sessions: u64,
    tx_bytes: u64,
    rx_bytes: u64,
}

type Ports = BTreeMap<(&'static str, String), Totals>;

#[derive(Default)]
pub struct Sessions {
    /// (role, port) -> totals.
    ports: Ports,
    file: FileThrottle,
}

impl Sessions {
    pub fn add(&mut self, e: &types::event) {
        let (role, port) = if e.active != 0 {
            ("client", e.flow.dport)
        } else {
            ("server", e.flow.lport)
        };
        let mut key = (role, port.to_string());
        if !self.ports.contains_key(&key) && self.ports.len() >= MAX_PORTS {
            key = (role, "other".into());
        }
        let t = self.ports.entry(key).or_default();
        t.sessions += 1;
        t.tx_bytes += e.tx_bytes;
        t.rx_bytes += e.rx_bytes;
        self.file.changed();
    }

    pub fn encode(&self) -> Result<String> {
        encode(&self.ports)
    }

    /// --prom-file, at most once a second, when something changed (and at
    /// exit: `force`).
    pub fn write_file(&mut self, exporter: &Exporter, force: bool) -> Result<()> {
        let ports = &self.ports;
        self.file.write(exporter, force, || encode(ports))
    }
}

fn encode(ports: &Ports) -> Result<String> {
    let series = |value: fn(&Totals) -> u64| {
        ports
            .iter()
            .map(|((role, port), t)| {
                (
                    vec![
                        ("role".to_string(), role.to_string()),
                        ("port".to_string(), port.clone()),
                    ],
                    value(t),
                )
            })
            .collect()
    };
    Counters {
        families: vec![
            (
                "tcplife_sessions",
                "TCP sessions closed, by role (client: connected; server: accepted) and \
                 service port (the server's local port)",
                series(|t| t.sessions),
            ),
            (
                "tcplife_tx_bytes",
                "Bytes sent and acknowledged by the peer in closed TCP sessions",
                series(|t| t.tx_bytes),
            ),
            (
                "tcplife_rx_bytes",
                "Bytes received in closed TCP sessions",
                series(|t| t.rx_bytes),
            ),
        ],
    }
    .encode()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_count_by_service_port_and_bound_the_series() {
        let mut s = Sessions::default();
        let mut e = types::event {
            active: 1,
            tx_bytes: 10,
            rx_bytes: 100,
            ..Default::default()
        };
        for i in 0..MAX_PORTS + 20 {
            e.flow.dport = 1000 + i as u16;
            e.flow.lport = 40000 + i as u16;
            s.add(&e);
        }
        assert_eq!(s.ports.len(), MAX_PORTS + 1);
        assert_eq!(s.ports[&("client", "other".to_string())].sessions, 20);
        let text = s.encode().unwrap();
        assert!(
            text.contains("tcplife_rx_bytes_total{role=\"client\",port=\"1000\"} 100"),
            "{text}"
        );
        assert!(!text.contains("40000"));
    }
}
