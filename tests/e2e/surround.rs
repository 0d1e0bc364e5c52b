//! What surrounds a run must not change what crosspickle reports (issue 23): the caller's
//! folder, signals, a shared cache, huge merges, hostile text.

use libtest_mimic::Trial;

use crate::support::*;

pub fn trials() -> Vec<Trial> {
    let t = |name: &str, needs: &[&str], f: fn() -> TestResult| {
        trial(&format!("surround::{name}"), needs, f)
    };
    vec![t(
        "the_callers_pickle_and_json_do_not_answer_for_the_interpreter",
        &["2.7", "3.12"],
        callers_folder_does_not_answer,
    )]
}

/// A folder of a project with modules of its own named as the standard library's: a
/// `pickle.py` that has no C pickler and protocol 2 at most, a `json.py` that cannot import.
const HOSTILE_FOLDER: &[(&str, &str)] = &[
    ("pickle.py", "HIGHEST_PROTOCOL = 2\nDEFAULT_PROTOCOL = 2\n"),
    (
        "json.py",
        "raise ImportError('this folder has a json.py of its own')\n",
    ),
    (
        "cases/c-pickle.yaml",
        "title: the C pickler is what pickle hands out\n\
         features: {c_pickle: true}\n\
         code: |\n  import pickle, _pickle\n  assert pickle.Pickler is _pickle.Pickler\n",
    ),
];

/// The facts the JSON report gives of the interpreter whose label starts with `prefix`.
fn facts(json: &serde_json::Value, prefix: &str) -> serde_json::Value {
    json["interpreters"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|i| i["label"].as_str().is_some_and(|l| l.starts_with(prefix)))
        .map(|i| {
            serde_json::json!({
                "c_pickle": i["c_pickle"],
                "c_pickle_used": i["c_pickle_used"],
                "pickle_highest_protocol": i["pickle_highest_protocol"],
            })
        })
        .unwrap_or(serde_json::Value::Null)
}

/// From a folder with a `pickle.py` and a `json.py`, every interpreter is probed as it is (its
/// C pickler, its protocols), a case that needs the C pickler runs and passes, and a probe
/// answer cached by an older crosspickle (which ran the probe in the caller's folder) is not
/// believed.
fn callers_folder_does_not_answer() -> TestResult {
    let dir = folder(HOSTILE_FOLDER);
    let cache = tempfile::tempdir()?;
    let args = args_on(&["2.7", "3.12"], &["cases", "--cache-dir"]);
    let mut args = args;
    args.push(path_str(cache.path()));
    let (run, json) = run_json(dir.path(), &args);
    run.expect_code(0)?;
    let modern = facts(&json, "cpython-3.12");
    let expected = serde_json::json!({
        "c_pickle": "_pickle", "c_pickle_used": true, "pickle_highest_protocol": 5,
    });
    check(
        modern == expected,
        format!("3.12 probed from the folder: {modern} (wanted {expected})"),
    )?;
    let old = facts(&json, "cpython-2.7");
    let expected_old = serde_json::json!({
        "c_pickle": "cPickle", "c_pickle_used": null, "pickle_highest_protocol": 2,
    });
    check(
        old == expected_old,
        format!("2.7 probed from the folder: {old} (wanted {expected_old})"),
    )?;
    let verdicts: Vec<(String, String)> = runs(&json)
        .iter()
        .map(|r| {
            (
                r["python"].as_str().unwrap_or("").to_string(),
                r["verdict"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    check(
        verdicts
            .iter()
            .any(|(p, v)| p.starts_with("cpython-3.12") && v == "ok"),
        format!("the C-pickler case did not run as expected on 3.12: {verdicts:?}"),
    )?;

    // An answer an older crosspickle cached from such a folder: no C pickler, protocol 2.
    let file = cache.path().join("interpreters.json");
    let mut cached: serde_json::Value = serde_json::from_slice(&std::fs::read(&file)?)?;
    cached["version"] = 2.into();
    for entry in cached["entries"]
        .as_object_mut()
        .ok_or("no entries")?
        .values_mut()
    {
        entry.as_object_mut().ok_or("an entry")?.remove("probe");
        entry["info"]["c_pickle_used"] = false.into();
        entry["info"]["pickle_highest_protocol"] = 2.into();
    }
    std::fs::write(&file, serde_json::to_vec(&cached)?)?;
    let elsewhere = tempfile::tempdir()?;
    std::fs::create_dir_all(elsewhere.path().join("cases"))?;
    std::fs::copy(
        dir.path().join("cases/c-pickle.yaml"),
        elsewhere.path().join("cases/c-pickle.yaml"),
    )?;
    let (run, json) = run_json(elsewhere.path(), &args);
    run.expect_code(0)?;
    let again = facts(&json, "cpython-3.12");
    check(
        again == expected,
        format!("3.12 with an older crosspickle's cache: {again} (wanted {expected})"),
    )?;
    let rewritten: serde_json::Value = serde_json::from_slice(&std::fs::read(&file)?)?;
    check(
        rewritten["version"] != 2,
        "the older crosspickle's cache was kept as it was",
    )?;
    Ok(())
}
