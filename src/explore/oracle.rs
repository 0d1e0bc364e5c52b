//! The oracles: what counts as a difference in an [`Observation`]. *dump differs* (a producer
//! refuses what another pickles), *load differs* (a consumer refuses, crashes or hangs),
//! *value differs* (what loaded is not what was pickled, by canonical description),
//! *parity* (the C and the Python pickler of one interpreter write different pickles once
//! `pickletools.optimize`d), *unpickler parity* (the C and the Python unpickler of one
//! interpreter load the same bytes differently, or one refuses them), each a [`Finding`]; and
//! *stability* (the same value, protocol and pickler give different bytes on different
//! producers), information kept apart.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use super::observe::{Observation, Outcome, Pickler};
use super::refusals;
pub use super::refusals::{refusal, site};
use crate::python::Interpreter;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Oracle {
    DumpDiffers,
    LoadDiffers,
    ValueDiffers,
    Parity,
    UnpicklerParity,
    /// The same exception type with another message, once normalised (`message.rs`).
    MessageDiffers,
}

impl Oracle {
    pub fn as_str(self) -> &'static str {
        match self {
            Oracle::DumpDiffers => "dump-differs",
            Oracle::LoadDiffers => "load-differs",
            Oracle::ValueDiffers => "value-differs",
            Oracle::Parity => "parity",
            Oracle::UnpicklerParity => "unpickler-parity",
            Oracle::MessageDiffers => "message-differs",
        }
    }
}

/// One difference, before or after shrinking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub oracle: Oracle,
    pub protocol: u32,
    pub pickler: Pickler,
    /// The unpickler, for load and value findings.
    pub unpickler: Option<Pickler>,
    /// The exception's type, `hang`, `crash`, `value` (a different value) or `bytes` (parity);
    /// for unpickler parity what each unpickler did, `c=ok py=ValueError` (`value` when both
    /// loaded, different values).
    pub observed: String,
    /// What differs, as one cause shows it whatever value shows it: the exception's type
    /// (`dump-differs`, `load-differs`; a load refusal raised in C code alone with its masked
    /// wording, `refusals.rs`), the first node of the description that differs
    /// (`value-differs`: `bytes->str`, `ref->list` for sharing lost, `Falsy: state missing`),
    /// what each pickler chose (`parity`: `TUPLE/LIST`, `parity_cause.rs`), what each unpickler did
    /// (`unpickler-parity`). Not the value's shape: a difference inside a list is the same
    /// cause as the same difference alone.
    pub cause: String,
    /// Indices into the selection.
    pub producers: BTreeSet<usize>,
    pub consumers: BTreeSet<usize>,
    /// A producer that pickled what the producers refused (dump differs).
    pub witness: Option<usize>,
    /// One message or description that shows it.
    pub detail: String,
    /// Where the exceptions it groups were raised (`pickle.save_global`, `_pickle`,
    /// `copyreg._reduce_ex`, a reducer's `module.__reduce__`): two causes that raise the same
    /// exception type from different places part by it. Empty where nothing raised.
    pub sites: BTreeSet<String>,
}

impl Finding {
    /// What tells this finding apart, but for the value's shape.
    pub fn key(&self, pythons: &[Interpreter]) -> String {
        let labels = |set: &BTreeSet<usize>| {
            set.iter()
                .map(|&i| pythons[i].label.as_str())
                .collect::<Vec<_>>()
                .join(",")
        };
        format!(
            "{} protocol={} pickler={} unpickler={} observed={} cause={} sites={} producers={} consumers={}",
            self.oracle.as_str(),
            self.protocol,
            self.pickler.as_str(),
            self.unpickler.map_or("-", Pickler::as_str),
            self.observed,
            self.cause,
            self.sites.iter().cloned().collect::<Vec<_>>().join(","),
            labels(&self.producers),
            labels(&self.consumers)
        )
    }

    /// The interpreters that showed it, with a witness.
    pub fn involved(&self) -> Vec<usize> {
        let mut all: BTreeSet<usize> = self.producers.union(&self.consumers).copied().collect();
        all.extend(self.witness);
        all.into_iter().collect()
    }
}

