//! The params of the case file a finding is written as. A cause shows with several protocols,
//! picklers and unpicklers (its group, every one of them kept in the `--json` report:
//! [`Combos::seen`]); its case runs one combination of them ([`Combos::chosen`]): each
//! combination is every producer and consumer pair again, so a case of them all made a 600 s
//! run's files take half an hour to check where one shows the same cause.

use std::collections::{BTreeMap, BTreeSet};

use super::observe::{protocol_text, Pickler, DEFAULT_PROTOCOL};
use super::oracle::{Finding, Oracle};

/// The protocols and picklers a case runs with (its params), or a cause showed with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Combos {
    pub protocols: Vec<u32>,
    pub picklers: Vec<Pickler>,
    /// Empty for dump and parity findings.
    pub unpicklers: Vec<Pickler>,
}

/// A case's params, and every combination its cause showed with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params {
    /// What the case runs ([`Combos::chosen`]).
    pub case: Combos,
    /// What the cause showed with ([`Combos::seen`]).
    pub seen: Combos,
}

impl Params {
    pub fn of(group: &[Finding]) -> Params {
        Params {
            case: Combos::chosen(group),
            seen: Combos::seen(group),
        }
    }

    /// [`Combos::also`].
    pub fn also(&self) -> Option<String> {
        self.case.also(&self.seen)
    }
}

/// One combination of a group: protocol, pickler, unpickler (none for a dump or a parity).
type Combo = (u32, Pickler, Option<Pickler>);

impl Combos {
    /// Every protocol, pickler and unpickler of a group of findings.
    pub fn seen(group: &[Finding]) -> Combos {
        fn set<T: Ord>(items: impl Iterator<Item = T>) -> Vec<T> {
            items.collect::<BTreeSet<T>>().into_iter().collect()
        }
        Combos {
            protocols: set(group.iter().map(|g| g.protocol)),
            picklers: set(group.iter().map(|g| g.pickler)),
            unpicklers: set(group.iter().filter_map(|g| g.unpickler)),
        }
    }

    /// The one combination of a group its case runs: the one that shows the cause on the most
    /// (producer, consumer) pairs, so that the case still fails wherever explore saw most of
    /// it; among those alike, the lowest numbered protocol (the one the most interpreters
    /// have; `default` only where nothing else showed it, its number changing with the
    /// version, in band before `oob`), then the Python pickler and unpickler: they exist on
    /// every interpreter (PyPy 3.9 and PyPy 7.3 have no `_pickle`), so the case runs
    /// everywhere and needs no rule skipping an interpreter without the C one. A parity case
    /// runs both picklers in its code (its params are the protocol alone) and an
    /// unpickler-parity case both unpicklers: they keep both.
    pub fn chosen(group: &[Finding]) -> Combos {
        let mut pairs: BTreeMap<Combo, BTreeSet<(usize, Option<usize>)>> = BTreeMap::new();
        for g in group {
            let combo = pairs
                .entry((g.protocol, g.pickler, g.unpickler))
                .or_default();
            for &p in &g.producers {
                if g.consumers.is_empty() {
                    combo.insert((p, None));
                }
                combo.extend(g.consumers.iter().map(|&c| (p, Some(c))));
            }
        }
        let only_default = group.iter().all(|g| g.protocol == DEFAULT_PROTOCOL);
        let rank = |k: Pickler| k == Pickler::C;
        let best = pairs
            .iter()
            .filter(|((protocol, ..), _)| only_default || *protocol != DEFAULT_PROTOCOL)
            .min_by_key(|(&(protocol, k, u), shown)| {
                (
                    std::cmp::Reverse(shown.len()),
                    protocol,
                    rank(k),
                    u.map(rank),
                )
            });
        let Some((&(protocol, k, u), _)) = best else {
            return Combos::default();
        };
        let seen = Combos::seen(group);
        Combos {
            protocols: vec![protocol],
            picklers: if group[0].oracle == Oracle::Parity {
                seen.picklers
            } else {
                vec![k]
            },
            unpicklers: u.into_iter().collect(),
        }
    }

    /// What a case runs, in words: `protocol 0, the Python pickler and unpickler`.
    pub fn words(&self) -> String {
        let mut out = self
            .protocols
            .iter()
            .map(|&p| format!("protocol {}", protocol_text(p)))
            .collect::<Vec<_>>()
            .join(", ");
        match (self.picklers.as_slice(), self.unpicklers.as_slice()) {
            ([k], [u]) if k == u => {
                out.push_str(&format!(", the {} pickler and unpickler", name(*k)))
            }
            (picklers, unpicklers) => {
                for (ks, what) in [(picklers, "pickler"), (unpicklers, "unpickler")] {
                    if let [k] = ks {
                        out.push_str(&format!(", the {} {what}", name(*k)));
                    }
                }
            }
        }
        out
    }

