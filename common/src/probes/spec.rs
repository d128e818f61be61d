//! A trace probe as BCC's trace reads it:
//! `PROBE[(SIGNATURE)] [(FILTER)] ["FORMAT"[, VALUE...]]`, parsed into the
//! probe, its parameters, its filter and its message, with every name
//! resolved to where its value comes from; errors name their column.

use crate::probes::expr::{self, Binary, Expr, IntType, Unary};
use crate::probes::tracepoints::{Field, FieldKind};
use crate::probes::{Accepts, At, Probe, SpecError, Target};

/// Where a value of the hit comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operand {
    /// argN (0-based), as a type the signature may give.
    Arg(u8, IntType),
    Retval(IntType),
    Field(Field),
    Tid,
    Tgid,
    Uid,
    Gid,
    Cpu,
    /// argdist: the time from the entry to this return, in ns.
    Latency,
    /// argdist: an argument at the entry, read at the return.
    EntryArg(u8, IntType),
    /// argdist: the thread's name (a string).
    Comm,
}

/// Whose names a probe's expressions use: trace's, or argdist's (`$PID`
/// the process, `$COMM`, and at a return `$latency` and `$entry(PARAM)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Trace,
    Argdist,
}

/// One conversion of a format: `%[-0][width][h|l|ll]conv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conv {
    pub left: bool,
    pub zero: bool,
    pub width: usize,
    /// Bytes the integer conversions take (h 2, none 4, l/ll 8).
    pub size: u8,
    pub conv: char,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    Conv(Conv),
}

/// A parsed probe of trace's.
#[derive(Debug, Clone)]
pub struct TraceProbe {
    pub probe: Probe,
    /// What the FUNC column shows (BCC's: the function, the USDT probe,
    /// the tracepoint's event).
    pub display: String,
    pub filter: Option<Expr>,
    pub format: Vec<Piece>,
    pub values: Vec<Expr>,
    /// The operand each name at a column stands for.
    pub names: Vec<(usize, Operand)>,
    /// The operands read as strings (each %s, each STRCMP's operand), in
    /// slot order.
    pub strings: Vec<Operand>,
    /// Columns of names read as strings.
    pub string_cols: Vec<usize>,
    /// A return probe whose values need its entry ($latency, $entry()).
    pub needs_entry: bool,
    /// argdist: its values counted in the kernel (where they are integers
    /// the kernel reads and its filter is the kernel's).
    pub agg: Option<Agg>,
    /// The kernel makes the whole filter (or there is none): nothing is
    /// left to check on each hit sent.
    pub filter_in_kernel: bool,
}

/// What argdist has the kernel count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agg {
    /// A log2 histogram of the one value, else counts by the values.
    pub hist: bool,
    /// Each value: the operand, its own type, and argdist's type for it.
    pub values: Vec<(Operand, IntType, IntType)>,
}

fn err(text: &str, column: usize, message: impl Into<String>) -> SpecError {
    SpecError {
        text: text.into(),
        column,
        message: message.into(),
    }
}

/// A parameter of a signature: its name and type.
pub struct Param {
    name: String,
    ty: IntType,
}

/// Parses a signature's parameters (`int fd, char *buf`) at column `base`.
pub fn parse_signature(text: &str, sig: &str, base: usize) -> Result<Vec<Param>, SpecError> {
    let mut params = Vec::new();
    if sig.trim().is_empty() || sig.trim() == "void" {
        return Ok(params);
    }
    for (col, part) in expr::split_commas(sig, base) {
        let p = part.trim();
        let name_start = p
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(0, |i| i + 1);
        let (ty, name) = p.split_at(name_start);
        if name.is_empty() || ty.trim().is_empty() || name.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(err(text, col, "a parameter is TYPE NAME"));
        }
        // A type the tool does not know (a struct) is taken as 64 bits.
        let ty = IntType::named(ty).unwrap_or(IntType {
            size: 8,
            signed: false,
        });
        params.push(Param {
            name: name.into(),
            ty,
        });
    }
    if params.len() > 6 {
        return Err(err(text, base, "at most 6 parameters are read"));
    }
    Ok(params)
}

