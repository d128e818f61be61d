//! Tracepoints by category and event patterns, from tracefs.

use anyhow::{Context, Result};

use super::Pattern;

/// A tracepoint and its event id (the first field of its records).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracepoint {
    pub category: String,
    pub event: String,
    pub id: u32,
}

/// The tracepoints whose category and event match, sorted.
pub fn matching(category: &Pattern, event: &Pattern) -> Result<Vec<Tracepoint>> {
    let root = crate::kernel::tracefs::mount_point()?.join("events");
    let mut out = Vec::new();
    let dir = std::fs::read_dir(&root).with_context(|| format!("listing {}", root.display()))?;
    for cat in dir.flatten() {
        let cat_name = cat.file_name().to_string_lossy().into_owned();
        if !cat.path().is_dir() || !category.matches(&cat_name) {
            continue;
        }
        let Ok(events) = std::fs::read_dir(cat.path()) else {
            continue;
        };
        for ev in events.flatten() {
            let ev_name = ev.file_name().to_string_lossy().into_owned();
            if !event.matches(&ev_name) {
                continue;
            }
            let Ok(id) = std::fs::read_to_string(ev.path().join("id")) else {
                continue;
            };
            let Ok(id) = id.trim().parse() else { continue };
            out.push(Tracepoint {
                category: cat_name.clone(),
                event: ev_name,
                id,
            });
        }
    }
    out.sort_by(|a, b| (&a.category, &a.event).cmp(&(&b.category, &b.event)));
    Ok(out)
}

/// What a tracepoint field holds, as its format declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// An integer (or an enum, a bool).
    Int,
    /// A pointer: its value; `%s` reads a string there.
    Pointer,
    /// A char array held in the record (`char comm[16]`).
    Chars,
    /// A string elsewhere in the record (`__data_loc char[] name`): the
    /// field holds its offset (low 16 bits) and length (high 16).
    DataLoc,
}

/// One field of a tracepoint's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    /// As the format declares it (`const char * filename`).
    pub decl: String,
    pub offset: u32,
    pub size: u32,
    pub signed: bool,
    pub kind: FieldKind,
}

/// The fields of `category:event`'s record after the common ones, as its
/// tracefs format lists them.
pub fn format(category: &str, event: &str) -> Result<Vec<Field>> {
    let path = crate::kernel::tracefs::mount_point()?
        .join("events")
        .join(category)
        .join(event)
        .join("format");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    Ok(parse_format(&text))
}

/// The fields of a tracefs format file (lines of `field:DECL;
/// offset:N; size:N; signed:N;`), the common ones left out.
pub fn parse_format(text: &str) -> Vec<Field> {
    let mut fields = Vec::new();
    for line in text.lines() {
        let mut decl = None;
        let (mut offset, mut size, mut signed) = (None, None, false);
        for part in line.trim().split(';') {
            let part = part.trim();
            if let Some(d) = part.strip_prefix("field:") {
                decl = Some(d.trim());
            } else if let Some(v) = part.strip_prefix("offset:") {
                offset = v.parse().ok();
            } else if let Some(v) = part.strip_prefix("size:") {
                size = v.parse().ok();
            } else if let Some(v) = part.strip_prefix("signed:") {
                signed = v == "1";
            }
        }
        let (Some(decl), Some(offset), Some(size)) = (decl, offset, size) else {
            continue;
        };
        // The name: the declaration's last word, without an array's size.
        let last = decl.rsplit([' ', '*']).next().unwrap_or(decl);
        let name = last.split('[').next().unwrap_or(last).to_string();
        if name.starts_with("common_") || name.is_empty() {
            continue;
        }
        let kind = if decl.starts_with("__data_loc") {
            FieldKind::DataLoc
        } else if decl.contains('*') {
            FieldKind::Pointer
        } else if last.contains('[') && decl.contains("char") {
            FieldKind::Chars
        } else {
            FieldKind::Int
        };
        fields.push(Field {
            name,
            decl: decl.to_string(),
            offset,
            size,
            signed,
            kind,
        });
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_give_each_field_its_kind() {
        let text = "name: x\nID: 1\nformat:\n\
            \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
            \n\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\
            \tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n\
            \tfield:__data_loc char[] name;\toffset:32;\tsize:4;\tsigned:0;\n\
            \tfield:char comm[16];\toffset:36;\tsize:16;\tsigned:0;\n\
            \tfield:pid_t pid;\toffset:52;\tsize:4;\tsigned:1;\n\nprint fmt: \"x\"\n";
        let f = parse_format(text);
        let kinds: Vec<(&str, FieldKind, u32)> = f
            .iter()
            .map(|f| (f.name.as_str(), f.kind, f.offset))
            .collect();
        assert_eq!(
            kinds,
            [
                ("__syscall_nr", FieldKind::Int, 8),
                ("filename", FieldKind::Pointer, 24),
                ("name", FieldKind::DataLoc, 32),
                ("comm", FieldKind::Chars, 36),
                ("pid", FieldKind::Int, 52),
            ]
        );
        assert!(f[4].signed && !f[1].signed);
    }
}
