//! The C-like expressions of trace's filters and values (and argdist's):
//! integers, names the tool resolves (`arg1`, `retval`, `$pid`, a
//! parameter), `args->field`, casts to C's integer types, C's operators
//! and precedence, and `STRCMP("text", expr)`. Parsed once into a tree
//! the tool evaluates on each event's values; errors name their column.

use std::fmt;

/// An expression's error: its column in the text given to [`parse`]
/// (with its offset added) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExprError {
    pub column: usize,
    pub message: String,
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A C integer type a cast names: its bytes and signedness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntType {
    pub size: u8,
    pub signed: bool,
}

impl IntType {
    pub const I64: IntType = IntType {
        size: 8,
        signed: true,
    };

    /// `v` as this type holds it, widened back to 64 bits.
    pub fn apply(self, v: i64) -> i64 {
        let bits = u32::from(self.size) * 8;
        if bits >= 64 {
            return v;
        }
        let shift = 64 - bits;
        if self.signed {
            (v << shift) >> shift
        } else {
            ((v as u64) << shift >> shift) as i64
        }
    }

    /// C's integer type names (with stdint's and the kernel's), and
    /// pointers (64 bits); None for any other name.
    pub fn named(text: &str) -> Option<IntType> {
        let words: Vec<&str> = text
            .split_whitespace()
            .filter(|w| !matches!(*w, "const" | "volatile" | "__user" | "struct"))
            .collect();
        if text.contains('*') {
            return Some(IntType {
                size: 8,
                signed: false,
            });
        }
        let (size, signed) = match words.join(" ").as_str() {
            "char" | "signed char" | "s8" | "int8_t" | "__s8" => (1, true),
            "unsigned char" | "u8" | "uint8_t" | "__u8" | "bool" | "_Bool" => (1, false),
            "short" | "short int" | "signed short" | "s16" | "int16_t" | "__s16" => (2, true),
            "unsigned short" | "unsigned short int" | "u16" | "uint16_t" | "__u16" | "umode_t" => {
                (2, false)
            }
            "int" | "signed" | "signed int" | "s32" | "int32_t" | "__s32" | "pid_t" | "uid_t"
            | "gid_t" => (4, true),
            "unsigned" | "unsigned int" | "u32" | "uint32_t" | "__u32" | "dev_t" | "mode_t" => {
                (4, false)
            }
            "long" | "long int" | "long long" | "long long int" | "signed long" | "s64"
            | "int64_t" | "__s64" | "ssize_t" | "off_t" | "loff_t" | "intptr_t" => (8, true),
            "unsigned long"
            | "unsigned long int"
            | "unsigned long long"
            | "unsigned long long int"
            | "u64"
            | "uint64_t"
            | "__u64"
            | "size_t"
            | "uintptr_t" => (8, false),
            _ => return None,
        };
        Some(IntType { size, signed })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unary {
    Neg,
    Not,
    BitNot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binary {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    And,
    Or,
}

/// A parsed expression; names are the tool's to resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    Int(i64),
    Str(Vec<u8>),
    /// A name (`arg1`, `retval`, `$pid`, a parameter) at a column.
    Name(String, usize),
    /// `base->field` at a column (the field's).
    Member(String, String, usize),
    /// A call of a function the tool knows (`STRCMP`, `$entry`) at a
    /// column.
    Call(String, Vec<Expr>, usize),
    Cast(IntType, Box<Expr>),
    Unary(Unary, Box<Expr>),
    Binary(Binary, Box<Expr>, Box<Expr>),
}

impl Expr {
    /// Every name and member in the expression, in order.
    pub fn visit<'a>(&'a self, f: &mut impl FnMut(&'a Expr)) {
        f(self);
        match self {
            Expr::Call(_, args, _) => args.iter().for_each(|a| a.visit(f)),
            Expr::Cast(_, e) | Expr::Unary(_, e) => e.visit(f),
            Expr::Binary(_, a, b) => {
                a.visit(f);
                b.visit(f);
            }
            _ => {}
        }
    }

    /// The parts of a conjunction (`a && b && c`), or the expression.
    pub fn conjuncts(&self) -> Vec<&Expr> {
        match self {
            Expr::Binary(Binary::And, a, b) => {
                let mut v = a.conjuncts();
                v.extend(b.conjuncts());
                v
            }
            e => vec![e],
        }
    }
}

/// A value an expression's name stands for on one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value<'a> {
    Int(i64),
    Str(&'a [u8]),
}

impl Value<'_> {
    pub fn int(&self) -> i64 {
        match self {
            Value::Int(v) => *v,
            Value::Str(s) => !s.is_empty() as i64,
        }
    }
}

/// Evaluates `e`, names and members by `lookup` (C's semantics on 64-bit
/// signed integers; a division by zero is 0, as BPF's).
pub fn eval<'a>(e: &'a Expr, lookup: &impl Fn(&'a Expr) -> Value<'a>) -> Value<'a> {
    match e {
        Expr::Int(v) => Value::Int(*v),
        Expr::Str(s) => Value::Str(s),
        Expr::Name(..) | Expr::Member(..) => lookup(e),
        Expr::Call(name, args, _) if name == "STRCMP" && args.len() == 2 => {
            let a = eval(&args[0], lookup);
            let b = eval(&args[1], lookup);
            Value::Int(match (a, b) {
                (Value::Str(a), Value::Str(b)) => (a == b) as i64,
                _ => 0,
            })
        }
        Expr::Call(..) => lookup(e),
        Expr::Cast(t, e) => Value::Int(t.apply(eval(e, lookup).int())),
        Expr::Unary(op, e) => {
            let v = eval(e, lookup).int();
            Value::Int(match op {
                Unary::Neg => v.wrapping_neg(),
                Unary::Not => (v == 0) as i64,
                Unary::BitNot => !v,
            })
        }
        Expr::Binary(Binary::And, a, b) => {
            Value::Int((eval(a, lookup).int() != 0 && eval(b, lookup).int() != 0) as i64)
        }
        Expr::Binary(Binary::Or, a, b) => {
            Value::Int((eval(a, lookup).int() != 0 || eval(b, lookup).int() != 0) as i64)
        }
        Expr::Binary(op, a, b) => {
            let (a, b) = (eval(a, lookup).int(), eval(b, lookup).int());
            Value::Int(binary(*op, a, b))
        }
    }
}