/// A producer and a consumer that show a load, value or unpickler-parity finding together
/// (its producers and consumers are those of every pair that shows it, so not every producer
/// and consumer of them do): the first by producer, then consumer.
pub fn pair(finding: &Finding, obs: &Observation) -> Option<(usize, usize)> {
    let reference = reference(obs);
    obs.each_load()
        .filter_map(|((p, protocol, k, c, u), outcome)| {
            let this = (protocol, k) == (finding.protocol, finding.pickler)
                && finding.producers.contains(&p)
                && finding.consumers.contains(&c);
            let shows = match finding.oracle {
                Oracle::LoadDiffers => {
                    Some(u) == finding.unpickler
                        && refusal(outcome, u, obs.load((p, protocol, k, c, u.other())))
                            == finding.observed
                        && site(outcome).is_none_or(|s| finding.sites.contains(s))
                }
                Oracle::ValueDiffers => {
                    Some(u) == finding.unpickler
                        && matches!(outcome, Outcome::Ok(canon, _) if Some(&**canon) != reference)
                }
                Oracle::UnpicklerParity => {
                    u == Pickler::C
                        && obs
                            .load((p, protocol, k, c, Pickler::Py))
                            .and_then(|py| unpickler_disagreement(outcome, py))
                            .as_deref()
                            == Some(finding.observed.as_str())
                }
                Oracle::DumpDiffers | Oracle::Parity | Oracle::MessageDiffers => false,
            };
            (this && shows).then_some((p, c))
        })
        .min()
}

/// The bytes for one protocol and pickler, by the producers that wrote them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stability {
    pub protocol: u32,
    pub pickler: Pickler,
    /// Each group wrote the same bytes (hex), in the order of their first producer.
    pub groups: ByteGroups,
}

/// The value's description is the same on every producer that built it: what loaded can be
/// compared with it. Values that build differently are not compared.
pub fn reference(obs: &Observation) -> Option<&str> {
    let mut built = obs.canon.values().filter_map(|c| c.as_ref().ok());
    let first = built.next()?;
    built.all(|c| c == first).then_some(&**first)
}

pub fn findings(obs: &Observation) -> Vec<Finding> {
    let mut out = dump_findings(obs);
    if let Some(reference) = reference(obs) {
        out.extend(load_findings(obs, reference));
    }
    out.extend(parity_findings(obs));
    out.extend(unpickler_parity_findings(obs));
    out
}

/// The producers that pickled, and those that did not by what happened (with an example and
/// where it was raised).
type DumpGroups = (
    Vec<usize>,
    BTreeMap<String, (BTreeSet<usize>, String, BTreeSet<String>)>,
);

/// Producers that wrote the same bytes, and the bytes (hex, shared with the dumps').
type ByteGroups = Vec<(BTreeSet<usize>, Arc<str>)>;

fn dump_findings(obs: &Observation) -> Vec<Finding> {
    let mut by: BTreeMap<(u32, Pickler), DumpGroups> = BTreeMap::new();
    for (&(p, proto, k), outcome) in &obs.dumps {
        let entry = by.entry((proto, k)).or_default();
        match outcome {
            Outcome::Ok(..) => entry.0.push(p),
            other => {
                let group = entry
                    .1
                    .entry(other.label())
                    .or_insert_with(|| (BTreeSet::new(), detail(other), BTreeSet::new()));
                group.0.insert(p);
                group.2.extend(site(other).cloned());
            }
        }
    }
    let mut out = Vec::new();
    for ((protocol, pickler), (ok, bad)) in by {
        let Some(&witness) = ok.first() else { continue };
        for (observed, (producers, detail, sites)) in bad {
            out.push(Finding {
                oracle: Oracle::DumpDiffers,
                protocol,
                pickler,
                unpickler: None,
                cause: observed.clone(),
                observed,
                producers,
                consumers: BTreeSet::new(),
                witness: Some(witness),
                detail,
                sites,
            });
        }
    }
    out
}

