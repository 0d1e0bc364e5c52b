//! `--junit-xml FILE`: JUnit XML for CI systems, valid against the Jenkins xunit schema
//! (`junit-10.xsd`, the one pytest's output targets) whatever the cases printed.
//!
//! One `<testsuite>` per interpreter, named by its label, with the interpreter's facts as
//! properties. One `<testcase>` per run, named `<case-id>[<params>]` (and `producer -> consumer`
//! for a round trip), its classname `crosspickle.<label>.<case-id>` so that names stay unique
//! when several jobs' files are put together. Regression, fixed and changed are `<failure>`,
//! env-error is `<error>`, skipped is `<skipped>`; xfail passes and its `<system-out>` says
//! which known behaviour was reproduced. A run that merged inputs disagree about is a
//! `<failure>` of type `conflict`.
//!
//! Text from the cases is cleaned ([`text::clean`]) and bounded: each testcase gets at most
//! [`PER_RUN`] bytes while the file's [`TOTAL`] lasts, then [`MIN_PER_RUN`], and less when the
//! testcases themselves (their names, one per run, and the tags of each earlier attempt) leave
//! less of [`FILE`]: the file stays under the 30 MB GitLab accepts up to about 150,000 runs
//! (each testcase costs its name). A retried run's earlier attempts share half of its
//! testcase's bytes (each its message, its traceback or crash as `<stackTrace>`, and the tails
//! of what it printed), counted against the file's like the rest; what is cut says how many
//! bytes were left out.

use std::time::Duration;

use quick_junit::{
    FlakyOrRerun, NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestRerun, TestSuite,
};

use super::text::{self, Budget};
use super::view::RunView;
use crate::errors::Error;
use crate::python::Interpreter;
use crate::results::{Results, RunRecord};
use crate::verdict::Verdict;

/// Bytes of text (message, traceback, output) one testcase may carry.
pub const PER_RUN: usize = 64 * 1024;
/// Bytes of text the whole file may carry before each testcase is cut to [`MIN_PER_RUN`].
pub const TOTAL: usize = 16 * 1024 * 1024;
pub const MIN_PER_RUN: usize = 2 * 1024;
/// Bytes of a `message` attribute.
const MESSAGE: usize = 1024;
/// Bytes the whole file is kept to: the testcases' names and tags first, the text of failing
/// runs in what is left.
pub const FILE: usize = 28 * 1000 * 1000;
/// Bytes a testcase takes besides its name and classname (its tags, time, indentation; a
/// failure's tags).
const TESTCASE_TAGS: usize = 100;
/// Bytes an earlier attempt's element takes besides its text (`<rerunFailure type=…
/// message=…><stackTrace>…`, indentation, the notes of what was cut).
const RERUN_TAGS: usize = 200;
/// Bytes of text a failing run gets at least, however many runs there are.
const FLOOR: usize = 96;

pub fn write(path: &std::path::Path, results: &Results) -> Result<(), Error> {
    let xml = render(results);
    crate::sys::fs::write_atomic(path, xml.as_bytes())
        .map_err(|e| Error::io(format!("writing {}", path.display()), e))
}

