//! A finding written as a case file in the case format (docs/case-format.md): a round trip
//! (dump, load, value and unpickler-parity findings) or a plain case (parity) whose code does
//! what the worker did, importing the prelude's helpers and classes from the support file
//! beside it ([`SUPPORT_FILE`], the case's `support`), and whose rules are what each
//! interpreter of the selection was seen to do: committed as it is, it passes with
//! `crosspickle run` on them.

use std::fmt::Write;

use super::observe::{
    protocol_number, protocol_text, Observation, Outcome, Pickler, DEFAULT_PROTOCOL,
};
use super::oracle::{Finding, Oracle};
use super::params::{Combos, Params};
use super::value::Value;
use super::worker::PRELUDE;
use crate::python::Interpreter;

/// The support file every case explore writes imports its helpers and classes from, written
/// beside them ([`support_text`]).
pub const SUPPORT_FILE: &str = "explore_support.py";

/// What each case's code starts with.
const IMPORT: &str = "from explore_support import *\n";

/// The support file's text: the prelude, as the worker runs it.
pub fn support_text() -> String {
    format!(
        "# Written by crosspickle explore: the helpers and classes its case files import (their\n# `support`). Valid on Python 2.7 and every Python 3.\n{PRELUDE}"
    )
}

/// Where the value came from, said in the case's description.
pub struct Origin {
    pub seed: u64,
    pub index: u64,
}

