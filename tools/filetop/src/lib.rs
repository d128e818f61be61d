//! filetop: top files by reads and writes, per thread, each interval.

mod info;

use anyhow::Result;
use clap::{Parser, ValueEnum};
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList, TopArgs};
use common::kernel::fileio::{self, Variant, READ, WRITE};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::event::{Cell, Column, Table};
use common::kinds::table::{self, Timed};
use common::output::c_bytes;
use common::run::lifecycle::{self, Setup, SkelOf, Tool, When};

use libbpf_rs::skel::OpenSkel;

common::skeleton!("filetop");
use skel::{types, FiletopSkel, FiletopSkelBuilder, OpenFiletopSkel};

// SAFETY: repr(C) structs of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::file_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::file_stat {}

const EXAMPLES: &str = "\
EXAMPLES:
    filetop            # file I/O top, 1 second refresh
    filetop -C         # don't clear the screen
    filetop -p 181     # only process 181
    filetop -a         # sockets, pipes and devices too, not only regular files
    filetop -s rbytes  # sort by bytes read
    filetop 5 10       # 5 second summaries, 10 times only
    filetop --json 1 3 | jq .";

/// File reads and writes top: reads, writes and Kbytes per thread and
/// file, each interval.
#[derive(Parser, Debug)]
#[command(name = "filetop", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Include sockets, pipes and other non-regular files
    #[arg(short = 'a', long)]
    all_files: bool,
    /// Sort by: all (read Kbytes, write Kbytes, reads, writes), reads,
    /// writes, rbytes, wbytes
    #[arg(short = 's', long, value_enum, default_value_t = Sort::All)]
    sort: Sort,
    /// Trace these processes only (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    top: TopArgs,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Sort {
    All,
    Reads,
    Writes,
    Rbytes,
    Wbytes,
}

/// The VFS functions filetop counts at.
const FUNCTIONS: [&str; 2] = ["vfs_read", "vfs_write"];

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Filetop>();

/// One thread's reads and writes of one file.
type Row = table::Entry<types::file_key, types::file_stat>;

pub(crate) struct Filetop {
    args: Args,
    mode: Variant,
    cgroups: table::Cgroups,
    table: Table<Timed<Row>>,
}

impl Tool for Filetop {
    common::tool_types!(FiletopSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let mode = Variant::choose(&FUNCTIONS);
        Ok(Filetop {
            table: table(args.common.json).containers(args.containers.containers),
            cgroups: table::Cgroups::new(args.containers.containers),
            args,
            mode,
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenFiletopSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.regular_only = !self.args.all_files;
        rodata.current_task_btf = probe::current_task_btf();
        rodata.rdonly_cast = probe::rdonly_cast();
        let mode = self.mode;
        mode.load_its_programs(open.open_object_mut());
        probe::load_when(
            mode == Variant::Syscalls,
            [&mut open.progs.filetop_sys_exit],
        );
        mode.check(&FUNCTIONS)
    }

    fn degraded(&self) -> Option<String> {
        (self.mode == Variant::Syscalls).then(|| SYSCALL_NOTE.into())
    }

    fn loaded(&mut self, skel: &mut FiletopSkel<'_>) -> Result<()> {
        if self.mode == Variant::Syscalls {
            fileio::fill(&skel.maps.file_ops, &[READ, WRITE])?;
        }
        Ok(())
    }

    fn interval_table(&self) -> Option<table::Spec<'_>> {
        Some(table::Spec::top(
            &self.args.top,
            self.args.common.json,
            true,
        ))
    }

    /// What the kernel summed since the last report, drained.
    fn interval_rows<'s>(
        &'s mut self,
        skel: &SkelOf<'_, Self>,
        _: When,
    ) -> Result<Box<dyn table::Print + 's>> {
        let entries: Vec<(types::file_key, Box<types::file_stat>)> =
            maps::read_as(&skel.maps.stats, true)?;
        let by = self.args.sort;
        Ok(Box::new(table::Rows::new(
            self.cgroups.entries(merge(entries), |_, s| s.cgroup_id),
            &self.table,
            move |a, b| order(&b.value, by).cmp(&order(&a.value, by)),
        )))
    }
}

const SYSCALL_NOTE: &str = "system call mode (no fentry or kprobes on vfs_read and vfs_write \
                            here): reads and writes seen at the read, readv, pread64, preadv(2), \
                            write, writev, pwrite64 and pwritev(2) system calls";

