//! A dry run's hooks in a line: README's kernel matrix (`cargo xtask
//! vmtest`) and `bpftools doctor` say what a tool chose the same way.

/// The kinds of program a dry run lists (the first word of a hook line).
const HOOK_KINDS: &[&str] = &[
    "fentry",
    "fexit",
    "fmod_ret",
    "tp_btf",
    "raw_tp",
    "tracepoint",
    "kprobe",
    "kretprobe",
    "kprobe.multi",
    "kretprobe.multi",
    "uprobe",
    "uretprobe",
    "usdt",
    "perf_event",
];

/// A text dry run's verdict, as `bpftools doctor` names it: UNAVAILABLE
/// (the tool's error), DEGRADED (a `degraded:` line under the hooks) or OK.
pub fn verdict(output: &str) -> &'static str {
    if output.contains(": error: ") {
        "UNAVAILABLE"
    } else if output.contains("  degraded: ") {
        "DEGRADED"
    } else {
        "OK"
    }
}

/// One dry run's output as a table cell: the hooks grouped by kind
/// (`tp_btf block_rq_issue, block_rq_complete`), memleak's uprobe plan, or
/// why the tool would not run.
pub fn cell(output: &str) -> String {
    if let Some(error) = output.lines().find_map(|l| l.split_once(": error: ")) {
        let why = error.1;
        let first = why.split([';', ',', '(']).next().unwrap_or(why);
        return format!("refused: {}", first.trim());
    }
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for line in output.lines().filter(|l| l.starts_with("  ")) {
        let mut f = line.split_whitespace();
        let (Some(kind), Some(target)) = (f.next(), f.next()) else {
            continue;
        };
        // A note under the hooks (capable's on what the tracepoint lacks)
        // is no hook.
        if !HOOK_KINDS.contains(&kind) {
            continue;
        }
        // A program without a target of its own (`perf_event (pr_sample)`):
        // its target is on another line (profile's event).
        if target.starts_with('(') {
            continue;
        }
        match groups.iter_mut().find(|(k, _)| k == kind) {
            Some((_, targets)) => targets.push(target.to_string()),
            None => groups.push((kind.to_string(), vec![target.to_string()])),
        }
    }
    // memleak's user mode: how its uprobes attach says more than the
    // program list.
    if let Some(plan) = output
        .lines()
        .find(|l| l.contains(" functions in "))
        .and_then(|l| l.rsplit(": ").next())
    {
        return plan.to_string();
    }
    groups
        .into_iter()
        .map(|(kind, targets)| format!("{kind} {}", targets.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_read_from_the_text() {
        let ok = "runqlat: dry run: 1 programs loaded and verified, nothing attached\n  \
                  tp_btf sched_switch (x)\n";
        assert_eq!(verdict(ok), "OK");
        let degraded = format!("{ok}  degraded: system call mode (...)\n");
        assert_eq!(verdict(&degraded), "DEGRADED");
        assert_eq!(cell(&degraded), "tp_btf sched_switch");
        assert_eq!(verdict("tcpretrans: error: -l needs fentry"), "UNAVAILABLE");
    }

    #[test]
    fn cells_group_hooks_by_kind() {
        let out = "biolatency: dry run: 2 programs loaded and verified, nothing attached\n  \
                   tp_btf block_rq_issue (bio_btf_issue)\n  tp_btf block_rq_complete (x)\n  \
                   fentry f (y)\n";
        assert_eq!(
            cell(out),
            "tp_btf block_rq_issue, block_rq_complete; fentry f"
        );
        let refused = "tcpretrans: error: -l needs fentry, and this kernel offers neither";
        assert_eq!(cell(refused), "refused: -l needs fentry");
        let memleak = "memleak: 12 functions in /lib/libc.so.6: a session uprobe_multi link\n\
                       memleak: dry run: 2 programs loaded\n  uprobe.session  (um_session)\n";
        assert_eq!(cell(memleak), "a session uprobe_multi link");
        let profile = "profile: dry run: 1 programs loaded and verified, nothing attached\n  \
                       perf_event (pr_sample)\n  \
                       perf_event cpu-clock (software: no hardware PMU answered) at 49 Hz\n";
        assert_eq!(cell(profile), "perf_event cpu-clock");
    }
}
