//! sofdsnoop: file descriptors passed over unix sockets (SCM_RIGHTS), one
//! line per descriptor as BCC prints them: who sent or received it, over
//! which socket, and its file, named at both ends.

mod info;

use std::io;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, load_when};
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::{self, c_string, Out};
use common::run::lifecycle::{self, Schedule, Setup, Tool};

common::skeleton!("sofdsnoop");
use skel::{types, OpenSofdsnoopSkel, SofdsnoopSkelBuilder};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    sofdsnoop             # trace file descriptors passed over unix sockets
    sofdsnoop -T          # include timestamps
    sofdsnoop -p 181      # only trace PID 181
    sofdsnoop -t 123      # only trace TID 123
    sofdsnoop -d 10       # trace for 10 seconds only
    sofdsnoop -n main     # only print process names containing \"main\"
    sofdsnoop --json | jq .";

/// Trace file descriptors passed over unix sockets (SCM_RIGHTS): each one
/// sent and each one received, with the socket and the file.
///
/// A descriptor's number is the sender's on a SEND line and the
/// receiver's (new) one on a RECV line.
#[derive(Parser, Debug)]
#[command(name = "sofdsnoop", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Include a TIME(s) column: seconds since the first descriptor shown
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Only these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Only these threads (comma-separated tids)
    #[arg(short = 't', long, value_parser = cli::id_list, conflicts_with = "pid")]
    tid: Option<IdList>,
    /// Only process names (comm) containing this text
    #[arg(short = 'n', long, value_parser = cli::non_empty)]
    name: Option<String>,
    /// Trace for this many seconds
    #[arg(short = 'd', long, value_name = "SECONDS", value_parser = cli::seconds)]
    duration: Option<u64>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Sofdsnoop>();

use types::fd_call as Call;

/// The calls, by enum fd_call: names and numbers.
const CALLS: [(&str, libc::c_long); Call::FD_CALLS.0 as usize] = [
    ("sendmsg", libc::SYS_sendmsg),
    ("recvmsg", libc::SYS_recvmsg),
    ("sendmmsg", libc::SYS_sendmmsg),
    ("recvmmsg", libc::SYS_recvmmsg),
];

/// File systems whose files /proc names by kind and inode, not by path
/// (include/uapi/linux/magic.h).
const SOCKFS_MAGIC: u32 = 0x534f_434b;
const PIPEFS_MAGIC: u32 = 0x5049_5045;
const ANON_INODE_FS_MAGIC: u32 = 0x0904_1934;
const S_IFMT: u32 = 0o170000;
const S_IFSOCK: u32 = 0o140000;

pub(crate) struct Sofdsnoop {
    args: Args,
    event: Record<types::event>,
    table: Table<Sofdsnoop>,
    /// The descriptor of the record being printed (a line each).
    at: usize,
    /// Its file's name, as /proc names it where it can.
    name: String,
}

impl Tool for Sofdsnoop {
    common::tool_types!(SofdsnoopSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Sofdsnoop {
            table: table(&args).containers(containers),
            args,
            event: Record::new(containers),
            at: 0,
            name: String::new(),
        })
    }

    fn filters(&self) -> Filters {
        Filters::threads(
            &self.args.pid,
            &self.args.tid,
            "-t",
            self.args.cgroup.path(),
        )
    }

    fn configure(&mut self, open: &mut OpenSofdsnoopSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.current_task_btf = probe::current_task_btf();
        rodata.rdonly_cast = probe::rdonly_cast();
        let own = probe::own_call_tracepoints(&mut rodata.nr_calls, CALLS.map(|c| c.1));
        let p = &mut open.progs;
        load_when(!own, [&mut p.fd_btf_enter, &mut p.fd_btf_exit]);
        load_when(
            own,
            [
                &mut p.fd_enter_sendmsg,
                &mut p.fd_exit_sendmsg,
                &mut p.fd_enter_recvmsg,
                &mut p.fd_exit_recvmsg,
                &mut p.fd_enter_sendmmsg,
                &mut p.fd_exit_sendmmsg,
                &mut p.fd_enter_recvmmsg,
                &mut p.fd_exit_recvmmsg,
            ],
        );
        Ok(())
    }

    common::event_kind!(table);

    fn schedule(&self) -> Schedule {
        Schedule::lasting(self.args.duration)
    }

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        self.event.read(data);
        if !output::comm_holds(&self.event.task.comm, self.args.name.as_deref()) {
            return Ok(());
        }
        for at in 0..self.shown() {
            self.at = at;
            self.name = self.file_name(&self.event.fds[at]);
            self.table.row(out, self)?;
        }
        Ok(())
    }
}