/// The whole document.
pub fn render(results: &Results) -> String {
    // The root carries no properties in this schema: its name says the results are partial.
    let mut report = Report::new(match (results.partial, &results.partial_reason) {
        (true, Some(reason)) => {
            text::clean_head(&format!("crosspickle (partial: {reason})"), MESSAGE)
        }
        (true, None) => "crosspickle (partial)".to_string(),
        (false, _) => "crosspickle".to_string(),
    });
    if let Some(t) = seconds(results.duration_s) {
        report.set_time(t);
    }
    let mut budget = text_budget(results);
    let mut labels: Vec<&str> = results
        .interpreters
        .iter()
        .map(|i| i.label.as_str())
        .collect();
    for r in &results.runs {
        if !labels.contains(&r.python.as_str()) {
            labels.push(&r.python);
        }
    }
    for label in labels {
        let mut suite = TestSuite::new(text::clean(label));
        if let Some(interpreter) = results.interpreters.iter().find(|i| i.label == label) {
            suite.add_properties(interpreter_properties(interpreter));
        }
        suite.add_property(Property::new(
            "crosspickle.version",
            &results.crosspickle_version,
        ));
        if results.partial {
            suite.add_property(Property::new("crosspickle.partial", "true"));
            let reason = results.partial_reason.as_deref().unwrap_or("interrupted");
            suite.add_property(Property::new(
                "crosspickle.partial_reason",
                text::clean(reason),
            ));
        }
        let mut time = 0.0;
        for r in results.runs.iter().filter(|r| r.python == label) {
            time += r.observed.as_ref().map(|o| o.duration_s).unwrap_or(0.0);
            let view = RunView::new(r, results);
            suite.add_test_case(test_case(&view, &mut budget));
            for c in &r.checks {
                suite.add_test_case(check_case(&view, c));
            }
        }
        if let Some(t) = seconds(time) {
            suite.set_time(t);
        }
        report.add_test_suite(suite);
    }
    let xml = report
        .to_string()
        .expect("a JUnit report serializes to a string");
    strip_root_skipped(xml)
}

/// The budget of the failing runs' text: [`TOTAL`], or what the testcases leave of [`FILE`],
/// with [`MIN_PER_RUN`] (or less, to [`FLOOR`]) set aside for each failing run.
fn text_budget(results: &Results) -> Budget {
    let skeleton: usize = results
        .runs
        .iter()
        .map(|r| {
            2 * (r.case.len() + r.python.len()) + 24 + TESTCASE_TAGS + RERUN_TAGS * failed_attempts(r)
        })
        .sum::<usize>()
        + results.interpreters.len() * 2048;
    // Each failing run, and each earlier attempt that failed, gets the floor.
    let failing = results
        .runs
        .iter()
        .map(|r| usize::from(r.verdict != Verdict::Ok) + failed_attempts(r))
        .sum::<usize>();
    let room = FILE.saturating_sub(skeleton);
    let floor = (room / 2 / failing.max(1)).clamp(FLOOR, MIN_PER_RUN);
    let total = TOTAL.min(room.saturating_sub(floor * failing));
    Budget::new(total, PER_RUN.min(total.max(floor)), floor)
}

fn failed_attempts(r: &RunRecord) -> usize {
    r.attempts.iter().filter(|a| a.verdict.fails_run()).count()
}

/// The schema allows no `skipped` attribute on `<testsuites>`, which quick-junit always writes:
/// drop it (the counts stay on each `<testsuite>`).
fn strip_root_skipped(xml: String) -> String {
    let Some(start) = xml.find("<testsuites") else {
        return xml;
    };
    let end = xml[start..]
        .find('>')
        .map(|e| start + e)
        .unwrap_or(xml.len());
    let tag = &xml[start..end];
    let Some(at) = tag.find(" skipped=\"") else {
        return xml;
    };
    let value_end = tag[at + 10..]
        .find('"')
        .map(|e| at + 10 + e + 1)
        .unwrap_or(tag.len());
    format!("{}{}{}", &xml[..start + at], &tag[value_end..], &xml[end..])
}

fn seconds(s: f64) -> Option<Duration> {
    Duration::try_from_secs_f64(s).ok()
}

/// The interpreter's facts, one property each, in the JSON report's names.
fn interpreter_properties(interpreter: &Interpreter) -> Vec<Property> {
    crate::results::wire::interpreter_fields(interpreter)
        .iter()
        .map(|(k, v)| {
            let v = match v {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Array(items) => items
                    .iter()
                    .map(|i| {
                        i.as_str()
                            .map(String::from)
                            .unwrap_or_else(|| i.to_string())
                    })
                    .collect::<Vec<_>>()
                    .join(","),
                serde_json::Value::Null => String::new(),
                other => other.to_string(),
            };
            Property::new(format!("python.{k}"), text::clean(&v))
        })
        .collect()
}

