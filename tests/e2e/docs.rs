//! The documentation's examples, run: every fenced block of README.md and docs/*.md is read,
//! and each whole case in them runs with the built binary on every interpreter of the machine.
//!
//! The convention, checked here so that no case example escapes:
//! - a ```yaml (or ```yml) block whose first line is `# cases/<path>.yaml` is a whole case: it
//!   is written to `<path>` in a folder of its own and run on every interpreter; it must exit 0,
//!   with one run per param combination and interpreter (per producer and consumer for a round
//!   trip) and the verdicts its rules imply: `ok` where `pass` is expected, `xfail` where
//!   something else is (or a list of outcomes), `skipped` only where the case does not apply, and at least one run;
//! - a ```yaml block whose first line starts `# a fragment of a case` is skipped;
//! - any other ```yaml block must not look like a case or part of one (it fails the test if it
//!   is not YAML, or has a case's keys: mark it as one of the two above);
//! - a block of any other language holding a case (first line `# cases/…`, or `title` with
//!   `code` or `dump`) fails the test: it would escape it.
//!
//! Blocks are found as CommonMark fences: ``` or ~~~, three or more, indented or not (inside
//! lists), closed by the same character at least as many times.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use libtest_mimic::Trial;
use serde_json::Value;

use crate::support::*;

/// A fenced block of a Markdown file.
#[derive(Debug, Clone)]
struct Block {
    file: String,
    /// 1-based line of the opening fence.
    line: usize,
    /// The language: the first word of the info string, lowercased.
    lang: String,
    text: String,
}

impl Block {
    fn at(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }

    fn first_line(&self) -> &str {
        self.text.lines().next().unwrap_or("").trim()
    }
}

/// What a block is for this test.
#[derive(Debug, PartialEq)]
enum Kind {
    /// A whole case, to be written at this path (below the case folder's parent).
    Case(String),
    Fragment,
    /// Not a case (a workflow, a console session, TOML…).
    Other,
}

trial!(examples, generated);
/// The trials of the examples: one per whole case, and the checks that every block is marked.
fn examples() -> Vec<Trial> {
    let blocks = match all_blocks() {
        Ok(b) => b,
        Err(e) => {
            return vec![crate::support::timed("docs::examples", move || {
                Err(e.into())
            })]
        }
    };
    let mut trials = Vec::new();
    let mut problems = Vec::new();
    let mut cases = Vec::new();
    for block in blocks {
        match classify(&block) {
            Ok(Kind::Case(path)) => cases.push((block, path)),
            Ok(Kind::Fragment | Kind::Other) => {}
            Err(e) => problems.push(e),
        }
    }
    let count = cases.len();
    trials.push(crate::support::timed(
        "docs::every_case_example_is_marked",
        move || {
            check(problems.is_empty(), problems.join("\n"))?;
            // README's example and the format's own: a test that finds none is broken.
            check(
                count >= 3,
                format!("only {count} whole-case examples found"),
            )
        },
    ));
    for (block, path) in cases {
        let name = format!("docs::{}:{}", block.at(), path);
        trials.push(trial(&name, EVERY_PYTHON, move || {
            run_example(&block, &path)
        }));
    }
    trials.push(crate::support::timed(
        "docs::fences_and_markers",
        fences_and_markers,
    ));
    trials
}

/// README.md and every docs/*.md, in that order.
fn markdown_files() -> Result<Vec<PathBuf>, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .map_err(|e| format!("docs/: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files.insert(0, root.join("README.md"));
    Ok(files)
}

fn all_blocks() -> Result<Vec<Block>, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut blocks = Vec::new();
    for file in markdown_files()? {
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let name = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        blocks.extend(fenced_blocks(&name, &text));
    }
    Ok(blocks)
}

/// A fence being read: where it opened, its character, length and indentation.
struct Open<'a> {
    line: usize,
    ch: char,
    len: usize,
    indent: usize,
    lang: String,
    lines: Vec<&'a str>,
}

impl Open<'_> {
    fn close(self, file: &str) -> Block {
        Block {
            file: file.to_string(),
            line: self.line,
            lang: self.lang,
            text: self.lines.iter().map(|l| format!("{l}\n")).collect(),
        }
    }
}

