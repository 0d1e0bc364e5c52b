//! One batch of values through every interpreter: each producer dumps each value it can
//! build with each protocol and pickler it has (one batch to its worker), the distinct pickles
//! are loaded by each consumer that has their protocol with each unpickler (one batch to its
//! worker, holding only those pickles), and what happened is gathered per value
//! ([`Observation`]). Loads answer the hash of what loaded; its text travels only when it is
//! not what was pickled.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use futures::stream::{self, StreamExt};
use serde_json::{json, Map, Value as Json};
use tokio_util::sync::CancellationToken;

use super::parity_cause;
use super::value::Value;
use super::worker::{Done, Failed, Worker};
use crate::python::Interpreter;

/// The C pickler (or unpickler) or the pure-Python one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pickler {
    C,
    Py,
}

impl Pickler {
    pub fn as_str(self) -> &'static str {
        match self {
            Pickler::C => "c",
            Pickler::Py => "py",
        }
    }

    /// The other one.
    pub fn other(self) -> Pickler {
        match self {
            Pickler::C => Pickler::Py,
            Pickler::Py => Pickler::C,
        }
    }

    /// What `python` has: the C one where its accelerator is there (`_pickle`, `cPickle`).
    pub fn of(python: &Interpreter) -> Vec<Pickler> {
        if python.c_pickle.is_some() {
            vec![Pickler::C, Pickler::Py]
        } else {
            vec![Pickler::Py]
        }
    }
}

/// The protocols `python` writes and reads.
pub fn protocols(python: &Interpreter) -> u32 {
    python.pickle_highest_protocol.unwrap_or(2)
}

/// The protocol a dump names when it names none (`pickle.dumps(value)`: 0 on 2.7, 3 on 3.0
/// to 3.7, 4 on 3.8 and later, 5 on 3.14): every producer writes it and every consumer is
/// asked to load it, whatever its own highest protocol, so that an older consumer's refusal
/// of a newer default shows. Written `default` in the case files and the summary.
pub const DEFAULT_PROTOCOL: u32 = 100;

/// Protocol 5 with a `buffer_callback`: the value's `PickleBuffer`s out of band, carried with
/// the pickle and given back to the load as `buffers=` (`dumps_with(value, "oob", ...)`).
/// Asked of producers and consumers that have protocol 5; a value none of whose buffers
/// went out of band is not dumped so (nor one that cannot hold such a buffer:
/// [`Value::may_go_out_of_band`]). Written `oob` in the case files and the summary.
pub const OOB_PROTOCOL: u32 = 105;

/// A protocol as the case files and the summary write it: its number, `default` or `oob`.
pub fn protocol_text(protocol: u32) -> String {
    match protocol {
        DEFAULT_PROTOCOL => "default".into(),
        OOB_PROTOCOL => "oob".into(),
        _ => protocol.to_string(),
    }
}

/// The protocol number the pickle declares (`oob` is 5; the default none in particular).
pub fn protocol_number(protocol: u32) -> u32 {
    if protocol == OOB_PROTOCOL {
        5
    } else {
        protocol
    }
}

/// The protocols `python` dumps with: each it has, then its default, then 5 out of band.
fn dumped(python: &Interpreter) -> impl Iterator<Item = u32> {
    let oob = (protocols(python) >= 5).then_some(OOB_PROTOCOL);
    (0..=protocols(python)).chain([DEFAULT_PROTOCOL]).chain(oob)
}

/// Whether a consumer that reads up to `highest` is asked to load a pickle of `protocol`.
fn readable(protocol: u32, highest: u32) -> bool {
    protocol_number(protocol) <= highest || protocol == DEFAULT_PROTOCOL
}

/// How a dump or a load ended.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// A dump's pickle (hex) and, where the C and the Python pickler of its producer wrote
    /// bytes that still differ once `pickletools.optimize`d, its optimized form; a load's
    /// canonical description.
    Ok(Arc<str>, Option<Arc<str>>),
    /// The exception's type, message and where it was raised (`pickle.save_global`,
    /// `copyreg._reduce_ex`, `_pickle` for the C code; empty where unknown).
    Error(String, String, String),
    Hang,
    Crash(String),
}

impl Outcome {
    /// A short name of what happened: `ok`, the exception's type, `hang`, `crash`.
    pub fn label(&self) -> String {
        match self {
            Outcome::Ok(..) => "ok".into(),
            Outcome::Error(t, ..) => t.clone(),
            Outcome::Hang => "hang".into(),
            Outcome::Crash(_) => "crash".into(),
        }
    }
}

