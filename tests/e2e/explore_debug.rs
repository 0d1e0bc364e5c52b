//! `crosspickle explore` on a debug build and its release build: the debug build runs the C
//! pickler and unpickler only, the release build the Python ones for both (the same
//! `pickle.py`); a debug build explored without its release build runs both.

use crate::support::*;

/// One builder whose value logs, at each dump and each load, the interpreter (debug or not)
/// and which pickler or unpickler called it (pickle.py's frames: the Python one).
const VALUES: &str = "import os
import sys

LOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'log.txt')


def _say(what):
    caller = sys._getframe(2).f_code.co_filename
    which = 'py' if os.path.basename(caller).startswith('pickle.') else 'c'
    build = 'debug' if hasattr(sys, 'gettotalrefcount') else 'release'
    with open(LOG, 'a') as f:
        f.write('%s %s %s\\n' % (build, what, which))


class Logged(object):
    def __reduce_ex__(self, protocol):
        _say('dump')
        return (_made, ())


def _made():
    _say('load')
    return Logged()


def logged():
    return Logged()
";

/// What the log says each build did: (build, what, pickler) as written.
type Logged = std::collections::BTreeSet<(String, String, String)>;

/// `explore` of two values of the builder on `needs`, which finds nothing: its run, the log
/// (removed for the next run) and what the log says.
fn explore_logged(
    d: &std::path::Path,
    needs: &[&str],
) -> Result<(Run, String, Logged), libtest_mimic::Failed> {
    let mut args = vec!["explore".to_string()];
    args.extend(args_on(
        needs,
        &["--values", "values.py", "--count", "2", "--json", "r.json"],
    ));
    let run = Run::from(crosspickle(d).args(&args).output().expect("runs"));
    run.expect_code(0)?;
    let log = std::fs::read_to_string(d.join("log.txt")).unwrap_or_default();
    std::fs::remove_file(d.join("log.txt")).ok();
    let seen = log
        .lines()
        .filter_map(|l| {
            let mut w = l.split(' ');
            Some((
                w.next()?.to_string(),
                w.next()?.to_string(),
                w.next()?.to_string(),
            ))
        })
        .collect();
    Ok((run, log, seen))
}

fn entry(build: &str, what: &str, which: &str) -> (String, String, String) {
    (build.into(), what.into(), which.into())
}

trial!(
    a_debug_build_runs_the_c_pickler_only_beside_its_release_build,
    needs = &["debug", "system"]
);
/// Debian's 3.11.2 and its debug build: the release build dumps and loads with both, the
/// debug build with the C ones only (before: both on both); the JSON report and the summary
/// say so. The debug build alone runs both.
fn a_debug_build_runs_the_c_pickler_only_beside_its_release_build() -> TestResult {
    let dir = folder(&[("values.py", VALUES)]);
    let d = dir.path();
    let (run, log, seen) = explore_logged(d, &["debug", "system"])?;
    for what in ["dump", "load"] {
        for which in ["c", "py"] {
            check(
                seen.contains(&entry("release", what, which)),
                format!("the release build did not {what} with the {which} pickler:\n{log}"),
            )?;
        }
        check(
            seen.contains(&entry("debug", what, "c")),
            format!("the debug build did not {what} with the C pickler:\n{log}"),
        )?;
        check(
            !seen.contains(&entry("debug", what, "py")),
            format!("the debug build ran the Python {what} beside its release build:\n{log}"),
        )?;
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("r.json")).unwrap_or_default())
            .unwrap_or_default();
    check(
        report["c_pickler_only"] == serde_json::json!({"cpython-3.11.2+debug": "cpython-3.11.2"}),
        format!(
            "the report's c_pickler_only is {}",
            report["c_pickler_only"]
        ),
    )?;
    check(
        run.stdout.contains(
            "debug builds ran the C pickler only, their release builds' pickle.py standing for theirs: cpython-3.11.2+debug (as cpython-3.11.2)",
        ),
        format!("the summary does not say so:\n{}", run.stdout),
    )?;

    let (run, log, seen) = explore_logged(d, &["debug"])?;
    for what in ["dump", "load"] {
        check(
            seen.contains(&entry("debug", what, "py")),
            format!("the debug build alone did not {what} with the Python pickler:\n{log}"),
        )?;
    }
    check(
        !run.stdout.contains("C pickler only"),
        format!("the summary of the debug build alone:\n{}", run.stdout),
    )
}
