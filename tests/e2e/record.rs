//! Recorded pickles (`crosspickle record`, docs/record.md): what the dumps of round trips made,
//! kept in a folder with its manifest; recording again changes nothing and more producers add;
//! a run on one Python judges the recorded producers by their facts; a folder that was tampered
//! with is refused by name, and nothing of it is loaded.

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::*;

/// The dump sends its Python's major version; the load, on any Python 3, says whether it was a
/// Python 3's. The rule for producers before 3 says so: selected by `dump_python`.
const MAJOR: &str = r#"title: the producer's major version travels
params:
  protocol: [0, 2]
dump: |
  import pickle, sys
  data = pickle.dumps(sys.version_info[0], protocol=protocol)
load: |
  import pickle
  major = pickle.loads(data)
  assert major == 3, "made by Python %d" % major
expect:
  - dump_python: "<3"
    outcome: fail
    exception: AssertionError
    match: "^made by Python 2$"
"#;

/// Every file of `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for item in std::fs::read_dir(dir).expect("the folder of recorded pickles") {
        let item = item.unwrap();
        out.insert(
            item.file_name().to_string_lossy().into_owned(),
            std::fs::read(item.path()).unwrap(),
        );
    }
    out
}

fn record(dir: &Path, needs: &[&str], extra: &[&str]) -> Run {
    Run::from(
        crosspickle(dir)
            .arg("record")
            .args(args_on(needs, extra))
            .output()
            .expect("crosspickle runs"),
    )
}

/// `record --check ARGS` where no Python can be found: no PATH, an empty home and cache.
fn check_without_python(dir: &Path, extra: &[&str]) -> Run {
    let empty = tempfile::tempdir().expect("tempdir");
    Run::from(
        crosspickle(dir)
            .args(["record", "--check"])
            .args(extra)
            .env("PATH", "")
            .env("HOME", empty.path())
            .env("CROSSPICKLE_CACHE_DIR", empty.path())
            .env_remove("PYENV_ROOT")
            .env_remove("CROSSPICKLE_NEWEST_PYTHONS")
            .output()
            .expect("crosspickle runs"),
    )
}

fn manifest(pickles: &Path) -> serde_json::Value {
    json_at(&pickles.join("manifest.json"))
}

trial!(
    recording_again_changes_nothing_and_more_producers_add,
    needs = &["2.7", "3.12"]
);
/// Record on 3.12, again (byte-identical folder, manifest untouched), then on 2.7 and 3.12:
/// what was there is unchanged and 2.7's pickles are added; the manifest names case, params,
/// producer, protocol, crosspickle's version and the digest, and the files are named by it.
fn recording_again_changes_nothing_and_more_producers_add() -> TestResult {
    let dir = folder(&[("cases/major.yaml", MAJOR)]);
    let pickles = dir.path().join("cases/pickles");
    record(dir.path(), &["3.12"], &[]).expect_code(0)?;
    let first = snapshot(&pickles);
    let modified = std::fs::metadata(pickles.join("manifest.json"))?.modified()?;
    check(
        first.len() == 3,
        format!(
            "a manifest and 2 pickles (protocols 0 and 2), got {:?}",
            first.keys()
        ),
    )?;
    record(dir.path(), &["3.12"], &[]).expect_code(0)?;
    check(
        snapshot(&pickles) == first,
        "recording again changed the folder",
    )?;
    check(
        std::fs::metadata(pickles.join("manifest.json"))?.modified()? == modified,
        "recording again rewrote the manifest",
    )?;

    let again = record(dir.path(), &["2.7", "3.12"], &[]);
    again.expect_code(0)?;
    let second = snapshot(&pickles);
    for (name, bytes) in &first {
        if name != "manifest.json" {
            check(second.get(name) == Some(bytes), format!("{name} changed"))?;
        }
    }
    let m = manifest(&pickles);
    check(
        m["format"] == "crosspickle-pickles" && m["version"] == 1,
        format!("the manifest's format: {m}"),
    )?;
    let entries = m["pickles"].as_array().cloned().unwrap_or_default();
    check(
        entries.len() == 4,
        format!("4 entries, got {}", entries.len()),
    )?;
    let mut seen = Vec::new();
    for e in &entries {
        let file = e["file"].as_str().unwrap_or("");
        let bytes = second
            .get(file)
            .ok_or(format!("{file} is not in the folder"))?;
        check(
            file == format!("{}.pickle", e["sha256"].as_str().unwrap_or("?")),
            format!("{file} named after its digest"),
        )?;
        check(
            e["case"] == "major"
                && e["crosspickle"] == env!("CARGO_PKG_VERSION")
                && e["producer"]["implementation"] == "cpython"
                && e["producer"]["platform"] == "linux",
            format!("an entry's facts: {e}"),
        )?;
        let protocol = e["params"].as_str().unwrap_or("");
        let want = if protocol == "protocol=2" {
            serde_json::json!(2)
        } else {
            serde_json::Value::Null
        };
        check(
            e["protocol"] == want && (bytes[0] == 0x80) == want.is_number(),
            format!(
                "{protocol}: the protocol of its first opcode, {}",
                e["protocol"]
            ),
        )?;
        seen.push(format!(
            "{} {}",
            e["producer"]["version"].as_str().unwrap_or("?"),
            protocol
        ));
    }
    check(
        seen == [
            "2.7.18 protocol=0",
            "3.12.1 protocol=0",
            "2.7.18 protocol=2",
            "3.12.1 protocol=2",
        ],
        format!("each producer and params once, in order: {seen:?}"),
    )?;
    // Sorted: a second record on both leaves the manifest byte-identical.
    record(dir.path(), &["2.7", "3.12"], &[]).expect_code(0)?;
    check(
        snapshot(&pickles) == second,
        "recording on both again changed the folder",
    )
}

