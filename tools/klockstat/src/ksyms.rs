//! What klockstat reads of /proc/kallsyms itself: where the lock code is
//! (to find the caller under it) and the names of the locks that are
//! variables (`cgroup_mutex`), for -L and the `Lock` of each row.

use std::ops::Range;

use common::kernel::kallsyms::{self, Symbol};

/// The kernel's symbols klockstat needs.
#[derive(Debug, Default)]
pub struct Kallsyms {
    /// `__sched` functions (mutex_lock, down_read, their slow paths,
    /// schedule) and `__lockfunc` ones (the spinlocks'): the frames above
    /// the code that asked for a lock.
    lock_code: Vec<Range<u64>>,
    /// The table, for the variables (present where the kernel lists them:
    /// CONFIG_KALLSYMS_ALL), looked up as rows name them.
    table: kallsyms::Kallsyms,
}

/// The qspinlock and percpu-rwsem slow paths sit outside the lock
/// sections: lock code too, known by name.
pub const LOCK_FUNCTIONS: &[&str] = &[
    "queued_spin_lock_slowpath",
    "native_queued_spin_lock_slowpath",
    "__pv_queued_spin_lock_slowpath",
    "queued_read_lock_slowpath",
    "queued_write_lock_slowpath",
    "percpu_rwsem_wait",
    "__percpu_down_read",
    "percpu_down_write",
];

impl Kallsyms {
    /// Reads /proc/kallsyms (addresses are zero without CAP_SYSLOG: then
    /// nothing is known, and callers show the lock functions).
    pub fn read() -> Kallsyms {
        Kallsyms::from_table(kallsyms::Kallsyms::read())
    }

    #[cfg(test)]
    fn parse(text: &str) -> Kallsyms {
        Kallsyms::from_table(kallsyms::Kallsyms::parse(text))
    }

    fn from_table(table: kallsyms::Kallsyms) -> Kallsyms {
        // The kernel's own (modules' symbols are never these).
        let bound = |name| {
            table
                .named(name)
                .find(|s| s.module.is_none() && s.addr != 0)
                .map(|s| s.addr)
        };
        let lock_code = [
            ("__sched_text_start", "__sched_text_end"),
            ("__lock_text_start", "__lock_text_end"),
        ]
        .into_iter()
        .filter_map(|(start, end)| Some(bound(start)?..bound(end)?))
        .collect();
        Kallsyms { lock_code, table }
    }

    fn variable(s: &Symbol<'_>) -> bool {
        s.is_data() && s.module.is_none() && s.addr != 0
    }

    /// True where a frame at `addr`, in function `name`, is lock code.
    pub fn in_lock_code(&self, addr: u64, name: Option<&str>) -> bool {
        self.lock_code.iter().any(|r| r.contains(&addr))
            || name.is_some_and(|n| LOCK_FUNCTIONS.contains(&n))
    }

    /// The variable at exactly `addr`, where the kernel lists variables.
    pub fn data_name(&self, addr: u64) -> Option<&str> {
        self.table.at(addr, Kallsyms::variable).map(|s| s.name)
    }

    /// -L: a lock's address from its variable's name or from `0x...`.
    pub fn lock_address(&self, lock: &str) -> Result<u64, String> {
        if let Some(hex) = lock.strip_prefix("0x").or_else(|| lock.strip_prefix("0X")) {
            return match u64::from_str_radix(hex, 16) {
                Ok(a) if a != 0 => Ok(a),
                _ => Err(format!("'{lock}' is not a lock address")),
            };
        }
        if let Some(s) = self.table.named(lock).find(Kallsyms::variable) {
            return Ok(s.addr);
        }
        Err(if !self.table.lists_variables() {
            format!(
                "no kernel variable '{lock}': this kernel's /proc/kallsyms lists no \
                 variables (CONFIG_KALLSYMS_ALL is off); give the lock's address \
                 (0x..., as a row's Lock shows it)"
            )
        } else {
            format!("no kernel variable '{lock}' in /proc/kallsyms: name a lock or give its address (0x...)")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
ffffffff82000000 T __sched_text_start
ffffffff82000100 t __mutex_lock.constprop.0
ffffffff82000200 T mutex_lock
ffffffff82000fff T __sched_text_end
ffffffff82001000 T __lock_text_start
ffffffff82001100 T _raw_spin_lock
ffffffff82001fff T __lock_text_end
ffffffff81100000 T native_queued_spin_lock_slowpath
ffffffff81200000 T pipe_write
ffffffff83000040 d cgroup_mutex
ffffffff83000080 b some_count
ffffffff830000c0 D init_task
ffffffffc0000000 t helper [some_module]
";

    #[test]
    fn lock_code_is_the_two_sections_and_the_slow_paths() {
        let k = Kallsyms::parse(TEXT);
        assert!(k.in_lock_code(0xffffffff82000210, Some("mutex_lock")));
        assert!(k.in_lock_code(0xffffffff82001104, None));
        let slow = Some("native_queued_spin_lock_slowpath");
        assert!(k.in_lock_code(0xffffffff81100010, slow));
        assert!(!k.in_lock_code(0xffffffff81200043, Some("pipe_write")));
        assert!(!k.in_lock_code(0xffffffff82000fff, None));
    }

    #[test]
    fn locks_are_named_by_variable_or_address() {
        let k = Kallsyms::parse(TEXT);
        assert_eq!(k.data_name(0xffffffff83000040), Some("cgroup_mutex"));
        assert_eq!(k.data_name(0xffffffff83000041), None);
        assert_eq!(k.lock_address("cgroup_mutex"), Ok(0xffffffff83000040));
        assert_eq!(k.lock_address("0xffff8881"), Ok(0xffff8881));
        assert!(k.lock_address("0x").is_err());
        assert!(k.lock_address("0x0").is_err());
        let e = k.lock_address("no_such_lock").unwrap_err();
        assert!(e.contains("'no_such_lock'"), "{e}");
        assert!(!e.contains("CONFIG_KALLSYMS_ALL"), "{e}");
        let bare = Kallsyms::parse("ffffffff81200000 T pipe_write\n");
        let e = bare.lock_address("cgroup_mutex").unwrap_err();
        assert!(e.contains("CONFIG_KALLSYMS_ALL"), "{e}");
    }
}
