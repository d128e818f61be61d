//! `ext4dist`: fsdist for ext4, chosen by its name.

fn main() -> std::process::ExitCode {
    (fsdist::ENTRY.main)()
}
