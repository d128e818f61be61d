//! User names for uids (cachetop's UID column), as the system's name
//! service gives them (getpwuid: /etc/passwd, and LDAP or systemd's where
//! configured), each looked up once.

use std::collections::HashMap;

use nix::unistd::{Uid, User};

#[derive(Default)]
pub struct UserNames(HashMap<u32, String>);

impl UserNames {
    /// The name of `uid`, or BCC's `UNKNOWN(uid)` where it has none (a
    /// container's own users).
    pub fn of(&mut self, uid: u32) -> &str {
        self.0.entry(uid).or_insert_with(|| {
            User::from_uid(Uid::from_raw(uid))
                .ok()
                .flatten()
                .map(|u| u.name)
                .unwrap_or_else(|| format!("UNKNOWN({uid})"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uids_are_named_or_unknown() {
        let mut names = UserNames::default();
        assert_eq!(names.of(0), "root");
        // The highest uid is the kernel's "no uid" (-1), never a user's.
        assert_eq!(names.of(u32::MAX), "UNKNOWN(4294967295)");
    }
}
