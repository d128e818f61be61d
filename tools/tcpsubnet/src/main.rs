//! The tcpsubnet command; the tool itself is the library (src/lib.rs), which the
//! bundle's multi-call binary links too.

fn main() -> std::process::ExitCode {
    (tcpsubnet::ENTRY.main)()
}
