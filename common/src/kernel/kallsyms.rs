//! /proc/kallsyms, kept as the kernel printed it and searched for the names
//! and addresses asked, not parsed whole: a kernel with kprobes lists
//! 100,000–200,000 symbols, and building maps of them all took seconds of a
//! tool's start in a debug build under the VM suite's TCG (0.2 s of each
//! dry run optimized). A lookup is one `memmem` pass over the text.

use memchr::memmem;

/// One line of /proc/kallsyms: `ffffffff81000000 T name\t[module]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Symbol<'a> {
    /// Zero where the reader lacks CAP_SYSLOG (kptr_restrict).
    pub addr: u64,
    /// `T`/`t` text, `D`/`d` data, `B`/`b` bss, `R`/`r` read-only data, ….
    pub kind: u8,
    pub name: &'a str,
    /// The loaded module the symbol is in; none for the kernel's own.
    pub module: Option<&'a str>,
}

impl Symbol<'_> {
    /// A function (global or local).
    pub fn is_text(&self) -> bool {
        matches!(self.kind, b'T' | b't')
    }

    /// A variable: data, bss or read-only data (listed only where the
    /// kernel has CONFIG_KALLSYMS_ALL).
    pub fn is_data(&self) -> bool {
        matches!(self.kind, b'D' | b'd' | b'B' | b'b' | b'R' | b'r')
    }
}

/// The kernel's symbol table as /proc/kallsyms gave it.
#[derive(Debug, Default, Clone)]
pub struct Kallsyms {
    text: Vec<u8>,
}

impl Kallsyms {
    /// Reads /proc/kallsyms; empty where it cannot be read.
    pub fn read() -> Kallsyms {
        Kallsyms::parse(std::fs::read("/proc/kallsyms").unwrap_or_default())
    }

    /// A table from text in /proc/kallsyms' format.
    pub fn parse(text: impl Into<Vec<u8>>) -> Kallsyms {
        let mut text = text.into();
        // Every line ends in a newline, so that a search needs no end case.
        if text.last().is_some_and(|&b| b != b'\n') {
            text.push(b'\n');
        }
        Kallsyms { text }
    }

    /// The symbols named `name` (there may be several: local functions of
    /// the same name in different files, or in modules).
    pub fn named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = Symbol<'a>> {
        self.prefixed(name).filter(move |s| s.name == name)
    }

    /// The symbols whose names start with `prefix` (not empty).
    pub fn prefixed<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = Symbol<'a>> {
        // A name is the line's third field: found after a space, and read
        // whole from its line.
        let needle = format!(" {prefix}").into_bytes();
        let text = &self.text[..];
        let mut last_line = usize::MAX;
        memmem::find_iter(text, &needle)
            .collect::<Vec<_>>()
            .into_iter()
            .filter_map(move |at| {
                let start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |i| i + 1);
                let end = at + memchr::memchr(b'\n', &text[at..]).unwrap_or(text.len() - at);
                // One line, once, whatever else in it matched.
                if start == last_line {
                    return None;
                }
                last_line = start;
                symbol(&text[start..end])
            })
            .filter(move |s| !prefix.is_empty() && s.name.starts_with(prefix))
    }

    /// The symbol at exactly `addr` of the kinds `keep` accepts, where the
    /// table has addresses.
    pub fn at<'a>(&'a self, addr: u64, keep: impl Fn(&Symbol<'a>) -> bool) -> Option<Symbol<'a>> {
        if addr == 0 {
            return None;
        }
        let needle = format!("{addr:016x} ").into_bytes();
        let text = &self.text[..];
        memmem::find_iter(text, &needle)
            .filter(|&at| at == 0 || text[at - 1] == b'\n')
            .filter_map(|at| {
                let end = at + memchr::memchr(b'\n', &text[at..]).unwrap_or(text.len() - at);
                symbol(&text[at..end])
            })
            .find(|s| keep(s))
    }

    /// True where the table lists the kernel's variables
    /// (CONFIG_KALLSYMS_ALL): `init_task`, which every kernel has, is one.
    /// Without it the linker's section markers (`__start_rodata`, …) are
    /// the only data symbols listed.
    pub fn lists_variables(&self) -> bool {
        self.named("init_task")
            .any(|s| s.is_data() && s.module.is_none() && s.addr != 0)
    }
}

/// One line: address, kind, name, and `\t[module]` for a module's.
fn symbol(line: &[u8]) -> Option<Symbol<'_>> {
    let line = std::str::from_utf8(line).ok()?;
    let (addr, rest) = line.split_once(' ')?;
    let (kind, rest) = rest.split_once(' ')?;
    let (name, module) = match rest.split_once('\t') {
        Some((name, module)) => (name, Some(module.trim_matches(['[', ']']))),
        None => (rest, None),
    };
    let &[kind] = kind.as_bytes() else {
        return None;
    };
    Some(Symbol {
        addr: u64::from_str_radix(addr, 16).ok()?,
        kind,
        name,
        module,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
0000000000000000 A fixed_percpu_data
ffffffff81000000 T _stext
ffffffff81100000 t lookup_fast.constprop.0
ffffffff81100100 t lookup_fast.cold
ffffffff81100200 T vfs_read
ffffffff81100300 t vfs_readv
ffffffff81100400 t helper
ffffffff83000040 d cgroup_mutex
ffffffff83000080 D init_task
ffffffffc0000000 t helper\t[some_module]
ffffffffc0000100 T ext4_file_read_iter\t[ext4]";

    fn names<'a>(s: impl Iterator<Item = Symbol<'a>>) -> Vec<&'a str> {
        s.map(|s| s.name).collect()
    }

    #[test]
    fn names_are_found_whole_with_their_modules() {
        let k = Kallsyms::parse(TEXT);
        let read: Vec<_> = k.named("vfs_read").collect();
        assert_eq!(
            read,
            [Symbol {
                addr: 0xffffffff81100200,
                kind: b'T',
                name: "vfs_read",
                module: None
            }]
        );
        let helpers: Vec<_> = k.named("helper").map(|s| s.module).collect();
        assert_eq!(helpers, [None, Some("some_module")]);
        let ext4: Vec<_> = k.named("ext4_file_read_iter").map(|s| s.module).collect();
        assert_eq!(ext4, [Some("ext4")], "the last line has no newline");
        assert_eq!(k.named("vfs").count(), 0);
        assert_eq!(k.named("fast").count(), 0, "a name's middle is no name");
        assert_eq!(names(k.prefixed("vfs_read")), ["vfs_read", "vfs_readv"]);
        assert_eq!(
            names(k.prefixed("lookup_fast.")),
            ["lookup_fast.constprop.0", "lookup_fast.cold"]
        );
        assert_eq!(k.prefixed("").count(), 0);
    }

    #[test]
    fn addresses_find_their_symbol_of_a_kind() {
        let k = Kallsyms::parse(TEXT);
        let data = k.at(0xffffffff83000040, Symbol::is_data).map(|s| s.name);
        assert_eq!(data, Some("cgroup_mutex"));
        assert_eq!(k.at(0xffffffff83000041, Symbol::is_data), None);
        assert_eq!(k.at(0xffffffff81100200, Symbol::is_data), None);
        assert_eq!(k.at(0, |_| true), None, "no address without CAP_SYSLOG");
        assert!(k.lists_variables());
        let markers = "ffffffff82400000 D __start_rodata\nffffffff81100200 T vfs_read\n";
        assert!(!Kallsyms::parse(markers).lists_variables());
        assert!(!Kallsyms::default().lists_variables());
    }
}
