//! One view of a run for every report: its name, the conflict merged inputs had about it, then
//! its facts (case, pair, expected rule and why, what was observed, phase, exit code,
//! duration, why it did not run) and its output sections (traceback, stderr, stdout), built
//! once from the [`Results`]. The terminal, Markdown, HTML and JUnit reports only render it,
//! each in its own syntax, so they show the same facts under the same names in the same order.
//!
//! A fact is [`Detail::Brief`] (every report shows it) or [`Detail::Full`] (only the report
//! with room for every detail, the HTML page, shows it). Adding a fact is one push in
//! [`RunView::new`]; a report renders it like any other unless it has markup of its own for it.

use crate::case::{Phase, Wording};
use crate::outcome::Observed;
use crate::results::{Conflict, Results, RunRecord};
use crate::run::CheckRecord;
use crate::verdict::Verdict;

use super::text;

/// What the reports show of one run.
#[derive(Debug)]
pub struct RunView<'a> {
    pub record: &'a RunRecord,
    /// `id[params]`, and ` producer -> consumer` for a round trip.
    pub name: String,
    /// What merged inputs disagreed about, when they did.
    pub conflict: Option<&'a Conflict>,
    /// In the order every report shows them.
    pub facts: Vec<Fact>,
    /// The traceback and the output the run printed, the empty ones left out, in the order
    /// every report shows them.
    pub output: Vec<Section<'a>>,
}

/// One named fact about a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Fact {
    /// `expected`, `exit code`: the same name in every report.
    pub label: &'static str,
    pub value: Value,
    pub detail: Detail,
}

/// What a fact holds, for the reports that mark some of them up.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(String),
    /// Text with a note in a smaller voice: `title (path)`.
    Noted(String, String),
    /// A name from the code (an exception type).
    Code(String),
    /// Text that may be long (a message): a report cuts it to its budget.
    Block(String),
    /// Links; only http(s) ones may be made links ([`text::is_web_link`]).
    Links(Vec<String>),
}

/// Which reports show a fact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// Every report.
    Brief,
    /// Only the report with room for every detail (the HTML page).
    Full,
}

/// One part of what a run left: `traceback`, `stderr` or `stdout`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Section<'a> {
    pub name: &'static str,
    pub text: &'a str,
}

impl Section<'_> {
    /// Cleaned and cut to `budget` bytes: a traceback keeps both ends (where it started, the
    /// exception), output its tail.
    pub fn cut(&self, budget: usize) -> String {
        let text = self.text.trim_end();
        if self.name == "traceback" {
            text::clean_ends(text, budget)
        } else {
            text::clean_tail(text, budget)
        }
    }
}

/// With `--retries`, every attempt in order, the record's own last: `1: regression (error:
/// ValueError: boom); 2: ok (pass)`, or for a flaky run ending in `…; 2: flaky (pass)`.
pub fn attempts_text(record: &RunRecord) -> String {
    let mut parts: Vec<String> = record
        .attempts
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{}: {} ({})", i + 1, a.verdict, a.summary()))
        .collect();
    parts.push(format!(
        "{}: {} ({})",
        record.attempts.len() + 1,
        record.verdict,
        record.summary()
    ));
    parts.join("; ")
}

/// What the attempts of a run tried more than once did, most frequent first (ties in the
/// order the outcomes are listed): `7/20 crash, 13/20 pass`; an attempt that did not run
/// counts by its verdict.
pub fn counts_text(record: &RunRecord) -> String {
    let did = |observed: Option<&Observed>, verdict: Verdict| {
        observed.map_or(verdict.to_string(), |o| o.outcome.to_string())
    };
    let mut counts: Vec<(String, usize)> = Vec::new();
    let all = record
        .attempts
        .iter()
        .map(|a| did(a.observed.as_ref(), a.verdict))
        .chain([did(record.observed.as_ref(), record.verdict)]);
    for what in all {
        match counts.iter_mut().find(|(w, _)| *w == what) {
            Some((_, n)) => *n += 1,
            None => counts.push((what, 1)),
        }
    }
    counts.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    let total = record.attempts.len() + 1;
    let parts: Vec<String> = counts
        .iter()
        .map(|(what, n)| format!("{n}/{total} {what}"))
        .collect();
    parts.join(", ")
}

/// The packages the run had, if its case asked for some: `numpy==1.26.4, attrs==23.1.0`, or
/// for a round trip each side's, `dumped with numpy==2.0.2; loaded with numpy==1.26.4`
/// (`nothing installed` for a side without).
pub fn packages_text(record: &RunRecord) -> Option<String> {
    let p = &record.packages;
    if p.is_empty() {
        return None;
    }
    let list = |l: &[String]| match l.is_empty() {
        true => "nothing installed".to_string(),
        false => l.join(", "),
    };
    Some(match record.dump_python {
        Some(_) => format!(
            "dumped with {}; loaded with {}",
            list(&p.dump),
            list(&p.python)
        ),
        None => list(&p.python),
    })
}

