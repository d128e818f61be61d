//! BCC's probe syntax, one parser for the general-purpose tools
//! (funccount, funclatency, stackcount, trace, argdist), and where each
//! probe goes: the functions of a program or library ([`elf`]), its USDT
//! probes, tracepoints, kernel functions.
//!
//! - `[p:|r:]LIB:FUNC`: a function of a user program or library (LIB a
//!   path, or a name found as the process's maps, ldconfig or PATH would);
//! - `u:LIB[:PROVIDER]:PROBE`: a USDT probe;
//! - `t:CATEGORY:EVENT`: a tracepoint;
//! - `FUNC`, `k:FUNC`, `p::FUNC`, `r::FUNC`: a kernel function.
//!
//! The last part may hold wildcards (`*`, `?`) or, where the tool takes
//! `-r`, be a regular expression; a tracepoint's category may be a
//! wildcard too.
//!
//! [`plan`] resolves probes to points and attaches them ([`plan::Hooks`]:
//! a tool's program for each kind of point); [`spec`] is trace's and
//! argdist's probe language, [`hits`] and [`skel`] their shared kernel side
//! (bpf/trace.bpf.c); [`placement`] moves an entry-only uprobe past a
//! harmless prologue (memleak's free).

pub mod elf;
pub mod expr;
pub mod hits;
pub mod limits;
pub mod placement;
pub mod plan;
pub mod spec;
pub mod tracepoints;

/// The kernel side of trace and argdist (bpf/trace.bpf.c): probe hits
/// with their values read as each probe's settings say ([`hits`]).
pub mod skel {
    #![allow(clippy::all, clippy::pedantic, clippy::undocumented_unsafe_blocks)]
    #![allow(non_camel_case_types, unsafe_op_in_unsafe_fn)]
    include!(concat!(env!("OUT_DIR"), "/trace.skel.rs"));

    crate::event_record!(types::tr_event, types::task_header);
    // SAFETY: repr(C) structs of integers (the generated skeleton types).
    unsafe impl plain::Plain for types::tr_agg_key {}
    // SAFETY: as above.
    unsafe impl plain::Plain for types::tr_agg {}
    // SAFETY: a repr(C) struct of integers (the generated skeleton type).
    unsafe impl plain::Plain for types::tr_probe {}
}

use std::fmt;

use regex::Regex;

/// Where in the call a probe fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    Entry,
    Return,
}

/// A name, a wildcard pattern, or a regular expression (each matching
/// whole names).
#[derive(Debug, Clone)]
pub enum Pattern {
    Exact(String),
    Wildcard(String, Regex),
    Regex(String, Regex),
}

impl Pattern {
    /// `text` as a name or, with `*`/`?` in it, a wildcard; or (`regex`)
    /// as a regular expression.
    pub fn new(text: &str, regex: bool) -> Result<Pattern, String> {
        if regex {
            let re = Regex::new(&format!("^(?:{text})$")).map_err(|e| e.to_string())?;
            return Ok(Pattern::Regex(text.into(), re));
        }
        if !text.contains(['*', '?']) {
            return Ok(Pattern::Exact(text.into()));
        }
        let mut re = String::from("^");
        for c in text.chars() {
            match c {
                '*' => re.push_str(".*"),
                '?' => re.push('.'),
                c => re.push_str(&regex::escape(&c.to_string())),
            }
        }
        re.push('$');
        Ok(Pattern::Wildcard(
            text.into(),
            Regex::new(&re).map_err(|e| e.to_string())?,
        ))
    }

    pub fn matches(&self, name: &str) -> bool {
        match self {
            Pattern::Exact(s) => s == name,
            Pattern::Wildcard(_, re) | Pattern::Regex(_, re) => re.is_match(name),
        }
    }

    /// The one name this pattern matches, if it is no pattern.
    pub fn exact(&self) -> Option<&str> {
        match self {
            Pattern::Exact(s) => Some(s),
            _ => None,
        }
    }

    pub fn text(&self) -> &str {
        match self {
            Pattern::Exact(s) | Pattern::Wildcard(s, _) | Pattern::Regex(s, _) => s,
        }
    }
}