/// The case file's text.
pub fn write(
    finding: &Finding,
    params: &Params,
    value: &Value,
    obs: &Observation,
    pythons: &[Interpreter],
    origin: &Origin,
    sides: &str,
) -> String {
    let mut out = String::new();
    let combos = &params.case;
    let path = value.type_path();
    let list = |c: &Combos| {
        c.protocols
            .iter()
            .map(|&p| protocol_text(p))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // The title says what explore found, every protocol that showed it; the params, the one
    // the case runs.
    let (protocols, seen) = (list(combos), list(&params.seen));
    let names = |ps: &[Pickler]| ps.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(", ");
    let what = match finding.oracle {
        Oracle::DumpDiffers => format!(
            "pickling {path} raises {} with protocols {seen} on {sides}",
            finding.cause
        ),
        Oracle::LoadDiffers => format!(
            "{path} pickled with protocols {seen} fails to load ({}): {sides}",
            finding.cause
        ),
        Oracle::ValueDiffers => format!(
            "{path} pickled with protocols {seen} loads as another value ({}): {sides}",
            finding.cause
        ),
        Oracle::Parity => format!(
            "the C and the Python pickler write different pickles of {path} ({}), protocols {seen}, on {sides}",
            finding.cause
        ),
        Oracle::MessageDiffers => format!(
            "{path} with protocols {seen}: the same exception ({}) with another message on some interpreters",
            finding.observed
        ),
        Oracle::UnpicklerParity => format!(
            "the C and the Python unpickler load {path} pickled with protocols {seen} differently ({}) on {sides}",
            finding.cause
        ),
    };
    let checked = pythons
        .iter()
        .map(|p| p.label.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(
        out,
        "# Written by crosspickle explore: the rules are what each interpreter did, checked on\n# {checked} only: widen them before committing (version ranges, implementations)."
    );
    let _ = writeln!(out, "title: {}", quote(&format!("explore: {what}")));
    let description = format!(
        "Found by `crosspickle explore --seed {}` (value {}), shrunk to the value below; oracle {}: {}. Observed on: {}.{}",
        origin.seed,
        origin.index,
        finding.oracle.as_str(),
        finding.detail.chars().take(300).collect::<String>(),
        pythons.iter().map(|p| p.label.as_str()).collect::<Vec<_>>().join(", "),
        params.also().map_or(String::new(), |also| format!(
            " The case runs {}, which shows it on the most interpreter pairs; explore also saw it with {also} (its --json report lists them).",
            combos.words()
        ))
    );
    let _ = writeln!(out, "description: {}", quote(&description));
    let _ = writeln!(out, "tags: [explore, {}]", finding.oracle.as_str());
    let _ = writeln!(out, "support: [{SUPPORT_FILE}]");
    let (major, minor) = value.min_version();
    if (major, minor) > (2, 7) {
        let _ = writeln!(out, "python: \">={major}.{minor}\"");
    }
    let hang = obs
        .dumps
        .values()
        .chain(obs.loads.values())
        .any(|o| *o == Outcome::Hang);
    if hang {
        let _ = writeln!(out, "timeout: 20");
    }
    let _ = writeln!(out, "params:\n  protocol: [{protocols}]");
    let source = value.source();
    let version = (major, minor);
    if finding.oracle == Oracle::Parity {
        block(&mut out, "code", &format!(
            "{IMPORT}{source}c = parity_form(dumps_with(value, protocol, \"c\"))\npy = parity_form(dumps_with(value, protocol, \"py\"))\nassert c == py, \"C: %r, Python: %r\" % (c, py)\n"
        ));
        out.push_str("expect:\n");
        general_rules(&mut out, combos, &[""], Some(""), None);
        default_protocol_rules(&mut out, combos, "", pythons, version);
        let mut rules = String::new();
        for &p in &combos.protocols {
            parity_rules(&mut rules, p, obs, pythons, version);
        }
        out.push_str(&compact(&rules, &dimensions(combos, false, false)));
        return out;
    }
    let _ = writeln!(out, "  pickler: [{}]", names(&combos.picklers));
    if finding.oracle == Oracle::UnpicklerParity {
        block(
            &mut out,
            "dump",
            &format!("{IMPORT}{source}data = dumps_with(value, protocol, pickler)\n"),
        );
        block(&mut out, "load", &format!("{IMPORT}{UNPICKLER_PARITY}"));
        out.push_str("expect:\n");
        general_rules(
            &mut out,
            combos,
            &["dump_", "load_"],
            Some("dump_"),
            Some(""),
        );
        default_protocol_rules(&mut out, combos, "dump_", pythons, version);
        let mut rules = String::new();
        for &p in &combos.protocols {
            for &k in &combos.picklers {
                unpickler_parity_rules(&mut rules, (p, k), obs, pythons, version);
            }
        }
        out.push_str(&compact(&rules, &dimensions(combos, true, false)));
        return out;
    }
    let unpickler = if combos.unpicklers.is_empty() {
        "\"py\"".to_string()
    } else {
        let _ = writeln!(out, "  unpickler: [{}]", names(&combos.unpicklers));
        "unpickler".to_string()
    };
    block(
        &mut out,
        "dump",
        &format!("{IMPORT}{source}data = dumps_with(value, protocol, pickler)\n"),
    );
    let setup = value.load_setup();
    block(&mut out, "load", &format!(
        "{IMPORT}{setup}got = canon(loads_with(data, {unpickler}))\n{source}want = canon(value)\nassert got == want, \"loaded %s, pickled %s\" % (got, want)\n"
    ));
    out.push_str("expect:\n");
    let c_unpickler = combos
        .unpicklers
        .contains(&Pickler::C)
        .then_some("unpickler");
    general_rules(
        &mut out,
        combos,
        &["dump_", "load_"],
        Some("dump_"),
        c_unpickler,
    );
    default_protocol_rules(&mut out, combos, "dump_", pythons, version);
    let unpicklers = if combos.unpicklers.is_empty() {
        vec![None]
    } else {
        combos.unpicklers.iter().copied().map(Some).collect()
    };
    let mut rules = String::new();
    for &p in &combos.protocols {
        for &k in &combos.picklers {
            for &u in &unpicklers {
                round_trip_rules(&mut rules, (p, k, u), obs, pythons, version);
            }
        }
    }
    let with_unpickler = !combos.unpicklers.is_empty();
    out.push_str(&compact(&rules, &dimensions(combos, true, with_unpickler)));
    out
}

/// The params of a case and their values, in the order of `where`'s keys.
fn dimensions(
    combos: &Combos,
    picklers: bool,
    unpicklers: bool,
) -> Vec<(&'static str, Vec<String>)> {
    let names = |ps: &[Pickler]| ps.iter().map(|p| p.as_str().to_string()).collect();
    let mut out = vec![(
        "protocol",
        combos.protocols.iter().map(|&p| protocol_text(p)).collect(),
    )];
    if picklers {
        out.push(("pickler", names(&combos.picklers)));
    }
    if unpicklers {
        out.push(("unpickler", names(&combos.unpicklers)));
    }
    out
}

/// The rules written one per param combination, made few: rules alike but for their `where`
/// become one whose `where` lists the values (none where it is every combination). The
/// first rule that matches wins, so the order that matters is kept: skips first (a run that
/// was not asked), then the producers' (a dump that failed), then the consumers' and pairs'
/// (a load), each group in the order of its first rule; within one combination the rules
/// were written in that order, and rules of one kind never match the same run twice.
fn compact(rules: &str, params: &[(&str, Vec<String>)]) -> String {
    type Combo = Vec<String>;
    let mut groups: Vec<(u8, Vec<String>, Vec<Combo>)> = Vec::new();
    for block in rules.split("\n  - ").map(|b| b.trim_start_matches("  - ")) {
        if block.trim().is_empty() {
            continue;
        }
        let lines: Vec<String> = block.lines().map(|l| l.trim().to_string()).collect();
        let combo: Combo = lines
            .iter()
            .find_map(|l| l.strip_prefix("where: {"))
            .map(|w| {
                w.trim_end_matches('}')
                    .split(", ")
                    .map(|kv| kv.split_once(": ").map_or("", |(_, v)| v).to_string())
                    .collect()
            })
            .unwrap_or_default();
        let body: Vec<String> = lines
            .into_iter()
            .filter(|l| !l.starts_with("where: "))
            .collect();
        let class = if body.iter().any(|l| l == "outcome: skip") {
            0
        } else if body.iter().any(|l| l.starts_with("load_")) {
            2
        } else {
            1
        };
        match groups
            .iter_mut()
            .find(|(c, b, _)| *c == class && *b == body)
        {
            Some((_, _, all)) => all.push(combo),
            None => groups.push((class, body, vec![combo])),
        }
    }
    groups.sort_by_key(|(class, ..)| *class);
    let mut rules: Vec<(u8, Vec<String>)> = Vec::new();
    for (class, body, combos) in groups {
        for where_ in factor(&combos, params) {
            let mut lines = body.clone();
            // `where` after the selectors, before `phase` and `outcome`.
            let at = lines
                .iter()
                .position(|l| l.starts_with("phase: ") || l.starts_with("outcome: "))
                .unwrap_or(lines.len());
            if let Some(w) = where_ {
                lines.insert(at, format!("where: {w}"));
            }
            // Interpreters of one kind whose version shares meet, expecting the same: one
            // rule over both shares. Rules of one class name different interpreters of a
            // side, whose selectors never match the same run, so joining them keeps the
            // order that matters.
            let joined = rules
                .iter_mut()
                .filter(|(c, _)| *c == class)
                .any(|(_, earlier)| join(earlier, &lines));
            if !joined {
                rules.push((class, lines));
            }
        }
    }
    let mut out = String::new();
    for (_, lines) in rules {
        for (i, line) in lines.iter().enumerate() {
            let _ = writeln!(out, "  {} {line}", if i == 0 { "-" } else { " " });
        }
    }
    out
}

/// Joins `rule` into `earlier` where the two differ in one version range, ranges that meet
/// (`<3.9` and `>=3.9,<3.13`), and in the interpreters their reasons name: true if joined.
fn join(earlier: &mut Vec<String>, rule: &[String]) -> bool {
    let ranged = |l: &str| l.contains("python: \"");
    let differ: Vec<usize> = (0..rule.len())
        .filter(|&i| earlier.get(i) != rule.get(i) && !rule[i].starts_with("reason: "))
        .collect();
    // The same lines but for one range (a range that is every version has no line).
    let (at, merged) = match (earlier.len() == rule.len(), differ.as_slice()) {
        (true, [i]) if ranged(&earlier[*i]) && ranged(&rule[*i]) => {
            let key = |l: &str| l.split_once(": ").map(|(k, _)| k.to_string());
            if key(&earlier[*i]) != key(&rule[*i]) {
                return false;
            }
            let range = |l: &str| {
                l.split_once(": \"")
                    .map(|(_, r)| r.trim_end_matches('"').to_string())
                    .unwrap_or_default()
            };
            let Some(both) = union(&range(&earlier[*i]), &range(&rule[*i])) else {
                return false;
            };
            let name = key(&rule[*i]).unwrap_or_default();
            (*i, both.map(|r| format!("{name}: \"{r}\"")))
        }
        _ => return false,
    };
    let labels = |l: &str| {
        l.rsplit_once(" (")
            .map(|(_, x)| x.trim_end_matches(")\"").to_string())
    };
    if let (Some(r), Some(new)) = (
        earlier.iter().position(|l| l.starts_with("reason: ")),
        rule.iter().find(|l| l.starts_with("reason: ")),
    ) {
        if let (Some(a), Some(b)) = (labels(&earlier[r]), labels(new)) {
            let text = earlier[r].replace(&format!("({a})"), &format!("({a}, {b})"));
            earlier[r] = text;
        }
    }
    match merged {
        Some(line) => earlier[at] = line,
        None => {
            earlier.remove(at);
        }
    }
    true
}

/// The union of two version ranges that meet, as explore writes them (a lower bound `>=V` or
/// `>V`, an upper `<V` or `<=V`, either or both): `None` where they do not meet, `Some(None)`
/// where the union is every version.
fn union(a: &str, b: &str) -> Option<Option<String>> {
    let bounds = |r: &str| {
        let mut lower = None;
        let mut upper = None;
        for part in r.split(',') {
            if part.starts_with('>') {
                lower = Some(part.to_string());
            } else if part.starts_with('<') {
                upper = Some(part.to_string());
            }
        }
        (lower, upper)
    };
    let meet = |upper: &Option<String>, lower: &Option<String>| match (upper, lower) {
        (Some(u), Some(l)) => {
            let (u, l) = (u.as_str(), l.as_str());
            matches!((u.strip_prefix("<="), l.strip_prefix('>')), (Some(x), Some(y)) if !y.starts_with('=') && x == y)
                || matches!((u.strip_prefix('<'), l.strip_prefix(">=")), (Some(x), Some(y)) if !x.starts_with('=') && x == y)
        }
        _ => false,
    };
    let (a, b) = (bounds(a), bounds(b));
    let (lower, upper) = if meet(&a.1, &b.0) {
        (a.0, b.1)
    } else if meet(&b.1, &a.0) {
        (b.0, a.1)
    } else {
        return None;
    };
    Some(match (lower, upper) {
        (None, None) => None,
        (l, u) => Some(l.into_iter().chain(u).collect::<Vec<_>>().join(",")),
    })
}

/// `where` for a set of combinations (values in the order of `params`): none for all of them,
/// one listing the values where they are a product, else one per value of the params after
/// the first, listing the first's.
fn factor(combos: &[Vec<String>], params: &[(&str, Vec<String>)]) -> Vec<Option<String>> {
    let every: usize = params.iter().map(|(_, v)| v.len()).product();
    let mut unique = combos.to_vec();
    unique.sort();
    unique.dedup();
    if unique.len() == every {
        return vec![None];
    }
    let values = |i: usize, of: &[Vec<String>]| {
        let mut v: Vec<String> = Vec::new();
        for c in of {
            if !v.contains(&c[i]) {
                v.push(c[i].clone());
            }
        }
        v
    };
    let text = |columns: &[Vec<String>]| {
        let items: Vec<String> = params
            .iter()
            .zip(columns)
            .map(|((name, _), v)| match v.as_slice() {
                [one] => format!("{name}: {one}"),
                many => format!("{name}: [{}]", many.join(", ")),
            })
            .collect();
        Some(format!("{{{}}}", items.join(", ")))
    };
    let columns: Vec<Vec<String>> = (0..params.len()).map(|i| values(i, &unique)).collect();
    if columns.iter().map(Vec::len).product::<usize>() == unique.len() {
        return vec![text(&columns)];
    }
    let mut rests: Vec<Vec<String>> = Vec::new();
    for c in &unique {
        if !rests.contains(&c[1..].to_vec()) {
            rests.push(c[1..].to_vec());
        }
    }
    rests
        .iter()
        .map(|rest| {
            let of: Vec<Vec<String>> = unique
                .iter()
                .filter(|c| c[1..] == rest[..])
                .cloned()
                .collect();
            let mut columns = vec![values(0, &of)];
            columns.extend(rest.iter().map(|v| vec![v.clone()]));
            text(&columns)
        })
        .collect()
}

/// The rules for the interpreters explore did not see, before those for the ones it saw (the
/// first rule that matches wins, and a rule of an explored consumer, by its version share,
/// also matches a producer explore did not see): by version range and feature, what cannot
/// run is skipped, so the file also passes on interpreters beside those. On the explored
/// ones they skip what explore did not ask either. A protocol is skipped on the Pythons
/// before it (`sides`: the prefixes of the ends that pickle or unpickle); the C pickler on a
/// Python 3 without `_pickle` (PyPy before 8: 2.7 has `cPickle`) on the end that pickles
/// (`c_pickler`: its prefix), and the C unpickler on the end that loads (`c_unpickler`: the
/// `where` param naming it, or `""` when the load runs both unpicklers).
fn general_rules(
    out: &mut String,
    combos: &Combos,
    sides: &[&str],
    c_pickler: Option<&str>,
    c_unpickler: Option<&str>,
) {
    let mut rule = |selectors: &[String], where_: Option<String>, reason: &str| {
        let mut lines = selectors.to_vec();
        lines.extend(where_.map(|w| format!("where: {w}")));
        lines.push("outcome: skip".into());
        lines.push(format!("reason: {}", quote(reason)));
        for (i, line) in lines.iter().enumerate() {
            let _ = writeln!(out, "  {} {line}", if i == 0 { "-" } else { " " });
        }
    };
    for &protocol in &combos.protocols {
        let Some(since) = protocol_since(protocol) else {
            continue;
        };
        let (text, number) = (protocol_text(protocol), protocol_number(protocol));
        for side in sides {
            rule(
                &[format!("{side}python: \"<{since}\"")],
                Some(format!("{{protocol: {text}}}")),
                &format!("protocol {number} needs Python {since} or later"),
            );
        }
    }
    let no_c = |side: &str| {
        [
            format!("{side}python: \">=3\""),
            format!("{side}features: {{c_pickle: false}}"),
        ]
    };
    if let Some(side) = c_pickler.filter(|_| combos.picklers.contains(&Pickler::C)) {
        // A plain (parity) case runs both picklers: no `where`.
        let where_ = (!side.is_empty()).then(|| "{pickler: c}".to_string());
        rule(&no_c(side), where_, "no C pickler (_pickle) here");
    }
    if let Some(param) = c_unpickler {
        let where_ = (!param.is_empty()).then(|| format!("{{{param}: c}}"));
        rule(&no_c("load_"), where_, "no C unpickler (_pickle) here");
    }
}

/// With the default protocol among the case's, the skips of the Pythons whose default none
/// of the interpreters explored shares (`producer`: the prefix of the end that pickles): what
/// a dump without a protocol does there is what explore saw with another number (3.14's 5
/// where it saw 3.12's 4), which it does not know. The rules of the interpreters explored
/// stop where their default does ([`version_request`]).
fn default_protocol_rules(
    out: &mut String,
    combos: &Combos,
    producer: &str,
    pythons: &[Interpreter],
    value_version: (u64, u64),
) {
    if !combos.protocols.contains(&DEFAULT_PROTOCOL) {
        return;
    }
    let explored: Vec<&Interpreter> = pythons
        .iter()
        .filter(|p| applies(p, value_version))
        .collect();
    let seen: Vec<String> = {
        let mut numbers: Vec<u32> = explored
            .iter()
            .map(|p| default_protocol_era(series(p)).2)
            .collect();
        numbers.sort_unstable();
        numbers.dedup();
        numbers.iter().map(u32::to_string).collect()
    };
    let starts = std::iter::once(None).chain(DEFAULT_PROTOCOL_SINCE.iter().map(|e| Some(e.0)));
    for start in starts {
        let (from, to, number) = default_protocol_era(start.unwrap_or((2, 0)));
        if to.is_some_and(|to| to <= value_version)
            || explored
                .iter()
                .any(|p| default_protocol_era(series(p)).2 == number)
        {
            continue;
        }
        let range: Vec<String> = from
            .map(|f| format!(">={}", series_text(f)))
            .into_iter()
            .chain(to.map(|t| format!("<{}", series_text(t))))
            .collect();
        let where_ = if combos.protocols.len() > 1 {
            "\n    where: {protocol: default}"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  - {producer}python: \"{}\"{where_}\n    outcome: skip\n    reason: {}",
            range.join(","),
            quote(&format!(
                "the default protocol is {number} here; explore saw it only as {}",
                seen.join(" and ")
            ))
        );
    }
}

/// The first Python that has a protocol, where 2.7 has not: 3 came with 3.0, 4 with 3.4, 5
/// with 3.8.
fn protocol_since(protocol: u32) -> Option<&'static str> {
    match super::observe::protocol_number(protocol) {
        3 => Some("3"),
        4 => Some("3.4"),
        5 => Some("3.8"),
        _ => None,
    }
}

/// The load of an unpickler-parity case: what each unpickler makes of the same bytes, an
/// exception by its type (as the oracle compares them).
const UNPICKLER_PARITY: &str = r#"def attempt(which):
    try:
        return canon(loads_with(data, which))
    except Exception as e:
        return "raised " + type(e).__name__


c = attempt("c")
py = attempt("py")
assert c == py, "C unpickler: %s, Python unpickler: %s" % (c, py)
"#;

/// How a load is expected to end, when not with a pass: outcome and exception.
type Expected<'a> = Option<(&'static str, Option<&'a str>)>;

/// The rules of a round trip, first match winning: producers that were not asked (skip) or
/// could not pickle (the dump's outcome), consumers that were not asked, then each consumer
/// that did not load as pickled, for all producers at once where it did the same for all.
fn round_trip_rules(
    out: &mut String,
    (protocol, k, unpickler): (u32, Pickler, Option<Pickler>),
    obs: &Observation,
    pythons: &[Interpreter],
    value_version: (u64, u64),
) {
    let u = unpickler.unwrap_or(Pickler::Py);
    let mut w = format!(
        "{{protocol: {}, pickler: {}",
        protocol_text(protocol),
        k.as_str()
    );
    if let Some(u) = unpickler {
        let _ = write!(w, ", unpickler: {}", u.as_str());
    }
    w.push('}');
    let dumped = producer_rules(out, (protocol, k), &w, obs, pythons, value_version);
    for c in (0..pythons.len()).filter(|&i| applies(&pythons[i], value_version)) {
        let results: Vec<(usize, Expected)> = dumped
            .iter()
            .filter_map(|&p| obs.load((p, protocol, k, c, u)).map(|o| (p, o)))
            .map(|(p, o)| (p, failed(o, obs).map(|o| (outcome(o), exception(o)))))
            .collect();
        let not_asked = (!skipped_by_general_rules(&pythons[c], u))
            .then(|| not_asked(&pythons[c], protocol, u, "consumer"));
        let ends = (dump_end(protocol, k), load_end(c, u == Pickler::C));
        consumer_rules(out, ends, &results, &w, pythons, not_asked.as_deref());
    }
}

/// The rules of an unpickler-parity round trip: the producers' as in a round trip, then each
/// consumer whose two unpicklers disagree (`fail`; `timeout` or `crash` when one of them hung
/// or crashed), for all producers at once where it did the same with all; a consumer without
/// a C unpickler is skipped.
fn unpickler_parity_rules(
    out: &mut String,
    (protocol, k): (u32, Pickler),
    obs: &Observation,
    pythons: &[Interpreter],
    value_version: (u64, u64),
) {
    let w = format!(
        "{{protocol: {}, pickler: {}}}",
        protocol_text(protocol),
        k.as_str()
    );
    let dumped = producer_rules(out, (protocol, k), &w, obs, pythons, value_version);
    for c in (0..pythons.len()).filter(|&i| applies(&pythons[i], value_version)) {
        let results: Vec<(usize, Expected)> = dumped
            .iter()
            .filter_map(|&p| {
                let c_out = obs.load((p, protocol, k, c, Pickler::C))?;
                let py_out = obs.load((p, protocol, k, c, Pickler::Py))?;
                let differ = super::oracle::unpickler_disagreement(c_out, py_out);
                Some((p, differ.map(|_| parity_outcome(c_out, py_out))))
            })
            .collect();
        let not_asked = (!skipped_by_general_rules(&pythons[c], Pickler::C))
            .then(|| not_asked(&pythons[c], protocol, Pickler::C, "consumer"));
        // The load runs both unpicklers, the C one among them.
        let ends = (dump_end(protocol, k), load_end(c, true));
        consumer_rules(out, ends, &results, &w, pythons, not_asked.as_deref());
    }
}

/// How an unpickler-parity case's load ends where the two unpicklers disagree: the C
/// unpickler runs first, so its hang or crash is the load's, then the Python one's; else the
/// assertion fails.
fn parity_outcome(c: &Outcome, py: &Outcome) -> (&'static str, Option<&'static str>) {
    for o in [c, py] {
        match o {
            Outcome::Hang => return ("timeout", None),
            Outcome::Crash(_) => return ("crash", None),
            _ => {}
        }
    }
    ("fail", None)
}

/// The producer's end of a round trip's rule, whichever producer it names.
fn dump_end(protocol: u32, k: Pickler) -> End<'static> {
    End {
        side: "dump",
        python: 0,
        c: k == Pickler::C,
        default: protocol == DEFAULT_PROTOCOL,
    }
}

