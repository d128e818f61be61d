//! perf's side band: a dummy software event on every online CPU whose ring
//! receives the kernel's records of every task's executable mappings
//! (PERF_RECORD_MMAP2), execs (COMM with the exec flag), forks and exits,
//! as they happen. This is how perf knows the memory map of a process
//! that is gone by the time its samples are symbolized.

use std::os::fd::{AsRawFd, OwnedFd};

use anyhow::{Context, Result};
use libbpf_rs::libbpf_sys as sys;

/// One record of the side band, as the stack tools use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// A file mapped executable by process `pid`.
    Mmap {
        pid: u32,
        start: u64,
        len: u64,
        pgoff: u64,
        dev: (u32, u32),
        ino: u64,
        /// As the process named it (in its own mount namespace).
        path: String,
    },
    /// Process `pid` executed a new program: its old mappings are gone.
    Exec { pid: u32 },
    /// A new process `pid`, forked from `parent` (threads are not listed).
    Fork { pid: u32, parent: u32 },
    /// Process `pid` has exited (its last thread).
    Exit { pid: u32 },
    /// The ring was full: this many records were lost.
    Lost(u64),
}

// include/uapi/linux/perf_event.h
const PERF_RECORD_LOST: u32 = 2;
const PERF_RECORD_COMM: u32 = 3;
const PERF_RECORD_EXIT: u32 = 4;
const PERF_RECORD_FORK: u32 = 7;
const PERF_RECORD_MMAP2: u32 = 10;
const PERF_RECORD_MISC_COMM_EXEC: u16 = 1 << 13;
const PERF_RECORD_MISC_MMAP_BUILD_ID: u16 = 1 << 14;
const PERF_COUNT_SW_DUMMY: u64 = 9;

/// Data pages of each CPU's ring (a power of two): 256 KiB, room for
/// the mappings of about a thousand execs between two reads.
const RING_PAGES: usize = 64;

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// A record's fields (the 8-byte header included) into a [`Record`], with
/// its time from the trailing sample_id (TID, TIME: the time is last).
/// None for the records the stack tools need not know.
pub fn parse(rec: &[u8]) -> Option<(u64, Record)> {
    let kind = u32_at(rec, 0)?;
    let misc = u16::from_ne_bytes(rec.get(4..6)?.try_into().ok()?);
    let time = u64_at(rec, rec.len().checked_sub(8)?)?;
    let record = match kind {
        PERF_RECORD_MMAP2 if misc & PERF_RECORD_MISC_MMAP_BUILD_ID == 0 => {
            // The name ends at its NUL, before the padding and sample_id.
            let name = rec.get(72..)?;
            let end = name.iter().position(|b| *b == 0)?;
            Record::Mmap {
                pid: u32_at(rec, 8)?,
                start: u64_at(rec, 16)?,
                len: u64_at(rec, 24)?,
                pgoff: u64_at(rec, 32)?,
                dev: (u32_at(rec, 40)?, u32_at(rec, 44)?),
                ino: u64_at(rec, 48)?,
                path: String::from_utf8_lossy(&name[..end]).into_owned(),
            }
        }
        PERF_RECORD_COMM if misc & PERF_RECORD_MISC_COMM_EXEC != 0 => Record::Exec {
            pid: u32_at(rec, 8)?,
        },
        PERF_RECORD_FORK => {
            let (pid, parent) = (u32_at(rec, 8)?, u32_at(rec, 12)?);
            if pid == parent {
                return None;
            }
            Record::Fork { pid, parent }
        }
        // A thread's exit carries its process's pid and its own tid.
        PERF_RECORD_EXIT if u32_at(rec, 8)? == u32_at(rec, 16)? => Record::Exit {
            pid: u32_at(rec, 8)?,
        },
        PERF_RECORD_LOST => Record::Lost(u64_at(rec, 16)?),
        _ => return None,
    };
    Some((time, record))
}

