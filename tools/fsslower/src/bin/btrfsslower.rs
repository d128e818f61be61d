//! `btrfsslower`: fsslower for btrfs, chosen by its name.

fn main() -> std::process::ExitCode {
    (fsslower::ENTRY.main)()
}
