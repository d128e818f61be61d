//! argdist's probe specifier, as BCC's argdist reads it:
//! `{p,r,t,u}:{LIB|CATEGORY}:FUNC(SIGNATURE)[:TYPE[,TYPE...]:EXPR[,EXPR...][:FILTER]][#LABEL]`,
//! parsed into trace's probe (the same kernel side), with argdist's names
//! (`$retval`, `$latency`, `$entry(PARAM)`, `$PID`, `$COMM`).

use common::probes::expr::{self, IntType};
use common::probes::hits::FieldsOf;
use common::probes::spec::{parse_signature, Dialect, Parts, TraceProbe};
use common::probes::{Accepts, Probe, SpecError};

/// Histograms (-H) or frequency counts (-C).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Hist,
    Count,
}

/// A value's type: an integer of C's, or a string (`char*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    Int(IntType),
    Str,
}

#[derive(Debug, Clone)]
pub struct ArgProbe {
    pub mode: Mode,
    pub raw: String,
    pub label: Option<String>,
    pub probe: TraceProbe,
    pub types: Vec<Type>,
    /// Each expression as written (what the report names it by).
    pub exprs: Vec<String>,
    /// No expression given: calls counted (or, at a return, its value).
    pub default: bool,
}

fn err(text: &str, column: usize, message: impl Into<String>) -> SpecError {
    SpecError {
        text: text.into(),
        column,
        message: message.into(),
    }
}

fn parse_type(text: &str, t: &str, col: usize) -> Result<Type, SpecError> {
    let compact: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
    if compact.replace(' ', "") == "char*" || compact.replace(' ', "") == "constchar*" {
        return Ok(Type::Str);
    }
    IntType::named(&compact).map(Type::Int).ok_or_else(|| {
        err(
            text,
            col,
            format!("'{compact}' is not a type argdist keeps: C's integer types, or char*"),
        )
    })
}

impl ArgProbe {
    pub fn parse(text: &str, mode: Mode, fields: FieldsOf) -> Result<ArgProbe, SpecError> {
        let (spec, label) = match expr::split_top(text, b'#', 2, 0).as_slice() {
            [(_, s), (_, l)] => (*s, Some(l.trim().to_string())),
            _ => (text, None),
        };
        let parts = expr::split_top(spec, b':', 6, 0);
        if parts.len() < 3 {
            return Err(err(
                text,
                spec.len(),
                "a specifier is TYPE:LIB:FUNC(SIGNATURE)[:TYPES:EXPRS[:FILTER]][#LABEL]",
            ));
        }
        let kind = parts[0].1;
        if !matches!(kind, "p" | "r" | "t" | "u") {
            return Err(err(
                text,
                0,
                format!("'{kind}' is no probe type (p, r, t or u)"),
            ));
        }
        let (fcol, fpart) = parts[2];
        let (func, sig) = match fpart.find('(') {
            Some(open) => {
                let close = fpart
                    .rfind(')')
                    .filter(|c| *c > open)
                    .ok_or_else(|| err(text, fcol + open, "unmatched '(' of the signature"))?;
                if !fpart[close + 1..].trim().is_empty() {
                    return Err(err(text, fcol + close + 1, "text after the signature"));
                }
                (
                    &fpart[..open],
                    Some((fcol + open + 1, &fpart[open + 1..close])),
                )
            }
            None => (fpart, None),
        };
        // The probe as trace's parser reads it: the same text up to FUNC.
        let probe_text = &spec[..fcol + func.len()];
        let accepts = Accepts {
            returns: true,
            patterns: false,
            regex: false,
        };
        let probe = Probe::parse(probe_text, accepts).map_err(|mut e| {
            e.text = text.into();
            e
        })?;
        let params = match sig {
            Some((col, s)) if !s.trim().is_empty() => {
                if matches!(kind, "t" | "u") {
                    return Err(err(
                        text,
                        col,
                        "USDT probes and tracepoints have no signature: use arg1..arg6 or args->FIELD",
                    ));
                }
                parse_signature(text, s, col)?
            }
            _ => Vec::new(),
        };
        let (types, exprs, default) = if parts.len() >= 5 {
            let (tcol, ttext) = parts[3];
            let (ecol, etext) = parts[4];
            let types = expr::split_commas(ttext, tcol)
                .into_iter()
                .map(|(c, t)| parse_type(text, t.trim(), c))
                .collect::<Result<Vec<_>, _>>()?;
            let exprs: Vec<(usize, &str)> = expr::split_commas(etext, ecol);
            if exprs.len() != types.len() {
                return Err(err(
                    text,
                    ecol,
                    format!(
                        "{} types and {} expressions: one type each",
                        types.len(),
                        exprs.len()
                    ),
                ));
            }
            if mode == Mode::Hist && exprs.len() > 1 {
                return Err(err(text, ecol, "a histogram (-H) is of one expression"));
            }
            if mode == Mode::Hist && types[0] == Type::Str {
                return Err(err(
                    text,
                    tcol,
                    "a histogram (-H) is of an integer, not a string",
                ));
            }
            (types, exprs, false)
        } else if parts.len() == 4 {
            return Err(err(
                text,
                parts[3].0,
                "types are followed by their expressions (:TYPES:EXPRS)",
            ));
        } else {
            if kind != "r" && mode == Mode::Hist {
                return Err(err(
                    text,
                    spec.len(),
                    "a histogram (-H) needs an expression (:TYPE:EXPR), or a return probe",
                ));
            }
            // BCC's: 1 per call, or the return value.
            let (t, e) = if kind == "r" {
                (
                    Type::Int(IntType {
                        size: 4,
                        signed: true,
                    }),
                    "$retval",
                )
            } else {
                (Type::Int(IntType::I64), "1")
            };
            (vec![t], vec![(usize::MAX, e)], true)
        };
        let mut values = Vec::new();
        for (col, e) in &exprs {
            let base = if *col == usize::MAX { 0 } else { *col };
            values.push(expr::parse(e, base).map_err(|x| err(text, x.column, x.message))?);
        }
        let filter = match parts.get(5) {
            Some((col, f)) if !f.trim().is_empty() => {
                Some(expr::parse(f, *col).map_err(|x| err(text, x.column, x.message))?)
            }
            _ => None,
        };
        // $COMM is the thread's name whatever type it is given (BCC's).
        let mut types = types;
        for (t, (_, e)) in types.iter_mut().zip(&exprs) {
            if e.trim() == "$COMM" {
                *t = Type::Str;
            }
        }
        if mode == Mode::Hist && types[0] == Type::Str {
            return Err(err(
                text,
                0,
                "a histogram (-H) is of an integer, not a string",
            ));
        }
        let string_values = types.iter().map(|t| *t == Type::Str).collect();
        let probe = TraceProbe::assemble(
            text,
            probe,
            &params,
            Parts {
                filter,
                format: Vec::new(),
                values,
                string_values,
            },
            Dialect::Argdist,
            fields,
        )?;
        Ok(ArgProbe {
            mode,
            raw: text.into(),
            label: label.filter(|l| !l.is_empty()),
            probe,
            types,
            exprs: exprs.iter().map(|(_, e)| e.trim().to_string()).collect(),
            default,
        })
    }

