//! `zfsdist`: fsdist for zfs, chosen by its name.

fn main() -> std::process::ExitCode {
    (fsdist::ENTRY.main)()
}