trial!(
    a_run_on_one_python_judges_recorded_producers_by_their_facts,
    needs = &["2.7", "3.12"]
);
/// Pickles recorded on 2.7 into a folder elsewhere (`--pickles`), then a run on 3.12 alone:
/// the pairs `recorded:cpython-2.7.18 -> 3.12` are judged by the rule written for live 2.7
/// producers (`dump_python: "<3"`, an expected failure), beside 3.12's own live pairs, and the
/// report keeps them apart by their label.
fn a_run_on_one_python_judges_recorded_producers_by_their_facts() -> TestResult {
    let dir = folder(&[("cases/major.yaml", MAJOR)]);
    let pickles = dir.path().join("kept");
    let kept = path_str(&pickles);
    record(dir.path(), &["2.7"], &["--pickles", &kept]).expect_code(0)?;
    let (run, json) = run_json(dir.path(), &args_on(&["3.12"], &["--pickles", &kept]));
    run.expect_code(0)?;
    let all = runs(&json);
    let pairs: Vec<String> = all
        .iter()
        .map(|r| {
            format!(
                "{} {} -> {}: {}",
                r["params"]["protocol"],
                r["dump_python"].as_str().unwrap_or("?"),
                r["python"].as_str().unwrap_or("?"),
                r["verdict"].as_str().unwrap_or("?")
            )
        })
        .collect();
    check(
        pairs
            == [
                "0 cpython-3.12.1 -> cpython-3.12.1: ok",
                "0 recorded:cpython-2.7.18 -> cpython-3.12.1: xfail",
                "2 cpython-3.12.1 -> cpython-3.12.1: ok",
                "2 recorded:cpython-2.7.18 -> cpython-3.12.1: xfail",
            ],
        format!("the pairs and their verdicts: {pairs:#?}"),
    )?;
    let recorded = all
        .iter()
        .find(|r| r["dump_python"] == "recorded:cpython-2.7.18")
        .ok_or("a recorded pair")?;
    check(
        recorded["message"] == "made by Python 2",
        format!("the load ran on the recorded bytes: {recorded}"),
    )?;
    check(
        run.stdout.contains("recorded:cpython-2.7.18 ->"),
        format!(
            "the matrix has the recorded producer's rows:\n{}",
            run.stdout
        ),
    )?;
    // `list --expected` shows the recorded producer's row, decided by the rule for 2.7.
    let list = Run::from(
        crosspickle(dir.path())
            .args(["list", "--expected", "--pickles", &kept])
            .args(python_args(&["3.12"]))
            .output()?,
    );
    list.expect_code(0)?;
    let rows: Vec<&str> = list
        .stdout
        .lines()
        .map(str::trim)
        .filter(|l| l.contains("cpython-"))
        .collect();
    check(
        rows == [
            "a  cpython-3.12.1           .",
            "recorded:cpython-2.7.18  1",
            "a  cpython-3.12.1           .",
            "recorded:cpython-2.7.18  1",
        ],
        format!("list --expected's rows: {rows:#?}\n{}", list.stdout),
    )
}

