//! A rule of a case in words, as `list` and its expected matrix show it: its selectors and what
//! it expects.

use crate::case::{Expected, OutcomeKind, Rule, WhereValue};

/// A rule in words: its selectors (`where` included) and what it expects, as the expected
/// matrix's legend shows it.
pub fn describe_rule(rule: &Rule) -> String {
    let mut scope = selectors(rule);
    for (name, values) in &rule.where_ {
        let names: Vec<String> = values.values().iter().map(|v| v.to_string()).collect();
        scope.push(match values {
            WhereValue::AnyOf(_) => format!("{name}={}", names.join("|")),
            WhereValue::NoneOf(_) => format!("{name} not {}", names.join("|")),
        });
    }
    let scope = if scope.is_empty() {
        "everywhere".to_string()
    } else {
        scope.join(", ")
    };
    format!("{scope}: {}", describe_outcome(&rule.expected))
}

/// A rule's selectors other than `where`, in words.
pub fn selectors(rule: &Rule) -> Vec<String> {
    let mut out = rule.on.describe("");
    out.extend(rule.dump.describe("dumped"));
    out.extend(rule.load.describe("loaded"));
    out.extend(rule.relations.describe());
    if let Some(p) = &rule.phase {
        out.push(format!("{p} phase"));
    }
    out
}

/// `fail`, `error AttributeError`, `error, an instance of ValueError`, `skipped`, with the
/// reason in parentheses.
pub fn describe_outcome(expected: &Expected) -> String {
    let mut outcome = match expected.outcome {
        OutcomeKind::Skip => "skipped".to_string(),
        other if expected.also.is_empty() => other.to_string(),
        // `outcome: [pass, error]`, as written.
        other => {
            let all: Vec<String> = std::iter::once(other)
                .chain(expected.also.iter().copied())
                .map(|k| k.to_string())
                .collect();
            format!("[{}]", all.join(", "))
        }
    };
    if let Some(e) = &expected.exception {
        outcome.push_str(&format!(" {e}"));
    }
    if let Some(c) = &expected.instance_of {
        outcome.push_str(&format!(", an instance of {c}"));
    }
    if let Some(s) = &expected.signal {
        outcome.push_str(&format!(" {s}"));
    }
    match &expected.reason {
        Some(reason) => format!("{outcome} ({reason})"),
        None => outcome,
    }
}