    /// What the report calls the probe: its label, or the specifier.
    pub fn title(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::probes::spec::Operand;
    use common::probes::tracepoints::Field;

    fn none(_: &Probe) -> Result<Option<Vec<Field>>, String> {
        Ok(Some(Vec::new()))
    }

    #[test]
    fn bccs_examples_parse() {
        let p = ArgProbe::parse("p:c:malloc(size_t size):size_t:size", Mode::Hist, &none).unwrap();
        assert_eq!(p.exprs, ["size"]);
        assert_eq!(
            p.types,
            [Type::Int(IntType {
                size: 8,
                signed: false
            })]
        );
        let p = ArgProbe::parse(
            "p:c:malloc(size_t size):size_t:size:size==16",
            Mode::Count,
            &none,
        )
        .unwrap();
        assert!(p.probe.kernel_terms(4).1);
        let p = ArgProbe::parse(
            "r:c:gets():char*:(char*)$retval#snooped",
            Mode::Count,
            &none,
        );
        // A cast to a pointer of a string is no operand: refused, named.
        assert!(p.is_err());
        let p = ArgProbe::parse(
            "r:c:gets():char*:$retval#snooped strings",
            Mode::Count,
            &none,
        )
        .unwrap();
        assert_eq!(p.title(), "snooped strings");
        assert_eq!(p.probe.strings, [Operand::Retval(IntType::I64)]);
        let p = ArgProbe::parse(
            "r::__vfs_read(void *file, void *buf, size_t count):size_t:$entry(count):$latency > 1000000",
            Mode::Hist,
            &none,
        )
        .unwrap();
        assert!(p.probe.needs_entry);
        let p = ArgProbe::parse(
            "r::__vfs_read():u32:$PID:$latency > 100000",
            Mode::Count,
            &none,
        )
        .unwrap();
        assert!(p.probe.needs_entry);
        let p = ArgProbe::parse("r:c:read()", Mode::Hist, &none).unwrap();
        assert!(p.default && p.exprs == ["$retval"]);
        let p = ArgProbe::parse("p:c:fork()#fork calls", Mode::Count, &none).unwrap();
        assert!(p.default);
        let p = ArgProbe::parse("u:/bin/x:probe():u64:arg2", Mode::Count, &none).unwrap();
        assert_eq!(p.probe.display, "probe");
        let p = ArgProbe::parse("r::__vfs_read():u32:$COMM", Mode::Count, &none).unwrap();
        assert_eq!(p.types, [Type::Str]);
    }

    #[test]
    fn errors_point_at_their_column() {
        let col = |t: &str, m| ArgProbe::parse(t, m, &none).unwrap_err().column;
        assert_eq!(col("x:c:malloc()", Mode::Count), 0);
        assert_eq!(col("p:c:malloc(size_t size):float:size", Mode::Count), 24);
        assert_eq!(col("p:c:malloc(size_t size):u64,u64:size", Mode::Count), 32);
        assert_eq!(col("p:c:malloc()", Mode::Hist), 12);
        assert_eq!(col("p:c:malloc(size_t size):u64:$latency", Mode::Hist), 28);
        assert_eq!(
            col("r:c:malloc(size_t size):u64:$entry(sz)", Mode::Hist),
            28
        );
        assert_eq!(
            col("p:c:malloc(size_t size):u64:size:size ==", Mode::Count),
            40
        );
    }
}
