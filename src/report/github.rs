//! GitHub Actions annotations: the failing runs as `::error` workflow commands, which GitHub
//! shows on the line of the case file that expected what did not happen (the rule's first
//! line, or `code:`/`dump:`/`load:`/`relay:`/`reload:` where no rule matched and `pass` was
//! expected), and on the run's summary page.
//!
//! One annotation per failing case and line, naming the verdicts, the interpreters (the pairs
//! of a round trip) and expected against observed; GitHub shows at most [`MAX_ERRORS`] error
//! annotations of a step, so past them one `::notice` says how many more failing cases there
//! are and where the full report is. Paths are made relative to the workspace so that the
//! annotation lands on the file; a corpus case (`corpus:cases/...`) names a file of the
//! workspace only when the workspace holds that very file (crosspickle's own repository),
//! otherwise, like a case file outside the workspace, its annotation has no file and says
//! where the case is in its message. Values are escaped as GitHub's workflow-command rules
//! say ([`escape_data`], [`escape_property`]); [`guard`] keeps the text printed before the
//! annotations (which quotes what cases printed) from being read as workflow commands.

use std::path::{Component, Path, PathBuf};

use crate::results::Results;

use super::text;
use super::view::{views, RunView};

/// The error annotations GitHub shows for one step.
pub const MAX_ERRORS: usize = 10;

/// The interpreters (or pairs) an annotation lists for one verdict and explanation.
const MAX_WHO: usize = 12;
/// Bytes of an explanation (`expected …, got …`) an annotation quotes.
const MAX_EXPLANATION: usize = 600;
/// Lines (a verdict and explanation each) an annotation holds, so that it stays short.
const MAX_LINES: usize = 20;

/// Where paths are resolved: the workspace annotations are relative to (`GITHUB_WORKSPACE`,
/// else the current folder) and the folder relative case paths were given from.
#[derive(Debug, Clone)]
pub struct Places {
    pub workspace: PathBuf,
    pub cwd: PathBuf,
}

/// The failing runs of one case that one line of its file decided.
struct Group<'a> {
    case: &'a str,
    line: Option<usize>,
    runs: Vec<RunView<'a>>,
}

/// Every annotation for `results`, one workflow command a line (nothing when no run fails);
/// `full_report` says where the whole report is, for the notice past [`MAX_ERRORS`].
pub fn render(results: &Results, places: &Places, full_report: &str) -> String {
    let groups = groups(results);
    let mut out = String::new();
    for group in groups.iter().take(MAX_ERRORS) {
        out.push_str(&error(group, results, places));
    }
    if groups.len() > MAX_ERRORS {
        let rest = &groups[MAX_ERRORS..];
        let runs: usize = rest.iter().map(|g| g.runs.len()).sum();
        let message = format!(
            "{} more failing {} ({}) not annotated: GitHub shows {MAX_ERRORS} error annotations a step; {full_report}",
            rest.len(),
            if rest.len() == 1 { "case" } else { "cases" },
            text::count(runs, "run", "runs"),
        );
        out.push_str(&format!(
            "::notice title={}::{}\n",
            escape_property("crosspickle: more failing cases"),
            escape_data(&message)
        ));
    }
    out
}

/// The failing runs grouped by case and deciding line, in the order of the results.
fn groups(results: &Results) -> Vec<Group<'_>> {
    let mut groups: Vec<Group<'_>> = Vec::new();
    for view in views(results).filter(RunView::fails) {
        let (case, line) = (view.record.case.as_str(), view.record.expected.line);
        match groups.iter_mut().find(|g| g.case == case && g.line == line) {
            Some(group) => group.runs.push(view),
            None => groups.push(Group {
                case,
                line,
                runs: vec![view],
            }),
        }
    }
    groups
}