/// What a probe names.
#[derive(Debug, Clone)]
pub enum Target {
    /// A function of a user program or library.
    User {
        lib: String,
        func: Pattern,
    },
    /// A USDT probe (the provider: any, when not given).
    Usdt {
        lib: String,
        provider: Option<Pattern>,
        probe: Pattern,
    },
    Tracepoint {
        category: Pattern,
        event: Pattern,
    },
    Kernel {
        func: Pattern,
    },
}

/// One parsed probe.
#[derive(Debug, Clone)]
pub struct Probe {
    pub at: At,
    pub target: Target,
    /// As the user wrote it.
    pub text: String,
}

/// What each tool accepts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Accepts {
    /// `r:` return probes.
    pub returns: bool,
    /// Wildcards in names (funccount, stackcount); else one function.
    pub patterns: bool,
    /// The last part is a regular expression (-r).
    pub regex: bool,
}

/// A probe that does not parse: where (a column of the text, from 0) and
/// why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    pub text: String,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for SpecError {
    /// The reason, the probe, and its column (from 1) with the text from
    /// there: one line, as usage errors are.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} (column {}: '{}')",
            self.message,
            self.text,
            self.column + 1,
            self.text.get(self.column..).unwrap_or("")
        )
    }
}

impl std::error::Error for SpecError {}