fn load_findings(obs: &Observation, reference: &str) -> Vec<Finding> {
    type Key = (Oracle, u32, Pickler, Pickler, String, Option<usize>);
    let mut groups: BTreeMap<Key, Finding> = BTreeMap::new();
    // Refusals of one type are told apart by where they were raised (`refusals.rs`).
    let (refused, causes) = refusals::causes(obs);
    // What loaded otherwise, once per description: many consumers load the same.
    let mut differs: HashMap<&str, (String, String)> = HashMap::new();
    for (&(pickle, c, u), outcome) in &obs.loads {
        // A refusal's detail is worked out only for the load that makes its finding.
        let (oracle, observed, cause, described, which) = match outcome {
            Outcome::Ok(canon, _) if &**canon == reference => continue,
            Outcome::Ok(canon, _) => {
                let (cause, detail) = differs.entry(canon).or_insert_with(|| {
                    let detail = format!("loaded {canon}, pickled {reference}");
                    (value_cause(reference, canon), detail)
                });
                let (cause, detail) = (cause.clone(), detail.clone());
                (
                    Oracle::ValueDiffers,
                    "value".to_string(),
                    cause,
                    Ok(detail),
                    None,
                )
            }
            other => {
                // Its label as `causes` worked it out (every refusal has one there).
                let (which, observed) = match refused.get(&(pickle, c, u)) {
                    Some((n, label)) => (Some(*n), label.clone()),
                    None => (
                        None,
                        refusal(other, u, obs.loads.get(&(pickle, c, u.other()))),
                    ),
                };
                let cause = which.map_or_else(|| observed.clone(), |n| causes[n].name.clone());
                (Oracle::LoadDiffers, observed, cause, Err(other), which)
            }
        };
        for &(p, protocol, pickler) in &obs.pickles[pickle] {
            let f = groups
                .entry((oracle, protocol, pickler, u, cause.clone(), which))
                .or_insert_with(|| Finding {
                    oracle,
                    protocol,
                    pickler,
                    unpickler: Some(u),
                    cause: cause.clone(),
                    observed: observed.clone(),
                    producers: BTreeSet::new(),
                    consumers: BTreeSet::new(),
                    witness: None,
                    detail: match &described {
                        Ok(made) => made.clone(),
                        Err(other) => detail(other),
                    },
                    // Every site of its cause, whichever protocol and unpickler raised there.
                    sites: which.map(|n| causes[n].sites.clone()).unwrap_or_default(),
                });
            f.producers.insert(p);
            f.consumers.insert(c);
        }
    }
    groups.into_values().collect()
}

fn parity_findings(obs: &Observation) -> Vec<Finding> {
    let mut by: BTreeMap<(u32, String), Finding> = BTreeMap::new();
    for (&(p, protocol, k), outcome) in &obs.dumps {
        let (Pickler::C, Outcome::Ok(_, Some(c_opt))) = (k, outcome) else {
            continue;
        };
        let Some(Outcome::Ok(_, Some(py_opt))) = obs.dumps.get(&(p, protocol, Pickler::Py)) else {
            continue;
        };
        if c_opt == py_opt {
            continue;
        }
        let cause = obs
            .parity_ops
            .get(&(p, protocol))
            .cloned()
            .unwrap_or_else(|| "bytes".into());
        by.entry((protocol, cause.clone()))
            .or_insert_with(|| Finding {
                oracle: Oracle::Parity,
                protocol,
                pickler: Pickler::C,
                unpickler: None,
                cause,
                observed: "bytes".into(),
                producers: BTreeSet::new(),
                consumers: BTreeSet::new(),
                witness: None,
                detail: format!(
                    "C pickler (optimized): {c_opt}, Python pickler (optimized): {py_opt}"
                ),
                sites: BTreeSet::new(),
            })
            .producers
            .insert(p);
    }
    by.into_values().collect()
}

/// What the C and the Python unpickler of one consumer did with the same pickle, when they
/// disagree: `value` (both loaded, different values), or each one's label (`c=ok
/// py=ValueError`). Two exceptions of the same type agree (their messages may differ).
pub fn unpickler_disagreement(c: &Outcome, py: &Outcome) -> Option<String> {
    match (c, py) {
        (Outcome::Ok(a, _), Outcome::Ok(b, _)) if a == b => None,
        (Outcome::Ok(..), Outcome::Ok(..)) => Some("value".into()),
        (a, b) if a.label() == b.label() => None,
        (a, b) => Some(format!("c={} py={}", a.label(), b.label())),
    }
}

/// Whether `part` is one of two causes that `both` shows at once: where both unpicklers of a
/// consumer refused a pickle, each with an exception of its own type (`c=ValueError
/// py=ModuleNotFoundError`), the value may hold one thing only the C unpickler refuses and
/// another that both refuse, the C one failing on the first. `part`, of the same oracle,
/// protocol and pickler, is one of them alone: for `unpickler-parity` one unpickler refusing as
/// in `both` while the other loads (`c=ValueError py=ok`); for `load-differs` the C unpickler
/// refusing as in `both`, or the Python one (whatever the other did).
pub fn part_of(part: &Finding, both: &Finding) -> bool {
    let sides = |f: &Finding| -> Option<(String, String)> {
        let (c, py) = f.observed.strip_prefix("c=")?.split_once(" py=")?;
        Some((c.to_string(), py.to_string()))
    };
    let Some((c, py)) = sides(both) else {
        return false;
    };
    if c == "ok" || py == "ok" || (both.protocol, both.pickler) != (part.protocol, part.pickler) {
        return false;
    }
    match (both.oracle, part.oracle) {
        (Oracle::UnpicklerParity, Oracle::UnpicklerParity) => sides(part)
            .is_some_and(|(pc, ppy)| (pc == c && ppy == "ok") || (pc == "ok" && ppy == py)),
        (Oracle::LoadDiffers, Oracle::LoadDiffers) => match part.unpickler {
            Some(Pickler::C) => part.observed == c,
            Some(Pickler::Py) => part.observed == py,
            None => false,
        },
        _ => false,
    }
}

