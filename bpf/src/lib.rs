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
    println!("cargo:rerun-if-changed={}", source.display());
    println!(
        "cargo:rerun-if-changed={}",
        dir.join(format!("{tool}.h")).display()
    );
    println!("cargo:rerun-if-changed={}", include.display());
}