/// Parses a format string (without its quotes; `base` its first
/// character's column).
pub fn parse_format(text: &str, fmt: &str, base: usize) -> Result<Vec<Piece>, SpecError> {
    let mut pieces = Vec::new();
    let mut lit = String::new();
    let b: Vec<char> = fmt.chars().collect();
    let mut i = 0;
    let mut col = base;
    while i < b.len() {
        let c = b[i];
        if c == '\\' && i + 1 < b.len() {
            lit.push(match b[i + 1] {
                'n' => '\n',
                't' => '\t',
                o => o,
            });
            i += 2;
            col += 2;
            continue;
        }
        if c != '%' {
            lit.push(c);
            i += 1;
            col += c.len_utf8();
            continue;
        }
        let start = col;
        if b.get(i + 1) == Some(&'%') {
            lit.push('%');
            i += 2;
            col += 2;
            continue;
        }
        let mut j = i + 1;
        let (mut left, mut zero) = (false, false);
        while let Some(&f) = b.get(j) {
            match f {
                '-' => left = true,
                '0' => zero = true,
                _ => break,
            }
            j += 1;
        }
        let mut width = 0usize;
        while let Some(d) = b.get(j).and_then(|c| c.to_digit(10)) {
            width = width * 10 + d as usize;
            j += 1;
        }
        let mut size = 4;
        if b.get(j) == Some(&'h') {
            size = 2;
            j += 1;
        } else if b.get(j) == Some(&'l') {
            size = 8;
            j += 1;
            if b.get(j) == Some(&'l') {
                j += 1;
            }
        }
        let conv = match b.get(j) {
            Some(&c @ ('d' | 'i' | 'u' | 'x' | 'X' | 'o' | 'c' | 's' | 'p' | 'K' | 'U')) => c,
            _ => return Err(err(
                text,
                start,
                "not a conversion trace knows (%d %i %u %x %X %o %c %s %p %K %U, with h, l, ll)",
            )),
        };
        if width > 256 {
            return Err(err(text, start, "a width of at most 256"));
        }
        if !lit.is_empty() {
            pieces.push(Piece::Text(std::mem::take(&mut lit)));
        }
        pieces.push(Piece::Conv(Conv {
            left,
            zero,
            width,
            size,
            conv,
        }));
        col += b[i..=j].iter().map(|c| c.len_utf8()).sum::<usize>();
        i = j + 1;
    }
    if !lit.is_empty() {
        pieces.push(Piece::Text(lit));
    }
    Ok(pieces)
}

/// The end of a balanced parenthesis opened at `open` (its index), past
/// quoted text.
fn closing(s: &str, open: usize) -> Option<usize> {
    expr::scan(&s[open..], |_, c, depth| c == b')' && depth == 1).map(|i| open + i)
}

/// The end of a quoted string opened at `open`.
fn closing_quote(s: &str, open: usize) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = open + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'"' => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// Names a probe's own context knows besides the tool's common ones.
/// A probe's parts as its tool's syntax gives them: the filter, trace's
/// format, the values, and which values are read as strings.
pub struct Parts {
    pub filter: Option<Expr>,
    pub format: Vec<Piece>,
    pub values: Vec<Expr>,
    pub string_values: Vec<bool>,
}

/// `$entry(NAME)` as one name, `$entry:NAME`, resolved as the others are.
fn entry_names(e: Expr) -> Expr {
    match e {
        Expr::Call(n, args, col) if n == "$entry" && args.len() == 1 => match &args[0] {
            Expr::Name(p, _) => Expr::Name(format!("$entry:{p}"), col),
            _ => Expr::Call(n, args, col),
        },
        Expr::Call(n, args, col) => Expr::Call(n, args.into_iter().map(entry_names).collect(), col),
        Expr::Cast(t, e) => Expr::Cast(t, Box::new(entry_names(*e))),
        Expr::Unary(op, e) => Expr::Unary(op, Box::new(entry_names(*e))),
        Expr::Binary(op, a, b) => {
            Expr::Binary(op, Box::new(entry_names(*a)), Box::new(entry_names(*b)))
        }
        e => e,
    }
}

