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
