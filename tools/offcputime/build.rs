fn main() {
    bpf::skeleton("offcputime");
    test_program();
}

/// The Rust test target (tests/rust/oc-rust.rs), built as a release build is:
/// optimized, without frame pointers. Built here because the tests may run
/// where no compiler is (the kernel matrix's VMs).
fn test_program() {
    // Not in tests/ itself, where cargo would take it for a test target.
    let src = "tests/rust/oc-rust.rs";
    println!("cargo:rerun-if-changed={src}");
    let out = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("oc-rust");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let status = std::process::Command::new(rustc)
        .args([
            "--edition",
            "2021",
            "-C",
            "opt-level=3",
            "-C",
            "force-frame-pointers=no",
            "-o",
        ])
        .arg(&out)
        .arg(src)
        .status()
        .expect("running rustc");
    assert!(status.success(), "rustc failed to build {src}");
}