/// On one consumer with both unpicklers, the C and the Python one disagree on a pickle
/// (grouped by protocol, pickler and what each did). It needs no reference: a value that
/// builds differently on different producers is still one pickle to its two unpicklers.
fn unpickler_parity_findings(obs: &Observation) -> Vec<Finding> {
    let mut by: BTreeMap<(u32, Pickler, String), Finding> = BTreeMap::new();
    for (&(pickle, c, u), c_out) in &obs.loads {
        if u != Pickler::C {
            continue;
        }
        let Some(py_out) = obs.loads.get(&(pickle, c, Pickler::Py)) else {
            continue;
        };
        let Some(observed) = unpickler_disagreement(c_out, py_out) else {
            continue;
        };
        let describe = |o: &Outcome| match o {
            Outcome::Ok(canon, _) => format!("loaded {canon}"),
            other => detail(other),
        };
        let cause = match (c_out, py_out) {
            (Outcome::Ok(a, _), Outcome::Ok(b, _)) => format!("value: {}", value_cause(b, a)),
            _ => observed.clone(),
        };
        for &(p, protocol, pickler) in &obs.pickles[pickle] {
            let f = by
                .entry((protocol, pickler, cause.clone()))
                .or_insert_with(|| Finding {
                    oracle: Oracle::UnpicklerParity,
                    protocol,
                    pickler,
                    unpickler: None,
                    cause: cause.clone(),
                    observed: observed.clone(),
                    producers: BTreeSet::new(),
                    consumers: BTreeSet::new(),
                    witness: None,
                    detail: format!(
                        "C unpickler: {}; Python unpickler: {}",
                        describe(c_out),
                        describe(py_out)
                    ),
                    sites: BTreeSet::new(),
                });
            f.producers.insert(p);
            f.consumers.insert(c);
            f.sites.extend(site(c_out).cloned());
            f.sites.extend(site(py_out).cloned());
        }
    }
    by.into_values().collect()
}

/// The protocols and picklers whose bytes differ between producers.
pub fn stability(obs: &Observation) -> Vec<Stability> {
    let mut by: BTreeMap<(u32, Pickler), ByteGroups> = BTreeMap::new();
    for (&(p, protocol, pickler), outcome) in &obs.dumps {
        // The default protocol is another number on each series: its bytes differ by design;
        // out of band, they are protocol 5's and the buffers.
        let Outcome::Ok(hex, _) = outcome else {
            continue;
        };
        if protocol == super::observe::DEFAULT_PROTOCOL || protocol == super::observe::OOB_PROTOCOL
        {
            continue;
        }
        let groups = by.entry((protocol, pickler)).or_default();
        match groups.iter_mut().find(|(_, h)| **h == **hex) {
            Some((set, _)) => {
                set.insert(p);
            }
            None => groups.push((BTreeSet::from([p]), hex.clone())),
        }
    }
    by.into_iter()
        .filter(|(_, g)| g.len() > 1)
        .map(|((protocol, pickler), groups)| Stability {
            protocol,
            pickler,
            groups,
        })
        .collect()
}

