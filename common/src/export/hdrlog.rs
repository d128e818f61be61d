//! `--hdr-log FILE`: each interval's histograms appended to an HdrHistogram
//! interval log (V2 compressed histograms, HdrHistogram's own format), so
//! HdrHistogram's tools can read them and merge them across hosts. One
//! entry per histogram and interval, tagged with its section (`disk=vda`).

use std::fs::File;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use hdrhistogram::serialization::interval_log::{IntervalLogWriter, IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use serde_json::{Map, Value};

use crate::output::file::OutFile;
use crate::output::hist::Section;

pub struct HdrLog {
    writer: IntervalLogWriter<'static, 'static, File, V2DeflateSerializer>,
    /// The log's base time: entries' timestamps are relative to it.
    base: SystemTime,
    /// When the interval being aggregated began.
    interval_start: SystemTime,
}

impl HdrLog {
    /// Creates `path` (before tracing, so a bad path fails first) and
    /// writes the log's header.
    pub fn create(path: &OutFile, what: &str) -> Result<HdrLog> {
        let file = path
            .create_stream()
            .with_context(|| format!("--hdr-log: creating {}", path.display()))?;
        let now = SystemTime::now();
        // The writer borrows its file and serializer for as long as it
        // lives, which is the whole run: give them that lifetime.
        let file: &'static mut File = Box::leak(Box::new(file));
        let serializer: &'static mut V2DeflateSerializer =
            Box::leak(Box::new(V2DeflateSerializer::new()));
        let writer = IntervalLogWriterBuilder::new()
            .add_comment(what)
            .with_start_time(now)
            .with_base_time(now)
            .begin_log_with(file, serializer)
            .with_context(|| format!("--hdr-log: writing {}", path.display()))?;
        Ok(HdrLog {
            writer,
            base: now,
            interval_start: now,
        })
    }

    /// Appends the histograms of the interval that ends now.
    pub fn write(&mut self, sections: &[Section]) -> Result<()> {
        let now = SystemTime::now();
        let start = self
            .interval_start
            .duration_since(self.base)
            .unwrap_or_default();
        let length = now
            .duration_since(self.interval_start)
            .unwrap_or(Duration::ZERO);
        self.interval_start = now;
        for section in sections {
            let Some(h) = &section.hdr else { continue };
            let tag = tag(&section.labels);
            self.writer
                .write_histogram(h, start, length, tag.as_deref().and_then(Tag::new))
                .map_err(|e| anyhow::anyhow!("--hdr-log: writing a histogram: {e:?}"))?;
        }
        Ok(())
    }
}

/// A section's labels as a tag: `disk=vda;flags=Write`. A tag may hold no
/// comma, space or line break: those become `_`.
fn tag(labels: &Map<String, Value>) -> Option<String> {
    if labels.is_empty() {
        return None;
    }
    let text = labels
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join(";");
    Some(
        text.chars()
            .map(|c| {
                if c == ',' || c.is_whitespace() {
                    '_'
                } else {
                    c
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tags_join_labels_without_separators_the_format_forbids() {
        let labels = json!({"pid": 42, "comm": "my prog,x"});
        let Value::Object(labels) = labels else {
            unreachable!()
        };
        assert_eq!(tag(&labels).unwrap(), "comm=my_prog_x;pid=42");
        assert!(Tag::new(&tag(&labels).unwrap()).is_some());
        assert_eq!(tag(&Map::new()), None);
    }
}