fn test_case(v: &RunView<'_>, budget: &mut Budget) -> TestCase {
    let r = v.record;
    // The earlier attempts, when some failed, take half of the testcase's bytes.
    let whole = budget.allowance();
    let (allowance, for_attempts) = match failed_attempts(r) {
        0 => (whole, 0),
        _ => (whole - whole / 2, whole / 2),
    };
    let status = match (v.conflict, r.verdict) {
        (Some(c), _) => non_success(
            NonSuccessKind::Failure,
            "conflict",
            &format!("conflict between merged results: {}", c.describe()),
            &details(v, allowance),
        ),
        (None, Verdict::Regression | Verdict::Fixed | Verdict::Changed) => non_success(
            NonSuccessKind::Failure,
            r.verdict.as_str(),
            &format!("{}: {}", r.verdict, v.explanation()),
            &details(v, allowance),
        ),
        (None, Verdict::EnvError) => non_success(
            NonSuccessKind::Error,
            r.verdict.as_str(),
            &format!("{}: {}", r.verdict, v.explanation()),
            &details(v, allowance),
        ),
        (None, Verdict::Skipped) => {
            let mut status = TestCaseStatus::skipped();
            let reason = text::clean_head(
                r.reason.as_deref().unwrap_or("skipped"),
                allowance.clamp(FLOOR, MESSAGE),
            );
            budget.spend(text::escaped_size(&reason));
            status.set_message(reason);
            status
        }
        (None, Verdict::Ok | Verdict::Xfail | Verdict::Flaky) => TestCaseStatus::success(),
    };
    // `--retries`: the earlier attempts, `<flakyFailure>` when it then passed, else
    // `<rerunFailure>` (Maven Surefire's elements); with `--repeat`, the other attempts that
    // failed.
    let mut status = status;
    if failed_attempts(r) > 0 {
        let (reruns, spent) = reruns(r, for_attempts);
        status.add_reruns(reruns);
        status.set_rerun_kind(FlakyOrRerun::Rerun);
        budget.spend(spent);
    }
    let mut case = TestCase::new(text::clean(&v.name), status);
    case.set_classname(text::clean(&format!("crosspickle.{}.{}", r.python, r.case)));
    if let Some(t) = r.observed.as_ref().and_then(|o| seconds(o.duration_s)) {
        case.set_time(t);
    }
    let mut used = 0;
    if r.verdict == Verdict::Xfail && v.conflict.is_none() {
        let out = details(v, allowance);
        used += text::escaped_size(&out);
        case.set_system_out(format!("xfail: the known behaviour was reproduced\n{out}"));
    } else if let (TestCaseStatus::Success { .. }, Some(packages)) =
        (&case.status, super::view::packages_text(r))
    {
        // A passing run has no other text: the packages its environments had, in one line.
        let line = text::clean_head(&format!("packages: {packages}"), MESSAGE);
        used += text::escaped_size(&line);
        case.set_system_out(line);
    }
    if let TestCaseStatus::NonSuccess {
        description: Some(d),
        message,
        ..
    } = &case.status
    {
        used +=
            text::escaped_size(d) + message.as_ref().map(|m| text::escaped_size(m)).unwrap_or(0);
    }
    budget.spend(used);
    case
}

/// A named check of a run as a testcase of its own, after its run's: named `RUN :: NAME`, a
/// failure with its own traceback when it fails, skipped with its reason when skipped.
fn check_case(v: &RunView<'_>, c: &crate::run::CheckRecord) -> TestCase {
    let line = super::view::check_line(c);
    let status = match c.verdict {
        Verdict::Skipped => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(text::clean_head(
                &c.skip_reason().unwrap_or_else(|| "skipped".into()),
                MESSAGE,
            ));
            status
        }
        v if v.fails_run() => {
            let trace = c.observed.traceback.as_deref().unwrap_or(&line);
            non_success(
                NonSuccessKind::Failure,
                v.as_str(),
                &line,
                &text::clean_ends(trace, MIN_PER_RUN),
            )
        }
        _ => TestCaseStatus::success(),
    };
    // `--retries`: where the same check failed in an earlier attempt, that attempt's failure,
    // `<flakyFailure>` when the check then went as expected, else `<rerunFailure>`.
    let mut status = status;
    let earlier = check_reruns(v.record, c);
    if !earlier.is_empty() {
        status.add_reruns(earlier);
        status.set_rerun_kind(FlakyOrRerun::Rerun);
    }
    let mut case = TestCase::new(text::clean(&format!("{} :: {}", v.name, c.name)), status);
    let r = v.record;
    case.set_classname(text::clean(&format!("crosspickle.{}.{}", r.python, r.case)));
    case
}