/// One CPU's side-band event and its ring.
struct Ring {
    fd: OwnedFd,
    map: memmap2::MmapRaw,
}

// The ring's control page: data_head and data_tail (perf_event_mmap_page).
const DATA_HEAD: usize = 1024;
const DATA_TAIL: usize = 1032;

impl Ring {
    fn open(cpu: u32) -> std::io::Result<Ring> {
        let mut a = sys::perf_event_attr {
            size: std::mem::size_of::<sys::perf_event_attr>() as u32,
            type_: sys::PERF_TYPE_SOFTWARE,
            config: PERF_COUNT_SW_DUMMY,
            sample_type: (sys::PERF_SAMPLE_TID | sys::PERF_SAMPLE_TIME) as u64,
            ..Default::default()
        };
        a.set_mmap(1);
        a.set_mmap2(1);
        a.set_comm(1);
        a.set_comm_exec(1);
        a.set_task(1);
        a.set_sample_id_all(1);
        // One clock on every CPU, so that the rings' records can be put
        // in order.
        a.set_use_clockid(1);
        a.clockid = libc::CLOCK_MONOTONIC;
        // Wake the reader at every record: a process living 100 ms must
        // have its files opened while they are still there.
        a.__bindgen_anon_2.wakeup_events = 1;
        let fd = super::perf::event_open(&a, cpu)?;
        let map = memmap2::MmapOptions::new()
            .len(page_size() * (1 + RING_PAGES))
            .map_raw(fd.as_raw_fd())?;
        Ok(Ring { fd, map })
    }

    /// Every record written since the last read, each whole.
    fn read(&mut self, out: &mut Vec<(u64, Record)>) {
        let base = self.map.as_mut_ptr();
        let page = page_size();
        let size = page * RING_PAGES;
        // SAFETY: the control page is mapped for as long as `self.map`;
        // data_head is written by the kernel, read here with acquire
        // ordering (as perf does) before the data it covers.
        let head = unsafe {
            let p = base.add(DATA_HEAD) as *const std::sync::atomic::AtomicU64;
            (*p).load(std::sync::atomic::Ordering::Acquire)
        };
        // SAFETY: data_tail is ours to write, read by the kernel.
        let tail_ptr = unsafe { base.add(DATA_TAIL) as *const std::sync::atomic::AtomicU64 };
        // SAFETY: as above.
        let mut tail = unsafe { (*tail_ptr).load(std::sync::atomic::Ordering::Relaxed) };
        // SAFETY: the data pages follow the control page in the mapping.
        let data = unsafe { std::slice::from_raw_parts(base.add(page), size) };
        let mut rec = Vec::new();
        while tail < head {
            let at = (tail as usize) % size;
            let byte = |i: usize| data[(at + i) % size];
            let len = u16::from_ne_bytes([byte(6), byte(7)]) as usize;
            if len < 8 {
                break;
            }
            rec.clear();
            rec.extend((0..len).map(byte));
            if let Some(r) = parse(&rec) {
                out.push(r);
            }
            tail += len as u64;
        }
        // SAFETY: as above; release: the records are read before the
        // kernel may write over them.
        unsafe { (*tail_ptr).store(tail, std::sync::atomic::Ordering::Release) };
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
}

/// The side band on every online CPU.
pub struct SideBand {
    rings: Vec<Ring>,
}

impl SideBand {
    /// Opens an event and its ring on each online CPU.
    pub fn open() -> Result<SideBand> {
        let rings = super::perf::online_cpus()?
            .into_iter()
            .map(|cpu| {
                Ring::open(cpu).with_context(|| format!("perf side-band event on CPU {cpu}"))
            })
            .collect::<Result<_>>()?;
        Ok(SideBand { rings })
    }

    /// The rings' descriptors, for [`wait`].
    pub fn fds(&self) -> Vec<std::os::fd::RawFd> {
        self.rings.iter().map(|r| r.fd.as_raw_fd()).collect()
    }

