//! The TCP tools' kernel side (bpf/include/tcpsock.bpf.h): which variant
//! of the state-change hook to load, and the port filters.

use anyhow::Result;

use crate::kernel::probe::{self, Hook};

/// The state-change hook (sock:inet_sock_set_state) this kernel offers,
/// preferred first: tp_btf, raw_tp, the classic tracepoint.
pub fn state_hook() -> Result<Hook> {
    probe::tracepoint_hook("sock", "inet_sock_set_state", "4.16")
}

/// Chooses the state-change variant: `$progs` are the skeleton's open
/// programs, with tcpsock.bpf.h's STATE_CHANGE_PROGRAMS among them.
/// Evaluates to the hook chosen.
#[macro_export]
macro_rules! choose_state_programs {
    ($progs:expr) => {
        $crate::kernel::tcp::state_hook().map(|hook| {
            use $crate::kernel::probe::{load_when, Hook};
            load_when(hook == Hook::TpBtf, [&mut $progs.state_btf]);
            load_when(hook == Hook::RawTp, [&mut $progs.state_raw]);
            load_when(hook == Hook::Tracepoint, [&mut $progs.state_tp]);
            hook
        })
    };
}
