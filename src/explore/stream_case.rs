//! A finding of `explore --streams` written as a case file: a plain case whose code holds the
//! stream's bytes and loads them with the unpickler of its param (`c`, `py`, and `dis` for
//! `pickletools.dis` when it disagrees), comparing what loaded with what most of the loads
//! gave; its rules, written through [`super::case`]'s rule writer, are what each interpreter
//! was seen to do, so that the file passes with `crosspickle run` on them and
//! `crosspickle repro` makes a plain script of it.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::case::{block, quote, raised, rule, End};
use super::source;
use super::stream;
use super::streams::{Finding, Reader, Seen};
use super::worker::PRELUDE;
use crate::python::Interpreter;

const LOAD: &str = r#"import hashlib


class _Discard(object):
    def write(self, text):
        pass


def load(data, unpickler):
    if unpickler == "dis":
        import pickletools
        pickletools.dis(data, out=_Discard())
        return None
    text = canon(loads_with(data, unpickler))
    if want_hash is None:
        return text
    if not isinstance(text, bytes):
        text = text.encode("utf-8")
    return hashlib.sha1(text).hexdigest()[:16]
"#;

/// The load of a case one of whose loads ran out of memory (or crashed) under explore: under
/// the same limit of memory (`memory` bytes beyond what the process holds, as `streams.py`
/// sets it in its children), given back after the load, so that the case neither allocates
/// without bound under `crosspickle run` nor leaves its process limited. An error near the
/// limit is a `MemoryError`, as explore reports it. Where the address space cannot be read or
/// limited (no `/proc`, no `resource`), the stream is not loaded: a `RuntimeError`.
const LIMITED: &str = r#"

def _peak():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmPeak:"):
                return int(line.split()[1]) * 1024
    return 0


def limited(fn, *args):
    try:
        import resource
        with open("/proc/self/statm") as f:
            now = int(f.read().split()[0]) * resource.getpagesize()
        before = _peak()
    except Exception as e:
        raise RuntimeError("no limit of memory here (%s): the stream is not loaded" % e)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    ceiling = now + memory
    if hard != resource.RLIM_INFINITY:
        ceiling = min(ceiling, hard)
    resource.setrlimit(resource.RLIMIT_AS, (ceiling, hard))
    try:
        return fn(*args)
    except MemoryError:
        raise
    except Exception as e:
        peak = _peak()
        if peak > before and peak > ceiling - (16 << 20):
            raise MemoryError("at the memory limit: %s: %s" % (type(e).__name__, e))
        raise
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
"#;

/// Whether a load of the finding ran out of memory or crashed under explore's limit: its case
/// loads under the same limit ([`LIMITED`]).
pub fn needs_limit(finding: &Finding) -> bool {
    finding.seen.values().any(|s| {
        matches!(s, Seen::Raised(t, _) if t == "MemoryError") || matches!(s, Seen::Crash(_))
    })
}

