//! Nothing crosspickle prints while GitHub reads it is a workflow command but its own: with
//! `GITHUB_ACTIONS=true`, whatever `--github-annotations` says, what cases print, raise and hold
//! in params, what a requirement says, what a JSON file or a file's name holds reaches stdout
//! and stderr inside the stop-commands guard or neutralised, on every command (`run` with `-v`,
//! its progress notes and tooling-failure line, `merge`, `list`, `bisect`, `explore`'s errors,
//! clap's). Read by [`commands`], built from the runner's documented rules, one stream at a
//! time (GitHub reads stdout and stderr through separate pipes, in no promised order).

use crate::support::*;

/// A workflow command as GitHub's runner would read it from one stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    pub name: String,
    pub line: String,
}

/// Every workflow command in `stream`, by the runner's documented rules: a line is a command
/// when, after leading whitespace, it starts with `::name` and holds a further `::`, or when it
/// holds `##[name]` anywhere (the legacy syntax); `::stop-commands::TOKEN` suspends both until a
/// line `::TOKEN::`.
pub fn commands(stream: &str) -> Vec<Command> {
    let mut found = Vec::new();
    let mut stopped: Option<String> = None;
    for line in stream.lines() {
        let v2 = line.trim_start().strip_prefix("::").and_then(|rest| {
            let (head, _) = rest.split_once("::")?;
            let name = head.split(' ').next().unwrap_or("");
            (!name.is_empty()).then(|| name.to_string())
        });
        if let Some(token) = &stopped {
            if v2.as_deref() == Some(token.as_str()) {
                stopped = None;
                found.push(Command {
                    name: "(resume)".into(),
                    line: line.into(),
                });
            }
            continue;
        }
        let v1 = line.find("##[").and_then(|at| {
            let rest = &line[at + 3..];
            let end = rest.find(']')?;
            let name = rest[..end].split(' ').next().unwrap_or("");
            (!name.is_empty()).then(|| name.to_string())
        });
        if let Some(name) = v2 {
            if name == "stop-commands" {
                let rest = line
                    .trim_start()
                    .strip_prefix("::stop-commands")
                    .unwrap_or("");
                let token = rest.split_once("::").map(|(_, t)| t).unwrap_or("");
                stopped = Some(token.to_string());
            }
            found.push(Command {
                name,
                line: line.into(),
            });
        } else if let Some(name) = v1 {
            found.push(Command {
                name,
                line: line.into(),
            });
        }
    }
    found
}

/// The commands of `stream` that are not crosspickle's own: its guard (a token it made) and its
/// annotations (titled `crosspickle: …`).
fn forged(stream: &str) -> Vec<Command> {
    commands(stream)
        .into_iter()
        .filter(|c| {
            let own_guard =
                c.name == "stop-commands" && c.line.starts_with("::stop-commands::crosspickle-");
            let own_resume = c.name == "(resume)" && c.line.starts_with("::crosspickle-");
            let own_annotation = matches!(c.name.as_str(), "error" | "notice")
                && c.line.starts_with(&format!("::{} ", c.name))
                && c.line.contains("title=crosspickle%3A ");
            !(own_guard || own_resume || own_annotation)
        })
        .collect()
}

/// `run` under GitHub: no forged command on either stream, and what was forged is still shown
/// (the zero-width break aside).
fn no_forgery(what: &str, run: &Run, shown: &[&str]) -> TestResult {
    let (out, err) = (forged(&run.stdout), forged(&run.stderr));
    check(
        out.is_empty() && err.is_empty(),
        format!(
            "{what}: forged on stdout {out:#?}, on stderr {err:#?}\n--- stdout\n{}\n--- stderr\n{}",
            run.stdout, run.stderr
        ),
    )?;
    let both = format!("{}{}", run.stdout, run.stderr).replace('\u{200b}', "");
    for s in shown {
        check(both.contains(s), format!("{what}: {s:?} not shown\n{both}"))?;
    }
    Ok(())
}

const HOSTILE: &str = r###"title: "##[error]forged by a title"
tags: [hostile]
params:
  p: ["::error::forged by a param", "##[warning]forged by a param"]
code: |
  import sys
  print("::error file=forged.py,line=1::forged on stdout")
  print("  ::add-mask::secret")
  sys.stderr.write("##[error]legacy on stderr\n::stop-commands::case-token\n")
  raise ValueError("##[stop-commands]x\n::error::forged by the message")
"###;

const NEEDS: &str = r###"title: a requirement whose marker holds a command
tags: [hostile]
requires:
  - 'six; python_version != "##[error]forged by a marker"'
code: |
  import six
"###;

fn github(dir: &std::path::Path, args: &[&str]) -> Run {
    Run::from(
        crosspickle(dir)
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_WORKSPACE", dir)
            .args(args)
            .output()
            .expect("crosspickle runs"),
    )
}