/// One `::error` command for `group`.
fn error(group: &Group<'_>, results: &Results, places: &Places) -> String {
    let path = results.cases.get(group.case).map(|c| c.path.as_str());
    let file = path.and_then(|p| workspace_file(p, places));
    let mut statuses: Vec<&str> = Vec::new();
    for v in &group.runs {
        if !statuses.contains(&v.status()) {
            statuses.push(v.status());
        }
    }
    let title = format!(
        "crosspickle: {} in {} ({})",
        statuses.join(", "),
        group.case,
        text::count(group.runs.len(), "run", "runs")
    );
    let mut message = explanations(&group.runs);
    if let Some(reason) = group.runs[0].record.expected.reason.as_deref() {
        message.push_str(&format!(
            "\nthe rule says: {}",
            text::clean_head(reason, 300)
        ));
    }
    let mut properties = Vec::new();
    match (&file, path) {
        (Some(file), _) => {
            properties.push(format!("file={}", escape_property(file)));
            if let Some(line) = group.line {
                properties.push(format!("line={line}"));
            }
        }
        (None, Some(path)) => {
            let at = group
                .line
                .map(|l| format!(", line {l}"))
                .unwrap_or_default();
            message.push_str(&format!("\nin {}{at}", text::clean(path)));
        }
        (None, None) => {}
    }
    properties.push(format!("title={}", escape_property(&text::clean(&title))));
    format!(
        "::error {}::{}\n",
        properties.join(","),
        escape_data(&message)
    )
}