    /// Every CPU's new records, in the order they happened.
    pub fn read(&mut self) -> Vec<Record> {
        let mut all = Vec::new();
        for ring in &mut self.rings {
            ring.read(&mut all);
        }
        // Stable: one CPU's records keep their order where times tie.
        all.sort_by_key(|(time, _)| *time);
        all.into_iter().map(|(_, r)| r).collect()
    }
}

/// Waits up to `timeout` for a record in any of the rings of `fds`
/// ([`SideBand::fds`], which must stay open meanwhile).
pub fn wait(fds: &[std::os::fd::RawFd], timeout: std::time::Duration) {
    let mut fds: Vec<libc::pollfd> = fds
        .iter()
        .map(|fd| libc::pollfd {
            fd: *fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: `fds` is a valid array of pollfd for the call.
    unsafe {
        libc::poll(
            fds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            timeout.as_millis() as libc::c_int,
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: u32, misc: u16, body: &[u8], time: u64) -> Vec<u8> {
        let mut r = Vec::new();
        let len = 8 + body.len() + 16;
        r.extend(kind.to_ne_bytes());
        r.extend(misc.to_ne_bytes());
        r.extend((len as u16).to_ne_bytes());
        r.extend(body);
        r.extend([0u8; 8]);
        r.extend(time.to_ne_bytes());
        r
    }

    #[test]
    fn mmap2_records_give_the_mapping_and_its_file() {
        let mut body = Vec::new();
        for v in [7u32, 8] {
            body.extend(v.to_ne_bytes());
        }
        for v in [0x40_1000u64, 0x2000, 0x1000] {
            body.extend(v.to_ne_bytes());
        }
        for v in [254u32, 1] {
            body.extend(v.to_ne_bytes());
        }
        for v in [1234u64, 0] {
            body.extend(v.to_ne_bytes());
        }
        for v in [5u32, 2] {
            body.extend(v.to_ne_bytes());
        }
        body.extend(b"/usr/bin/x\0\0\0\0\0\0");
        let (time, r) = parse(&record(PERF_RECORD_MMAP2, 0, &body, 99)).unwrap();
        assert_eq!(time, 99);
        assert_eq!(
            r,
            Record::Mmap {
                pid: 7,
                start: 0x40_1000,
                len: 0x2000,
                pgoff: 0x1000,
                dev: (254, 1),
                ino: 1234,
                path: "/usr/bin/x".into(),
            }
        );
    }

    #[test]
    fn forks_of_threads_and_plain_renames_are_left_out() {
        let ids = |a: u32, b: u32, c: u32, d: u32| {
            let mut v: Vec<u8> = [a, b, c, d].iter().flat_map(|x| x.to_ne_bytes()).collect();
            v.extend(0u64.to_ne_bytes());
            v
        };
        let fork = record(PERF_RECORD_FORK, 0, &ids(10, 9, 10, 9), 1);
        assert_eq!(parse(&fork).unwrap().1, Record::Fork { pid: 10, parent: 9 });
        assert!(parse(&record(PERF_RECORD_FORK, 0, &ids(9, 9, 11, 9), 1)).is_none());
        let exit_thread = record(PERF_RECORD_EXIT, 0, &ids(9, 9, 11, 9), 1);
        assert!(parse(&exit_thread).is_none());
        let exit = record(PERF_RECORD_EXIT, 0, &ids(9, 8, 9, 8), 1);
        assert_eq!(parse(&exit).unwrap().1, Record::Exit { pid: 9 });
        let comm = |misc| record(PERF_RECORD_COMM, misc, &ids(9, 9, 0, 0), 1);
        assert!(parse(&comm(0)).is_none());
        assert_eq!(
            parse(&comm(PERF_RECORD_MISC_COMM_EXEC)).unwrap().1,
            Record::Exec { pid: 9 }
        );
    }
}
