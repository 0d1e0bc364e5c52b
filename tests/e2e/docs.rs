//! The documentation's examples, run: every fenced block of README.md, CONTRIBUTING.md and
//! docs/*.md is read, and each whole case in them runs with the built binary on every
//! interpreter of the machine. Every `$ crosspickle` command they show is run: README's for
//! real, in the order a reader types them, in a folder of their own; the others' arguments
//! checked by the binary's own parser. docs/cli.md's `--help` blocks are what the binary
//! prints, and every relative link of these files leads to a file that exists.
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

/// README.md, CONTRIBUTING.md and every docs/*.md, in that order.
fn markdown_files() -> Result<Vec<PathBuf>, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .map_err(|e| format!("docs/: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files.insert(0, root.join("CONTRIBUTING.md"));
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

/// The number of param combinations a case declares (1 without params), `protocol: each`'s
/// six protocols included.
fn combinations(case: &Value) -> Result<usize, String> {
    let protocols = match case.get("protocol") {
        Some(each) if each == "each" => 6,
        _ => 1,
    };
    let params: Result<usize, String> = match case.get("params") {
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
    };
    Ok(params? * protocols)
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

/// A `$ crosspickle …` command of a console block: its line, its text (a `\` continuation
/// joined) and its words (a trailing `# comment` and a synopsis's `[optional parts]` left out).
fn crosspickle_commands(block: &Block) -> Vec<(usize, String, Vec<String>)> {
    if block.lang != "console" {
        return Vec::new();
    }
    let mut commands = Vec::new();
    let mut lines = block.text.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let Some(command) = line.trim().strip_prefix("$ ") else {
            continue;
        };
        let mut command = command.to_string();
        while command.ends_with('\\') {
            command.pop();
            match lines.next() {
                Some((_, more)) => command.push_str(more),
                None => break,
            }
        }
        let Some(words) = shlex::split(&command) else {
            continue;
        };
        // Up to a comment, or to the optional parts of a synopsis (`[-j 2]`).
        let words: Vec<String> = words
            .into_iter()
            .take_while(|w| !w.starts_with('#') && !w.starts_with('['))
            .collect();
        if words.first().is_some_and(|w| w == "crosspickle") {
            commands.push((block.line + 1 + i, command, words));
        }
    }
    commands
}

trial!(every_command_shown_parses);
/// Every `$ crosspickle …` line of README.md, CONTRIBUTING.md and docs/*.md is one the binary
/// takes: its words, `--help` added, are parsed by the binary itself (an unknown command or
/// flag, a value it refuses, fails), so that no document shows an option that is gone.
fn every_command_shown_parses() -> TestResult {
    let blocks = all_blocks()?;
    let mut problems = Vec::new();
    let mut count = 0;
    for block in &blocks {
        for (line, command, words) in crosspickle_commands(block) {
            count += 1;
            let dir = folder(&[]);
            let out = Run::from(
                crosspickle(dir.path())
                    .args(&words[1..])
                    .arg("--help")
                    .output()?,
            );
            if out.code != 0 {
                problems.push(format!(
                    "{}:{line}: `{command}` is refused:\n{}",
                    block.file, out.stderr
                ));
            }
        }
    }
    check(count >= 30, format!("only {count} commands found"))?;
    check(problems.is_empty(), problems.join("\n"))
}

trial!(the_readme_runs_as_written, needs = &["2.7", "3.7", "3.12"]);
/// README.md followed by a reader, in a folder of their own on a machine of three interpreters
/// (2.7, 3.7, 3.12): each `$ crosspickle …` line runs in order with the binary under test on
/// PATH, the case of "Your first case" is written where it says before its command, and each
/// must exit 0 within a minute. The whole corpus (`run --corpus` with no selection), which
/// installs packages from an index, is only parsed here: CI runs it on every interpreter.
fn the_readme_runs_as_written() -> TestResult {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("README.md"))?;
    let dir = folder(&[]);
    let mut toml = String::from(
        "[discovery]\npath = false\npyenv = false\nuv = false\nconda = false\n\n[pythons]\n",
    );
    for need in ["2.7", "3.7", "3.12"] {
        let p = python(need).ok_or("a trial's interpreter")?;
        toml.push_str(&format!(
            "py{} = {:?}\n",
            need.replace('.', ""),
            path_str(&p)
        ));
    }
    std::fs::write(dir.path().join("pythons.toml"), toml)?;
    let bin_dir = bin().parent().ok_or("the binary's folder")?.to_path_buf();
    let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))?;
    let (mut ran, mut parsed) = (0, 0);
    let mut said = Vec::new();
    for block in fenced_blocks("README.md", &text) {
        if let Ok(Kind::Case(path)) = classify(&block) {
            let to = dir.path().join(&path);
            std::fs::create_dir_all(to.parent().ok_or("a case's folder")?)?;
            std::fs::write(&to, &block.text)?;
            continue;
        }
        for (line, command, words) in crosspickle_commands(&block) {
            let whole_corpus = words[1..] == ["run", "--corpus"];
            let start = std::time::Instant::now();
            let mut cmd = if whole_corpus {
                let mut c = crosspickle(dir.path());
                c.args(&words[1..]).arg("--help");
                c
            } else {
                let mut c = std::process::Command::new("bash");
                c.args(["-c", &command]).current_dir(dir.path());
                c
            };
            // The tests' environment (crosspickle()'s), but the binary found on PATH.
            let out = Run::from(
                cmd.env("PATH", &path)
                    .env("CROSSPICKLE_CACHE_DIR", dir.path().join(".cache"))
                    .env_remove("CI")
                    .env_remove("GITHUB_ACTIONS")
                    .env_remove("CROSSPICKLE_PYTHONS_TOML")
                    .env("NO_COLOR", "1")
                    .output()?,
            );
            let took = start.elapsed();
            if whole_corpus {
                parsed += 1;
            } else {
                ran += 1;
            }
            said.push(format!(
                "README.md:{line}: {command}: {:.1}s",
                took.as_secs_f64()
            ));
            check(
                out.code == 0,
                format!(
                    "README.md:{line}: `{command}` exited {}\n{}\n{}",
                    out.code, out.stdout, out.stderr
                ),
            )?;
            check(
                took.as_secs() < 60,
                format!("README.md:{line}: `{command}` took {took:?}"),
            )?;
        }
    }
    eprintln!("{}", said.join("\n"));
    check(
        ran >= 8 && parsed == 1,
        format!("{ran} commands run, {parsed} parsed: {said:?}"),
    )?;
    // What the reader was told they would get.
    let cases = dir.path().join("cases");
    check(
        cases.join("example.yaml").is_file() && cases.join("protocol-5.yaml").is_file(),
        "init's example or the first case is missing",
    )?;
    for file in [
        "results.json",
        "junit.xml",
        "report.html",
        "summary.md",
        "shard-1.json",
        "shard-2.json",
    ] {
        check(
            dir.path().join(file).is_file(),
            format!("README's CI commands wrote no {file}"),
        )?;
    }
    Ok(())
}

