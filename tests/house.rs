//! The house's own rules, read from its sources: every `crate::` path of `src/` obeys the
//! layer order that `src/lib.rs` states (no import runs upward or sideways), `case/load.rs`
//! does not import the facade `case/mod.rs`, and every `src/…`, `tests/…` and `docs/…` path
//! that `docs/architecture.md` names exists, and no code of `src/` is compiled out of the test
//! build.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The layers as `src/lib.rs`'s doc comment states them, bottom to top: the sentence after
/// "The layers, bottom to top", its groups separated by `;` or `, then`, each group's modules
/// named as [`name`] or [`name`](mod@name).
fn layers(lib: &str) -> Vec<Vec<String>> {
    let doc: String = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.trim())
        .collect::<Vec<_>>()
        .join(" ");
    let start = doc
        .find("The layers, bottom to top")
        .expect("src/lib.rs states the layers");
    let rest = &doc[start..];
    let rest = &rest[rest.find(':').unwrap() + 1..];
    let end = rest.find("main.rs").expect("the layers end with main.rs");
    rest[..end]
        .replace(", then", ";")
        .split(';')
        .map(|group| {
            group
                .split("[`")
                .skip(1)
                .map(|s| s[..s.find('`').unwrap()].to_string())
                .collect::<Vec<_>>()
        })
        .filter(|g| !g.is_empty())
        .collect()
}

/// The top-level module a file of `src/` belongs to (`src/case/load.rs`: `case`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// The modules a source names through `crate::NAME`, outside comments (`$crate` excluded),
/// with the line of each.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let code = code.split(" //").next().unwrap();
        let mut from = 0;
        while let Some(i) = code[from..].find("crate::") {
            let at = from + i;
            from = at + "crate::".len();
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c == '$' || c.is_alphanumeric() || c == '_') {
                continue;
            }
            let name: String = code[from..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push((n + 1, name));
            }
        }
    }
    out
}

#[test]
fn every_import_obeys_the_layer_order_of_lib_rs() {
    let src = root().join("src");
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let layers = layers(&lib);
    let layer: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(i, g)| g.iter().map(move |m| (m.as_str(), i)))
        .collect();
    // Every module lib.rs declares has its layer.
    for line in lib.lines() {
        if let Some(m) = line.strip_prefix("pub mod ") {
            let m = m.trim_end_matches(';');
            assert!(
                layer.contains_key(m),
                "src/lib.rs declares `{m}` but its layer sentence does not place it: {layers:?}"
            );
        }
    }
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let module = module_of(&src, file);
        let Some(&own) = layer.get(module.as_str()) else {
            continue; // lib.rs and main.rs, the top
        };
        let text = fs::read_to_string(file).unwrap();
        for (line, used) in crate_paths(&text) {
            if used == module {
                continue;
            }
            match layer.get(used.as_str()) {
                Some(&theirs) if theirs < own => {}
                _ => wrong.push(format!(
                    "{}:{line}: `{module}` (layer {}) imports `{used}` (layer {}): a module imports only from layers below it",
                    file.strip_prefix(root()).unwrap().display(),
                    own + 1,
                    layer.get(used.as_str()).map_or("none".into(), |l| (l + 1).to_string()),
                )),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_layer_sentence_is_read_as_written() {
    let layers = layers("//! The layers, bottom to top (x): [`sys`] and [`errors`]; [`python`], then [`case`] and [`explore`]; [`env`](mod@env); `main.rs`.");
    assert_eq!(
        layers,
        [
            vec!["sys", "errors"],
            vec!["python"],
            vec!["case", "explore"],
            vec!["env"]
        ]
    );
    let paths = crate_paths(
        "use crate::case::Case;\n// crate::cli\n$crate::sys::x\nlet a = crate::report::text::count(1); // crate::bisect\n",
    );
    assert_eq!(paths, [(1, "case".into()), (4, "report".into())]);
}

#[test]
fn case_load_does_not_import_its_facade() {
    let load = fs::read_to_string(root().join("src/case/load.rs")).unwrap();
    for (n, line) in load.lines().enumerate() {
        let code = line.trim();
        assert!(
            !(code.starts_with("use super::{") || code.starts_with("use crate::case::")),
            "src/case/load.rs:{}: `{code}` imports case/mod.rs; import the file that holds it",
            n + 1
        );
    }
}

#[test]
fn every_path_architecture_md_names_exists() {
    let text = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let mut missing = Vec::new();
    let mut checked = 0;
    for (n, line) in text.lines().enumerate() {
        for quoted in line.split('`').skip(1).step_by(2) {
            let path = quoted.trim_end_matches(['.', ',', ':', ')']);
            if path.contains(' ') || !path.contains('/') || path.contains("NAME") {
                continue;
            }
            // `src/…`, `tests/…`, `docs/…` from the root; `cli/rules.rs` from `src/`.
            let full = if ["src/", "tests/", "docs/"]
                .iter()
                .any(|p| path.starts_with(p))
            {
                root().join(path)
            } else if path.ends_with(".rs") || path.ends_with(".py") {
                root().join("src").join(path)
            } else {
                continue;
            };
            checked += 1;
            if !full.exists() {
                missing.push(format!("docs/architecture.md:{}: `{path}`", n + 1));
            }
        }
    }
    assert!(
        checked > 30,
        "only {checked} paths read: the test reads nothing"
    );
    assert!(
        missing.is_empty(),
        "paths named that do not exist:\n{}",
        missing.join("\n")
    );
}

/// `.ci/cross-check.sh` type-checks each foreign target once, with the test profile, which
/// sees every item of the normal build only while no code is compiled out of the test build.
#[test]
fn no_code_is_left_out_of_the_test_build() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut found = Vec::new();
    for file in files {
        let text = fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let squeezed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            if squeezed.contains("not(test)") {
                found.push(format!("{}:{}", file.display(), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "code compiled out of the test build, which .ci/cross-check.sh's one pass per target \
         would not type-check (check it with a pass without --profile test): {found:?}"
    );
}
