//! Where an entry-only probe goes (free, munmap). x86 uprobes emulate a few
//! instructions at the probed address (push, jumps) and single-step any
//! other out of line, a second trap that costs several times the first.
//! glibc's free begins with `test %rdi,%rdi; je <ret>` (single-stepped):
//! the probe goes on the first instruction after such a prologue when, and
//! only when, every instruction before it is proven harmless here: it only
//! sets flags, or it branches to a bare `ret` (the function returns having
//! done nothing, as free(NULL) does), so the argument registers and the
//! stack at the new place are those of the entry, and no call that does
//! anything is missed. Anything else decoded leaves the probe at the entry.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use blazesym::inspect::source::{Elf, Source};
use blazesym::inspect::Inspector;

/// Where a probe goes in a function, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// From the function's start.
    pub offset: u64,
    pub why: String,
}

impl Placement {
    fn entry(why: impl Into<String>) -> Placement {
        Placement {
            offset: 0,
            why: why.into(),
        }
    }
}

/// The most of a function read: branch targets past it are not proven.
const MAX_FUNCTION: usize = 64 * 1024;

/// A function of the allocator, as its library's symbol table gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Function {
    /// In the file: where uprobes are placed.
    pub file_offset: u64,
    pub size: u64,
}

/// Looks up `names` in `lib`'s own symbols (a separate debug file has no
/// code, so no file offset), in one pass.
pub fn lookup(lib: &Path, names: &[String]) -> Vec<Option<Function>> {
    let mut elf = Elf::new(lib);
    elf.debug_syms = false;
    let src = Source::Elf(elf);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let inspector = Inspector::new();
    let Ok(found) = inspector.lookup(&src, &names) else {
        return vec![None; names.len()];
    };
    found
        .into_iter()
        .map(|infos| {
            let info = infos.into_iter().next()?;
            Some(Function {
                file_offset: info.file_offset?,
                size: info.size.unwrap_or(0) as u64,
            })
        })
        .collect()
}

/// The placement of an entry-only probe on `function` in `lib`.
pub fn entry_only(lib: &Path, function: &Function) -> Placement {
    if crate::kernel::probe::disabled("probe_move") {
        return Placement::entry("at the entry (probe_move disabled)");
    }
    match function_bytes(lib, function) {
        Some(code) => decide(&code),
        None => Placement::entry("at the entry (the function's code could not be read)"),
    }
}

/// The function's code, from the ELF file.
fn function_bytes(lib: &Path, function: &Function) -> Option<Vec<u8>> {
    let size = (function.size as usize).min(MAX_FUNCTION);
    let mut file = File::open(lib).ok()?;
    file.seek(SeekFrom::Start(function.file_offset)).ok()?;
    // The whole function: a branch is proven only to a return inside it.
    let mut code = vec![0u8; size];
    let n = file.read(&mut code).ok()?;
    code.truncate(n);
    Some(code)
}

/// One decoded instruction of the prologues recognized.
enum Insn {
    /// Sets only flags (`test reg,reg`).
    FlagsOnly,
    /// A conditional jump to `target` (an offset from the function start).
    Jcc { target: usize },
    /// An instruction x86 uprobes emulate without single-stepping.
    Emulated,
    /// Anything else: not proven harmless.
    Other,
}

/// Decodes the instruction at `at`: (what it is, its length).
fn decode(code: &[u8], at: usize) -> (Insn, usize) {
    let b = |i: usize| code.get(at + i).copied();
    let rex = b(0).filter(|x| (0x40..=0x4f).contains(x));
    let op = if rex.is_some() { 1 } else { 0 };
    match (b(op), b(op + 1)) {
        // test r/m, reg with both operands registers (ModRM mod = 11).
        (Some(0x85), Some(modrm)) if modrm >> 6 == 3 => (Insn::FlagsOnly, op + 2),
        // push r64 (0x50+r, r8-r15 with REX.B): emulated since Linux 6.x,
        // and no worse than the entry where it is not.
        (Some(0x50..=0x57), _) if rex.is_none_or(|r| r == 0x41) => (Insn::Emulated, op + 1),
        // jcc rel8
        (Some(0x70..=0x7f), Some(rel)) if rex.is_none() => {
            let next = at + 2;
            let target = next as i64 + i64::from(rel as i8);
            (jcc(target), 2)
        }
        // jcc rel32
        (Some(0x0f), Some(0x80..=0x8f)) if rex.is_none() => {
            let Some(rel) = code.get(at + 2..at + 6) else {
                return (Insn::Other, 1);
            };
            let rel = i32::from_le_bytes(rel.try_into().unwrap_or_default());
            let next = at + 6;
            (jcc(next as i64 + i64::from(rel)), 6)
        }
        _ => (Insn::Other, 1),
    }
}

