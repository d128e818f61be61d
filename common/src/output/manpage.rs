//! Man pages and shell completions, generated from a tool's clap
//! definitions and its description (`bpftools --generate man|bash|zsh|fish
//! TOOL`, used by `cargo xtask dist`): the sections clap cannot know are
//! written by hand beside the tool (`tools/<tool>/man.roff`), SEE ALSO comes
//! from the registry of every tool.

use std::io::{self, Write};

use clap_complete::Shell;
use clap_mangen::Man;
use registry::ToolInfo;

/// Writes what `what` names to `out`: `man` (section 8), or a completion
/// script for `bash`, `zsh` or `fish`. `all` is every tool in the bundle.
pub fn generate(
    mut cmd: clap::Command,
    info: &ToolInfo,
    all: &[&ToolInfo],
    what: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    let name = cmd.get_name().to_string();
    match what {
        "man" => {
            man(cmd, info.man, out)?;
            see_also(&info.see_also(all), out)
        }
        shell => {
            let shell: Shell = shell.parse().map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("--generate: '{shell}' is not man, bash, zsh or fish"),
                )
            })?;
            clap_complete::generate(shell, &mut cmd, name, out);
            Ok(())
        }
    }
}

/// SEE ALSO: `name(section)` entries as bold names, then where the README is.
fn see_also(pages: &[String], out: &mut dyn Write) -> io::Result<()> {
    let refs: Vec<String> = pages
        .iter()
        .map(|p| match p.rsplit_once('(') {
            Some((name, section)) => format!("\\fB{}\\fR({section}", roff_escape(name)),
            None => format!("\\fB{}\\fR", roff_escape(p)),
        })
        .collect();
    writeln!(out, ".SH SEE ALSO")?;
    write_wrapped(out, &refs.join(", "))?;
    writeln!(out, ".PP\nThe bpftools README, in /usr/share/doc/bpftools.")
}

/// bpftools(8): the binary behind the tools' links, and every tool.
pub fn bundle_page(all: &[&ToolInfo], out: &mut dyn Write) -> io::Result<()> {
    let date = source_date().unwrap_or_else(today);
    writeln!(
        out,
        ".TH BPFTOOLS 8 {date} \"bpftools {}\" \"System Manager's Manual\"",
        env!("CARGO_PKG_VERSION")
    )?;
    writeln!(
        out,
        ".SH NAME\nbpftools \\- the binary behind the bpftools tracing tools\n\
         .SH SYNOPSIS\n.I tool\n[\\fIoptions\\fR]\n.br\n.B bpftools \\-\\-list\n.br\n\
         .B bpftools doctor\n[\\fItool\\fR...] [\\fB\\-\\-json\\fR]\n\
         .SH DESCRIPTION\nEach tool is a link to this one binary, which runs the tool its name\n\
         says, with or without a program prefix ending in a hyphen\n(\\fBbpf\\-biolatency\\fR).\n\
         Run as \\fBbpftools \\-\\-list\\fR, it lists the tools with what each shows;\n\
         as \\fBbpftools doctor\\fR, what each tool would use on this machine, or why\n\
         it would not run (\\fBbpftools\\-doctor\\fR(8));\n\
         run as \\fBbpftools\\fR alone, it names them and exits with status 2.\n\
         .SH TOOLS"
    )?;
    for t in all {
        writeln!(
            out,
            ".TP\n.BR {} (8)\n{}",
            t.name,
            roff_escape(&capitalize(t.summary))
        )?;
        for alias in t.aliases {
            writeln!(out, ".TP\n.BR {alias} (8)\n{}, as {alias}", t.name)?;
        }
    }
    let mut pages = vec!["bpftools-doctor(8)".to_string()];
    pages.extend(all.iter().map(|t| format!("{}(8)", t.name)));
    see_also(&pages, out)
}