/// A run's named checks counted by verdict, in the order of [`Verdict::ALL`]: `4 checks: 2 ok,
/// 1 regression, 1 skipped`.
pub fn check_counts(record: &RunRecord) -> String {
    let counts: Vec<String> = Verdict::ALL
        .iter()
        .map(|v| (v, record.checks.iter().filter(|c| c.verdict == *v).count()))
        .filter(|(_, n)| *n > 0)
        .map(|(v, n)| format!("{n} {v}"))
        .collect();
    format!(
        "{}: {}",
        text::count(record.checks.len(), "check", "checks"),
        counts.join(", ")
    )
}

/// One named check that is not `ok`, in one line: `fails: regression: expected pass, got fail:
/// AssertionError: 1 != 2`, or `frozen: skipped: no frozendict`.
pub fn check_line(c: &CheckRecord) -> String {
    let what = match c.skip_reason() {
        Some(reason) => reason,
        None if c.verdict == Verdict::Skipped => "skipped".into(),
        None => format!(
            "expected {}, got {}",
            c.expected.describe(Wording::Run),
            c.summary()
        ),
    };
    format!("{}: {}: {what}", c.name, c.verdict)
}

/// The legs of a round trip `d -> l` as far as they ran: the dump and the load, and of a
/// bounce the relay (on the consumer) and the reload (on the producer).
fn legs(d: &str, l: &str, observed: Option<&Observed>) -> String {
    match observed.and_then(|o| o.phase) {
        Some(Phase::Reload) => format!("dumped by {d}, loaded and relayed by {l}, reloaded by {d}"),
        Some(Phase::Relay) => format!("dumped by {d}, loaded and relayed by {l}"),
        _ => format!("dumped by {d}, loaded by {l}"),
    }
}

/// Attempts listed one by one up to this many; beyond, only counted.
const ATTEMPTS_LISTED: usize = 10;

impl<'a> RunView<'a> {
    pub fn new(record: &'a RunRecord, results: &'a Results) -> Self {
        let case = results.cases.get(&record.case);
        let conflict = results.conflict_for(record);
        let mut facts = Vec::new();
        let mut push = |label, value, detail| {
            facts.push(Fact {
                label,
                value,
                detail,
            })
        };
        use Detail::{Brief, Full};
        use Value::{Block, Code, Links, Noted, Text};
        if let Some(c) = conflict {
            push("conflict", Text(c.describe()), Brief);
        }
        if let Some(info) = case {
            push("case", Noted(info.title.clone(), info.path.clone()), Brief);
            if !info.links.is_empty() {
                push("links", Links(info.links.clone()), Full);
            }
        }
        if let (Some(d), Some(l)) = (&record.dump_python, &record.load_python) {
            push("pair", Text(legs(d, l, record.observed.as_ref())), Brief);
        }
        if let Some(packages) = packages_text(record) {
            push("packages", Text(packages), Brief);
        }
        push(
            "expected",
            Text(record.expected.describe(Wording::Run)),
            Brief,
        );
        if let Some(reason) = &record.expected.reason {
            push("because", Text(reason.clone()), Brief);
        }
        if let Some(o) = &record.observed {
            push("observed", Text(o.summary()), Brief);
            if let Some(e) = &o.exception {
                push("exception", Code(e.clone()), Full);
            }
            if let Some(m) = &o.message {
                push("message", Block(m.clone()), Full);
            }
            if let Some(p) = o.phase {
                push("phase", Text(p.to_string()), Brief);
            }
            if let Some(s) = &o.signal {
                push("signal", Text(s.clone()), Full);
            }
            if let Some(c) = o.exit_code.filter(|c| *c != 0) {
                push("exit code", Text(c.to_string()), Brief);
            }
            let dump = record.dump_duration_s.map(|d| format!(" (dump {d:.3}s)"));
            let duration = format!("{:.3}s{}", o.duration_s, dump.unwrap_or_default());
            push("duration", Text(duration), Brief);
        } else {
            push(
                "reason",
                Text(record.reason.clone().unwrap_or_default()),
                Brief,
            );
        }
        if !record.attempts.is_empty() {
            push("counts", Text(counts_text(record)), Brief);
            if record.attempts.len() < ATTEMPTS_LISTED {
                push("attempts", Text(attempts_text(record)), Brief);
            }
        }
        if !record.checks.is_empty() {
            push("checks", Text(check_counts(record)), Brief);
            for c in record.checks.iter().filter(|c| c.verdict != Verdict::Ok) {
                push("check", Text(check_line(c)), Brief);
            }
        }
        if let Some(info) = case.filter(|i| !i.tags.is_empty()) {
            push("tags", Text(info.tags.join(", ")), Full);
        }
        let mut output = record.observed.as_ref().map(sections).unwrap_or_default();
        // Each failing check's own traceback, in the order of the `check` facts.
        output.extend(
            record
                .checks
                .iter()
                .filter(|c| c.verdict.fails_run())
                .filter_map(|c| c.observed.traceback.as_deref())
                .filter(|t| !t.trim().is_empty())
                .map(|text| Section {
                    name: "check traceback",
                    text,
                }),
        );
        RunView {
            record,
            name: record.name(),
            conflict,
            facts,
            output,
        }
    }

