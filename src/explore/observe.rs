//! One batch of values through every interpreter: each producer dumps each value it can
//! build with each protocol and pickler it has (one batch to its worker), the distinct pickles
//! are loaded by each consumer that has their protocol with each unpickler (one batch to its
//! worker, holding only those pickles), and what happened is gathered per value
//! ([`Observation`]). Loads answer the hash of what loaded; its text travels only when it is
//! not what was pickled.

use litemap::LiteMap;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use futures::stream::{self, StreamExt};
use tokio_util::sync::CancellationToken;

use super::parity_cause;
use super::value::Value;
use super::worker::{json_str, push_number, Done, Failed, WireRequest, Worker};
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

/// The release build whose Python pickler and unpickler stand for those of `pythons[p]`, a
/// debug build: one of the same implementation and version (PyPy's too), free-threaded or not
/// alike, with the C pickler and the protocols the debug build has. Its `pickle.py` is the
/// debug build's own source (a Python version ships one), and what a debug build adds is
/// checks on C code (assertions, the allocator's debug hooks), which its C pickler and
/// unpickler exercise: so where both are observed, the debug build runs the C ones only, and
/// what its Python ones did is its release build's ([`Twins`]).
pub fn release_twin(pythons: &[Interpreter], p: usize) -> Option<usize> {
    let d = &pythons[p];
    if !d.debug || d.c_pickle.is_none() {
        return None;
    }
    pythons.iter().position(|r| {
        !r.debug
            && r.implementation == d.implementation
            && r.version == d.version
            && r.implementation_version == d.implementation_version
            && r.free_threaded == d.free_threaded
            && r.c_pickle == d.c_pickle
            && r.pickle_highest_protocol == d.pickle_highest_protocol
    })
}

/// The debug builds among the interpreters observed whose [`release_twin`] is observed too,
/// each with it: they run the C pickler and unpickler only, and their Python ones' dumps and
/// loads are filled in from the release build's.
struct Twins(Vec<(usize, usize)>);

impl Twins {
    fn among(pythons: &[Interpreter], on: &[usize]) -> Twins {
        Twins(
            on.iter()
                .filter_map(|&d| Some((d, release_twin(pythons, d).filter(|r| on.contains(r))?)))
                .collect(),
        )
    }

    /// The picklers (and unpicklers) `pythons[p]` runs.
    fn picklers(&self, pythons: &[Interpreter], p: usize) -> Vec<Pickler> {
        let mut all = Pickler::of(&pythons[p]);
        if self.0.iter().any(|&(d, _)| d == p) {
            all.retain(|&k| k == Pickler::C);
        }
        all
    }

    /// Each debug build's Python dumps as its release build's (the same outcome, the same
    /// distinct pickle) where its C pickler did what the release build's did, the same bytes
    /// or the same error, and then the two picklers' parity its release build's. Where the C
    /// picklers differ (a debug build's own failure), its Python dumps are left unknown
    /// rather than guessed.
    fn fill_dumps(&self, o: &mut Observation) {
        for &(d, r) in &self.0 {
            let theirs: Vec<(u32, Outcome)> = o
                .dumps
                .iter()
                .filter(|((p, _, k), _)| (*p, *k) == (r, Pickler::Py))
                .map(|(&(_, protocol, _), outcome)| (protocol, outcome.clone()))
                .collect();
            for (protocol, outcome) in theirs {
                let c = |p| o.dumps.get(&(p, protocol, Pickler::C));
                let Some(c_theirs) = c(r).filter(|&t| c(d).is_some_and(|own| alike(own, t))) else {
                    continue;
                };
                o.dumps.insert((d, protocol, Pickler::C), c_theirs.clone());
                if let Some(&n) = o.pickle_of.get(&(r, protocol, Pickler::Py)) {
                    o.wrote((d, protocol, Pickler::Py), Some(n));
                }
                o.dumps.insert((d, protocol, Pickler::Py), outcome);
                if let Some(cause) = o.parity_ops.get(&(r, protocol)).cloned() {
                    o.parity_ops.insert((d, protocol), cause);
                }
            }
        }
    }