/// What differs between the description of the value pickled (`want`) and of what loaded
/// (`got`), whatever holds it: the first node (in order) where they part, by its tag (the
/// first item of a description, `str`, `ref`, `Falsy`): `bytes->str` where the tags differ,
/// `ip differs` where one tag holds other contents; a state that `__setstate__` never set is
/// `Falsy: state missing`, named by its class. The containers around it are not named: the
/// same difference inside a list or alone is one cause.
pub fn value_cause(want: &str, got: &str) -> String {
    use serde_json::Value as J;
    /// The descriptions whose last item is a set of items or of pairs, in no order.
    const UNORDERED: &[&str] = &[
        "set",
        "frozenset",
        "dict",
        "Counter",
        "defaultdict",
        "frozendict",
    ];
    /// The descriptions that only hold others (named by what differs inside them).
    const CONTAINERS: &[&str] = &[
        "list",
        "tuple",
        "dict",
        "set",
        "frozenset",
        "OrderedDict",
        "Counter",
        "defaultdict",
        "deque",
        "ChainMap",
        "SimpleNamespace",
        "frozendict",
        "ref",
    ];
    fn tag(v: &J) -> &str {
        match v {
            J::Array(items) => items.first().and_then(J::as_str).unwrap_or("list"),
            J::String(_) => "text",
            J::Number(_) => "number",
            J::Bool(_) => "bool",
            J::Null => "null",
            J::Object(_) => "object",
        }
    }
    /// The first difference under `a` and `b`, or `None` where they are scalars (named by
    /// the node that holds them).
    fn walk(a: &J, b: &J) -> Option<String> {
        let (J::Array(xs), J::Array(ys)) = (a, b) else {
            return None;
        };
        let (ta, tb) = (tag(a), tag(b));
        if ta != tb {
            return Some(if tb == "missing" {
                "state missing".into()
            } else {
                format!("{ta}->{tb}")
            });
        }
        if let (true, Some(J::Array(want)), Some(J::Array(got))) =
            (UNORDERED.contains(&ta), xs.last(), ys.last())
        {
            if let Some(found) = unordered(want, got) {
                return Some(found);
            }
        }
        let first = xs.iter().zip(ys).find(|(x, y)| x != y);
        if let Some(found) = first
            .filter(|_| xs.len() == ys.len())
            .and_then(|(x, y)| walk(x, y))
        {
            return Some(if found == "state missing" && !CONTAINERS.contains(&ta) {
                format!("{ta}: {found}")
            } else {
                found
            });
        }
        Some(format!("{ta} differs"))
    }
    /// A description with the tags of its nodes left out: what the nodes hold.
    fn untagged(v: &J) -> J {
        match v {
            J::Array(xs) => {
                let skip = usize::from(matches!(xs.first(), Some(J::String(_))));
                J::Array(xs.iter().skip(skip).map(untagged).collect())
            }
            J::String(text) if text.starts_with('[') => serde_json::from_str::<J>(text)
                .map(|inner| untagged(&inner))
                .unwrap_or_else(|_| v.clone()),
            other => other.clone(),
        }
    }
    /// The first difference between the items of a set or the pairs of a dict, which are
    /// sorted by their descriptions (a key whose type changed sorts elsewhere): an item that
    /// went with the one that came whose contents it has, else whose tag it has.
    fn unordered(want: &[J], got: &[J]) -> Option<String> {
        // A set's items are descriptions as text.
        let items = |all: &[J]| -> Vec<J> {
            all.iter()
                .map(|x| match x {
                    J::String(text) => serde_json::from_str(text).unwrap_or_else(|_| x.clone()),
                    other => other.clone(),
                })
                .collect()
        };
        let (want, got) = (items(want), items(got));
        let gone: Vec<&J> = want.iter().filter(|x| !got.contains(x)).collect();
        let came: Vec<&J> = got.iter().filter(|x| !want.contains(x)).collect();
        // A node's contents, past its tag (a dict's pair has none: its first item is its key).
        let rest = |x: &J| match x {
            J::Array(xs) if matches!(xs.first(), Some(J::String(_))) => {
                xs.get(1..).map(<[J]>::to_vec)
            }
            _ => None,
        };
        // The same contents but for the tags (a pair whose key and value both changed type),
        // then the same first item but for its tags (a dict's pair, its key changed type and
        // its value became a reference or stopped being one, as the order of the pairs
        // moved), then the same tag.
        let first = |x: &J| match x {
            J::Array(xs) => xs.first().map(untagged),
            _ => None,
        };
        let score = |x: &J, y: &J| {
            if (rest(x).is_some() && rest(x) == rest(y)) || untagged(x) == untagged(y) {
                0
            } else if first(x).is_some() && first(x) == first(y) {
                1
            } else if tag(x) == tag(y) {
                2
            } else {
                3
            }
        };
        let (x, y) = gone
            .iter()
            .flat_map(|x| came.iter().map(move |y| (*x, *y)))
            .min_by_key(|(x, y)| score(x, y))?;
        walk(x, y)
    }
    match (
        serde_json::from_str::<J>(want),
        serde_json::from_str::<J>(got),
    ) {
        (Ok(a), Ok(b)) => walk(&a, &b).unwrap_or_else(|| "value".into()),
        _ => "value".into(),
    }
}

