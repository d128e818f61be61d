//! dcsnoop against a program of the test's own doing known lookups
//! (dcstat's dc-work.c): N creates of new names, N stats of them, N stats
//! of names that do not exist. This machine's kernel offers neither fentry
//! nor kprobes: the tests that attach run in the VM guests and skip here,
//! saying so; the refusal is tested everywhere.

use std::collections::BTreeMap;
use std::process::Command;

use testkit::{feature_present, require_root};

const BIN: &str = env!("CARGO_BIN_EXE_dcsnoop");
const FILES: usize = 100;

const NEEDS: &str = "fentry or kprobes on lookup_fast, d_lookup and d_alloc_parallel";

/// What `--dry-run` prints for `args` under `env`; None where dcsnoop
/// cannot attach here: the test is skipped, said.
fn dry_run(args: &[&str], env: &[(&str, &str)]) -> Option<String> {
    testkit::dry_run_where_it_runs(BIN, args, env, NEEDS)
}

/// One run of dc-work under dcsnoop `args` -p: what the tool printed, and
/// the pid it traced.
fn run_work(args: &[&str], env: &[(&str, &str)]) -> (testkit::Finished, u32) {
    let prog = testkit::build_c_program(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../dcstat"),
        env!("CARGO_TARGET_TMPDIR"),
        "dc-work",
    );
    let dir = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR")).join(testkit::unique("dcs"));
    std::fs::create_dir_all(&dir).unwrap();
    let mut traced = 0;
    let f = testkit::trace_stopped(
        Command::new(&prog).arg(&dir).arg(FILES.to_string()),
        |pid| {
            traced = pid;
            let mut tool = Command::new(BIN);
            tool.args(args)
                .args(["-p", &pid.to_string()])
                .envs(env.iter().copied());
            tool
        },
    );
    let _ = std::fs::remove_dir_all(&dir);
    (f, traced)
}

/// How many times dcsnoop `args` --json showed each (type, name) of
/// dc-work's, whose records carry its pid and tid.
fn trace(args: &[&str], env: &[(&str, &str)]) -> BTreeMap<(String, String), usize> {
    let mut args = args.to_vec();
    args.push("--json");
    let (f, pid) = run_work(&args, env);
    let mut seen = BTreeMap::new();
    for o in f.json() {
        assert_eq!((&o["pid"], &o["tid"]), (&pid.into(), &pid.into()), "{o}");
        let s = |k: &str| {
            o[k].as_str()
                .unwrap_or_else(|| panic!("{k}: {o}"))
                .to_string()
        };
        assert!(o["ts"].as_f64().unwrap() >= 0.0, "{o}");
        *seen.entry((s("type"), s("file"))).or_insert(0) += 1;
    }
    seen
}

fn names(prefix: &str) -> impl Iterator<Item = String> + '_ {
    (0..FILES).map(move |i| format!("{prefix}-{i}"))
}

/// Without -a: each create of a new name is one failed lookup (d_lookup,
/// then d_alloc_parallel for the same name: shown once), and so is each
/// stat of a name never seen (d_alloc_parallel, which BCC's dcsnoop does not
/// see since 4.7), each shown once with its name; nothing else the program
/// does.
fn assert_misses(seen: &BTreeMap<(String, String), usize>, hooks: &str) {
    let misses: BTreeMap<&str, usize> = seen
        .iter()
        .filter(|((t, _), _)| t == "miss")
        .map(|((_, n), c)| (n.as_str(), *c))
        .collect();
    let want: BTreeMap<String, usize> = names("dc-file")
        .chain(names("dc-missing"))
        .map(|n| (n, 1))
        .collect();
    let want: BTreeMap<&str, usize> = want.iter().map(|(n, c)| (n.as_str(), *c)).collect();
    assert_eq!(misses, want, "{hooks}");
}

/// Without -a only d_lookup's hooks (`hook`), and the misses; with -a the
/// references too, each stat's one component (a name that exists or not)
/// at least once.
fn misses_and_references(env: &[(&str, &str)], hook: &str) {
    let Some(hooks) = dry_run(&[], env) else {
        return;
    };
    assert!(hooks.contains(hook), "{hooks}");
    assert!(
        !hooks.contains("lookup_fast"),
        "only d_lookup without -a: {hooks}"
    );
    let seen = trace(&[], env);
    assert!(seen.keys().all(|(t, _)| t == "miss"), "{seen:?}");
    assert_misses(&seen, &hooks);

    let hooks = dry_run(&["-a"], env).unwrap();
    assert!(hooks.contains("lookup_fast"), "{hooks}");
    let seen = trace(&["-a"], env);
    assert_misses(&seen, &hooks);
    for n in names("dc-file").chain(names("dc-missing")) {
        assert!(
            seen.contains_key(&("reference".to_string(), n.clone())),
            "{n}: {hooks}: {seen:?}"
        );
    }
}

#[test]
fn dcsnoop_shows_failed_lookups_with_fentry() {
    // The guests allow fentry (5.10, 6.1, 6.12): the first choice.
    misses_and_references(&[], "fexit d_lookup");
}

#[test]
fn dcsnoop_shows_failed_lookups_with_kprobes() {
    let env = [("BPFTOOLS_DISABLE", "fentry")];
    misses_and_references(&env, "kretprobe d_lookup");
}

/// BCC's lines: TIME(s) PID COMM T FILE; -T the time of day.
#[test]
fn dcsnoop_text_lines_are_bccs() {
    require_root();
    if !feature_present(dcsnoop::hooks_present(), NEEDS, None) {
        return;
    }
    for (args, time) in [(&[][..], "TIME(s)"), (&["-T"][..], "TIME")] {
        let (f, _) = run_work(args, &[]);
        assert_eq!(
            f.stdout[0].split_whitespace().collect::<Vec<_>>(),
            [time, "PID", "COMM", "T", "FILE"],
            "{f:?}"
        );
        let lines: Vec<&String> = f.stdout[1..].iter().collect();
        assert_eq!(lines.len(), 2 * FILES, "{f:?}");
        for l in lines {
            let cols: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(cols.len(), 5, "{l}");
            assert_eq!((cols[2], cols[3]), ("dc-work", "M"), "{l}");
            assert!(
                cols[4].starts_with("dc-file-") || cols[4].starts_with("dc-missing-"),
                "{l}"
            );
            if time == "TIME" {
                assert_eq!(cols[0].len(), 8, "HH:MM:SS: {l}");
            } else {
                assert!(cols[0].parse::<f64>().unwrap() >= 0.0, "{l}");
            }
        }
    }
}

/// Without fentry and kprobes (this machine, or forced): one line naming
/// what is missing, exit 1 (before anything loads: the hooks are chosen
/// before the object is).
#[test]
fn dcsnoop_without_fentry_or_kprobes_says_what_is_missing() {
    let env = [("BPFTOOLS_DISABLE", "fentry,kprobe")];
    let words = ["fentry", "kprobes", "d_lookup", "d_alloc_parallel"];
    testkit::assert_refused_in_one_line(BIN, &["-d", "1"], &env, &words);
    testkit::assert_refused_in_one_line(BIN, &["-a", "-d", "1"], &env, &words);
}