/// The earlier attempts of `r` in which the check `c` (its name, made in the same phase)
/// failed, each as a rerun: its verdict as type, what it showed as message, its own traceback
/// (or what it showed) as stack trace, each within [`MIN_PER_RUN`] bytes.
fn check_reruns(r: &RunRecord, c: &crate::run::CheckRecord) -> Vec<TestRerun> {
    r.attempts
        .iter()
        .enumerate()
        .filter_map(|(i, a)| {
            let earlier = a.checks.iter().find(|e| {
                e.name == c.name && e.observed.phase == c.observed.phase && e.verdict.fails_run()
            })?;
            let mut rerun = TestRerun::new(NonSuccessKind::Failure);
            rerun.set_type(earlier.verdict.as_str());
            let line = format!("attempt {}: {}", i + 1, super::view::check_line(earlier));
            rerun.set_message(text::clean_head(&line, MESSAGE));
            let trace = earlier.observed.traceback.as_deref().unwrap_or(&line);
            rerun.set_stack_trace(text::clean_ends(trace, MIN_PER_RUN));
            Some(rerun)
        })
        .collect()
}

/// Each earlier attempt of `r` that failed as a rerun, in `room` bytes between them (at least
/// [`FLOOR`] each): its verdict as type, what happened as message, its traceback (cleaned,
/// both ends kept) or, when it has none (a crash, an environment that could not be made), what
/// happened as stack trace (Surefire's schema requires one), and the tails of what it printed.
/// With the bytes they take.
fn reruns(r: &RunRecord, room: usize) -> (Vec<TestRerun>, usize) {
    let each = (room / failed_attempts(r).max(1)).max(FLOOR);
    let mut spent = 0;
    let reruns = r
        .attempts
        .iter()
        .enumerate()
        .filter(|(_, a)| a.verdict.fails_run())
        .map(|(i, a)| {
            let kind = if a.verdict == Verdict::EnvError {
                NonSuccessKind::Error
            } else {
                NonSuccessKind::Failure
            };
            let mut rerun = TestRerun::new(kind);
            rerun.set_type(a.verdict.as_str());
            let summary = format!("attempt {}: {}: {}", i + 1, a.verdict, a.summary());
            let message = text::clean_head(&summary, (each / 4).clamp(FLOOR / 2, MESSAGE));
            let traceback = a
                .observed
                .as_ref()
                .and_then(|o| o.traceback.as_deref())
                .filter(|t| !t.trim().is_empty());
            let trace = match traceback {
                Some(tb) => text::clean_ends(tb.trim_end(), each / 2),
                None => text::clean_head(&summary, each / 2),
            };
            let mut used = text::escaped_size(&message) + text::escaped_size(&trace);
            rerun.set_message(message);
            rerun.set_stack_trace(trace);
            if let Some(o) = &a.observed {
                let outputs = [&o.stdout, &o.stderr];
                let printed = outputs.iter().filter(|t| !t.trim().is_empty()).count();
                let share = each.saturating_sub(used) / printed.max(1);
                // Too little room says nothing but that it was cut: the run's own output is
                // in its failure.
                let share = if share < FLOOR / 2 { 0 } else { share };
                if share > 0 && !o.stdout.trim().is_empty() {
                    let out = text::clean_tail(&o.stdout, share);
                    used += text::escaped_size(&out);
                    rerun.set_system_out(out);
                }
                if share > 0 && !o.stderr.trim().is_empty() {
                    let err = text::clean_tail(&o.stderr, share);
                    used += text::escaped_size(&err);
                    rerun.set_system_err(err);
                }
            }
            spent += used;
            // No `time`: the schema (Surefire's rerun type, in junit-10.xsd) has none.
            rerun
        })
        .collect();
    (reruns, spent)
}

