//! What a case's rules mean, beside [`Case::expected_for`] which
//! applies them: an expectation in words ([`Expected::describe`], the one describer of `list`,
//! the reports and the annotations), a rule in words with its selectors, and the summary of a
//! case's rules in order, first match winning (which earlier rule takes which params).

use super::model::{Case, Expected, Rule};
use super::params::Params;
use super::schema::OutcomeKind;
use super::selectors::{InterpreterSelector, VersionRequests, WhereValue};

/// Who reads an expectation in words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wording {
    /// A rule as `list` shows it: `error KeyError, an instance of LookupError (why)`,
    /// `[pass, error]`, `skipped (why)`.
    Rule,
    /// What a run was expected to show, as the reports and annotations say it beside what it
    /// showed: `error: ValueError matching /boom/`, `crash (SIGSEGV)`, `pass or error:
    /// RuntimeError, each attempt`.
    Run,
}

/// `crash (SIGSEGV)`, `error: ValueError`: an outcome with its signal and exception type, as
/// both what was observed and what was expected are described.
pub fn head(outcome: OutcomeKind, signal: Option<&str>, exception: Option<&str>) -> String {
    let mut s = outcome.to_string();
    if let Some(sig) = signal {
        s.push_str(&format!(" ({sig})"));
    }
    if let Some(e) = exception {
        s.push_str(&format!(": {e}"));
    }
    s
}

impl Expected {
    /// This expectation in words, for `list` ([`Wording::Rule`]) or for a report of a run
    /// ([`Wording::Run`]).
    pub fn describe(&self, wording: Wording) -> String {
        match wording {
            Wording::Rule => self.as_rule(),
            Wording::Run => self.as_run(),
        }
    }

    /// `fail`, `error AttributeError`, `error, an instance of ValueError`, `skipped`, with the
    /// reason in parentheses.
    fn as_rule(&self) -> String {
        let mut outcome = match self.outcome {
            OutcomeKind::Skip => "skipped".to_string(),
            other if self.also.is_empty() => other.to_string(),
            // `outcome: [pass, error]`, as written.
            other => {
                let all: Vec<String> = std::iter::once(other)
                    .chain(self.also.iter().copied())
                    .map(|k| k.to_string())
                    .collect();
                format!("[{}]", all.join(", "))
            }
        };
        if let Some(e) = &self.exception {
            outcome.push_str(&format!(" {e}"));
        }
        if let Some(c) = &self.instance_of {
            outcome.push_str(&format!(", an instance of {c}"));
        }
        if let Some(s) = &self.signal {
            outcome.push_str(&format!(" {s}"));
        }
        match &self.reason {
            Some(reason) => format!("{outcome} ({reason})"),
            None => outcome,
        }
    }

    /// `error: ValueError matching /boom/`, `error: an instance of pickle.PicklingError`,
    /// `error: ValueError, an instance of Exception`.
    fn as_run(&self) -> String {
        let mut s = head(
            self.outcome,
            self.signal.as_deref(),
            self.exception.as_deref(),
        );
        if !self.also.is_empty() {
            // `outcome: [pass, error]`: `pass or error: RuntimeError, each attempt`.
            let others: Vec<String> = self.also.iter().map(|k| format!(" or {k}")).collect();
            s = format!(
                "{}{}{}, each attempt",
                self.outcome,
                others.concat(),
                self.exception
                    .as_deref()
                    .map(|x| format!(": {x}"))
                    .unwrap_or_default()
            );
        }
        if let Some(base) = &self.instance_of {
            let sep = if self.exception.is_some() { ", " } else { ": " };
            s.push_str(&format!("{sep}an instance of {base}"));
        }
        if let Some(m) = &self.pattern {
            s.push_str(&format!(" matching /{m}/"));
        }
        s
    }
}

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
    format!("{scope}: {}", rule.expected.describe(Wording::Rule))
}

/// A rule's selectors other than `where`, in words.
pub fn selectors(rule: &Rule) -> Vec<String> {
    let mut out = rule.on.describe("");
    out.extend(rule.dump.describe("dumped"));
    out.extend(rule.load.describe("loaded"));
    out.extend(rule.relations.describe());
    out.extend(rule.ends.describe());
    if let Some(p) = &rule.phase {
        out.push(format!("{p} phase"));
    }
    if let Some(c) = &rule.check {
        out.push(format!("check {}", c.patterns().join("|")));
    }
    out
}