pub struct Context<'a> {
    pub dialect: Dialect,
    pub fields: &'a [Field],
    /// False: the fields are not known yet, any is taken.
    pub known: bool,
}

impl TraceProbe {
    /// The syntax alone (no tracepoint's fields yet): what `new` checks.
    /// `fields`: a tracepoint's fields; None where they cannot be read yet
    /// (tracefs without privileges): any member is then taken, to be
    /// checked by a second parse.
    pub fn parse(
        text: &str,
        fields: impl Fn(&Probe) -> Result<Option<Vec<Field>>, String>,
    ) -> Result<TraceProbe, SpecError> {
        let spec_end = text
            .find(|c: char| c == '(' || c.is_whitespace())
            .unwrap_or(text.len());
        let accepts = Accepts {
            returns: true,
            patterns: false,
            regex: false,
        };
        let probe = Probe::parse(&text[..spec_end], accepts).map_err(|mut e| {
            e.text = text.into();
            e
        })?;
        let mut rest = spec_end;
        let mut params = Vec::new();
        if text[rest..].starts_with('(') {
            let close = closing(text, rest).ok_or_else(|| err(text, rest, "unmatched '('"))?;
            if matches!(
                probe.target,
                Target::Usdt { .. } | Target::Tracepoint { .. }
            ) {
                return Err(err(
                    text,
                    rest,
                    "USDT probes and tracepoints have no signature: use arg1..arg6 or args->FIELD",
                ));
            }
            params = parse_signature(text, &text[rest + 1..close], rest + 1)?;
            rest = close + 1;
        }
        let skip_ws = |mut i: usize| {
            while text[i..].starts_with(char::is_whitespace) {
                i += 1;
            }
            i
        };
        rest = skip_ws(rest);
        let mut filter = None;
        if text[rest..].starts_with('(') {
            let close = closing(text, rest)
                .ok_or_else(|| err(text, rest, "unmatched '(' of the filter"))?;
            let e = expr::parse(&text[rest + 1..close], rest + 1)
                .map_err(|e| err(text, e.column, e.message))?;
            filter = Some(e);
            rest = skip_ws(close + 1);
        }
        let mut format = Vec::new();
        let mut values = Vec::new();
        if rest < text.len() {
            if !text[rest..].starts_with('"') {
                return Err(err(text, rest, "a filter in ( ) or a \"format\" expected"));
            }
            let close = closing_quote(text, rest)
                .ok_or_else(|| err(text, rest, "a quote is not closed"))?;
            format = parse_format(text, &text[rest + 1..close], rest + 1)?;
            let after = skip_ws(close + 1);
            if after < text.len() {
                if !text[after..].starts_with(',') {
                    return Err(err(
                        text,
                        after,
                        "',' expected between the format and its values",
                    ));
                }
                for (col, part) in expr::split_commas(&text[after + 1..], after + 1) {
                    if part.trim().is_empty() {
                        return Err(err(text, col, "an empty value"));
                    }
                    values
                        .push(expr::parse(part, col).map_err(|e| err(text, e.column, e.message))?);
                }
            }
            let convs = format
                .iter()
                .filter(|p| matches!(p, Piece::Conv(_)))
                .count();
            if convs != values.len() {
                return Err(err(
                    text,
                    rest,
                    format!(
                        "the format has {convs} conversions and {} values follow it",
                        values.len()
                    ),
                ));
            }
        }
        let string_values: Vec<bool> = format
            .iter()
            .filter_map(|p| match p {
                Piece::Conv(c) => Some(c.conv == 's'),
                _ => None,
            })
            .collect();
        TraceProbe::assemble(
            text,
            probe,
            &params,
            Parts {
                filter,
                format,
                values,
                string_values,
            },
            Dialect::Trace,
            fields,
        )
    }