    /// Each debug build's Python loads as its release build's, of each pickle its C
    /// unpickler loaded as the release build's did (they read the same protocols), before the
    /// loads are ordered.
    fn fill_loads(&self, o: &mut Observation) {
        for &(d, r) in &self.0 {
            let c_loads: HashMap<(usize, usize), &Outcome> = o
                .loads
                .entries
                .iter()
                .filter(|((_, c, u), _)| (*c == d || *c == r) && *u == Pickler::C)
                .map(|((pickle, c, _), outcome)| ((*pickle, *c), outcome))
                .collect();
            let theirs: Vec<(usize, Outcome)> = o
                .loads
                .entries
                .iter()
                .filter(|((pickle, c, u), _)| {
                    (*c, *u) == (r, Pickler::Py)
                        && matches!(
                            (c_loads.get(&(*pickle, d)), c_loads.get(&(*pickle, r))),
                            (Some(own), Some(t)) if alike(own, t)
                        )
                })
                .map(|((pickle, ..), outcome)| (*pickle, outcome.clone()))
                .collect();
            for (pickle, outcome) in theirs {
                o.loads.push((pickle, d, Pickler::Py), outcome);
            }
        }
    }
}

/// Whether two dumps or loads did the same: the same pickle or description, or the same
/// exception (a hang or a crash is never alike: it is the debug build's own to show).
fn alike(a: &Outcome, b: &Outcome) -> bool {
    match (a, b) {
        (Outcome::Ok(a, _), Outcome::Ok(b, _)) => a == b,
        (Outcome::Error(..), Outcome::Error(..)) => a == b,
        _ => false,
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
    pub canon: LiteMap<usize, Result<Arc<str>, String>>,
    pub dumps: LiteMap<DumpKey, Outcome>,
    /// The distinct pickles, each with the dumps that wrote it.
    pub pickles: Vec<Vec<DumpKey>>,
    /// Which of `pickles` each dump that pickled wrote.
    pickle_of: LiteMap<DumpKey, usize>,
    /// What each consumer's unpicklers did with each distinct pickle.
    pub loads: Loads,
    /// Per producer and protocol whose C and Python pickles differ once optimized: what each
    /// pickler chose that the other did not (`TUPLE/LIST`, `memo: c only, text`, `FLOAT`), as
    /// [`parity_cause::cause`] names it from the two pickles.
    pub parity_ops: LiteMap<(usize, u32), String>,
}

/// What a value's consumers' unpicklers did with its distinct pickles, in the order of their
/// keys: a vector, filled in the order the consumers answer and then ordered once
/// ([`Loads::order`]), where a B-tree shifted its entries at each insert and freed a node for
/// every few loads (a seventh of crosspickle's CPU in explore went through that map).
#[derive(Debug, Clone, Default)]
pub struct Loads {
    entries: Vec<LoadEntry>,
    /// Whether entries were pushed after the last [`Loads::order`].
    unordered: bool,
}

impl Loads {
    /// What a consumer's unpickler did with a distinct pickle.
    pub fn get(&self, key: &PickleLoad) -> Option<&Outcome> {
        debug_assert!(!self.unordered, "loads read before they were ordered");
        let i = self.entries.binary_search_by(|(k, _)| k.cmp(key)).ok()?;
        Some(&self.entries[i].1)
    }

    /// Keep a load in its place (one already there is replaced).
    pub fn insert(&mut self, key: PickleLoad, outcome: Outcome) {
        self.order();
        match self.entries.binary_search_by(|(k, _)| k.cmp(&key)) {
            Ok(i) => self.entries[i].1 = outcome,
            Err(i) => self.entries.insert(i, (key, outcome)),
        }
    }

    /// Keep a load at the end, its place found by [`Loads::order`], which must come before
    /// the loads are read.
    fn push(&mut self, key: PickleLoad, outcome: Outcome) {
        self.unordered = true;
        self.entries.push((key, outcome));
    }

    /// Put what [`Loads::push`] kept in the order of the keys; of two with one key, the one
    /// pushed later stays. The keys are sorted apart from the outcomes, which move once.
    fn order(&mut self) {
        if !std::mem::take(&mut self.unordered) {
            return;
        }
        let mut keys: Vec<(PickleLoad, usize)> = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, (k, _))| (*k, i))
            .collect();
        keys.sort_unstable();
        keys.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1 = kept.1.max(later.1);
            }
            same
        });
        let mut outcomes: Vec<Option<Outcome>> = std::mem::take(&mut self.entries)
            .into_iter()
            .map(|(_, o)| Some(o))
            .collect();
        self.entries = keys
            .into_iter()
            .map(|(k, i)| (k, outcomes[i].take().expect("each once")))
            .collect();
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The loads in the order of their keys.
    pub fn iter(&self) -> impl Iterator<Item = (&PickleLoad, &Outcome)> {
        self.into_iter()
    }

    pub fn values(&self) -> impl Iterator<Item = &Outcome> {
        self.iter().map(|(_, o)| o)
    }
}