/// bpftools-doctor(8): what each tool would do on this machine.
pub fn doctor_page(out: &mut dyn Write) -> io::Result<()> {
    let date = source_date().unwrap_or_else(today);
    writeln!(
        out,
        ".TH BPFTOOLS\\-DOCTOR 8 {date} \"bpftools {}\" \"System Manager's Manual\"",
        env!("CARGO_PKG_VERSION")
    )?;
    out.write_all(DOCTOR.as_bytes())?;
    see_also(
        &[
            "bpftools(8)".into(),
            "bpftool-feature(8)".into(),
            "bpftrace(8)".into(),
        ],
        out,
    )
}

const DOCTOR: &str = r#".SH NAME
bpftools\-doctor \- say before running what each tool will use here, or why it cannot run
.SH SYNOPSIS
.B bpftools doctor
[\fITOOL\fR...] [\fB\-\-json\fR]
.br
.B bpftools doctor \-\-tracepoints
[\fIPATTERN\fR] [\fB\-v\fR] [\fB\-\-json\fR]
.br
.B bpftools doctor \-\-usdt
\fIBINARY\fR|\fIPID\fR [\fB\-\-json\fR]
.br
.B bpftools doctor \-\-loaded
[\fB\-\-json\fR]
.SH DESCRIPTION
For each tool (or each \fITOOL\fR named), \fBbpftools doctor\fR runs the
tool's own dry run (\fB\-\-dry\-run\fR) with each set of arguments that
changes its hooks (the rows of the kernel matrix in the README): the tool probes
the kernel, chooses its hooks, loads and verifies its programs with the kernel's
verifier, and attaches nothing. What doctor reports is therefore what the tool
would do, not a guess beside it. It then describes the machine: the kernel
features the tools probe for and the settings that decide who may trace.
.PP
Each row has a verdict:
.TP
.B OK
The tool runs with the hooks shown.
.TP
.B DEGRADED
The tool runs, but its hooks here cannot see everything: the line under it
says what it misses (fsslower's system call mode cannot see reads through
mmap, io_uring or the kernel's own callers such as nfsd). The tool says the
same on standard error when it starts.
.TP
.B UNAVAILABLE
The tool would not run with these arguments; the reason is the tool's own
error message, which names what is missing and what to do instead. Under the
kernel's confidentiality lockdown, that message says the lockdown refuses it.
.SH CAPABILITIES
After the tools, which of them need which capability besides CAP_BPF and
CAP_PERFMON, for a user who is not root (each tool says what it needs with the
programs it chose here, in its \fB\-\-dry\-run \-\-json\fR): CAP_DAC_READ_SEARCH
for tracefs (classic tracepoints, kernel function lists, or a look there while
choosing), CAP_SYSLOG for kernel function names in stacks, CAP_SYS_PTRACE for
other users' processes (their maps, user stacks, uprobes in them), and
CAP_SYS_RESOURCE where the kernel charges BPF maps to the locked-memory limit
(before memory cgroups took them, Linux 5.11).
.SH THE MACHINE
The kernel release; BTF (\fB/sys/kernel/btf/vmlinux\fR and modules'); whether
fentry/fexit, tp_btf, raw_tp, tracepoints, kprobes, kprobe_multi and uprobes
work (fentry is tried by loading a program, as the tools do); how uprobes
attach (session or plain uprobe_multi links, or one link per uprobe);
attach cookies; task local storage; where tracefs is mounted (doctor mounts it
at /sys/kernel/tracing, as the tools do, where none is); whether a hardware PMU
answers (else profile samples the software CPU clock); where the cgroup v2
hierarchy is mounted; the kernel lockdown mode; \fBkernel.bpf_stats_enabled\fR,
\fBkernel.perf_event_paranoid\fR and \fBkernel.unprivileged_bpf_disabled\fR;
and which of the capabilities the tools use this process holds (CAP_BPF,
CAP_PERFMON, CAP_SYS_ADMIN, CAP_SYSLOG, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH,
CAP_SYS_RESOURCE).
.SH OPTIONS
.TP
.BI \-\-tracepoints " \fR[\fIPATTERN\fR]"
What can be traced: the tracepoints tracefs lists, as \fICATEGORY\fB:\fIEVENT\fR,
those \fIPATTERN\fR matches (wildcards \fB*\fR and \fB?\fR in either part; a
category alone means all its events), as BCC's \fBtplist\fR. With \fB\-v\fR, each
one's fields as its format declares them.
.TP
.BI \-\-usdt " BINARY\fR|\fIPID"
The USDT probes of a program or library, or of every file a running process
maps (found through the process's root, so a container's too), as
\fIFILE PROVIDER\fB:\fINAME\fR.
.TP
.B \-\-loaded
The BPF programs loaded now: id, type, name and the processes holding them
open (\fIPID\fB/\fICOMM\fR; \fB\-\fR for a program pinned, or left attached by a
process that has gone), as BCC's \fBbpflist\fR.
.TP
.B \-\-json
For the listings, a JSON object per line. For the report, one JSON object: \fBmachine\fR (each fact by its name) and \fBtools\fR, a list
of objects with \fBtool\fR (the row's name: the tool and its arguments),
\fBverdict\fR, \fBhooks\fR (the hooks by kind, as the text shows them) and
\fBwhy\fR (what a DEGRADED tool misses, why an UNAVAILABLE one would not run;
null for OK) and \fBcapabilities\fR (what a user who is not root needs for it).
.SH ENVIRONMENT
.TP
.B BPFTOOLS_DISABLE
A comma-separated list of features (\fBfentry\fR, \fBkprobe\fR, \fBtp_btf\fR,
\fBraw_tp\fR, \fBuprobe_multi\fR, ...) that the tools and doctor treat as
missing: what a tool would do on an older kernel, tried on this one.
.SH EXIT STATUS
0 when the report or listing was made (whatever the verdicts); 1 when tracefs
cannot be read (\fB\-\-tracepoints\fR); 2 for an unknown tool or option, or a
\fB\-\-usdt\fR file or process that does not exist.
.SH EXAMPLES
.TP
.B bpftools doctor
Every tool, then the machine.
.TP
.B bpftools doctor fsslower tcpretrans
Two tools' rows.
.TP
.B bpftools doctor \-\-tracepoints 'sched:sched_wak*' \-v
The scheduler's wakeup tracepoints and their fields.
.TP
.B bpftools doctor \-\-loaded
Which processes hold BPF programs now.
.TP
\fBbpftools doctor \-\-json | jq \-r '.tools[] | select(.verdict != \(dqOK\(dq) | .tool'\fR
The tools that would not run fully here.
"#;

/// Who may run a tool, and its exit statuses (every tool's page).
const PRIVILEGES: &str = r#".SH PRIVILEGES
Root, or the capabilities CAP_BPF and CAP_PERFMON (Linux 5.8+), with, where
the tool needs them: CAP_DAC_READ_SEARCH to read tracefs (classic tracepoints
and their formats), CAP_SYSLOG to name kernel functions (kernel stacks),
CAP_SYS_PTRACE to read other users' processes (user stacks, their libraries'
symbols), and CAP_SYS_RESOURCE before Linux 5.11 (BPF maps were charged to
the locked-memory limit). Given to the binary as file capabilities:
.PP
.nf
.RS
sudo setcap cap_bpf,cap_perfmon,cap_dac_read_search,cap_syslog,cap_sys_ptrace+ep /usr/sbin/bpftools
.RE
.fi
.PP
(every tool is a link to it), kept to a group by the file's mode
(\fBchgrp tracing /usr/sbin/bpftools; chmod 750 /usr/sbin/bpftools\fR), or to
a service by its unit's \fBAmbientCapabilities=\fR. \fBbpftools doctor\fR
lists which tools need which capability here, and those a process holds.
Short of CAP_BPF, CAP_PERFMON, CAP_SYS_RESOURCE (where it is needed) or
CAP_DAC_READ_SEARCH (where tracefs is read), the tool ends at once naming it;
short of CAP_SYSLOG or CAP_SYS_PTRACE it runs, and says as it starts what it
cannot name (kernel frames, other users' processes).
.SH EXIT STATUS
0 when the tool ends as asked (Ctrl-C, its duration or count), or the
status of the command it ran (\fB\-c\fR, \fB\-\-exec\fR where it has one); 1
for an error (what failed and, where one helps, a hint); 2 for a usage
error (one line naming the option); 77 when the process lacks a privilege
(one line naming the capabilities it lacks and how to grant them), or when
the kernel's confidentiality lockdown refuses its programs (one line saying
so: no privilege lifts it; see \fBbpftools doctor\fR).
"#;

/// What a path given to an output-file option gets (common::output::file).
const OUTPUT_FILES: &str = r#".SH OUTPUT FILES
The options that write a \fIFILE\fR treat its path the same way, and check it
before anything is loaded:
.TP
A regular file, or a new name in an existing directory
is replaced whole at each report: written to a temporary file made
exclusively (an unpredictable name, never through a link) in the same
directory, then renamed over it, so a reader sees the old file or the new one
(\fB\-\-hdr\-log\fR, one log for the whole run, is made anew that way at the
start and then appended to).
.TP
A symbolic link
is resolved first; its target is treated by these same rules.
.TP
A character device, a FIFO or a socket
is opened and written in place, never replaced (\fB/dev/null\fR, a FIFO read
by another program). A FIFO is opened before anything is loaded: the tool
waits there for a reader, and Ctrl-C ends the wait.
.TP
\fB\-\fR
is standard output; what the tool would print there goes to standard error.
\fB/dev/stdout\fR is the same; \fB/dev/stderr\fR, \fB/dev/fd/\fIN\fR and
\fB/proc/self/fd/\fIN\fR are written through that descriptor, so a file the
shell redirected it to (\fB>> log\fR) is appended to, never replaced.
.TP
Two options naming one place
(both \fB\-\fR, or one file) are a usage error.
.TP
Anything else
(a directory, a missing directory, a block device, a kernel interface such as
\fB/proc\fR) is a usage error: exit status 2, one line naming the option, the
path and why, and nothing is left behind.
"#;

fn man(cmd: clap::Command, sections: &str, out: &mut dyn Write) -> io::Result<()> {
    let examples = cmd
        .get_after_help()
        .map(|h| h.to_string())
        .unwrap_or_default();
    // The examples get a section of their own, below.
    let cmd = cmd.after_help(None::<&str>);
    let has_output_files = cmd.get_arguments().any(|a| {
        a.get_value_names()
            .is_some_and(|names| names.iter().any(|n| n == "FILE"))
    });
    let title = cmd.get_name().to_uppercase();
    let mut page = Man::new(cmd)
        .title(title)
        .section("8")
        .manual("System Manager's Manual")
        .source(format!("bpftools {}", env!("CARGO_PKG_VERSION")));
    // SOURCE_DATE_EPOCH's date, so that the same commit gives the same page.
    page = page.date(source_date().unwrap_or_else(today));
    let mut rendered = Vec::new();
    page.render(&mut rendered)?;
    let rendered = String::from_utf8_lossy(&rendered);
    // The hand-written DESCRIPTION takes the place of clap's one-line one;
    // EXAMPLES and the other hand-written sections go before VERSION.
    let (description, rest): (Vec<String>, Vec<String>) = split_sections(sections)
        .into_iter()
        .partition(|s| s.starts_with(".SH DESCRIPTION"));
    let (description, rest) = (description.concat(), rest.concat());
    let mut extra = Vec::new();
    write_examples(&mut extra, &examples)?;
    extra.extend_from_slice(rest.as_bytes());
    if has_output_files {
        extra.extend_from_slice(OUTPUT_FILES.as_bytes());
    }
    extra.extend_from_slice(PRIVILEGES.as_bytes());
    let extra = String::from_utf8_lossy(&extra);
    // clap defines the Aq string before every section; once will do.
    let mut defined = false;
    let mut last_br = false;
    for section in split_sections(&rendered) {
        match section.lines().next() {
            Some(".SH DESCRIPTION") if !description.is_empty() => {
                out.write_all(description.as_bytes())?;
                continue;
            }
            Some(".SH VERSION") => out.write_all(extra.as_bytes())?,
            _ => {}
        }
        for line in section.lines() {
            let aq = line.starts_with(".ie \\n(.g .ds Aq") || line.starts_with(".el .ds Aq");
            // A blank line is a paragraph space, and clap puts one between
            // two line breaks (possible values): keep one break instead.
            let br = line == ".br" || line.is_empty();
            if (aq && defined) || (br && last_br) || line.is_empty() {
                last_br |= br;
                continue;
            }
            last_br = br;
            write_wrapped(out, line.trim_end())?;
        }
        defined |= section.contains(".el .ds Aq");
    }
    Ok(())
}

/// Writes a roff line; a text line longer than 80 bytes is broken at
/// spaces (filled text joins them again), as man page style asks.
fn write_wrapped(out: &mut dyn Write, line: &str) -> io::Result<()> {
    if line.len() <= 80 || line.starts_with('.') {
        return writeln!(out, "{line}");
    }
    let mut width = 0;
    for (i, word) in line.split(' ').filter(|w| !w.is_empty()).enumerate() {
        if i > 0 && width + 1 + word.len() > 80 {
            writeln!(out)?;
            width = 0;
        } else if i > 0 {
            write!(out, " ")?;
            width += 1;
        }
        // A broken line must not start with a control character.
        if width == 0 && (word.starts_with('.') || word.starts_with('\'')) {
            write!(out, "\\&")?;
        }
        write!(out, "{word}")?;
        width += word.len();
    }
    writeln!(out)
}

/// A rendered page cut before each `.SH`.
fn split_sections(page: &str) -> Vec<String> {
    let mut sections = vec![String::new()];
    for line in page.lines() {
        if line.starts_with(".SH ") || sections.is_empty() {
            sections.push(String::new());
        }
        if let Some(last) = sections.last_mut() {
            last.push_str(line);
            last.push('\n');
        }
    }
    sections
}

/// EXAMPLES, from the `-h` text: `    command   # what it does` lines.
fn write_examples(out: &mut dyn Write, help: &str) -> io::Result<()> {
    let lines: Vec<(&str, &str)> = help
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            if l.is_empty() || l.ends_with(':') {
                return None;
            }
            Some(match l.split_once(" # ") {
                Some((cmd, what)) => (cmd.trim(), what.trim()),
                None => (l, ""),
            })
        })
        .collect();
    if lines.is_empty() {
        return Ok(());
    }
    writeln!(out, ".SH EXAMPLES")?;
    for (cmd, what) in lines {
        writeln!(out, ".TP\n.B {}", roff_escape(cmd))?;
        if !what.is_empty() {
            writeln!(out, "{}", roff_escape(&capitalize(what)))?;
        }
    }
    Ok(())
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect::<String>() + ".",
        None => String::new(),
    }
}

