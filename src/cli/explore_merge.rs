//! `crosspickle merge` of explore reports: the `--json` reports of the shards of one
//! `explore --partition M/N` run, checked to be one run's shards (the same format version,
//! seed, interpreters and options, each shard once) and joined as the unsharded run reports:
//! findings deduplicated by signature (the one found with the lowest value number kept, its
//! occurrences counted over every shard), stability groups likewise, and the case files
//! written from the reports' own text. Pure over JSON documents, but for [`merge`]'s files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};

use crate::errors::Error;
use crate::explore::parity_cause;

/// A report `explore --json` wrote (it has the `explore` format key).
pub fn is_explore(doc: &Json) -> bool {
    doc.get("explore").is_some()
}

/// The inputs as JSON when at least one is an explore report: `Ok(None)` when none is (a
/// `run` merge), an error when they are mixed or one cannot be read as JSON.
pub fn read(paths: &[PathBuf]) -> Result<Option<Vec<(String, Json)>>, Error> {
    let mut docs = Vec::new();
    for path in paths {
        let parsed = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| serde_json::from_str::<Json>(&t).ok());
        docs.push((path.display().to_string(), parsed));
    }
    let explore: Vec<&String> = docs
        .iter()
        .filter(|(_, d)| d.as_ref().is_some_and(is_explore))
        .map(|(n, _)| n)
        .collect();
    if explore.is_empty() {
        return Ok(None);
    }
    if let Some((other, _)) = docs
        .iter()
        .find(|(_, d)| !d.as_ref().is_some_and(is_explore))
    {
        return Err(Error::Usage(format!(
            "{other} is not a report of `crosspickle explore --json` but {} is: merge either the results of `run` or the reports of one partitioned explore, not both",
            explore[0]
        )));
    }
    Ok(Some(
        docs.into_iter()
            .map(|(n, d)| (n, d.expect("explore report")))
            .collect(),
    ))
}