/// A load as [`Loads`] keeps it, and as its iterator gives it.
type LoadEntry = (PickleLoad, Outcome);

impl<'a> IntoIterator for &'a Loads {
    type Item = (&'a PickleLoad, &'a Outcome);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, LoadEntry>,
        fn(&'a LoadEntry) -> (&'a PickleLoad, &'a Outcome),
    >;

    fn into_iter(self) -> Self::IntoIter {
        debug_assert!(!self.unordered, "loads read before they were ordered");
        self.entries.iter().map(|(k, o)| (k, o))
    }
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
#[derive(Clone, Copy)]
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

/// A pickle's bytes as lowercase hex (what the oracle and the case files read).
fn hex(bytes: &[u8]) -> Arc<str> {
    crate::sys::hash::hex(bytes).into()
}

fn error_text(e: Failed) -> String {
    match e {
        Failed::Stopped => "stopped".into(),
        Failed::Start(why) => why,
    }
}

/// Why observing failed: stopped (a signal, `--time`), or a worker that cannot start.
pub type ObserveError = Failed;

/// A dump task as the worker reads it: `[ID, PROTOCOL, PICKLER]`.
struct DumpTask {
    value: usize,
    protocol: u32,
    pickler: Pickler,
}

impl WireRequest for DumpTask {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"[\"");
        push_number(out, self.value);
        out.extend_from_slice(b"\",");
        push_number(out, self.protocol);
        out.extend_from_slice(b",\"");
        out.extend_from_slice(self.pickler.as_str().as_bytes());
        out.extend_from_slice(b"\"]");
    }
}

/// A load task as the worker reads it: `[PART, UNPICKLER]`. The hash of the description the
/// load is expected to give is its part's, in the request's `"hashes"`, once per part (it was
/// once per task, each pickle's twice, a thirtieth of crosspickle's instructions).
struct LoadTask {
    part: usize,
    unpickler: Pickler,
}

impl WireRequest for LoadTask {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        push_number(out, self.part);
        out.extend_from_slice(b",\"");
        out.extend_from_slice(self.unpickler.as_str().as_bytes());
        out.extend_from_slice(b"\"]");
    }
}

/// The (major, minor) of an interpreter.
fn series(python: &Interpreter) -> (u64, u64) {
    let r = python.version.release();
    (r[0], r.get(1).copied().unwrap_or(0))
}

/// A batch once dumped: what the producers did, and the distinct pickles its loads read.
pub struct Dumped {
    obs: Vec<Observation>,
    /// Each value's oldest Python ([`Value::min_version`], computed once).
    mins: Vec<(u64, u64)>,
    /// The folders of the user's builders, for the consumers' `sys.path`.
    setup: Vec<String>,
    blobs: Blobs,
    /// The text of each hash of a description.
    texts: HashMap<String, Arc<str>>,
    /// Per value, the hash of its description on the first producer that built it.
    expected: BTreeMap<usize, String>,
}

