//! Exception messages: normalised (addresses, quoting) and compared between the interpreters
//! that refused the same thing with the same exception type. A message that still differs is a
//! *message-differs* finding, ranked below the type changes (`dump-differs`, `load-differs`),
//! which compare types alone. A finding's cause is its message with what the value puts in it
//! masked ([`mask`], `wording.rs`): one change of wording is one cause, whatever value shows it.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::observe::{Observation, Outcome, Pickler};
use super::oracle::{Finding, Oracle};
use super::wording::{mask, normalise};

/// Per (protocol, pickler, unpickler, type): normalised message -> (interpreters, producers,
/// detail).
type Groups = BTreeMap<String, (BTreeSet<usize>, BTreeSet<usize>, String)>;

/// `m` normalised, worked out once per message (`seen` keeps them).
fn normal<'a, 'b>(seen: &'b mut HashMap<&'a str, String>, m: &'a str) -> &'b str {
    seen.entry(m).or_insert_with(|| normalise(m))
}

/// The group of `groups` for the normalised message `key` (said as `m` where it is new).
fn group<'g>(
    groups: &'g mut Groups,
    key: &str,
    m: &str,
) -> &'g mut (BTreeSet<usize>, BTreeSet<usize>, String) {
    if !groups.contains_key(key) {
        groups.insert(
            key.to_string(),
            (BTreeSet::new(), BTreeSet::new(), m.to_string()),
        );
    }
    groups.get_mut(key).expect("the group was just made")
}

/// The message-differs findings of an observation: for each protocol and pickler, producers
/// that refused with one exception type and different messages; for each pickle and
/// unpickler, consumers that did. The interpreters of the largest group (on a tie, the one of
/// the first interpreter) give the reference, and each other group is a finding, with one of
/// the reference's as its witness.
pub fn findings(obs: &Observation) -> Vec<Finding> {
    // Each message normalised once: most are said alike by many producers and consumers.
    let mut normalised: HashMap<&str, String> = HashMap::new();
    let mut dumps: BTreeMap<(u32, Pickler, String), Groups> = BTreeMap::new();
    for (&(p, protocol, k), outcome) in &obs.dumps {
        if let Outcome::Error(t, m, _) = outcome {
            let g = dumps.entry((protocol, k, t.clone())).or_default();
            group(g, normal(&mut normalised, m), m).0.insert(p);
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
            group(g, normal(&mut normalised, m), m).0.insert(c);
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
