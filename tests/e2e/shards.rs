//! `--partition`: the shards of the corpus, merged, are the unsharded run, run by run, for 1, 2
//! (slice) and 3 (hash) shards (`.ci/run`'s shards-check splits the whole corpus on every
//! interpreter in 3 hash shards, and in 1 to 5 of either scheme with `SHARDS`); a case with its params (every round trip of it) is in one shard only; `merge`
//! names a shard that is missing, given twice or of another partitioning.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::support::*;

/// 2.7 and 3.13: the corpus's round trips between Python 2 and 3 (the protocol cases) run in
/// both directions, and the whole corpus on both takes about 4 s on a quiet 2-core machine
/// (the trial's sixteen runs for 1 to 5 shards took 64.5 s in CI; its seven now, about 28 s).
const PYTHONS: &[&str] = &["2.7", "3.13"];

/// What identifies a run, and what was found: the verdict, outcome, exception and phase (not
/// the messages and durations, which may differ between two runs of the same thing).
type Runs = BTreeMap<String, String>;

fn by_run(json: &serde_json::Value) -> Result<Runs, libtest_mimic::Failed> {
    let mut out = Runs::new();
    for r in runs(json) {
        let key = format!(
            "{}\t{}\t{}\t{}",
            r["case"], r["params"], r["dump_python"], r["python"]
        );
        let found = sometimes(&r).unwrap_or_else(|| {
            format!(
                "{} {} {} {}",
                r["verdict"], r["outcome"], r["exception"], r["phase"]
            )
        });
        if out.insert(key.clone(), found).is_some() {
            return Err(format!("run {key} is reported twice").into());
        }
    }
    Ok(out)
}

/// `case params`: the unit a shard keeps whole (JSON text holds no raw tab).
fn unit(key: &str) -> String {
    let mut parts = key.splitn(3, '\t');
    format!("{} {}", parts.next().unwrap(), parts.next().unwrap())
}

fn run_in(
    dir: &Path,
    extra: &[&str],
    json: &str,
) -> Result<serde_json::Value, libtest_mimic::Failed> {
    let mut args = python_args(PYTHONS);
    args.push("--corpus".into());
    args.extend(extra.iter().map(|a| a.to_string()));
    let out = crosspickle(dir)
        .args(&args)
        .arg("--json")
        .arg(dir.join(json))
        .output()?;
    Run::from(out).expect_code(0)?;
    Ok(json_at(&dir.join(json)))
}

trial!(merged_shards_are_the_whole_corpus, needs = PYTHONS);
fn merged_shards_are_the_whole_corpus() -> TestResult {
    let dir = folder(&[]);
    let whole_json = run_in(dir.path(), &[], "whole.json")?;
    let whole = by_run(&whole_json)?;
    check(
        whole.len() > 300 && whole.keys().any(|k| !k.contains("\tnull\t")),
        format!(
            "the corpus on two interpreters, round trips included: {} runs",
            whole.len()
        ),
    )?;
    check(
        whole_json.get("partition").is_none(),
        "an unsharded run names no shard",
    )?;
    for total in 1..=3u32 {
        shards_merged(dir.path(), total, &whole)?;
    }
    Ok(())
}

/// `total` shards of the corpus, each saying which it is, every case with its params in one
/// of them only, merged: the whole run, run by run.
fn shards_merged(dir: &Path, total: u32, whole: &Runs) -> TestResult {
    // Both schemes, in turn: hash for 1 and 3 shards, slice for 2.
    let scheme = if total % 2 == 1 { "hash" } else { "slice" };
    let mut files = Vec::new();
    let mut shard_of: BTreeMap<String, u32> = BTreeMap::new();
    let mut count = 0;
    for shard in 1..=total {
        let name = format!("{scheme}-{shard}-of-{total}.json");
        let json = run_in(
            dir,
            &["--partition", &format!("{scheme}:{shard}/{total}")],
            &name,
        )?;
        let p = &json["partition"];
        check(
            p["scheme"] == scheme && p["shard"] == shard && p["total"] == total,
            format!("{name} says which shard it is: {p}"),
        )?;
        let these = by_run(&json)?;
        count += these.len();
        for key in these.keys() {
            if let Some(other) = shard_of.insert(unit(key), shard) {
                check(
                    other == shard,
                    format!("{} is in shards {other} and {shard} of {total}", unit(key)),
                )?;
            }
        }
        files.push(name);
    }
    check(
        count == whole.len(),
        format!(
            "{total} shards hold {count} runs, the whole run {}: none twice, none as skipped",
            whole.len()
        ),
    )?;
    let merged_path = dir.join(format!("merged-{total}.json"));
    let out = crosspickle(dir)
        .arg("merge")
        .args(&files)
        .arg("--json")
        .arg(&merged_path)
        .output()?;
    Run::from(out).expect_code(0)?;
    let merged_json = json_at(&merged_path);
    let merged = by_run(&merged_json)?;
    if merged != *whole {
        let only_whole: Vec<_> = whole
            .iter()
            .filter(|(k, v)| merged.get(*k) != Some(v))
            .take(5)
            .collect();
        let only_merged: Vec<_> = merged
            .iter()
            .filter(|(k, v)| whole.get(*k) != Some(v))
            .take(5)
            .collect();
        return Err(format!(
            "{total} shards merged differ from the whole run: whole {only_whole:?}, merged {only_merged:?}"
        )
        .into());
    }
    check(
        merged_json.get("partition").is_none(),
        "the merge of every shard is a whole run",
    )?;
    let units: BTreeSet<u32> = shard_of.values().copied().collect();
    check(
        total == 1 || units.len() > 1,
        format!("{total} shards: the runs are spread, not all in one ({units:?})"),
    )?;
    Ok(())
}