    /// The run's verdict, or its worst failing check's ([`RunRecord::shown_verdict`]).
    pub fn verdict(&self) -> Verdict {
        self.record.shown_verdict()
    }

    /// The interpreter's label (for a round trip, the consumer's).
    pub fn python(&self) -> &'a str {
        &self.record.python
    }

    /// `conflict` when merged inputs disagree about the run, else its verdict.
    pub fn status(&self) -> &'static str {
        if self.conflict.is_some() {
            "conflict"
        } else {
            self.verdict().as_str()
        }
    }

    /// Whether reports list it among the failing runs: its verdict fails, or merged inputs
    /// disagree about it.
    pub fn fails(&self) -> bool {
        self.record.fails() || self.conflict.is_some()
    }

    /// `expected pass, got error: ValueError: …`, or why it did not run.
    /// A run that failed by its checks alone: each failing check's (`check is two: regression:
    /// expected pass, got fail: …`), joined with `; `.
    pub fn explanation(&self) -> String {
        if !self.record.verdict.fails_run() && self.record.fails() {
            let failing: Vec<String> = self
                .record
                .checks
                .iter()
                .filter(|c| c.verdict.fails_run())
                .map(|c| format!("check {}", check_line(c)))
                .collect();
            return failing.join("; ");
        }
        let expected = self.record.expected.describe(Wording::Run);
        match (&self.record.observed, &self.record.reason) {
            (Some(o), _) => format!("expected {expected}, got {}", o.summary()),
            (None, Some(r)) => r.clone(),
            (None, None) => format!("expected {expected}"),
        }
    }

    /// The facts every report shows.
    pub fn brief_facts(&self) -> impl Iterator<Item = &Fact> {
        self.facts.iter().filter(|f| f.detail == Detail::Brief)
    }

    /// The brief facts as plain text, one `label:    value` line each (not cleaned): the
    /// body of the Markdown and JUnit details.
    pub fn plain_facts(&self) -> String {
        let lines: Vec<String> = self
            .brief_facts()
            .map(|f| format!("{:<11}{}", format!("{}:", f.label), f.value.plain()))
            .collect();
        lines.join("\n")
    }

    /// The output sections as plain text, each under a `--- name` line and cleaned, sharing
    /// `budget` bytes.
    pub fn plain_output(&self, budget: usize) -> String {
        let each = budget / self.output.len().max(1);
        self.output
            .iter()
            .map(|s| format!("\n--- {}\n{}", s.name, s.cut(each)))
            .collect()
    }
}

impl Value {
    /// As plain text: a note in parentheses, links one after the other.
    pub fn plain(&self) -> String {
        match self {
            Value::Text(t) | Value::Code(t) | Value::Block(t) => t.clone(),
            Value::Noted(t, note) => format!("{t} ({note})"),
            Value::Links(links) => links.join(" "),
        }
    }
}

/// The traceback, then stderr, then stdout, the empty ones left out.
fn sections(o: &Observed) -> Vec<Section<'_>> {
    [
        ("traceback", o.traceback.as_deref().unwrap_or("")),
        ("stderr", o.stderr.as_str()),
        ("stdout", o.stdout.as_str()),
    ]
    .into_iter()
    .filter(|(_, t)| !t.trim().is_empty())
    .map(|(name, text)| Section { name, text })
    .collect()
}