impl Probe {
    /// Parses one probe as BCC's tools do.
    pub fn parse(text: &str, accepts: Accepts) -> Result<Probe, SpecError> {
        let err = |column: usize, message: String| SpecError {
            text: text.into(),
            column,
            message,
        };
        if text.is_empty() {
            return Err(err(0, "an empty probe".into()));
        }
        // The parts and the column each starts at.
        let mut parts = Vec::new();
        let mut start = 0;
        for (i, c) in text.char_indices() {
            if c == ':' {
                parts.push((start, &text[start..i]));
                start = i + 1;
            }
        }
        let last = (start, &text[start..]);
        parts.push(last);
        let pattern = |(col, s): (usize, &str), what: &str| -> Result<Pattern, SpecError> {
            if s.is_empty() {
                return Err(err(col, format!("no {what} named")));
            }
            // Symbols, probes and events are printable ASCII.
            if let Some((i, _)) = s.char_indices().find(|(_, c)| !c.is_ascii_graphic()) {
                return Err(err(col + i, format!("not a {what} name")));
            }
            let p = Pattern::new(s, accepts.regex).map_err(|e| err(col, e))?;
            if p.exact().is_none() && !accepts.patterns {
                return Err(err(
                    col,
                    format!("one {what}, not a pattern, is probed by this tool"),
                ));
            }
            Ok(p)
        };
        let (kind_col, kind) = parts[0];
        let (at, target) = match parts.len() {
            1 => (
                At::Entry,
                Target::Kernel {
                    func: pattern(last, "function")?,
                },
            ),
            2 => match kind {
                "k" | "p" => (
                    At::Entry,
                    Target::Kernel {
                        func: pattern(last, "function")?,
                    },
                ),
                "r" => (
                    At::Return,
                    Target::Kernel {
                        func: pattern(last, "function")?,
                    },
                ),
                "" => return Err(err(kind_col, "no library or probe type before ':'".into())),
                lib => (
                    At::Entry,
                    Target::User {
                        lib: lib.into(),
                        func: pattern(last, "function")?,
                    },
                ),
            },
            3 | 4 => {
                let (lib_col, lib) = parts[1];
                match kind {
                    "p" | "r" if parts.len() == 3 => {
                        let at = if kind == "r" { At::Return } else { At::Entry };
                        let func = pattern(last, "function")?;
                        let target = if lib.is_empty() {
                            Target::Kernel { func }
                        } else {
                            Target::User {
                                lib: lib.into(),
                                func,
                            }
                        };
                        (at, target)
                    }
                    "t" if parts.len() == 3 => (
                        At::Entry,
                        Target::Tracepoint {
                            category: pattern(parts[1], "category")?,
                            event: pattern(last, "event")?,
                        },
                    ),
                    "u" => {
                        if lib.is_empty() {
                            return Err(err(
                                lib_col,
                                "a USDT probe needs its program or library".into(),
                            ));
                        }
                        let provider = if parts.len() == 4 {
                            Some(pattern(parts[2], "provider")?)
                        } else {
                            None
                        };
                        (
                            At::Entry,
                            Target::Usdt {
                                lib: lib.into(),
                                provider,
                                probe: pattern(last, "probe")?,
                            },
                        )
                    }
                    "p" | "r" | "t" => {
                        return Err(err(parts[3].0 - 1, "too many ':'-separated parts".into()))
                    }
                    other => {
                        return Err(err(
                            kind_col,
                            format!("'{other}' is no probe type (p, r, t, u or k)"),
                        ))
                    }
                }
            }
            _ => return Err(err(parts[4].0 - 1, "too many ':'-separated parts".into())),
        };
        if at == At::Return && !accepts.returns {
            return Err(err(
                kind_col,
                "return probes (r:) are not taken by this tool".into(),
            ));
        }
        Ok(Probe {
            at,
            target,
            text: text.into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Accepts = Accepts {
        returns: true,
        patterns: true,
        regex: false,
    };

    #[test]
    fn each_form_parses_as_bcc_reads_it() {
        let p = Probe::parse("c:malloc", ALL).unwrap();
        assert!(
            matches!(&p.target, Target::User { lib, func } if lib == "c" && func.exact() == Some("malloc"))
        );
        let p = Probe::parse("r:/bin/bash:readline", ALL).unwrap();
        assert_eq!(p.at, At::Return);
        assert!(matches!(&p.target, Target::User { lib, .. } if lib == "/bin/bash"));
        let p = Probe::parse("t:sched:sched_*", ALL).unwrap();
        assert!(matches!(&p.target, Target::Tracepoint { category, event }
            if category.exact() == Some("sched") && event.matches("sched_switch") && !event.matches("xsched_switch")));
        let p = Probe::parse("u:/usr/bin/python3:function__entry", ALL).unwrap();
        assert!(matches!(&p.target, Target::Usdt { provider: None, .. }));
        let p = Probe::parse("u:lib:prov:probe", ALL).unwrap();
        assert!(
            matches!(&p.target, Target::Usdt { provider: Some(v), .. } if v.exact() == Some("prov"))
        );
        for kernel in ["vfs_read", "k:vfs_read", "p::vfs_read"] {
            let p = Probe::parse(kernel, ALL).unwrap();
            assert!(
                matches!(&p.target, Target::Kernel { func } if func.exact() == Some("vfs_read")),
                "{kernel}"
            );
        }
        assert_eq!(Probe::parse("r::vfs_read", ALL).unwrap().at, At::Return);
    }

    #[test]
    fn errors_point_at_their_column() {
        let e = Probe::parse("x:lib:f", ALL).unwrap_err();
        assert_eq!(e.column, 0);
        let e = Probe::parse("t:sched:a:b", ALL).unwrap_err();
        assert_eq!(e.column, 9);
        let e = Probe::parse("c:", ALL).unwrap_err();
        assert_eq!((e.column, e.message.as_str()), (2, "no function named"));
        let one = Accepts {
            returns: false,
            patterns: false,
            regex: false,
        };
        assert_eq!(Probe::parse("c:mall*", one).unwrap_err().column, 2);
        assert_eq!(Probe::parse("r:c:malloc", one).unwrap_err().column, 0);
        let shown = Probe::parse("t:sched:a:b", ALL).unwrap_err().to_string();
        assert_eq!(
            shown,
            "too many ':'-separated parts: t:sched:a:b (column 10: ':b')"
        );
    }

    #[test]
    fn patterns_match_whole_names() {
        let w = Pattern::new("read*", false).unwrap();
        assert!(w.matches("read") && w.matches("readv") && !w.matches("pread"));
        let r = Pattern::new("p?read|write", true).unwrap();
        assert!(r.matches("pread") && r.matches("write") && !r.matches("writev"));
        assert!(Pattern::new("(", true).is_err());
    }
}
