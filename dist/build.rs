//! Writes the registry of every tool (`TOOLS`) from the tools this crate
//! depends on (`../tools/<tool>` in Cargo.toml), so that the list of tools
//! is written once.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let manifest = std::fs::read_to_string(Path::new(&dir).join("Cargo.toml"))
        .expect("reading dist/Cargo.toml");
    let mut tools: Vec<&str> = manifest
        .lines()
        .filter(|l| l.contains("path = \"../tools/"))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    tools.sort_unstable();
    let mut code = String::from("/// Every tool in the bundle, by name.\n");
    code.push_str("pub const TOOLS: &[Entry] = &[\n");
    for tool in &tools {
        writeln!(code, "    {tool}::ENTRY,").unwrap();
    }
    code.push_str("];\n");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(Path::new(&out).join("tools.rs"), code).expect("writing tools.rs");
    println!("cargo:rerun-if-changed=Cargo.toml");
}