/// What was done to the folder, how, the name the refusal gives, and why it says it is refused.
type Tampering<'a> = (&'a str, Box<dyn Fn() + 'a>, String, &'a str);

trial!(a_folder_tampered_with_is_refused_by_name, needs = &["3.12"]);
/// A file changed after it was recorded, a file the manifest does not name, a manifest of a
/// newer format and an entry naming a path outside the folder: `run` and `record` each exit 2
/// naming the file, and nothing runs; `record --check`, where no Python can be found, exits 2
/// naming it too, and 0 on the folder as recorded.
fn a_folder_tampered_with_is_refused_by_name() -> TestResult {
    let dir = folder(&[("cases/major.yaml", MAJOR)]);
    let pickles = dir.path().join("cases/pickles");
    record(dir.path(), &["3.12"], &[]).expect_code(0)?;
    let checked = check_without_python(dir.path(), &[]);
    check(
        checked.code == 0
            && checked
                .stdout
                .contains("checked 2 recorded pickles (2 files, 1 producer) in cases/pickles")
            && checked.stdout.contains("every entry is of a loaded case"),
        format!(
            "record --check passes the folder as recorded, with no Python: {} {} {}",
            checked.code, checked.stdout, checked.stderr
        ),
    )?;
    let good = snapshot(&pickles);
    let restore = || {
        for item in std::fs::read_dir(&pickles).unwrap() {
            std::fs::remove_file(item.unwrap().path()).unwrap();
        }
        for (name, bytes) in &good {
            std::fs::write(pickles.join(name), bytes).unwrap();
        }
    };
    let pickle = good
        .keys()
        .find(|n| n.ends_with(".pickle"))
        .cloned()
        .ok_or("a pickle")?;
    let text = String::from_utf8(good["manifest.json"].clone())?;
    let tamperings: Vec<Tampering> = vec![
        (
            "a changed pickle",
            Box::new(|| std::fs::write(pickles.join(&pickle), b"\x80\x02K\x07.").unwrap()),
            pickle.clone(),
            "SHA-256",
        ),
        (
            "a foreign file",
            Box::new(|| std::fs::write(pickles.join("evil.pickle"), b"cos\nsystem\n.").unwrap()),
            "evil.pickle".into(),
            "does not name",
        ),
        (
            "a newer manifest",
            Box::new(|| {
                let newer = text.replace("\"version\": 1", "\"version\": 9");
                std::fs::write(pickles.join("manifest.json"), newer).unwrap()
            }),
            "manifest.json".into(),
            "version 9 is newer",
        ),
        (
            "a path outside the folder",
            Box::new(|| {
                let outside = text.replacen(
                    &format!("\"file\": \"{pickle}\""),
                    "\"file\": \"../../outside.pickle\"",
                    1,
                );
                std::fs::write(pickles.join("manifest.json"), outside).unwrap()
            }),
            "../../outside.pickle".into(),
            "not a file of the folder",
        ),
    ];
    for (what, tamper, name, why) in &tamperings {
        restore();
        tamper();
        let before = snapshot(&pickles);
        let (run, json) = run_json(dir.path(), &args_on(&["3.12"], &[]));
        check(
            run.code == 2 && run.stderr.contains(name.as_str()) && run.stderr.contains(why),
            format!(
                "{what}: run exits 2 naming {name} ({why}): {}, {}",
                run.code, run.stderr
            ),
        )?;
        check(json.is_null(), format!("{what}: nothing ran"))?;
        let again = record(dir.path(), &["3.12"], &[]);
        check(
            again.code == 2 && again.stderr.contains(name.as_str()),
            format!("{what}: record exits 2 naming {name}: {}", again.stderr),
        )?;
        check(
            snapshot(&pickles) == before,
            format!("{what}: record wrote nothing"),
        )?;
        let checked = check_without_python(dir.path(), &[]);
        check(
            checked.code == 2
                && checked.stderr.contains(name.as_str())
                && checked.stderr.contains(why),
            format!(
                "{what}: record --check exits 2 naming {name}: {} {}",
                checked.code, checked.stderr
            ),
        )?;
    }
    restore();
    run_json(dir.path(), &args_on(&["3.12"], &[]))
        .0
        .expect_code(0)
}