/// What a case's rules mean, one line per rule that decides some run, in order: where it
/// decides (its selectors, the params left to it by earlier rules, `otherwise` when an earlier
/// rule may decide some of the same runs first) and what it expects; then the implicit `pass`
/// where it applies. First match wins, so a catch-all after other rules is `otherwise`, never
/// `everywhere`; `pass` and `skip` rules are shown like the others.
pub fn summary(case: &Case) -> Vec<String> {
    let combos = case.param_combinations();
    let default_pass = Rule {
        on: Default::default(),
        dump: Default::default(),
        load: Default::default(),
        relations: Default::default(),
        ends: Default::default(),
        where_: Default::default(),
        phase: None,
        check: None,
        expected: Expected::default_pass(),
    };
    // The rules of named checks decide no run: they are said after the runs' rules.
    let run_rules: Vec<&Rule> = case.expect.iter().filter(|r| r.check.is_none()).collect();
    let rules: Vec<&Rule> = run_rules
        .iter()
        .copied()
        .chain(std::iter::once(&default_pass))
        .collect();
    let mut lines = Vec::new();
    for (i, &rule) in rules.iter().enumerate() {
        let implicit = i == run_rules.len();
        let earlier = &rules[..i];
        // The params left to this rule: those no earlier rule takes whenever this one holds.
        let left: Vec<usize> = (0..combos.len())
            .filter(|&c| rule.selects_params(&combos[c]))
            .filter(|&c| {
                !earlier
                    .iter()
                    .any(|e| implied_by(e, rule) && e.selects_params(&combos[c]))
            })
            .collect();
        if left.is_empty() {
            if !implicit {
                lines.push(format!(
                    "{}: never chosen (earlier rules decide every run it selects)",
                    rule.expected.describe(Wording::Rule)
                ));
            }
            continue;
        }
        let earlier_may_decide = earlier.iter().any(|e| {
            !implied_by(e, rule)
                && !excludes(e, rule)
                && left.iter().any(|&c| e.selects_params(&combos[c]))
        });
        let mut scope = selectors(rule);
        if left.len() < combos.len() {
            scope.push(params_text(case, &combos, &left));
        }
        let scope = match (earlier_may_decide, scope.is_empty()) {
            (true, true) => "otherwise".to_string(),
            (true, false) => format!("otherwise {}", scope.join(", ")),
            (false, true) => "everywhere".to_string(),
            (false, false) => scope.join(", "),
        };
        lines.push(format!(
            "{scope}: {}",
            rule.expected.describe(Wording::Rule)
        ));
    }
    lines.extend(
        case.expect
            .iter()
            .filter(|r| r.check.is_some())
            .map(describe_rule),
    );
    lines
}

/// Whether `earlier`'s selectors other than `where` hold wherever `rule`'s do (each one it
/// has, `rule` has too, the same or narrower): then `earlier` decides every run of its params
/// that `rule` would select.
fn implied_by(earlier: &Rule, rule: &Rule) -> bool {
    let side = |e: &InterpreterSelector, r: &InterpreterSelector| {
        let same = |a: &Option<VersionRequests>, b: &Option<VersionRequests>| match (a, b) {
            (None, _) => true,
            (Some(a), Some(b)) => a.to_string() == b.to_string(),
            (Some(_), None) => false,
        };
        same(&e.python, &r.python)
            && same(&e.implementation_version, &r.implementation_version)
            && (e.implementation.is_empty()
                || (!r.implementation.is_empty()
                    && r.implementation
                        .iter()
                        .all(|i| e.implementation.contains(i))))
            && (e.platform.is_empty()
                || (!r.platform.is_empty() && r.platform.iter().all(|p| e.platform.contains(p))))
            && e.features.as_ref().is_none_or(|ef| {
                let asked = r.features.as_ref().map(|f| f.asked()).unwrap_or_default();
                ef.asked().iter().all(|f| asked.contains(f))
            })
    };
    side(&earlier.on, &rule.on)
        && side(&earlier.dump, &rule.dump)
        && side(&earlier.load, &rule.load)
        && (earlier.phase.is_none() && rule.phase != Some(super::Phase::Compare)
            || earlier.phase == rule.phase)
        && (earlier.relations.is_empty()
            || earlier.relations.describe() == rule.relations.describe())
        && (earlier.ends.is_empty() || earlier.ends.describe() == rule.ends.describe())
}

/// Whether no run can be selected by both rules, as far as their selectors tell without the
/// interpreters: different phases, implementations, or contradicting features.
fn excludes(a: &Rule, b: &Rule) -> bool {
    matches!((a.phase, b.phase), (Some(x), Some(y)) if x != y)
        || a.on.excludes(&b.on)
        || a.dump.excludes(&b.dump)
        || a.load.excludes(&b.load)
}

