//! Where a user probe goes: the program or library a probe names, its
//! functions matching a pattern (with their file offsets, what uprobes
//! take), and its USDT probes (`.note.stapsdt`).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use object::{Object, ObjectSection, ObjectSymbol, SectionKind, SymbolKind};

use super::Pattern;

/// The file a probe's LIB names: a path as it is; else, in process `pid`
/// (through its root, for one in a container), a mapped `libNAME.so…` or
/// `NAME`; else ldconfig's `libNAME.so…`; else a program `NAME` on PATH.
pub fn resolve(name: &str, pid: Option<u32>) -> Result<PathBuf> {
    if name.contains('/') {
        let path = PathBuf::from(name);
        if !path.is_file() {
            bail!("{name}: no such file");
        }
        return Ok(path);
    }
    let wanted = |file: &str| {
        file == name
            || [format!("lib{name}.so"), format!("{name}.so")]
                .iter()
                .any(|stem| file == stem || file.starts_with(&format!("{stem}.")))
            || file.starts_with(&format!("lib{name}-")) && file.contains(".so")
    };
    if let Some(pid) = pid {
        if let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) {
            for line in maps.lines() {
                let Some(path) = line.split_whitespace().nth(5) else {
                    continue;
                };
                let file = path.rsplit('/').next().unwrap_or(path);
                if path.starts_with('/') && wanted(file) {
                    return Ok(PathBuf::from(format!("/proc/{pid}/root{path}")));
                }
            }
        }
    }
    if let Ok(out) = Command::new("ldconfig").arg("-p").output() {
        let text = String::from_utf8_lossy(&out.stdout);
        let arch = if cfg!(target_arch = "x86_64") {
            "x86-64"
        } else {
            "AArch64"
        };
        for line in text.lines() {
            let Some((left, path)) = line.trim().split_once(" => ") else {
                continue;
            };
            let file = left.split_whitespace().next().unwrap_or("");
            if file != name && wanted(file) && left.contains(arch) {
                return Ok(PathBuf::from(path));
            }
        }
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let path = dir.join(name);
            if path.is_file() {
                return Ok(path);
            }
        }
    }
    bail!("cannot find library or program '{name}' (give its path)")
}

/// A function of an ELF file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    /// Its entry's offset in the file.
    pub offset: u64,
}

fn read(path: &Path) -> Result<memmap2::Mmap> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    // SAFETY: the map is read-only and private; a program or library
    // rewritten under us could only give wrong names, not memory errors
    // the parser does not check for.
    unsafe { memmap2::Mmap::map(&file) }.with_context(|| format!("mapping {}", path.display()))
}

/// The functions of `path` whose names `pattern` matches, from its symbol
/// table and its dynamic one, by offset; a function with several names
/// (aliases) once, under its first name in order.
pub fn functions(path: &Path, pattern: &Pattern) -> Result<Vec<Function>> {
    let data = read(path)?;
    let elf =
        object::File::parse(&*data).with_context(|| format!("{}: not ELF", path.display()))?;
    let mut found: Vec<Function> = Vec::new();
    for sym in elf.symbols().chain(elf.dynamic_symbols()) {
        if sym.kind() != SymbolKind::Text || sym.is_undefined() || sym.address() == 0 {
            continue;
        }
        let Ok(name) = sym.name() else { continue };
        // versioned dynamic names (`memcpy@@GLIBC_2.14`) by their name.
        let name = name.split('@').next().unwrap_or(name);
        if name.is_empty() || !pattern.matches(name) {
            continue;
        }
        let Some(offset) = file_offset(&elf, sym.address()) else {
            continue;
        };
        found.push(Function {
            name: name.to_string(),
            offset,
        });
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found.dedup();
    let mut seen = std::collections::HashSet::new();
    found.retain(|f| seen.insert(f.offset));
    Ok(found)
}

/// The file offset of virtual address `addr` (in a code section).
fn file_offset(elf: &object::File, addr: u64) -> Option<u64> {
    elf.sections()
        .filter(|s| s.kind() == SectionKind::Text)
        .find(|s| addr >= s.address() && addr < s.address() + s.size())
        .and_then(|s| {
            let (start, _) = s.file_range()?;
            Some(start + (addr - s.address()))
        })
}

/// Where a probe on the function at file offset `offset` of `path` sees a
/// whole frame: past `[endbr64;] push %rbp; mov %rsp,%rbp` (x86-64), so
/// that a frame pointer walk from it finds the function's caller (at the
/// entry, %rbp is still the caller's and the walk skips it). The entry
/// itself where the function does not begin so.
pub fn after_frame_setup(path: &Path, offset: u64) -> u64 {
    if !cfg!(target_arch = "x86_64") {
        return offset;
    }
    let Ok(data) = read(path) else {
        return offset;
    };
    let Some(code) = data.get(offset as usize..offset as usize + 8) else {
        return offset;
    };
    let endbr = if code.starts_with(&[0xf3, 0x0f, 0x1e, 0xfa]) {
        4
    } else {
        0
    };
    if code[endbr..].starts_with(&[0x55, 0x48, 0x89, 0xe5]) {
        offset + endbr as u64 + 4
    } else {
        offset
    }
}

/// A USDT probe of an ELF file (its `.note.stapsdt` note).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usdt {
    pub provider: String,
    pub name: String,
    /// Its argument spec (`-4@%edi 8@%rsi`).
    pub args: String,
}

