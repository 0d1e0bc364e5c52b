//! Warnings about version ranges of case files that match no interpreter of this machine: a
//! case's `python:` that none matches skips the case everywhere (a run that says nothing and
//! exits 0), a rule's `python:`, `dump_python:` or `load_python:` that none matches never
//! decides anything here. Neither is an error (another machine may have that interpreter; a
//! range that can match no version at all is one, at load), but a typo such as `>=3.20` for
//! `>=3.10` should not pass unseen. `run` warns about each case's range, at its line and
//! column, and counts the rules' in one note (a project's rules name versions that one CI job
//! lacks); `list --expected` warns about each. The corpus shipped inside crosspickle is written
//! for every version and is not checked, nor are its files in a checkout of crosspickle.

use crate::case::Case;
use crate::python::Interpreter;

/// Warnings printed at most; the rest are counted.
const MAX_WARNINGS: usize = 10;

/// Warn about the version ranges of `cases` that match none of `machine`, the usable
/// interpreters discovery found: each case's, and each rule's when `every_rule`, else the
/// rules' counted in one note.
pub fn warn_unmatched<'a>(
    cases: impl IntoIterator<Item = &'a Case>,
    machine: &[Interpreter],
    every_rule: bool,
) {
    if machine.is_empty() {
        return;
    }
    let (mut warnings, mut rules) = (Vec::new(), Vec::new());
    let mut seen = std::collections::HashSet::new();
    for case in cases {
        if crate::corpus::is_shipped(&case.path) || !seen.insert(case.path.clone()) {
            continue;
        }
        let (of_case, of_rules) = unmatched_in(case, machine);
        warnings.extend(of_case);
        rules.extend(of_rules);
    }
    if every_rule {
        warnings.append(&mut rules);
    }
    for w in warnings.iter().take(MAX_WARNINGS) {
        eprintln!("warning: {w}");
    }
    if warnings.len() > MAX_WARNINGS {
        eprintln!(
            "warning: and {} more version ranges that match no interpreter here",
            warnings.len() - MAX_WARNINGS
        );
    }
    if let Some(first) = rules.first() {
        let first = first
            .split(" matches no interpreter")
            .next()
            .unwrap_or(first);
        eprintln!(
            "note: {} {} no interpreter of this machine, such as {first} (`crosspickle \
             list --expected` names each)",
            crate::report::text::count(
                rules.len(),
                "rule's version range",
                "rules' version ranges"
            ),
            if rules.len() == 1 { "matches" } else { "match" }
        );
    }
}

/// The warnings about the ranges of `case` (kept with their places at load): the case's, and
/// its rules'.
fn unmatched_in(case: &Case, machine: &[Interpreter]) -> (Vec<String>, Vec<String>) {
    let found = found(machine);
    let (mut of_case, mut of_rules) = (Vec::new(), Vec::new());
    for range in &case.ranges {
        if machine.iter().any(|m| range.request.contains(&m.version)) {
            continue;
        }
        let (effect, out) = if range.of_rule {
            ("the rule decides no run here", &mut of_rules)
        } else {
            ("the case is skipped on every one of them", &mut of_case)
        };
        let (line, column) = range.at;
        out.push(format!(
            "{}:{line}:{column}: {} `{}` matches no interpreter of this machine ({found}): \
             {effect}",
            case.path.display(),
            range.field,
            range.request
        ));
    }
    (of_case, of_rules)
}

/// The machine's interpreters in a few words: `found 2.7.18 to 3.13.0`.
fn found(machine: &[Interpreter]) -> String {
    let mut versions: Vec<_> = machine.iter().map(|m| &m.version).collect();
    versions.sort();
    match (versions.first(), versions.last()) {
        (Some(low), Some(high)) if low != high => format!("found {low} to {high}"),
        (Some(only), _) => format!("found {only} only"),
        _ => "found none".into(),
    }
}
