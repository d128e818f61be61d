//! System calls by number and name (the target's uapi header, generated
//! by the build script), and the call behind a `syscalls:*` tracepoint.

use std::borrow::Cow;

include!(concat!(env!("OUT_DIR"), "/syscalls.rs"));

/// Numbers at or past this are not counted by number (syscount.h's
/// NR_SYSCALLS, syscall_points.bpf.h's SYSCALL_POINTS).
pub const NR_SYSCALLS: u32 = 1024;

/// A call's name, or `[N]` where the header does not know it.
pub fn name(nr: u32) -> Cow<'static, str> {
    match SYSCALLS.binary_search_by_key(&nr, |(n, _)| *n) {
        Ok(i) => Cow::Borrowed(SYSCALLS[i].1),
        Err(_) => Cow::Owned(format!("[{nr}]")),
    }
}

/// A call's number by its name in the header.
pub fn number(name: &str) -> Option<u32> {
    SYSCALLS.iter().find(|(_, n)| *n == name).map(|(nr, _)| *nr)
}

/// The kernel names a few calls' tracepoints after their implementation
/// (SYSCALL_DEFINE), not the header: (tracepoint's, header's).
const IMPLEMENTED_AS: &[(&str, &str)] = &[
    ("newstat", "stat"),
    ("newfstat", "fstat"),
    ("newlstat", "lstat"),
    ("newuname", "uname"),
    ("sendfile64", "sendfile"),
    ("umount", "umount2"),
    ("fadvise64_64", "fadvise64"),
];

/// The call behind tracepoint `syscalls:EVENT`: whether it is the exit,
/// and the call's number; None for a call the header does not know (newer
/// than it) or an event that is no call's.
pub fn of_tracepoint(event: &str) -> Option<(bool, u32)> {
    let (exit, name) = if let Some(n) = event.strip_prefix("sys_enter_") {
        (false, n)
    } else {
        (true, event.strip_prefix("sys_exit_")?)
    };
    let nr = number(name).or_else(|| {
        let (_, header) = IMPLEMENTED_AS.iter().find(|(tp, _)| *tp == name)?;
        number(header)
    })?;
    (nr < NR_SYSCALLS).then_some((exit, nr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_by_number_and_names_its_calls() {
        assert!(SYSCALLS.windows(2).all(|w| w[0].0 < w[1].0));
        let read = number("read").expect("read");
        assert_eq!(name(read), "read");
        assert_eq!(name(NR_SYSCALLS + 7), "[1031]");
    }

    #[test]
    fn tracepoints_name_their_calls_as_the_kernel_implements_them() {
        let fstat = number("fstat").expect("fstat");
        assert_eq!(of_tracepoint("sys_enter_newfstat"), Some((false, fstat)));
        assert_eq!(of_tracepoint("sys_exit_newfstat"), Some((true, fstat)));
        let getppid = number("getppid").expect("getppid");
        assert_eq!(of_tracepoint("sys_exit_getppid"), Some((true, getppid)));
        assert_eq!(of_tracepoint("sys_enter_no_such_call"), None);
        assert_eq!(of_tracepoint("enable"), None);
    }
}