/// One row per thread and file: the kernel keeps one entry per open file
/// (a file opened twice has two), merged here by device and inode; entries
/// of files not shown are dropped.
type Stats = Vec<(types::file_key, Box<types::file_stat>)>;

fn merge(entries: Stats) -> Stats {
    let mut rows: Stats = Vec::new();
    let mut at: std::collections::HashMap<(u32, u32, u64), usize> = Default::default();
    for (key, stat) in entries {
        if stat.skip != 0 {
            continue;
        }
        match at.entry((key.tid, stat.dev, stat.ino)) {
            std::collections::hash_map::Entry::Occupied(i) => {
                let row = &mut rows[*i.get()].1;
                row.reads += stat.reads;
                row.writes += stat.writes;
                row.read_bytes += stat.read_bytes;
                row.write_bytes += stat.write_bytes;
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(rows.len());
                rows.push((key, stat));
            }
        }
    }
    rows
}

/// What BCC sorts by, largest first.
fn order(s: &types::file_stat, by: Sort) -> (u64, u64, u64, u64) {
    match by {
        Sort::All => (s.read_bytes, s.write_bytes, s.reads, s.writes),
        Sort::Reads => (s.reads, 0, 0, 0),
        Sort::Writes => (s.writes, 0, 0, 0),
        Sort::Rbytes => (s.read_bytes, 0, 0, 0),
        Sort::Wbytes => (s.write_bytes, 0, 0, 0),
    }
}

/// BCC's columns: TID COMM READS WRITES R_Kb W_Kb T FILE.
fn table(json: bool) -> Table<Timed<Row>> {
    table::top_table::<Row>(json)
        .columns([
            Column::new("TID", 7, "tid", |t| t.row.key.tid.into()),
            Column::json("pid", |t| t.row.key.pid.into()),
            Column::new("COMM", 16, "comm", |t| {
                Cell::bytes(c_bytes(&t.row.value.comm))
            }),
            Column::new("READS", 6, "reads", |t| t.row.value.reads.into()),
            Column::new("WRITES", 6, "writes", |t| t.row.value.writes.into()),
            Column::new("R_Kb", 7, "read_kb", |t| {
                (t.row.value.read_bytes / 1024).into()
            }),
            Column::new("W_Kb", 7, "write_kb", |t| {
                (t.row.value.write_bytes / 1024).into()
            }),
            Column::new("T", 1, "type", |t| {
                fileio::type_name(t.row.value.r#type).into()
            }),
            Column::new("FILE", 0, "file", |t| {
                Cell::bytes(c_bytes(&t.row.value.name))
            }),
        ])
        .column(
            false,
            Column::json("read_bytes", |t| t.row.value.read_bytes.into()),
        )
        .column(
            false,
            Column::json("write_bytes", |t| t.row.value.write_bytes.into()),
        )
        .column(false, Column::json("dev", |t| t.row.value.dev.into()))
        .column(false, Column::json("ino", |t| t.row.value.ino.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(
        tid: u32,
        file: u64,
        ino: u64,
        reads: u64,
        skip: bool,
    ) -> (types::file_key, Box<types::file_stat>) {
        let key = types::file_key {
            file,
            tid,
            ..Default::default()
        };
        let stat = types::file_stat {
            reads,
            read_bytes: reads * 10,
            ino,
            skip: skip as u8,
            ..Default::default()
        };
        (key, Box::new(stat))
    }

    #[test]
    fn open_files_merge_by_thread_and_inode() {
        let rows = merge(vec![
            entry(1, 0xa, 7, 2, false),
            entry(1, 0xb, 7, 3, false),
            entry(2, 0xc, 7, 1, false),
            entry(1, 0xd, 8, 9, true),
        ]);
        let got: Vec<(u32, u64, u64)> = rows.iter().map(|(k, s)| (k.tid, s.ino, s.reads)).collect();
        assert_eq!(got, [(1, 7, 5), (2, 7, 1)]);
        assert_eq!(rows[0].1.read_bytes, 50);
    }

    #[test]
    fn good_arguments_parse() {
        let ok = Args::try_parse_from(["filetop", "-aC", "-s", "wbytes", "5", "2"]).unwrap();
        assert_eq!(
            (ok.sort, ok.top.every.interval, ok.top.every.count),
            (Sort::Wbytes, 5, Some(2))
        );
    }
}