/// Every run of `results` as a view, in their order.
pub fn views(results: &Results) -> impl Iterator<Item = RunView<'_>> {
    results.runs.iter().map(move |r| RunView::new(r, results))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Results {
        let json = include_str!("../../tests/fixtures/results-v1/fixture.json");
        crate::results::wire::from_json(json.as_bytes()).unwrap()
    }

    fn labels(view: &RunView<'_>, detail: Detail) -> Vec<&'static str> {
        view.facts
            .iter()
            .filter(|f| f.detail == detail)
            .map(|f| f.label)
            .collect()
    }

    #[test]
    fn a_failing_run_in_one_order() {
        let results = fixture();
        let view = views(&results)
            .find(|v| v.name == "prints-then-fails" && v.python() == "cpython-3.12.1")
            .unwrap();
        assert!(view.fails());
        assert_eq!(
            labels(&view, Detail::Brief),
            ["case", "expected", "observed", "duration"]
        );
        assert_eq!(
            labels(&view, Detail::Full),
            ["exception", "message", "tags"]
        );
        let names: Vec<&str> = view.output.iter().map(|s| s.name).collect();
        assert_eq!(names, ["traceback", "stderr", "stdout"]);
        assert_eq!(
            view.plain_facts(),
            "case:      Prints to stdout and stderr, then raises (cases/prints-then-fails.yaml)\n\
             expected:  pass\n\
             observed:  error: ValueError: boom\n\
             duration:  0.133s"
        );
        assert_eq!(
            view.explanation(),
            "expected pass, got error: ValueError: boom"
        );
        let output = view.plain_output(1000);
        assert!(
            output.starts_with("\n--- traceback\nTraceback (most recent call last):")
                && output
                    .ends_with("ValueError: boom\n--- stderr\nto stderr\n--- stdout\nto stdout"),
            "{output}"
        );
    }

    #[test]
    fn a_round_trip_names_its_pair_and_phase() {
        let results = fixture();
        let view = views(&results)
            .find(|v| v.name == "default-protocol-py3-to-py2 cpython-3.12.1 -> cpython-2.7.18")
            .unwrap();
        assert!(!view.fails());
        assert_eq!(
            labels(&view, Detail::Brief),
            ["case", "pair", "expected", "because", "observed", "phase", "duration"]
        );
        let value = |label| &view.facts.iter().find(|f| f.label == label).unwrap().value;
        assert_eq!(
            value("pair"),
            &Value::Text("dumped by cpython-3.12.1, loaded by cpython-2.7.18".into())
        );
        assert_eq!(
            value("duration"),
            &Value::Text("0.011s (dump 0.092s)".into())
        );
    }

    #[test]
    fn a_bounce_names_the_legs_that_ran() {
        let mut observed = Observed::new(crate::case::OutcomeKind::Fail, 0.1);
        let legs = |o: &Observed| legs("a", "b", Some(o));
        observed.phase = Some(Phase::Load);
        assert_eq!(legs(&observed), "dumped by a, loaded by b");
        observed.phase = Some(Phase::Relay);
        assert_eq!(legs(&observed), "dumped by a, loaded and relayed by b");
        observed.phase = Some(Phase::Reload);
        assert_eq!(
            legs(&observed),
            "dumped by a, loaded and relayed by b, reloaded by a"
        );
        assert_eq!(super::legs("a", "b", None), "dumped by a, loaded by b");
    }

    #[test]
    fn each_side_says_its_packages() {
        let mut results = fixture();
        let at = results
            .runs
            .iter()
            .position(|r| r.dump_python.is_some())
            .unwrap();
        results.runs[at].packages = crate::run::record::Packages {
            dump: vec!["numpy==2.0.2".into()],
            python: Vec::new(),
        };
        let view = RunView::new(&results.runs[at], &results);
        assert_eq!(
            labels(&view, Detail::Brief)[..3],
            ["case", "pair", "packages"]
        );
        assert_eq!(
            packages_text(&results.runs[at]).unwrap(),
            "dumped with numpy==2.0.2; loaded with nothing installed"
        );
        let plain = results
            .runs
            .iter()
            .position(|r| r.dump_python.is_none())
            .unwrap();
        assert_eq!(packages_text(&results.runs[plain]), None);
        results.runs[plain].packages.python = vec!["six".into(), "attrs==23.1.0".into()];
        assert_eq!(
            packages_text(&results.runs[plain]).unwrap(),
            "six, attrs==23.1.0"
        );
    }

    #[test]
    fn runs_that_did_not_run_say_why() {
        let results = fixture();
        let view = views(&results)
            .find(|v| v.name == "exits-without-reporting" && v.verdict() == Verdict::EnvError)
            .unwrap();
        assert_eq!(
            labels(&view, Detail::Brief),
            ["case", "expected", "because", "reason"]
        );
        assert!(view.output.is_empty());
        let exit = views(&results)
            .find(|v| v.name == "exits-without-reporting" && v.verdict() == Verdict::Xfail)
            .unwrap();
        assert!(exit.plain_facts().contains("\nexit code: 3"));
    }
}
