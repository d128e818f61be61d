//! `xfsdist`: fsdist for xfs, chosen by its name.

fn main() -> std::process::ExitCode {
    (fsdist::ENTRY.main)()
}