/// Every fenced code block of a Markdown text.
fn fenced_blocks(file: &str, text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Open> = None;
    for (i, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start().len();
        let rest = line.trim_start();
        let fence_char = rest.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = fence_char.map_or(0, |c| rest.chars().take_while(|x| *x == c).count());
        match open.take() {
            None => {
                if let Some(ch) = fence_char.filter(|_| run >= 3) {
                    let info = rest[run..].trim();
                    if ch == '`' && info.contains('`') {
                        continue; // inline code, not a fence
                    }
                    open = Some(Open {
                        line: i + 1,
                        ch,
                        len: run,
                        indent,
                        lang: info.split_whitespace().next().unwrap_or("").to_lowercase(),
                        lines: Vec::new(),
                    });
                }
            }
            Some(mut fence) => {
                if fence_char == Some(fence.ch) && run >= fence.len && rest[run..].trim().is_empty()
                {
                    blocks.push(fence.close(file));
                } else {
                    // Content lines lose up to the fence's indentation.
                    fence.lines.push(&line[indent.min(fence.indent)..]);
                    open = Some(fence);
                }
            }
        }
    }
    // An unclosed fence runs to the end of the document.
    if let Some(fence) = open {
        blocks.push(fence.close(file));
    }
    blocks
}

/// Keys only a case (or a piece of one) has.
const CASE_KEYS: &[&str] = &[
    "title",
    "code",
    "dump",
    "load",
    "expect",
    "params",
    "requires",
    "implementation",
    "where",
    "outcome",
];

fn looks_like_case(value: &serde_json::Value) -> bool {
    match value {
        Value::Object(map) => CASE_KEYS.iter().any(|k| map.contains_key(*k)),
        Value::Array(items) => items.iter().any(|i| {
            i.as_object()
                .is_some_and(|m| m.contains_key("outcome") || m.contains_key("where"))
        }),
        _ => false,
    }
}

fn is_whole_case(value: &serde_json::Value) -> bool {
    value.as_object().is_some_and(|m| {
        m.contains_key("title") && (m.contains_key("code") || m.contains_key("dump"))
    })
}

fn case_marker(first_line: &str) -> Option<&str> {
    let path = first_line.strip_prefix('#')?.trim();
    (path.starts_with("cases/") && (path.ends_with(".yaml") || path.ends_with(".yml")))
        .then_some(path)
}

fn classify(block: &Block) -> Result<Kind, String> {
    let parsed: Result<Value, _> = serde_norway::from_str(&block.text);
    let marker = case_marker(block.first_line());
    if block.lang != "yaml" && block.lang != "yml" {
        let is_case = marker.is_some() || parsed.as_ref().is_ok_and(is_whole_case);
        return if is_case {
            Err(format!(
                "{}: a case in a ```{} block: make it a ```yaml block (first line `# cases/<file>.yaml`) so that it is run",
                block.at(),
                block.lang
            ))
        } else {
            Ok(Kind::Other)
        };
    }
    if let Some(path) = marker {
        if path.split('/').any(|p| p == ".." || p.is_empty()) {
            return Err(format!(
                "{}: `{path}` is not a path below cases/",
                block.at()
            ));
        }
        return Ok(Kind::Case(path.to_string()));
    }
    if block.first_line().starts_with("# a fragment of a case") {
        return Ok(Kind::Fragment);
    }
    let hint = "start it with `# cases/<file>.yaml` (a whole case, run by the tests) or `# a fragment of a case: …` (skipped)";
    match parsed {
        Err(e) => Err(format!(
            "{}: a ```yaml block that is not YAML ({e}): {hint}",
            block.at()
        )),
        Ok(v) if looks_like_case(&v) => Err(format!(
            "{}: a ```yaml block with a case's keys but no marker: {hint}",
            block.at()
        )),
        Ok(_) => Ok(Kind::Other),
    }
}

/// The number of param combinations a case declares (1 without params).
fn combinations(case: &Value) -> Result<usize, String> {
    match case.get("params") {
        None => Ok(1),
        Some(Value::Object(params)) => params
            .iter()
            .map(|(name, values)| {
                values
                    .as_array()
                    .map(Vec::len)
                    .ok_or_else(|| format!("param `{name}` is not a list"))
            })
            .product(),
        Some(other) => Err(format!("params is not a map: {other}")),
    }
}