/// A line per verdict and explanation: `regression on cpython-3.8.18, pypy-3.10.14
/// [pickler=c]: expected pass, got error: ValueError: boom`.
fn explanations(runs: &[RunView<'_>]) -> String {
    let mut lines: Vec<(&str, String, Vec<String>)> = Vec::new();
    for v in runs {
        let explanation = text::clean_head(&v.explanation(), MAX_EXPLANATION);
        let who = who(v);
        match lines
            .iter_mut()
            .find(|(s, e, _)| *s == v.status() && *e == explanation)
        {
            Some((_, _, whos)) => whos.push(who),
            None => lines.push((v.status(), explanation, vec![who])),
        }
    }
    let more = lines.len().saturating_sub(MAX_LINES);
    let mut lines: Vec<String> = lines
        .into_iter()
        .take(MAX_LINES)
        .map(|(status, explanation, whos)| {
            let mut shown = whos[..whos.len().min(MAX_WHO)].join(", ");
            if whos.len() > MAX_WHO {
                shown.push_str(&format!(" and {} more", whos.len() - MAX_WHO));
            }
            format!("{status} on {shown}: {explanation}")
        })
        .collect();
    if more > 0 {
        lines.push(format!("and {more} more, each with another explanation"));
    }
    lines.join("\n")
}

/// `cpython-3.8.18 [pickler=c]`, or for a round trip `cpython-3.8.18 -> pypy-3.10.14`.
fn who(v: &RunView<'_>) -> String {
    let r = v.record;
    let mut who = match (&r.dump_python, &r.load_python) {
        (Some(d), Some(l)) => format!("{d} -> {l}"),
        (Some(d), None) => format!("{d} ->"),
        _ => r.python.clone(),
    };
    if !r.params.is_empty() {
        who.push_str(&format!(" [{}]", r.params));
    }
    text::clean(&who)
}

/// The path of the case file `path` relative to the workspace, `/`-separated, when it is in
/// the workspace; a corpus case's when the workspace holds the very file it was built from.
pub fn workspace_file(path: &str, places: &Places) -> Option<String> {
    if let Some(relative) = path.strip_prefix(crate::corpus::PREFIX) {
        let embedded = crate::corpus::files()
            .iter()
            .find(|(p, _)| *p == relative)?
            .1;
        let shown = format!("cases/{relative}");
        let on_disk = std::fs::read(places.workspace.join(&shown)).ok()?;
        return (on_disk == embedded).then_some(shown);
    }
    let absolute = normal(&places.cwd.join(path));
    let workspace = normal(&places.workspace);
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let inside = absolute
        .strip_prefix(&workspace)
        .ok()
        .map(Path::to_path_buf)
        .or_else(|| {
            let (a, w) = (real(&absolute), real(&workspace));
            a.strip_prefix(&w).ok().map(Path::to_path_buf)
        })?;
    let parts: Vec<String> = inside
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// `path` with `.` and `..` resolved without asking the file system.
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A command's data (after `::`): `%`, CR and LF escaped.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A command's property value: as data, and `:` and `,` escaped too.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// `text` between `::stop-commands::TOKEN` and `::TOKEN::`, so that GitHub reads no line of it
/// as a workflow command (a case's output quoted in the report could forge one); `token` must
/// be one no case can know.
pub fn guard(text: &str, token: &str) -> String {
    if text.is_empty() {
        return String::new();
    }
    let end = if text.ends_with('\n') { "" } else { "\n" };
    format!("::stop-commands::{token}\n{text}{end}::{token}::\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures;

    fn places(dir: &Path) -> Places {
        Places {
            workspace: dir.to_path_buf(),
            cwd: dir.to_path_buf(),
        }
    }

    #[test]
    fn values_are_escaped_as_github_says() {
        assert_eq!(escape_data("100% a\r\nb: c, d"), "100%25 a%0D%0Ab: c, d");
        assert_eq!(
            escape_property("100% a\r\nb: c, d"),
            "100%25 a%0D%0Ab%3A c%2C d"
        );
    }

    #[test]
    fn past_ten_cases_a_notice_counts_the_rest() {
        let mut results = fixtures::failing(13, 20);
        for (i, r) in results.runs.iter_mut().enumerate() {
            r.case = format!("case{i}");
            r.expected.line = Some(3);
            let info = results.cases["case"].clone();
            results.cases.insert(r.case.clone(), info);
        }
        let dir = tempfile::tempdir().unwrap();
        let out = render(&results, &places(dir.path()), "see crosspickle.html");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), MAX_ERRORS + 1, "{out}");
        assert!(lines[..MAX_ERRORS]
            .iter()
            .all(|l| l.starts_with("::error ")));
        assert!(
            lines[MAX_ERRORS].starts_with("::notice ")
                && lines[MAX_ERRORS].contains("::3 more failing cases (3 runs) not annotated")
                && lines[MAX_ERRORS].ends_with("see crosspickle.html"),
            "{}",
            lines[MAX_ERRORS]
        );
    }

    #[test]
    fn one_annotation_per_case_and_line_with_the_file_relative() {
        let mut results = fixtures::failing(3, 5);
        results.runs[2].python = "pypy-3.10.14".into();
        for r in &mut results.runs {
            r.expected.line = Some(7);
        }
        let dir = tempfile::tempdir().unwrap();
        let out = render(&results, &places(dir.path()), "");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 1, "{out}");
        let (head, message) = lines[0]
            .split_once("::")
            .unwrap()
            .1
            .split_once("::")
            .unwrap();
        assert_eq!(
            head,
            "error file=cases/case.yaml,line=7,title=crosspickle%3A regression in case (3 runs)"
        );
        assert!(message.starts_with("regression on cpython-3.12.1 [i=0], cpython-3.12.1 [i=1], pypy-3.10.14 [i=2]: expected pass, got error: ValueError: "), "{message}");
        assert!(
            !message.contains('\n') && !message.contains('\u{1b}'),
            "{message}"
        );
    }

    #[test]
    fn an_annotation_stays_short_however_much_fails() {
        let mut results = fixtures::failing(200, 5000);
        for (i, r) in results.runs.iter_mut().enumerate() {
            r.expected.line = Some(2);
            if let Some(o) = r.observed.as_mut() {
                o.message = Some(format!("{i}: {}", o.message.as_deref().unwrap_or("")));
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let out = render(&results, &places(dir.path()), "");
        assert_eq!(out.lines().count(), 1);
        assert!(out.len() < 20 * 1024, "{} bytes", out.len());
        assert!(
            out.contains("%0Aand 180 more, each with another explanation"),
            "{out}"
        );
    }

    #[test]
    fn paths_outside_the_workspace_and_corpus_cases_have_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let at = places(&dir.path().join("repo"));
        assert_eq!(
            workspace_file("cases/a.yaml", &at).as_deref(),
            Some("cases/a.yaml")
        );
        assert_eq!(
            workspace_file("./cases/../x/a.yaml", &at).as_deref(),
            Some("x/a.yaml")
        );
        assert_eq!(workspace_file("../other/a.yaml", &at), None);
        let (relative, bytes) = crate::corpus::files()[0];
        let corpus = format!("{}{relative}", crate::corpus::PREFIX);
        assert_eq!(
            workspace_file(&corpus, &at),
            None,
            "no such file in the workspace"
        );
        let copy = dir.path().join("repo/cases").join(relative);
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        std::fs::write(&copy, b"another text").unwrap();
        assert_eq!(workspace_file(&corpus, &at), None, "another file");
        std::fs::write(&copy, bytes).unwrap();
        assert_eq!(
            workspace_file(&corpus, &at),
            Some(format!("cases/{relative}"))
        );
    }

    #[test]
    fn guarded_text_is_not_read_as_commands() {
        assert_eq!(guard("", "t"), "");
        assert_eq!(
            guard("::error::forged\nend", "tok"),
            "::stop-commands::tok\n::error::forged\nend\n::tok::\n"
        );
    }
}
