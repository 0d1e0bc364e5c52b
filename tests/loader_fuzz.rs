//! The case loader against mutations of the corpus's own files: truncations, type swaps, deep
//! nesting, alias bombs, odd scalars, random patterns for `match`. Whatever the text, loading
//! never panics, never takes a second, and every error names a line and a column within the
//! file. Bounded: a fixed number of cases per property, a few seconds in all.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crosspickle::case::{compile_match, parse_case};

/// Every case file of the corpus: (path, text).
fn corpus() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.path());
        for e in entries {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "yaml") {
                out.push((p.clone(), std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("cases"),
        &mut out,
    );
    assert!(out.len() > 50, "the corpus is there");
    out
}

/// Scalars and fragments that YAML, serde or the loader might trip on.
const ODD: &[&str] = &[
    "[]",
    "{}",
    "~",
    "null",
    ".nan",
    "-.inf",
    ".inf",
    "0x",
    "0x1F",
    "-0o17",
    "0b102",
    "1e400",
    "-0.0",
    "18446744073709551616",
    "-1267650600228229401496703205376",
    "012",
    "1_000",
    "\"",
    "'",
    "\"\\u0000\"",
    "!!binary aGVsbG8=",
    "!!int x",
    "!!float 1",
    "!!str 5",
    "!custom x",
    "&a x",
    "*a",
    "*nope",
    "- x",
    "|",
    ">",
    "? x",
    "@",
    "%",
    "\t",
    "`",
    "[[[[",
    "{a: [}",
    "3.10",
    "3",
    "\">=3.8,<3.8.2\"",
    "\"<<>>\"",
    "\"3.99999999999999999999999\"",
    "yes",
    "True",
    "\"(?P<x>a)(?P=x)\"",
    "\"a**\"",
    "\"\\\\N{X}\"",
    "\"(?<=a+)\"",
    "\"{'a': 1}\"",
    "x\u{feff}",
    "\u{1F600}",
    "\"\\ud800\"",
    "1e20",
    "-1",
    "0",
    "SIGFOO",
    "[1, [2]]",
    "{x: 1}",
    "&b [*b]",
    "!!null ''",
    "<<: *a",
];

fn check_load(path: &Path, text: &str) -> Result<(), TestCaseError> {
    let start = Instant::now();
    let result = parse_case(path, text);
    let took = start.elapsed();
    prop_assert!(
        took < Duration::from_secs(1),
        "{} took {took:?} to load",
        path.display()
    );
    if let Err(errors) = result {
        prop_assert!(!errors.is_empty());
        let lines = text.lines().count().max(1) + 1;
        for e in errors {
            let Some((line, col)) = e.location else {
                return Err(TestCaseError::fail(format!("no line in: {e}")));
            };
            prop_assert!(
                line >= 1 && line <= lines && col >= 1,
                "{e}: line {line} of {lines}"
            );
        }
    }
    Ok(())
}

/// A char boundary at or below `i`.
fn floor(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    /// Replace the value of a `key: value` line with an odd scalar.
    Swap(usize, usize),
    /// Insert `depth` nested flow sequences (or mappings) at a value.
    Nest(usize, usize, bool),
    /// Replace a line with arbitrary text.
    Line(usize, String),
    /// Delete or repeat a line.
    Drop(usize),
    Repeat(usize),
    /// Append an alias bomb under a real key.
    Bomb(usize),
    /// Re-indent a line.
    Indent(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), 0..ODD.len()).prop_map(|(l, o)| Mutation::Swap(l, o)),
        (
            any::<usize>(),
            prop_oneof![1..40usize, 1000..100_000usize],
            any::<bool>()
        )
            .prop_map(|(l, d, m)| Mutation::Nest(l, d, m)),
        (any::<usize>(), "\\PC{0,40}").prop_map(|(l, s)| Mutation::Line(l, s)),
        any::<usize>().prop_map(Mutation::Drop),
        any::<usize>().prop_map(Mutation::Repeat),
        (3..12usize).prop_map(Mutation::Bomb),
        (any::<usize>(), 0..9usize).prop_map(|(l, n)| Mutation::Indent(l, n)),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    if lines.is_empty() {
        lines.push(String::new());
    }
    let n = lines.len();
    match m {
        Mutation::Truncate(at) => return text[..floor(text, at % (text.len() + 1))].to_string(),
        Mutation::Swap(l, o) => {
            // The first `key: value` line at or after l.
            let start = l % n;
            if let Some(i) = (start..n)
                .chain(0..start)
                .find(|&i| lines[i].contains(": "))
            {
                let key = lines[i].split(": ").next().unwrap().to_string();
                lines[i] = format!("{key}: {}", ODD[*o]);
            }
        }
        Mutation::Nest(l, depth, map) => {
            let i = l % n;
            let (open, close) = if *map { ("{a: ", "}") } else { ("[", "]") };
            let key = lines[i].split(": ").next().unwrap_or("x").to_string();
            lines[i] = format!("{key}: {}1{}", open.repeat(*depth), close.repeat(*depth));
        }
        Mutation::Line(l, s) => lines[l % n] = s.clone(),
        Mutation::Drop(l) => {
            lines.remove(l % n);
        }
        Mutation::Repeat(l) => {
            let line = lines[l % n].clone();
            lines.insert(l % n, line);
        }
        Mutation::Bomb(levels) => {
            let mut bomb = String::from("[&a0 [x, x, x, x, x, x, x, x, x, x]");
            for i in 1..*levels {
                bomb.push_str(&format!(
                    ", &a{i} [{}]",
                    vec![format!("*a{}", i - 1); 10].join(", ")
                ));
            }
            bomb.push(']');
            lines.push(format!("tags: {bomb}"));
        }
        Mutation::Indent(l, k) => {
            let i = l % n;
            lines[i] = format!("{}{}", " ".repeat(*k), lines[i].trim_start());
        }
    }
    lines.join("\n") + "\n"
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

#[test]
fn the_corpus_loads_as_it_is() {
    for (path, text) in corpus() {
        if let Err(e) = parse_case(&path, &text) {
            panic!("{}: {e:?}", path.display());
        }
    }
}

#[test]
fn mutated_corpus_files_load_or_fail_cleanly() {
    let corpus = corpus();
    let start = Instant::now();
    runner(1500)
        .run(
            &(0..corpus.len(), proptest::collection::vec(mutation(), 1..4)),
            |(i, mutations)| {
                let (path, text) = &corpus[i];
                let mut text = text.clone();
                for m in &mutations {
                    text = apply(&text, m);
                }
                check_load(path, &text)
            },
        )
        .unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{:?}",
        start.elapsed()
    );
}

