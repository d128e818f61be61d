//! Block devices for the block tools' tests: a loop device of the test's
//! own, the disk under a path, and block I/O by a process only the test
//! runs.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{scratch_dir, unique, unique_copy};

/// A loop device backed by a file in the scratch directory, detached on
/// drop.
pub struct LoopDevice {
    /// `/dev/loopN`.
    pub dev: String,
    backing: PathBuf,
}

impl LoopDevice {
    /// A device of `mib` MiB of zeroes.
    pub fn new(tmp_dir: &str, mib: usize) -> LoopDevice {
        let backing = scratch_dir(tmp_dir).join(unique("bio-loop"));
        fs::write(&backing, vec![0u8; mib << 20]).unwrap();
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&backing)
            .output()
            .expect("losetup (util-linux) is needed");
        assert!(out.status.success(), "losetup: {out:?}");
        let dev = String::from_utf8(out.stdout).unwrap().trim().to_string();
        // udev reads a new device (blkid): let that I/O be over first.
        let _ = Command::new("udevadm").arg("settle").status();
        LoopDevice { dev, backing }
    }

    /// `loopN`, as the tools name disks.
    pub fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        let _ = fs::remove_file(&self.backing);
    }
}

/// BPFTOOLS_DISABLE for the hooks of a kernel before 6.5 without tp_btf:
/// raw_tp, and no block_io_start/block_io_done.
pub const PRE_6_5_RAW_TP: &str = "tp_btf,block_io_start,block_io_done";

/// Checks that a block request tool run with `args` under
/// [`PRE_6_5_RAW_TP`] loads raw_tp block_rq_insert, block_rq_issue and
/// block_rq_complete (its --dry-run's listing, returned).
pub fn assert_pre_6_5_raw_tp_hooks(bin: &str, args: &[&str]) -> String {
    let mut all = vec!["--dry-run"];
    all.extend_from_slice(args);
    let dry = crate::run_with_env(bin, &all, &[("BPFTOOLS_DISABLE", PRE_6_5_RAW_TP)]);
    assert!(dry.status.success(), "{dry:?}");
    let listing = dry.stdout.join("\n");
    for hook in [
        "raw_tp block_rq_insert",
        "raw_tp block_rq_issue",
        "raw_tp block_rq_complete",
    ] {
        assert!(listing.contains(hook), "{hook}: {listing}");
    }
    listing
}

/// An md RAID1 array of two loop devices of the test's own (mdadm),
/// stopped on drop before its members are detached.
pub struct MdArray {
    /// `/dev/mdN`.
    pub dev: String,
    members: [LoopDevice; 2],
}

impl MdArray {
    /// A new array, or None where this kernel has no md (no md_mod or
    /// raid1 to load: said by the caller, which skips).
    pub fn raid1(tmp_dir: &str) -> Option<MdArray> {
        let _ = Command::new("modprobe").args(["-q", "raid1"]).status();
        if !Path::new("/proc/mdstat").exists() {
            return None;
        }
        let members = [LoopDevice::new(tmp_dir, 16), LoopDevice::new(tmp_dir, 16)];
        // A minor no array has: from this process's, and this array's in it.
        static MADE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let dev = loop {
            let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let minor = 300 + (std::process::id() * 8 + n) % 200;
            if !Path::new(&format!("/sys/block/md{minor}")).exists() {
                break format!("/dev/md{minor}");
            }
        };
        let out = Command::new("mdadm")
            .args(["--create", &dev, "--run", "--quiet", "--level=1"])
            .args(["--raid-devices=2", "--metadata=1.2", "--assume-clean"])
            .args([&members[0].dev, &members[1].dev])
            .stdin(Stdio::null())
            .output()
            .expect("mdadm (cargo xtask test installs it)");
        assert!(out.status.success(), "mdadm --create: {out:?}");
        let _ = Command::new("udevadm").arg("settle").status();
        Some(MdArray { dev, members })
    }

    /// `mdN`, as the tools name it.
    pub fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }
}

impl Drop for MdArray {
    fn drop(&mut self) {
        // udev may still hold the array (a probe of the new disk).
        let stop = || {
            let _ = Command::new("udevadm").arg("settle").status();
            Command::new("mdadm")
                .args(["--stop", "--quiet", &self.dev])
                .status()
                .is_ok_and(|s| s.success())
        };
        if !stop() && !stop() {
            eprintln!(
                "mdadm --stop {} failed: the array is left assembled",
                self.dev
            );
        }
        for m in &self.members {
            let _ = Command::new("mdadm")
                .args(["--zero-superblock", "--quiet", &m.dev])
                .status();
        }
    }
}

/// The whole disk under a path, from its st_dev (vda for /dev/vda1).
pub fn disk_of(path: &Path) -> String {
    let dev = fs::metadata(path).unwrap().dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let sys = fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).unwrap();
    let disk = if sys.join("partition").exists() {
        sys.parent().unwrap().to_path_buf()
    } else {
        sys
    };
    disk.file_name().unwrap().to_str().unwrap().to_string()
}