fn jcc(target: i64) -> Insn {
    match usize::try_from(target) {
        Ok(target) => Insn::Jcc { target },
        Err(_) => Insn::Other,
    }
}

/// True if the code at `target` (from the function start) is a bare return.
fn returns_at_once(code: &[u8], target: usize) -> Option<bool> {
    match code.get(target..) {
        Some([0xc3, ..]) | Some([0xf3, 0xc3, ..]) => Some(true),
        Some([_, ..]) => Some(false),
        // Past the bytes read: unknown, so not proven.
        _ => None,
    }
}

/// Where the probe goes, from the function's first bytes.
pub fn decide(code: &[u8]) -> Placement {
    let mut at = 0;
    let mut skipped = Vec::new();
    loop {
        let (insn, len) = decode(code, at);
        match insn {
            Insn::Emulated if at == 0 => {
                return Placement::entry("at the entry (its first instruction is emulated)")
            }
            Insn::Emulated => {
                return Placement {
                    offset: at as u64,
                    why: format!(
                        "+{at:#x}, after {} (nothing before it changes the arguments or the \
                         stack, and its branches return at once), on an emulated instruction",
                        skipped.join("; ")
                    ),
                }
            }
            Insn::FlagsOnly => skipped.push("a flags-only test"),
            Insn::Jcc { target } if returns_at_once(code, target) == Some(true) => {
                skipped.push("a branch to a bare return")
            }
            Insn::Jcc { .. } | Insn::Other => {
                return Placement::entry(
                    "at the entry (no prologue proven harmless before an emulated instruction)",
                )
            }
        }
        at += len;
        if at >= code.len() {
            return Placement::entry("at the entry (the prologue runs past the function)");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// glibc 2.36's free: test %rdi,%rdi; je <ret>; push %rbp ... ret.
    fn glibc_free() -> Vec<u8> {
        let mut code = vec![0x48, 0x85, 0xff, 0x0f, 0x84, 0x10, 0x00, 0x00, 0x00, 0x55];
        code.resize(9 + 0x10, 0x90);
        code.push(0xc3);
        code.resize(64, 0x90);
        code
    }

    #[test]
    fn glibc_free_is_probed_after_its_null_check() {
        let p = decide(&glibc_free());
        assert_eq!(p.offset, 9, "{p:?}");
    }

    #[test]
    fn an_emulated_first_instruction_stays_at_the_entry() {
        // malloc: push %r12
        assert_eq!(decide(&[0x41, 0x54, 0x55, 0x53]).offset, 0);
    }

    #[test]
    fn a_branch_anywhere_but_a_return_stays_at_the_entry() {
        let mut code = glibc_free();
        code[9 + 0x10] = 0x48; // the branch target does work now
        assert_eq!(decide(&code).offset, 0);
    }

    #[test]
    fn an_instruction_not_proven_harmless_stays_at_the_entry() {
        // munmap: mov $0xb,%eax; syscall
        assert_eq!(decide(&[0xb8, 0x0b, 0, 0, 0, 0x0f, 0x05]).offset, 0);
        // a store before the push
        assert_eq!(decide(&[0x48, 0x89, 0x3c, 0x24, 0x55]).offset, 0);
        // test with a memory operand reads memory: not flags-only here
        assert_eq!(decide(&[0x48, 0x85, 0x3f, 0x55]).offset, 0);
    }
}
