//! The case files `crosspickle explore` writes run one combination of a cause's protocols,
//! picklers and unpicklers, not every one it showed with: each file's params hold one protocol
//! (`default` only where nothing else showed it), one pickler and at most one unpickler, so a
//! file makes at most one run per producer and consumer pair; the `--json` report keeps every
//! protocol seen, the description names the others, and every file still expects a failure
//! where explore saw one and passes on the interpreters explored.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::*;

const ON: &[&str] = &["2.7", "3.8", "3.12", "pypy", "pypy8"];

/// The values of a param line of a case file (`  protocol: [0]`), none where it has none.
fn param(text: &str, name: &str) -> Option<Vec<String>> {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("  {name}: [")))?;
    Some(
        line.trim_end_matches(']')
            .split(", ")
            .map(str::to_string)
            .collect(),
    )
}

trial!(one_combination_per_case, needs = ON);
fn one_combination_per_case() -> TestResult {
    let dir = folder(&[]);
    let d = dir.path();
    let findings = explore_findings(d, ON, &["--seed", "7", "--count", "200", "--out", "out"])?;
    check(findings.len() > 5, format!("{} findings", findings.len()))?;
    let mut several = 0;
    for f in &findings {
        let file = f["case_file"].as_str().unwrap_or("");
        let text = std::fs::read_to_string(d.join(file)).unwrap_or_default();
        let protocols = param(&text, "protocol").unwrap_or_default();
        let seen: Vec<String> = f["protocols"]
            .as_array()
            .map(|p| p.iter().map(|p| p.to_string().replace('"', "")).collect())
            .unwrap_or_default();
        let parity = f["oracle"] == "parity";
        check(
            protocols.len() == 1 && seen.contains(&protocols[0]),
            format!("{file}: one protocol of those seen ({seen:?}): {protocols:?}"),
        )?;
        check(
            protocols[0] != "default" || seen.iter().all(|p| p == "default"),
            format!("{file}: default where {seen:?} were seen"),
        )?;
        let picklers = param(&text, "pickler");
        check(
            if parity {
                picklers.is_none()
            } else {
                picklers.is_some_and(|p| p.len() == 1)
            },
            format!("{file}: one pickler (none for a parity case):\n{text}"),
        )?;
        check(
            param(&text, "unpickler").is_none_or(|u| u.len() == 1),
            format!("{file}: one unpickler at most:\n{text}"),
        )?;
        check(
            f["case_params"]["protocols"].as_array().map(Vec::len) == Some(1),
            format!("{file}: the report's case_params: {}", f["case_params"]),
        )?;
        if seen.len() > 1 {
            several += 1;
            check(
                text.contains("explore also saw it with protocol"),
                format!("{file}: the other protocols ({seen:?}) unnamed:\n{text}"),
            )?;
        }
    }
    check(
        several > 0,
        "no cause showed with several protocols: nothing was left out",
    )?;

    // They pass where they were explored, each expecting the failure explore saw, in at most
    // one run per producer and consumer pair.
    let mut args = vec!["run".to_string()];
    args.extend(args_on(ON, &["out"]));
    let (run, results) = run_json(d, &args);
    run.expect_code(0)?;
    let mut per_file: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for r in runs(&results) {
        let case = r["case"].as_str().unwrap_or("");
        let file = case.split('[').next().unwrap_or(case).to_string();
        let entry = per_file.entry(file).or_default();
        entry.0 += 1;
        entry.1 += usize::from(r["verdict"] == "xfail");
    }
    let names: BTreeSet<String> = findings
        .iter()
        .filter_map(|f| f["case_file"].as_str())
        .map(|f| {
            let name = f.rsplit('/').next().unwrap_or(f);
            name.trim_end_matches(".yaml").to_string()
        })
        .collect();
    check(
        per_file.keys().cloned().collect::<BTreeSet<_>>() == names,
        format!("every file ran: {:?} of {names:?}", per_file.keys()),
    )?;
    let pairs = ON.len() * ON.len();
    for (file, (total, xfail)) in &per_file {
        check(
            *xfail > 0,
            format!("{file}: no run expects the failure explore saw"),
        )?;
        check(
            *total <= pairs,
            format!("{file}: {total} runs, more than one per pair ({pairs})"),
        )?;
    }
    Ok(())
}
