//! bpftools: every tool in one binary, run as the tool its name says
//! (`/usr/sbin/biolatency` is a link to it), with or without a program
//! prefix (`bpf-biolatency`). As `bpftools` it lists the tools and writes
//! their man pages and completions for packaging.

mod doctor;

use std::io::Write;
use std::process::ExitCode;

use common::run::lifecycle::Entry;
use registry::ToolInfo;

include!(concat!(env!("OUT_DIR"), "/tools.rs"));

const USAGE: &str = "\
usage: TOOL [OPTIONS]          run a tool (this binary, linked or copied as TOOL)
       bpftools --list         every tool, with what it shows
       bpftools doctor [TOOL...] [--json]
                               what each tool would use here, or why it would not run,
                               and what this kernel and process offer
       bpftools doctor --tracepoints [PATTERN] [-v] | --usdt BINARY|PID | --loaded
                               what can be traced; the BPF programs loaded now
       bpftools --generate man|bash|zsh|fish TOOL
                               TOOL's man page or completions (TOOL bpftools: bpftools(8),
                               bpftools-doctor: bpftools-doctor(8))";

fn main() -> ExitCode {
    let name = common::run::program_name();
    if let Some(tool) = tool_for(&name) {
        return (tool.main)();
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut out = std::io::stdout().lock();
    let result = match args[..] {
        ["--list"] => list(&mut out),
        ["doctor", ref rest @ ..] => doctor::run(rest, &mut out),
        ["--generate", what, tool] => generate(what, tool, &mut out),
        ["-h" | "--help"] => writeln!(out, "{USAGE}"),
        ["-V" | "--version"] => writeln!(out, "bpftools {}", env!("CARGO_PKG_VERSION")),
        _ => {
            let names: Vec<&str> = TOOLS.iter().map(|t| t.info.name).collect();
            eprintln!(
                "bpftools: run me as one of the tools (a link named {}), not as {name}\n{USAGE}",
                names.join(", ")
            );
            return ExitCode::from(2);
        }
    };
    match result.and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bpftools: {e}");
            ExitCode::from(if e.kind() == std::io::ErrorKind::InvalidInput {
                2
            } else {
                1
            })
        }
    }
}

/// `name  summary`, a line a tool and a line an alias (`ext4slower  as
/// fsslower -t ext4`), as `busybox --list` names its applets: packaging
/// makes a link, a man page and completions for each line.
fn list(out: &mut dyn Write) -> std::io::Result<()> {
    let width = TOOLS
        .iter()
        .flat_map(|t| t.info.all_names())
        .map(str::len)
        .max()
        .unwrap_or(0);
    for t in TOOLS {
        writeln!(out, "{:<width$}  {}", t.info.name, t.info.summary)?;
        for alias in t.info.aliases {
            writeln!(out, "{alias:<width$}  {}, as {alias}", t.info.name)?;
        }
    }
    Ok(())
}

fn infos() -> Vec<&'static ToolInfo> {
    TOOLS.iter().map(|t| t.info).collect()
}

fn generate(what: &str, tool: &str, out: &mut dyn Write) -> std::io::Result<()> {
    if tool == "bpftools" && what == "man" {
        return common::output::manpage::bundle_page(&infos(), out);
    }
    if tool == "bpftools-doctor" && what == "man" {
        return common::output::manpage::doctor_page(out);
    }
    let found = TOOLS
        .iter()
        .find_map(|t| t.info.all_names().find(|n| *n == tool).map(|n| (t, n)));
    let Some((entry, name)) = found else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("--generate: no tool named '{tool}' (see bpftools --list)"),
        ));
    };
    // An alias's page and completions are its tool's, under its name.
    let command = (entry.command)().name(name);
    common::output::manpage::generate(command, entry.info, &infos(), what, out)
}