/// The consumer's end of a round trip's rule: `c`, it runs the C unpickler.
fn load_end(python: usize, c: bool) -> End<'static> {
    End {
        side: "load",
        python,
        c,
        default: false,
    }
}

/// The producers' rules of a round trip: a producer that was not asked is skipped, one that
/// could not pickle has its dump's outcome; the producers that pickled.
fn producer_rules(
    out: &mut String,
    (protocol, k): (u32, Pickler),
    w: &str,
    obs: &Observation,
    pythons: &[Interpreter],
    value_version: (u64, u64),
) -> Vec<usize> {
    let mut dumped = Vec::new();
    for p in (0..pythons.len()).filter(|&i| applies(&pythons[i], value_version)) {
        let end = End {
            python: p,
            ..dump_end(protocol, k)
        };
        match obs.dumps.get(&(p, protocol, k)) {
            None if skipped_by_general_rules(&pythons[p], k) => {}
            None => {
                let why = not_asked(&pythons[p], protocol, k, "producer");
                rule(out, &[end], pythons, w, None, "skip", None, &why);
            }
            Some(Outcome::Ok(..)) => dumped.push(p),
            Some(other) => rule(
                out,
                &[end],
                pythons,
                w,
                Some("dump"),
                outcome(other),
                exception(other),
                "what explore saw this producer do",
            ),
        }
    }
    dumped
}

