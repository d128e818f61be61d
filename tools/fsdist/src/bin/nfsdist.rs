//! `nfsdist`: fsdist for nfs, chosen by its name.

fn main() -> std::process::ExitCode {
    (fsdist::ENTRY.main)()
}
