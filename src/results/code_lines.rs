//! Tracebacks that name the case file: a run's code is written to a temporary `case.py`
//! (`dump.py`, `load.py`), so Python's traceback names that file and its line; each such line
//! is rewritten here to the case file and the line of it that holds that line of the code
//! (`File "cases/x.yaml", line 14, in <module>`), when the code's lines are the file's
//! ([`crate::case::Case::code_starts`]). Done once, as the results are assembled, so every
//! report and the JSON show the file's lines.

use crate::case::{RELAY_FILE, RELOAD_FILE};

/// Where the code of a case stands in its file: the file as reports name it, and the line of
/// the first line of `code` (or `dump`) and of `load`.
#[derive(Debug, Clone, Copy)]
pub struct CodeLines<'a> {
    pub path: &'a str,
    pub starts: (Option<usize>, Option<usize>),
    /// Where `setup` stands ahead of the code in each of those files (and of `reload`).
    pub setup: crate::case::SetupLines,
    /// The line of the first line of a bounce's `relay` (run after the load's code, in its
    /// `__main__`: no `setup` ahead of it) and of its `reload`.
    pub bounce: (Option<usize>, Option<usize>),
}

impl CodeLines<'_> {
    /// `text` with every place in the run's code file (`File "…/run-x/case.py", line 3` in a
    /// traceback, `(case.py, line 3)` in a `SyntaxError`'s message) naming the case file's
    /// line instead; places elsewhere (the standard library, the driver) are left as they are.
    pub fn rewrite(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some((before, place, after)) = next_place(rest) {
            out.push_str(before);
            match self.line_of(place.file, place.line) {
                Some(line) => match place.form {
                    Form::Traceback => out.push_str(&format!(
                        "File \"{}\", line {line}",
                        self.path.replace('"', "\\\"")
                    )),
                    Form::Message => out.push_str(&format!("({}, line {line})", self.path)),
                },
                None => out.push_str(place.text),
            }
            rest = after;
        }
        out.push_str(rest);
        out
    }

    /// Every traceback and message of `record` (of its earlier attempts, its named checks and
    /// theirs too) rewritten.
    pub fn apply(&self, record: &mut crate::results::RunRecord) {
        let mut observed: Vec<Option<&mut crate::outcome::Observed>> = Vec::new();
        for a in &mut record.attempts {
            observed.push(a.observed.as_mut());
            observed.extend(a.checks.iter_mut().map(|c| Some(&mut c.observed)));
        }
        observed.push(record.observed.as_mut());
        observed.extend(record.checks.iter_mut().map(|c| Some(&mut c.observed)));
        for o in observed.into_iter().flatten() {
            for text in [o.traceback.as_mut(), o.message.as_mut()]
                .into_iter()
                .flatten()
            {
                *text = self.rewrite(text);
            }
        }
    }

    /// The case file's line for line `line` of the code file named `file`: a line of
    /// `setup`, which comes first in each, or of the code after it.
    fn line_of(&self, file: &str, line: usize) -> Option<usize> {
        let start = match file {
            "case.py" | "dump.py" => self.starts.0,
            "load.py" => self.starts.1,
            RELAY_FILE => return self.bounce.0.filter(|_| line > 0).map(|s| s + line - 1),
            RELOAD_FILE => self.bounce.1,
            _ => return None,
        };
        if line == 0 {
            return None;
        }
        match line.checked_sub(self.setup.count) {
            Some(0) | None => self.setup.start.map(|s| s + line - 1),
            Some(after) => start.map(|s| s + after - 1),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Form {
    /// `File "/tmp/…/run-x/case.py", line 3`
    Traceback,
    /// `(case.py, line 3)`
    Message,
}

#[derive(Debug)]
struct Place<'a> {
    /// All of it, as written.
    text: &'a str,
    /// The code file's name: `case.py`, `dump.py` or `load.py`.
    file: &'a str,
    line: usize,
    form: Form,
}

const FILES: [&str; 5] = ["case.py", "dump.py", "load.py", RELAY_FILE, RELOAD_FILE];

/// The first place in `text` that names a line of a run's code file: what comes before it,
/// the place, and what comes after it.
fn next_place(text: &str) -> Option<(&str, Place<'_>, &str)> {
    let mut from = 0;
    loop {
        let traceback = text[from..]
            .find("File \"")
            .map(|i| (from + i, Form::Traceback));
        let message = text[from..].find('(').map(|i| (from + i, Form::Message));
        let (at, form) = match (traceback, message) {
            (Some(t), Some(m)) => std::cmp::min_by_key(t, m, |p| p.0),
            (t, m) => t.or(m)?,
        };
        if let Some((len, file, line)) = parse_place(&text[at..], form) {
            let place = Place {
                text: &text[at..at + len],
                file,
                line,
                form,
            };
            return Some((&text[..at], place, &text[at + len..]));
        }
        from = at + 1;
    }
}

/// At the start of `text`, a place of `form`: its length, file name and line.
fn parse_place(text: &str, form: Form) -> Option<(usize, &str, usize)> {
    let (open, close) = match form {
        Form::Traceback => ("File \"", "\", line "),
        Form::Message => ("(", ", line "),
    };
    let body = text.strip_prefix(open)?;
    let end = body.find(close)?;
    let path = &body[..end];
    if path.contains('\n') {
        return None;
    }
    let file = match form {
        // The run's own folder: `…/run-XXXX/case.py` (`\` on Windows).
        Form::Traceback => {
            let (dir, file) = path.rsplit_once(['/', '\\'])?;
            let parent = dir.rsplit(['/', '\\']).next()?;
            parent.starts_with("run-").then_some(file)?
        }
        Form::Message => path,
    };
    if !FILES.contains(&file) {
        return None;
    }
    let digits_at = open.len() + end + close.len();
    let digits = text[digits_at..]
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len() - digits_at);
    let line = text[digits_at..digits_at + digits].parse().ok()?;
    let mut len = digits_at + digits;
    if form == Form::Message {
        if !text[len..].starts_with(')') {
            return None;
        }
        len += 1;
    }
    Some((len, file, line))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINES: CodeLines<'static> = CodeLines {
        path: "cases/typo.yaml",
        starts: (Some(4), Some(20)),
        setup: crate::case::SetupLines {
            count: 0,
            start: None,
        },
        bounce: (None, None),
    };

    #[test]
    fn the_code_files_lines_become_the_case_files() {
        let traceback = "Traceback (most recent call last):\n  \
            File \"/tmp/crosspickle-q/run-QT/case.py\", line 5, in <module>\n    f()\n  \
            File \"/usr/lib/python3.12/pickle.py\", line 9, in loads\n  \
            File \"/tmp/crosspickle-q/run-QT/case.py\", line 1, in f\n    raise ValueError(\"boom\")\n\
            ValueError: boom (case.py, line 7)";
        assert_eq!(
            LINES.rewrite(traceback),
            "Traceback (most recent call last):\n  \
            File \"cases/typo.yaml\", line 8, in <module>\n    f()\n  \
            File \"/usr/lib/python3.12/pickle.py\", line 9, in loads\n  \
            File \"cases/typo.yaml\", line 4, in f\n    raise ValueError(\"boom\")\n\
            ValueError: boom (cases/typo.yaml, line 10)"
        );
    }

    #[test]
    fn a_round_trips_load_has_its_own_start_and_windows_paths_count() {
        let t = "File \"C:\\T\\run-a\\load.py\", line 2, in <module>";
        assert_eq!(
            LINES.rewrite(t),
            "File \"cases/typo.yaml\", line 21, in <module>"
        );
        let t = "File \"/t/run-a/dump.py\", line 2";
        assert_eq!(LINES.rewrite(t), "File \"cases/typo.yaml\", line 5");
    }

    #[test]
    fn setup_comes_first_in_every_file_and_has_its_own_lines() {
        // setup: lines 3-4 of the file; dump: from line 7; load: from line 12.
        let lines = CodeLines {
            path: "c.yaml",
            starts: (Some(7), Some(12)),
            setup: crate::case::SetupLines {
                count: 2,
                start: Some(3),
            },
            // relay: from line 15, reload: from line 18.
            bounce: (Some(15), Some(18)),
        };
        let at = |file: &str, line: usize| {
            lines.rewrite(&format!("File \"/t/run-a/{file}\", line {line}"))
        };
        assert_eq!(at("dump.py", 1), "File \"c.yaml\", line 3");
        assert_eq!(at("load.py", 2), "File \"c.yaml\", line 4");
        assert_eq!(at("dump.py", 3), "File \"c.yaml\", line 7");
        assert_eq!(at("load.py", 4), "File \"c.yaml\", line 13");
        assert_eq!(at("case.py", 0), "File \"/t/run-a/case.py\", line 0");
        // The relay runs after the load in its `__main__`: no setup ahead of it.
        assert_eq!(at("relay.py", 1), "File \"c.yaml\", line 15");
        assert_eq!(at("relay.py", 0), "File \"/t/run-a/relay.py\", line 0");
        assert_eq!(at("reload.py", 2), "File \"c.yaml\", line 4");
        assert_eq!(at("reload.py", 3), "File \"c.yaml\", line 18");
        let folded = CodeLines {
            setup: crate::case::SetupLines {
                count: 2,
                start: None,
            },
            ..lines
        };
        let t = "File \"/t/run-a/load.py\", line 1";
        assert_eq!(folded.rewrite(t), t);
        assert_eq!(
            folded.rewrite("File \"/t/run-a/load.py\", line 3"),
            "File \"c.yaml\", line 12"
        );
    }

    #[test]
    fn other_files_and_unmapped_code_are_left_alone() {
        let elsewhere = "File \"/home/me/case.py\", line 3, in <module> (x.py, line 2) (";
        assert_eq!(LINES.rewrite(elsewhere), elsewhere);
        let unmapped = CodeLines {
            path: "c.yaml",
            starts: (None, None),
            setup: Default::default(),
            bounce: (None, None),
        };
        let t = "File \"/t/run-a/case.py\", line 3, in <module>";
        assert_eq!(unmapped.rewrite(t), t);
        assert_eq!(
            LINES.rewrite("File \"/t/run-a/case.py\", line x"),
            "File \"/t/run-a/case.py\", line x"
        );
    }
}

