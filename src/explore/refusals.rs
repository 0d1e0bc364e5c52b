//! Which of one observation's load refusals are one cause. The exception's type does not tell
//! two causes apart (2.7 refusing a newer default protocol and PyPy 8's C unpickler refusing a
//! `nan` are both `ValueError`), nor does `_pickle` as the raise site (both C unpicklers raise
//! in their own code). Two refusals of one type are one cause where they were raised in the
//! same Python function (`pickle.load_proto`), where both unpicklers of one consumer refused
//! the same pickle with it (so a C unpickler's refusal goes with its Python unpickler's
//! function), or where both were raised in C code with the same wording once the value's parts
//! are masked (`wording.rs`); hangs and crashes of one kind are one cause.

use std::collections::{BTreeSet, HashMap};

use litemap::LiteMap;

use super::observe::{Observation, Outcome, PickleLoad, Pickler};
use super::wording::{mask, normalise};

/// Where an outcome's exception was raised, if it says.
pub fn site(outcome: &Outcome) -> Option<&String> {
    match outcome {
        Outcome::Error(_, _, site) if !site.is_empty() => Some(site),
        _ => None,
    }
}

/// What a load-differs finding names a consumer's refusal by (`outcome`, by unpickler `u`):
/// its exception type (`hang`, `crash`), or where the consumer's other unpickler refused the
/// same pickle otherwise, what each did (`c=UnpicklingError py=KeyError`), the same for both
/// unpicklers: one cause, not one finding per unpickler.
pub fn refusal(outcome: &Outcome, u: Pickler, other: Option<&Outcome>) -> String {
    match other {
        Some(o) if !matches!(o, Outcome::Ok(..)) && o.label() != outcome.label() => {
            let (c, py) = match u {
                Pickler::C => (outcome.label(), o.label()),
                Pickler::Py => (o.label(), outcome.label()),
            };
            format!("c={c} py={py}")
        }
        _ => outcome.label(),
    }
}

/// The raise sites of the accelerators: an exception raised in their C code, no Python frame.
const IN_C: &[&str] = &["_pickle", "cPickle"];

/// One cause among an observation's refusals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// The refusal ([`refusal`]); where no refusal of it was raised in a Python function, with
    /// the masked wording of its C code (`ValueError: could not convert string to float`).
    pub name: String,
    /// Where its exceptions were raised, every refusal of it.
    pub sites: BTreeSet<String>,
}

/// Every refusal of an observation's loads (a distinct pickle, a consumer, an unpickler), by
/// its cause: the index of the cause in the second, and the refusal's label ([`refusal`]).
pub fn causes(obs: &Observation) -> (LiteMap<PickleLoad, (usize, String)>, Vec<Cause>) {
    let refused: Vec<(PickleLoad, &Outcome, String)> = obs
        .loads
        .iter()
        .filter(|(_, o)| !matches!(o, Outcome::Ok(..)))
        .map(|(&(pickle, c, u), o)| {
            let label = refusal(o, u, obs.loads.get(&(pickle, c, u.other())));
            ((pickle, c, u), o, label)
        })
        .collect();
    // Each refusal's place, the wording of C code worked out once per message: most refusals
    // of a value are a few messages said by many consumers (normalising and masking each
    // refusal's, three times, was 7% of crosspickle's instructions in a short explore).
    let mut wordings: HashMap<&str, String> = HashMap::new();
    let places: Vec<Place> = refused
        .iter()
        .map(|(_, outcome, _)| place(outcome, &mut wordings))
        .collect();
    let mut parent: Vec<usize> = (0..refused.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    fn join(parent: &mut [usize], a: usize, b: usize) {
        let (ra, rb) = (root(parent, a), root(parent, b));
        parent[ra.max(rb)] = ra.min(rb);
    }
    // The first refusal of each label and place (a Python function, a wording in C, neither),
    // and of each label, pickle and consumer.
    let mut first: HashMap<(&str, &Place), usize> = HashMap::new();
    let mut both: HashMap<(&str, usize, usize), usize> = HashMap::new();
    for (i, ((pickle, c, _), _, label)) in refused.iter().enumerate() {
        match first.get(&(label.as_str(), &places[i])) {
            Some(&j) => join(&mut parent, i, j),
            None => {
                first.insert((label, &places[i]), i);
            }
        }
        match both.get(&(label.as_str(), *pickle, *c)) {
            Some(&j) => join(&mut parent, i, j),
            None => {
                both.insert((label, *pickle, *c), i);
            }
        }
    }
    // Per cause: its label, sites, whether a Python function raised it, its C wordings.
    #[derive(Default)]
    struct Seen {
        label: String,
        sites: BTreeSet<String>,
        in_python: bool,
        wordings: BTreeSet<String>,
    }
    let mut index: HashMap<usize, usize> = HashMap::new();
    let mut all: Vec<Seen> = Vec::new();
    // In the order of the loads' keys, as `refused` is.
    let mut by = LiteMap::with_capacity(refused.len());
    for (i, (key, outcome, label)) in refused.into_iter().enumerate() {
        let r = root(&mut parent, i);
        let n = *index.entry(r).or_insert_with(|| {
            all.push(Seen {
                label: label.clone(),
                ..Seen::default()
            });
            all.len() - 1
        });
        let seen = &mut all[n];
        seen.sites.extend(site(outcome).cloned());
        match &places[i] {
            Place::Function(_) => seen.in_python = true,
            Place::Wording(w) => {
                seen.wordings.insert(w.clone());
            }
            Place::Unsaid => {}
        }
        by.insert(key, (n, label));
    }
    let causes = all
        .into_iter()
        .map(|seen| Cause {
            name: if seen.in_python || seen.wordings.is_empty() {
                seen.label
            } else {
                let wordings: Vec<String> = seen.wordings.into_iter().collect();
                format!("{}: {}", seen.label, wordings.join(" | "))
            },
            sites: seen.sites,
        })
        .collect();
    (by, causes)
}

/// Where a refusal was raised, as far as it tells causes apart.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Place {
    /// A Python function (`pickle.load_proto`, `copyreg._reconstructor`).
    Function(String),
    /// C code, by its message's wording.
    Wording(String),
    /// Not said (a hang, a crash).
    Unsaid,
}

