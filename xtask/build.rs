//! The registry of tools, from each `tools/<tool>/src/info.rs` (a file of
//! `registry` items only): xtask reads every tool's description without
//! building the tools, and a new folder is a new tool, no list to edit.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let tools = Path::new(&dir).join("../tools");
    let mut names: Vec<String> = std::fs::read_dir(&tools)
        .expect("reading tools/")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("src/info.rs").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut code = String::new();
    for name in &names {
        let info = tools.join(name).join("src/info.rs");
        let info = info.canonicalize().expect("canonical path of info.rs");
        writeln!(
            code,
            "#[allow(dead_code)]\npub mod {name} {{\n    include!({:?});\n}}",
            info.display().to_string()
        )
        .unwrap();
        println!("cargo:rerun-if-changed={}", info.display());
    }
    code.push_str("/// Every tool's description, by name.\n");
    code.push_str("pub const TOOLS: &[&registry::ToolInfo] = &[\n");
    for name in &names {
        writeln!(code, "    &{name}::INFO,").unwrap();
    }
    code.push_str("];\n");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(Path::new(&out).join("registry.rs"), code).expect("writing registry.rs");
    // A new tool folder.
    println!("cargo:rerun-if-changed={}", tools.display());
}