/// A consumer's rules, from what it did with each producer's pickle (`None`: as expected):
/// skipped when it loaded none (`not_asked`: why; none when the general rules skip it
/// already), one rule when it did the same with all, else one per pair (`ends`: the
/// producer's end, whichever it names, and the consumer's).
fn consumer_rules(
    out: &mut String,
    (dump, load): (End, End),
    results: &[(usize, Expected)],
    w: &str,
    pythons: &[Interpreter],
    not_asked: Option<&str>,
) {
    let rule = |out: &mut String, sides: &[End], e: (&str, Option<&str>), why: &str| {
        rule(out, sides, pythons, w, None, e.0, e.1, why)
    };
    let Some(&(_, first)) = results.first() else {
        // The load's phase only: the dump is still judged by the producers' rules (a
        // producer that could not pickle has nothing for any consumer to load).
        if let Some(why) = not_asked {
            let (phase, outcome) = (Some("load"), "skip");
            self::rule(out, &[load], pythons, w, phase, outcome, None, why);
        }
        return;
    };
    if results.iter().all(|(_, e)| *e == first) {
        if let Some(e) = first {
            let why = "what explore saw this consumer do with every producer's pickle";
            rule(out, &[load], e, why);
        }
        return;
    }
    for &(p, e) in results {
        if let Some(e) = e {
            rule(
                out,
                &[End { python: p, ..dump }, load],
                e,
                "what explore saw this pair do",
            );
        }
    }
}

fn parity_rules(
    out: &mut String,
    protocol: u32,
    obs: &Observation,
    pythons: &[Interpreter],
    value_version: (u64, u64),
) {
    let w = format!("{{protocol: {}}}", protocol_text(protocol));
    let rule = |out: &mut String, i: usize, phase, outcome, exception, reason: &str| {
        // The one interpreter runs both picklers, the C one among them.
        let end = End {
            side: "",
            python: i,
            c: true,
            default: protocol == DEFAULT_PROTOCOL,
        };
        rule(out, &[end], pythons, &w, phase, outcome, exception, reason)
    };
    for i in (0..pythons.len()).filter(|&i| applies(&pythons[i], value_version)) {
        let c = obs.dumps.get(&(i, protocol, Pickler::C));
        let py = obs.dumps.get(&(i, protocol, Pickler::Py));
        match (c, py) {
            (Some(Outcome::Ok(_, a)), Some(Outcome::Ok(_, b))) if a != b => {
                rule(out, i, None, "fail", None, "the two picklers differ here")
            }
            (Some(Outcome::Ok(..)), Some(Outcome::Ok(..))) => {}
            // A Python 3 without `_pickle`: the general skip, placed first, decides.
            (None, _) if skipped_by_general_rules(&pythons[i], Pickler::C) => {}
            (Some(o @ (Outcome::Error(..) | Outcome::Hang | Outcome::Crash(_))), _)
            | (Some(_), Some(o)) => rule(
                out,
                i,
                None,
                outcome(o),
                exception(o),
                "what explore saw this interpreter do",
            ),
            _ => rule(
                out,
                i,
                None,
                "skip",
                None,
                &not_asked(&pythons[i], protocol, Pickler::C, "interpreter"),
            ),
        }
    }
}

/// The case applies to the interpreter (it can build the value).
pub fn applies(python: &Interpreter, version: (u64, u64)) -> bool {
    let r = python.version.release();
    (r[0], r.get(1).copied().unwrap_or(0)) >= version
}

/// The consumer's outcome when it is not the pickled value as it was.
fn failed<'a>(o: &'a Outcome, obs: &Observation) -> Option<&'a Outcome> {
    match o {
        Outcome::Ok(canon, _) if Some(&**canon) == super::oracle::reference(obs) => None,
        other => Some(other),
    }
}

fn outcome(o: &Outcome) -> &'static str {
    match o {
        Outcome::Ok(..) => "fail",
        Outcome::Error(t, ..) => raised(t),
        Outcome::Hang => "timeout",
        Outcome::Crash(_) => "crash",
    }
}

/// The outcome a run that raised `exception` has (docs/case-format.md, "Outcomes"): `fail` for
/// an `AssertionError` (pickle.py's own asserts, such as `memoize`'s), `error` for any other.
pub fn raised(exception: &str) -> &'static str {
    if exception == "AssertionError" {
        "fail"
    } else {
        "error"
    }
}

fn exception(o: &Outcome) -> Option<&str> {
    match o {
        Outcome::Error(t, ..) => Some(t),
        _ => None,
    }
}

/// The general skip of the C pickler or unpickler ([`general_rules`]: a Python 3 without
/// `_pickle`) already decides the runs of `python` with `pickler`: a rule of its own saying
/// so again would only lengthen the file.
fn skipped_by_general_rules(python: &Interpreter, pickler: Pickler) -> bool {
    pickler == Pickler::C
        && python
            .version
            .release()
            .first()
            .is_some_and(|&major| major >= 3)
        && python.c_pickle.is_none()
        && !python.c_pickle_used
}

