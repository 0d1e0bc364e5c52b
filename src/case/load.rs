//! Finding case files and turning each into a validated [`Case`], or into errors that name the
//! file, the line, the column and the key.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::schema::{RawCase, RawRule};
use super::{Body, Case, Expected, OutcomeKind, Rule};
use crate::errors::{CaseError, Error};

/// Every `*.yaml` / `*.yml` file under `paths` (files are taken as given), sorted, each once.
pub fn find_case_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|_| Error::MissingPath(path.clone()))?;
        if meta.is_dir() {
            walk(path, &mut files)
                .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
        } else {
            files.push(path.clone());
        }
    }
    let mut seen = std::collections::HashSet::new();
    files.retain(|f| seen.insert(std::fs::canonicalize(f).unwrap_or_else(|_| f.clone())));
    if files.is_empty() {
        return Err(Error::NoCases(paths.to_vec()));
    }
    Ok(files)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            walk(&path, out)?;
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml")
        ) {
            out.push(path);
        }
    }
    Ok(())
}

/// Load every case file; all problems of all files are reported together, ids checked unique.
pub fn load_cases(files: &[PathBuf]) -> Result<Vec<Case>, Error> {
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    let mut ids: HashMap<String, PathBuf> = HashMap::new();
    for file in files {
        match load_file(file) {
            Ok(case) => {
                if let Some(first) = ids.get(&case.id) {
                    let text = std::fs::read_to_string(file).unwrap_or_default();
                    errors.push(CaseError {
                        path: file.clone(),
                        location: Locator::new(&text).top_key("id"),
                        message: format!(
                            "duplicate id `{}`: {} has it already; ids must be unique (give one of them an `id:`)",
                            case.id,
                            first.display()
                        ),
                    });
                } else {
                    ids.insert(case.id.clone(), file.clone());
                    cases.push(case);
                }
            }
            Err(mut errs) => errors.append(&mut errs),
        }
    }
    if errors.is_empty() {
        Ok(cases)
    } else {
        Err(Error::Cases(errors))
    }
}

pub fn load_file(path: &Path) -> Result<Case, Vec<CaseError>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![CaseError {
            path: path.to_path_buf(),
            location: None,
            message: format!("cannot read: {e}"),
        }]
    })?;
    parse_case(path, &text)
}

/// Parse and validate one case file's text.
pub fn parse_case(path: &Path, text: &str) -> Result<Case, Vec<CaseError>> {
    if text.trim().is_empty() {
        let message = "the file is empty: a case needs at least `title` and `code`".to_string();
        return Err(vec![CaseError {
            path: path.to_path_buf(),
            location: None,
            message,
        }]);
    }
    let raw: RawCase = serde_norway::from_str(text).map_err(|e| {
        let location = e.location().map(|l| (l.line(), l.column()));
        let mut message = e.to_string();
        if let Some(at) = message.rfind(" at line ") {
            message.truncate(at);
        }
        vec![CaseError {
            path: path.to_path_buf(),
            location,
            message,
        }]
    })?;
    Validator {
        path,
        loc: Locator::new(text),
        errors: Vec::new(),
    }
    .validate(raw)
}

struct Validator<'a> {
    path: &'a Path,
    loc: Locator<'a>,
    errors: Vec<CaseError>,
}