/// The params combinations `left` (indices into `combos`) in words: `pickler=c`,
/// `protocol=4|5`, `encoding not default`, or the combinations one by one.
fn params_text(case: &Case, combos: &[Params], left: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut product = 1usize;
    for (name, declared) in &case.params {
        let used: Vec<_> = declared
            .iter()
            .filter(|v| left.iter().any(|&c| combos[c].get(name) == Some(*v)))
            .collect();
        product *= used.len();
        if used.len() == declared.len() {
            continue;
        }
        let unused: Vec<String> = declared
            .iter()
            .filter(|v| !used.contains(v))
            .map(|v| v.to_string())
            .collect();
        let used: Vec<String> = used.iter().map(|v| v.to_string()).collect();
        parts.push(if used.len() > 1 && unused.len() < used.len() {
            format!("{name} not {}", unused.join("|"))
        } else {
            format!("{name}={}", used.join("|"))
        });
    }
    if product == left.len() {
        parts.join(", ")
    } else {
        let each: Vec<String> = left.iter().map(|&c| format!("({})", combos[c])).collect();
        each.join(" or ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expectation_in_words() {
        let mut e = Expected {
            outcome: OutcomeKind::Error,
            exception: Some("KeyError".into()),
            instance_of: Some("LookupError".into()),
            reason: Some("old".into()),
            ..Expected::default_pass()
        };
        assert_eq!(
            e.describe(Wording::Rule),
            "error KeyError, an instance of LookupError (old)"
        );
        assert_eq!(
            e.describe(Wording::Run),
            "error: KeyError, an instance of LookupError"
        );
        e.also = vec![OutcomeKind::Pass];
        e.instance_of = None;
        assert_eq!(e.describe(Wording::Rule), "[error, pass] KeyError (old)");
        assert_eq!(
            e.describe(Wording::Run),
            "error or pass: KeyError, each attempt"
        );
        let crash = Expected {
            outcome: OutcomeKind::Crash,
            signal: Some("SIGSEGV".into()),
            ..Expected::default_pass()
        };
        assert_eq!(crash.describe(Wording::Rule), "crash SIGSEGV");
        assert_eq!(crash.describe(Wording::Run), "crash (SIGSEGV)");
    }

    fn summarise(text: &str) -> Vec<String> {
        let case =
            super::super::load::parse_case(std::path::Path::new("cases/x/t.yaml"), text).unwrap();
        summary(&case)
    }

    #[test]
    fn first_match_wins_in_the_summary() {
        let text = "title: t\nparams:\n  pickler: [c, python]\ncode: pass\nexpect:\n  - python: '<3.8'\n    where: {pickler: c}\n    outcome: fail\n    reason: old\n  - outcome: pass\n";
        assert_eq!(
            summarise(text),
            vec!["python <3.8, pickler=c: fail (old)", "otherwise: pass"]
        );
        // A catch-all after a rule that decides by params alone decides the rest of them.
        let text = "title: t\nparams:\n  pickler: [c, python]\ncode: pass\nexpect:\n  - where: {pickler: c}\n    outcome: fail\n  - outcome: error\n    exception: KeyError\n";
        assert_eq!(
            summarise(text),
            vec!["pickler=c: fail", "pickler=python: error KeyError"]
        );
        // Nothing left for the implicit pass after a catch-all; everywhere without rules.
        assert_eq!(
            summarise("title: t\ncode: pass\n"),
            vec!["everywhere: pass"]
        );
        assert_eq!(
            summarise("title: t\ncode: pass\nexpect:\n  - outcome: fail\n"),
            vec!["everywhere: fail"]
        );
    }

    #[test]
    fn skips_nots_shadows_and_disjoint_rules() {
        let text = "title: t\nparams:\n  encoding: [default, latin1, bytes]\n  p: [1, 2]\ncode: pass\nexpect:\n  - implementation: pypy\n    outcome: skip\n    reason: not there\n  - implementation: cpython\n    where: {encoding: {not: default}}\n    outcome: error\n  - where: {p: 1}\n    outcome: fail\n  - where: {p: 1, encoding: latin1}\n    outcome: error\n";
        assert_eq!(
            summarise(text),
            vec![
                "pypy: skipped (not there)",
                "cpython, encoding not default: error",
                "otherwise p=1: fail",
                "error: never chosen (earlier rules decide every run it selects)",
                "otherwise p=2: pass",
            ]
        );
        let text = "title: t\nparams:\n  a: [1, 2]\n  b: [1, 2]\ncode: pass\nexpect:\n  - where: {a: 1, b: 1}\n    outcome: fail\n";
        assert_eq!(
            summarise(text),
            vec![
                "a=1, b=1: fail",
                "(a=1,b=2) or (a=2,b=1) or (a=2,b=2): pass"
            ]
        );
    }
}