trial!(prune_removes_what_no_case_refers_to, needs = &["3.12"]);
/// A param value dropped from the case: its recorded pickle stays until `--prune`, which
/// removes its entry and file and keeps the rest. Meanwhile `record --check` (no Python) names
/// the stale entry and exits 1; after the prune it exits 0.
fn prune_removes_what_no_case_refers_to() -> TestResult {
    let dir = folder(&[("cases/major.yaml", MAJOR)]);
    let pickles = dir.path().join("cases/pickles");
    record(dir.path(), &["3.12"], &[]).expect_code(0)?;
    std::fs::write(
        dir.path().join("cases/major.yaml"),
        MAJOR.replace("protocol: [0, 2]", "protocol: [2]"),
    )?;
    let checked = check_without_python(dir.path(), &[]);
    check(
        checked.code == 1
            && checked
                .stdout
                .contains("stale: major[protocol=0] by recorded:cpython-3.12")
            && !checked.stdout.contains("protocol=2] by")
            && checked.stdout.contains("1 entry is of no loaded case"),
        format!(
            "record --check names the stale entry: {} {} {}",
            checked.code, checked.stdout, checked.stderr
        ),
    )?;
    record(dir.path(), &["3.12"], &[]).expect_code(0)?;
    check(
        snapshot(&pickles).len() == 3,
        "nothing removed without --prune",
    )?;
    record(dir.path(), &["3.12"], &["--prune"]).expect_code(0)?;
    let after = snapshot(&pickles);
    let m = manifest(&pickles);
    let params: Vec<&str> = m["pickles"]
        .as_array()
        .map(|a| a.iter().filter_map(|e| e["params"].as_str()).collect())
        .unwrap_or_default();
    check(
        after.len() == 2 && params == ["protocol=2"],
        format!("protocol=0's pickle pruned: {:?} {params:?}", after.keys()),
    )?;
    check_without_python(dir.path(), &[]).expect_code(0)?;
    let missing = check_without_python(dir.path(), &["--pickles", "elsewhere"]);
    check(
        missing.code == 2 && missing.stderr.contains("elsewhere"),
        format!(
            "record --check on a folder that is not there exits 2 naming it: {} {}",
            missing.code, missing.stderr
        ),
    )
}