/// The SyntaxErrors of code that compiles on no interpreter it ran on: for each case whose
/// every run that ran failed before its first line (a `SyntaxError`, `IndentationError` or
/// `TabError` at a line of its own code), one error at that line and column of the case file,
/// with Python's message and the interpreters. Code that compiles on some interpreters only
/// stays a verdict of each run.
pub fn uncompilable(results: &super::Results) -> Vec<crate::errors::CaseError> {
    let mut errors = Vec::new();
    for (id, info) in &results.cases {
        let ran: Vec<&super::RunRecord> = results
            .runs
            .iter()
            .filter(|r| &r.case == id && r.observed.is_some())
            .collect();
        let failures: Vec<Option<CompileError>> = ran
            .iter()
            .map(|r| match r.verdict.fails_run() {
                true => compile_error(r, info),
                false => None,
            })
            .collect();
        let Some(Some(first)) = failures.first() else {
            continue;
        };
        if failures.iter().any(Option::is_none) {
            continue;
        }
        let mut pythons: Vec<&str> = Vec::new();
        for r in &ran {
            if !pythons.contains(&r.python.as_str()) {
                pythons.push(&r.python);
            }
        }
        errors.push(crate::errors::CaseError {
            path: info.path.clone().into(),
            location: Some((first.line, first.column)),
            message: format!(
                "the code compiles on no selected interpreter ({}): {}; fix the code, or select interpreters that can compile it",
                pythons.join(", "),
                first.message
            ),
        });
    }
    errors
}