    /// A probe from its parsed parts, every name resolved.
    pub fn assemble(
        text: &str,
        probe: Probe,
        params: &[Param],
        parts: Parts,
        dialect: Dialect,
        fields: impl Fn(&Probe) -> Result<Option<Vec<Field>>, String>,
    ) -> Result<TraceProbe, SpecError> {
        let display = match &probe.target {
            Target::User { func, .. } | Target::Kernel { func } => func.text().to_string(),
            Target::Usdt {
                provider, probe, ..
            } => match provider {
                Some(p) => format!("{}:{}", p.text(), probe.text()),
                None => probe.text().to_string(),
            },
            Target::Tracepoint { event, .. } => event.text().to_string(),
        };
        let fields = if matches!(probe.target, Target::Tracepoint { .. }) {
            fields(&probe).map_err(|m| err(text, 0, m))?
        } else {
            Some(Vec::new())
        };
        let rewrite = |e: Expr| {
            if dialect == Dialect::Argdist {
                entry_names(e)
            } else {
                e
            }
        };
        let mut tp = TraceProbe {
            probe,
            display,
            filter: parts.filter.map(rewrite),
            format: parts.format,
            values: parts.values.into_iter().map(rewrite).collect(),
            names: Vec::new(),
            strings: Vec::new(),
            string_cols: Vec::new(),
            needs_entry: false,
            agg: None,
            filter_in_kernel: true,
        };
        let known = fields.is_some();
        let fields = fields.unwrap_or_default();
        tp.resolve(
            text,
            params,
            &Context {
                fields: &fields,
                known,
                dialect,
            },
            &parts.string_values,
        )?;
        tp.filter_in_kernel = tp.kernel_terms(super::limits::TERMS).1;
        tp.needs_entry = tp
            .names
            .iter()
            .any(|(_, o)| matches!(o, Operand::Latency | Operand::EntryArg(..)));
        Ok(tp)
    }

    fn resolve(
        &mut self,
        text: &str,
        params: &[Param],
        cx: &Context,
        string_values: &[bool],
    ) -> Result<(), SpecError> {
        let at = self.probe.at;
        let kind = match self.probe.target {
            Target::Tracepoint { .. } => "t",
            Target::Usdt { .. } => "u",
            _ => "p",
        };
        let mut names = Vec::new();
        let mut failure = None;
        let mut strings_of: Vec<usize> = Vec::new();
        let mut note = |e: &Expr| {
            if failure.is_some() {
                return;
            }
            let r = match e {
                Expr::Name(n, col) => resolve_name(text, n, *col, at, kind, params, cx.dialect)
                    .map(|o| names.push((*col, o))),
                Expr::Member(base, field, col) => {
                    resolve_member(text, base, field, *col, kind, cx).map(|o| names.push((*col, o)))
                }
                Expr::Call(name, args, col) => {
                    if name != "STRCMP" || args.len() != 2 || !matches!(args[0], Expr::Str(_)) {
                        Err(err(
                            text,
                            *col,
                            "the one function is STRCMP(\"TEXT\", VALUE), true where they are equal",
                        ))
                    } else {
                        match string_col(&args[1]) {
                            Some(c) => {
                                strings_of.push(c);
                                Ok(())
                            }
                            None => Err(err(
                                text,
                                *col,
                                "STRCMP compares a string at an argument, retval or a field",
                            )),
                        }
                    }
                }
                Expr::Str(_) => Ok(()),
                _ => Ok(()),
            };
            if let Err(e) = r {
                failure = Some(e);
            }
        };
        if let Some(f) = &self.filter {
            f.visit(&mut note);
        }
        for v in &self.values {
            v.visit(&mut note);
        }
        if let Some(e) = failure {
            return Err(e);
        }
        // Each string value must be one operand that points at a string.
        for (wanted, v) in string_values.iter().zip(&self.values) {
            if *wanted {
                match string_col(v) {
                    Some(col) => strings_of.push(col),
                    None => {
                        return Err(err(
                            text,
                            expr_col(v).unwrap_or(0),
                            "a string is read at an argument, retval or a field: one of them",
                        ))
                    }
                }
            }
        }
        for col in strings_of {
            // Every name was resolved above, or failed there.
            let Some(op) = names
                .iter()
                .find(|(c, _)| *c == col)
                .map(|(_, o)| o.clone())
            else {
                return Err(err(
                    text,
                    col,
                    "a string is read at an argument, retval or a field",
                ));
            };
            match &op {
                Operand::Field(f) if f.kind == FieldKind::Chars => {}
                Operand::Comm => {}
                Operand::Field(f) if f.kind == FieldKind::Int => {
                    return Err(err(
                        text,
                        col,
                        format!("{} is an integer, not a string", f.name),
                    ))
                }
                Operand::Tid
                | Operand::Tgid
                | Operand::Uid
                | Operand::Gid
                | Operand::Cpu
                | Operand::Latency => return Err(err(text, col, "an integer, not a string")),
                _ => {
                    if !self.strings.contains(&op) {
                        self.strings.push(op);
                    }
                }
            }
            self.string_cols.push(col);
        }
        if self.strings.len() > super::limits::STRS {
            return Err(err(
                text,
                0,
                format!("at most {} strings are read per probe", super::limits::STRS),
            ));
        }
        self.names = names;
        // By column, for operand()'s binary search: evaluated at each hit.
        self.names.sort_by_key(|(c, _)| *c);
        Ok(())
    }

