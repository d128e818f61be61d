//! `xfsslower`: fsslower for xfs, chosen by its name.

fn main() -> std::process::ExitCode {
    (fsslower::ENTRY.main)()
}