trial!(a_dump_changed_in_place_is_a_verdict, needs = &["3.12"]);
/// Pickles recorded on 3.12, then 3.12's dump makes other bytes (the case's dump sends another
/// value; a new release of a package would do the same): each (params, 3.12) gets a run of
/// its own, `cpython-3.12.1 -> recorded:cpython-3.12.1` of phase `compare`, `ok` while the bytes
/// are the same, a `regression` naming both digests once they differ, `xfail` under a rule
/// `phase: compare, outcome: fail`, which no other rule (not even one without selectors)
/// decides for; `record` says so and keeps what it recorded.
fn a_dump_changed_in_place_is_a_verdict() -> TestResult {
    let dir = folder(&[("cases/major.yaml", MAJOR)]);
    let pickles = dir.path().join("cases/pickles");
    record(dir.path(), &["3.12"], &[]).expect_code(0)?;
    let comparisons = |json: &serde_json::Value| -> Vec<String> {
        runs(json)
            .iter()
            .filter(|r| r["phase"] == "compare" || r["python"] == "recorded:cpython-3.12.1")
            .map(|r| {
                format!(
                    "{} {} -> {} {}: {}",
                    r["params"]["protocol"],
                    r["dump_python"].as_str().unwrap_or("?"),
                    r["python"].as_str().unwrap_or("?"),
                    r["phase"].as_str().unwrap_or("?"),
                    r["verdict"].as_str().unwrap_or("?")
                )
            })
            .collect()
    };
    let (run, json) = run_json(dir.path(), &args_on(&["3.12"], &[]));
    run.expect_code(0)?;
    let same = comparisons(&json);
    check(
        same == [
            "0 cpython-3.12.1 -> recorded:cpython-3.12.1 compare: ok",
            "2 cpython-3.12.1 -> recorded:cpython-3.12.1 compare: ok",
        ],
        format!("the same bytes are ok: {same:#?}"),
    )?;
    let before = snapshot(&pickles);
    // A dump that now pickles the major version as a float (3.0 == 3): other bytes, same load.
    let changed = MAJOR.replace(
        "dumps(sys.version_info[0],",
        "dumps(float(sys.version_info[0]),",
    );
    std::fs::write(dir.path().join("cases/major.yaml"), &changed)?;
    let (run, json) = run_json(dir.path(), &args_on(&["3.12"], &[]));
    run.expect_code(1)?;
    let other = comparisons(&json);
    check(
        other
            == [
                "0 cpython-3.12.1 -> recorded:cpython-3.12.1 compare: regression",
                "2 cpython-3.12.1 -> recorded:cpython-3.12.1 compare: regression",
            ],
        format!("other bytes are a regression: {other:#?}"),
    )?;
    let first = runs(&json)
        .into_iter()
        .find(|r| r["phase"] == "compare")
        .ok_or("a comparison")?;
    let message = first["message"].as_str().unwrap_or("");
    check(
        message.starts_with("the dump on cpython-3.12.1 made other bytes (SHA-256 ")
            && message.ends_with("): the dump changed in place")
            && message.contains("than recorded:cpython-3.12.1 recorded (SHA-256 "),
        format!("the message names both digests: {first}"),
    )?;
    check(
        run.stdout
            .contains("major[protocol=0] cpython-3.12.1 -> recorded:cpython-3.12.1"),
        format!("the terminal names the run:\n{}", run.stdout),
    )?;
    // Expected: a rule for the comparison (after one without selectors, which does not
    // decide it) makes it an xfail, and the pairs keep their verdicts.
    let expected = changed.replace(
        "expect:\n",
        "expect:\n  - phase: compare\n    outcome: fail\n    match: the dump changed in place\n    reason: 3.12 now sends a float\n",
    );
    std::fs::write(dir.path().join("cases/major.yaml"), &expected)?;
    let (run, json) = run_json(dir.path(), &args_on(&["3.12"], &[]));
    run.expect_code(0)?;
    let known = comparisons(&json);
    check(
        known
            == [
                "0 cpython-3.12.1 -> recorded:cpython-3.12.1 compare: xfail",
                "2 cpython-3.12.1 -> recorded:cpython-3.12.1 compare: xfail",
            ],
        format!("an expected change is an xfail: {known:#?}"),
    )?;
    let catch_all = format!("{expected}  - outcome: fail\n");
    std::fs::write(dir.path().join("cases/major.yaml"), catch_all)?;
    let (run, json) = run_json(dir.path(), &args_on(&["3.12"], &[]));
    run.expect_code(1)?;
    // Per protocol: the live pair, the comparison, the recorded producer's pair.
    let pairs: Vec<String> = runs(&json)
        .iter()
        .map(|r| format!("{} {}", r["python"], r["verdict"]))
        .collect();
    check(
        pairs
            == [
                r#""cpython-3.12.1" "fixed""#,
                r#""recorded:cpython-3.12.1" "xfail""#,
                r#""cpython-3.12.1" "fixed""#,
                r#""cpython-3.12.1" "fixed""#,
                r#""recorded:cpython-3.12.1" "xfail""#,
                r#""cpython-3.12.1" "fixed""#,
            ],
        format!("a rule without selectors decides the pairs, not the comparisons: {pairs:#?}"),
    )?;
    let again = record(dir.path(), &["3.12"], &[]);
    again.expect_code(0)?;
    check(
        again
            .stderr
            .contains("2 dumps made other bytes than the recorded ones")
            && again.stderr.contains("major[protocol=0] cpython-3.12.1 ->"),
        format!("record says so: {}", again.stderr),
    )?;
    check(snapshot(&pickles) == before, "record kept what it recorded")
}