/// Which dump: producer (index in the selection), protocol, pickler.
pub type DumpKey = (usize, u32, Pickler);
/// A distinct pickle's hex, and for each value that it is a pickle of, the protocol and the
/// pickle's number in the value's [`Observation::pickles`].
type Users = (Arc<str>, Vec<(usize, u32, usize)>);
/// The distinct pickles of a batch, by their bytes.
type Blobs = BTreeMap<Vec<u8>, Users>;
type Blob<'a> = (&'a Vec<u8>, &'a Users);

/// Which load: the dump, then consumer and unpickler.
pub type LoadKey = (usize, u32, Pickler, usize, Pickler);

/// Which load of a distinct pickle: the pickle (its number in [`Observation::pickles`]),
/// consumer, unpickler.
pub type PickleLoad = (usize, usize, Pickler);

/// Everything that happened to one value. A load is kept once per distinct pickle (its bytes
/// and protocol), consumer and unpickler, not once per producer that wrote those bytes: the
/// dumps of one protocol and pickler on most producers are the same bytes, so a value has
/// tens of loads where the pairs of producer and consumer are thousands.
#[derive(Debug, Clone, Default)]
pub struct Observation {
    /// Each producer's canonical description of the value it built (the text shared by every
    /// producer that built the same), or the build's error.
    pub canon: BTreeMap<usize, Result<Arc<str>, String>>,
    pub dumps: BTreeMap<DumpKey, Outcome>,
    /// The distinct pickles, each with the dumps that wrote it.
    pub pickles: Vec<Vec<DumpKey>>,
    /// Which of `pickles` each dump that pickled wrote.
    pickle_of: BTreeMap<DumpKey, usize>,
    /// What each consumer's unpicklers did with each distinct pickle.
    pub loads: BTreeMap<PickleLoad, Outcome>,
    /// Per producer and protocol whose C and Python pickles differ once optimized: what each
    /// pickler chose that the other did not (`TUPLE/LIST`, `memo: c only`, `FLOAT`), as
    /// [`parity_cause::cause`] names it from the two pickles.
    pub parity_ops: BTreeMap<(usize, u32), String>,
}

impl Observation {
    /// What a consumer's unpickler did with what a dump wrote.
    pub fn load(&self, (p, protocol, k, c, u): LoadKey) -> Option<&Outcome> {
        let &pickle = self.pickle_of.get(&(p, protocol, k))?;
        self.loads.get(&(pickle, c, u))
    }

    /// Every load with each dump that wrote its pickle: a pair of producer and consumer at a
    /// time, in no particular order.
    pub fn each_load(&self) -> impl Iterator<Item = (LoadKey, &Outcome)> {
        self.loads
            .iter()
            .flat_map(move |(&(pickle, c, u), outcome)| {
                self.pickles[pickle]
                    .iter()
                    .map(move |&(p, protocol, k)| ((p, protocol, k, c, u), outcome))
            })
    }

    /// The number of the distinct pickle `dump` wrote, given the pickle's number among those
    /// of the value seen so far (`None`: new, numbered next).
    fn wrote(&mut self, dump: DumpKey, pickle: Option<usize>) -> usize {
        let n = pickle.unwrap_or_else(|| {
            self.pickles.push(Vec::new());
            self.pickles.len() - 1
        });
        self.pickles[n].push(dump);
        self.pickle_of.insert(dump, n);
        n
    }

    /// A load as the tests write it: the dump wrote a pickle of its own unless it already has
    /// one.
    #[cfg(test)]
    pub fn insert_load(&mut self, (p, protocol, k, c, u): LoadKey, outcome: Outcome) {
        let dump = (p, protocol, k);
        let pickle = match self.pickle_of.get(&dump) {
            Some(&n) => n,
            None => self.wrote(dump, None),
        };
        self.loads.insert((pickle, c, u), outcome);
    }
}

/// The interpreters and the worker a batch runs on.
pub struct Bench<'a> {
    pub pythons: &'a [Interpreter],
    /// The interpreters the loads run on, one per interpreter of `pythons` (its consumer's
    /// environment), in worker slots after those of `pythons`; none: `pythons` loads too.
    pub loaders: Option<&'a [Interpreter]>,
    pub worker: &'a Worker,
    pub jobs: usize,
    /// Cancelled by a signal or once past `--time`: what is under way is dropped.
    pub cancel: &'a CancellationToken,
}

fn hex(bytes: &[u8]) -> Arc<str> {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s.into()
}

fn error_text(e: Failed) -> String {
    match e {
        Failed::Stopped => "stopped".into(),
        Failed::Start(why) => why,
    }
}

/// Why observing failed: stopped (a signal, `--time`), or a worker that cannot start.
pub type ObserveError = Failed;

