//! `go tool pprof`, the reference reader of the profiles `--pprof` writes.

use std::path::Path;
use std::process::Command;

/// One row of `go tool pprof -top`: a function, its flat and cumulative
/// values in the sample type's unit.
#[derive(Debug)]
pub struct Row {
    pub name: String,
    pub flat: u64,
    pub cum: u64,
}

/// `go tool pprof -top` of the profile at `path` for `sample_index`
/// (empty: the default), values shown in `unit` (`ns`, `B`, or empty
/// for counts); the header lines and the rows. Fails when pprof
/// rejects the file.
pub fn top(path: &Path, sample_index: &str, unit: &str) -> (String, Vec<Row>) {
    let mut cmd = Command::new("go");
    cmd.args(["tool", "pprof", "-top", "-nodecount=1000"]);
    if !sample_index.is_empty() {
        cmd.arg(format!("-sample_index={sample_index}"));
    }
    if !unit.is_empty() {
        cmd.arg(format!("-unit={unit}"));
    }
    // pprof keeps a cache of fetched profiles in $HOME/pprof.
    cmd.env("PPROF_TMPDIR", std::env::temp_dir());
    let out = cmd
        .arg(path)
        .output()
        .expect("go (package golang-go; cargo xtask test installs it)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "go tool pprof: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    let value = |s: &str| {
        s.trim_end_matches(|c: char| c.is_ascii_alphabetic())
            .parse()
    };
    let mut header = String::new();
    let mut rows = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match (f.len() >= 6, f.first().map(|v| value(v))) {
            (true, Some(Ok(flat))) => rows.push(Row {
                flat,
                cum: value(f[3]).unwrap_or_else(|_| panic!("cum in {line}")),
                name: f[5..].join(" "),
            }),
            _ => {
                header.push_str(line);
                header.push('\n');
            }
        }
    }
    (header, rows)
}

/// The row of `function`, or a failure showing all of them.
pub fn row<'a>(rows: &'a [Row], function: &str) -> &'a Row {
    rows.iter()
        .find(|r| r.name == function)
        .unwrap_or_else(|| panic!("no {function} in pprof's top: {rows:#?}"))
}

/// `go tool pprof -tags` of the profile at `path`: each label's values,
/// as pprof lists them.
pub fn tags(path: &Path) -> String {
    let out = Command::new("go")
        .args(["tool", "pprof", "-tags"])
        .env("PPROF_TMPDIR", std::env::temp_dir())
        .arg(path)
        .output()
        .expect("go (package golang-go; cargo xtask test installs it)");
    assert!(
        out.status.success(),
        "go tool pprof -tags: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
