//! Exception messages: normalised (addresses, quoting) and compared between the interpreters
//! that refused the same thing with the same exception type. A message that still differs is a
//! *message-differs* finding, ranked below the type changes (`dump-differs`, `load-differs`),
//! which compare types alone. A finding's cause is its message with what the value puts in it
//! masked ([`mask`]): one change of wording is one cause, whatever value shows it.

use std::collections::{BTreeMap, BTreeSet};

use super::observe::{Observation, Outcome, Pickler};
use super::oracle::{Finding, Oracle};

/// `msg` with what does not tell two messages apart made the same: addresses (`0x7f3a...`)
/// as `0x?`, a `u` before a quoted text dropped (2.7's `u'x'`), and double quotes as single
/// ones (`"x"` and `'x'`, as each `repr` chose).
pub fn normalise(msg: &str) -> String {
    let chars: Vec<char> = msg.chars().collect();
    let mut out = String::with_capacity(msg.len());
    let mut i = 0;
    let word = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric() || *c == '_');
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let after_word = i > 0 && word(chars.get(i - 1));
        if c == '0'
            && next == Some('x')
            && !after_word
            && chars.get(i + 2).is_some_and(char::is_ascii_hexdigit)
        {
            out.push_str("0x?");
            i += 2;
            while chars.get(i).is_some_and(char::is_ascii_hexdigit) {
                i += 1;
            }
            continue;
        }
        if c == 'u' && matches!(next, Some('\'' | '"')) && !after_word {
            i += 1;
            continue;
        }
        out.push(if c == '"' { '\'' } else { c });
        i += 1;
    }
    out
}

