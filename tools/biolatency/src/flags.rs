//! Request flags, named as BCC names them.

use crate::skel::types;

use types::bio_flag as Flag;
const BIO_SYNC: u32 = Flag::BIO_SYNC.0;
const BIO_META: u32 = Flag::BIO_META.0;
const BIO_FUA: u32 = Flag::BIO_FUA.0;
const BIO_PREFLUSH: u32 = Flag::BIO_PREFLUSH.0;
const BIO_RAHEAD: u32 = Flag::BIO_RAHEAD.0;
const BIO_BACKGROUND: u32 = Flag::BIO_BACKGROUND.0;
const BIO_NOWAIT: u32 = Flag::BIO_NOWAIT.0;

/// BCC's names for a request's flags: modifiers, then the op (`Sync-Write`).
pub fn flag_names(flags: u32) -> String {
    let op = match flags & common::kernel::disks::OP_MASK {
        0 => "Read",
        1 => "Write",
        2 => "Flush",
        3 => "Discard",
        5 => "SecureErase",
        9 => "WriteZeroes",
        _ => "Unknown",
    };
    let mut desc = op.to_string();
    for (bit, name) in [
        (BIO_SYNC, "Sync"),
        (BIO_META, "Metadata"),
        (BIO_FUA, "ForcedUnitAccess"),
        (BIO_PREFLUSH, "PreFlush"),
        (BIO_RAHEAD, "ReadAhead"),
        (BIO_BACKGROUND, "Background"),
        (BIO_NOWAIT, "NoWait"),
    ] {
        if flags & bit != 0 {
            desc = format!("{name}-{desc}");
        }
    }
    desc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_named_like_bcc() {
        assert_eq!(flag_names(0), "Read");
        assert_eq!(flag_names(1 | BIO_SYNC), "Sync-Write");
        assert_eq!(flag_names(1 | BIO_SYNC | BIO_META), "Metadata-Sync-Write");
        assert_eq!(flag_names(2 | BIO_PREFLUSH), "PreFlush-Flush");
    }
}
