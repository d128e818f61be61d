//! `ext4slower`: fsslower for ext4, chosen by its name.

fn main() -> std::process::ExitCode {
    (fsslower::ENTRY.main)()
}
