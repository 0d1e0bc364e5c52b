//! `crosspickle list`: the catalogue of cases (id, title, tags, links, the interpreters each
//! applies to and what its rules expect where, first match winning), as text or as Markdown
//! (`docs/corpus.md`), for the cases `-k` and `--tag` select.

use super::args::ListArgs;
use super::failure::{Failure, EXIT_OK};
use super::rules::{describe_outcome, selectors};
use super::settings::{Given, Settings};
use crate::case::{Case, Expected, InterpreterSelector, Params, Rule, VersionRequests};
use crate::errors::Error;
use crate::report::text;
use crate::select::Keyword;

/// What a case's rules mean, one line per rule that decides some run, in order: where it
/// decides (its selectors, the params left to it by earlier rules, `otherwise` when an earlier
/// rule may decide some of the same runs first) and what it expects; then the implicit `pass`
/// where it applies. First match wins, so a catch-all after other rules is `otherwise`, never
/// `everywhere`; `pass` and `skip` rules are shown like the others.
pub fn summary(case: &Case) -> Vec<String> {
    let combos = case.param_combinations();
    let default_pass = Rule {
        on: Default::default(),
        dump: Default::default(),
        load: Default::default(),
        relations: Default::default(),
        where_: Default::default(),
        phase: None,
        expected: Expected::default_pass(),
    };
    let rules: Vec<&Rule> = case
        .expect
        .iter()
        .chain(std::iter::once(&default_pass))
        .collect();
    let mut lines = Vec::new();
    for (i, &rule) in rules.iter().enumerate() {
        let implicit = i == case.expect.len();
        let earlier = &rules[..i];
        // The params left to this rule: those no earlier rule takes whenever this one holds.
        let left: Vec<usize> = (0..combos.len())
            .filter(|&c| rule.selects_params(&combos[c]))
            .filter(|&c| {
                !earlier
                    .iter()
                    .any(|e| implied_by(e, rule) && e.selects_params(&combos[c]))
            })
            .collect();
        if left.is_empty() {
            if !implicit {
                lines.push(format!(
                    "{}: never chosen (earlier rules decide every run it selects)",
                    describe_outcome(&rule.expected)
                ));
            }
            continue;
        }
        let earlier_may_decide = earlier.iter().any(|e| {
            !implied_by(e, rule)
                && !excludes(e, rule)
                && left.iter().any(|&c| e.selects_params(&combos[c]))
        });
        let mut scope = selectors(rule);
        if left.len() < combos.len() {
            scope.push(params_text(case, &combos, &left));
        }
        let scope = match (earlier_may_decide, scope.is_empty()) {
            (true, true) => "otherwise".to_string(),
            (true, false) => format!("otherwise {}", scope.join(", ")),
            (false, true) => "everywhere".to_string(),
            (false, false) => scope.join(", "),
        };
        lines.push(format!("{scope}: {}", describe_outcome(&rule.expected)));
    }
    lines
}

/// Whether `earlier`'s selectors other than `where` hold wherever `rule`'s do (each one it
/// has, `rule` has too, the same or narrower): then `earlier` decides every run of its params
/// that `rule` would select.
fn implied_by(earlier: &Rule, rule: &Rule) -> bool {
    let side = |e: &InterpreterSelector, r: &InterpreterSelector| {
        let same = |a: &Option<VersionRequests>, b: &Option<VersionRequests>| match (a, b) {
            (None, _) => true,
            (Some(a), Some(b)) => a.to_string() == b.to_string(),
            (Some(_), None) => false,
        };
        same(&e.python, &r.python)
            && same(&e.implementation_version, &r.implementation_version)
            && (e.implementation.is_empty()
                || (!r.implementation.is_empty()
                    && r.implementation
                        .iter()
                        .all(|i| e.implementation.contains(i))))
            && (e.platform.is_empty()
                || (!r.platform.is_empty() && r.platform.iter().all(|p| e.platform.contains(p))))
            && e.features.as_ref().is_none_or(|ef| {
                let asked = r.features.as_ref().map(|f| f.asked()).unwrap_or_default();
                ef.asked().iter().all(|f| asked.contains(f))
            })
    };
    side(&earlier.on, &rule.on)
        && side(&earlier.dump, &rule.dump)
        && side(&earlier.load, &rule.load)
        && (earlier.phase.is_none() || earlier.phase == rule.phase)
        && (earlier.relations.is_empty()
            || earlier.relations.describe() == rule.relations.describe())
}

/// Whether no run can be selected by both rules, as far as their selectors tell without the
/// interpreters: different phases, implementations, or contradicting features.
fn excludes(a: &Rule, b: &Rule) -> bool {
    matches!((a.phase, b.phase), (Some(x), Some(y)) if x != y)
        || a.on.excludes(&b.on)
        || a.dump.excludes(&b.dump)
        || a.load.excludes(&b.load)
}