/// Where the code of a run failed to compile, in its case file.
#[derive(Debug, Clone, PartialEq)]
struct CompileError {
    line: usize,
    column: usize,
    /// `SyntaxError: invalid syntax`
    message: String,
}

/// The compile error a run ended with, if it did: a syntax error whose traceback's only frame
/// is a line of the case file (rewritten by [`CodeLines::apply`]) without a function, as
/// Python prints a file that does not compile.
fn compile_error(record: &super::RunRecord, info: &super::CaseInfo) -> Option<CompileError> {
    let o = record.observed.as_ref()?;
    let exception = o.exception.as_deref()?;
    if !matches!(exception, "SyntaxError" | "IndentationError" | "TabError") {
        return None;
    }
    let traceback = o.traceback.as_deref()?;
    let lines: Vec<&str> = traceback.lines().collect();
    let head = format!("File \"{}\", line ", info.path.replace('"', "\\\""));
    let frames: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].trim_start().starts_with("File \""))
        .collect();
    let [frame] = frames[..] else {
        return None;
    };
    let line: usize = lines[frame]
        .trim_start()
        .strip_prefix(&head)?
        .parse()
        .ok()?;
    // Python prints the line stripped, then a caret under the offending column.
    let printed = lines.get(frame + 1).copied().unwrap_or("");
    let caret = lines
        .get(frame + 2)
        .and_then(|l| l.find('^'))
        .map(|at| at.saturating_sub(printed.len() - printed.trim_start().len()))
        .unwrap_or(0);
    let source = info.source.as_deref().unwrap_or("");
    let written = source.lines().nth(line.checked_sub(1)?).unwrap_or("");
    let indent = written.len() - written.trim_start().len();
    let message = lines
        .iter()
        .rev()
        .find(|l| l.starts_with(exception))
        .map_or_else(|| exception.to_string(), |l| l.trim().to_string());
    Some(CompileError {
        line,
        column: indent + caret + 1,
        message,
    })
}