fn non_success(kind: NonSuccessKind, ty: &str, message: &str, body: &str) -> TestCaseStatus {
    let mut status = TestCaseStatus::non_success(kind);
    status.set_type(ty);
    // As long as the body may be, and never more than MESSAGE.
    let room = body.len().clamp(FLOOR, MESSAGE);
    status.set_message(text::clean_head(message, room));
    status.set_description(body.to_string());
    status
}

/// The body of a failure, or the output of an xfail: the verdict, the run's facts, then its
/// traceback and the tails of its output, cleaned and within `allowance` bytes.
fn details(v: &RunView<'_>, allowance: usize) -> String {
    let lines = format!("verdict:   {}\n{}", v.verdict(), v.plain_facts());
    let mut out = text::clean_head(&lines, allowance / 4);
    // What is left goes to the traceback and the output tails, in that order of need.
    let left = allowance.saturating_sub(text::escaped_size(&out));
    out.push_str(&v.plain_output(left));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_stays_bounded_however_much_fails() {
        let results = crate::report::fixtures::failing(400, 70_000);
        let xml = render(&results);
        assert!(xml.len() < 30 * 1000 * 1000, "{} bytes", xml.len());
        assert!(xml.len() > TOTAL, "{} bytes: the budget is used", xml.len());
        assert!(
            !xml.contains('\u{0}')
                && !xml.contains('\u{1b}')
                && !xml.contains('\u{fffe}')
                && !xml.contains('\u{ffff}')
        );
        assert_eq!(xml.matches("<failure ").count(), 400);
        assert!(!xml.contains("<testsuites name=\"crosspickle\" tests=\"400\" skipped="));
    }

    #[test]
    fn retried_runs_stay_bounded_with_every_attempt_counted() {
        // 1,000 runs that failed 40 times each, every attempt with a long traceback, message
        // and output: below 30 MB, every attempt there with its stack trace.
        let mut results = crate::report::fixtures::failing(1000, 400);
        for r in &mut results.runs {
            let attempt = r.as_attempt();
            r.attempts = vec![attempt; 40];
        }
        let xml = render(&results);
        assert!(xml.len() < 30 * 1000 * 1000, "{} bytes", xml.len());
        assert_eq!(xml.matches("<rerunFailure ").count(), 40_000);
        assert_eq!(xml.matches("<stackTrace>").count(), 40_000);
        assert!(xml.contains("bytes left out"));
        // One retried run alone: its attempts take half of its testcase's bytes, not more.
        let mut one = crate::report::fixtures::failing(1, 500_000);
        let attempt = one.runs[0].as_attempt();
        one.runs[0].attempts = vec![attempt; 10];
        let xml = render(&one);
        let case = &xml[xml.find("<testcase ").unwrap()..xml.find("</testcase>").unwrap()];
        assert!(case.len() < PER_RUN + 10 * RERUN_TAGS + 4096, "{} bytes", case.len());
        assert!(case.contains("<system-out>[… "), "the attempts' output tails say what was cut");
    }

    #[test]
    fn drops_only_the_root_skipped_attribute() {
        let xml = "<?xml version=\"1.0\"?>\n<testsuites name=\"crosspickle\" tests=\"1\" skipped=\"0\" failures=\"0\">\n<testsuite name=\"a\" skipped=\"0\">".to_string();
        assert_eq!(
            strip_root_skipped(xml),
            "<?xml version=\"1.0\"?>\n<testsuites name=\"crosspickle\" tests=\"1\" failures=\"0\">\n<testsuite name=\"a\" skipped=\"0\">"
        );
    }
}