/// The params combinations `left` (indices into `combos`) in words: `pickler=c`,
/// `protocol=4|5`, `encoding not default`, or the combinations one by one.
fn params_text(case: &Case, combos: &[Params], left: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut product = 1usize;
    for (name, declared) in &case.params {
        let used: Vec<_> = declared
            .iter()
            .filter(|v| left.iter().any(|&c| combos[c].get(name) == Some(*v)))
            .collect();
        product *= used.len();
        if used.len() == declared.len() {
            continue;
        }
        let unused: Vec<String> = declared
            .iter()
            .filter(|v| !used.contains(v))
            .map(|v| v.to_string())
            .collect();
        let used: Vec<String> = used.iter().map(|v| v.to_string()).collect();
        parts.push(if used.len() > 1 && unused.len() < used.len() {
            format!("{name} not {}", unused.join("|"))
        } else {
            format!("{name}={}", used.join("|"))
        });
    }
    if product == left.len() {
        parts.join(", ")
    } else {
        let each: Vec<String> = left.iter().map(|&c| format!("({})", combos[c])).collect();
        each.join(" or ")
    }
}

/// The interpreters a case applies to, in words, if it says.
fn applies_to(case: &Case) -> Option<String> {
    let parts = case.applies_to.describe("");
    (!parts.is_empty()).then(|| parts.join(", "))
}

pub async fn list(args: &ListArgs) -> Result<i32, Failure> {
    let settings = Settings::resolve(Given {
        paths: &args.paths,
        corpus: args.corpus,
        cache_dir: args.pythons.cache_dir.as_deref(),
        probe_timeout: args.pythons.probe_timeout,
        ..Given::default()
    })?;
    let matrix = args.expected || args.json || !args.pythons.python.is_empty();
    if matrix && args.markdown {
        return Err(Error::Usage(
            "--markdown prints the catalogue, not the expected matrix (--expected, --json, --python): give one or the other".into(),
        )
        .into());
    }
    let mut cases = settings.load_cases()?;
    let keyword = args.keyword.as_deref().map(Keyword::parse).transpose()?;
    cases.retain(|c| {
        (args.tags.is_empty() || c.tags.iter().any(|t| args.tags.contains(t)))
            && keyword
                .as_ref()
                .is_none_or(|k| c.param_combinations().iter().any(|p| k.selects(c, p)))
    });
    if cases.is_empty() {
        return Err(Error::Usage(match (&args.keyword, args.tags.is_empty()) {
            (Some(k), true) => format!("-k `{k}` selects no case"),
            (Some(k), false) => format!(
                "-k `{k}` selects no case with the tag {}",
                args.tags.join(" or ")
            ),
            (None, _) => format!("no case has the tag {}", args.tags.join(" or ")),
        })
        .into());
    }
    cases.sort_by(|a, b| a.path.cmp(&b.path));
    if matrix {
        return expected_matrix(args, &settings, cases).await;
    }
    crate::sys::stdout::emit(&if args.markdown {
        render_markdown(&cases)
    } else {
        render_text(&cases)
    });
    Ok(EXIT_OK)
}

/// `list --expected`: what each chosen interpreter (each pair) is expected to show, and the
/// rule that decides it; the interpreters are chosen as `run` chooses them.
async fn expected_matrix(
    args: &ListArgs,
    settings: &Settings,
    cases: Vec<Case>,
) -> Result<i32, Failure> {
    let (interpreters, machine) =
        super::interpreters::for_running_on_machine(&args.pythons, settings, None).await?;
    super::ranges::warn_unmatched(cases.iter(), &machine, true);
    let labels: Vec<String> = interpreters.iter().map(|i| i.label.clone()).collect();
    let cases: Vec<std::sync::Arc<Case>> = cases.into_iter().map(std::sync::Arc::new).collect();
    let recorded = super::record::for_run(args.pickles.as_deref())?;
    let mut matrices = super::expected::matrices(&cases, interpreters, &recorded);
    if let Some(k) = args.keyword.as_deref().map(Keyword::parse).transpose()? {
        // -k selects runs by their params, as `run -k` does.
        for (m, case) in matrices.iter_mut().zip(&cases) {
            m.runs.retain(|r| k.selects(case, &r.params));
        }
    }
    crate::sys::stdout::emit(&if args.json {
        let value = serde_json::json!({"interpreters": labels, "cases": matrices});
        format!(
            "{}\n",
            serde_json::to_string_pretty(&value).expect("JSON of plain data")
        )
    } else {
        super::expected::render_text(&matrices, &labels)
    });
    Ok(EXIT_OK)
}

