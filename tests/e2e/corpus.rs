//! The shipped corpus: it loads, its catalogue in docs/corpus.md is current, and `list` works.

use std::path::Path;

use libtest_mimic::Trial;

use crate::support::*;

pub fn trials() -> Vec<Trial> {
    vec![Trial::test(
        "corpus::catalogue_is_current",
        catalogue_is_current,
    )]
}

fn catalogue_is_current() -> TestResult {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Run::from(
        crosspickle(root)
            .args(["list", "--markdown"])
            .output()
            .unwrap(),
    );
    out.expect_code(0)?;
    let committed = std::fs::read_to_string(root.join("docs/corpus.md")).unwrap_or_default();
    check(
        committed == out.stdout,
        "docs/corpus.md is stale: run `cargo run -- list --markdown > docs/corpus.md`",
    )?;
    let count: usize = out.stdout.lines().filter(|l| l.starts_with("| `")).count();
    check(count >= 78, format!("{count} cases in the corpus"))?;
    let text = Run::from(crosspickle(root).args(["list"]).output().unwrap());
    text.expect_code(0)?;
    check(
        text.stdout.contains("reducer-override-cycle")
            && text
                .stdout
                .contains("expect: otherwise python >=3.8.0,<3.8.2, pickler=c: fail"),
        &text.stdout,
    )
}