fn not_asked(python: &Interpreter, protocol: u32, pickler: Pickler, side: &str) -> String {
    let number = super::observe::protocol_number(protocol);
    if number > super::observe::protocols(python) && protocol != DEFAULT_PROTOCOL {
        format!("this {side} has no protocol {number}")
    } else if !Pickler::of(python).contains(&pickler) {
        format!("this {side} has no C pickler")
    } else {
        format!("explore did not ask this {side}")
    }
}

/// One end of a rule: the prefix of its keys (`dump`, `load`, or `""` in a plain case), the
/// interpreter explored there, and what the rule's runs do at that end.
#[derive(Debug, Clone, Copy)]
pub(super) struct End<'a> {
    pub side: &'a str,
    pub python: usize,
    /// The end runs the C pickler or unpickler. The rule names the `c_pickle` feature only
    /// where that decides what happens: an interpreter without one (`c_pickle: false`, the
    /// run skipped). Where it has one, the general skips placed before every rule already
    /// keep the interpreters without one away, and an end running the Python pickler never
    /// depends on it (PyPy 8, which has `_pickle`, behaves there as the PyPy 3.9 explored).
    pub c: bool,
    /// The end pickles with the default protocol: its versions stop where pickle's default
    /// changes ([`default_protocol_era`]).
    pub default: bool,
}

impl<'a> End<'a> {
    /// An end whose runs use neither the C pickler nor the default protocol.
    pub(super) fn plain(side: &'a str, python: usize) -> Self {
        End {
            side,
            python,
            c: false,
            default: false,
        }
    }
}

/// One rule naming each interpreter exactly: version, implementation and the features that
/// tell it apart, with the prefix of its side (`dump_`, `load_`, or none).
#[allow(clippy::too_many_arguments)]
pub(super) fn rule(
    out: &mut String,
    sides: &[End],
    pythons: &[Interpreter],
    where_: &str,
    phase: Option<&str>,
    outcome: &str,
    exception: Option<&str>,
    reason: &str,
) {
    let mut first = true;
    let mut line = |out: &mut String, text: String| {
        let _ = writeln!(out, "  {} {text}", if first { "-" } else { " " });
        first = false;
    };
    for end in sides {
        let p = &pythons[end.python];
        let prefix = if end.side.is_empty() {
            String::new()
        } else {
            format!("{}_", end.side)
        };
        if let Some(versions) = version_request(pythons, end.python, end.default) {
            line(out, format!("{prefix}python: \"{versions}\""));
        }
        line(out, format!("{prefix}implementation: {}", p.implementation));
        let (debug, free_threaded) = told_apart(pythons, p);
        let mut features = Vec::new();
        if end.c && !Pickler::of(p).contains(&Pickler::C) {
            features.push("c_pickle: false".to_string());
        }
        if debug {
            features.push(format!("debug: {}", p.debug));
        }
        if free_threaded {
            features.push(format!("free_threaded: {}", p.free_threaded));
        }
        if !features.is_empty() {
            line(
                out,
                format!("{prefix}features: {{{}}}", features.join(", ")),
            );
        }
    }
    line(out, format!("where: {where_}"));
    if let Some(phase) = phase {
        line(out, format!("phase: {phase}"));
    }
    line(out, format!("outcome: {outcome}"));
    if let Some(e) = exception {
        line(out, format!("exception: {}", quote(e)));
    }
    line(
        out,
        format!(
            "reason: {}",
            quote(&format!(
                "{reason} ({})",
                sides
                    .iter()
                    .map(|end| pythons[end.python].label.as_str())
                    .collect::<Vec<_>>()
                    .join(" -> ")
            ))
        ),
    );
}

/// Whether the rules of `p` name its `debug` and its `free_threaded` feature: only where
/// another interpreter of its implementation differs in it. Else a debug build (or a
/// free-threaded one) explore did not see behaves as the release build it saw, and the other
/// way round.
fn told_apart(pythons: &[Interpreter], p: &Interpreter) -> (bool, bool) {
    let mut same = pythons
        .iter()
        .filter(|q| q.implementation == p.implementation);
    let debug = same.clone().any(|q| q.debug != p.debug);
    (debug, same.any(|q| q.free_threaded != p.free_threaded))
}

/// A Python series: major and minor version.
type Series = (u64, u64);

/// The Python series from which `pickle.dumps` uses each default protocol when none is named:
/// 0 before them, 3 from 3.0, 4 from 3.8, 5 from 3.14 (`pickle.DEFAULT_PROTOCOL`, the same on
/// PyPy of the same series).
const DEFAULT_PROTOCOL_SINCE: [((u64, u64), u32); 3] = [((3, 0), 3), ((3, 8), 4), ((3, 14), 5)];

/// Where the default protocol of `series` holds: the series it starts at (none: from the
/// oldest) and the one where the next starts (none: to the newest), and its number.
fn default_protocol_era(series: Series) -> (Option<Series>, Option<Series>, u32) {
    let at = DEFAULT_PROTOCOL_SINCE
        .iter()
        .filter(|(since, _)| series >= *since)
        .count();
    let start = at.checked_sub(1).map(|i| DEFAULT_PROTOCOL_SINCE[i].0);
    let number = at.checked_sub(1).map_or(0, |i| DEFAULT_PROTOCOL_SINCE[i].1);
    (start, DEFAULT_PROTOCOL_SINCE.get(at).map(|e| e.0), number)
}

fn series(q: &Interpreter) -> (u64, u64) {
    let r = q.version.release();
    (r[0], r.get(1).copied().unwrap_or(0))
}

/// `>=3.8`, `>=3`: a lower bound at the start of a series.
fn series_text((major, minor): (u64, u64)) -> String {
    if minor == 0 && major >= 3 {
        format!("{major}")
    } else {
        format!("{major}.{minor}")
    }
}

