//! `f2fsdist`: fsdist for f2fs, chosen by its name.

fn main() -> std::process::ExitCode {
    (fsdist::ENTRY.main)()
}