impl Validator<'_> {
    fn err(&mut self, location: Option<(usize, usize)>, message: String) {
        self.errors.push(CaseError {
            path: self.path.to_path_buf(),
            location,
            message,
        });
    }

    fn validate(mut self, raw: RawCase) -> Result<Case, Vec<CaseError>> {
        let stem = self
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let id = match raw.id {
            Some(id) => {
                if !valid_id(&id) {
                    let at = self.loc.top_key("id");
                    self.err(at, format!("id `{id}` is invalid: use lowercase letters, digits, `.`, `_` and `-`, starting with a letter or digit (ids become file names and report keys)"));
                }
                id
            }
            None => {
                if !valid_id(&stem) {
                    self.err(None, format!("the file name `{stem}` is not a valid id (lowercase letters, digits, `.`, `_`, `-`): rename the file or give the case an `id:`"));
                }
                stem
            }
        };
        let title = match raw.title.as_deref().map(str::trim) {
            Some(t) if !t.is_empty() => {
                if t.contains('\n') {
                    let at = self.loc.top_key("title");
                    self.err(
                        at,
                        "`title` must be one line (put the rest in `description`)".into(),
                    );
                }
                t.to_string()
            }
            _ => {
                self.err(
                    None,
                    "missing `title`: every case needs a one-line title".into(),
                );
                String::new()
            }
        };
        let body = match (raw.code, raw.dump, raw.load) {
            (Some(code), None, None) => Body::Code(code),
            (None, Some(dump), Some(load)) => Body::RoundTrip { dump, load },
            (None, None, None) => {
                self.err(
                    None,
                    "missing `code` (or `dump` and `load` for a round trip)".into(),
                );
                Body::Code(String::new())
            }
            (Some(_), _, _) => {
                let at = self
                    .loc
                    .top_key("dump")
                    .or_else(|| self.loc.top_key("load"));
                self.err(
                    at,
                    "a case has either `code` or `dump` and `load`, not both".into(),
                );
                Body::Code(String::new())
            }
            (None, Some(_), None) => {
                let at = self.loc.top_key("dump");
                self.err(at, "`dump` needs a `load` to go with it".into());
                Body::Code(String::new())
            }
            (None, None, Some(_)) => {
                let at = self.loc.top_key("load");
                self.err(at, "`load` needs a `dump` to go with it".into());
                Body::Code(String::new())
            }
        };
        let round_trip = matches!(body, Body::RoundTrip { .. });
        if let Some(t) = raw.timeout {
            if !(t.is_finite() && t > 0.0) {
                let at = self.loc.top_key("timeout");
                self.err(
                    at,
                    format!("`timeout` must be a positive number of seconds, not {t}"),
                );
            }
        }
        for link in &raw.links {
            if !(link.starts_with("https://") || link.starts_with("http://")) {
                let at = self.loc.find_text(link);
                self.err(
                    at,
                    format!("link `{link}` is not a URL (http:// or https://)"),
                );
            }
        }
        for tag in &raw.tags {
            if tag.trim().is_empty() || tag.contains(char::is_whitespace) {
                let at = self.loc.top_key("tags");
                self.err(at, format!("tag `{tag}` must be one word"));
            }
        }
        for key in raw.env.keys() {
            if key.is_empty() || key.contains('=') || key.contains('\0') {
                let at = self.loc.top_key("env");
                self.err(at, format!("environment variable name `{key}` is invalid"));
            }
        }
        for (name, values) in &raw.params {
            let at = self.loc.key_under("params", name);
            if !is_identifier(name) {
                self.err(
                    at,
                    format!("param `{name}` is not a Python identifier: params become globals"),
                );
            }
            if round_trip && name == "data" {
                self.err(
                    at,
                    "param `data` would hide the pickle that `load` receives in `data`: rename it"
                        .into(),
                );
            }
            if values.is_empty() {
                self.err(
                    at,
                    format!("param `{name}` has no values: give it a non-empty list"),
                );
            }
            for (i, v) in values.iter().enumerate() {
                if values[..i].contains(v) {
                    self.err(at, format!("param `{name}` lists the value {v} twice"));
                }
            }
        }
        for req in &raw.requires {
            let at = self.loc.find_text(req);
            if req.trim().is_empty() {
                self.err(at, "empty requirement in `requires`".into());
            }
            for name in placeholders(req) {
                if !raw.params.contains_key(&name) {
                    self.err(at, format!("requirement `{req}` uses `{{{name}}}` but the case has no param `{name}`"));
                }
            }
        }
        let rules: Vec<Rule> = raw
            .expect
            .into_iter()
            .enumerate()
            .map(|(i, r)| self.rule(i, r, &raw.params, round_trip))
            .collect();
        if let Some(first) = rules.iter().position(Rule::selects_everything) {
            if first + 1 < rules.len() {
                let at = self.loc.rule_start(first + 1);
                self.err(at, format!("expect[{}] can never be chosen: expect[{first}] has no selector and decides every run (rules are tried in order)", first + 1));
            }
        }
        if !self.errors.is_empty() {
            return Err(self.errors);
        }
        Ok(Case {
            id,
            path: self.path.to_path_buf(),
            title,
            description: raw.description,
            links: raw.links,
            tags: raw.tags,
            python: raw.python,
            implementation: raw.implementation,
            requires: raw.requires,
            env: raw.env,
            timeout: raw.timeout,
            isolation: raw.isolation,
            params: raw.params,
            body,
            expect: rules,
        })
    }

    fn rule(
        &mut self,
        index: usize,
        raw: RawRule,
        params: &indexmap::IndexMap<String, Vec<super::ParamValue>>,
        round_trip: bool,
    ) -> Rule {
        let here = |loc: &Locator, key: &str| {
            loc.rule_key(index, key)
                .or_else(|| loc.rule_key(index, "outcome"))
        };
        let mut where_ = indexmap::IndexMap::new();
        for (name, values) in raw.where_ {
            let values = values.into_vec();
            match params.get(&name) {
                None => {
                    let at = here(&self.loc, "where");
                    let known = if params.is_empty() {
                        "the case has no params".to_string()
                    } else {
                        format!(
                            "its params are {}",
                            params
                                .keys()
                                .map(|k| format!("`{k}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    };
                    self.err(
                        at,
                        format!("expect[{index}].where names param `{name}`, but {known}"),
                    );
                }
                Some(declared) => {
                    for v in &values {
                        if !declared.contains(v) {
                            let at = here(&self.loc, "where");
                            let list = declared
                                .iter()
                                .map(|d| d.to_string())
                                .collect::<Vec<_>>()
                                .join(", ");
                            self.err(at, format!("expect[{index}].where: param `{name}` has no value {v} (its values are [{list}])"));
                        }
                    }
                }
            }
            where_.insert(name, values);
        }
        if !round_trip {
            for (key, present) in [
                ("dump_python", raw.dump_python.is_some()),
                ("load_python", raw.load_python.is_some()),
                ("phase", raw.phase.is_some()),
            ] {
                if present {
                    let at = here(&self.loc, key);
                    self.err(at, format!("expect[{index}].{key} selects round trips, but this case has `code`, not `dump` and `load`"));
                }
            }
        }
        if let Some(sig) = &raw.signal {
            if raw.outcome != OutcomeKind::Crash {
                let at = here(&self.loc, "signal");
                self.err(
                    at,
                    format!("expect[{index}].signal only goes with `outcome: crash`"),
                );
            } else if crate::sys::signal::number(sig).is_none() {
                let at = here(&self.loc, "signal");
                self.err(at, format!("expect[{index}].signal `{sig}` is not a signal name (like SIGSEGV or SIGABRT)"));
            }
        }
        if raw.outcome == OutcomeKind::Pass || raw.outcome == OutcomeKind::Timeout {
            for (key, present) in [
                ("exception", raw.exception.is_some()),
                ("match", raw.pattern.is_some()),
            ] {
                if present {
                    let at = here(&self.loc, key);
                    self.err(at, format!("expect[{index}].{key} cannot go with `outcome: {}`: no exception is raised", raw.outcome));
                }
            }
        }
        if let Some(exc) = &raw.exception {
            if exc.split('.').any(|part| !is_identifier(part)) {
                let at = here(&self.loc, "exception");
                self.err(at, format!("expect[{index}].exception `{exc}` is not an exception name (like `PicklingError` or `_pickle.PicklingError`)"));
            }
        }
        if let Some(pattern) = &raw.pattern {
            if let Err(e) = fancy_regex::Regex::new(pattern) {
                let at = here(&self.loc, "match");
                self.err(
                    at,
                    format!("expect[{index}].match is not a valid regular expression: {e}"),
                );
            }
        }
        Rule {
            python: raw.python,
            implementation: raw.implementation,
            where_,
            dump_python: raw.dump_python,
            load_python: raw.load_python,
            phase: raw.phase,
            expected: Expected {
                outcome: raw.outcome,
                exception: raw.exception,
                signal: raw.signal,
                pattern: raw.pattern,
                reason: raw.reason,
            },
        }
    }
}

pub(crate) fn valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

/// The `{name}` placeholders of a requirement string.
pub(crate) fn placeholders(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(open) = rest.find('{') {
        match rest[open..].find('}') {
            Some(close) => {
                out.push(rest[open + 1..open + close].to_string());
                rest = &rest[open + close + 1..];
            }
            None => break,
        }
    }
    out
}

/// Finds where keys stand in the text, for errors found after serde has read the file (serde
/// keeps no positions). Block-style YAML, as cases are written; `None` when not found.
struct Locator<'a> {
    lines: Vec<&'a str>,
}

impl<'a> Locator<'a> {
    fn new(text: &'a str) -> Self {
        Locator {
            lines: text.lines().collect(),
        }
    }

    fn starts_key(line: &str, key: &str) -> Option<usize> {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let body = trimmed
            .strip_prefix("- ")
            .map(str::trim_start)
            .unwrap_or(trimmed);
        let offset = line.len() - body.len();
        let unquoted = body.strip_prefix(key)?;
        (unquoted.trim_start().starts_with(':')).then_some(offset.max(indent))
    }

    fn top_key(&self, key: &str) -> Option<(usize, usize)> {
        self.lines
            .iter()
            .position(|l| !l.starts_with(' ') && Self::starts_key(l, key) == Some(0))
            .map(|n| (n + 1, 1))
    }

    /// Lines of the block under top-level `key` (exclusive of the key line).
    fn block(&self, key: &str) -> Option<std::ops::Range<usize>> {
        let (line, _) = self.top_key(key)?;
        let start = line; // index of the line after the key
        let end = (start..self.lines.len())
            .find(|&n| {
                let l = self.lines[n];
                !l.is_empty() && !l.starts_with(' ') && !l.starts_with('-') && !l.starts_with('#')
            })
            .unwrap_or(self.lines.len());
        Some(start..end)
    }

    fn key_under(&self, top: &str, key: &str) -> Option<(usize, usize)> {
        let block = self.block(top)?;
        block
            .clone()
            .find_map(|n| Self::starts_key(self.lines[n], key).map(|col| (n + 1, col + 1)))
            .or_else(|| self.top_key(top))
    }

    fn rule_start(&self, index: usize) -> Option<(usize, usize)> {
        self.rule_key(index, "-")
    }

    fn rule_key(&self, index: usize, key: &str) -> Option<(usize, usize)> {
        let block = self.block("expect")?;
        let items: Vec<usize> = block
            .clone()
            .filter(|&n| self.lines[n].trim_start().starts_with('-'))
            .collect();
        let indent = items
            .iter()
            .map(|&n| self.lines[n].len() - self.lines[n].trim_start().len())
            .min()?;
        let items: Vec<usize> = items
            .into_iter()
            .filter(|&n| self.lines[n].len() - self.lines[n].trim_start().len() == indent)
            .collect();
        let start = *items.get(index)?;
        let end = items.get(index + 1).copied().unwrap_or(block.end);
        (start..end)
            .find_map(|n| Self::starts_key(self.lines[n], key).map(|col| (n + 1, col + 1)))
            .or(Some((start + 1, indent + 1)))
    }

    fn find_text(&self, needle: &str) -> Option<(usize, usize)> {
        self.lines
            .iter()
            .enumerate()
            .find_map(|(n, l)| l.find(needle).map(|c| (n + 1, c + 1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Case, Vec<CaseError>> {
        parse_case(Path::new("cases/x.yaml"), text)
    }

    fn first_error(text: &str) -> String {
        parse(text).unwrap_err()[0].to_string()
    }

    #[test]
    fn minimal_case() {
        let case = parse("title: t\ncode: pass\n").unwrap();
        assert_eq!(case.id, "x");
        assert!(case.expect.is_empty());
    }

    #[test]
    fn unknown_key_names_line_and_column() {
        let e = first_error("title: t\ncode: pass\nexpect:\n  - outcome: fail\n    mach: foo\n");
        assert!(e.starts_with("cases/x.yaml:5:"), "{e}");
        assert!(e.contains("unknown field `mach`"), "{e}");
    }

    #[test]
    fn unquoted_version_is_refused() {
        let e = first_error("title: t\npython: 3.10\ncode: pass\n");
        assert!(e.contains("cases/x.yaml:2:"), "{e}");
        assert!(e.contains("put it in quotes"), "{e}");
    }

    #[test]
    fn where_must_name_real_params() {
        let text = "title: t\nparams:\n  protocol: [2, 5]\ncode: pass\nexpect:\n  - outcome: pass\n  - where: {protocol: 4}\n    outcome: error\n";
        let e = first_error(text);
        assert!(e.starts_with("cases/x.yaml:7:5:"), "{e}");
        assert!(e.contains("has no value 4"), "{e}");
        let e =
            first_error("title: t\ncode: pass\nexpect:\n  - where: {p: 1}\n    outcome: fail\n");
        assert!(e.contains("no params"), "{e}");
    }

    #[test]
    fn round_trip_selectors_need_round_trips() {
        let e = first_error("title: t\ncode: pass\nexpect:\n  - phase: dump\n    outcome: error\n");
        assert!(e.contains("round trips"), "{e}");
        assert!(parse(
            "title: t\ndump: data=b''\nload: pass\nexpect:\n  - phase: dump\n    outcome: error\n"
        )
        .is_ok());
    }

    #[test]
    fn bad_ids_and_bodies() {
        assert!(first_error("id: Bad Id\ntitle: t\ncode: pass\n")
            .contains("cases/x.yaml:1:1: id `Bad Id` is invalid"));
        assert!(first_error("title: t\n").contains("missing `code`"));
        assert!(first_error("title: t\ncode: a\ndump: b\nload: c\n").contains("not both"));
        assert!(first_error("code: pass\n").contains("missing `title`"));
        assert!(first_error("").contains("empty"));
        assert!(first_error("title: t\ncode: pass\nparams:\n  x: []\n").contains("no values"));
        assert!(first_error(
            "title: t\ncode: pass\nexpect:\n  - outcome: crash\n    signal: SIGFOO\n"
        )
        .contains("not a signal"));
        assert!(first_error(
            "title: t\ncode: pass\nexpect:\n  - outcome: fail\n    match: '(unclosed'\n"
        )
        .contains("regular expression"));
        assert!(
            first_error("title: t\ncode: pass\nexpect:\n  - outcome: bogus\n")
                .contains("unknown variant `bogus`")
        );
        assert!(
            first_error("title: t\ncode: pass\nrequires: ['loky=={loky}']\n")
                .contains("no param `loky`")
        );
    }

    #[test]
    fn rules_after_a_catch_all_are_refused() {
        let e = first_error("title: t\ncode: pass\nexpect:\n  - outcome: fail\n  - python: '3.8'\n    outcome: error\n");
        assert!(
            e.contains("cases/x.yaml:5:") && e.contains("expect[1] can never be chosen"),
            "{e}"
        );
    }

    #[test]
    fn placeholders_are_found() {
        assert_eq!(
            placeholders("loky=={loky}; python_version<'{py}'"),
            vec!["loky", "py"]
        );
    }
}