const CASES: &[(&str, &str)] = &[
    (
        "cases/a.yaml",
        "title: a\nparams:\n  n: [1, 2, 3, 4]\ncode: |\n  pass\n",
    ),
    ("cases/b.yaml", "title: b\ncode: |\n  pass\n"),
];

trial!(merge_names_a_missing_or_doubled_shard, needs = &["3.12"]);
fn merge_names_a_missing_or_doubled_shard() -> TestResult {
    let dir = folder(CASES);
    let d = dir.path();
    let mut args = python_args(&["3.12"]);
    args.push("cases".into());
    for (partition, file) in [
        ("hash:1/3", "1.json"),
        ("hash:2/3", "2.json"),
        ("hash:3/3", "3.json"),
        ("slice:1/2", "other.json"),
    ] {
        let out = crosspickle(d)
            .args(&args)
            .args(["--partition", partition, "--json", file])
            .output()?;
        let run = Run::from(out);
        run.expect_code(0)?;
        check(
            run.stderr.contains(&format!("note: shard {partition}: ")),
            format!("the run says which shard it is:\n{}", run.stderr),
        )?;
    }
    let merge = |files: &[&str]| -> Result<Run, libtest_mimic::Failed> {
        Ok(Run::from(
            crosspickle(d)
                .arg("merge")
                .args(files)
                .args(["--json", "merged.json"])
                .output()?,
        ))
    };
    let _ = std::fs::remove_file(d.join("merged.json"));
    let missing = merge(&["1.json", "3.json"])?;
    missing.expect_code(2)?;
    check(
        missing.stderr.contains("shard hash:2/3 is missing") && !d.join("merged.json").exists(),
        format!(
            "a missing shard is named, nothing written:\n{}",
            missing.stderr
        ),
    )?;
    let twice = merge(&["1.json", "2.json", "3.json", "2.json"])?;
    twice.expect_code(2)?;
    check(
        twice.stderr.contains("shard hash:2/3 is given twice"),
        format!("a shard given twice is named:\n{}", twice.stderr),
    )?;
    let mixed = merge(&["1.json", "2.json", "3.json", "other.json"])?;
    mixed.expect_code(2)?;
    check(
        mixed.stderr.contains("other.json is shard slice:1/2")
            && mixed.stderr.contains("another partitioning"),
        format!(
            "a shard of another partitioning is named:\n{}",
            mixed.stderr
        ),
    )?;
    let whole = merge(&["3.json", "1.json", "2.json"])?;
    whole.expect_code(0)?;
    let merged = json_at(&d.join("merged.json"));
    check(
        runs(&merged).len() == 5,
        format!("5 runs merged: {}", runs(&merged).len()),
    )?;
    // A bad value is bad input, with what to give instead.
    let bad = Run::from(
        crosspickle(d)
            .args(&args)
            .args(["--partition", "hash:4/3"])
            .output()?,
    );
    bad.expect_code(2)?;
    check(
        bad.stderr.contains("from 1 to the number of shards (3)"),
        format!("--partition hash:4/3:\n{}", bad.stderr),
    )
}