/// Inputs the random search found once, kept so that every run tries them.
#[test]
fn inputs_found_before_load_or_fail_cleanly() {
    for text in [
        "A:\u{2028}a",       // libyaml ends a line at U+2028; an editor does not
        "a: 1\u{85}b: [",    // likewise U+0085 (NEL)
        "x: \u{2029}\n  - ", // and U+2029
    ] {
        check_load(Path::new("cases/x.yaml"), text).unwrap();
    }
}

#[test]
fn arbitrary_text_loads_or_fails_cleanly() {
    runner(500)
        .run(&"\\PC{0,300}", |text| {
            check_load(Path::new("cases/x.yaml"), &text)
        })
        .unwrap();
}

#[test]
fn arbitrary_match_patterns_compile_or_are_refused() {
    let start = Instant::now();
    runner(3000)
        .run(
            &r"[()\[\]{}*+?|^$\\.a-dPNxuU0-9<>=!#:,'\- \n]{0,24}",
            |pattern| {
                let t = Instant::now();
                let compiled = compile_match(&pattern);
                if let Ok(re) = &compiled {
                    // Matching is bounded too (a backtracking limit, never a hang).
                    let _ = re.is_match(&"ab{c}\n".repeat(200));
                }
                prop_assert!(
                    t.elapsed() < Duration::from_secs(1),
                    "{pattern:?}: {:?}",
                    t.elapsed()
                );
                Ok(())
            },
        )
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(60));
}