/// The merged report, or why the inputs are not the shards of one run.
pub fn merge(inputs: &[(String, Json)], format: u64) -> Result<Json, String> {
    let (first_name, first) = &inputs[0];
    let same = |key: &str, what: &str| -> Result<(), String> {
        for (name, doc) in inputs {
            if doc.get(key) != first.get(key) {
                return Err(format!(
                    "{name} and {first_name} are not shards of one explore run: their {what} differ ({} and {}); merge the shards of one `explore --partition M/N` run, all with the same seed and options",
                    doc.get(key).unwrap_or(&Json::Null),
                    first.get(key).unwrap_or(&Json::Null)
                ));
            }
        }
        Ok(())
    };
    for (name, doc) in inputs {
        if doc["explore"].as_u64() != Some(format) {
            return Err(format!(
                "{name} is explore's report format version {}, this crosspickle merges version {format}: write every shard with this crosspickle",
                doc["explore"]
            ));
        }
    }
    same("seed", "seeds")?;
    same("interpreters", "interpreters")?;
    same(
        "options",
        "options (--count, --time, --max-size, --no-stdlib, --values)",
    )?;
    shards_complete(inputs)?;

    let sum = |key: &str| -> u64 { inputs.iter().filter_map(|(_, d)| d[key].as_u64()).sum() };
    let fsum = |key: &str| -> f64 { inputs.iter().filter_map(|(_, d)| d[key].as_f64()).sum() };
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    for (_, doc) in inputs {
        for (k, n) in doc["kinds"].as_object().into_iter().flatten() {
            *kinds.entry(k.clone()).or_default() += n.as_u64().unwrap_or(0);
        }
    }
    // Findings by signature: the lowest value number's (what the unsharded run shrank first).
    let mut findings: BTreeMap<String, Json> = BTreeMap::new();
    for (_, doc) in inputs {
        for f in doc["findings"].as_array().into_iter().flatten() {
            let signature = f["signature"].as_str().unwrap_or_default().to_string();
            let keep = findings
                .get(&signature)
                .is_none_or(|old| f["index"].as_u64() < old["index"].as_u64());
            if keep {
                findings.insert(signature, f.clone());
            }
        }
    }
    // A finding within another (the same cause raised at the same places, on interpreters
    // among its own) is that one's, the widest kept whichever shard showed it, and of two
    // equals the earlier value's, as the unsharded run has it (`explore::outranks`).
    let hidden: Vec<String> = findings
        .iter()
        .filter(|(s, a)| findings.iter().any(|(o, b)| o != *s && outranks(b, a)))
        .map(|(s, _)| s.clone())
        .collect();
    for s in hidden {
        findings.remove(&s);
    }
    for f in findings.values_mut() {
        let counted = f["keys"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|k| kinds.get(k.as_str()?))
            .max()
            .copied();
        if let Some(n) = counted {
            f["occurrences"] = json!(n);
        }
        f["case_file"] = Json::Null;
    }
    // Stability groups by protocol, pickler and who wrote which bytes, as the run keys them.
    let mut stability: BTreeMap<String, Json> = BTreeMap::new();
    for (_, doc) in inputs {
        for s in doc["stability"].as_array().into_iter().flatten() {
            let key = stability_key(s);
            match stability.get_mut(&key) {
                None => {
                    stability.insert(key, s.clone());
                }
                Some(old) => {
                    let occurrences = old["occurrences"].as_u64().unwrap_or(0)
                        + s["occurrences"].as_u64().unwrap_or(0);
                    if s["index"].as_u64() < old["index"].as_u64() {
                        *old = s.clone();
                    }
                    old["occurrences"] = json!(occurrences);
                }
            }
        }
    }
    let exploring = fsum("exploring_seconds");
    let seconds = inputs
        .iter()
        .filter_map(|(_, d)| d["seconds"].as_f64())
        .fold(0.0, f64::max);
    Ok(json!({
        "explore": format,
        "interrupted": inputs.iter().any(|(_, d)| d["interrupted"] == true),
        "workers_started": sum("workers_started"),
        "seed": first["seed"],
        "partition": null,
        "shards": inputs.len(),
        "options": first["options"],
        "values": sum("values"),
        "repeated": sum("repeated"),
        "seconds": seconds,
        "exploring_seconds": exploring,
        "shrinking_seconds": fsum("shrinking_seconds"),
        "shrinks": sum("shrinks"),
        "values_per_second": sum("values") as f64 / exploring.max(1e-9),
        "kinds": kinds,
        "interpreters": first["interpreters"],
        "c_pickler_only": first["c_pickler_only"],
        "not_comparable": sum("not_comparable"),
        "hidden_by_baseline": sum("hidden_by_baseline"),
        "findings": findings.into_values().collect::<Vec<_>>(),
        "stability": stability.into_values().collect::<Vec<_>>(),
    }))
}

/// Whether `b` outranks `a` as the run tells (`explore::outranks`): `a` is within `b` and,
/// where each is within the other, `b` was shown by an earlier value.
fn outranks(b: &Json, a: &Json) -> bool {
    let index = |f: &Json| f["index"].as_u64().unwrap_or(u64::MAX);
    within(a, b) && (!within(b, a) || index(b) < index(a))
}