/// A normalised message with the parts a value or a call puts in it masked as `?`: quoted
/// texts (`'Slots'`, `b'x'`'s quotes), reprs in angle brackets (`<object at 0x?>`), and
/// numbers that stand alone (`protocol 0`, `missing 1 required`, `2.5`; not `latin1` or
/// `__getstate__`'s letters). What stays is the wording, which is what changed between
/// versions: two wordings stay two causes.
pub fn mask(msg: &str) -> String {
    let chars: Vec<char> = msg.chars().collect();
    let word = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric() || *c == '_');
    let mut out = String::with_capacity(msg.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let after_word = i > 0 && word(chars.get(i - 1));
        // A quote opens a text where no word runs into it (not `can't`), and the text ends at
        // the next quote that no word follows.
        if c == '\'' && (!after_word || chars[i - 1] == 'b') {
            let close = (i + 1..chars.len()).find(|&j| chars[j] == '\'' && !word(chars.get(j + 1)));
            if let Some(j) = close {
                out.push_str("'?'");
                i = j + 1;
                continue;
            }
        }
        if c == '<' {
            let mut depth = 0;
            let close = (i..chars.len()).find(|&j| {
                match chars[j] {
                    '<' => depth += 1,
                    '>' => depth -= 1,
                    _ => {}
                }
                depth == 0
            });
            if let Some(j) = close.filter(|&j| j > i + 1) {
                out.push_str("<?>");
                i = j + 1;
                continue;
            }
        }
        if c.is_ascii_digit() && !after_word && !(i > 0 && chars[i - 1] == '.') {
            let mut j = i;
            while j < chars.len()
                && (chars[j].is_ascii_digit()
                    || (chars[j] == '.' && chars.get(j + 1).is_some_and(char::is_ascii_digit)))
            {
                j += 1;
            }
            if !word(chars.get(j)) {
                out.push('?');
                i = j;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

/// The message-differs findings of an observation: for each protocol and pickler, producers
/// that refused with one exception type and different messages; for each pickle and
/// unpickler, consumers that did. The interpreters of the largest group (on a tie, the one of
/// the first interpreter) give the reference, and each other group is a finding, with one of
/// the reference's as its witness.
pub fn findings(obs: &Observation) -> Vec<Finding> {
    // (protocol, pickler, unpickler, type) -> normalised message -> (interpreters, producers, detail)
    type Groups = BTreeMap<String, (BTreeSet<usize>, BTreeSet<usize>, String)>;
    let mut dumps: BTreeMap<(u32, Pickler, String), Groups> = BTreeMap::new();
    for (&(p, protocol, k), outcome) in &obs.dumps {
        if let Outcome::Error(t, m, _) = outcome {
            let g = dumps.entry((protocol, k, t.clone())).or_default();
            let e = g
                .entry(normalise(m))
                .or_insert_with(|| (BTreeSet::new(), BTreeSet::new(), m.clone()));
            e.0.insert(p);
        }
    }
    let mut out = Vec::new();
    for ((protocol, pickler, t), groups) in dumps {
        let cause = wordings(&t, &groups);
        for (who, _, detail, witness) in minorities(&groups) {
            out.push(Finding {
                oracle: Oracle::MessageDiffers,
                protocol,
                pickler,
                unpickler: None,
                observed: t.clone(),
                producers: who,
                consumers: BTreeSet::new(),
                witness: Some(witness),
                cause: cause.clone(),
                detail: format!("{t}: {detail}"),
                sites: BTreeSet::new(),
            });
        }
    }
    let mut loads: BTreeMap<(usize, Pickler, String), Groups> = BTreeMap::new();
    for (&(pickle, c, u), outcome) in &obs.loads {
        if let Outcome::Error(t, m, _) = outcome {
            let g = loads.entry((pickle, u, t.clone())).or_default();
            let e = g
                .entry(normalise(m))
                .or_insert_with(|| (BTreeSet::new(), BTreeSet::new(), m.clone()));
            e.0.insert(c);
        }
    }
    let mut merged: BTreeMap<(u32, Pickler, Pickler, String), Finding> = BTreeMap::new();
    for ((pickle, u, t), groups) in loads {
        let cause = wordings(&t, &groups);
        for (who, _, detail, witness) in minorities(&groups) {
            for &(p, protocol, pickler) in &obs.pickles[pickle] {
                let f = merged
                    .entry((protocol, pickler, u, t.clone()))
                    .or_insert_with(|| Finding {
                        oracle: Oracle::MessageDiffers,
                        protocol,
                        pickler,
                        unpickler: Some(u),
                        observed: t.clone(),
                        producers: BTreeSet::new(),
                        consumers: BTreeSet::new(),
                        witness: Some(witness),
                        cause: cause.clone(),
                        detail: format!("{t}: {detail}"),
                        sites: BTreeSet::new(),
                    });
                f.producers.insert(p);
                f.consumers.extend(who.iter().copied());
            }
        }
    }
    out.extend(merged.into_values());
    out
}

/// The cause of the message-differs findings of one exception type `t`: every wording its
/// interpreters said, masked ([`mask`]) and sorted, whichever of them is the reference (the
/// largest group, which the interpreters that have a protocol decide): one change of wording
/// is one cause at every protocol.
fn wordings(
    t: &str,
    groups: &BTreeMap<String, (BTreeSet<usize>, BTreeSet<usize>, String)>,
) -> String {
    let all: BTreeSet<String> = groups.keys().map(|m| mask(m)).collect();
    format!("{t}: {}", all.into_iter().collect::<Vec<_>>().join(" | "))
}

/// Each group of interpreters but the reference (the largest; on a tie, the first
/// interpreter's): its interpreters, its message, and one interpreter of the reference.
fn minorities(
    groups: &BTreeMap<String, (BTreeSet<usize>, BTreeSet<usize>, String)>,
) -> Vec<(BTreeSet<usize>, String, String, usize)> {
    if groups.len() < 2 {
        return Vec::new();
    }
    let reference = groups
        .values()
        .max_by_key(|(who, ..)| {
            (
                who.len(),
                std::cmp::Reverse(who.iter().next().copied().unwrap_or(usize::MAX)),
            )
        })
        .map(|(who, ..)| who.clone())
        .unwrap_or_default();
    let witness = reference.iter().next().copied().unwrap_or(0);
    groups
        .iter()
        .filter(|(_, (who, ..))| *who != reference)
        .map(|(norm, (who, _, detail))| (who.clone(), norm.clone(), detail.clone(), witness))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_quoting_are_no_difference() {
        assert_eq!(
            normalise("<object at 0x7f3a2b1c0d10> and u'x' with \"y\""),
            "<object at 0x?> and 'x' with 'y'"
        );
        assert_eq!(normalise("0x1f"), "0x?");
        // Not an address, not a prefix: left alone.
        assert_eq!(normalise("max0x1 menu'x' 0xg"), "max0x1 menu'x' 0xg");
        assert_eq!(normalise("b'x'"), "b'x'");
        assert_eq!(
            normalise("unsupported pickle protocol: 4"),
            "unsupported pickle protocol: 4"
        );
    }

    /// What a value puts in a message is masked, the wording stays: one change of wording is
    /// one cause whatever the value, two wordings are two.
    #[test]
    fn a_cause_masks_the_values_parts_and_keeps_the_wording() {
        let slots = |p: u32| {
            mask(&normalise(&format!(
                "cannot pickle 'Slots' object: a class that defines __slots__ without defining \
                 __getstate__ cannot be pickled with protocol {p}"
            )))
        };
        assert_eq!(slots(0), slots(1));
        assert_eq!(
            slots(0),
            "cannot pickle '?' object: a class that defines __slots__ without defining \
             __getstate__ cannot be pickled with protocol ?"
        );
        assert_eq!(
            mask(&normalise("cannot pickle 'generator' object")),
            mask(&normalise("cannot pickle \"frame\" object"))
        );
        assert_ne!(
            mask("cannot pickle 'generator' object"),
            mask("can't pickle generator objects"),
            "another wording"
        );
        assert_eq!(
            mask("can't pickle <function <lambda> at 0x?>: it's not found as __main__.f"),
            "can't pickle <?>: it's not found as __main__.f"
        );
        assert_eq!(
            mask("f() missing 1 required positional argument: 'a'"),
            "f() missing ? required positional argument: '?'"
        );
        assert_eq!(
            mask("invalid load key, b'x'. got 2.5, not 1e3"),
            "invalid load key, b'?'. got ?, not 1e3"
        );
        assert_eq!(mask("codec latin1 of py3k"), "codec latin1 of py3k");
        assert_eq!(mask("unclosed 'quote and <"), "unclosed 'quote and <");
    }

    fn error(t: &str, m: &str) -> Outcome {
        Outcome::Error(t.into(), m.into(), String::new())
    }

    #[test]
    fn the_same_type_with_another_message_is_a_finding_of_the_fewer() {
        let mut obs = Observation::default();
        for c in 0..3 {
            let m = if c == 1 {
                "invalid load key, 'x'."
            } else {
                "invalid load key, \"x\"."
            };
            obs.insert_load(
                (0, 2, Pickler::C, c, Pickler::Py),
                error("UnpicklingError", m),
            );
        }
        // Another type is not compared with these: it is a type change (load-differs).
        obs.insert_load((0, 2, Pickler::C, 3, Pickler::Py), error("KeyError", "x"));
        assert!(findings(&obs).is_empty(), "quoting alone");
        obs.insert_load(
            (0, 2, Pickler::C, 2, Pickler::Py),
            error("UnpicklingError", "pickle data was truncated"),
        );
        let found = findings(&obs);
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!(f.oracle, Oracle::MessageDiffers);
        assert_eq!(f.observed, "UnpicklingError");
        assert_eq!(f.consumers, BTreeSet::from([2]));
        assert_eq!(f.producers, BTreeSet::from([0]));
        assert_eq!(f.witness, Some(0));
        assert_eq!(f.detail, "UnpicklingError: pickle data was truncated");
    }

    /// Which wording is the reference follows which interpreters have a protocol: the cause
    /// names both wordings, so the two protocols' findings are one cause; another pair of
    /// wordings is another.
    #[test]
    fn a_cause_is_every_wording_whichever_is_the_reference() {
        let (old, new) = (
            "'time' object has no attribute 'x'",
            "'time' object has no attribute 'x' and no __dict__ for setting new attributes",
        );
        let mut obs = Observation::default();
        for (protocol, said) in [(0, [old, old, new]), (5, [old, new, new])] {
            for (c, m) in said.iter().enumerate() {
                obs.insert_load(
                    (0, protocol, Pickler::C, c, Pickler::Py),
                    error("AttributeError", m),
                );
            }
        }
        let found = findings(&obs);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].cause, found[1].cause);
        assert_eq!(
            found[0].cause,
            "AttributeError: '?' object has no attribute '?' | '?' object has no attribute '?' \
             and no __dict__ for setting new attributes"
        );
        let mut other = Observation::default();
        for (c, m) in [old, old, "no attribute"].iter().enumerate() {
            other.insert_load(
                (0, 0, Pickler::C, c, Pickler::Py),
                error("AttributeError", m),
            );
        }
        assert_ne!(findings(&other)[0].cause, found[0].cause);
    }

    #[test]
    fn producers_refusing_alike_are_compared_too() {
        let mut obs = Observation::default();
        obs.dumps.insert(
            (0, 0, Pickler::Py),
            error("TypeError", "cannot pickle 'generator' object"),
        );
        obs.dumps.insert(
            (1, 0, Pickler::Py),
            error("TypeError", "can't pickle generator objects"),
        );
        let found = findings(&obs);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].producers, BTreeSet::from([1]));
        assert_eq!(found[0].witness, Some(0));
    }
}
