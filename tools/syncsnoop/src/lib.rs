//! syncsnoop: each sync(), syncfs(), fsync(), fdatasync(), msync() and
//! sync_file_range(), with the caller, how long it took, its result and the
//! file it synced: who forces data to disk, how often, and at what cost.

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, load_when};
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::{c_bytes_n, walked_path};
use common::run::lifecycle::{self, Schedule, Setup, Tool};

common::skeleton!("syncsnoop");
use skel::{types, OpenSyncsnoopSkel, SyncsnoopSkel, SyncsnoopSkelBuilder};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    syncsnoop             # trace every sync call
    syncsnoop -m 10       # only those that took 10 ms or more
    syncsnoop -x          # only failed calls (EIO: data lost)
    syncsnoop -p 181      # only process 181
    syncsnoop -d 60       # trace for a minute
    syncsnoop --json | jq .";

/// Trace sync calls (sync, syncfs, fsync, fdatasync, msync,
/// sync_file_range): the caller, the latency, the result and the file.
#[derive(Parser, Debug)]
#[command(name = "syncsnoop", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Only calls that took at least this many milliseconds
    #[arg(short = 'm', long, value_name = "MIN_MS", default_value_t = 0)]
    min_ms: u64,
    /// Only failed calls
    #[arg(short = 'x', long)]
    failed: bool,
    /// Only these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Trace for this many seconds
    #[arg(short = 'd', long, value_name = "SECONDS", value_parser = common::cli::seconds)]
    duration: Option<u64>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Syncsnoop>();

pub(crate) struct Syncsnoop {
    args: Args,
    event: Record<types::event>,
    table: Table<Syncsnoop>,
}

use types::sync_call as Call;

/// The calls' names and numbers, by enum sync_call.
const CALLS: [(&str, libc::c_long); Call::SYNC_CALLS.0 as usize] = [
    ("sync", libc::SYS_sync),
    ("syncfs", libc::SYS_syncfs),
    ("fsync", libc::SYS_fsync),
    ("fdatasync", libc::SYS_fdatasync),
    ("msync", libc::SYS_msync),
    ("sync_file_range", libc::SYS_sync_file_range),
];

impl Tool for Syncsnoop {
    common::tool_types!(SyncsnoopSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Syncsnoop {
            table: table(&args).containers(containers),
            args,
            event: Record::new(containers),
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenSyncsnoopSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.failed_only = self.args.failed;
        rodata.min_latency_ns = self.args.min_ms.saturating_mul(1_000_000);
        rodata.current_task_btf = probe::current_task_btf();
        rodata.rdonly_cast = probe::rdonly_cast();
        let own = probe::own_call_tracepoints(&mut rodata.nr_calls, CALLS.map(|(_, nr)| nr));
        // msync's mapping by bpf_find_vma (5.17+) in the programs that
        // call it, the others where the kernel would refuse them.
        let vma = probe::find_vma();
        let p = &mut open.progs;
        load_when(!own, [&mut p.sync_btf_enter]);
        load_when(!own && !vma, [&mut p.sync_btf_exit]);
        load_when(!own && vma, [&mut p.sync_btf_exit_vma]);
        load_when(own && !vma, [&mut p.sync_walk]);
        load_when(own && vma, [&mut p.sync_walk_vma]);
        load_when(
            own,
            [
                &mut p.sync_enter_sync,
                &mut p.sync_exit_sync,
                &mut p.sync_enter_syncfs,
                &mut p.sync_exit_syncfs,
                &mut p.sync_enter_fsync,
                &mut p.sync_exit_fsync,
                &mut p.sync_enter_fdatasync,
                &mut p.sync_exit_fdatasync,
                &mut p.sync_enter_msync,
                &mut p.sync_exit_msync,
                &mut p.sync_enter_sync_file_range,
                &mut p.sync_exit_sync_file_range,
            ],
        );
        Ok(())
    }

    fn loaded(&mut self, skel: &mut SyncsnoopSkel<'_>) -> Result<()> {
        for walk in [&skel.progs.sync_walk, &skel.progs.sync_walk_vma] {
            if walk.autoload() {
                maps::install_tail_call(&skel.maps.walker, walk)?;
            }
        }
        Ok(())
    }

    fn degraded(&self) -> Option<String> {
        (!probe::find_vma())
            .then(|| "no bpf_find_vma (5.17+): msync() is shown without its file".into())
    }

    common::event_kind!();

    fn schedule(&self) -> Schedule {
        Schedule::lasting(self.args.duration)
    }
}

common::stamped_by_record!(Syncsnoop);

impl Syncsnoop {
    fn call(&self) -> &'static str {
        CALLS.get(self.event.call as usize).map_or("?", |c| c.0)
    }

