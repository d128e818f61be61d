//! --prometheus and --prom-file: retransmits as counters. Per flow, the
//! labels are the local and remote address and the remote port (not the
//! local port: an ephemeral port per connection would make a series per
//! connection); at most MAX_FLOWS flows get series of their own, the rest
//! are counted under `other`, so a scan or a storm cannot flood the
//! metrics system. A total per kind is exact whatever the flows.

use std::collections::BTreeMap;

use anyhow::Result;
use common::export::prom::{Counters, Exporter, FileThrottle};

use common::output::net::address;

use crate::print::kind_name;
use crate::skel::types;

/// The most flows with series of their own.
pub const MAX_FLOWS: usize = 500;
const OTHER: &str = "other";

#[derive(Default)]
pub struct Retransmits {
    /// (saddr, daddr, dport, kind) -> count.
    flows: Flows,
    by_kind: BTreeMap<&'static str, u64>,
    file: FileThrottle,
}

impl Retransmits {
    pub fn add(&mut self, e: &types::event) {
        let (kind, _) = kind_name(e.kind);
        *self.by_kind.entry(kind).or_default() += 1;
        let mut key = (
            address(e.flow.family, &e.flow.saddr),
            address(e.flow.family, &e.flow.daddr),
            e.flow.dport.to_string(),
            kind,
        );
        if !self.flows.contains_key(&key) && self.flows.len() >= MAX_FLOWS {
            key = (OTHER.into(), OTHER.into(), OTHER.into(), kind);
        }
        *self.flows.entry(key).or_default() += 1;
        self.file.changed();
    }

    pub fn encode(&self) -> Result<String> {
        encode(&self.flows, &self.by_kind)
    }

    /// --prom-file, at most once a second, when something changed (and at
    /// exit: `force`).
    pub fn write_file(&mut self, exporter: &Exporter, force: bool) -> Result<()> {
        let (flows, by_kind) = (&self.flows, &self.by_kind);
        self.file.write(exporter, force, || encode(flows, by_kind))
    }
}

type Flows = BTreeMap<(String, String, String, &'static str), u64>;

fn encode(flows: &Flows, by_kind: &BTreeMap<&'static str, u64>) -> Result<String> {
    Counters {
        families: vec![
            (
                "tcpretrans_retransmits",
                "TCP retransmits seen, by kind (retransmit, loss_probe, synack)",
                by_kind
                    .iter()
                    .map(|(kind, n)| (vec![("type".to_string(), kind.to_string())], *n))
                    .collect(),
            ),
            (
                "tcpretrans_flow_retransmits",
                "TCP retransmits by flow (local address, remote address and port); \
                     flows past the first 500 are counted as other",
                flows
                    .iter()
                    .map(|((saddr, daddr, dport, kind), n)| {
                        (
                            vec![
                                ("saddr".to_string(), saddr.clone()),
                                ("daddr".to_string(), daddr.clone()),
                                ("dport".to_string(), dport.clone()),
                                ("type".to_string(), kind.to_string()),
                            ],
                            *n,
                        )
                    })
                    .collect(),
            ),
        ],
    }
    .encode()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_past_the_bound_are_counted_as_other() {
        let mut r = Retransmits::default();
        let mut e = types::event::default();
        e.flow.family = libc::AF_INET as u16;
        for i in 0..MAX_FLOWS + 100 {
            e.flow.dport = i as u16;
            r.add(&e);
        }
        assert_eq!(r.flows.len(), MAX_FLOWS + 1);
        let other = (
            OTHER.to_string(),
            OTHER.to_string(),
            OTHER.to_string(),
            "retransmit",
        );
        assert_eq!(r.flows[&other], 100);
        assert_eq!(r.by_kind["retransmit"], (MAX_FLOWS + 100) as u64);
        let text = r.encode().unwrap();
        assert!(
            text.contains("tcpretrans_retransmits_total{type=\"retransmit\"} 600"),
            "{text}"
        );
    }
}
