//! Every check of a rule's keys that needs more than the key itself (serde checks each value
//! alone, in `selectors.rs`), in one place: format version 2's (`skip` with its reason and
//! nothing to match, `instance_of` only where an exception can be raised, round-trip
//! selectors only in round trips) and version 1's (`signal`, `exception`, `match`). Each
//! problem names its key; `load.rs` places it where the YAML tree says the key stands. (A
//! `where` is checked in `load.rs`, on the values as the tree types them, against the params.)

use super::schema::{OutcomeKind, RawRule};

/// A problem with one key of a rule.
pub(super) struct Problem {
    pub key: &'static str,
    pub message: String,
}

fn problem(key: &'static str, message: String) -> Problem {
    Problem { key, message }
}

/// The problems of rule `expect[index]`.
pub(super) fn rule(index: usize, raw: &RawRule, round_trip: bool) -> Vec<Problem> {
    let mut out = Vec::new();
    if !round_trip {
        for (key, present) in [
            ("dump_implementation", !raw.dump_implementation.is_empty()),
            ("load_implementation", !raw.load_implementation.is_empty()),
            ("dump_features", raw.dump_features.is_some()),
            ("load_features", raw.load_features.is_some()),
            (
                "dump_implementation_version",
                raw.dump_implementation_version.is_some(),
            ),
            (
                "load_implementation_version",
                raw.load_implementation_version.is_some(),
            ),
            ("older_python", raw.older_python.is_some()),
            ("newer_python", raw.newer_python.is_some()),
            ("either_python", raw.either_python.is_some()),
            ("older_implementation", !raw.older_implementation.is_empty()),
            ("newer_implementation", !raw.newer_implementation.is_empty()),
            (
                "either_implementation",
                !raw.either_implementation.is_empty(),
            ),
            ("older_features", raw.older_features.is_some()),
            ("newer_features", raw.newer_features.is_some()),
            ("either_features", raw.either_features.is_some()),
            ("same", raw.same.is_some()),
            ("different", raw.different.is_some()),
            ("pairs", raw.pairs.is_some()),
        ] {
            if present {
                out.push(problem(key, format!("expect[{index}].{key} selects round trips, but this case has `code`, not `dump` and `load`")));
            }
        }
    }
    for (key, empty) in [
        ("same", raw.same.as_ref().is_some_and(Vec::is_empty)),
        (
            "different",
            raw.different.as_ref().is_some_and(Vec::is_empty),
        ),
        ("pairs", raw.pairs.as_ref().is_some_and(Vec::is_empty)),
    ] {
        if empty {
            out.push(problem(key, format!("expect[{index}].{key} is an empty list: name at least one, or leave the key out")));
        }
    }
    if let Some(names) = &raw.check {
        if names.patterns().is_empty() {
            out.push(problem("check", format!("expect[{index}].check is an empty list: name at least one check (or a glob such as `frozen*`), or leave the key out")));
        } else if names.patterns().iter().any(|p| p.trim().is_empty()) {
            out.push(problem("check", format!("expect[{index}].check has a blank name: give the name the code gives `check(...)`, or a glob such as `frozen*`")));
        }
    }
    if raw.outcome == OutcomeKind::Skip {
        match raw.reason.as_deref().map(str::trim) {
            Some(r) if !r.is_empty() => {}
            _ => out.push(problem(
                "outcome",
                format!("expect[{index}] has `outcome: skip` without a `reason`: say why these runs are skipped (every report shows it)"),
            )),
        }
        for (key, value) in [
            ("exception", &raw.exception),
            ("instance_of", &raw.instance_of),
            ("match", &raw.pattern),
            ("signal", &raw.signal),
        ] {
            if let Some(v) = value {
                out.push(problem(key, format!("expect[{index}].{key} `{v}` cannot go with `outcome: skip`: a skipped run is not executed")));
            }
        }
    }
    if let Some(class) = &raw.instance_of {
        if raw.outcome.raises_nothing() {
            out.push(problem(
                "instance_of",
                format!("expect[{index}].instance_of `{class}` cannot go with `outcome: {}`: no exception is raised", raw.outcome),
            ));
        }
        if !is_dotted_name(class) {
            out.push(problem(
                "instance_of",
                format!("expect[{index}].instance_of `{class}` is not a class name (like `ValueError` or `ipaddress.AddressValueError`)"),
            ));
        }
    }
    out
}

/// The problems of rule `expect[index]`'s format-version-1 keys that need more than the key
/// itself: round-trip selectors only in round trips, `signal` only with a crash and a real
/// signal's name, `exception` and `match` only where an exception is raised, `exception` a
/// dotted name.
pub(super) fn expectation(index: usize, raw: &RawRule, round_trip: bool) -> Vec<Problem> {
    let mut out = Vec::new();
    if !round_trip {
        for (key, present) in [
            ("dump_python", raw.dump_python.is_some()),
            ("load_python", raw.load_python.is_some()),
            ("phase", raw.phase.is_some()),
        ] {
            if present {
                out.push(problem(key, format!("expect[{index}].{key} selects round trips, but this case has `code`, not `dump` and `load`")));
            }
        }
    }
    if let Some(sig) = &raw.signal {
        if !raw.outcome.has(OutcomeKind::Crash) {
            out.push(problem(
                "signal",
                format!("expect[{index}].signal `{sig}` only goes with `outcome: crash`, not `outcome: {}`", raw.outcome),
            ));
        } else if crate::sys::signal::number(sig).is_none() {
            out.push(problem(
                "signal",
                format!(
                    "expect[{index}].signal `{sig}` is not a signal name (like SIGSEGV or SIGABRT)"
                ),
            ));
        }
    }
    if raw.outcome.raises_nothing() {
        for (key, value) in [
            ("exception", raw.exception.as_deref()),
            ("match", raw.pattern.as_deref()),
        ] {
            if let Some(value) = value {
                out.push(problem(key, format!("expect[{index}].{key} `{value}` cannot go with `outcome: {}`: no exception is raised", raw.outcome)));
            }
        }
    }
    if let Some(exc) = &raw.exception {
        if !is_dotted_name(exc) {
            out.push(problem("exception", format!("expect[{index}].exception `{exc}` is not an exception name (like `PicklingError` or `_pickle.PicklingError`)")));
        }
    }
    out
}

/// `ValueError`, `pickle.PicklingError`: dotted Python identifiers.
pub(super) fn is_dotted_name(s: &str) -> bool {
    s.split('.').all(|part| {
        let mut chars = part.chars();
        matches!(chars.next(), Some(c) if c == '_' || c.is_alphabetic())
            && chars.all(|c| c == '_' || c.is_alphanumeric())
    })
}