trial!(the_corpus_ships_its_pickles, needs = &["3.12"]);
/// `run --corpus` on 3.12 alone loads the pickles recorded from the corpus's round trips on
/// every interpreter of crosspickle's CI machine and embedded in the binary (2.7 to 3.15 and
/// PyPy), written once into the cache folder: every one as its rules expect.
fn the_corpus_ships_its_pickles() -> TestResult {
    let dir = folder(&[]);
    let cache = dir.path().join("cache");
    let (run, json) = run_json(
        dir.path(),
        &args_on(
            &["3.12"],
            &[
                "--corpus",
                "-k",
                "datetime-py2-latin1",
                "--cache-dir",
                &path_str(&cache),
            ],
        ),
    );
    run.expect_code(0)?;
    let all = runs(&json);
    let producers: std::collections::BTreeSet<&str> = all
        .iter()
        .filter_map(|r| r["dump_python"].as_str())
        .filter(|p| p.starts_with("recorded:"))
        .collect();
    check(
        producers.contains("recorded:cpython-2.7.18")
            && producers
                .iter()
                .any(|p| p.starts_with("recorded:cpython-3.15."))
            && producers
                .iter()
                .any(|p| p.starts_with("recorded:pypy-3.9."))
            && producers.len() >= 15,
        format!("the recorded producers: {producers:#?}"),
    )?;
    let consumers: std::collections::BTreeSet<&str> =
        all.iter().filter_map(|r| r["python"].as_str()).collect();
    check(
        consumers.iter().all(|c| c.contains("cpython-3.12.")),
        format!("3.12 alone loads them: {consumers:?}"),
    )?;
    let written = cache.join("corpus-pickles");
    let folders: Vec<_> = std::fs::read_dir(&written)?.flatten().collect();
    check(
        folders.len() == 1 && folders[0].path().join("manifest.json").is_file(),
        format!(
            "one folder of the corpus's pickles in {}",
            written.display()
        ),
    )
}