/// docs/cli.md's `--help` blocks: the first line `$ crosspickle … --help`, then its output.
fn help_blocks(text: &str) -> Vec<(usize, Vec<String>, String)> {
    fenced_blocks("docs/cli.md", text)
        .into_iter()
        .filter(|b| b.lang == "text" && b.first_line().ends_with("--help"))
        .filter_map(|b| {
            let command = b.first_line().strip_prefix("$ crosspickle")?.to_string();
            let words = shlex::split(&command)?;
            let output = b.text.split_once('\n').map_or("", |(_, o)| o).to_string();
            Some((b.line, words, output))
        })
        .collect()
}

/// What the binary prints for `crosspickle WORDS` at 100 columns, with no environment variable
/// of its own set (clap shows their values).
fn help_of(words: &[String]) -> Result<String, Box<dyn std::error::Error>> {
    let dir = folder(&[]);
    let out = crosspickle(dir.path())
        .args(words)
        .env("COLUMNS", "100")
        .env_remove("CROSSPICKLE_CACHE_DIR")
        .env_remove("CROSSPICKLE_DOWNLOAD_PYTHON")
        .env_remove("CROSSPICKLE_PYTHONS_TOML")
        .output()?;
    if !out.status.success() {
        return Err(format!("crosspickle {words:?} failed").into());
    }
    Ok(String::from_utf8(out.stdout)?)
}

