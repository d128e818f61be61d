//! `nfsslower`: fsslower for nfs, chosen by its name.

fn main() -> std::process::ExitCode {
    (fsslower::ENTRY.main)()
}