/// The versions a rule names for `pythons[i]`, as the interpreters explored bound them. The
/// interpreters of one implementation and features (what the rule's other selectors match,
/// [`told_apart`]) share out every version between them, in the order of their versions: each
/// has the series after the one before it up to its own (`>=3.9,<3.13` for 3.12 after 3.8),
/// the first everything before, the last everything after. So a file written from a few
/// interpreters also speaks for those between and around them, as if each behaved as the
/// nearest explored one above it (the last: below it); where that is not so, the file fails
/// there. Two of one series are told apart by their exact versions (`>3.11.2,<=3.11.7`).
/// `default`, for the end that pickles with the default protocol: what it did holds only
/// where pickle's default is the number it had, so the versions are shared out within that
/// span alone and stop where a span another explored interpreter had begins (`<3.14` for 3.8
/// beside 3.14); the spans no interpreter explored are skipped before every rule
/// ([`default_protocol_rules`]), so toward them the share is its numbered protocols' (`>=3`
/// for 3.12 beside 2.7). `None`: every version.
fn version_request(pythons: &[Interpreter], i: usize, default: bool) -> Option<String> {
    let p = &pythons[i];
    let (debug, free_threaded) = told_apart(pythons, p);
    let era = |q: &Interpreter| default.then(|| default_protocol_era(series(q)).2);
    let kind = |q: &Interpreter| {
        (
            q.implementation,
            debug && q.debug,
            free_threaded && q.free_threaded,
            era(q),
        )
    };
    let kin_of = |kind: &dyn Fn(&Interpreter) -> bool| {
        let mut kin: Vec<&Interpreter> = pythons.iter().filter(|q| kind(q)).collect();
        kin.sort_by(|a, b| a.version.cmp(&b.version));
        kin.dedup_by(|a, b| a.version == b.version);
        kin
    };
    let kin = kin_of(&|q| kind(q) == kind(p));
    let at = kin.iter().position(|q| q.version == p.version)?;
    let pre = |q: &Interpreter| {
        q.version
            .to_string()
            .chars()
            .any(|c| c.is_ascii_alphabetic())
    };
    // The spans of a default protocol the interpreters explored had, by their place in
    // `DEFAULT_PROTOCOL_SINCE` (0: before its first); where span `j` starts.
    let span = |q: &Interpreter| {
        DEFAULT_PROTOCOL_SINCE
            .iter()
            .filter(|(since, _)| series(q) >= *since)
            .count()
    };
    let start = |j: usize| DEFAULT_PROTOCOL_SINCE[j - 1].0;
    let explored: Vec<usize> = pythons.iter().map(span).collect();
    let mut bounds = Vec::new();
    match at.checked_sub(1).map(|j| kin[j]) {
        Some(prev) if series(prev) == series(p) || pre(p) => {
            bounds.push(format!(">{}", prev.version));
        }
        Some(prev) if series(prev).0 < series(p).0 => {
            bounds.push(format!(">={}", series(p).0));
        }
        Some(prev) => {
            let (major, minor) = series(prev);
            bounds.push(format!(">={major}.{}", minor + 1));
        }
        // The default's span stops where the nearest explored one below ends (those between,
        // which none explored, are skipped before this rule).
        None if default => {
            let below = explored.iter().copied().filter(|&j| j < span(p)).max();
            match below.map(|j| start(j + 1)) {
                // A pre-release of the series where the span starts is below its `>=`.
                Some(s) if pre(kin[0]) && series(kin[0]) == s => {
                    bounds.push(format!(">={}", kin[0].version));
                }
                Some(s) => bounds.push(format!(">={}", series_text(s))),
                None => {}
            }
        }
        None => {}
    }
    match kin.get(at + 1) {
        Some(next) if series(next) == series(p) => bounds.push(format!("<={}", p.version)),
        Some(next) if series(next).0 > series(p).0 => {
            bounds.push(format!("<{}", series(next).0));
        }
        Some(_) => {
            let (major, minor) = series(p);
            bounds.push(format!("<{major}.{}", minor + 1));
        }
        // Where the nearest explored span of the default above starts; or, where the series
        // after this one is in a later span (the spans between, which none explored, are
        // skipped before this rule), where its numbered share ends (`<3` for 2.7, as in the
        // rules of its numbered protocols).
        None if default => {
            let above = explored.iter().copied().filter(|&j| j > span(p)).min();
            let alike = |q: &Interpreter| {
                let (k, p) = (kind(q), kind(p));
                (k.0, k.1, k.2) == (p.0, p.1, p.2)
            };
            let numbered = kin_of(&alike)
                .into_iter()
                .find(|q| q.version > p.version)
                .map(|next| match (series(next), series(p)) {
                    (n, s) if n.0 > s.0 => (n.0, 0),
                    (_, (major, minor)) => (major, minor + 1),
                })
                .filter(|&end| {
                    let at_end = DEFAULT_PROTOCOL_SINCE
                        .iter()
                        .filter(|(since, _)| end >= *since)
                        .count();
                    at_end > span(p)
                });
            match (numbered, above) {
                (Some(end), _) => bounds.push(format!("<{}", series_text(end))),
                (None, Some(j)) => bounds.push(format!("<{}", series_text(start(j)))),
                (None, None) => {}
            }
        }
        None => {}
    }
    (!bounds.is_empty()).then(|| bounds.join(","))
}

pub(super) fn block(out: &mut String, key: &str, text: &str) {
    let _ = writeln!(out, "{key}: |");
    for line in text.lines() {
        if line.is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "  {line}");
        }
    }
}

