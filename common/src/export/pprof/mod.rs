//! `--pprof FILE`: stacks and their values as a gzipped profile.proto, what
//! `go tool pprof`, Pyroscope, Parca and Grafana read.
//!
//! The protobuf code is prost's, generated from pprof's own profile.proto
//! (`cargo xtask protos`). Frames become locations (one per address, per
//! process for user addresses) with one function each; kernel frames sit
//! in a `[kernel.kallsyms]` mapping as perf's converters put them, user
//! frames in a mapping per object file, so a consumer can tell them apart.
//! Every location is already symbolized: the mappings say so, and a
//! consumer does not look for the binaries.

use crate::output::file::OutFile;
use std::collections::HashMap;
use std::io::Write;

use anyhow::{Context, Result};
use prost::Message;

use crate::sym::{Frame, Part};

#[allow(clippy::all, missing_docs)]
mod profile;
pub use profile::Profile;

/// The mapping kernel frames belong to (perf's name for the kernel image).
pub const KERNEL_MAPPING: &str = "[kernel.kallsyms]";

/// A sample's label: a string (`comm`) or a number (`pid`).
pub enum Label<'a> {
    Str(&'a str, &'a str),
    Num(&'a str, i64),
}

/// A profile under construction: string, function, location and mapping
/// tables deduplicated as samples are added.
pub struct Builder {
    profile: Profile,
    strings: HashMap<String, i64>,
    /// (name, file) → function id.
    functions: HashMap<(i64, i64), u64>,
    /// (pid, or 0 for the kernel; address) → location id.
    locations: HashMap<(u32, u64), u64>,
    /// File name → mapping id.
    mappings: HashMap<String, u64>,
    /// Locations for missed stacks, by their name.
    missed: HashMap<&'static str, u64>,
}