trial!(
    the_corpus_ships_pickles_made_with_packages,
    needs = &["3.12"]
);
/// The corpus's round trips whose sides have packages of their own are shipped too: `run
/// --corpus` on 3.12 alone with the recorded 3.12 producer judges the pickles NumPy 2.0.2 and
/// two attrs releases made, with only the consumer's environments made (none with NumPy 2.0.2),
/// each as its rules expect: NumPy 1.26.4 loads protocol 4 and not 5, 1.26.0 neither.
fn the_corpus_ships_pickles_made_with_packages() -> TestResult {
    let dir = folder(&[]);
    let (run, json) = run_json(
        dir.path(),
        &args_on(
            &["3.12"],
            &[
                "--corpus",
                "-k",
                "numpy-28340 or attrs-1085",
                "--dump-python",
                "recorded:cpython-3.12.1",
            ],
        ),
    );
    run.expect_code(0)?;
    let all = runs(&json);
    let mut numpy: Vec<String> = all
        .iter()
        .filter(|r| r["case"] == "numpy-28340-numpy2-pickle-on-numpy1")
        .map(|r| {
            format!(
                "{} {:?}={}",
                r["params"],
                r["dump_packages"],
                r["verdict"].as_str().unwrap_or("?")
            )
        })
        .collect();
    numpy.sort();
    let want = [
        r#"{"protocol":4,"numpy_release":"1.26.0"} Array [String("numpy==2.0.2")]=xfail"#,
        r#"{"protocol":4,"numpy_release":"1.26.4"} Array [String("numpy==2.0.2")]=ok"#,
        r#"{"protocol":5,"numpy_release":"1.26.0"} Array [String("numpy==2.0.2")]=xfail"#,
        r#"{"protocol":5,"numpy_release":"1.26.4"} Array [String("numpy==2.0.2")]=xfail"#,
    ];
    check(numpy == want, format!("NumPy's recorded pairs: {numpy:#?}"))?;
    let attrs: Vec<&serde_json::Value> = all
        .iter()
        .filter(|r| r["case"] == "attrs-1085-slotted-state-across-releases")
        .collect();
    check(
        attrs.len() == 6
            && all
                .iter()
                .all(|r| r["dump_python"] == "recorded:cpython-3.12.1")
            && attrs.iter().all(|r| {
                r["dump_packages"].as_array().is_some_and(|p| {
                    p.len() == 1 && p[0].as_str().is_some_and(|p| p.starts_with("attrs=="))
                })
            }),
        format!("attrs's 6 recorded pairs, and no live producer: {all:#?}"),
    )?;
    check(
        !run.stderr.contains("with numpy==2.0.2"),
        format!("no producer environment: {}", run.stderr),
    )
}

trial!(
    numpy_2_pickles_recorded_then_judged_on_numpy_1,
    needs = &["3.12"]
);
/// The corpus's NumPy case (numpy#28340): pickles recorded once by NumPy 2.0.2 on 3.12, then
/// judged with the recorded producer alone (`--dump-python recorded:…`): only the consumers'
/// environments (NumPy 1.26.0 and 1.26.4) are used, the producer's packages are told from the
/// manifest, and every verdict is the live run's (sides.rs): 1.26.0 loads neither protocol,
/// 1.26.4 loads protocol 4 and not 5. The environments are shared with that trial's cache.
fn numpy_2_pickles_recorded_then_judged_on_numpy_1() -> TestResult {
    const CASE: &str =
        include_str!("../../cases/thirdparty/numpy-28340-numpy2-pickle-on-numpy1.yaml");
    let dir = folder(&[("cases/numpy.yaml", CASE)]);
    record(dir.path(), &["3.12"], &[]).expect_code(0)?;
    let (run, json) = run_json(
        dir.path(),
        &args_on(&["3.12"], &["--dump-python", "recorded:cpython-3.12.1"]),
    );
    run.expect_code(0)?;
    let mut got: Vec<String> = runs(&json)
        .iter()
        .map(|r| {
            format!(
                "{} {} {:?} {:?}={}",
                r["params"],
                r["dump_python"].as_str().unwrap_or("?"),
                r["dump_packages"],
                r["message"].as_str().unwrap_or(""),
                r["verdict"].as_str().unwrap_or("?")
            )
        })
        .collect();
    got.sort();
    let want = [
        r#"{"protocol":4,"numpy_release":"1.26.0"} recorded:cpython-3.12.1 Array [String("numpy==2.0.2")] "No module named 'numpy._core'"=xfail"#,
        r#"{"protocol":4,"numpy_release":"1.26.4"} recorded:cpython-3.12.1 Array [String("numpy==2.0.2")] ""=ok"#,
        r#"{"protocol":5,"numpy_release":"1.26.0"} recorded:cpython-3.12.1 Array [String("numpy==2.0.2")] "No module named 'numpy._core'"=xfail"#,
        r#"{"protocol":5,"numpy_release":"1.26.4"} recorded:cpython-3.12.1 Array [String("numpy==2.0.2")] "No module named 'numpy._core.numeric'"=xfail"#,
    ];
    check(got == want, format!("{got:#?}"))?;
    check(
        !run.stderr.contains("with numpy==2.0.2"),
        format!("no producer environment: {}", run.stderr),
    )
}
