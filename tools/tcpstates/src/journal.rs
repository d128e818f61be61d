//! -Y: each state change as a systemd journal entry, with BCC's fields,
//! sent over journald's native protocol (a datagram of `FIELD=value`
//! lines; a value holding a newline in the binary form).

use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;

use anyhow::{Context, Result};
use common::note;
use common::output::c_bytes;
use common::output::net::{address, tcp_state_name, AF_INET6};

use crate::skel::types;

/// journald's socket; BPFTOOLS_JOURNAL_SOCKET names another (tests, or a
/// journal in a container's bind mount).
fn socket_path() -> PathBuf {
    std::env::var_os("BPFTOOLS_JOURNAL_SOCKET")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/run/systemd/journal/socket".into())
}

pub struct Journal {
    socket: UnixDatagram,
}

impl Journal {
    /// Fails, naming the socket, where there is no journal to log to.
    pub fn connect() -> Result<Journal> {
        let path = socket_path();
        let socket = UnixDatagram::unbound()?;
        socket
            .connect(&path)
            .with_context(|| format!("-Y: no systemd journal at {}", path.display()))?;
        Ok(Journal { socket })
    }

    /// Logs one change; a journal that refuses it is noted, not fatal.
    pub fn send(&self, e: &types::event) {
        if let Err(err) = self.socket.send(&entry(e)) {
            note!("-Y: the journal refused an entry: {err}");
        }
    }
}

fn field(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    out.extend_from_slice(name.as_bytes());
    if value.contains(&b'\n') {
        out.push(b'\n');
        out.extend_from_slice(&(value.len() as u64).to_le_bytes());
    } else {
        out.push(b'=');
    }
    out.extend_from_slice(value);
    out.push(b'\n');
}

/// The entry BCC's tcpstates -Y logs.
pub fn entry(e: &types::event) -> Vec<u8> {
    let f = &e.flow;
    let prefix = if f.family == AF_INET6 { "IPV6" } else { "IPV4" };
    let (saddr, daddr) = (address(f.family, &f.saddr), address(f.family, &f.daddr));
    let (old, new) = (tcp_state_name(e.oldstate), tcp_state_name(e.newstate));
    let comm = String::from_utf8_lossy(c_bytes(&e.task.comm));
    let mut out = Vec::with_capacity(512);
    let message = format!(
        "{comm} {saddr} {} \u{2192} {daddr} {} {old} \u{2192} {new}",
        f.lport, f.dport
    );
    field(&mut out, "MESSAGE", message.as_bytes());
    field(&mut out, "SYSLOG_IDENTIFIER", b"tcpstates");
    field(&mut out, "PRIORITY", b"5");
    field(&mut out, "OBJECT_PID", e.task.pid.to_string().as_bytes());
    field(&mut out, "OBJECT_COMM", comm.as_bytes());
    field(
        &mut out,
        &format!("OBJECT_{prefix}_SOURCE_ADDRESS"),
        saddr.as_bytes(),
    );
    field(
        &mut out,
        "OBJECT_TCP_SOURCE_PORT",
        f.lport.to_string().as_bytes(),
    );
    field(
        &mut out,
        &format!("OBJECT_{prefix}_DESTINATION_ADDRESS"),
        daddr.as_bytes(),
    );
    field(
        &mut out,
        "OBJECT_TCP_DESTINATION_PORT",
        f.dport.to_string().as_bytes(),
    );
    field(&mut out, "OBJECT_TCP_OLD_STATE", old.as_bytes());
    field(&mut out, "OBJECT_TCP_NEW_STATE", new.as_bytes());
    field(
        &mut out,
        "OBJECT_TCP_SPAN_TIME",
        (e.delta_ns / 1000).to_string().as_bytes(),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_with_newlines_take_the_binary_form() {
        let mut out = Vec::new();
        field(&mut out, "A", b"x");
        field(&mut out, "B", b"1\n2");
        let mut want = b"A=x\nB\n".to_vec();
        want.extend_from_slice(&3u64.to_le_bytes());
        want.extend_from_slice(b"1\n2\n");
        assert_eq!(out, want);
    }
}