common::stamped_by_record!(Sofdsnoop);

impl Sofdsnoop {
    /// The descriptors of the record that it holds.
    fn shown(&self) -> usize {
        (self.event.count as usize).min(self.event.fds.len())
    }

    fn sending(&self) -> bool {
        matches!(
            Call(self.event.call),
            Call::CALL_SENDMSG | Call::CALL_SENDMMSG
        )
    }

    fn passed(&self) -> &types::passed {
        &self.event.fds[self.at]
    }

    /// A file's name as /proc/PID/fd shows it: a socket's, pipe's or
    /// anonymous inode's by kind; else its path, read from /proc while the
    /// descriptor still holds the same file, else the last component the
    /// kernel gave.
    fn file_name(&self, p: &types::passed) -> String {
        let name = c_string(&p.name);
        if p.mode & S_IFMT == S_IFSOCK || p.magic == SOCKFS_MAGIC {
            return format!("socket:[{}]", p.ino);
        }
        match p.magic {
            PIPEFS_MAGIC => return format!("pipe:[{}]", p.ino),
            ANON_INODE_FS_MAGIC => return format!("anon_inode:{name}"),
            _ => {}
        }
        let fd = format!("/proc/{}/fd/{}", self.event.task.tid, p.fd);
        // The link only where the descriptor still holds the same file: a
        // stat, and the readlink only then.
        let same = std::fs::metadata(&fd).is_ok_and(|m| {
            use std::os::unix::fs::MetadataExt;
            m.ino() == p.ino
        });
        match same.then(|| std::fs::read_link(&fd)) {
            Some(Ok(path)) => path.to_string_lossy().into_owned(),
            _ => name,
        }
    }
}

/// BCC's `ACTION TID COMM SOCKET FD NAME` (TIME(s) first with -T).
fn table(args: &Args) -> Table<Sofdsnoop> {
    Table::<Sofdsnoop>::new(args.common.json)
        .column(args.timestamp, columns::since_first::<Sofdsnoop, 9>(14))
        .columns([
            columns::ts(),
            Column::new("ACTION", 6, "action", |t: &Sofdsnoop| {
                if t.sending() { "SEND" } else { "RECV" }.into()
            }),
            columns::tid(6),
            columns::pid(0).json_only(),
            columns::cgroup_id(),
            columns::comm("COMM", 16),
            Column::new("SOCKET", 25, "", |t: &Sofdsnoop| {
                format!("{}:socket:[{}]", t.event.sock_fd, t.event.sock_ino).into()
            }),
            Column::json("sock_fd", |t: &Sofdsnoop| t.event.sock_fd.into()),
            Column::json("sock_ino", |t: &Sofdsnoop| t.event.sock_ino.into()),
            Column::json("call", |t: &Sofdsnoop| {
                CALLS.get(t.event.call as usize).map_or("?", |c| c.0).into()
            }),
            Column::json("msg", |t: &Sofdsnoop| t.event.msg.into()),
            Column::json("count", |t: &Sofdsnoop| t.event.count.into()),
            Column::json("index", |t: &Sofdsnoop| (t.at as u64).into()),
            Column::new("FD", 5, "fd", |t: &Sofdsnoop| t.passed().fd.into()),
            Column::json("ino", |t: &Sofdsnoop| t.passed().ino.into()),
            Column::new("NAME", 0, "name", |t: &Sofdsnoop| {
                Cell::bytes(t.name.as_bytes())
            }),
        ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_bccs() {
        let h = |args: &[&str]| table(&Args::try_parse_from(args).unwrap()).header();
        assert_eq!(
            h(&["sofdsnoop"]),
            "ACTION TID    COMM             SOCKET                    FD    NAME"
        );
        assert!(h(&["sofdsnoop", "-T"]).starts_with("TIME(s)        ACTION "));
    }

    #[test]
    fn calls_are_in_enum_order() {
        assert_eq!(CALLS[Call::CALL_RECVMMSG.0 as usize].0, "recvmmsg");
    }
}