    pub fn operand(&self, col: usize) -> Option<&Operand> {
        let i = self.names.binary_search_by_key(&col, |(c, _)| *c).ok()?;
        Some(&self.names[i].1)
    }

    /// The conjuncts of the filter the kernel can make: `operand OP
    /// constant`, `operand`, `!operand` (at most `max`); and whether the
    /// whole filter is made so.
    pub fn kernel_terms(&self, max: usize) -> (Vec<Term>, bool) {
        let Some(f) = &self.filter else {
            return (Vec::new(), true);
        };
        let mut terms = Vec::new();
        let mut all = true;
        for c in f.conjuncts() {
            match (terms.len() < max).then(|| self.term(c)).flatten() {
                Some(t) => terms.push(t),
                None => all = false,
            }
        }
        (terms, all)
    }

    fn term(&self, e: &Expr) -> Option<Term> {
        let cmp = |op: Binary| match op {
            Binary::Eq => Some(Cmp::Eq),
            Binary::Ne => Some(Cmp::Ne),
            Binary::Lt => Some(Cmp::Lt),
            Binary::Le => Some(Cmp::Le),
            Binary::Gt => Some(Cmp::Gt),
            Binary::Ge => Some(Cmp::Ge),
            _ => None,
        };
        match e {
            Expr::Binary(op, a, b) => {
                let op = cmp(*op)?;
                if let (Some(v), Some(c)) = (self.kvalue(a), constant(b)) {
                    return Some(Term {
                        value: v,
                        op,
                        constant: c,
                    });
                }
                let (v, c) = (self.kvalue(b)?, constant(a)?);
                Some(Term {
                    value: v,
                    op: op.flipped(),
                    constant: c,
                })
            }
            Expr::Unary(Unary::Not, a) => Some(Term {
                value: self.kvalue(a)?,
                op: Cmp::Eq,
                constant: 0,
            }),
            e => Some(Term {
                value: self.kvalue(e)?,
                op: Cmp::NonZero,
                constant: 0,
            }),
        }
    }

