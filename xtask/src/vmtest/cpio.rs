//! A cpio archive in the "newc" format, the one the kernel unpacks as an
//! initramfs: a 110-byte ASCII header per entry, the name and the data each
//! padded to 4 bytes, and a TRAILER!!! entry at the end.

/// An archive being written, in memory.
#[derive(Default)]
pub struct Archive {
    bytes: Vec<u8>,
    inode: u32,
}

const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const S_IFCHR: u32 = 0o020000;

impl Archive {
    fn entry(&mut self, name: &str, mode: u32, rdev: (u32, u32), data: &[u8]) {
        self.inode += 1;
        let fields = [
            self.inode,
            mode,
            0, // uid
            0, // gid
            if mode & S_IFDIR != 0 { 2 } else { 1 },
            0, // mtime
            data.len() as u32,
            0, // dev major
            0, // dev minor
            rdev.0,
            rdev.1,
            name.len() as u32 + 1,
            0, // check
        ];
        self.bytes.extend_from_slice(b"070701");
        for f in fields {
            self.bytes.extend_from_slice(format!("{f:08x}").as_bytes());
        }
        self.bytes.extend_from_slice(name.as_bytes());
        self.bytes.push(0);
        self.pad();
        self.bytes.extend_from_slice(data);
        self.pad();
    }

    fn pad(&mut self) {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
    }

    pub fn dir(&mut self, name: &str) {
        self.entry(name, S_IFDIR | 0o755, (0, 0), &[]);
    }

    pub fn file(&mut self, name: &str, mode: u32, data: &[u8]) {
        self.entry(name, S_IFREG | mode, (0, 0), data);
    }

    pub fn char_device(&mut self, name: &str, major: u32, minor: u32) {
        self.entry(name, S_IFCHR | 0o600, (major, minor), &[]);
    }

    pub fn finish(mut self) -> Vec<u8> {
        self.entry("TRAILER!!!", 0, (0, 0), &[]);
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_newc_headers_with_padded_names_and_data() {
        let mut a = Archive::default();
        a.file("init", 0o755, b"#!/bin/sh\n");
        let bytes = a.finish();
        assert_eq!(&bytes[..6], b"070701");
        let header = std::str::from_utf8(&bytes[6..110]).unwrap();
        let field = |i: usize| u32::from_str_radix(&header[i * 8..i * 8 + 8], 16).unwrap();
        assert_eq!(field(1), 0o100755);
        assert_eq!(field(6), 10);
        assert_eq!(field(11), 5);
        assert_eq!(&bytes[110..115], b"init\0");
        // Header and name (115 bytes) padded to 116, then the data.
        assert_eq!(&bytes[116..126], b"#!/bin/sh\n");
        assert_eq!(bytes.len() % 4, 0);
        let trailer = bytes.windows(10).position(|w| w == b"TRAILER!!!");
        assert!(trailer.is_some());
    }
}