impl Builder {
    /// A profile whose samples carry one value per `sample_types` entry
    /// (type, unit), the first shown by default unless `default` names
    /// another. `duration_ns`: how long the tool traced.
    pub fn new(sample_types: &[(&str, &str)], default: &str, duration_ns: u64) -> Builder {
        let mut b = Builder {
            profile: Profile::default(),
            strings: HashMap::new(),
            functions: HashMap::new(),
            locations: HashMap::new(),
            mappings: HashMap::new(),
            missed: HashMap::new(),
        };
        // string_table[0] must be "".
        b.string("");
        for (kind, unit) in sample_types {
            let vt = profile::ValueType {
                r#type: b.string(kind),
                unit: b.string(unit),
            };
            b.profile.sample_type.push(vt);
        }
        b.profile.default_sample_type = b.string(default);
        b.profile.duration_nanos = duration_ns as i64;
        b.profile.time_nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i64)
            - duration_ns as i64;
        b
    }

    fn string(&mut self, s: &str) -> i64 {
        if let Some(i) = self.strings.get(s) {
            return *i;
        }
        let i = self.profile.string_table.len() as i64;
        self.profile.string_table.push(s.to_string());
        self.strings.insert(s.to_string(), i);
        i
    }

    fn mapping(&mut self, file: &str) -> u64 {
        if let Some(id) = self.mappings.get(file) {
            return *id;
        }
        let id = self.profile.mapping.len() as u64 + 1;
        let filename = self.string(file);
        self.profile.mapping.push(profile::Mapping {
            id,
            filename,
            // Symbolized here: a consumer must not look for the file.
            has_functions: true,
            has_filenames: true,
            has_line_numbers: true,
            ..Default::default()
        });
        self.mappings.insert(file.to_string(), id);
        id
    }

    fn function(&mut self, name: &str, file: &str) -> u64 {
        let key = (self.string(name), self.string(file));
        if let Some(id) = self.functions.get(&key) {
            return *id;
        }
        let id = self.profile.function.len() as u64 + 1;
        self.profile.function.push(profile::Function {
            id,
            name: key.0,
            system_name: key.0,
            filename: key.1,
            start_line: 0,
        });
        self.functions.insert(key, id);
        id
    }

    /// The location of one frame: `pid` 0 for a kernel frame.
    fn location(&mut self, pid: u32, frame: &Frame) -> u64 {
        if let Some(id) = self.locations.get(&(pid, frame.addr)) {
            return *id;
        }
        let mapping_id = match (pid, &frame.module) {
            (0, _) => self.mapping(KERNEL_MAPPING),
            (_, Some(module)) => self.mapping(module),
            (_, None) => 0,
        };
        let (file, line) = match frame.source.as_deref().and_then(|s| s.rsplit_once(':')) {
            Some((file, line)) => (file, line.parse().unwrap_or(0)),
            None => (frame.source.as_deref().unwrap_or(""), 0),
        };
        // An unknown frame keeps only its address, which pprof shows.
        let lines = match &frame.name {
            Some(name) => vec![profile::Line {
                function_id: self.function(name, file),
                line,
                column: 0,
            }],
            None => Vec::new(),
        };
        let id = self.profile.location.len() as u64 + 1;
        self.profile.location.push(profile::Location {
            id,
            mapping_id,
            address: frame.addr,
            line: lines,
            is_folded: false,
        });
        self.locations.insert((pid, frame.addr), id);
        id
    }

    fn missed_location(&mut self, name: &'static str) -> u64 {
        if let Some(id) = self.missed.get(name) {
            return *id;
        }
        let function_id = self.function(name, "");
        let id = self.profile.location.len() as u64 + 1;
        self.profile.location.push(profile::Location {
            id,
            line: vec![profile::Line {
                function_id,
                ..Default::default()
            }],
            ..Default::default()
        });
        self.missed.insert(name, id);
        id
    }

    fn push_part(
        &mut self,
        ids: &mut Vec<u64>,
        part: &Part,
        pid: u32,
        missed: &'static str,
        root_first: bool,
    ) {
        match part {
            Part::Absent => {}
            Part::Missed => ids.push(self.missed_location(missed)),
            Part::Frames(frames) if root_first => {
                for f in frames.iter().rev() {
                    ids.push(self.location(pid, f));
                }
            }
            Part::Frames(frames) => {
                for f in frames {
                    ids.push(self.location(pid, f));
                }
            }
        }
    }

    /// One sample: its kernel frames then its user frames (process `pid`),
    /// each leaf first, with one value per sample type.
    pub fn add(&mut self, kernel: &Part, user: &Part, pid: u32, values: &[i64], labels: &[Label]) {
        let mut location_id = Vec::new();
        self.push_part(&mut location_id, kernel, 0, "[Missed Kernel Stack]", false);
        self.push_part(&mut location_id, user, pid, "[Missed User Stack]", false);
        self.push_sample(location_id, values, labels);
    }

    /// One sample of a blocked stack joined with its waker's (offwaketime),
    /// shaped as its folded line: from the root, the woken task's user and
    /// kernel frames, a `--` frame, then the waker's kernel and user
    /// frames leaf first (process `waker_pid`), its root the sample's leaf.
    pub fn add_woken(
        &mut self,
        (kernel, user, pid): (&Part, &Part, u32),
        (waker_kernel, waker_user, waker_pid): (&Part, &Part, u32),
        values: &[i64],
        labels: &[Label],
    ) {
        let mut location_id = Vec::new();
        self.push_part(
            &mut location_id,
            waker_user,
            waker_pid,
            "[Missed User Stack]",
            true,
        );
        self.push_part(
            &mut location_id,
            waker_kernel,
            0,
            "[Missed Kernel Stack]",
            true,
        );
        location_id.push(self.missed_location("--"));
        self.push_part(&mut location_id, kernel, 0, "[Missed Kernel Stack]", false);
        self.push_part(&mut location_id, user, pid, "[Missed User Stack]", false);
        self.push_sample(location_id, values, labels);
    }

    fn push_sample(&mut self, location_id: Vec<u64>, values: &[i64], labels: &[Label]) {
        let label = labels
            .iter()
            .map(|l| match l {
                Label::Str(key, value) => profile::Label {
                    key: self.string(key),
                    str: self.string(value),
                    ..Default::default()
                },
                Label::Num(key, value) => profile::Label {
                    key: self.string(key),
                    num: *value,
                    ..Default::default()
                },
            })
            .collect();
        self.profile.sample.push(profile::Sample {
            location_id,
            value: values.to_vec(),
            label,
        });
    }

    /// The finished profile.
    pub fn finish(mut self) -> Profile {
        // pprof takes the first mapping for the main binary (its "File:"):
        // the kernel's goes last.
        if let Some(kernel) = self.mappings.get(KERNEL_MAPPING).copied() {
            let last = self.profile.mapping.len() as u64;
            let renumber = |id: u64| match id {
                0 => 0,
                id if id == kernel => last,
                id if id > kernel => id - 1,
                id => id,
            };
            let m = self.profile.mapping.remove(kernel as usize - 1);
            self.profile.mapping.push(m);
            for (i, m) in self.profile.mapping.iter_mut().enumerate() {
                m.id = i as u64 + 1;
            }
            for loc in &mut self.profile.location {
                loc.mapping_id = renumber(loc.mapping_id);
            }
        }
        self.profile
    }
}

