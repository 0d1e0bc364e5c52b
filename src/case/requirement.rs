//! The requirements of `requires`, `dump_requires` and `load_requires` as PEP 508 strings: each
//! parsed by `pep508_rs` as written when it holds no `{param}`, else once per value of the
//! params it names, with those put in as a run puts them ([`resolved`]); an installer option
//! (a line starting with `-`) is refused with what to do instead.

use std::str::FromStr;

use indexmap::IndexMap;

use super::params::ParamValue;

/// Why `text` is not a PEP 508 requirement: pep508_rs's words (the text and a caret under
/// where it stopped), one line.
pub fn problem(text: &str) -> Option<String> {
    let error = pep508_rs::Requirement::<pep508_rs::VerbatimUrl>::from_str(text).err()?;
    let said = error.to_string();
    Some(
        said.lines()
            .next()
            .unwrap_or("not a PEP 508 requirement")
            .to_string(),
    )
}

/// `requirement` with each `{name}` replaced by its value, as the environment of a run gets it.
pub fn resolved(requirement: &str, values: &[(&str, &ParamValue)]) -> String {
    let mut out = requirement.to_string();
    for (name, value) in values {
        out = out.replace(&format!("{{{name}}}"), &value.to_string());
    }
    out.trim().to_string()
}

/// The first way `requirement`, whose placeholders are `names` (all of them params), becomes
/// something that is not a PEP 508 requirement once its params are put in: what it became, the
/// values that made it and why; none when every combination parses. Each combination of the
/// values of the params it names is tried (their number is bounded by the case's).
pub fn first_bad_resolution(
    requirement: &str,
    names: &[String],
    params: &IndexMap<String, Vec<ParamValue>>,
) -> Option<(String, String, String)> {
    let mut names: Vec<&str> = names.iter().map(String::as_str).collect();
    names.dedup();
    let lists: Vec<(&str, &Vec<ParamValue>)> = names
        .iter()
        .filter_map(|n| params.get(*n).map(|v| (*n, v)))
        .collect();
    if lists.iter().any(|(_, v)| v.is_empty()) {
        return None;
    }
    let mut index = vec![0usize; lists.len()];
    loop {
        let values: Vec<(&str, &ParamValue)> = lists
            .iter()
            .zip(&index)
            .map(|((n, v), &i)| (*n, &v[i]))
            .collect();
        let text = resolved(requirement, &values);
        if let Some(why) = problem(&text) {
            let given = values
                .iter()
                .map(|(n, v)| format!("{n}={}", v.name()))
                .collect::<Vec<_>>()
                .join(", ");
            return Some((text, given, why));
        }
        // The next combination, the last param's values turning fastest.
        let mut at = lists.len();
        loop {
            if at == 0 {
                return None;
            }
            at -= 1;
            index[at] += 1;
            if index[at] < lists[at].1.len() {
                break;
            }
            index[at] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pep_508_strings_pass_and_others_say_why() {
        for ok in [
            "six",
            "numpy>=1.20,<2",
            "requests[socks]==2.31.0; python_version >= '3.8'",
            "pkg @ file:///tmp/pkg-1.0-py3-none-any.whl",
        ] {
            assert_eq!(problem(ok), None, "{ok}");
        }
        for bad in [
            "six==",
            "--index-url=http://x",
            "a b",
            "numpy>=1.20; python_version >",
        ] {
            assert!(problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn the_value_that_breaks_a_requirement_is_named() {
        let mut params = IndexMap::new();
        params.insert(
            "v".to_string(),
            vec![
                ParamValue::Str("1.0".into()),
                ParamValue::Str("1.0; rm".into()),
            ],
        );
        let names = vec!["v".to_string()];
        let (text, given, why) = first_bad_resolution("six=={v}", &names, &params).unwrap();
        assert_eq!(text, "six==1.0; rm");
        assert!(given.starts_with("v="), "{given}");
        assert!(!why.is_empty());
        params.insert("v".to_string(), vec![ParamValue::Str("1.0".into())]);
        assert_eq!(first_bad_resolution("six=={v}", &names, &params), None);
    }
}
