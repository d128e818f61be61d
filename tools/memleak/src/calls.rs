//! -t: each allocation and free as it happens.

use std::io::{self, Write};

use common::output::{Clock, Out};
use serde_json::json;

use crate::skel::types;
use crate::Args;

/// -t: one allocation or free.
pub fn print_call(
    out: &mut Out,
    args: &Args,
    clock: &Clock,
    e: &types::mem_event,
) -> io::Result<()> {
    if args.common.json {
        return out.json(&json!({
            "time": clock.hms(e.ts_ns),
            "event": if e.alloc != 0 { "alloc" } else { "free" },
            "pid": e.pid,
            "tid": e.tid,
            "addr": format!("{:#x}", e.addr),
            "size": e.size,
        }));
    }
    if e.alloc != 0 {
        writeln!(
            out,
            "{} {:<7} {:<7} alloc {} bytes at {:#x}",
            clock.hms(e.ts_ns),
            e.pid,
            e.tid,
            e.size,
            e.addr
        )
    } else {
        writeln!(
            out,
            "{} {:<7} {:<7} free {:#x}",
            clock.hms(e.ts_ns),
            e.pid,
            e.tid,
            e.addr
        )
    }
}
