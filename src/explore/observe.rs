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

/// How a dump or a load ended.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// A dump's pickle (hex) and, where the C and the Python pickler of its producer wrote
    /// bytes that still differ once `pickletools.optimize`d, its optimized form; a load's
    /// canonical description.
    Ok(Arc<str>, Option<Arc<str>>),
    /// The exception's type and message.
    Error(String, String),
    Hang,
    Crash(String),
}

impl Outcome {
    /// A short name of what happened: `ok`, the exception's type, `hang`, `crash`.
    pub fn label(&self) -> String {
        match self {
            Outcome::Ok(..) => "ok".into(),
            Outcome::Error(t, _) => t.clone(),
            Outcome::Hang => "hang".into(),
            Outcome::Crash(_) => "crash".into(),
        }
    }
}

/// Which dump: producer (index in the selection), protocol, pickler.
pub type DumpKey = (usize, u32, Pickler);
/// A distinct pickle and the dumps that wrote it (value, dump).
type Blob<'a> = (&'a Vec<u8>, &'a Vec<(usize, DumpKey)>);

/// Which load: the dump, then consumer and unpickler.
pub type LoadKey = (usize, u32, Pickler, usize, Pickler);

/// Everything that happened to one value.
#[derive(Debug, Clone, Default)]
pub struct Observation {
    /// Each producer's canonical description of the value it built (`None`: it could not build
    /// it, the build's error besides).
    pub canon: BTreeMap<usize, Result<String, String>>,
    pub dumps: BTreeMap<DumpKey, Outcome>,
    pub loads: BTreeMap<LoadKey, Outcome>,
}

/// The interpreters and the worker a batch runs on.
pub struct Bench<'a> {
    pub pythons: &'a [Interpreter],
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
                for proto in 0..=protocols(&self.pythons[p]) {
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
        // The distinct pickles, with the dumps that wrote them; the text of each hash.
        let mut blobs: BTreeMap<Vec<u8>, Vec<(usize, DumpKey)>> = BTreeMap::new();
        let mut texts: HashMap<String, Arc<str>> = HashMap::new();
        // Per value, the hash of its description on the first producer that built it.
        let mut expected: BTreeMap<usize, String> = BTreeMap::new();
        for (p, keys, answer) in dumps {
            let answer = answer?;
            for (id, built) in &answer.built {
                let Ok(v) = id.parse::<usize>() else { continue };
                match built {
                    Ok((canon, hash)) => {
                        obs[v].canon.insert(p, Ok(canon.clone()));
                        texts
                            .entry(hash.clone())
                            .or_insert_with(|| canon.as_str().into());
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
                        let outcome = Outcome::Ok(hex(&bytes), opt);
                        blobs.entry(bytes).or_default().push((v, (p, proto, k)));
                        outcome
                    }
                    Done::Loaded { .. } => Outcome::Crash("a load's answer to a dump".into()),
                    Done::Error(t, m) => Outcome::Error(t, m),
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
        blobs: &BTreeMap<Vec<u8>, Vec<(usize, DumpKey)>>,
        texts: &HashMap<String, Arc<str>>,
        expected: &BTreeMap<usize, String>,
        obs: &mut [Observation],
    ) -> Result<(), ObserveError> {
        let uses: Vec<Blob> = blobs.iter().collect();
        let loads = stream::iter(on.iter().copied().map(|c| {
            let python = &self.pythons[c];
            let r = python.version.release();
            let version = (r[0], r.get(1).copied().unwrap_or(0));
            let mut tasks = Vec::new();
            let mut keys = Vec::new();
            let mut parts: Vec<&[u8]> = Vec::new();
            for (b, (bytes, users)) in uses.iter().enumerate() {
                let wanted = users.iter().any(|(v, (_, proto, _))| {
                    *proto <= protocols(python) && values[*v].min_version() <= version
                });
                if !wanted {
                    continue;
                }
                parts.push(bytes.as_slice());
                let hash = users
                    .iter()
                    .find_map(|(v, _)| expected.get(v))
                    .cloned()
                    .unwrap_or_default();
                for u in Pickler::of(python) {
                    tasks.push(json!([parts.len(), u.as_str(), hash]));
                    keys.push((b, u));
                }
            }
            let mut req = Map::new();
            req.insert("op".into(), "load".into());
            async move {
                let done = self
                    .worker
                    .run(c, python, &req, &tasks, &parts, self.cancel)
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
                    Done::Error(t, m) => Outcome::Error(t, m),
                    Done::Hang => Outcome::Hang,
                    Done::Crash(why) => Outcome::Crash(why),
                    Done::NotBuilt | Done::Dumped(_) => {
                        Outcome::Crash("the worker said nothing of the task".into())
                    }
                };
                for (v, (p, proto, k)) in uses[b].1 {
                    if *proto <= protocols(&self.pythons[c]) && values[*v].min_version() <= version
                    {
                        obs[*v]
                            .loads
                            .insert((*p, *proto, *k, c, u), outcome.clone());
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