// The reader itself: it finds what GitHub would act on, and the guard stops it.
trial!(the_reader_reads_as_the_runner_does);
fn the_reader_reads_as_the_runner_does() -> TestResult {
    let names = |s: &str| -> Vec<String> { commands(s).into_iter().map(|c| c.name).collect() };
    check(
        names("  ::error file=a::x\nsay ##[warning]y\n::add-mask::z\nno :: here\n")
            == ["error", "warning", "add-mask"],
        "both syntaxes",
    )?;
    check(
        names("::stop-commands::t\n::error::x\n##[error]y\n::t::\n::notice::z\n")
            == ["stop-commands", "(resume)", "notice"],
        "the guard",
    )
}

trial!(
    run_merge_and_list_print_no_forged_command,
    needs = &["3.12"]
);
fn run_merge_and_list_print_no_forged_command() -> TestResult {
    let dir = folder(&[
        ("cases/hostile.yaml", HOSTILE),
        ("cases/needs.yaml", NEEDS),
        ("wheels/.keep", ""),
    ]);
    let mut args: Vec<String> = ["run", "cases", "-v", "--offline", "--find-links", "wheels"]
        .map(String::from)
        .into();
    args.extend(python_args(&["3.12"]));
    args.extend(["--json", "r.json", "--github-annotations", "never"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = github(dir.path(), &args);
    // The environment cannot be made offline: a tooling failure, its line on stderr.
    run.expect_code(3)?;
    no_forgery(
        "run -v, annotations never",
        &run,
        &[
            "::error file=forged.py,line=1::forged on stdout",
            "##[error]legacy on stderr",
            "forged by the message",
            "forged by a marker",
            "could not be set up",
        ],
    )?;
    // As the shipped shards workflow merges: annotations off, details printed.
    let merged = github(
        dir.path(),
        &["merge", "r.json", "--github-annotations", "never"],
    );
    merged.expect_code(3)?;
    no_forgery(
        "merge, annotations never",
        &merged,
        &["forged on stdout", "forged by the message"],
    )?;
    let annotated = github(dir.path(), &["merge", "r.json"]);
    annotated.expect_code(3)?;
    no_forgery("merge, annotations auto", &annotated, &["forged on stdout"])?;
    check(
        commands(&annotated.stdout)
            .iter()
            .any(|c| c.name == "error" && c.line.contains("hostile")),
        format!(
            "crosspickle's own annotations still reach GitHub\n{}",
            annotated.stdout
        ),
    )?;
    let list = github(
        dir.path(),
        &["list", "cases", "--pythons-toml", "/dev/null"],
    );
    list.expect_code(0)?;
    no_forgery("list", &list, &["forged by a title"])?;
    // A JSON file's text and a file's name in merge's errors.
    std::fs::write(
        dir.path()
            .join("bad\n::error::forged by a name ##[error]x.json"),
        "{\"format\": \"##[error]forged by a JSON file\"\n",
    )?;
    let bad = github(
        dir.path(),
        &[
            "merge",
            "r.json",
            "bad\n::error::forged by a name ##[error]x.json",
        ],
    );
    bad.expect_code(2)?;
    no_forgery("merge of a bad file", &bad, &["forged by a name"])?;
    // clap's own errors quote the arguments a workflow passes.
    let clap = github(
        dir.path(),
        &["run", "--jobs", "\n::error::forged by an argument"],
    );
    clap.expect_code(2)?;
    no_forgery("clap's error", &clap, &["forged by an argument"])
}

trial!(
    bisect_and_explore_print_no_forged_command,
    needs = &["3.11", "3.12"]
);
fn bisect_and_explore_print_no_forged_command() -> TestResult {
    let dir = folder(&[("cases/hostile.yaml", HOSTILE)]);
    let mut args: Vec<String> = [
        "bisect",
        "hostile",
        "cases",
        "--params",
        "p=##[warning]forged by a param",
    ]
    .map(String::from)
    .into();
    args.extend(python_args(&["3.11", "3.12"]));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let bisect = github(dir.path(), &args);
    no_forgery(
        "bisect",
        &bisect,
        &["##[stop-commands]x", "##[warning]forged by a param"],
    )?;
    std::fs::write(
        dir.path()
            .join("b\n::error::forged by a name ##[error].json"),
        "not JSON",
    )?;
    let mut args: Vec<String> = [
        "explore",
        "--baseline",
        "b\n::error::forged by a name ##[error].json",
    ]
    .map(String::from)
    .into();
    args.extend(python_args(&["3.12"]));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let explore = github(dir.path(), &args);
    explore.expect_code(2)?;
    no_forgery("explore's error", &explore, &["forged by a name"])
}
