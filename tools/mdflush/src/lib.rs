//! mdflush: each flush sent to an md (software RAID) array, with the
//! process that sent it: BCC's TIME PID COMM DEVICE lines.

mod info;

use anyhow::{bail, Result};
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::probe::{self, Hook};
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::c_bytes;
use common::run::lifecycle::{self, Setup, Tool};
use common::run::schedule::Schedule;

common::skeleton!("mdflush");
use skel::{types, MdflushSkelBuilder, OpenMdflushSkel};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    mdflush              # trace md flush requests until Ctrl-C
    mdflush -d 60        # trace for 60 seconds
    mdflush -p 181       # only flushes sent by process 181
    mdflush --json | jq .";

/// md's own function, which BCC and libbpf-tools probe.
const MD_FLUSH: &str = "md_flush_request";

/// Trace flushes sent to md (software RAID) arrays.
#[derive(Parser, Debug)]
#[command(name = "mdflush", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Only flushes sent by these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Trace for DURATION seconds (else until Ctrl-C)
    #[arg(short = 'd', long, value_name = "DURATION", value_parser = cli::seconds)]
    duration: Option<u64>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Mdflush>();

pub(crate) struct Mdflush {
    args: Args,
    event: Record<types::event>,
    table: Table<Mdflush>,
    hook: Hook,
}

impl Tool for Mdflush {
    common::tool_types!(MdflushSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Mdflush {
            table: table(args.common.json).containers(containers),
            event: Record::new(containers),
            args,
            hook: Hook::TpBtf,
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenMdflushSkel<'_>, _: &Setup) -> Result<()> {
        // md's function where it takes a hook (md_mod loaded), as BCC; else
        // every flush bio queued to an md device, which is what md's
        // function is called for.
        self.hook = if probe::fentry_target(MD_FLUSH) {
            Hook::Fentry
        } else if probe::kprobe_target(MD_FLUSH) {
            Hook::Kprobe
        } else {
            match probe::pick(&[Hook::TpBtf, Hook::RawTp]) {
                Some(h) => h,
                None => bail!("this kernel offers neither tp_btf nor raw_tp programs"),
            }
        };
        let queue_first = probe::btf_tracepoint_args("block_bio_queue") == Some(2);
        let (btf, raw) = (self.hook == Hook::TpBtf, self.hook == Hook::RawTp);
        let p = &mut open.progs;
        probe::load_when(self.hook == Hook::Fentry, [&mut p.md_fentry]);
        probe::load_when(self.hook == Hook::Kprobe, [&mut p.md_kprobe]);
        probe::load_when(btf && !queue_first, [&mut p.md_btf_queue]);
        probe::load_when(btf && queue_first, [&mut p.md_btf_queue_q]);
        probe::load_when(raw && !queue_first, [&mut p.md_raw_queue]);
        probe::load_when(raw && queue_first, [&mut p.md_raw_queue_q]);
        Ok(())
    }

    fn hook_notes(&self) -> Vec<String> {
        match self.hook {
            Hook::Fentry | Hook::Kprobe => Vec::new(),
            _ => vec![format!(
                "{MD_FLUSH} takes no fentry or kprobe here (md_mod not loaded, or no \
                 kprobes): flushes seen as bios with REQ_PREFLUSH queued to md devices"
            )],
        }
    }

    fn schedule(&self) -> Schedule {
        Schedule::lasting(self.args.duration)
    }

    fn banner(&self) -> lifecycle::Banner {
        lifecycle::Banner::Header {
            header: self.table.header(),
            note: "Tracing md flush requests... Hit Ctrl-C to end.".into(),
        }
    }

    common::event_kind!();
}

common::stamped_by_record!(Mdflush);

/// BCC's columns: TIME PID COMM DEVICE.
fn table(json: bool) -> Table<Mdflush> {
    Table::<Mdflush>::new(json).columns([
        columns::time().text_only(),
        columns::ts(),
        columns::pid(7),
        columns::tid(0).json_only(),
        columns::cgroup_id(),
        columns::comm("COMM", 16),
        Column::new("DEVICE", 0, "device", |t: &Mdflush| {
            Cell::bytes(c_bytes(&t.event.disk))
        }),
        Column::json("dev", |t| {
            let dev = t.event.dev;
            format!(
                "{}:{}",
                common::kernel::disks::major(dev),
                common::kernel::disks::minor(dev)
            )
            .into()
        }),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_bccs() {
        assert_eq!(
            table(false).header(),
            "TIME     PID     COMM             DEVICE"
        );
    }

    #[test]
    fn options_parse() {
        let a = Args::try_parse_from(["mdflush", "-p", "3,4", "-d", "5"]).unwrap();
        assert_eq!(a.duration, Some(5));
        assert!(Args::try_parse_from(["mdflush", "5"]).is_err());
    }
}