impl Bench<'_> {
    /// The answers of `requests` to the workers (each with its slot and number of tasks), at
    /// most `jobs` under way, the longest asked first ([`Worker::slowest_first`]).
    async fn ask<F: std::future::Future>(
        &self,
        requests: Vec<(usize, usize, F)>,
    ) -> Vec<F::Output> {
        stream::iter(self.worker.slowest_first(requests))
            .buffer_unordered(self.jobs.max(1))
            .collect()
            .await
    }

    /// Observe `values` on the interpreters numbered `on` (indices into `pythons`).
    pub async fn observe(
        &self,
        values: &[Value],
        on: &[usize],
    ) -> Result<Vec<Observation>, ObserveError> {
        let dumped = self.dump(values, on).await?;
        self.load(dumped, on).await
    }

    /// The dumps of `values` on the producers numbered `on`: each value built, pickled with
    /// every protocol and pickler each has.
    pub async fn dump(&self, values: &[Value], on: &[usize]) -> Result<Dumped, ObserveError> {
        let mut obs = vec![Observation::default(); values.len()];
        let mins: Vec<(u64, u64)> = values.iter().map(Value::min_version).collect();
        let oob: Vec<bool> = values.iter().map(Value::may_go_out_of_band).collect();
        // Each value's source as a JSON entry `["ID","SOURCE"]`, written once for every producer.
        let sources: Vec<Vec<u8>> = values
            .iter()
            .enumerate()
            .map(|(v, value)| {
                let mut out = format!("[\"{v}\",").into_bytes();
                json_str(&mut out, &value.source());
                out.push(b']');
                out
            })
            .collect();
        let (mins, oob, sources) = (&mins, &oob, &sources);
        let twins = &Twins::among(self.pythons, on);
        let requests = on.iter().copied().map(|p| {
            let python = &self.pythons[p];
            let version = series(python);
            let pickers = twins.picklers(self.pythons, p);
            let mut tasks = Vec::new();
            let mut members = b"\"op\":\"dump\",\"values\":[".to_vec();
            for v in (0..values.len()).filter(|&v| mins[v] <= version) {
                if !members.ends_with(b"[") {
                    members.push(b',');
                }
                members.extend_from_slice(&sources[v]);
                for protocol in dumped(python) {
                    if protocol == OOB_PROTOCOL && !oob[v] {
                        continue;
                    }
                    for &pickler in &pickers {
                        tasks.push(DumpTask {
                            value: v,
                            protocol,
                            pickler,
                        });
                    }
                }
            }
            members.push(b']');
            let count = tasks.len();
            let request = async move {
                let done = self
                    .worker
                    .run(p, python, &members, &tasks, &[], self.cancel)
                    .await;
                (p, tasks, done)
            };
            (p, count, request)
        });
        let dumps = self.ask(requests.collect()).await;
        // In the order of the producers, whichever answered first: the pickles are numbered
        // the same way on every run.
        let mut dumps = dumps;
        dumps.sort_by_key(|(p, ..)| *p);
        // The distinct pickles, each with its hex and the values it is a pickle of; the text
        // of each hash.
        let mut blobs: Blobs = BTreeMap::new();
        let mut texts: HashMap<String, Arc<str>> = HashMap::new();
        let mut expected: BTreeMap<usize, String> = BTreeMap::new();
        // Each value's dumps kept where they will stay: grown a dump at a time, its maps were
        // copied as they grew.
        let mut counts = vec![0usize; obs.len()];
        for task in dumps.iter().flat_map(|(_, tasks, _)| tasks) {
            counts[task.value] += 1;
        }
        for (o, n) in obs.iter_mut().zip(counts) {
            o.dumps.reserve(n);
            o.pickle_of.reserve(n);
        }
        for (p, tasks, answer) in dumps {
            // A yield between answers: this work and the other batch's share one thread,
            // whose workers' answers wait (and their cores idle) until it gives way.
            tokio::task::yield_now().await;
            let answer = answer?;
            for (id, built) in answer.built {
                let Ok(v) = id.parse::<usize>() else { continue };
                match built {
                    Ok((canon, hash)) => {
                        let text = match texts.get(&hash) {
                            Some(text) => text.clone(),
                            None => {
                                let text: Arc<str> = canon.into();
                                texts.insert(hash.clone(), text.clone());
                                text
                            }
                        };
                        obs[v].canon.insert(p, Ok(text));
                        expected.entry(v).or_insert(hash);
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
            for (task, done) in tasks.into_iter().zip(answer.tasks) {
                let DumpTask {
                    value: v,
                    protocol: proto,
                    pickler: k,
                } = task;
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
                    Done::Loaded { .. } | Done::Expected => {
                        Outcome::Crash("a load's answer to a dump".into())
                    }
                    Done::Error(t, m, site) => Outcome::Error(t, m, site),
                    Done::Hang => Outcome::Hang,
                    Done::Crash(why) => Outcome::Crash(why),
                };
                obs[v].dumps.insert((p, proto, k), outcome);
            }
        }
        for o in &mut obs {
            twins.fill_dumps(o);
        }
        let mut setup: Vec<String> = values.iter().map(Value::load_setup).collect();
        setup.sort();
        setup.dedup();
        setup.retain(|s| !s.is_empty());
        Ok(Dumped {
            obs,
            mins: mins.clone(),
            setup,
            blobs,
            texts,
            expected,
        })
    }

    /// The loads of a dumped batch on the consumers numbered `on`: each distinct pickle by
    /// each consumer that has its protocol and can build its value, with each unpickler.
    pub async fn load(
        &self,
        dumped: Dumped,
        on: &[usize],
    ) -> Result<Vec<Observation>, ObserveError> {
        let Dumped {
            mut obs,
            mins,
            setup,
            blobs,
            texts,
            expected,
        } = dumped;
        let uses: Vec<Blob> = blobs.iter().collect();
        // The folders of the user's builders, on the consumers' `sys.path` (a worker of its
        // own on the consumers' side never built the values).
        let mut members = b"\"op\":\"load\"".to_vec();
        if !setup.is_empty() {
            members.extend_from_slice(b",\"setup\":");
            serde_json::to_writer(&mut members, &setup).expect("JSON to memory");
        }
        let (members, mins, expected) = (&members, &mins, &expected);
        let twins = &Twins::among(self.pythons, on);
        let requests = on.iter().copied().map(|c| {
            let (slot, python) = match self.loaders {
                Some(loaders) => (self.pythons.len() + c, &loaders[c]),
                None => (c, &self.pythons[c]),
            };
            let version = series(python);
            let highest = protocols(python);
            // A consumer's own environment has the unpicklers of the interpreter it is made
            // from, and stands for it alike.
            let unpicklers = twins.picklers(self.pythons, c);
            let mut tasks = Vec::new();
            let mut parts: Vec<&[u8]> = Vec::new();
            let mut hashes: Vec<&str> = Vec::new();
            for (b, (bytes, (_, users))) in uses.iter().enumerate() {
                let wanted = users
                    .iter()
                    .any(|&(v, proto, _)| readable(proto, highest) && mins[v] <= version);
                if !wanted {
                    continue;
                }
                parts.push(bytes.as_slice());
                hashes.push(
                    users
                        .iter()
                        .find_map(|(v, ..)| expected.get(v))
                        .map_or("", String::as_str),
                );
                for &u in &unpicklers {
                    tasks.push((
                        b,
                        LoadTask {
                            part: parts.len(),
                            unpickler: u,
                        },
                    ));
                }
            }
            let mut members = members.clone();
            members.extend_from_slice(b",\"hashes\":[");
            for (i, hash) in hashes.iter().enumerate() {
                if i > 0 {
                    members.push(b',');
                }
                json_str(&mut members, hash);
            }
            members.push(b']');
            let count = tasks.len();
            let request = async move {
                let (keys, tasks): (Vec<usize>, Vec<LoadTask>) = tasks.into_iter().unzip();
                let done = self
                    .worker
                    .run(slot, python, &members, &tasks, &parts, self.cancel)
                    .await;
                let keys: Vec<(usize, Pickler, &str)> = keys
                    .into_iter()
                    .zip(&tasks)
                    .map(|(b, t)| (b, t.unpickler, hashes[t.part - 1]))
                    .collect();
                (c, version, keys, done)
            };
            (slot, count, request)
        });
        let loads = self.ask(requests.collect()).await;
        // The text of a canonical description's hash (the hash itself where none was kept).
        let text_of =
            |hash: &str| -> Arc<str> { texts.get(hash).cloned().unwrap_or_else(|| hash.into()) };
        // Each value's loads kept where they will stay (see `dump`): counted first.
        let readable_by = |b: usize, highest: u32, version: (u64, u64)| {
            uses[b]
                .1
                 .1
                .iter()
                .filter(move |&&(v, proto, _)| readable(proto, highest) && mins[v] <= version)
        };
        let mut counts = vec![0usize; obs.len()];
        for (c, version, keys, _) in &loads {
            let highest = protocols(&self.pythons[*c]);
            for &(b, ..) in keys {
                for &(v, ..) in readable_by(b, highest, *version) {
                    counts[v] += 1;
                }
            }
        }
        for (o, n) in obs.iter_mut().zip(counts) {
            o.loads.entries.reserve(n);
        }
        for (c, version, keys, answer) in loads {
            tokio::task::yield_now().await; // see `dump`
            let highest = protocols(&self.pythons[c]);
            for ((b, u, expected), done) in keys.into_iter().zip(answer?.tasks) {
                let mut outcome = match done {
                    Done::Expected => Outcome::Ok(text_of(expected), None),
                    Done::Loaded { hash, canon } => {
                        Outcome::Ok(canon.map_or_else(|| text_of(&hash), Into::into), None)
                    }
                    Done::Error(t, m, site) => Outcome::Error(t, m, site),
                    Done::Hang => Outcome::Hang,
                    Done::Crash(why) => Outcome::Crash(why),
                    Done::NotBuilt | Done::Dumped(_) => {
                        Outcome::Crash("the worker said nothing of the task".into())
                    }
                };
                // Each value this pickle is one of, the outcome moved into the last.
                let mut readers = readable_by(b, highest, version).peekable();
                while let Some(&(v, _, n)) = readers.next() {
                    let outcome = if readers.peek().is_some() {
                        outcome.clone()
                    } else {
                        std::mem::replace(&mut outcome, Outcome::Hang)
                    };
                    obs[v].loads.push((n, c, u), outcome);
                }
            }
        }
        for o in &mut obs {
            twins.fill_loads(o);
            o.loads.order();
        }
        Ok(obs)
    }
}

/// The message of a failure to observe.
pub fn describe(e: ObserveError) -> String {
    error_text(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::Implementation;

    fn cpython(version: &str, debug: bool) -> Interpreter {
        let mut p = Interpreter::for_tests(Implementation::Cpython, version);
        p.debug = debug;
        p.c_pickle = Some("_pickle".into());
        p.pickle_highest_protocol = Some(5);
        p
    }

    /// A debug build stands with the release build of its exact version, free-threaded or
    /// not alike, and runs the C pickler only there; alone, or beside another patch
    /// version, it runs both; a release build always runs both.
    #[test]
    fn a_debug_build_leaves_the_python_pickler_to_its_release_build() {
        let mut free = cpython("3.13.0", false);
        free.free_threaded = true;
        let mut free_debug = cpython("3.13.0", true);
        free_debug.free_threaded = true;
        let mut no_c = cpython("3.12.1", true);
        no_c.c_pickle = None;
        let pythons = vec![
            cpython("3.11.2", false), // 0
            cpython("3.11.2", true),  // 1: twin of 0
            cpython("3.11.7", false), // 2
            cpython("3.12.0", true),  // 3: no 3.12.0 release build
            cpython("3.12.1", false), // 4
            free_debug,               // 5: twin of 6, not of 7
            free,                     // 6
            cpython("3.13.0", false), // 7
            no_c,                     // 8: nothing to leave out
        ];
        let twins: Vec<Option<usize>> = (0..pythons.len())
            .map(|p| release_twin(&pythons, p))
            .collect();
        assert_eq!(
            twins,
            [None, Some(0), None, None, None, Some(6), None, None, None]
        );
        let all: Vec<usize> = (0..pythons.len()).collect();
        let twins = Twins::among(&pythons, &all);
        assert_eq!(twins.0, [(1, 0), (5, 6)]);
        assert_eq!(twins.picklers(&pythons, 1), [Pickler::C]);
        assert_eq!(twins.picklers(&pythons, 0), [Pickler::C, Pickler::Py]);
        assert_eq!(twins.picklers(&pythons, 3), [Pickler::C, Pickler::Py]);
        assert_eq!(twins.picklers(&pythons, 8), [Pickler::Py]);
        // Without its release build among those observed (shrinking on a few), the debug
        // build runs both.
        assert_eq!(release_twin(&pythons[1..], 0), None);
        let twins = Twins::among(&pythons, &[1, 2, 5, 6]);
        assert_eq!(twins.0, [(5, 6)]);
        assert_eq!(twins.picklers(&pythons, 1), [Pickler::C, Pickler::Py]);
    }

    /// The debug build's Python dumps and loads are its release build's where its C pickler
    /// and unpickler did as the release build's, and only there.
    #[test]
    fn a_debug_builds_python_dumps_and_loads_are_filled_in_from_its_release_build() {
        let ok = |t: &str, opt: Option<&str>| Outcome::Ok(t.into(), opt.map(Into::into));
        let twins = Twins(vec![(1, 0)]);
        let mut o = Observation::default();
        // Protocol 2: both C picklers write "c2", whose parity with "py2" is "FLOAT"; protocol
        // 3: the debug build's C pickler writes other bytes.
        for (p, protocol, k, text, opt) in [
            (0, 2, Pickler::C, "c2", Some("oc2")),
            (0, 2, Pickler::Py, "py2", Some("opy2")),
            (1, 2, Pickler::C, "c2", None),
            (0, 3, Pickler::C, "c3", Some("oc3")),
            (0, 3, Pickler::Py, "py3", Some("opy3")),
            (1, 3, Pickler::C, "d3", None),
        ] {
            o.dumps.insert((p, protocol, k), ok(text, opt));
        }
        let py2 = o.wrote((0, 2, Pickler::Py), None);
        let py3 = o.wrote((0, 3, Pickler::Py), None);
        o.parity_ops.insert((0, 2), "FLOAT".into());
        o.parity_ops.insert((0, 3), "TUPLE/LIST".into());
        twins.fill_dumps(&mut o);
        assert_eq!(
            o.dumps.get(&(1, 2, Pickler::Py)),
            Some(&ok("py2", Some("opy2")))
        );
        assert_eq!(
            o.dumps.get(&(1, 2, Pickler::C)),
            Some(&ok("c2", Some("oc2")))
        );
        assert_eq!(o.parity_ops.get(&(1, 2)).map(String::as_str), Some("FLOAT"));
        assert_eq!(o.pickle_of.get(&(1, 2, Pickler::Py)), Some(&py2));
        assert_eq!(o.dumps.get(&(1, 3, Pickler::C)), Some(&ok("d3", None)));
        assert_eq!(o.dumps.get(&(1, 3, Pickler::Py)), None);
        assert_eq!(o.parity_ops.get(&(1, 3)), None);

        // py2's C loads agree, py3's do not (the debug build's raised).
        let refused = Outcome::Error("ValueError".into(), "x".into(), "_pickle".into());
        for (pickle, c, u, outcome) in [
            (py2, 0, Pickler::Py, ok("loaded", None)),
            (py2, 0, Pickler::C, ok("c loaded", None)),
            (py2, 1, Pickler::C, ok("c loaded", None)),
            (py3, 0, Pickler::Py, ok("loaded", None)),
            (py3, 0, Pickler::C, ok("loaded", None)),
            (py3, 1, Pickler::C, refused),
        ] {
            o.loads.push((pickle, c, u), outcome);
        }
        twins.fill_loads(&mut o);
        o.loads.order();
        assert_eq!(
            o.loads.get(&(py2, 1, Pickler::Py)),
            Some(&ok("loaded", None))
        );
        assert_eq!(o.loads.get(&(py3, 1, Pickler::Py)), None);
        assert_eq!(o.loads.len(), 7);
    }

    #[test]
    fn tasks_are_written_as_the_worker_reads_them() {
        let mut out = Vec::new();
        DumpTask {
            value: 12,
            protocol: DEFAULT_PROTOCOL,
            pickler: Pickler::Py,
        }
        .write_json(&mut out);
        out.push(b' ');
        LoadTask {
            part: 3,
            unpickler: Pickler::C,
        }
        .write_json(&mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"["12",100,"py"] [3,"c"]"#
        );
        assert_eq!(&*hex(b"\x80\x04\x0a\xff"), "80040aff");
        assert_eq!(&*hex(b""), "");
    }

    /// Loads kept as the consumers answer read back in the order of their keys, the later of
    /// two with one key kept; one inserted goes to its place.
    #[test]
    fn loads_are_read_in_the_order_of_their_keys() {
        let ok = |t: &str| Outcome::Ok(t.into(), None);
        let mut loads = Loads::default();
        loads.push((2, 0, Pickler::Py), ok("a"));
        loads.push((0, 1, Pickler::C), ok("b"));
        loads.push((0, 1, Pickler::Py), ok("c"));
        loads.push((2, 0, Pickler::Py), ok("d"));
        loads.push((1, 5, Pickler::C), Outcome::Hang);
        loads.order();
        let keys: Vec<PickleLoad> = loads.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            keys,
            vec![
                (0, 1, Pickler::C),
                (0, 1, Pickler::Py),
                (1, 5, Pickler::C),
                (2, 0, Pickler::Py)
            ]
        );
        assert_eq!(loads.get(&(2, 0, Pickler::Py)), Some(&ok("d")));
        assert_eq!(loads.get(&(2, 0, Pickler::C)), None);
        loads.insert((1, 0, Pickler::Py), ok("e"));
        loads.insert((0, 1, Pickler::C), ok("f"));
        assert_eq!(loads.len(), 5);
        let values: Vec<&Outcome> = loads.values().collect();
        assert_eq!(
            values,
            vec![&ok("f"), &ok("c"), &ok("e"), &Outcome::Hang, &ok("d")]
        );
    }

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