    /// An integer the kernel reads: an operand, maybe cast.
    pub fn kvalue(&self, e: &Expr) -> Option<(Operand, IntType)> {
        match e {
            Expr::Cast(t, inner) => self.kvalue(inner).map(|(o, _)| (o, *t)),
            Expr::Name(_, col) | Expr::Member(_, _, col) => {
                let o = self.operand(*col)?.clone();
                let t = match &o {
                    Operand::Arg(_, t) | Operand::Retval(t) | Operand::EntryArg(_, t) => *t,
                    Operand::Comm => return None,
                    Operand::Field(f) if matches!(f.kind, FieldKind::Int | FieldKind::Pointer) => {
                        IntType {
                            size: f.size.min(8) as u8,
                            signed: f.signed,
                        }
                    }
                    Operand::Field(_) => return None,
                    _ => IntType::I64,
                };
                Some((o, t))
            }
            _ => None,
        }
    }
}

/// A comparison the kernel makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    NonZero,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    fn flipped(self) -> Cmp {
        match self {
            Cmp::Lt => Cmp::Gt,
            Cmp::Le => Cmp::Ge,
            Cmp::Gt => Cmp::Lt,
            Cmp::Ge => Cmp::Le,
            c => c,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub value: (Operand, IntType),
    pub op: Cmp,
    pub constant: i64,
}

fn constant(e: &Expr) -> Option<i64> {
    match e {
        Expr::Int(v) => Some(*v),
        Expr::Unary(Unary::Neg, e) => constant(e).map(i64::wrapping_neg),
        _ => None,
    }
}

/// The column of an expression that is one name or member.
fn string_col(e: &Expr) -> Option<usize> {
    match e {
        Expr::Name(_, c) | Expr::Member(_, _, c) => Some(*c),
        _ => None,
    }
}

fn expr_col(e: &Expr) -> Option<usize> {
    let mut col = None;
    e.visit(&mut |x| {
        if col.is_none() {
            col = match x {
                Expr::Name(_, c) | Expr::Member(_, _, c) | Expr::Call(_, _, c) => Some(*c),
                _ => None,
            }
        }
    });
    col
}

#[allow(clippy::too_many_arguments)]
fn resolve_name(
    text: &str,
    name: &str,
    col: usize,
    at: At,
    kind: &str,
    params: &[Param],
    dialect: Dialect,
) -> Result<Operand, SpecError> {
    let common = match (name, dialect) {
        ("$pid", Dialect::Trace) => Some(Operand::Tid),
        ("$PID", Dialect::Argdist) => Some(Operand::Tgid),
        ("$COMM", Dialect::Argdist) => Some(Operand::Comm),
        ("$tgid", _) => Some(Operand::Tgid),
        ("$uid", _) => Some(Operand::Uid),
        ("$gid", _) => Some(Operand::Gid),
        ("$cpu", _) => Some(Operand::Cpu),
        _ => None,
    };
    if let Some(o) = common {
        return Ok(o);
    }
    if dialect == Dialect::Argdist && (name == "$latency" || name.starts_with("$entry:")) {
        if at != At::Return || kind != "p" {
            return Err(err(
                text,
                col,
                "$latency and $entry() are known at a function's return (r:) only",
            ));
        }
        let Some(param) = name.strip_prefix("$entry:") else {
            return Ok(Operand::Latency);
        };
        return match params.iter().position(|p| p.name == param) {
            Some(i) => Ok(Operand::EntryArg(i as u8, params[i].ty)),
            None => Err(err(
                text,
                col,
                format!("$entry({param}): the signature has no parameter {param}"),
            )),
        };
    }
    if name == "retval" || name == "$retval" {
        if at != At::Return {
            return Err(err(
                text,
                col,
                "retval is known at a return probe (r:) only",
            ));
        }
        return Ok(Operand::Retval(IntType::I64));
    }
    if let Some(n) = name.strip_prefix("arg").and_then(|n| n.parse::<u8>().ok()) {
        if kind == "t" {
            return Err(err(
                text,
                col,
                "a tracepoint's values are its fields: args->NAME",
            ));
        }
        if at == At::Return {
            return Err(err(
                text,
                col,
                "arguments are not known at a return probe (r:): retval is",
            ));
        }
        if !(1..=6).contains(&n) {
            return Err(err(text, col, "arguments are arg1 to arg6"));
        }
        return Ok(Operand::Arg(n - 1, IntType::I64));
    }
    if let Some(i) = params.iter().position(|p| p.name == name) {
        if at == At::Return {
            return Err(err(
                text,
                col,
                "parameters are not known at a return probe (r:): retval is",
            ));
        }
        return Ok(Operand::Arg(i as u8, params[i].ty));
    }
    if name == "$task" {
        return Err(err(
            text,
            col,
            "$task (the task_struct) is not read by this tool",
        ));
    }
    Err(err(
        text,
        col,
        format!(
            "'{name}' is not known: arg1..arg6, retval, $pid, $tgid, $uid, $gid, $cpu, a \
             parameter, or args->FIELD"
        ),
    ))
}

