//! vfsstat: counts of VFS reads, writes, fsyncs, opens and creates, per
//! second, each interval.

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, EveryInterval, IdList};
use common::kernel::fileio::{self, Variant};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::event::{Cell, Column, Table};
use common::kinds::table::{self, rate_columns, RateReader, Timed};
use common::run::lifecycle::{self, Banner, Schedule, Setup, Tool, When};

use libbpf_rs::skel::OpenSkel;

common::skeleton!("vfsstat");
use skel::{types, OpenVfsstatSkel, VfsstatSkel, VfsstatSkelBuilder};

use types::vfs_stat as S;
const STATS: usize = S::VS_MAX.0 as usize;
/// The VFS functions BCC counts, in the same order.
const FUNCTIONS: [&str; STATS] = [
    "vfs_read",
    "vfs_write",
    "vfs_fsync_range",
    "vfs_open",
    "vfs_create",
];

const EXAMPLES: &str = "\
EXAMPLES:
    vfsstat           # counts per second, every second
    vfsstat 5 3       # 5 second summaries, 3 times
    vfsstat -p 181    # only what process 181 does
    vfsstat --json 1 5 | jq .";

/// Count some VFS calls: reads, writes, fsyncs, opens and creates per
/// second, system-wide or for chosen processes.
#[derive(Parser, Debug)]
#[command(name = "vfsstat", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Count only what these processes do (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    every: EveryInterval,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Vfsstat>();

pub(crate) struct Vfsstat {
    args: Args,
    table: Table<Timed<Rates>>,
    mode: Variant,
    rates: RateReader<STATS>,
}

impl Tool for Vfsstat {
    common::tool_types!(VfsstatSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        Ok(Vfsstat {
            table: table(args.common.json),
            args,
            mode: Variant::choose(&FUNCTIONS),
            rates: RateReader::default(),
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenVfsstatSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.current_task_btf = probe::current_task_btf();
        rodata.rdonly_cast = probe::rdonly_cast();
        self.mode.load_its_programs(open.open_object_mut());
        let syscalls = self.mode == Variant::Syscalls;
        probe::load_when(syscalls, [&mut open.progs.vfs_sys_exit]);
        self.mode.check(&FUNCTIONS)
    }

    fn degraded(&self) -> Option<String> {
        (self.mode == Variant::Syscalls).then(|| {
            "system call mode (no fentry or kprobes on the VFS functions here): \
             counted at the read, write, fsync and open system calls that reach them"
                .into()
        })
    }

    fn loaded(&mut self, skel: &mut VfsstatSkel<'_>) -> Result<()> {
        if self.mode == Variant::Syscalls {
            use common::kernel::fileio::{FSYNC, OPEN, READ, WRITE};
            fileio::fill(&skel.maps.file_ops, &[READ, WRITE, FSYNC, OPEN])?;
        }
        Ok(())
    }

    fn banner(&self) -> Banner {
        Banner::Header {
            header: self.table.header(),
            note: "Tracing VFS calls... Hit Ctrl-C to end.".into(),
        }
    }

    fn interval_table(&self) -> Option<table::Spec<'_>> {
        let schedule = Schedule::from(&self.args.every);
        Some(table::Spec::lines(self.args.common.json, schedule, None))
    }

    /// One line per interval, and one for the part interval at the end, as
    /// rates over the time that passed.
    fn interval_rows<'s>(
        &'s mut self,
        skel: &VfsstatSkel<'_>,
        _: When,
    ) -> Result<Box<dyn table::Print + 's>> {
        let row = self.rates.read(&skel.maps.stats)?;
        Ok(Box::new(table::Rows::new(
            vec![row],
            &self.table,
            |_, _| std::cmp::Ordering::Equal,
        )))
    }
}

type Rates = table::Rates<STATS>;

/// BCC's line: the time, then each counter per second; in JSON the counts,
/// their rates and the interval's length.
fn table(json: bool) -> Table<Timed<Rates>> {
    table::timed::<Rates>(json)
        .columns([
            Column::new("TIME", 10, "", |t| format!("{}:", t.time).into()),
            Column::json("interval_s", |t| Cell::Float(t.row.secs, 3)),
        ])
        .columns(rate_columns::<STATS, 0, false>(
            "READ/s",
            "read",
            "read_per_s",
        ))
        .columns(rate_columns::<STATS, 1, false>(
            "WRITE/s",
            "write",
            "write_per_s",
        ))
        .columns(rate_columns::<STATS, 2, false>(
            "FSYNC/s",
            "fsync",
            "fsync_per_s",
        ))
        .columns(rate_columns::<STATS, 3, false>(
            "OPEN/s",
            "open",
            "open_per_s",
        ))
        .columns(rate_columns::<STATS, 4, false>(
            "CREATE/s",
            "create",
            "create_per_s",
        ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_arguments_parse() {
        let ok = Args::try_parse_from(["vfsstat", "5", "3"]).unwrap();
        assert_eq!((ok.every.interval, ok.every.count), (5, Some(3)));
    }

    #[test]
    fn lines_are_laid_out_as_bccs() {
        let t = table(false);
        assert_eq!(
            t.header(),
            "TIME         READ/s  WRITE/s  FSYNC/s   OPEN/s CREATE/s"
        );
        let row = Timed {
            time: "12:34:56".into(),
            row: Rates {
                counts: [10, 2, 0, 3, 1],
                secs: 2.0,
            },
        };
        assert_eq!(
            String::from_utf8(t.render(&row).unwrap()).unwrap(),
            "12:34:56:         5        1        0        2        1"
        );
    }

    #[test]
    fn counters_follow_the_system_call_kinds() {
        assert_eq!(S::VS_READ.0 + 1, fileio::READ);
        assert_eq!(S::VS_WRITE.0 + 1, fileio::WRITE);
        assert_eq!(S::VS_FSYNC.0 + 1, fileio::FSYNC);
        assert_eq!(S::VS_OPEN.0 + 1, fileio::OPEN);
    }
}
