//! The skeleton, and the capability names, generated from the kernel's own
//! uapi header (linux-libc-dev): a number the header does not know prints
//! as `?`, as BCC's does.

use std::fmt::Write;

fn main() {
    bpf::skeleton("capable");
    let header = "/usr/include/linux/capability.h";
    println!("cargo:rerun-if-changed={header}");
    let text = std::fs::read_to_string(header)
        .unwrap_or_else(|e| panic!("{header}: {e} (the linux-libc-dev package has it)"));
    // `#define CAP_CHOWN            0`; CAP_LAST_CAP names another, skipped.
    let mut caps: Vec<(u32, &str)> = text
        .lines()
        .filter_map(|line| {
            let mut w = line.split_whitespace();
            let (Some("#define"), Some(name), Some(value)) = (w.next(), w.next(), w.next()) else {
                return None;
            };
            Some((
                value.parse().ok()?,
                name.strip_prefix("CAP_").map(|_| name)?,
            ))
        })
        .collect();
    caps.sort();
    caps.dedup_by_key(|(n, _)| *n);
    assert!(
        caps.iter().enumerate().all(|(i, (n, _))| i as u32 == *n),
        "{header}: capabilities are not numbered 0..N: {caps:?}"
    );
    let mut out =
        String::from("/// The capabilities' names, by number.\npub const CAPS: &[&str] = &[\n");
    for (_, name) in caps {
        writeln!(out, "    {name:?},").unwrap();
    }
    out.push_str("];\n");
    let path = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("caps.rs");
    std::fs::write(path, out).unwrap();
}