fn resolve_member(
    text: &str,
    base: &str,
    field: &str,
    col: usize,
    kind: &str,
    cx: &Context,
) -> Result<Operand, SpecError> {
    if kind != "t" || base != "args" {
        return Err(err(
            text,
            col,
            "members are read of a tracepoint's record only (args->FIELD)",
        ));
    }
    if !cx.known {
        return Ok(Operand::Field(Field {
            name: field.into(),
            decl: String::new(),
            offset: 0,
            size: 8,
            signed: false,
            kind: FieldKind::Pointer,
        }));
    }
    match cx.fields.iter().find(|f| f.name == field) {
        Some(f)
            if (f.offset + f.size.min(8)) as usize > super::limits::RECORD_MAX
                && f.kind != FieldKind::DataLoc =>
        {
            Err(err(
                text,
                col,
                format!(
                    "{field} lies past the record's first {} bytes",
                    super::limits::RECORD_MAX
                ),
            ))
        }
        Some(f) => Ok(Operand::Field(f.clone())),
        None => {
            let known: Vec<&str> = cx.fields.iter().map(|f| f.name.as_str()).collect();
            Err(err(
                text,
                col,
                format!(
                    "this tracepoint has no field {field} (it has {})",
                    known.join(", ")
                ),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::tracepoints::parse_format as tp_format;

    fn no_fields(_: &Probe) -> Result<Option<Vec<Field>>, String> {
        Ok(Some(Vec::new()))
    }

    fn openat_fields(_: &Probe) -> Result<Option<Vec<Field>>, String> {
        Ok(Some(tp_format(
            "format:\n\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n\
             \tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n\
             \tfield:int flags;\toffset:32;\tsize:8;\tsigned:0;\n",
        )))
    }

    #[test]
    fn bccs_examples_parse() {
        let p = TraceProbe::parse("c:open (arg2 == 42) \"%s %d\", arg1, arg2", no_fields).unwrap();
        assert_eq!(p.display, "open");
        assert_eq!(p.values.len(), 2);
        assert_eq!(p.strings, [Operand::Arg(0, IntType::I64)]);
        let (terms, all) = p.kernel_terms(4);
        assert!(all);
        assert_eq!(terms[0].op, Cmp::Eq);
        assert_eq!(terms[0].constant, 42);
        let p = TraceProbe::parse("r::do_sys_open \"%llx\", retval", no_fields).unwrap();
        assert_eq!(p.probe.at, At::Return);
        let p = TraceProbe::parse(
            "t:syscalls:sys_enter_openat \"%s\", args->filename",
            openat_fields,
        )
        .unwrap();
        assert_eq!(p.display, "sys_enter_openat");
        assert!(matches!(&p.strings[0], Operand::Field(f) if f.offset == 24));
        let p = TraceProbe::parse("u:/bin/x:probe \"%d\", arg1", no_fields).unwrap();
        assert_eq!(p.display, "probe");
        let p = TraceProbe::parse("do_sys_open", no_fields).unwrap();
        assert!(p.format.is_empty() && p.filter.is_none());
        let p =
            TraceProbe::parse("r:c:malloc (retval) \"allocated = %x\", retval", no_fields).unwrap();
        assert_eq!(p.kernel_terms(4).0[0].op, Cmp::NonZero);
    }

    #[test]
    fn a_signature_names_the_arguments() {
        let p = TraceProbe::parse(
            "p:c:write(int fd, const char *buf, size_t n) (fd == 1) \"%d bytes\", n",
            no_fields,
        )
        .unwrap();
        let t = &p.kernel_terms(4).0[0];
        assert_eq!(
            t.value.0,
            Operand::Arg(
                0,
                IntType {
                    size: 4,
                    signed: true
                }
            )
        );
        assert!(matches!(p.values[0], Expr::Name(ref n, _) if n == "n"));
        assert_eq!(
            p.operand(expr_col(&p.values[0]).unwrap()),
            Some(&Operand::Arg(
                2,
                IntType {
                    size: 8,
                    signed: false
                }
            ))
        );
    }

    #[test]
    fn filters_the_kernel_cannot_make_are_left_to_user_space() {
        let p = TraceProbe::parse("c:f (arg1 + 1 == 3 && arg2 > 5)", no_fields).unwrap();
        let (terms, all) = p.kernel_terms(4);
        assert!(!all);
        assert_eq!(terms.len(), 1);
        assert_eq!(terms[0].op, Cmp::Gt);
        let p =
            TraceProbe::parse("c:f (10 < arg1 && !arg2 && (int)arg3 != -1)", no_fields).unwrap();
        let (terms, all) = p.kernel_terms(4);
        assert!(all);
        assert_eq!(terms[0].op, Cmp::Gt);
        assert_eq!((terms[1].op, terms[1].constant), (Cmp::Eq, 0));
        assert_eq!(
            terms[2].value.1,
            IntType {
                size: 4,
                signed: true
            }
        );
        assert_eq!(terms[2].constant, -1);
        let p = TraceProbe::parse("c:f (arg1 == 1 || arg2 == 2)", no_fields).unwrap();
        assert_eq!(p.kernel_terms(4), (Vec::new(), false));
    }

    #[test]
    fn formats_take_bccs_conversions_and_widths() {
        let f = parse_format("", "a=%d b=%-8s c=%08llx %% %hu", 0).unwrap();
        assert_eq!(f.len(), 8);
        assert!(matches!(&f[3], Piece::Conv(c) if c.left && c.width == 8 && c.conv == 's'));
        assert!(matches!(&f[5], Piece::Conv(c) if c.zero && c.width == 8 && c.size == 8));
        assert!(matches!(&f[6], Piece::Text(t) if t == " % "));
        assert!(matches!(&f[7], Piece::Conv(c) if c.size == 2 && c.conv == 'u'));
    }

    #[test]
    fn errors_point_at_their_column() {
        let col = |t: &str| TraceProbe::parse(t, no_fields).unwrap_err().column;
        assert_eq!(col("c:open (arg2 == ) \"x\""), 16);
        assert_eq!(col("c:open \"%q\", arg1"), 8);
        assert_eq!(col("c:open \"%d %d\", arg1"), 7);
        assert_eq!(col("c:open \"%d\", arg9"), 13);
        assert_eq!(col("c:open \"%d\", retval"), 13);
        assert_eq!(col("r:c:open \"%d\", arg1"), 15);
        assert_eq!(col("c:open (arg1 == 1"), 7);
        assert_eq!(col("c:open \"%s\", arg1 + 1"), 13);
        assert_eq!(col("c:open junk"), 7);
        assert_eq!(col("z:lib:open"), 0);
        let e = TraceProbe::parse(
            "t:syscalls:sys_enter_openat \"%s\", args->nope",
            openat_fields,
        )
        .unwrap_err();
        assert_eq!(e.column, 40);
        assert!(e.message.contains("filename"), "{e}");
    }
}