/// Whether finding `a` is within `b` as the run tells (`explore::within`): the same oracle,
/// observation and cause, raised at the same places (none is within another where nothing
/// raised, but for a parity cause that names what one pickler reads from its memo), its
/// group's producers and consumers among `b`'s.
fn within(a: &Json, b: &Json) -> bool {
    let sides = |f: &Json, key: &str| -> BTreeSet<String> {
        let group = f["group"].as_array().into_iter().flatten();
        group
            .flat_map(|g| g[key].as_array().into_iter().flatten())
            .filter_map(Json::as_str)
            .map(str::to_owned)
            .collect()
    };
    let sites = |f: &Json| -> BTreeSet<String> {
        let all = f["sites"].as_array().into_iter().flatten();
        all.filter_map(Json::as_str).map(str::to_owned).collect()
    };
    ["oracle", "observed", "cause"].iter().all(|k| a[k] == b[k])
        && (!sites(a).is_empty()
            || a["oracle"] == "parity"
                && a["cause"]
                    .as_str()
                    .is_some_and(parity_cause::names_what_is_shared))
        && sites(a) == sites(b)
        && sides(a, "producers").is_subset(&sides(b, "producers"))
        && sides(a, "consumers").is_subset(&sides(b, "consumers"))
}

/// Every shard of one partitioning once, or a report that was not sharded alone.
fn shards_complete(inputs: &[(String, Json)]) -> Result<(), String> {
    let mut seen: BTreeMap<u64, &str> = BTreeMap::new();
    let mut total = None;
    for (name, doc) in inputs {
        let p = &doc["partition"];
        let (Some(m), Some(n)) = (p["shard"].as_u64(), p["total"].as_u64()) else {
            if inputs.len() == 1 {
                return Ok(());
            }
            return Err(format!(
                "{name} is an explore report without --partition: merge the reports of `explore --partition M/N`, each shard once"
            ));
        };
        if *total.get_or_insert(n) != n {
            return Err(format!(
                "{name} is shard {m}/{n}, the others are of {}: merge the shards of one partitioning",
                total.unwrap_or(n)
            ));
        }
        if let Some(other) = seen.insert(m, name) {
            return Err(format!(
                "{name} and {other} are both shard {m}/{n}: give each shard once"
            ));
        }
    }
    let n = total.unwrap_or(0);
    let missing: Vec<String> = (1..=n)
        .filter(|m| !seen.contains_key(m))
        .map(|m| format!("{m}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "shard {} missing: merge every shard of the partitioning",
            missing.join(", ")
        ));
    }
    Ok(())
}

/// The run's key of a stability group: protocol, pickler, and the producers of each bytes.
fn stability_key(s: &Json) -> String {
    let groups: Vec<String> = s["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|g| {
            g["producers"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Json::as_str)
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    format!(
        "protocol={} pickler={} groups={}",
        s["protocol"],
        s["pickler"].as_str().unwrap_or_default(),
        groups.join(" | ")
    )
}

/// Each finding's case file written into `dir` under the name the shard gave it, from the
/// report's own text; the report's `case_file` set to it.
pub fn write_cases(dir: &Path, merged: &mut Json) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::Usage(format!(
            "--out {}: cannot make this folder ({e}); give a folder for the case files",
            dir.display()
        ))
    })?;
    let findings = merged["findings"].as_array_mut();
    if findings
        .as_ref()
        .is_some_and(|f| f.iter().any(|f| f["case"].is_string()))
    {
        // The support file the cases import, as the unsharded run writes it beside them.
        let support = dir.join(crate::explore::case::SUPPORT_FILE);
        crate::sys::fs::write_atomic(&support, crate::explore::case::support_text().as_bytes())
            .map_err(|e| Error::Usage(format!("cannot write {}: {e}", support.display())))?;
    }
    for f in findings.into_iter().flatten() {
        let Some(text) = f["case"].as_str() else {
            continue;
        };
        let name = super::explore::case_file_name(
            f["oracle"].as_str().unwrap_or("finding"),
            f["signature"].as_str().unwrap_or(""),
        );
        let path = dir.join(name);
        crate::sys::fs::write_atomic(&path, text.as_bytes())
            .map_err(|e| Error::Usage(format!("cannot write {}: {e}", path.display())))?;
        f["case_file"] = json!(path.display().to_string());
    }
    Ok(())
}