/// dd copied under a unique name: block I/O that only this test's process
/// does, found by its comm.
pub struct Dd {
    pub path: PathBuf,
}

/// O_DIRECT I/O of `count` blocks of `bs` bytes, from block `skip` (reads)
/// or `seek` (writes) on; each block is one request.
#[derive(Clone, Copy, Debug)]
pub enum Direct {
    Read { bs: u64, skip: u64, count: u64 },
    Write { bs: u64, seek: u64, count: u64 },
}

impl Dd {
    pub fn new(prefix: &str) -> Dd {
        Dd {
            path: unique_copy(prefix, "/bin/dd"),
        }
    }

    /// The system's dd, for I/O whose process does not matter.
    pub fn system() -> Dd {
        Dd {
            path: PathBuf::from("/bin/dd"),
        }
    }

    /// The comm its processes have.
    pub fn comm(&self) -> &str {
        self.path.file_name().unwrap().to_str().unwrap()
    }

    /// The command for `io` on `target`, not started.
    pub fn command(&self, target: &Path, io: Direct) -> Command {
        let mut cmd = Command::new(&self.path);
        let t = target.display();
        match io {
            Direct::Read { bs, skip, count } => cmd.args([
                format!("if={t}"),
                "of=/dev/null".into(),
                "iflag=direct".into(),
                format!("bs={bs}"),
                format!("skip={skip}"),
                format!("count={count}"),
            ]),
            Direct::Write { bs, seek, count } => cmd.args([
                "if=/dev/zero".into(),
                format!("of={t}"),
                "oflag=direct".into(),
                "conv=notrunc".into(),
                format!("bs={bs}"),
                format!("seek={seek}"),
                format!("count={count}"),
            ]),
        };
        cmd.stderr(Stdio::null());
        cmd
    }

    /// Runs `io` on `target` to the end; returns its pid.
    pub fn run(&self, target: &Path, io: Direct) -> u32 {
        let mut child = self.command(target, io).spawn().unwrap();
        let pid = child.id();
        let status = child.wait().unwrap();
        assert!(status.success(), "{} {io:?}: {status}", self.comm());
        pid
    }
}

/// A file system of the test's own, mounted on a directory under the
/// scratch directory; unmounted (and its loop device detached) on drop.
pub struct Mount {
    pub dir: PathBuf,
    _device: Option<LoopDevice>,
}

impl Mount {
    /// A fresh ext4 file system of `mib` MiB on a loop device.
    pub fn ext4(tmp_dir: &str, mib: usize) -> Mount {
        Mount::formatted(tmp_dir, mib, "ext4", "-F", "e2fsprogs")
    }

    /// A fresh xfs of `mib` MiB (300 at least, mkfs.xfs's floor) on a loop
    /// device; None where this kernel cannot mount xfs.
    pub fn xfs(tmp_dir: &str, mib: usize) -> Option<Mount> {
        let known = || {
            fs::read_to_string("/proc/filesystems")
                .unwrap_or_default()
                .lines()
                .any(|l| l.trim() == "xfs")
        };
        if !known() {
            let _ = Command::new("modprobe").arg("xfs").status();
            if !known() {
                return None;
            }
        }
        Some(Mount::formatted(tmp_dir, mib, "xfs", "-f", "xfsprogs"))
    }

    /// A loop device of `mib` MiB made file system `kind` by mkfs.`kind`
    /// (`force`: its option to write over what is there; `package`: where
    /// mkfs comes from), mounted.
    fn formatted(tmp_dir: &str, mib: usize, kind: &str, force: &str, package: &str) -> Mount {
        let device = LoopDevice::new(tmp_dir, mib);
        let status = Command::new(format!("mkfs.{kind}"))
            .args(["-q", force, &device.dev])
            .stdout(Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("mkfs.{kind} ({package}) is needed: {e}"));
        assert!(status.success(), "mkfs.{kind} {}: {status}", device.dev);
        let dev = device.dev.clone();
        Mount::new(tmp_dir, &["-t", kind, &dev], Some(device))
    }

    /// A tmpfs.
    pub fn tmpfs(tmp_dir: &str) -> Mount {
        Mount::new(tmp_dir, &["-t", "tmpfs", "tmpfs"], None)
    }

    fn new(tmp_dir: &str, args: &[&str], device: Option<LoopDevice>) -> Mount {
        let dir = scratch_dir(tmp_dir).join(unique("mnt"));
        fs::create_dir(&dir).unwrap();
        let status = Command::new("mount").args(args).arg(&dir).status().unwrap();
        assert!(
            status.success(),
            "mount {args:?} {}: {status}",
            dir.display()
        );
        Mount {
            dir,
            _device: device,
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
        let _ = fs::remove_dir(&self.dir);
    }
}
