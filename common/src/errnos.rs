//! errno names (`ENOENT`) by number and back: the numbers from libc for
//! the target (they differ between architectures), the names as
//! <errno.h> spells them.

/// Every errno Linux returns from a system call, by name.
const NAMES: [(i32, &str); 57] = [
    (libc::EPERM, "EPERM"),
    (libc::ENOENT, "ENOENT"),
    (libc::ESRCH, "ESRCH"),
    (libc::EINTR, "EINTR"),
    (libc::EIO, "EIO"),
    (libc::ENXIO, "ENXIO"),
    (libc::E2BIG, "E2BIG"),
    (libc::ENOEXEC, "ENOEXEC"),
    (libc::EBADF, "EBADF"),
    (libc::ECHILD, "ECHILD"),
    (libc::EAGAIN, "EAGAIN"),
    (libc::ENOMEM, "ENOMEM"),
    (libc::EACCES, "EACCES"),
    (libc::EFAULT, "EFAULT"),
    (libc::EBUSY, "EBUSY"),
    (libc::EEXIST, "EEXIST"),
    (libc::EXDEV, "EXDEV"),
    (libc::ENODEV, "ENODEV"),
    (libc::ENOTDIR, "ENOTDIR"),
    (libc::EISDIR, "EISDIR"),
    (libc::EINVAL, "EINVAL"),
    (libc::ENFILE, "ENFILE"),
    (libc::EMFILE, "EMFILE"),
    (libc::ENOTTY, "ENOTTY"),
    (libc::ETXTBSY, "ETXTBSY"),
    (libc::EFBIG, "EFBIG"),
    (libc::ENOSPC, "ENOSPC"),
    (libc::ESPIPE, "ESPIPE"),
    (libc::EROFS, "EROFS"),
    (libc::EMLINK, "EMLINK"),
    (libc::EPIPE, "EPIPE"),
    (libc::EDOM, "EDOM"),
    (libc::ERANGE, "ERANGE"),
    (libc::EDEADLK, "EDEADLK"),
    (libc::ENAMETOOLONG, "ENAMETOOLONG"),
    (libc::ENOLCK, "ENOLCK"),
    (libc::ENOSYS, "ENOSYS"),
    (libc::ENOTEMPTY, "ENOTEMPTY"),
    (libc::ELOOP, "ELOOP"),
    (libc::ENOMSG, "ENOMSG"),
    (libc::ENODATA, "ENODATA"),
    (libc::ETIME, "ETIME"),
    (libc::EOVERFLOW, "EOVERFLOW"),
    (libc::EILSEQ, "EILSEQ"),
    (libc::ENOTSOCK, "ENOTSOCK"),
    (libc::EMSGSIZE, "EMSGSIZE"),
    (libc::EOPNOTSUPP, "EOPNOTSUPP"),
    (libc::EADDRINUSE, "EADDRINUSE"),
    (libc::EADDRNOTAVAIL, "EADDRNOTAVAIL"),
    (libc::ENETUNREACH, "ENETUNREACH"),
    (libc::ECONNRESET, "ECONNRESET"),
    (libc::ENOTCONN, "ENOTCONN"),
    (libc::ETIMEDOUT, "ETIMEDOUT"),
    (libc::ECONNREFUSED, "ECONNREFUSED"),
    (libc::EHOSTUNREACH, "EHOSTUNREACH"),
    (libc::EALREADY, "EALREADY"),
    (libc::EINPROGRESS, "EINPROGRESS"),
];

/// An errno's name (`ENOENT`); None for one not in the table.
pub fn name(errno: i32) -> Option<&'static str> {
    NAMES.iter().find(|(n, _)| *n == errno).map(|(_, s)| *s)
}

/// An errno by name (`ENOENT`, `enoent`) or number, for an option's value
/// parser.
pub fn parse(text: &str) -> Result<i32, String> {
    if let Ok(n) = text.parse::<i32>() {
        return if (1..4096).contains(&n) {
            Ok(n)
        } else {
            Err(format!("{n} is not an errno (1 to 4095)"))
        };
    }
    let upper = text.to_ascii_uppercase();
    NAMES
        .iter()
        .find(|(_, s)| *s == upper)
        .map(|(n, _)| *n)
        .ok_or_else(|| format!("no errno is named {text:?} (ENOENT, EACCES, 2…)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_agree_both_ways() {
        assert_eq!(name(libc::ENOENT), Some("ENOENT"));
        assert_eq!(parse("enoent"), Ok(libc::ENOENT));
        assert_eq!(parse("2"), Ok(2));
        assert!(parse("ENOPE").is_err() && parse("0").is_err());
        for (n, s) in NAMES {
            assert_eq!(parse(s), Ok(n), "{s}");
            assert_eq!(name(n), Some(s), "{s}");
        }
    }
}