fn detail(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Error(t, m, _) => format!("{t}: {m}"),
        Outcome::Crash(why) => why.clone(),
        Outcome::Hang => "did not end within the time limit".into(),
        Outcome::Ok(..) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(canon: &str) -> Outcome {
        Outcome::Ok(canon.into(), None)
    }

    fn error(t: &str, m: &str) -> Outcome {
        Outcome::Error(t.into(), m.into(), String::new())
    }

    /// A value pickled by producer 0 (protocol 0, C pickler) and loaded by consumers 0 and 1
    /// with both unpicklers, as given.
    fn loads(by: &[(usize, Pickler, Outcome)]) -> Observation {
        let mut obs = Observation::default();
        obs.canon.insert(0, Ok("[\"float\",\"-inf\"]".into()));
        obs.canon.insert(1, Ok("[\"float\",\"-inf\"]".into()));
        obs.dumps.insert(
            (0, 0, Pickler::C),
            Outcome::Ok("46".into(), Some("46".into())),
        );
        for (c, u, o) in by {
            obs.insert_load((0, 0, Pickler::C, *c, *u), o.clone());
        }
        obs
    }

    fn parity(obs: &Observation) -> Vec<Finding> {
        findings(obs)
            .into_iter()
            .filter(|f| f.oracle == Oracle::UnpicklerParity)
            .collect()
    }

    #[test]
    fn one_unpickler_refusing_is_unpickler_parity() {
        let reference = "[\"float\",\"-inf\"]";
        let obs = loads(&[
            (0, Pickler::C, ok(reference)),
            (0, Pickler::Py, ok(reference)),
            (1, Pickler::C, error("ValueError", "could not convert")),
            (1, Pickler::Py, ok(reference)),
        ]);
        let found = parity(&obs);
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!(f.observed, "c=ValueError py=ok");
        assert_eq!(f.consumers, BTreeSet::from([1]));
        assert_eq!(f.producers, BTreeSet::from([0]));
        assert_eq!(f.unpickler, None);
        assert!(f.detail.contains("could not convert"), "{}", f.detail);
        // The cross-interpreter oracle still names the C unpickler alone.
        assert!(findings(&obs)
            .iter()
            .any(|f| f.oracle == Oracle::LoadDiffers && f.unpickler == Some(Pickler::C)));
    }

    /// Both unpicklers refusing, each with its own type, may be two causes in one value: the
    /// C unpickler alone refusing (the other loading) is one of them; both refusing alike, or
    /// the other unpickler refusing alone with another type, or another oracle, is not.
    #[test]
    fn one_unpickler_refusing_alone_is_part_of_both_refusing_otherwise() {
        let reference = "[\"float\",\"nan\"]";
        let found = |c: Outcome, py: Outcome| {
            parity(&loads(&[
                (0, Pickler::C, ok(reference)),
                (0, Pickler::Py, ok(reference)),
                (1, Pickler::C, c),
                (1, Pickler::Py, py),
            ]))
            .remove(0)
        };
        let both = found(
            error("ValueError", "could not convert"),
            error(
                "ModuleNotFoundError",
                "No module named 'string.templatelib'",
            ),
        );
        assert_eq!(both.observed, "c=ValueError py=ModuleNotFoundError");
        let c_alone = found(error("ValueError", "could not convert"), ok(reference));
        let py_alone = found(
            ok(reference),
            error(
                "ModuleNotFoundError",
                "No module named 'string.templatelib'",
            ),
        );
        let py_otherwise = found(ok(reference), error("KeyError", "0"));
        assert!(part_of(&c_alone, &both));
        assert!(part_of(&py_alone, &both));
        assert!(!part_of(&py_otherwise, &both));
        assert!(!part_of(&both, &c_alone), "a part does not hold the two");
        assert!(!part_of(&c_alone, &c_alone));
        let other_protocol = Finding {
            protocol: 3,
            ..c_alone.clone()
        };
        assert!(!part_of(&other_protocol, &both));
        // The same for load-differs: the C unpickler refusing as in both, or the Python one.
        let load = |observed: &str, u: Pickler| Finding {
            oracle: Oracle::LoadDiffers,
            observed: observed.into(),
            unpickler: Some(u),
            ..both.clone()
        };
        let both_loads = load("c=ValueError py=ModuleNotFoundError", Pickler::C);
        assert!(part_of(&load("ValueError", Pickler::C), &both_loads));
        assert!(part_of(
            &load("ModuleNotFoundError", Pickler::Py),
            &both_loads
        ));
        assert!(!part_of(
            &load("ModuleNotFoundError", Pickler::C),
            &both_loads
        ));
        assert!(!part_of(&c_alone, &both_loads), "another oracle");
    }

    /// A finding holds where the exceptions of its cause were raised: both unpicklers'.
    #[test]
    fn a_finding_holds_its_raise_sites() {
        let raised = |site: &str| Outcome::Error("TypeError".into(), "no".into(), site.into());
        let at = |site: &str| {
            let obs = loads(&[
                (0, Pickler::C, ok("[\"float\",\"-inf\"]")),
                (1, Pickler::C, raised("_pickle")),
                (1, Pickler::Py, raised(site)),
            ]);
            findings(&obs)
                .into_iter()
                .filter(|f| f.oracle == Oracle::LoadDiffers)
                .collect::<Vec<_>>()
        };
        let here = at("pickle.load_reduce");
        assert_eq!(here.len(), 2, "{here:?}");
        let sites: BTreeSet<String> = here.iter().flat_map(|f| f.sites.clone()).collect();
        assert_eq!(
            sites,
            BTreeSet::from(["_pickle".to_string(), "pickle.load_reduce".to_string()])
        );
        let elsewhere = at("copyreg._reconstructor");
        let py = |fs: &[Finding]| {
            fs.iter()
                .find(|f| f.unpickler == Some(Pickler::Py))
                .map(|f| f.sites.clone())
        };
        assert_eq!(
            py(&elsewhere),
            Some(BTreeSet::from([
                "_pickle".to_string(),
                "copyreg._reconstructor".to_string()
            ])),
            "the C unpickler's refusal of the same pickle is the same cause"
        );
        assert_eq!(site(&raised("")), None, "no site said");
    }

    #[test]
    fn two_values_or_two_exception_types_disagree_one_type_agrees() {
        let obs = loads(&[
            (1, Pickler::C, ok("[\"float\",\"0x1p+0\"]")),
            (1, Pickler::Py, ok("[\"float\",\"-inf\"]")),
        ]);
        assert_eq!(parity(&obs)[0].observed, "value");
        let obs = loads(&[
            (1, Pickler::C, error("UnpicklingError", "a")),
            (1, Pickler::Py, error("KeyError", "b")),
        ]);
        assert_eq!(parity(&obs)[0].observed, "c=UnpicklingError py=KeyError");
        let obs = loads(&[
            (1, Pickler::C, error("EOFError", "Ran out of input")),
            (1, Pickler::Py, error("EOFError", "")),
        ]);
        assert!(
            parity(&obs).is_empty(),
            "same exception type, other message"
        );
        let obs = loads(&[(1, Pickler::C, Outcome::Hang), (1, Pickler::Py, ok("x"))]);
        assert_eq!(parity(&obs)[0].observed, "c=hang py=ok");
    }

    /// A consumer whose two unpicklers refuse one pickle with two exception types is one
    /// load-differs cause (what each did), not one per unpickler; one type, or one unpickler
    /// refusing what the other loads, is named by the type.
    #[test]
    fn two_unpicklers_refusing_otherwise_are_one_load_cause() {
        let reference = "[\"float\",\"-inf\"]";
        let load = |obs: &Observation| -> Vec<Finding> {
            findings(obs)
                .into_iter()
                .filter(|f| f.oracle == Oracle::LoadDiffers)
                .collect()
        };
        let obs = loads(&[
            (0, Pickler::C, ok(reference)),
            (0, Pickler::Py, ok(reference)),
            (1, Pickler::C, error("UnpicklingError", "a")),
            (1, Pickler::Py, error("KeyError", "b")),
        ]);
        let found = load(&obs);
        assert_eq!(found.len(), 2, "{found:?}");
        for f in &found {
            assert_eq!(f.cause, "c=UnpicklingError py=KeyError");
            assert_eq!(f.observed, f.cause);
            assert_eq!(pair(f, &obs), Some((0, 1)), "{f:?}");
        }
        let obs = loads(&[
            (1, Pickler::C, error("UnpicklingError", "a")),
            (1, Pickler::Py, error("UnpicklingError", "b")),
        ]);
        assert!(load(&obs).iter().all(|f| f.cause == "UnpicklingError"));
        let obs = loads(&[
            (1, Pickler::C, error("ValueError", "a")),
            (1, Pickler::Py, ok(reference)),
        ]);
        assert_eq!(load(&obs)[0].cause, "ValueError");
    }

    #[test]
    fn the_pair_that_shows_a_finding_is_one_that_does() {
        // Producer 0's pickle loads wrong on consumer 1, producer 1's on consumer 0: one
        // value-differs finding of producers {0, 1} and consumers {0, 1}, whose pairs 0 -> 0
        // and 1 -> 1 do not show it.
        let mut obs = Observation::default();
        for p in 0..2 {
            obs.canon.insert(p, Ok("r".into()));
            obs.dumps
                .insert((p, 0, Pickler::C), Outcome::Ok(format!("{p}").into(), None));
            for c in 0..2 {
                let got = if p == c { "r" } else { "other" };
                obs.insert_load((p, 0, Pickler::C, c, Pickler::Py), ok(got));
            }
        }
        let f = findings(&obs)
            .into_iter()
            .find(|f| f.oracle == Oracle::ValueDiffers)
            .expect("a value-differs finding");
        assert_eq!(f.producers, BTreeSet::from([0, 1]));
        assert_eq!(f.consumers, BTreeSet::from([0, 1]));
        assert_eq!(pair(&f, &obs), Some((0, 1)));
    }

    #[test]
    fn unpickler_parity_needs_no_reference_and_both_unpicklers() {
        // The producers built different values: nothing is compared with a reference, the two
        // unpicklers of one consumer still are.
        let mut obs = loads(&[
            (1, Pickler::C, error("ValueError", "")),
            (1, Pickler::Py, ok("x")),
        ]);
        obs.canon.insert(1, Ok("other".into()));
        assert_eq!(reference(&obs), None);
        assert_eq!(parity(&obs).len(), 1);
        // A consumer with the Python unpickler only is not compared.
        let obs = loads(&[(1, Pickler::Py, error("ValueError", ""))]);
        assert!(parity(&obs).is_empty());
    }

    /// What differs is named by the node where the descriptions part, not by what holds it.
    #[test]
    fn a_value_cause_is_where_the_descriptions_part_whatever_holds_it() {
        let cause = value_cause;
        assert_eq!(cause(r#"["bytes","61"]"#, r#"["str","61"]"#), "bytes->str");
        assert_eq!(
            cause(
                r#"["list",[["int","1"],["bytes","61"]]]"#,
                r#"["list",[["int","1"],["str","61"]]]"#
            ),
            "bytes->str",
            "the same inside a list"
        );
        for state in [r#"["str",""]"#, r#"["int","0"]"#, r#"["None"]"#] {
            let want = format!(r#"["list",[["Falsy",{state}]]]"#);
            assert_eq!(
                cause(&want, r#"["list",[["Falsy",["missing"]]]]"#),
                "Falsy: state missing"
            );
        }
        assert_eq!(
            cause(
                r#"["ip","IPv6Address","::%1"]"#,
                r#"["ip","IPv6Address","::"]"#
            ),
            "ip differs"
        );
        assert_eq!(
            cause(
                r#"["list",[["list",[]],["ref",1]]]"#,
                r#"["list",[["list",[]],["list",[]]]]"#
            ),
            "ref->list",
            "sharing lost"
        );
        // A set's items and a dict's keys sort by their descriptions: a type that changed
        // sorts elsewhere, and is paired with what has its contents.
        assert_eq!(
            cause(
                r#"["frozenset",["[\"bytes\", \"0a\"]","[\"float\", \"inf\"]"]]"#,
                r#"["frozenset",["[\"float\", \"inf\"]","[\"str\", \"0a\"]"]]"#
            ),
            "bytes->str"
        );
        assert_eq!(
            cause(
                r#"["dict",[[["bytes",""],["int","0"]],[["float","0x1p+0"],["int","1"]]]]"#,
                r#"["dict",[[["float","0x1p+0"],["int","1"]],[["str",""],["int","0"]]]]"#
            ),
            "bytes->str"
        );
        // 2.7's bytes loaded as str on 3, in a dict whose pairs then sort otherwise: paired
        // by what they hold, not by their place (the 600 s run of seed 7 named these
        // `bytes->int`, `bytes->float` and `list differs`).
        assert_eq!(
            cause(
                r#"["dict",[[["bytes",""],["bytes",""]],[["int","0"],["bytes",""]]]]"#,
                r#"["dict",[[["int","0"],["str",""]],[["str",""],["str",""]]]]"#
            ),
            "bytes->str"
        );
        assert_eq!(
            cause(
                r#"["dict",[[["bytes",""],["list",[]]],[["float","0x1p-1022"],["ref",1]]]]"#,
                r#"["dict",[[["float","0x1p-1022"],["list",[]]],[["str",""],["ref",1]]]]"#
            ),
            "bytes->str"
        );
        assert_eq!(
            cause(
                r#"["frozenset",["[\"tuple\", [[\"bytes\", \"\"], [\"tuple\", []], [\"bytes\", \"\"]]]","[\"tuple\", [[\"str\", \"\"], [\"bytes\", \"\"]]]"]]"#,
                r#"["frozenset",["[\"tuple\", [[\"str\", \"\"], [\"str\", \"\"]]]","[\"tuple\", [[\"str\", \"\"], [\"tuple\", []], [\"str\", \"\"]]]"]]"#
            ),
            "bytes->str"
        );
        assert_eq!(cause("not json", "[]"), "value");
    }
}
