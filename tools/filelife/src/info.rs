// What filelife is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "filelife",
    aliases: &[],
    summary: "short-lived files: each created and deleted while tracing, with its age",
    kind: Kind::Event,
    family: Family::Files,
    banner: "Tracing the lifespan of short-lived files... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "filelife_shows_a_files_age",
        "filelife_kprobe_mode",
        "filelife_without_security_inode_create",
        "filelife_tracepoint_mode_on_ext4",
        "filelife_tracepoint_mode_on_xfs",
        "filelife_tracepoint_mode_names_tmpfs_unseen",
        "filelife_without_fentry_kprobes_or_tracepoints",
    ],
    // Its hooks (fentry, kprobes) do not exist on the bench's machine, nor
    // do its peers'.
    bench: None,
    man: include_str!("../man.roff"),
    see_also: &["unlink(2)", "open(2)"],
};