    fn errno(&self) -> i32 {
        (-self.event.ret).max(0)
    }

    /// The file's absolute path, where the call named one.
    fn file(&self) -> Option<Vec<u8>> {
        let e = &self.event;
        let size = (e.size as usize).min(e.buf.len());
        (e.has_file != 0)
            .then(|| walked_path(c_bytes_n(&e.buf[..size]), e.depth.into(), e.truncated != 0))
    }

    /// The descriptor, for the calls that take one.
    fn fd(&self) -> Option<i32> {
        use Call as C;
        matches!(
            Call(self.event.call),
            C::SYNC_SYNCFS | C::SYNC_FSYNC | C::SYNC_FDATASYNC | C::SYNC_FILE_RANGE
        )
        .then_some(self.event.args[0] as i32)
    }
}

/// bpftrace's TIME PID COMM, then the call, its latency, its result (0 or
/// the error's name) and the file (`-` where none).
fn table(args: &Args) -> Table<Syncsnoop> {
    Table::<Syncsnoop>::new(args.common.json).columns([
        columns::time(),
        columns::ts(),
        columns::pid(7),
        columns::tid(0).json_only(),
        columns::cgroup_id(),
        columns::comm("COMM", 16),
        Column::new("CALL", 15, "call", |t: &Syncsnoop| t.call().into()),
        Column::right("LAT(ms)", 10, "", |t: &Syncsnoop| {
            Cell::Float(t.event.latency_ns as f64 / 1e6, 3)
        }),
        Column::json("latency_ns", |t: &Syncsnoop| t.event.latency_ns.into()),
        Column::right("RET", 6, "", |t: &Syncsnoop| match t.errno() {
            0 => "0".into(),
            e => common::errnos::name(e).map_or_else(|| e.to_string().into(), Cell::from),
        }),
        Column::json("ret", |t: &Syncsnoop| t.event.ret.into()),
        Column::json("errno", |t: &Syncsnoop| t.errno().into()),
        Column::json("error", |t: &Syncsnoop| {
            match common::errnos::name(t.errno()) {
                Some(n) if t.errno() != 0 => n.into(),
                _ => Cell::Null,
            }
        })
        .optional(),
        Column::json("fd", |t: &Syncsnoop| t.fd().map_or(Cell::Null, Cell::from)),
        Column::new("FILE", 0, "file", |t: &Syncsnoop| {
            t.file().map_or(Cell::Null, |f| Cell::Bytes(f.into()))
        }),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_follow_bpftraces() {
        let h = |args: &[&str]| table(&Args::try_parse_from(args).unwrap()).header();
        assert_eq!(
            h(&["syncsnoop"]),
            "TIME     PID     COMM             CALL               LAT(ms)    RET FILE"
        );
    }

    #[test]
    fn every_call_has_its_name() {
        assert_eq!(CALLS[Call::SYNC_FDATASYNC.0 as usize].0, "fdatasync");
        assert_eq!(CALLS[Call::SYNC_FILE_RANGE.0 as usize].0, "sync_file_range");
    }
}