/// One operator on two integers, as C (and BPF) compute it.
pub fn binary(op: Binary, a: i64, b: i64) -> i64 {
    match op {
        Binary::Mul => a.wrapping_mul(b),
        Binary::Div => a.checked_div(b).unwrap_or(0),
        Binary::Rem => a.checked_rem(b).unwrap_or(0),
        Binary::Add => a.wrapping_add(b),
        Binary::Sub => a.wrapping_sub(b),
        Binary::Shl => a.wrapping_shl(b as u32),
        Binary::Shr => a.wrapping_shr(b as u32),
        Binary::Lt => (a < b) as i64,
        Binary::Le => (a <= b) as i64,
        Binary::Gt => (a > b) as i64,
        Binary::Ge => (a >= b) as i64,
        Binary::Eq => (a == b) as i64,
        Binary::Ne => (a != b) as i64,
        Binary::BitAnd => a & b,
        Binary::BitXor => a ^ b,
        Binary::BitOr => a | b,
        Binary::And => (a != 0 && b != 0) as i64,
        Binary::Or => (a != 0 || b != 0) as i64,
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i64),
    Str(Vec<u8>),
    Ident(String),
    Punct(&'static str),
}

const PUNCTS: [&str; 26] = [
    "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "(", ")", ",", "*", "/", "%", "+", "-",
    "<", ">", "&", "^", "|", "!", "~", "@", ".",
];

fn lex(text: &str, base: usize) -> Result<Vec<(Tok, usize)>, ExprError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let err = |i: usize, m: &str| ExprError {
        column: base + i,
        message: m.into(),
    };
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric()) {
                i += 1;
            }
            let s = &text[start..i];
            let s = s.trim_end_matches(['u', 'U', 'l', 'L']);
            let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                u64::from_str_radix(h, 16).map(|v| v as i64)
            } else if s.len() > 1 && s.starts_with('0') {
                u64::from_str_radix(&s[1..], 8).map(|v| v as i64)
            } else {
                s.parse::<u64>().map(|v| v as i64)
            };
            out.push((
                Tok::Int(v.map_err(|_| err(start, "not a number"))?),
                base + start,
            ));
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            let start = i;
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((Tok::Ident(text[start..i].into()), base + start));
        } else if c == b'"' || c == b'\'' {
            let start = i;
            let mut s = Vec::new();
            i += 1;
            loop {
                match b.get(i) {
                    None => return Err(err(start, "a quote is not closed")),
                    Some(&q) if q == c => break,
                    Some(b'\\') => {
                        i += 1;
                        s.push(match b.get(i) {
                            Some(b'n') => b'\n',
                            Some(b't') => b'\t',
                            Some(b'0') => 0,
                            Some(&o) => o,
                            None => return Err(err(start, "a quote is not closed")),
                        });
                    }
                    Some(&o) => s.push(o),
                }
                i += 1;
            }
            i += 1;
            if c == b'\'' {
                // A character constant is its value.
                if s.len() != 1 {
                    return Err(err(start, "a character constant holds one character"));
                }
                out.push((Tok::Int(i64::from(s[0])), base + start));
            } else {
                out.push((Tok::Str(s), base + start));
            }
        } else if let Some(p) = PUNCTS.iter().find(|p| text[i..].starts_with(**p)) {
            out.push((Tok::Punct(p), base + i));
            i += p.len();
        } else {
            return Err(err(i, "not part of an expression"));
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    end: usize,
}