    /// What `seen` showed besides this case's params, in words for its description (none when
    /// it runs everything the cause showed with).
    pub fn also(&self, seen: &Combos) -> Option<String> {
        let protocols: Vec<String> = seen
            .protocols
            .iter()
            .filter(|p| !self.protocols.contains(p))
            .map(|&p| protocol_text(p))
            .collect();
        let mut parts = Vec::new();
        if !protocols.is_empty() {
            let s = if protocols.len() > 1 { "s" } else { "" };
            parts.push(format!("protocol{s} {}", protocols.join(", ")));
        }
        let others = |mine: &[Pickler], all: &[Pickler], what: &str| {
            all.iter()
                .find(|k| !mine.contains(k))
                .map(|k| format!("the {} {what}", name(*k)))
        };
        parts.extend(others(&self.picklers, &seen.picklers, "pickler"));
        parts.extend(others(&self.unpicklers, &seen.unpicklers, "unpickler"));
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

/// `C`, `Python`.
fn name(k: Pickler) -> &'static str {
    match k {
        Pickler::C => "C",
        Pickler::Py => "Python",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::observe::OOB_PROTOCOL;

    fn finding(
        oracle: Oracle,
        (protocol, pickler, unpickler): Combo,
        producers: &[usize],
        consumers: &[usize],
    ) -> Finding {
        Finding {
            oracle,
            protocol,
            pickler,
            unpickler,
            observed: "UnicodeDecodeError".into(),
            cause: "UnicodeDecodeError".into(),
            producers: producers.iter().copied().collect(),
            consumers: consumers.iter().copied().collect(),
            witness: None,
            detail: String::new(),
            sites: BTreeSet::new(),
        }
    }

    fn load(combo: Combo, producers: &[usize], consumers: &[usize]) -> Finding {
        finding(Oracle::LoadDiffers, combo, producers, consumers)
    }

    const C: Pickler = Pickler::C;
    const PY: Pickler = Pickler::Py;

    #[test]
    fn the_lowest_protocol_and_the_python_ends_where_all_show_it_alike() {
        let mut group = Vec::new();
        for protocol in [2, 0, 1, DEFAULT_PROTOCOL] {
            for k in [C, PY] {
                for u in [C, PY] {
                    group.push(load((protocol, k, Some(u)), &[0], &[1, 2]));
                }
            }
        }
        let chosen = Combos::chosen(&group);
        assert_eq!(
            chosen,
            Combos {
                protocols: vec![0],
                picklers: vec![PY],
                unpicklers: vec![PY],
            }
        );
        assert_eq!(
            chosen.words(),
            "protocol 0, the Python pickler and unpickler"
        );
        assert_eq!(
            chosen.also(&Combos::seen(&group)).as_deref(),
            Some("protocols 1, 2, default, the C pickler, the C unpickler")
        );
    }

    #[test]
    fn the_combination_showing_it_on_the_most_pairs_wins() {
        let group = vec![
            load((0, PY, Some(PY)), &[0], &[1]),
            load((2, C, Some(PY)), &[0], &[1, 2]),
            load((2, C, Some(PY)), &[3], &[1]),
            load((DEFAULT_PROTOCOL, PY, Some(PY)), &[0, 3], &[1, 2, 4]),
        ];
        let chosen = Combos::chosen(&group);
        assert_eq!(
            chosen.words(),
            "protocol 2, the C pickler, the Python unpickler"
        );
        assert_eq!((chosen.protocols, chosen.picklers), (vec![2], vec![C]));
    }

    #[test]
    fn default_only_where_nothing_else_showed_it_and_oob_after_in_band() {
        let only = vec![load((DEFAULT_PROTOCOL, C, Some(C)), &[0], &[1])];
        assert_eq!(Combos::chosen(&only).protocols, vec![DEFAULT_PROTOCOL]);
        assert_eq!(Combos::chosen(&only).also(&Combos::seen(&only)), None);
        let dumps = vec![
            finding(Oracle::DumpDiffers, (OOB_PROTOCOL, PY, None), &[0], &[]),
            finding(Oracle::DumpDiffers, (5, PY, None), &[0], &[]),
        ];
        let chosen = Combos::chosen(&dumps);
        assert_eq!((chosen.protocols, chosen.unpicklers), (vec![5], vec![]));
    }

    #[test]
    fn a_parity_case_keeps_both_picklers_an_unpickler_parity_one_both_unpicklers() {
        let parity = vec![
            finding(Oracle::Parity, (3, C, None), &[0], &[]),
            finding(Oracle::Parity, (1, C, None), &[0], &[]),
        ];
        let chosen = Combos::chosen(&parity);
        assert_eq!((chosen.protocols, chosen.picklers), (vec![1], vec![C]));
        let unpicklers = vec![
            finding(Oracle::UnpicklerParity, (4, C, None), &[0], &[1]),
            finding(Oracle::UnpicklerParity, (4, PY, None), &[0], &[1]),
        ];
        let chosen = Combos::chosen(&unpicklers);
        assert_eq!(
            (chosen.protocols, chosen.picklers, chosen.unpicklers),
            (vec![4], vec![PY], vec![])
        );
    }

    #[test]
    fn no_finding_no_params() {
        assert_eq!(Combos::chosen(&[]), Combos::default());
    }
}