fn run_example(block: &Block, path: &str) -> TestResult {
    let case: Value = serde_norway::from_str(&block.text)
        .map_err(|e| format!("{}: not YAML: {e}", block.at()))?;
    let dir = folder(&[(path, &block.text)]);
    let mut args = python_args(EVERY_PYTHON);
    args.push(path.to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (run, json) = run_json(dir.path(), &args);
    let at = block.at();
    check(
        run.code == 0,
        format!(
            "{at} ({path}) does not pass on every interpreter: exit {}\n{}\n{}",
            run.code, run.stdout, run.stderr
        ),
    )?;

    let interpreters = json["interpreters"].as_array().map_or(0, Vec::len);
    check(
        interpreters == EVERY_PYTHON.len(),
        format!(
            "{at}: ran on {interpreters} interpreters, not {}",
            EVERY_PYTHON.len()
        ),
    )?;
    let ids: Vec<&String> = json["cases"]
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    check(ids.len() == 1, format!("{at}: cases {ids:?}"))?;

    // One run per combination and interpreter, per producer too for a round trip.
    let combos = combinations(&case).map_err(|e| format!("{at}: {e}"))?;
    let round_trip = case.get("dump").is_some();
    let want = combos * interpreters * if round_trip { interpreters } else { 1 };
    let runs = runs(&json);
    let distinct: BTreeSet<String> = runs
        .iter()
        .map(|r| format!("{} {} {}", r["params"], r["dump_python"], r["python"]))
        .collect();
    check(
        runs.len() == want && distinct.len() == want,
        format!("{at}: {} runs ({} distinct), {combos} combination(s) × {interpreters} interpreters{} make {want}", runs.len(), distinct.len(), if round_trip { " × producers" } else { "" }),
    )?;

    // The verdicts the rules imply.
    let mut implied: BTreeMap<&str, usize> = BTreeMap::new();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &runs {
        let verdict = r["verdict"].as_str().unwrap_or("?");
        let expected = if verdict == "skipped" {
            check(
                r["reason"].as_str().is_some_and(|s| !s.is_empty()),
                format!("{at}: a skipped run without its reason: {r}"),
            )?;
            "skipped"
        } else if r["expected"]["outcome"] == "pass" && r["expected"].get("any_of").is_none() {
            "ok"
        } else {
            "xfail"
        };
        *implied.entry(expected).or_default() += 1;
        *seen.entry(verdict).or_default() += 1;
    }
    check(
        implied == seen,
        format!("{at}: verdicts {seen:?}, the rules imply {implied:?}"),
    )?;
    check(
        implied.get("skipped").copied().unwrap_or(0) < runs.len(),
        format!("{at}: every run is skipped, the example runs nowhere"),
    )?;
    claims(&block.file, &at, path, &runs)
}

/// What the text around an example says of its verdicts, where it says it.
fn claims(block_file: &str, at: &str, path: &str, runs: &[Value]) -> TestResult {
    if !(block_file == "README.md" && path.ends_with("/protocol-5.yaml")) {
        return Ok(());
    }
    // README: "both runs on 2.7 and protocol 5 on 3.6 and 3.7 are `xfail`, every other run
    // is `ok`".
    for r in runs {
        let python = r["python"].as_str().unwrap_or("");
        let old = ["cpython-3.6.", "cpython-3.7."]
            .iter()
            .any(|p| python.starts_with(p));
        let want = if python.starts_with("cpython-2.7.") || (old && r["params"]["protocol"] == 5) {
            "xfail"
        } else {
            "ok"
        };
        check(
            r["verdict"] == want,
            format!("{at}: README says {python} {} is {want}: {r}", r["params"]),
        )?;
    }
    Ok(())
}

/// The extractor and the classification on made-up Markdown.
fn fences_and_markers() -> TestResult {
    let md = "intro\n\
        ```yaml\n# cases/a.yaml\ntitle: a\ncode: pass\n```\n\
        - a list item:\n\n  ~~~~yml\n  # cases/sub/b.yml\n  title: b\n  code: pass\n  ~~~~\n\
        ```yaml\n# a fragment of a case: params only\nparams: {n: [1]}\n```\n\
        ```yaml\nname: a workflow\non: push\n```\n\
        ````yaml\nexpect:\n  - outcome: fail\n````\n\
        ```text\n# cases/c.yaml\ntitle: c\ncode: pass\n```\n\
        ```\ntitle: d\ndump: x\nload: y\n```\n\
        ```console\n$ crosspickle run\n```\n";
    let blocks = fenced_blocks("x.md", md);
    let kinds: Vec<Result<Kind, String>> = blocks.iter().map(classify).collect();
    check(blocks.len() == 8, format!("{blocks:#?}"))?;
    check(
        blocks[1].text == "# cases/sub/b.yml\ntitle: b\ncode: pass\n" && blocks[1].line == 9,
        format!("{:?}", blocks[1]),
    )?;
    check(
        kinds[0] == Ok(Kind::Case("cases/a.yaml".into())),
        format!("{:?}", kinds[0]),
    )?;
    check(
        kinds[1] == Ok(Kind::Case("cases/sub/b.yml".into())),
        format!("{:?}", kinds[1]),
    )?;
    check(kinds[2] == Ok(Kind::Fragment), format!("{:?}", kinds[2]))?;
    check(kinds[3] == Ok(Kind::Other), format!("{:?}", kinds[3]))?;
    for (i, wanted) in [
        (4, "no marker"),
        (5, "in a ```text block"),
        (6, "in a ``` block"),
    ] {
        check(
            kinds[i].as_ref().is_err_and(|e| e.contains(wanted)),
            format!("block {i}: {:?}", kinds[i]),
        )?;
    }
    check(kinds[7] == Ok(Kind::Other), format!("{:?}", kinds[7]))
}
