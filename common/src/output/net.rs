//! What the network tools print: addresses from the kernel's 16 bytes,
//! endpoints, and TCP state names (numbered by the kernel's own enum,
//! through bpf/common.h).

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::skel::types::tcp_state_id as S;

/// Address families as the kernel numbers them: the C library's constants.
pub const AF_INET: u16 = libc::AF_INET as u16;
pub const AF_INET6: u16 = libc::AF_INET6 as u16;

/// An address as the BPF side keeps one: its family and 16 bytes (an
/// IPv4 address in the first four).
pub fn to_bytes(addr: &std::net::IpAddr) -> (u16, [u8; 16]) {
    let mut bytes = [0u8; 16];
    match addr {
        std::net::IpAddr::V4(a) => {
            bytes[..4].copy_from_slice(&a.octets());
            (AF_INET, bytes)
        }
        std::net::IpAddr::V6(a) => (AF_INET6, a.octets()),
    }
}

/// An address from the kernel's 16 bytes (an IPv4 address in the first
/// four), in its standard text form.
pub fn address(family: u16, bytes: &[u8; 16]) -> String {
    if family == AF_INET6 {
        Ipv6Addr::from(*bytes).to_string()
    } else {
        Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3]).to_string()
    }
}

/// `addr:port`, with an IPv6 address in brackets (RFC 5952).
pub fn endpoint(family: u16, bytes: &[u8; 16], port: u16) -> String {
    if family == AF_INET6 {
        format!("[{}]:{port}", address(family, bytes))
    } else {
        format!("{}:{port}", address(family, bytes))
    }
}

/// 4 or 6, for the IP column.
pub fn ip_version(family: u16) -> u8 {
    if family == AF_INET6 {
        6
    } else {
        4
    }
}

/// The kernel's TCP state names without the TCP_ prefix, as BCC prints them.
pub fn tcp_state_name(state: u32) -> &'static str {
    match S(state) {
        S::TCPS_ESTABLISHED => "ESTABLISHED",
        S::TCPS_SYN_SENT => "SYN_SENT",
        S::TCPS_SYN_RECV => "SYN_RECV",
        S::TCPS_FIN_WAIT1 => "FIN_WAIT1",
        S::TCPS_FIN_WAIT2 => "FIN_WAIT2",
        S::TCPS_TIME_WAIT => "TIME_WAIT",
        S::TCPS_CLOSE => "CLOSE",
        S::TCPS_CLOSE_WAIT => "CLOSE_WAIT",
        S::TCPS_LAST_ACK => "LAST_ACK",
        S::TCPS_LISTEN => "LISTEN",
        S::TCPS_CLOSING => "CLOSING",
        S::TCPS_NEW_SYN_RECV => "NEW_SYN_RECV",
        S::TCPS_BOUND_INACTIVE => "BOUND_INACTIVE",
        _ => "UNKNOWN",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_and_endpoints_print_as_bcc() {
        assert_eq!(tcp_state_name(1), "ESTABLISHED");
        assert_eq!(tcp_state_name(10), "LISTEN");
        assert_eq!(tcp_state_name(99), "UNKNOWN");
        let mut v6 = [0u8; 16];
        v6[15] = 1;
        assert_eq!(endpoint(AF_INET6, &v6, 80), "[::1]:80");
        let v4 = [127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(endpoint(AF_INET, &v4, 22), "127.0.0.1:22");
    }
}
