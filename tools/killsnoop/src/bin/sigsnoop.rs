//! `sigsnoop`: killsnoop under libbpf-tools' name, in its layout.

fn main() -> std::process::ExitCode {
    (killsnoop::ENTRY.main)()
}