/// Where `outcome` was raised; the wording of a message is taken from `wordings` where it was
/// worked out before, and kept there.
fn place<'a>(outcome: &'a Outcome, wordings: &mut HashMap<&'a str, String>) -> Place {
    match (site(outcome), outcome) {
        (Some(s), Outcome::Error(_, message, _)) if IN_C.contains(&s.as_str()) => {
            let wording = wordings
                .entry(message.as_str())
                .or_insert_with(|| mask(&normalise(message)));
            Place::Wording(wording.clone())
        }
        (Some(s), _) => Place::Function(s.clone()),
        _ => Place::Unsaid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn raised(t: &str, m: &str, site: &str) -> Outcome {
        Outcome::Error(t.into(), m.into(), site.into())
    }

    /// Pickle 0 (producer 0's) loaded by consumers 0 to 2 with `loads` (consumer, unpickler,
    /// outcome): the cause of each refusal by consumer and unpickler.
    fn of(loads: &[(usize, Pickler, Outcome)]) -> BTreeMap<(usize, Pickler), Cause> {
        let mut obs = Observation::default();
        for (c, u, o) in loads {
            obs.insert_load((0, 0, Pickler::C, *c, *u), o.clone());
        }
        let (by, causes) = causes(&obs);
        by.iter()
            .map(|(&(_, c, u), &(n, _))| ((c, u), causes[n].clone()))
            .collect()
    }

    /// 2.7 and 3.7 refusing a newer protocol (C code, and pickle.py's `load_proto`), and PyPy
    /// 8's C unpickler refusing a `nan` its Python unpickler loads: two causes of one type.
    #[test]
    fn one_type_from_two_places_is_two_causes() {
        let proto = "unsupported pickle protocol: 5";
        let found = of(&[
            (0, Pickler::C, raised("ValueError", proto, "cPickle")),
            (
                0,
                Pickler::Py,
                raised("ValueError", proto, "pickle.load_proto"),
            ),
            (1, Pickler::C, raised("ValueError", proto, "_pickle")),
            (
                1,
                Pickler::Py,
                raised("ValueError", proto, "pickle.load_proto"),
            ),
            (
                2,
                Pickler::C,
                raised("ValueError", "could not convert string to float", "_pickle"),
            ),
            (2, Pickler::Py, Outcome::Ok("x".into(), None)),
        ]);
        let refused = found[&(0, Pickler::C)].clone();
        assert_eq!(refused.name, "ValueError");
        let sites = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        assert_eq!(
            refused.sites,
            sites(&["_pickle", "cPickle", "pickle.load_proto"])
        );
        for key in [(0, Pickler::Py), (1, Pickler::C), (1, Pickler::Py)] {
            assert_eq!(found[&key], refused, "{key:?}");
        }
        let nan = &found[&(2, Pickler::C)];
        assert_eq!(nan.name, "ValueError: could not convert string to float");
        assert_eq!(nan.sites, sites(&["_pickle"]));
    }

    /// One cause worded otherwise by two versions' C code is still one where their Python
    /// unpicklers raise it in the same function; two C refusals of one wording (the value's
    /// parts masked) are one; hangs are one.
    #[test]
    fn one_cause_stays_one_across_wordings() {
        let found = of(&[
            (
                0,
                Pickler::C,
                raised(
                    "TypeError",
                    "__new__() missing 1 required positional argument: 'a'",
                    "_pickle",
                ),
            ),
            (
                0,
                Pickler::Py,
                raised(
                    "TypeError",
                    "__new__() missing 1 required positional argument: 'a'",
                    "pickle.load_newobj",
                ),
            ),
            (
                1,
                Pickler::C,
                raised(
                    "TypeError",
                    "C.__new__() missing 1 required positional argument: 'a'",
                    "_pickle",
                ),
            ),
            (
                1,
                Pickler::Py,
                raised(
                    "TypeError",
                    "C.__new__() missing 1 required positional argument: 'a'",
                    "pickle.load_newobj",
                ),
            ),
        ]);
        assert!(
            found.values().all(|c| *c == found[&(0, Pickler::C)]),
            "{found:#?}"
        );
        assert_eq!(found[&(0, Pickler::C)].name, "TypeError");
        let found = of(&[
            (
                0,
                Pickler::C,
                raised("ValueError", "bad 'x' at 1", "_pickle"),
            ),
            (
                1,
                Pickler::C,
                raised("ValueError", "bad 'y' at 2", "_pickle"),
            ),
            (2, Pickler::C, Outcome::Hang),
            (2, Pickler::Py, Outcome::Hang),
        ]);
        assert_eq!(found[&(0, Pickler::C)], found[&(1, Pickler::C)]);
        assert_eq!(found[&(0, Pickler::C)].name, "ValueError: bad '?' at ?");
        assert_eq!(found[&(2, Pickler::C)], found[&(2, Pickler::Py)]);
        assert_eq!(found[&(2, Pickler::C)].name, "hang");
    }
}
