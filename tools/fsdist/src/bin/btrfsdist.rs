//! `btrfsdist`: fsdist for btrfs, chosen by its name.

fn main() -> std::process::ExitCode {
    (fsdist::ENTRY.main)()
}