/// The merged run's summary: its figures, and a line per finding with its case file.
pub fn summary(merged: &Json) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let findings = merged["findings"].as_array().cloned().unwrap_or_default();
    let _ = writeln!(
        out,
        "merged {} explore shards: {} values on {} interpreters, {} findings",
        merged["shards"],
        merged["values"],
        merged["interpreters"].as_array().map_or(0, Vec::len),
        findings.len()
    );
    if merged["interrupted"] == true {
        let _ = writeln!(
            out,
            "a shard was interrupted: what it had found so far is in"
        );
    }
    let names = |v: &Json| {
        v.as_array()
            .into_iter()
            .flatten()
            .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
            .collect::<Vec<_>>()
    };
    for f in &findings {
        let mut how = format!(
            "protocol {} {}",
            names(&f["protocols"]).join(","),
            names(&f["picklers"]).join("/")
        );
        let unpicklers = names(&f["unpicklers"]);
        if !unpicklers.is_empty() {
            how.push_str(&format!("->{}", unpicklers.join("/")));
        }
        let _ = writeln!(
            out,
            "  {:13} {:18} {:28} {:20} {} -> {}  (x{})",
            f["oracle"].as_str().unwrap_or_default(),
            f["observed"].as_str().unwrap_or_default(),
            how,
            f["shape"].as_str().unwrap_or_default(),
            names(&f["producers"]).join(","),
            names(&f["consumers"]).join(","),
            f["occurrences"]
        );
        if let Some(file) = f["case_file"].as_str() {
            let _ = writeln!(out, "      {file}");
        }
    }
    let groups = merged["stability"].as_array().map_or(0, Vec::len);
    if groups > 0 {
        let _ = writeln!(
            out,
            "stability (information, not a failure): bytes that differ between producers in {groups} ways (--json keeps them all)"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard(m: u64, n: u64, seed: u64, findings: Json) -> (String, Json) {
        (
            format!("s{m}.json"),
            json!({
                "explore": 2, "seed": seed, "interpreters": ["a", "b"], "options": {"count": 10},
                "partition": {"shard": m, "total": n}, "values": 5, "seconds": 2.0,
                "exploring_seconds": 1.0, "shrinking_seconds": 1.0, "shrinks": 3, "workers_started": 2,
                "kinds": {"k1": 2, "k2": 1}, "findings": findings,
                "stability": [{"protocol": 2, "pickler": "c", "groups": [{"producers": ["a"]}, {"producers": ["b"]}], "index": m, "occurrences": 1}],
            }),
        )
    }

    #[test]
    fn findings_are_deduplicated_by_signature_lowest_value_first() {
        let one = shard(
            1,
            2,
            7,
            json!([{"signature": "s", "index": 4, "keys": ["k1"], "case": "four"}]),
        );
        let two = shard(
            2,
            2,
            7,
            json!([{"signature": "s", "index": 1, "keys": ["k1", "k2"], "case": "one"},
                   {"signature": "t", "index": 3, "keys": ["k2"], "case": "three"}]),
        );
        let merged = merge(&[one, two], 2).unwrap();
        let findings = merged["findings"].as_array().unwrap();
        assert_eq!(findings.len(), 2);
        assert_eq!(findings[0]["case"], "one");
        // k1 is counted 2 in each shard: 4; k2 1 + 1.
        assert_eq!(findings[0]["occurrences"], 4);
        assert_eq!(findings[1]["occurrences"], 2);
        assert_eq!(merged["values"], 10);
        assert_eq!(merged["shrinks"], 6);
        let stability = merged["stability"].as_array().unwrap();
        assert_eq!(stability.len(), 1);
        assert_eq!(stability[0]["index"], 1);
        assert_eq!(stability[0]["occurrences"], 2);
    }

    #[test]
    fn a_cause_raised_alike_on_fewer_is_the_widest_finding() {
        let finding = |signature: &str, index: u64, oracle: &str, sites: Json, producers: Json| {
            json!({"signature": signature, "index": index, "oracle": oracle,
                   "observed": "AssertionError", "cause": "AssertionError", "sites": sites,
                   "group": [{"producers": producers, "consumers": []}], "keys": []})
        };
        let dump = |signature: &str, index: u64, sites: Json, producers: Json| {
            finding(signature, index, "dump-differs", sites, producers)
        };
        let wide = dump("wide", 3, json!(["pickle.memoize"]), json!(["a", "b"]));
        // Within the wide one, from a later value and from an earlier one: the wide one's.
        let fewer = dump("fewer", 5, json!(["pickle.memoize"]), json!(["b"]));
        let before = dump("before", 1, json!(["pickle.memoize"]), json!(["a"]));
        // Raised elsewhere, or with no raise site: findings of their own.
        let elsewhere = dump("elsewhere", 6, json!(["pickle.save"]), json!(["b"]));
        let unraised = dump("unraised", 7, json!([]), json!(["b"]));
        // Of two alike (their signatures differ by the interpreters asked), the earlier; a
        // parity finding, which has no raise site, is its own.
        let alike = dump("alike", 9, json!(["pickle.memoize"]), json!(["a", "b"]));
        let parity = |signature: &str, index: u64, producers: Json| {
            finding(signature, index, "parity", json!([]), producers)
        };
        let narrow = parity("parity narrow", 2, json!(["b"]));
        let broad = parity("parity broad", 8, json!(["a", "b"]));
        // But one whose cause is what a pickler reads from its memo is within another of
        // that cause (not one that names no object, where the pickles did not replay).
        let memo = |signature: &str, index: u64, cause: &str, producers: Json| {
            let mut f = parity(signature, index, producers);
            f["cause"] = json!(cause);
            f
        };
        let text = "memo: c only, text";
        let memo_narrow = memo("memo narrow", 4, text, json!(["b"]));
        let memo_broad = memo("memo broad", 10, text, json!(["a", "b"]));
        let memo_bytes = memo("memo bytes", 11, "memo: c only, bytes", json!(["b"]));
        let memo_bare = memo("memo bare", 12, "memo: c only", json!(["b"]));
        let memo_bare_broad = memo("memo bare broad", 13, "memo: c only", json!(["a", "b"]));
        let one = shard(
            1,
            2,
            7,
            json!([fewer, unraised, narrow, alike, memo_narrow, memo_bare]),
        );
        let two = shard(
            2,
            2,
            7,
            json!([
                wide,
                elsewhere,
                before,
                broad,
                memo_broad,
                memo_bytes,
                memo_bare_broad
            ]),
        );
        let merged = merge(&[one, two], 2).unwrap();
        let kept: Vec<&str> = merged["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["signature"].as_str())
            .collect();
        assert_eq!(
            kept,
            [
                "elsewhere",
                "memo bare",
                "memo bare broad",
                "memo broad",
                "memo bytes",
                "parity broad",
                "parity narrow",
                "unraised",
                "wide"
            ]
        );
    }

    #[test]
    fn other_runs_and_missing_shards_are_refused() {
        let e = merge(&[shard(1, 2, 7, json!([])), shard(2, 2, 8, json!([]))], 2).unwrap_err();
        assert!(e.contains("seeds differ (8 and 7)"), "{e}");
        let e = merge(&[shard(1, 3, 7, json!([])), shard(2, 3, 7, json!([]))], 2).unwrap_err();
        assert!(e.contains("shard 3/3 missing"), "{e}");
        let e = merge(&[shard(1, 2, 7, json!([])), shard(1, 2, 7, json!([]))], 2).unwrap_err();
        assert!(e.contains("both shard 1/2"), "{e}");
        let mut old = shard(2, 2, 7, json!([]));
        old.1["explore"] = json!(1);
        let e = merge(&[shard(1, 2, 7, json!([])), old], 2).unwrap_err();
        assert!(e.contains("format version 1"), "{e}");
    }
}