/// A YAML double-quoted scalar (JSON's quoting is YAML's).
pub(super) fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("a string")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The case file of the unpickler-parity finding `obs` shows, at protocol 0 with the C
    /// pickler, written as value 7 of seed 1.
    fn unpickler_parity_case(
        obs: &Observation,
        value: &Value,
        pythons: &[Interpreter],
        sides: &str,
    ) -> String {
        let finding = super::super::oracle::findings(obs)
            .into_iter()
            .find(|f| f.oracle == Oracle::UnpicklerParity)
            .expect("an unpickler-parity finding");
        let combos = Combos {
            protocols: vec![0],
            picklers: vec![Pickler::C],
            unpicklers: vec![],
        };
        let params = Params {
            case: combos.clone(),
            seen: combos,
        };
        let origin = Origin { seed: 1, index: 7 };
        write(&finding, &params, value, obs, pythons, &origin, sides)
    }
    use crate::python::Implementation;

    fn python(implementation: Implementation, version: &str, c: bool, label: &str) -> Interpreter {
        let mut p = Interpreter::for_tests(implementation, version);
        p.label = label.into();
        p.c_pickle = c.then(|| "_pickle".to_string());
        p.c_pickle_used = c;
        p.pickle_highest_protocol = Some(5);
        p
    }

    /// The interpreters of one kind share out the versions between them; two of one series
    /// are told apart by their exact versions; one alone of its kind is every version.
    #[test]
    fn rules_name_version_ranges_bounded_by_the_interpreters_explored() {
        let c = |v: &str| python(Implementation::Cpython, v, true, v);
        let mut debug = c("3.11.2");
        debug.debug = true;
        let pythons = vec![
            c("3.12.1"),
            c("3.8.18"),
            c("3.11.2"),
            c("3.11.7"),
            c("3.15.0a2"),
            debug,
            python(Implementation::Cpython, "2.7.18", false, "2.7"),
        ];
        let got: Vec<Option<String>> = (0..pythons.len())
            .map(|i| version_request(&pythons, i, false))
            .collect();
        // 2.7, whose `pickle.Pickler` is not the C one, shares the versions with the others.
        let want = [
            Some(">=3.12,<3.13"),
            Some(">=3,<3.9"),
            Some(">=3.9,<=3.11.2"),
            Some(">3.11.2,<3.12"),
            Some(">3.12.1"),
            None,
            Some("<3"),
        ];
        assert_eq!(got, want.map(|w| w.map(str::to_string)));
        let contains = |req: &str, v: &str| {
            req.parse::<crate::version::VersionRequest>()
                .expect("a version request")
                .contains(&crate::version::PythonVersion::parse(v).expect("a version"))
        };
        assert!(contains(">3.12.1", "3.15.0a2") && contains(">3.12.1", "3.14.0"));
        assert!(contains(">=3.9,<=3.11.2", "3.10.13") && !contains(">=3.9,<=3.11.2", "3.11.7"));
        assert!(!contains(">=3.12,<3.13", "3.13.0"));
        // The debug build is told apart where a release build of its kind was explored too.
        assert_eq!(told_apart(&pythons, &pythons[5]), (true, false));
        assert_eq!(told_apart(&pythons[..5], &pythons[0]), (false, false));
        assert_eq!(told_apart(&pythons[5..6], &pythons[5]), (false, false));
    }

    /// Protocol 5 out of band is written `oob` and skipped where protocol 5 is, on the Pythons
    /// before 3.8 (the reason says 5); an interpreter without protocol 5 has no protocol 5,
    /// whichever of the two it was not asked.
    #[test]
    fn out_of_band_is_protocol_5_in_the_rules() {
        use crate::explore::observe::OOB_PROTOCOL;
        let combos = Combos {
            protocols: vec![5, OOB_PROTOCOL],
            picklers: vec![Pickler::Py],
            unpicklers: vec![],
        };
        let mut out = String::new();
        general_rules(&mut out, &combos, &["dump_"], None, None);
        assert!(
            out.contains("where: {protocol: oob}")
                && out.contains("where: {protocol: 5}")
                && !out.contains("105"),
            "{out}"
        );
        assert_eq!(
            out.matches("protocol 5 needs Python 3.8 or later").count(),
            2
        );
        assert_eq!(
            dimensions(&combos, false, false)[0].1,
            vec!["5".to_string(), "oob".to_string()]
        );
        let mut old = python(Implementation::Cpython, "3.7.16", true, "3.7");
        old.pickle_highest_protocol = Some(4);
        assert_eq!(
            not_asked(&old, OOB_PROTOCOL, Pickler::Py, "producer"),
            "this producer has no protocol 5"
        );
        let default = crate::explore::observe::DEFAULT_PROTOCOL;
        assert_eq!(
            not_asked(&old, default, Pickler::Py, "producer"),
            "explore did not ask this producer"
        );
    }

    /// CPython 3.12 pickles; PyPy 8's C unpickler refuses what its Python one loads; PyPy 3.9
    /// has no C unpickler.
    #[test]
    fn an_unpickler_parity_case_fails_where_the_two_disagree_and_skips_one_unpickler() {
        let pythons = vec![
            python(Implementation::Cpython, "3.12.1", true, "cpython-3.12.1"),
            python(Implementation::Pypy, "3.11.17", true, "pypy-3.11.17"),
            python(Implementation::Pypy, "3.9.16", false, "pypy-3.9.16"),
        ];
        let value = Value::Float(f64::NEG_INFINITY);
        let loaded = Outcome::Ok("[\"float\",\"-inf\"]".into(), None);
        let mut obs = Observation::default();
        for p in 0..3 {
            obs.canon.insert(p, Ok("[\"float\",\"-inf\"]".into()));
        }
        obs.dumps
            .insert((0, 0, Pickler::C), Outcome::Ok("46".into(), None));
        for (c, u, o) in [
            (0, Pickler::C, loaded.clone()),
            (0, Pickler::Py, loaded.clone()),
            (
                1,
                Pickler::C,
                Outcome::Error("ValueError".into(), "no".into(), String::new()),
            ),
            (1, Pickler::Py, loaded.clone()),
            (2, Pickler::Py, loaded.clone()),
        ] {
            obs.insert_load((0, 0, Pickler::C, c, u), o);
        }
        let text = unpickler_parity_case(&obs, &value, &pythons, "pypy 3.11");
        assert!(
            text.contains("attempt(\"c\")") && text.contains("attempt(\"py\")"),
            "{text}"
        );
        let rules = &text[text.find("expect:\n").expect("rules")..];
        // PyPy 8 fails; CPython passes (no rule); PyPy 3.9 is skipped by the general rules;
        // 3.12's Python pickler and the other producers were not asked.
        assert!(
            rules.contains(
                "load_python: \">=3.10\"\n    load_implementation: pypy\n    outcome: fail"
            ) && rules.contains("outcome: fail")
                && rules.contains("(pypy-3.11.17)"),
            "{rules}"
        );
        // PyPy 3.9's load is left to the general skip of a consumer without `_pickle`.
        assert!(!rules.contains("this consumer has no C pickler"), "{rules}");
        assert!(!rules.contains("load_implementation: cpython"), "{rules}");
        assert_eq!(rules.matches("outcome: fail").count(), 1, "{rules}");
    }

    /// A case runs the combination its params hold, not every one its cause showed with:
    /// no rule names a protocol it does not run, and the description names the others.
    #[test]
    fn rules_and_params_are_the_chosen_combinations_alone() {
        let pythons = vec![
            python(Implementation::Cpython, "2.7.18", true, "cpython-2.7.18"),
            python(Implementation::Cpython, "3.12.1", true, "cpython-3.12.1"),
        ];
        let value = Value::Float(1.5);
        let mut obs = Observation::default();
        for p in 0..2 {
            obs.canon.insert(p, Ok("[\"float\",\"1.5\"]".into()));
            obs.dumps
                .insert((p, 1, Pickler::Py), Outcome::Ok("46".into(), None));
        }
        let refused = Outcome::Error("UnicodeDecodeError".into(), "no".into(), String::new());
        obs.insert_load((0, 1, Pickler::Py, 1, Pickler::Py), refused);
        let finding = Finding {
            oracle: Oracle::LoadDiffers,
            protocol: 1,
            pickler: Pickler::Py,
            unpickler: Some(Pickler::Py),
            observed: "UnicodeDecodeError".into(),
            cause: "UnicodeDecodeError".into(),
            producers: [0].into(),
            consumers: [1].into(),
            witness: None,
            detail: "UnicodeDecodeError: no".into(),
            sites: Default::default(),
        };
        let params = Params {
            case: Combos {
                protocols: vec![1],
                picklers: vec![Pickler::Py],
                unpicklers: vec![Pickler::Py],
            },
            seen: Combos {
                protocols: vec![1, 3, 4, DEFAULT_PROTOCOL],
                picklers: vec![Pickler::C, Pickler::Py],
                unpicklers: vec![Pickler::Py],
            },
        };
        let origin = Origin { seed: 1, index: 7 };
        let text = write(
            &finding, &params, &value, &obs, &pythons, &origin, "2.7 > 3",
        );
        assert!(
            text.contains("  protocol: [1]\n  pickler: [py]\n  unpickler: [py]\n"),
            "{text}"
        );
        let rules = &text[text.find("expect:\n").expect("rules")..];
        assert!(
            !rules.contains("protocol 3")
                && !rules.contains("default")
                && !rules.contains("c_pickle"),
            "{rules}"
        );
        assert!(
            rules.contains("exception: \"UnicodeDecodeError\""),
            "{rules}"
        );
        assert!(
            text.contains("The case runs protocol 1, the Python pickler and unpickler, which shows it on the most interpreter pairs; explore also saw it with protocols 3, 4, default, the C pickler"),
            "{text}"
        );
        assert!(text.contains("with protocols 1, 3, 4, default"), "{text}");
    }

    /// The general skips come before every rule of an explored interpreter: PyPy 8's `fail`
    /// (a consumer's rule, naming no producer) also matches a producer explore did not see,
    /// PyPy 3.9 say, whose C pickler is missing; the first rule that matches it must be the
    /// skip (it was the `fail`, a regression when the dump raised `No module named '_pickle'`).
    #[test]
    fn general_skips_match_before_the_explored_rules() {
        let pythons = vec![
            python(Implementation::Cpython, "3.12.1", true, "cpython-3.12.1"),
            python(Implementation::Pypy, "3.11.17", true, "pypy-3.11.17"),
        ];
        let loaded = Outcome::Ok("[\"float\",\"-inf\"]".into(), None);
        let mut obs = Observation::default();
        for p in 0..2 {
            obs.canon.insert(p, Ok("[\"float\",\"-inf\"]".into()));
            obs.dumps
                .insert((p, 0, Pickler::C), Outcome::Ok("46".into(), None));
            obs.insert_load((p, 0, Pickler::C, 0, Pickler::C), loaded.clone());
            obs.insert_load((p, 0, Pickler::C, 0, Pickler::Py), loaded.clone());
            let no = Outcome::Error("ValueError".into(), "no".into(), "_pickle".into());
            obs.insert_load((p, 0, Pickler::C, 1, Pickler::C), no);
            obs.insert_load((p, 0, Pickler::C, 1, Pickler::Py), loaded.clone());
        }
        let value = Value::Float(f64::NEG_INFINITY);
        let text = unpickler_parity_case(&obs, &value, &pythons, "pypy");
        let rules = &text[text.find("expect:\n").expect("rules")..];
        let at = |what: &str| {
            rules
                .find(what)
                .unwrap_or_else(|| panic!("{what}: {rules}"))
        };
        let fail = at("outcome: fail");
        assert!(at("no C pickler (_pickle) here") < fail, "{rules}");
        assert!(at("no C unpickler (_pickle) here") < fail, "{rules}");
        assert!(
            !rules[fail..].contains("outcome: skip"),
            "every skip first: {rules}"
        );
    }

    /// Version shares that meet join; those that do not, or that are every version, are
    /// said so.
    #[test]
    fn version_shares_that_meet_join() {
        let some = |r: &str| Some(Some(r.to_string()));
        assert_eq!(union("<3.7", ">=3.7,<3.9"), some("<3.9"));
        assert_eq!(union(">=3.9,<3.13", ">=3.7,<3.9"), some(">=3.7,<3.13"));
        assert_eq!(union("<3.9", ">=3.9"), Some(None));
        assert_eq!(
            union(">3.11.2,<3.12", ">=3.9,<=3.11.2"),
            some(">=3.9,<3.12")
        );
        assert_eq!(union("<3.7", ">=3.9"), None);
        assert_eq!(union("<=3.7", ">=3.7"), None);
        let rule = |range: &str, who: &str| {
            vec![
                format!("load_python: \"{range}\""),
                "load_implementation: cpython".to_string(),
                "outcome: fail".to_string(),
                format!("reason: \"what explore saw ({who})\""),
            ]
        };
        let mut first = rule("<3.7", "cpython-3.6.15");
        assert!(join(&mut first, &rule(">=3.7,<3.9", "cpython-3.8.18")));
        assert_eq!(first, rule("<3.9", "cpython-3.6.15, cpython-3.8.18"));
        assert!(!join(&mut first, &rule(">=3.13", "cpython-3.14.1")));
        assert!(join(&mut first, &rule(">=3.9", "cpython-3.12.1")));
        assert_eq!(
            first[0], "load_implementation: cpython",
            "every version: no range"
        );
    }

    /// The rules of a round trip with `pickler`/`unpickler` of PyPy 3.9 (no `_pickle`) on
    /// both ends: an error of its Python pickler's pickles on 2.7.
    fn pypy_rules(k: Pickler, u: Pickler) -> String {
        let pythons = vec![
            python(Implementation::Cpython, "2.7.18", false, "cpython-2.7.18"),
            python(Implementation::Pypy, "3.9.16", false, "pypy-3.9.16"),
        ];
        let mut obs = Observation::default();
        for p in 0..2 {
            obs.canon.insert(p, Ok("[\"int\",\"1\"]".into()));
            obs.dumps
                .insert((p, 2, Pickler::Py), Outcome::Ok("80".into(), None));
        }
        let loaded = Outcome::Ok("[\"int\",\"1\"]".into(), None);
        let error = Outcome::Error("TypeError".into(), "no".into(), String::new());
        for p in 0..2 {
            obs.insert_load((p, 2, Pickler::Py, 0, Pickler::Py), error.clone());
            obs.insert_load((p, 2, Pickler::Py, 1, Pickler::Py), loaded.clone());
        }
        let mut out = String::new();
        round_trip_rules(&mut out, (2, k, Some(u)), &obs, &pythons, (2, 7));
        out
    }

    /// A rule names `c_pickle` only where the C pickler or unpickler of its end runs: not for
    /// PyPy 3.9's Python pickler, so PyPy 8 (`_pickle` there) falls under it too; its C
    /// pickler, which it has not, is left to the general skip.
    #[test]
    fn c_pickle_is_named_only_where_the_end_runs_the_c_pickler() {
        let py = pypy_rules(Pickler::Py, Pickler::Py);
        assert!(!py.contains("c_pickle"), "{py}");
        assert!(
            py.contains("  - load_implementation: cpython\n    where")
                && py.contains("outcome: error"),
            "{py}"
        );
        // Its C pickler, which it has not: the general skip (a Python 3 without `_pickle`)
        // decides those runs, and no rule of PyPy 3.9's says so again.
        let c = pypy_rules(Pickler::C, Pickler::Py);
        assert!(!c.contains("no C pickler (pypy-3.9.16)"), "{c}");
        assert!(!c.contains("c_pickle: true"), "{c}");
        assert!(skipped_by_general_rules(
            &python(Implementation::Pypy, "3.9.16", false, "p"),
            Pickler::C
        ));
        assert!(!skipped_by_general_rules(
            &python(Implementation::Pypy, "3.9.16", false, "p"),
            Pickler::Py
        ));
        assert!(!skipped_by_general_rules(
            &python(Implementation::Pypy, "3.11.17", true, "p"),
            Pickler::C
        ));
        let rule_of = |who: &Interpreter| {
            let pypy8 = python(Implementation::Pypy, "3.11.17", true, "pypy-3.11.17");
            let pythons = vec![who.clone(), pypy8];
            let end = End::plain("load", 0);
            let mut out = String::new();
            rule(&mut out, &[end], &pythons, "{}", None, "fail", None, "seen");
            out
        };
        // PyPy 3.9 and PyPy 8 share PyPy's versions, whatever their `_pickle`.
        let pypy39 = python(Implementation::Pypy, "3.9.16", false, "pypy-3.9.16");
        assert!(rule_of(&pypy39).starts_with("  - load_python: \"<3.10\"\n"));
    }

    /// The end that pickles with the default protocol has the versions of its default
    /// protocol only: 3.12's rules stop at 3.8 and 3.14, 3.6's span 3.0 to 3.7; a
    /// pre-release starting a span is in it.
    #[test]
    fn default_protocol_rules_stop_where_the_default_changes() {
        let c = |v: &str| python(Implementation::Cpython, v, true, v);
        let pythons = vec![
            python(Implementation::Cpython, "2.7.18", false, "2.7"),
            c("3.6.15"),
            c("3.12.1"),
            c("3.14.0rc1"),
        ];
        let got = |default: bool| -> Vec<Option<String>> {
            (0..pythons.len())
                .map(|i| version_request(&pythons, i, default))
                .collect()
        };
        let some = |r: &str| Some(r.to_string());
        assert_eq!(
            got(true),
            [
                some("<3"),
                some(">=3,<3.8"),
                some(">=3.8,<3.14"),
                some(">=3.14.0rc1")
            ]
        );
        assert_eq!(
            got(false),
            [
                some("<3"),
                some(">=3,<3.7"),
                some(">=3.7,<3.13"),
                some(">3.12.1")
            ]
        );
        // Toward a span no interpreter explored, the share runs on (that span's runs are
        // skipped first): from 2.7 and 3.12, 3.12's default rules are its numbered ones'.
        let two = [pythons[0].clone(), pythons[2].clone()];
        assert_eq!(version_request(&two, 1, true), some(">=3"));
        assert_eq!(version_request(&two, 1, false), some(">=3"));
        let two = [c("3.8.18"), c("3.14.10")];
        assert_eq!(version_request(&two, 0, true), some("<3.14"));
        assert_eq!(version_request(&two, 0, false), some("<3.9"));
        let contains = |req: &str, v: &str| {
            req.parse::<crate::version::VersionRequest>()
                .expect("a version request")
                .contains(&crate::version::PythonVersion::parse(v).expect("a version"))
        };
        assert!(contains(">=3.14.0rc1", "3.14.0rc1") && contains(">=3.14.0rc1", "3.15.2"));
        assert!(!contains(">=3.8,<3.14", "3.14.10") && contains(">=3.8,<3.14", "3.8.18"));
        assert_eq!(default_protocol_era((2, 7)), (None, Some((3, 0)), 0));
        assert_eq!(
            default_protocol_era((3, 13)),
            (Some((3, 8)), Some((3, 14)), 4)
        );
        assert_eq!(default_protocol_era((3, 15)), (Some((3, 14)), None, 5));
    }

    /// The default's spans no interpreter explored are skipped, before every other rule; a
    /// value only 3.8 builds has no span before 3.8; without `default` among the protocols,
    /// nothing.
    #[test]
    fn spans_of_a_default_protocol_no_interpreter_explored_are_skipped() {
        let pythons = vec![
            python(Implementation::Cpython, "2.7.18", false, "2.7"),
            python(Implementation::Cpython, "3.12.1", true, "3.12"),
            python(Implementation::Pypy, "3.9.16", false, "pypy"),
        ];
        let combos = |protocols: Vec<u32>| Combos {
            protocols,
            picklers: vec![Pickler::Py],
            unpicklers: vec![],
        };
        let skips = |protocols: Vec<u32>, version| {
            let mut out = String::new();
            default_protocol_rules(&mut out, &combos(protocols), "dump_", &pythons, version);
            out
        };
        let all = skips(vec![2, DEFAULT_PROTOCOL], (2, 7));
        assert_eq!(
            all,
            "  - dump_python: \">=3,<3.8\"\n    where: {protocol: default}\n    outcome: skip\n    reason: \"the default protocol is 3 here; explore saw it only as 0 and 4\"\n  - dump_python: \">=3.14\"\n    where: {protocol: default}\n    outcome: skip\n    reason: \"the default protocol is 5 here; explore saw it only as 0 and 4\"\n"
        );
        let newer = skips(vec![DEFAULT_PROTOCOL], (3, 8));
        assert!(
            newer.starts_with("  - dump_python: \">=3.14\"\n    outcome: skip\n")
                && newer.matches("- ").count() == 1,
            "{newer}"
        );
        assert_eq!(skips(vec![2, 4], (2, 7)), "");
    }
}