/// Binary operators by precedence, loosest first (C's).
const LEVELS: [&[(&str, Binary)]; 10] = [
    &[("||", Binary::Or)],
    &[("&&", Binary::And)],
    &[("|", Binary::BitOr)],
    &[("^", Binary::BitXor)],
    &[("&", Binary::BitAnd)],
    &[("==", Binary::Eq), ("!=", Binary::Ne)],
    &[
        ("<", Binary::Lt),
        ("<=", Binary::Le),
        (">", Binary::Gt),
        (">=", Binary::Ge),
    ],
    &[("<<", Binary::Shl), (">>", Binary::Shr)],
    &[("+", Binary::Add), ("-", Binary::Sub)],
    &[("*", Binary::Mul), ("/", Binary::Div), ("%", Binary::Rem)],
];

impl Parser {
    fn col(&self) -> usize {
        self.toks.get(self.pos).map_or(self.end, |t| t.1)
    }

    fn err<T>(&self, message: impl Into<String>) -> Result<T, ExprError> {
        Err(ExprError {
            column: self.col(),
            message: message.into(),
        })
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    fn eat(&mut self, p: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Punct(q)) if *q == p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str) -> Result<(), ExprError> {
        if self.eat(p) {
            Ok(())
        } else {
            self.err(format!("'{p}' expected"))
        }
    }