trial!(cli_md_is_the_help);
/// docs/cli.md's `--help` blocks are what the binary prints, command by command, and every
/// command has one. `CROSSPICKLE_UPDATE_DOCS=1` rewrites them instead of failing.
fn cli_md_is_the_help() -> TestResult {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("docs/cli.md");
    let text = std::fs::read_to_string(&path)?;
    let blocks = help_blocks(&text);
    let update = std::env::var_os("CROSSPICKLE_UPDATE_DOCS").is_some_and(|v| v == "1");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut stale = Vec::new();
    // From the last block up, so that the lines of the earlier ones stay where they are.
    for (line, words, output) in blocks.iter().rev() {
        let help = help_of(words)?;
        if &help != output {
            stale.push(format!(
                "docs/cli.md:{line}: crosspickle {}",
                words.join(" ")
            ));
            let end = (*line..lines.len())
                .find(|i| lines[*i].trim() == "```")
                .ok_or("an unclosed block")?;
            lines.splice(*line + 1..end, help.lines().map(str::to_string));
        }
    }
    if update && !stale.is_empty() {
        std::fs::write(&path, lines.join("\n") + "\n")?;
        return Ok(());
    }
    check(
        stale.is_empty(),
        format!(
            "--help differs from docs/cli.md (CROSSPICKLE_UPDATE_DOCS=1 cargo test --test e2e -- docs::cli_md_is_the_help rewrites it):\n{}",
            stale.join("\n")
        ),
    )?;
    // Every command of `crosspickle --help` has its block.
    let top = help_of(&["--help".to_string()])?;
    let commands: Vec<&str> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("    "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    check(commands.len() >= 10, format!("commands: {commands:?}"))?;
    for c in commands {
        check(
            blocks
                .iter()
                .any(|(_, w, _)| w.first().is_some_and(|f| f == c)),
            format!("docs/cli.md has no `crosspickle {c} --help` block"),
        )?;
    }
    Ok(())
}

trial!(relative_links_lead_somewhere);
/// Every relative link of README.md, CONTRIBUTING.md and docs/*.md names a file or folder of
/// the repository (a `#fragment` of another Markdown file names one of its headings).
fn relative_links_lead_somewhere() -> TestResult {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut problems = Vec::new();
    let mut count = 0;
    for file in markdown_files()? {
        let text = std::fs::read_to_string(&file)?;
        let base = file.parent().ok_or("a file's folder")?;
        let name = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        let fenced: BTreeSet<usize> = fenced_blocks(&name, &text)
            .iter()
            .flat_map(|b| b.line..=b.line + b.text.lines().count() + 1)
            .collect();
        for (i, line) in text.lines().enumerate() {
            if fenced.contains(&(i + 1)) {
                continue;
            }
            let mut rest = line;
            while let Some(at) = rest.find("](") {
                rest = &rest[at + 2..];
                let Some(end) = rest.find(')') else { break };
                let target = &rest[..end];
                rest = &rest[end..];
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (target_path, fragment) = target.split_once('#').unwrap_or((target, ""));
                let resolved = if target_path.is_empty() {
                    file.clone()
                } else {
                    base.join(target_path)
                };
                count += 1;
                if !resolved.exists() {
                    problems.push(format!("{name}:{}: `{target}` does not exist", i + 1));
                    continue;
                }
                if !fragment.is_empty() && resolved.extension().is_some_and(|e| e == "md") {
                    let other = std::fs::read_to_string(&resolved)?;
                    if !anchors(&other).contains(fragment) {
                        problems.push(format!(
                            "{name}:{}: `{target}`: no heading makes `#{fragment}`",
                            i + 1
                        ));
                    }
                }
            }
        }
    }
    check(count >= 50, format!("only {count} relative links found"))?;
    check(problems.is_empty(), problems.join("\n"))
}

/// The anchors GitHub makes of a Markdown file's headings: lowercased, punctuation but `-` and
/// `_` dropped, spaces made `-`.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut fence = false;
    let mut found = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
        }
        if fence || !line.starts_with('#') {
            continue;
        }
        let heading = line.trim_start_matches('#').trim();
        let anchor: String = heading
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        found.insert(anchor);
    }
    found
}
