//! `crosspickle explore` keeps both cores busy: the next batch's dumps start while this
//! batch's loads run (and its findings are shrunk), on a queue of `-j` busy workers, rather
//! than all dumps, then all loads, then the next batch.

use crate::support::*;

/// Three builders, one a batch: each logs its build, and the loads of its value log theirs
/// (the value's reducer names `_slow`), slowly on 3.12 only.
const VALUES: &str = "import os
import sys
import time

LOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'log.txt')


def _say(what):
    with open(LOG, 'a') as f:
        f.write('%s %d.%d\\n' % (what, sys.version_info[0], sys.version_info[1]))


class Marker(object):
    def __init__(self, n):
        self.n = n

    def __reduce__(self):
        return (_slow, (self.n,))


def _slow(n):
    _say('load %d' % n)
    if sys.version_info[:2] == (3, 12):
        time.sleep(0.1)
    return Marker(n)


def first():
    _say('build 0')
    return Marker(0)


def second():
    _say('build 1')
    return Marker(1)


def third():
    _say('build 2')
    return Marker(2)
";

trial!(
    the_next_batch_dumps_while_this_one_loads,
    needs = &["3.11", "3.12"]
);
/// With one value a batch and 3.12's loads slow, 3.11 builds batch k + 1 before 3.12 has
/// loaded the last pickle of batch k (before: never, each batch waited for the one before);
/// every value is still built and loaded on both, and nothing is found.
fn the_next_batch_dumps_while_this_one_loads() -> TestResult {
    let dir = folder(&[("values.py", VALUES)]);
    let d = dir.path();
    let mut args = vec!["explore".to_string()];
    args.extend(args_on(
        &["3.11", "3.12"],
        &[
            "--values",
            "values.py",
            "--count",
            "3",
            "--batch",
            "1",
            "-j",
            "2",
            "--json",
            "r.json",
        ],
    ));
    let run = Run::from(crosspickle(d).args(&args).output().expect("runs"));
    run.expect_code(0)?;
    let log = std::fs::read_to_string(d.join("log.txt")).unwrap_or_default();
    let lines: Vec<(&str, usize, &str)> = log
        .lines()
        .filter_map(|l| {
            let mut w = l.split(' ');
            Some((w.next()?, w.next()?.parse().ok()?, w.next()?))
        })
        .collect();
    for n in 0..3 {
        for version in ["3.11", "3.12"] {
            for what in ["build", "load"] {
                check(
                    lines.contains(&(what, n, version)),
                    format!("no `{what} {n} {version}` in the log:\n{log}"),
                )?;
            }
        }
    }
    let overlapped = (0..2).any(|k| {
        let last_load = lines.iter().rposition(|&(w, n, _)| (w, n) == ("load", k));
        let next_build = lines
            .iter()
            .position(|&(w, n, _)| (w, n) == ("build", k + 1));
        matches!((next_build, last_load), (Some(b), Some(l)) if b < l)
    });
    check(
        overlapped,
        format!("no batch built before the one before it was loaded:\n{log}"),
    )
}