    fn binary(&mut self, level: usize) -> Result<Expr, ExprError> {
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        'more: loop {
            for (p, op) in LEVELS[level] {
                if self.eat(p) {
                    let right = self.binary(level + 1)?;
                    left = Expr::Binary(*op, Box::new(left), Box::new(right));
                    continue 'more;
                }
            }
            return Ok(left);
        }
    }

    /// A cast's type, if the parenthesis at `pos` opens one.
    fn cast(&mut self) -> Option<IntType> {
        let start = self.pos;
        let mut words = Vec::new();
        let mut j = start + 1;
        while let Some((t, _)) = self.toks.get(j) {
            match t {
                Tok::Ident(w) => words.push(w.as_str()),
                Tok::Punct("*") => words.push("*"),
                Tok::Punct(")") => break,
                _ => return None,
            }
            j += 1;
        }
        if words.is_empty() || words.iter().any(|w| w.starts_with('$')) {
            return None;
        }
        let t = IntType::named(&words.join(" "))?;
        self.pos = j + 1;
        Some(t)
    }

    fn unary(&mut self) -> Result<Expr, ExprError> {
        for (p, op) in [("-", Unary::Neg), ("!", Unary::Not), ("~", Unary::BitNot)] {
            if self.eat(p) {
                return Ok(Expr::Unary(op, Box::new(self.unary()?)));
            }
        }
        if matches!(self.peek(), Some(Tok::Punct("("))) {
            if let Some(t) = self.cast() {
                return Ok(Expr::Cast(t, Box::new(self.unary()?)));
            }
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, ExprError> {
        let col = self.col();
        let Some(tok) = self.peek().cloned() else {
            return self.err("the expression ends early");
        };
        self.pos += 1;
        match tok {
            Tok::Int(v) => Ok(Expr::Int(v)),
            Tok::Str(s) => Ok(Expr::Str(s)),
            Tok::Punct("(") => {
                let e = self.binary(0)?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Ident(name) => {
                if self.eat("(") {
                    let mut args = Vec::new();
                    if !self.eat(")") {
                        loop {
                            args.push(self.binary(0)?);
                            if self.eat(")") {
                                break;
                            }
                            self.expect(",")?;
                        }
                    }
                    return Ok(Expr::Call(name, args, col));
                }
                if self.eat("->") || self.eat(".") {
                    let fcol = self.col();
                    return match self.peek().cloned() {
                        Some(Tok::Ident(field)) => {
                            self.pos += 1;
                            if self.eat("->") || self.eat(".") {
                                return self.err("one level of '->' is read: args->FIELD");
                            }
                            Ok(Expr::Member(name, field, fcol))
                        }
                        _ => self.err("a field name expected"),
                    };
                }
                // BCC's `arg1@user` (this tool reads user or kernel memory
                // by the address itself).
                if self.eat("@") {
                    match self.peek() {
                        Some(Tok::Ident(w)) if w == "user" => self.pos += 1,
                        _ => return self.err("'@user' is the one address space named"),
                    }
                }
                Ok(Expr::Name(name, col))
            }
            Tok::Punct(p) => {
                self.pos -= 1;
                self.err(format!("'{p}' where a value was expected"))
            }
        }
    }
}

/// Parses `text` as one expression; `base` is its column in the whole
/// text the user gave (errors say columns there).
pub fn parse(text: &str, base: usize) -> Result<Expr, ExprError> {
    let toks = lex(text, base)?;
    let end = base + text.len();
    let mut p = Parser { toks, pos: 0, end };
    let e = p.binary(0)?;
    if p.pos < p.toks.len() {
        return p.err("unexpected text after the expression");
    }
    Ok(e)
}

/// Walks `text` outside quotes (with their escapes), calling `f` with
/// each byte's index, the byte and the parentheses open before it; stops
/// where `f` returns true, with that index.
pub fn scan(text: &str, mut f: impl FnMut(usize, u8, i32) -> bool) -> Option<usize> {
    let (mut depth, mut quote) = (0i32, None);
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) => {
                if c == b'\\' {
                    i += 1;
                } else if c == q {
                    quote = None;
                }
            }
            None => {
                if f(i, c, depth) {
                    return Some(i);
                }
                match c {
                    b'"' | b'\'' => quote = Some(c),
                    b'(' => depth += 1,
                    b')' => depth -= 1,
                    _ => {}
                }
            }
        }
        i += 1;
    }
    None
}