/// The case file's text; `memory`: the bytes one load may allocate (`--load-memory`).
pub fn write(finding: &Finding, pythons: &[Interpreter], seed: Option<u64>, memory: u64) -> String {
    let mut out = String::new();
    let data = finding.ops.concat();
    let readers: Vec<Reader> = {
        let mut r = vec![Reader::C, Reader::Py];
        if finding.signature.contains("dis ") || finding.signature.starts_with("dis") {
            r.push(Reader::Dis);
        }
        r
    };
    // What most unpicklers loaded: the value every other load is compared with.
    let mut loaded: BTreeMap<&str, (usize, Option<&str>)> = BTreeMap::new();
    for ((_, r), s) in &finding.seen {
        if let (Reader::C | Reader::Py, Seen::Loaded(h, canon)) = (r, s) {
            if h != "not-comparable" {
                let e = loaded.entry(h.as_str()).or_insert((0, canon.as_deref()));
                e.0 += 1;
            }
        }
    }
    let want = loaded
        .iter()
        .max_by_key(|(h, (n, _))| (*n, std::cmp::Reverse(*h)))
        .map(|(h, (_, c))| (*h, *c));
    let ops = stream::describe(&finding.ops);
    let _ = writeln!(
        out,
        "# Written by crosspickle explore --streams: the rules are what each interpreter did."
    );
    let what = if finding.signature.starts_with("load ") {
        "the unpicklers disagree on"
    } else {
        "pickletools.dis disagrees on"
    };
    let _ = writeln!(
        out,
        "title: {}",
        quote(&format!(
            "explore: {what} a stream of {} opcodes",
            finding.ops.len()
        ))
    );
    let origin = match seed {
        Some(seed) => format!(
            "`crosspickle explore --streams --seed {seed}` (stream {})",
            finding.index
        ),
        None => format!(
            "`crosspickle explore --stream-file` (line {})",
            finding.index + 1
        ),
    };
    let description = format!(
        "Found by {origin}, shrunk to the opcodes {ops}. What each did: {}. Observed on: {}.",
        finding.signature.chars().take(600).collect::<String>(),
        pythons
            .iter()
            .map(|p| p.label.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(out, "description: {}", quote(&description));
    let _ = writeln!(out, "tags: [explore, streams]");
    if finding.seen.values().any(|s| *s == Seen::Hang) {
        let _ = writeln!(out, "timeout: 20");
    }
    let _ = writeln!(
        out,
        "params:\n  unpickler: [{}]",
        readers
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let (want_text, want_hash) = match want {
        Some((_, Some(canon))) => (quote(canon), "None".to_string()),
        Some((hash, None)) => ("None".to_string(), quote(hash)),
        None => ("None".to_string(), "None".to_string()),
    };
    let (limit, call) = if needs_limit(finding) {
        (
            format!("memory = {memory}\n{LIMITED}"),
            "limited(load, data, unpickler)",
        )
    } else {
        (String::new(), "load(data, unpickler)")
    };
    let check = if want.is_some() {
        format!("got = {call}\nif unpickler != \"dis\":\n    assert got == (want_hash or want), \"loaded %s\" % (got,)\n")
    } else {
        format!("{call}\n")
    };
    block(
        &mut out,
        "code",
        &format!(
            "{PRELUDE}\ndata = {}\nwant = {want_text}\nwant_hash = {want_hash}\n{LOAD}{limit}\n{check}",
            source::bytes(&data)
        ),
    );
    out.push_str("expect:\n");
    // First, as in every case explore writes: the rules below name no `c_pickle` (the C
    // unpickler's runs on the interpreters without one end here).
    let _ = writeln!(
        out,
        "  - python: \">=3\"\n    features: {{c_pickle: false}}\n    where: {{unpickler: c}}\n    outcome: skip\n    reason: \"no C unpickler (_pickle) here\""
    );
    for ((p, r), s) in &finding.seen {
        if !readers.contains(r) {
            continue;
        }
        let (outcome, exception) = match s {
            Seen::Loaded(h, _) if Some(h.as_str()) == want.map(|w| w.0) => continue,
            Seen::Loaded(_, _) if *r == Reader::Dis => continue,
            Seen::Loaded(h, canon) if h == "not-comparable" => (
                "error",
                canon
                    .as_deref()
                    .and_then(|c| c.strip_prefix("not comparable: "))
                    .map(str::to_string),
            ),
            Seen::Loaded(..) => ("fail", None),
            Seen::Raised(t, _) => (raised(t), Some(t.clone())),
            Seen::Hang => ("timeout", None),
            Seen::Crash(_) => ("crash", None),
        };
        rule(
            &mut out,
            &[End {
                c: *r == Reader::C,
                ..End::plain("", *p)
            }],
            pythons,
            &format!("{{unpickler: {}}}", r.as_str()),
            None,
            outcome,
            exception.as_deref(),
            &format!("seen by explore --streams with {}", r.as_str()),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::streams::Seens;
    use crate::python::Implementation;

    #[test]
    fn a_stream_case_holds_the_bytes_and_a_rule_per_load_that_did_otherwise() {
        let pythons: Vec<Interpreter> = ["2.7.18", "3.12.1"]
            .iter()
            .map(|v| {
                let mut p = Interpreter::for_tests(Implementation::Cpython, v);
                p.label = v.to_string();
                p.c_pickle = Some("_pickle".into());
                p.c_pickle_used = true;
                p
            })
            .collect();
        let mut seen = Seens::new();
        let one = Seen::Loaded("ab".into(), Some("[\"int\",\"1\"]".into()));
        seen.insert((0, Reader::C), one.clone());
        seen.insert((0, Reader::Py), Seen::Raised("KeyError".into(), "1".into()));
        seen.insert((1, Reader::C), one.clone());
        seen.insert((1, Reader::Py), one);
        let finding = Finding {
            signature: "load KeyError: 2.7.18/py; loaded ab: 2.7.18/c,3.12.1/c,3.12.1/py".into(),
            ops: stream::split(b"I01\n."),
            index: 3,
            seen,
            occurrences: 1,
        };
        let text = write(&finding, &pythons, Some(5), 1 << 30);
        assert!(text.contains("data = b'I01\\x0a.'"), "{text}");
        assert!(
            text.contains("want = \"[\\\"int\\\",\\\"1\\\"]\""),
            "{text}"
        );
        assert!(text.contains("--streams --seed 5` (stream 3)"), "{text}");
        assert!(text.contains("params:\n  unpickler: [c, py]\n"), "{text}");
        let rules = &text[text.find("expect:\n").expect("rules")..];
        assert_eq!(rules.matches("outcome: error").count(), 1, "{rules}");
        assert!(rules.contains("exception: \"KeyError\""), "{rules}");
        assert!(rules.contains("where: {unpickler: py}"), "{rules}");
        assert!(
            !text.contains("limited("),
            "no limit where nothing ran out: {text}"
        );
    }

    /// A stream that ran out of memory on one interpreter: its case loads under the limit
    /// explore set, and expects the MemoryError there.
    #[test]
    fn a_stream_that_ran_out_of_memory_loads_under_the_limit() {
        let pythons: Vec<Interpreter> = ["2.7.18", "3.12.1"]
            .iter()
            .map(|v| {
                let mut p = Interpreter::for_tests(Implementation::Cpython, v);
                p.label = v.to_string();
                p
            })
            .collect();
        let mut seen = Seens::new();
        for r in [Reader::C, Reader::Py] {
            seen.insert(
                (0, r),
                Seen::Raised("ImportError".into(), "builtins".into()),
            );
            seen.insert((1, r), Seen::Raised("MemoryError".into(), "".into()));
        }
        let finding = Finding {
            signature: "load ImportError: 2.7.18/c,2.7.18/py; MemoryError: 3.12.1/c,3.12.1/py"
                .into(),
            ops: stream::split(b"I01\n."),
            index: 0,
            seen,
            occurrences: 1,
        };
        assert!(needs_limit(&finding));
        let text = write(&finding, &pythons, None, 32 << 20);
        assert!(text.contains("memory = 33554432\n"), "{text}");
        assert!(
            text.contains("\n  limited(load, data, unpickler)\n"),
            "{text}"
        );
        assert_eq!(
            text.matches("exception: \"MemoryError\"").count(),
            2,
            "{text}"
        );
    }
}
