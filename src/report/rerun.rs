//! The terminal's closing lines about single runs: the short summary of the failing runs, each
//! with the arguments that select it again (`-k` and the interpreters by path), and the
//! slowest runs (`--durations`).
//!
//! The `-k` expression is made exact among the cases of the results: `-k` matches substrings
//! of `case-id[params]`, the file path and the tags, so a case whose name holds another's
//! (`a` in `ab`) gets `and not ab`. The interpreters are given by path (`-p PATH` selects that
//! executable alone), the producer and consumer of a round trip with `--dump-python` and
//! `--load-python`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::case::run_name;
use crate::results::{Results, RunRecord};

/// `'it'\''s'`: one word for a POSIX shell.
pub fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=+,:@%".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// What `-k` is matched against for a case with params, as [`crate::select::Keyword::selects`]
/// makes it (lower-cased).
fn haystack(results: &Results, case: &str, name: &str) -> String {
    let (path, tags) = results
        .cases
        .get(case)
        .map(|c| (c.path.clone(), c.tags.join(" ")))
        .unwrap_or_default();
    format!("{name} {path} {tags}").to_lowercase()
}

/// Every case with its params in `results`, once: its name (lower-cased) and what `-k` is
/// matched against. Made once for a whole summary, so that each run's expression costs one
/// pass over the distinct names, not over every run.
pub struct Names(BTreeMap<String, String>);

impl Names {
    pub fn of(results: &Results) -> Names {
        let mut names = BTreeMap::new();
        for r in &results.runs {
            let name = run_name(&r.case, &r.params, None, None);
            if let std::collections::btree_map::Entry::Vacant(slot) = names.entry(name) {
                let hay = haystack(results, &r.case, slot.key());
                slot.insert(hay);
            }
        }
        Names(
            names
                .into_iter()
                .map(|(n, h)| (n.to_lowercase(), h))
                .collect(),
        )
    }
}

/// The `-k` expression that selects `run`'s case with its params and no other case of
/// `results` (`names`: [`Names::of`] the same results).
pub fn keyword(results: &Results, names: &Names, run: &RunRecord) -> String {
    let name = run_name(&run.case, &run.params, None, None);
    let word = name.to_lowercase();
    let own = haystack(results, &run.case, &name);
    let others: BTreeSet<&str> = names
        .0
        .iter()
        .filter(|(n, hay)| **n != word && hay.contains(&word))
        // `not other` must keep this case: other's name is not in this one's haystack.
        .filter(|(n, _)| !own.contains(n.as_str()))
        .map(|(n, _)| n.as_str())
        .collect();
    let mut expr = name;
    for other in others {
        let _ = write!(expr, " and not {other}");
    }
    expr
}

/// The arguments that run `run` alone again, after the same case paths: `-k EXPR -p PATH`, or
/// for a round trip `-k EXPR -p P -p C --dump-python P --load-python C`.
pub fn rerun_args(results: &Results, names: &Names, run: &RunRecord) -> String {
    let path = |label: &str| {
        results
            .interpreters
            .iter()
            .find(|i| i.label == label)
            .map(|i| shell_quote(&i.executable.display().to_string()))
            .unwrap_or_else(|| shell_quote(label))
    };
    let mut args = format!("-k {}", shell_quote(&keyword(results, names, run)));
    match (&run.dump_python, &run.load_python) {
        (Some(d), Some(l)) if d.starts_with("recorded:") => {
            // A recorded producer is no interpreter to select: `--dump-python` names it.
            let (d, l) = (shell_quote(d), path(l));
            let _ = write!(args, " -p {l} --dump-python {d} --load-python {l}");
        }
        (Some(d), Some(l)) => {
            let (d, l) = (path(d), path(l));
            let _ = write!(args, " -p {d} -p {l} --dump-python {d} --load-python {l}");
        }
        _ => {
            let _ = write!(args, " -p {}", path(&run.python));
        }
    }
    args
}

/// The `n` slowest runs (every run for 0), slowest first: `0.53s  name on label`.
pub fn slowest(results: &Results, n: usize) -> Vec<String> {
    let mut timed: Vec<(f64, &RunRecord)> = results
        .runs
        .iter()
        .filter_map(|r| {
            let o = r.observed.as_ref()?;
            Some((o.duration_s + r.dump_duration_s.unwrap_or(0.0), r))
        })
        .collect();
    timed.sort_by(|a, b| b.0.total_cmp(&a.0));
    let take = if n == 0 { timed.len() } else { n };
    timed
        .into_iter()
        .take(take)
        .map(|(s, r)| format!("{s:7.3}s  {} on {}", r.name(), r.python))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::CaseInfo;
    use crate::verdict::Verdict;

    fn record(case: &str) -> RunRecord {
        RunRecord::for_tests(case, "cpython-3.12.1", Verdict::Regression)
    }

    #[test]
    fn keyword_excludes_the_cases_that_hold_the_name() {
        let mut results = Results::new();
        for (id, tags) in [("a", vec![]), ("ab", vec![]), ("x", vec!["a".to_string()])] {
            results.cases.insert(
                id.into(),
                CaseInfo {
                    title: id.into(),
                    path: format!("cases/{id}.yaml"),
                    tags,
                    links: vec![],
                    source: None,
                    code_starts: (None, None),
                    setup_lines: Default::default(),
                    bounce_starts: (None, None),
                },
            );
            results.runs.push(record(id));
        }
        let names = Names::of(&results);
        assert_eq!(
            keyword(&results, &names, &results.runs[0]),
            "a and not ab and not x"
        );
        assert_eq!(keyword(&results, &names, &results.runs[1]), "ab");
        assert_eq!(
            rerun_args(&results, &names, &results.runs[1]),
            "-k ab -p cpython-3.12.1"
        );
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("c[n=1]"), "'c[n=1]'");
        assert_eq!(shell_quote("v='5'"), r"'v='\''5'\'''");
        assert_eq!(shell_quote("/usr/bin/python3"), "/usr/bin/python3");
    }
}