/// Splits `text` at `sep` outside parentheses and quotes, into at most
/// `max` parts (the last takes the rest): each part with its column
/// (`base` the text's own).
pub fn split_top(text: &str, sep: u8, max: usize, base: usize) -> Vec<(usize, &str)> {
    let mut parts = Vec::new();
    let mut start = 0;
    scan(text, |i, c, depth| {
        if c == sep && depth == 0 && parts.len() + 1 < max {
            parts.push((base + start, &text[start..i]));
            start = i + 1;
        }
        false
    });
    parts.push((base + start, &text[start..]));
    parts
}

/// Splits `text` at its top-level commas: each part with its column.
pub fn split_commas(text: &str, base: usize) -> Vec<(usize, &str)> {
    split_top(text, b',', usize::MAX, base)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> i64 {
        let e = parse(text, 0).unwrap();
        eval(&e, &|n| match n {
            Expr::Name(s, _) if s == "arg1" => Value::Int(5),
            Expr::Name(s, _) if s == "retval" => Value::Int(-1),
            Expr::Name(s, _) if s == "name" => Value::Str(b"abc"),
            _ => Value::Int(0),
        })
        .int()
    }

    #[test]
    fn c_precedence_and_operators() {
        assert_eq!(run("1 + 2 * 3"), 7);
        assert_eq!(run("(1 + 2) * 3"), 9);
        assert_eq!(run("arg1 == 5 && retval < 0"), 1);
        assert_eq!(run("arg1 > 5 || !retval"), 0);
        assert_eq!(run("arg1 & 4"), 4);
        assert_eq!(run("1 << 4 | 1"), 17);
        assert_eq!(run("-arg1 / 2"), -2);
        assert_eq!(run("0x10 + 010"), 24);
        assert_eq!(run("'a'"), 97);
        assert_eq!(run("arg1 / 0"), 0);
    }

    #[test]
    fn casts_narrow_as_c_does() {
        assert_eq!(run("(unsigned char)257"), 1);
        assert_eq!(run("(int)0xffffffff"), -1);
        assert_eq!(run("(unsigned int)retval"), 0xffff_ffff);
        assert_eq!(run("(u16)retval == 65535"), 1);
        // A parenthesis that is no type is a grouping.
        assert_eq!(run("(arg1) * 2"), 10);
    }

    #[test]
    fn strcmp_compares_strings() {
        assert_eq!(run("STRCMP(\"abc\", name)"), 1);
        assert_eq!(run("STRCMP(\"ab\", name)"), 0);
    }

    #[test]
    fn members_calls_and_user_suffix() {
        let e = parse("args->filename", 0).unwrap();
        assert_eq!(e, Expr::Member("args".into(), "filename".into(), 6));
        let e = parse("arg2@user", 0).unwrap();
        assert_eq!(e, Expr::Name("arg2".into(), 0));
        let e = parse("$entry(size)", 0).unwrap();
        assert!(matches!(e, Expr::Call(n, a, 0) if n == "$entry" && a.len() == 1));
    }

    #[test]
    fn errors_say_their_column() {
        let e = parse("arg1 == ", 10).unwrap_err();
        assert_eq!(e.column, 18);
        let e = parse("arg1 # 2", 0).unwrap_err();
        assert_eq!(e.column, 5);
        let e = parse("(arg1 == 2", 0).unwrap_err();
        assert_eq!((e.column, e.message.as_str()), (10, "')' expected"));
        assert_eq!(parse("\"abc", 3).unwrap_err().column, 3);
    }

    #[test]
    fn commas_split_at_the_top_level() {
        let parts = split_commas("\"a, b\", STRCMP(\"x\", arg1), arg2", 0);
        let texts: Vec<&str> = parts.iter().map(|p| p.1.trim()).collect();
        assert_eq!(texts, ["\"a, b\"", "STRCMP(\"x\", arg1)", "arg2"]);
        assert_eq!(parts[2].0, 26);
    }
}