/// A profile as pprof stores it: gzipped protobuf.
pub fn encode(profile: &Profile) -> Result<Vec<u8>> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&profile.encode_to_vec())?;
    Ok(gz.finish()?)
}

/// A profile read back from [`encode`]'s bytes (the tests' check).
pub fn decode(gzipped: &[u8]) -> Result<Profile> {
    let mut raw = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(gzipped), &mut raw)?;
    Ok(Profile::decode(raw.as_slice())?)
}

/// `--pprof FILE`: where a tool writes its profile, replaced whole at
/// each report (the path was checked when parsed).
pub struct Output {
    path: OutFile,
}

impl Output {
    pub fn create(path: &OutFile) -> Result<Output> {
        use std::io::IsTerminal;
        if path.is_stdout() && std::io::stdout().is_terminal() {
            return Err(crate::usage::usage(
                "--pprof -: a profile is binary; redirect standard output to a file",
            ));
        }
        Ok(Output { path: path.clone() })
    }

    pub fn write(&self, profile: &Profile) -> Result<()> {
        self.path
            .write(&encode(profile)?)
            .with_context(|| format!("--pprof: writing {}", self.path.display()))
    }

    pub fn path(&self) -> &OutFile {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::*;

    fn frame(
        addr: u64,
        name: Option<&str>,
        module: Option<&str>,
        source: Option<&str>,
    ) -> Rc<Frame> {
        Rc::new(Frame {
            addr,
            name: name.map(str::to_string),
            offset: 0,
            module: module.map(str::to_string),
            source: source.map(str::to_string),
        })
    }

    #[test]
    fn samples_share_locations_functions_and_strings() {
        let mut b = Builder::new(&[("offcpu", "nanoseconds")], "offcpu", 5_000_000_000);
        let kernel = Part::Frames(vec![frame(0xffff1, Some("schedule"), None, None)]);
        let user = Part::Frames(vec![
            frame(0x401000, Some("inner"), Some("app"), Some("app.c:12")),
            frame(0x402000, None, Some("app"), None),
        ]);
        b.add(
            &kernel,
            &user,
            7,
            &[100],
            &[Label::Str("comm", "app"), Label::Num("pid", 7)],
        );
        b.add(
            &kernel,
            &Part::Missed,
            8,
            &[50],
            &[Label::Str("comm", "app")],
        );
        let p = decode(&encode(&b.finish()).unwrap()).unwrap();
        let s = |i: i64| p.string_table[i as usize].as_str();
        assert_eq!(s(0), "");
        assert_eq!(p.sample.len(), 2);
        assert_eq!(p.sample[0].location_id, [1, 2, 3]);
        // The kernel frame is one location for both samples.
        assert_eq!(p.sample[1].location_id[0], 1);
        assert_eq!(p.sample[1].location_id.len(), 2);
        assert_eq!(p.location.len(), 4);
        let mapping = |loc: &profile::Location| {
            let m = &p.mapping[loc.mapping_id as usize - 1];
            s(m.filename)
        };
        assert_eq!(mapping(&p.location[0]), KERNEL_MAPPING);
        assert_eq!(mapping(&p.location[1]), "app");
        // The kernel's mapping is not taken for the main binary.
        assert_eq!(s(p.mapping[0].filename), "app");
        assert!(p
            .mapping
            .iter()
            .enumerate()
            .all(|(i, m)| m.id == i as u64 + 1));
        let inner = &p.function[p.location[1].line[0].function_id as usize - 1];
        assert_eq!((s(inner.name), s(inner.filename)), ("inner", "app.c"));
        assert_eq!(p.location[1].line[0].line, 12);
        // Unknown frames keep their address and no function.
        assert!(p.location[2].line.is_empty());
        assert_eq!(p.location[2].address, 0x402000);
        let missed = &p.function[p.location[3].line[0].function_id as usize - 1];
        assert_eq!(s(missed.name), "[Missed User Stack]");
        assert_eq!(p.sample[0].label[1].num, 7);
        assert_eq!(s(p.sample[0].label[0].str), "app");
        assert_eq!(s(p.sample_type[0].unit), "nanoseconds");
        assert_eq!(p.duration_nanos, 5_000_000_000);
    }
}