/// A run of `cases` in `dir` as shard `partition` on 3.12, its JSON at `dir/NAME`.
fn shard_json(
    dir: &Path,
    partition: &str,
    name: &str,
) -> Result<serde_json::Value, libtest_mimic::Failed> {
    let mut args = vec!["run".to_string(), "cases".into()];
    args.extend(python_args(&["3.12"]));
    args.extend([
        "--partition".into(),
        partition.into(),
        "--json".into(),
        name.into(),
    ]);
    let run = Run::from(crosspickle(dir).args(&args).output().unwrap());
    check(
        run.code == 0 || run.code == 1,
        format!("{}\n{}", run.stdout, run.stderr),
    )?;
    Ok(json_at(&dir.join(name)))
}

/// `json` as another system's job made it: every interpreter's `platform` (and machine) set.
fn on_platform(json: &serde_json::Value, platform: &str, machine: &str) -> serde_json::Value {
    let mut json = json.clone();
    for i in json["interpreters"].as_array_mut().unwrap() {
        i["platform"] = platform.into();
        i["machine"] = machine.into();
    }
    json
}

// An OS × shard matrix: a Linux and a Windows job's `hash:1/2` (same labels, another platform)
// merge, a column per system; a shard missing on one system is named with it.
trial!(shards_of_two_systems_merge, needs = &["3.12"]);
fn shards_of_two_systems_merge() -> TestResult {
    let dir = folder(&[
        ("cases/a.yaml", "title: a\ncode: |\n  pass\n"),
        ("cases/b.yaml", "title: b\ncode: |\n  pass\n"),
        ("cases/c.yaml", "title: c\ncode: |\n  pass\n"),
        ("cases/d.yaml", "title: d\ncode: |\n  pass\n"),
    ]);
    let d = dir.path();
    let one = shard_json(d, "hash:1/2", "linux-1.json")?;
    let two = shard_json(d, "hash:2/2", "linux-2.json")?;
    for (json, name) in [(&one, "windows-1.json"), (&two, "windows-2.json")] {
        let text = serde_json::to_string(&on_platform(json, "windows", "AMD64")).unwrap();
        std::fs::write(d.join(name), text)?;
    }
    let all = [
        "linux-1.json",
        "linux-2.json",
        "windows-1.json",
        "windows-2.json",
    ];
    let mut args = vec!["merge"];
    args.extend(all);
    args.extend(["--json", "merged.json"]);
    let merged = Run::from(crosspickle(d).args(&args).output().unwrap());
    merged.expect_code(0)?;
    let json = json_at(&d.join("merged.json"));
    let labels: Vec<&str> = json["interpreters"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["label"].as_str())
        .collect();
    check(
        labels.len() == 2 && json["runs"].as_array().unwrap().len() == 8,
        format!(
            "a column per system, every run of both: {labels:?}\n{}",
            merged.stdout
        ),
    )?;
    // Windows' shard 2 missing: named, with its system.
    let missing = Run::from(
        crosspickle(d)
            .args(["merge", "linux-1.json", "linux-2.json", "windows-1.json"])
            .output()
            .unwrap(),
    );
    missing.expect_code(2)?;
    check(
        missing
            .stderr
            .contains("shard hash:2/2 for windows-AMD64 is missing"),
        &missing.stderr,
    )?;
    // The same system's shard twice is still refused.
    let twice = Run::from(
        crosspickle(d)
            .args(["merge", "linux-1.json", "linux-2.json", "linux-1.json"])
            .output()
            .unwrap(),
    );
    twice.expect_code(2)?;
    check(twice.stderr.contains("given twice"), &twice.stderr)
}

// `merge` on any partition numbers: N = 4,294,967,295 or 100,000 is a short error at once, no
// huge allocation, no list of every missing shard.
trial!(merge_is_bounded_on_any_partition_numbers, needs = &["3.12"]);
fn merge_is_bounded_on_any_partition_numbers() -> TestResult {
    let dir = folder(&[("cases/a.yaml", "title: a\ncode: |\n  pass\n")]);
    let d = dir.path();
    let one = shard_json(d, "hash:1/2", "s.json")?;
    for total in [4_294_967_295u64, 100_000] {
        let mut json = one.clone();
        json["partition"]["total"] = total.into();
        std::fs::write(d.join("big.json"), serde_json::to_string(&json).unwrap())?;
        let start = std::time::Instant::now();
        let run = Run::from(crosspickle(d).args(["merge", "big.json"]).output().unwrap());
        run.expect_code(2)?;
        check(
            run.stderr.len() < 1000
                && run.stderr.contains("more are missing")
                && start.elapsed() < std::time::Duration::from_secs(20),
            format!("N = {total}, {:?}: {}", start.elapsed(), run.stderr),
        )?;
    }
    Ok(())
}