/// Text as roff: backslashes and hyphens escaped, no line starting with a
/// control character.
fn roff_escape(s: &str) -> String {
    let s = s.replace('\\', "\\e").replace('-', "\\-");
    if s.starts_with('.') || s.starts_with('\'') {
        format!("\\&{s}")
    } else {
        s
    }
}

/// SOURCE_DATE_EPOCH as a date (YYYY-MM-DD), for reproducible pages.
fn source_date() -> Option<String> {
    let secs: i64 = std::env::var("SOURCE_DATE_EPOCH").ok()?.parse().ok()?;
    Some(civil_date(secs))
}

fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    civil_date(secs)
}

/// The UTC date of a time in seconds since the epoch.
fn civil_date(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_become_tagged_paragraphs() {
        let mut out = Vec::new();
        write_examples(
            &mut out,
            "EXAMPLES:\n    runqlat -p 185    # trace this process\n    runqlat --json | jq .\n",
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            ".SH EXAMPLES\n.TP\n.B runqlat \\-p 185\nTrace this process.\n.TP\n.B runqlat \\-\\-json | jq .\n"
        );
    }

    #[test]
    fn source_dates_are_civil_dates() {
        std::env::set_var("SOURCE_DATE_EPOCH", "1700000000");
        assert_eq!(source_date().as_deref(), Some("2023-11-14"));
    }
}