/// The tool a program name names: `biolatency`, an alias (`ext4slower`),
/// either with a prefix ending in `-` (`bpf-biolatency`, Fedora's naming).
fn tool_for(name: &str) -> Option<&'static Entry> {
    TOOLS.iter().find(|t| t.info.invoked_as(name).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn names_with_and_without_a_prefix_find_their_tool() {
        assert!(tool_for("biolatency").is_some());
        assert!(tool_for("bpf-biolatency").is_some());
        assert!(tool_for("xbiolatency").is_none());
        assert!(tool_for("bpftools").is_none());
        for name in ["ext4slower", "bpf-nfsslower"] {
            assert_eq!(tool_for(name).unwrap().info.name, "fsslower");
        }
    }

    /// clap's debug assertions over every tool's options (each tool's
    /// refused arguments are its contract test's `refused`).
    #[test]
    fn every_tool_declares_its_options_consistently() {
        for entry in TOOLS {
            (entry.command)().debug_assert();
        }
    }

    #[test]
    fn aliases_have_their_own_pages_and_list_lines() {
        let mut page = Vec::new();
        generate("man", "xfsslower", &mut page).unwrap();
        let page = String::from_utf8(page).unwrap();
        assert!(page.contains("xfsslower"), "{page}");
        let mut lines = Vec::new();
        list(&mut lines).unwrap();
        let lines = String::from_utf8(lines).unwrap();
        assert!(
            lines.lines().any(|l| l.starts_with("ext4slower ")),
            "{lines}"
        );
    }

    /// Every folder under tools/ is in the bundle: a new tool's one line in
    /// dist/Cargo.toml is named when it is missing.
    #[test]
    fn every_tool_folder_is_in_the_bundle() {
        let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools");
        let mut missing = Vec::new();
        for entry in std::fs::read_dir(&tools).unwrap() {
            let entry = entry.unwrap();
            if !entry.path().join("Cargo.toml").is_file() {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            if !TOOLS.iter().any(|t| t.info.name == name) {
                missing.push(format!(
                    "{name} = {{ path = \"../tools/{name}\" }}  (tools/{name} is not in the bundle)"
                ));
            }
        }
        assert!(
            missing.is_empty(),
            "add to [dependencies] in dist/Cargo.toml:\n{}",
            missing.join("\n")
        );
    }

    /// The registry's own checks, and each entry's clap command named as its
    /// description says.
    #[test]
    fn descriptions_are_consistent() {
        registry::check(&infos()).unwrap();
        for t in TOOLS {
            assert_eq!((t.command)().get_name(), t.info.name);
        }
    }

    /// Which container did it, in every kind: event and top tools name it
    /// in a column (`--containers`), stack tools root stacks at it
    /// (`--containers`), histogram tools split by it (`--per-container`),
    /// and every tool with a cgroup filter takes it by container or unit.
    #[test]
    fn every_kind_offers_its_container_options() {
        use registry::Kind;
        for t in TOOLS {
            let cmd = (t.command)();
            let longs: Vec<&str> = cmd.get_arguments().filter_map(|a| a.get_long()).collect();
            let has = |o: &str| longs.contains(&o);
            // A top tool keeps rows per task: its -r/--rows; swapin's and
            // llcstat's rows are processes too, all of them printed (BCC's
            // have no -r).
            let name = t.info.name;
            let per_task = match t.info.kind {
                Kind::Event | Kind::Stack => true,
                Kind::IntervalTable => has("rows") || ["swapin", "llcstat"].contains(&name),
                Kind::Histogram => false,
            };
            assert_eq!(has("containers"), per_task, "{name}: --containers");
            // Figures of a CPU, not of a task: interrupt time (an interrupt
            // comes in whatever task runs; --per-container is refused with
            // a reason), run queue lengths and kernel workers' queues.
            if ["softirqs", "hardirqs", "runqlen", "wqlat"].contains(&name) {
                continue;
            }
            assert_eq!(
                has("per-container"),
                t.info.kind == Kind::Histogram,
                "{name}"
            );
            // A filter by cgroup, container or unit wherever events belong
            // to tasks or sockets (memleak: the processes it is given).
            let filters = (per_task || t.info.kind == Kind::Histogram) && name != "memleak";
            assert!(has("cgroup") || !filters, "{name}: --cgroup");
            if has("cgroup") {
                assert!(
                    has("container") && has("unit"),
                    "{name}: --container, --unit"
                );
            }
        }
    }

    /// The kind each tool declares is the pipeline it builds (with its
    /// first dry run's arguments); an event tool reports itself.
    #[test]
    fn every_tool_runs_the_pipeline_of_its_declared_kind() {
        use registry::Kind;
        // Not on their kind's pipeline yet (issue 49): argdist's tables and
        // histograms, memleak's report, klockstat's two tables (the stack
        // kind keeps one value per stack; klockstat keeps a count, a sum
        // and a longest with its task and lock, for waits and for holds).
        let own = ["argdist", "memleak", "klockstat"];
        for t in TOOLS {
            let mut argv = vec![t.info.name.to_string()];
            let first = t.info.dry_runs.first().map_or("", |d| d.args);
            let pid = std::process::id().to_string();
            argv.extend(first.split_whitespace().map(|a| a.replace("$$", &pid)));
            let built = (t.pipeline_kind)(&argv);
            let kind = built.unwrap_or_else(|e| panic!("{argv:?}: {e:#}"));
            let expected = match t.info.kind {
                Kind::Event => None,
                _ if own.contains(&t.info.name) => None,
                k => Some(k),
            };
            assert_eq!(kind, expected, "{}", t.info.name);
        }
    }

    #[test]
    fn every_man_page_lists_its_family() {
        for t in TOOLS {
            let mut page = Vec::new();
            generate("man", t.info.name, &mut page).unwrap();
            let page = String::from_utf8(page).unwrap();
            let see = &page[page.find(".SH SEE ALSO").expect("SEE ALSO")..];
            assert!(see.contains("\\fBbpftools\\fR(8)"), "{see}");
            for other in TOOLS.iter().filter(|o| o.info.name != t.info.name) {
                let name = other.info.name.replace('-', "\\-");
                let page_name = format!("{}(8)", other.info.name);
                let related = other.info.family == t.info.family
                    || t.info.see_also.contains(&page_name.as_str());
                assert_eq!(
                    see.contains(&format!("\\fB{name}\\fR(8)")),
                    related,
                    "{}: {name} in SEE ALSO: {see}",
                    t.info.name
                );
            }
            assert_eq!(page.matches(".SH SEE ALSO").count(), 1, "{}", t.info.name);
        }
    }
}
