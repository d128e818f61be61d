//! The skeleton of common's own programs, and the system call names of
//! the target architecture, generated from the kernel's own uapi header
//! (linux-libc-dev): a number the header does not know prints as `[N]`.

use std::fmt::Write;

fn main() {
    bpf::skeleton("common");
    // trace and argdist's kernel side (common::probes::skel).
    bpf::skeleton("trace");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap();
    let header = match arch.as_str() {
        "x86_64" => "/usr/include/x86_64-linux-gnu/asm/unistd_64.h",
        "aarch64" => "/usr/include/asm-generic/unistd.h",
        other => panic!("common: no system call table for {other}"),
    };
    println!("cargo:rerun-if-changed={header}");
    let text = std::fs::read_to_string(header)
        .unwrap_or_else(|e| panic!("{header}: {e} (the linux-libc-dev package has it)"));
    // `#define __NR_read 63`, and arm64's `#define __NR_fcntl __NR3264_fcntl`
    // with `#define __NR3264_fcntl 25`.
    let mut numbers = std::collections::HashMap::new();
    let mut aliases = Vec::new();
    for line in text.lines() {
        let mut w = line.split_whitespace();
        let (Some("#define"), Some(name), Some(value)) = (w.next(), w.next(), w.next()) else {
            continue;
        };
        if let Ok(n) = value.parse::<u32>() {
            numbers.insert(name.to_string(), n);
        } else if name.starts_with("__NR_") && value.starts_with("__NR") {
            aliases.push((name.to_string(), value.to_string()));
        }
    }
    for (name, target) in aliases {
        if let Some(n) = numbers.get(&target).copied() {
            numbers.insert(name, n);
        }
    }
    let mut calls: Vec<(u32, String)> = numbers
        .into_iter()
        .filter_map(|(name, n)| Some((n, name.strip_prefix("__NR_")?.to_string())))
        .filter(|(_, name)| !name.starts_with("syscalls") && name != "arch_specific_syscall")
        .collect();
    calls.sort();
    calls.dedup_by_key(|(n, _)| *n);
    let mut out =
        String::from("/// (number, name), by number.\npub const SYSCALLS: &[(u32, &str)] = &[\n");
    for (n, name) in calls {
        writeln!(out, "    ({n}, {name:?}),").unwrap();
    }
    out.push_str("];\n");
    let path = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("syscalls.rs");
    std::fs::write(path, out).unwrap();
}