impl Bench<'_> {
    /// Observe `values` on the interpreters numbered `on` (indices into `pythons`).
    pub async fn observe(
        &self,
        values: &[Value],
        on: &[usize],
    ) -> Result<Vec<Observation>, ObserveError> {
        let mut obs = vec![Observation::default(); values.len()];
        let asked = |p: usize, v: usize| {
            let (major, minor) = values[v].min_version();
            let r = self.pythons[p].version.release();
            (r[0], r.get(1).copied().unwrap_or(0)) >= (major, minor)
        };
        // Dumps.
        let dumps = stream::iter(on.iter().copied().map(|p| {
            let mut tasks = Vec::new();
            let mut keys = Vec::new();
            let mut sources = Vec::new();
            for v in (0..values.len()).filter(|&v| asked(p, v)) {
                sources.push(json!([v.to_string(), values[v].source()]));
                for proto in dumped(&self.pythons[p]) {
                    if proto == OOB_PROTOCOL && !values[v].may_go_out_of_band() {
                        continue;
                    }
                    for k in Pickler::of(&self.pythons[p]) {
                        tasks.push(json!([v.to_string(), proto, k.as_str()]));
                        keys.push((v, proto, k));
                    }
                }
            }
            let mut req = Map::new();
            req.insert("op".into(), "dump".into());
            req.insert("values".into(), Json::Array(sources));
            async move {
                let done = self
                    .worker
                    .run(p, &self.pythons[p], &req, &tasks, &[], self.cancel)
                    .await;
                (p, keys, done)
            }
        }))
        .buffer_unordered(self.jobs.max(1))
        .collect::<Vec<_>>()
        .await;
        // In the order of the producers, whichever answered first: the pickles are numbered
        // the same way on every run.
        let mut dumps = dumps;
        dumps.sort_by_key(|(p, ..)| *p);
        // The distinct pickles, each with its hex and the values it is a pickle of; the text
        // of each hash.
        let mut blobs: Blobs = BTreeMap::new();
        let mut texts: HashMap<String, Arc<str>> = HashMap::new();
        // Per value, the hash of its description on the first producer that built it.
        let mut expected: BTreeMap<usize, String> = BTreeMap::new();
        for (p, keys, answer) in dumps {
            let answer = answer?;
            for (id, built) in &answer.built {
                let Ok(v) = id.parse::<usize>() else { continue };
                match built {
                    Ok((canon, hash)) => {
                        let text = texts
                            .entry(hash.clone())
                            .or_insert_with(|| canon.as_str().into());
                        obs[v].canon.insert(p, Ok(text.clone()));
                        expected.entry(v).or_insert_with(|| hash.clone());
                    }
                    Err((t, m)) => {
                        obs[v].canon.insert(p, Err(format!("{t}: {m}")));
                    }
                }
            }
            let mut optimized: BTreeMap<(usize, u32), (Arc<str>, Arc<str>)> = BTreeMap::new();
            for (id, protocol, c, py) in &answer.parity {
                if let Ok(v) = id.parse::<usize>() {
                    optimized.insert((v, *protocol), (hex(c), hex(py)));
                    obs[v]
                        .parity_ops
                        .insert((p, *protocol), parity_cause::cause(c, py));
                }
            }
            for ((v, proto, k), done) in keys.into_iter().zip(answer.tasks) {
                let outcome = match done {
                    Done::NotBuilt => continue,
                    Done::Dumped(bytes) => {
                        let opt = optimized.get(&(v, proto)).map(|(c, py)| match k {
                            Pickler::C => c.clone(),
                            Pickler::Py => py.clone(),
                        });
                        let (text, users) = blobs
                            .entry(bytes)
                            .or_insert_with_key(|bytes| (hex(bytes), Vec::new()));
                        let dump = (p, proto, k);
                        match users.iter().find(|&&(w, q, _)| (w, q) == (v, proto)) {
                            Some(&(_, _, n)) => {
                                obs[v].wrote(dump, Some(n));
                            }
                            None => {
                                let n = obs[v].wrote(dump, None);
                                users.push((v, proto, n));
                            }
                        }
                        Outcome::Ok(text.clone(), opt)
                    }
                    Done::Loaded { .. } => Outcome::Crash("a load's answer to a dump".into()),
                    Done::Error(t, m, site) => Outcome::Error(t, m, site),
                    Done::Hang => Outcome::Hang,
                    Done::Crash(why) => Outcome::Crash(why),
                };
                obs[v].dumps.insert((p, proto, k), outcome);
            }
        }
        self.load(values, on, &blobs, &texts, &expected, &mut obs)
            .await?;
        Ok(obs)
    }

    async fn load(
        &self,
        values: &[Value],
        on: &[usize],
        blobs: &Blobs,
        texts: &HashMap<String, Arc<str>>,
        expected: &BTreeMap<usize, String>,
        obs: &mut [Observation],
    ) -> Result<(), ObserveError> {
        let uses: Vec<Blob> = blobs.iter().collect();
        // The folders of the user's builders, on the consumers' `sys.path` (a worker of its
        // own on the consumers' side never built the values).
        let mut setup: Vec<String> = values.iter().map(Value::load_setup).collect();
        setup.sort();
        setup.dedup();
        setup.retain(|s| !s.is_empty());
        let setup = &setup;
        let loads = stream::iter(on.iter().copied().map(|c| {
            let (slot, python) = match self.loaders {
                Some(loaders) => (self.pythons.len() + c, &loaders[c]),
                None => (c, &self.pythons[c]),
            };
            let r = python.version.release();
            let version = (r[0], r.get(1).copied().unwrap_or(0));
            let mut tasks = Vec::new();
            let mut keys = Vec::new();
            let mut parts: Vec<&[u8]> = Vec::new();
            for (b, (bytes, (_, users))) in uses.iter().enumerate() {
                let wanted = users.iter().any(|(v, proto, _)| {
                    readable(*proto, protocols(python)) && values[*v].min_version() <= version
                });
                if !wanted {
                    continue;
                }
                parts.push(bytes.as_slice());
                let hash = users
                    .iter()
                    .find_map(|(v, ..)| expected.get(v))
                    .cloned()
                    .unwrap_or_default();
                for u in Pickler::of(python) {
                    tasks.push(json!([parts.len(), u.as_str(), hash]));
                    keys.push((b, u));
                }
            }
            let mut req = Map::new();
            req.insert("op".into(), "load".into());
            if !setup.is_empty() {
                req.insert("setup".into(), json!(setup));
            }
            async move {
                let done = self
                    .worker
                    .run(slot, python, &req, &tasks, &parts, self.cancel)
                    .await;
                (c, version, keys, done)
            }
        }))
        .buffer_unordered(self.jobs.max(1))
        .collect::<Vec<_>>()
        .await;
        for (c, version, keys, answer) in loads {
            for ((b, u), done) in keys.into_iter().zip(answer?.tasks) {
                let outcome = match done {
                    Done::Loaded { hash, canon } => {
                        let text = match canon {
                            Some(text) => text.into(),
                            None => texts.get(&hash).cloned().unwrap_or_else(|| hash.into()),
                        };
                        Outcome::Ok(text, None)
                    }
                    Done::Error(t, m, site) => Outcome::Error(t, m, site),
                    Done::Hang => Outcome::Hang,
                    Done::Crash(why) => Outcome::Crash(why),
                    Done::NotBuilt | Done::Dumped(_) => {
                        Outcome::Crash("the worker said nothing of the task".into())
                    }
                };
                for &(v, proto, n) in &uses[b].1 .1 {
                    if readable(proto, protocols(&self.pythons[c]))
                        && values[v].min_version() <= version
                    {
                        obs[v].loads.insert((n, c, u), outcome.clone());
                    }
                }
            }
        }
        Ok(())
    }
}

