//! Build-time helper: every tool's `build.rs` is one call to [`skeleton`].

use std::env;
use std::path::{Path, PathBuf};

use libbpf_cargo::SkeletonBuilder;

/// Compiles `bpf/<tool>.bpf.c` and writes `<tool>.skel.rs` into `OUT_DIR`,
/// where the tool pulls it in with `include!`.
///
/// Panics (failing the build with clang's diagnostics) when the program
/// does not compile: a build script has no better way to report it.
pub fn skeleton(tool: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let source = dir.join(format!("{tool}.bpf.c"));
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"))
        .join(format!("{tool}.skel.rs"));
    let arch = match env::var("CARGO_CFG_TARGET_ARCH").as_deref() {
        Ok("x86_64") | Err(_) => "x86_64",
        Ok("aarch64") => "arm64",
        Ok(other) => panic!("no vmlinux.h for target architecture {other}"),
    };
    // The BPF target defines no __TARGET_ARCH_*; bpf_tracing.h needs it to read
    // syscall arguments from pt_regs.
    let target_define = match arch {
        "arm64" => "-D__TARGET_ARCH_arm64",
        _ => "-D__TARGET_ARCH_x86",
    };
    let include = dir.join("include");
    let vmlinux = include.join(arch);
    if let Err(e) = SkeletonBuilder::new()
        .source(&source)
        .clang_args([
            "-Wall".into(),
            "-Wno-unused-function".into(),
            "-O2".into(),
            "-g".into(),
            target_define.into(),
            format!("-I{}", include.display()),
            format!("-I{}", vmlinux.display()),
            format!("-I{}", dir.display()),
        ])
        .build_and_generate(&out)
    {
        panic!("building {}: {e:#}", source.display());
    }
    // The source and the headers it includes from the tools' folder
    // (`<tool>.h`, `slowio.h`); include/ as a whole. A path that does not
    // exist would count as changed on every build.
    println!("cargo:rerun-if-changed={}", source.display());
    let mut seen = Vec::new();
    local_headers(&source, &[dir, &include], &mut seen);
    for header in seen {
        println!("cargo:rerun-if-changed={}", header.display());
    }
    println!("cargo:rerun-if-changed={}", include.display());
}

/// The `#include "x.h"` files of `file` found in `dirs`, and theirs, each
/// once.
fn local_headers(file: &Path, dirs: &[&Path], seen: &mut Vec<PathBuf>) {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    for line in text.lines() {
        let Some(name) = line
            .trim_start()
            .strip_prefix("#include \"")
            .and_then(|r| r.split('"').next())
        else {
            continue;
        };
        let Some(path) = dirs.iter().map(|d| d.join(name)).find(|p| p.is_file()) else {
            continue;
        };
        if !seen.contains(&path) {
            seen.push(path.clone());
            local_headers(&path, dirs, seen);
        }
    }
}