fn theme(case: &Case) -> String {
    case.path
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn render_text(cases: &[Case]) -> String {
    let mut out = String::new();
    for case in cases {
        out.push_str(&format!("{}  {}\n", case.id, case.title));
        if !case.tags.is_empty() {
            out.push_str(&format!("    tags: {}\n", case.tags.join(", ")));
        }
        if let Some(a) = applies_to(case) {
            out.push_str(&format!("    applies to: {a}\n"));
        }
        for d in summary(case) {
            out.push_str(&format!("    expect: {d}\n"));
        }
        for l in &case.links {
            out.push_str(&format!("    {l}\n"));
        }
    }
    out.push_str(&format!("{}\n", text::count(cases.len(), "case", "cases")));
    out
}

fn md_escape(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn render_markdown(cases: &[Case]) -> String {
    let mut out = String::from(
        "# The crosspickle corpus\n\nGenerated by `crosspickle list --markdown > docs/corpus.md`; do not edit by hand.\n\n",
    );
    out.push_str(&format!("{}. \"expected\" reads each case's rules in order, the first that selects a run deciding it: where each rule decides (\"otherwise\" when an earlier rule may decide some of the same runs first) and what it expects; a run no rule selects must pass.\n", text::count(cases.len(), "case", "cases")));
    let mut current = String::new();
    for case in cases {
        let t = theme(case);
        if t != current {
            out.push_str(&format!(
                "\n## {t}\n\n| case | what | applies to | expected | links |\n|---|---|---|---|---|\n"
            ));
            current = t;
        }
        let expected = summary(case)
            .iter()
            .map(|d| md_escape(d))
            .collect::<Vec<_>>()
            .join("<br>");
        let links = case
            .links
            .iter()
            .map(|l| format!("[{}]({})", link_label(l), text::link_target(l)))
            .collect::<Vec<_>>()
            .join(" ");
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            case.id,
            md_escape(&case.title),
            applies_to(case)
                .map(|a| md_escape(&a))
                .unwrap_or_else(|| "every interpreter".into()),
            expected,
            links
        ));
    }
    out
}

/// `bpo-39492`, `cpython#18266`, `loky#259`, or the host's last path part.
fn link_label(url: &str) -> String {
    let parts: Vec<&str> = url.trim_end_matches('/').split('/').collect();
    if let Some(n) = url.strip_prefix("https://bugs.python.org/issue") {
        return format!("bpo-{n}");
    }
    if url.starts_with("https://github.com/") && parts.len() >= 7 {
        return format!("{}#{}", parts[4], parts[6]);
    }
    parts
        .last()
        .map(|s| s.to_string())
        .unwrap_or_else(|| url.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(
            link_label("https://bugs.python.org/issue39492"),
            "bpo-39492"
        );
        assert_eq!(
            link_label("https://github.com/joblib/loky/pull/272"),
            "loky#272"
        );
        assert_eq!(link_label("https://peps.python.org/pep-0574/"), "pep-0574");
    }

    fn summarise(text: &str) -> Vec<String> {
        let case = crate::case::parse_case(std::path::Path::new("cases/x/t.yaml"), text).unwrap();
        summary(&case)
    }

    #[test]
    fn first_match_wins_in_the_summary() {
        let text = "title: t\nparams:\n  pickler: [c, python]\ncode: pass\nexpect:\n  - python: '<3.8'\n    where: {pickler: c}\n    outcome: fail\n    reason: old\n  - outcome: pass\n";
        assert_eq!(
            summarise(text),
            vec!["python <3.8, pickler=c: fail (old)", "otherwise: pass"]
        );
        // A catch-all after a rule that decides by params alone decides the rest of them.
        let text = "title: t\nparams:\n  pickler: [c, python]\ncode: pass\nexpect:\n  - where: {pickler: c}\n    outcome: fail\n  - outcome: error\n    exception: KeyError\n";
        assert_eq!(
            summarise(text),
            vec!["pickler=c: fail", "pickler=python: error KeyError"]
        );
        // Nothing left for the implicit pass after a catch-all; everywhere without rules.
        assert_eq!(
            summarise("title: t\ncode: pass\n"),
            vec!["everywhere: pass"]
        );
        assert_eq!(
            summarise("title: t\ncode: pass\nexpect:\n  - outcome: fail\n"),
            vec!["everywhere: fail"]
        );
    }

    #[test]
    fn skips_nots_shadows_and_disjoint_rules() {
        let text = "title: t\nparams:\n  encoding: [default, latin1, bytes]\n  p: [1, 2]\ncode: pass\nexpect:\n  - implementation: pypy\n    outcome: skip\n    reason: not there\n  - implementation: cpython\n    where: {encoding: {not: default}}\n    outcome: error\n  - where: {p: 1}\n    outcome: fail\n  - where: {p: 1, encoding: latin1}\n    outcome: error\n";
        assert_eq!(
            summarise(text),
            vec![
                "pypy: skipped (not there)",
                "cpython, encoding not default: error",
                "otherwise p=1: fail",
                "error: never chosen (earlier rules decide every run it selects)",
                "otherwise p=2: pass",
            ]
        );
        let text = "title: t\nparams:\n  a: [1, 2]\n  b: [1, 2]\ncode: pass\nexpect:\n  - where: {a: 1, b: 1}\n    outcome: fail\n";
        assert_eq!(
            summarise(text),
            vec![
                "a=1, b=1: fail",
                "(a=1,b=2) or (a=2,b=1) or (a=2,b=2): pass"
            ]
        );
    }
}