/// The USDT probes of `path`, each (provider, name) once.
pub fn usdt_probes(path: &Path) -> Result<Vec<Usdt>> {
    let data = read(path)?;
    let elf =
        object::File::parse(&*data).with_context(|| format!("{}: not ELF", path.display()))?;
    let mut out = Vec::new();
    let Some(section) = elf.section_by_name(".note.stapsdt") else {
        return Ok(out);
    };
    let bytes = section.data().context(".note.stapsdt")?;
    let le = elf.is_little_endian();
    let word = |b: &[u8]| {
        let a = <[u8; 4]>::try_from(b).unwrap_or_default();
        if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    let align = |n: usize| (n + 3) & !3;
    let mut at = 0;
    while at + 12 <= bytes.len() {
        let namesz = word(&bytes[at..at + 4]) as usize;
        let descsz = word(&bytes[at + 4..at + 8]) as usize;
        let kind = word(&bytes[at + 8..at + 12]);
        let name_at = at + 12;
        let desc_at = name_at + align(namesz);
        let next = desc_at + align(descsz);
        if next > bytes.len() {
            break;
        }
        // Type 3, owner "stapsdt": three addresses (pc, base, semaphore),
        // then provider, name and arguments as C strings.
        if kind == 3 && &bytes[name_at..name_at + namesz] == b"stapsdt\0" && descsz > 24 {
            let mut strings = bytes[desc_at + 24..desc_at + descsz]
                .split(|b| *b == 0)
                .map(|s| String::from_utf8_lossy(s).into_owned());
            let provider = strings.next().unwrap_or_default();
            let name = strings.next().unwrap_or_default();
            let args = strings.next().unwrap_or_default();
            let probe = Usdt {
                provider,
                name,
                args,
            };
            if !out
                .iter()
                .any(|u: &Usdt| u.provider == probe.provider && u.name == probe.name)
            {
                out.push(probe);
            }
        }
        at = next;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libc_is_found_by_name_and_has_malloc() {
        let libc = resolve("c", None).expect("libc by name");
        assert!(libc.to_string_lossy().contains("libc.so"), "{libc:?}");
        let found = functions(&libc, &Pattern::new("malloc", false).unwrap()).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].offset > 0);
        let own = resolve("c", Some(std::process::id())).unwrap();
        assert!(
            own.starts_with(format!("/proc/{}/root/", std::process::id())),
            "{own:?}"
        );
        assert!(resolve("no-such-library-here", None).is_err());
    }

    #[test]
    fn a_frame_setup_is_skipped_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("code");
        let bytes = [
            0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5, 0x90, 0x90, // endbr64 frame
            0x55, 0x48, 0x89, 0xe5, 0x90, 0x90, 0x90, 0x90, // frame
            0x48, 0x83, 0xec, 0x08, 0x90, 0x90, 0x90, 0x90, // sub $8,%rsp: none
        ];
        std::fs::write(&file, bytes).unwrap();
        if cfg!(target_arch = "x86_64") {
            assert_eq!(after_frame_setup(&file, 0), 8);
            assert_eq!(after_frame_setup(&file, 10), 14);
        }
        assert_eq!(after_frame_setup(&file, 18), 18);
    }
}
