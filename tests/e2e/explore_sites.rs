//! Where an exception was raised is part of a finding's signature: two causes that raise the
//! same exception type from different places are two findings, one cause raised from one place
//! by values of several shapes stays one.

use crate::support::*;

const RAISES: &str = "import sys


class Refuses(object):
    # Python 3 refuses it in its __reduce__.
    def __init__(self, a):
        self.a = a

    def __reduce__(self):
        if sys.version_info[0] >= 3:
            raise TypeError('not on Python 3')
        return (Refuses, (self.a,))


class Declines(object):
    # Python 3 refuses it in its __reduce_ex__, with the same exception type.
    def __init__(self, a):
        self.a = a

    def __reduce_ex__(self, protocol):
        if sys.version_info[0] >= 3:
            raise TypeError('not on Python 3 either')
        return (Declines, (self.a,))


def refuses():
    return Refuses(1)


def refuses_in_a_list():
    return [Refuses(2), 3]


def declines():
    return Declines(1)


def not_implemented():
    return NotImplemented
";

trial!(the_raise_site_parts_causes, needs = &["2.7", "3.12"]);
/// 3.12 refuses two classes with a `TypeError` each, one from `__reduce__`, one from
/// `__reduce_ex__`: two findings (on today's main one, whose signature was the exception type
/// alone); `Refuses` alone and in a list is one. 2.7's refusal of `NotImplemented` names the
/// C pickler (`cPickle`) and the Python one's frames (`pickle.py`'s or `copy_reg`'s function),
/// not line numbers.
fn the_raise_site_parts_causes() -> TestResult {
    let dir = folder(&[("raises.py", RAISES)]);
    let d = dir.path();
    let mut args: Vec<String> = ["explore", "--pythons-toml", "/dev/null"]
        .map(String::from)
        .to_vec();
    for p in ["2.7", "3.12"] {
        args.push("--python".into());
        args.push(path_str(&python(p).unwrap()));
    }
    let rest = [
        "--values",
        "raises.py",
        "--count",
        "4",
        "--json",
        "r.json",
        "-j",
        "2",
    ];
    args.extend(rest.map(String::from));
    let run = Run::from(crosspickle(d).args(&args).output().expect("runs"));
    run.expect_code(1)?;
    let report = json_at(&d.join("r.json"));
    let findings = report["findings"].as_array().cloned().unwrap_or_default();
    let brief: Vec<String> = findings
        .iter()
        .map(|f| format!("{} {}", f["signature"], f["value"]))
        .collect();
    let by_312: Vec<&serde_json::Value> = findings
        .iter()
        .filter(|f| {
            f["oracle"] == "dump-differs"
                && f["observed"] == "TypeError"
                && f["producers"].as_array().is_some_and(|p| {
                    p.len() == 1 && p[0].as_str().is_some_and(|p| p.starts_with("cpython-3.12"))
                })
        })
        .collect();
    let mut raised: Vec<Vec<String>> = by_312.iter().map(|f| sites(f)).collect();
    raised.sort();
    check(
        raised
            == vec![
                vec!["raises.__reduce__".to_string()],
                vec!["raises.__reduce_ex__".to_string()],
            ],
        format!("two findings on 3.12, one per reducer: {brief:#?}"),
    )?;
    check(
        by_312.iter().all(|f| {
            f["signature"]
                .as_str()
                .is_some_and(|s| s.contains(" at raises.__reduce"))
        }),
        format!("the site is in the signature: {brief:#?}"),
    )?;
    let refused = by_312
        .iter()
        .find(|f| sites(f) == ["raises.__reduce__"])
        .map_or(0, |f| f["occurrences"].as_u64().unwrap_or(0));
    check(
        refused == 2,
        format!("Refuses alone and in a list is one finding seen twice: {brief:#?}"),
    )?;
    let by_27 = findings.iter().find(|f| {
        f["oracle"] == "dump-differs"
            && f["value"]
                .as_str()
                .is_some_and(|v| v.contains("not_implemented"))
    });
    let Some(by_27) = by_27 else {
        return check(false, format!("2.7 refuses NotImplemented: {brief:#?}"));
    };
    let named = sites(by_27);
    check(
        named.iter().any(|s| s == "cPickle")
            && named
                .iter()
                .any(|s| s.starts_with("pickle.") || s.starts_with("copy_reg.")),
        format!("the C pickler and pickle.py's or copy_reg's function: {named:?}"),
    )
}