/// The message of a failure to observe.
pub fn describe(e: ObserveError) -> String {
    error_text(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three producers, two of them writing the same bytes: two distinct pickles, so a
    /// consumer's unpickler is kept twice, not three times, and every pair still reads it.
    #[test]
    fn a_load_is_kept_once_per_distinct_pickle_and_read_by_every_pair() {
        let mut obs = Observation::default();
        let same = obs.wrote((0, 2, Pickler::C), None);
        assert_eq!(obs.wrote((1, 2, Pickler::C), Some(same)), same);
        let other = obs.wrote((2, 2, Pickler::C), None);
        assert_ne!(same, other);
        let loaded = Outcome::Ok("[\"int\",\"1\"]".into(), None);
        let refused = Outcome::Error("ValueError".into(), "unsupported".into(), String::new());
        for c in 0..3 {
            obs.loads.insert((same, c, Pickler::Py), loaded.clone());
            obs.loads.insert((other, c, Pickler::Py), refused.clone());
        }
        assert_eq!(obs.loads.len(), 6);
        assert_eq!(obs.each_load().count(), 9);
        assert_eq!(obs.load((1, 2, Pickler::C, 2, Pickler::Py)), Some(&loaded));
        assert_eq!(obs.load((2, 2, Pickler::C, 0, Pickler::Py)), Some(&refused));
        assert_eq!(obs.load((2, 2, Pickler::C, 0, Pickler::C)), None);
        assert_eq!(obs.load((0, 1, Pickler::C, 0, Pickler::Py)), None);
        assert_eq!(
            obs.pickles[same],
            vec![(0, 2, Pickler::C), (1, 2, Pickler::C)]
        );
    }
}
