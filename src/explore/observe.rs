//! One batch of values through every interpreter: each producer dumps each value it can
//! build with each protocol and pickler it has (one worker process per producer), the
//! distinct pickles are loaded by each consumer that has their protocol with each unpickler
//! (one process per consumer), and what happened is gathered per value ([`Observation`]).

use std::collections::BTreeMap;

use futures::stream::{self, StreamExt};
use serde_json::{json, Map, Value as Json};
use tokio_util::sync::CancellationToken;

use super::value::Value;
use super::worker::{Done, Worker};
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
    /// A dump's pickle (hex) and its optimized form; a load's canonical description.
    Ok(String, Option<String>),
    /// The exception's type and message.
    Error(String, String),
    Hang,
    Crash(String),
}

impl Outcome {
    fn from(done: Done, dump: bool) -> Outcome {
        match done {
            Done::Hang => Outcome::Hang,
            Done::Crash(why) => Outcome::Crash(why),
            Done::Said(l) if l.hang => Outcome::Hang,
            Done::Said(l) => match (l.err, dump, l.hex, l.canon) {
                (Some((t, m)), ..) => Outcome::Error(t, m),
                (None, true, Some(hex), _) => Outcome::Ok(hex, l.opt),
                (None, false, _, Some(canon)) => Outcome::Ok(canon, None),
                _ => Outcome::Crash("the worker said nothing of the task".into()),
            },
        }
    }

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
    pub cancel: &'a CancellationToken,
}

impl Bench<'_> {
    /// Observe `values` on the interpreters numbered `on` (indices into `pythons`).
    pub async fn observe(
        &self,
        values: &[Value],
        on: &[usize],
    ) -> Result<Vec<Observation>, String> {
        let mut obs = vec![Observation::default(); values.len()];
        let sources: Map<String, Json> = values
            .iter()
            .enumerate()
            .map(|(i, v)| (i.to_string(), Json::String(v.source())))
            .collect();
        let asked = |p: usize, v: usize| {
            let (major, minor) = values[v].min_version();
            let r = self.pythons[p].version.release();
            (r[0], r.get(1).copied().unwrap_or(0)) >= (major, minor)
        };
        // Dumps.
        let dumps = stream::iter(on.iter().copied().map(|p| {
            let mut tasks = Vec::new();
            let mut keys = Vec::new();
            for v in (0..values.len()).filter(|&v| asked(p, v)) {
                for proto in 0..=protocols(&self.pythons[p]) {
                    for k in Pickler::of(&self.pythons[p]) {
                        tasks.push(json!([v.to_string(), proto, k.as_str()]));
                        keys.push((v, proto, k));
                    }
                }
            }
            let mut req = Map::new();
            req.insert("op".into(), "dump".into());
            req.insert("values".into(), Json::Object(sources.clone()));
            async move {
                (
                    p,
                    keys,
                    self.worker
                        .run(&self.pythons[p], &req, &tasks, self.cancel)
                        .await,
                )
            }
        }))
        .buffer_unordered(self.jobs.max(1))
        .collect::<Vec<_>>()
        .await;
        let mut blobs: BTreeMap<String, Vec<(usize, DumpKey)>> = BTreeMap::new();
        for (p, keys, done) in dumps {
            for ((v, proto, k), done) in keys.into_iter().zip(done?) {
                if let Done::Said(l) = &done {
                    if let Some(canon) = &l.canon {
                        obs[v].canon.insert(p, Ok(canon.clone()));
                    }
                    if let Some((t, m)) = &l.build {
                        obs[v].canon.insert(p, Err(format!("{t}: {m}")));
                    }
                    if l.build.is_some() {
                        continue;
                    }
                }
                let outcome = Outcome::from(done, true);
                if let Outcome::Ok(hex, _) = &outcome {
                    blobs
                        .entry(hex.clone())
                        .or_default()
                        .push((v, (p, proto, k)));
                }
                obs[v].dumps.insert((p, proto, k), outcome);
            }
        }
        self.load(values, on, &blobs, &mut obs).await?;
        Ok(obs)
    }

    async fn load(
        &self,
        values: &[Value],
        on: &[usize],
        blobs: &BTreeMap<String, Vec<(usize, DumpKey)>>,
        obs: &mut [Observation],
    ) -> Result<(), String> {
        let ids: Map<String, Json> = blobs
            .keys()
            .enumerate()
            .map(|(i, hex)| (i.to_string(), Json::String(hex.clone())))
            .collect();
        let uses: Vec<&Vec<(usize, DumpKey)>> = blobs.values().collect();
        let loads = stream::iter(on.iter().copied().map(|c| {
            let python = &self.pythons[c];
            let r = python.version.release();
            let version = (r[0], r.get(1).copied().unwrap_or(0));
            let mut tasks = Vec::new();
            let mut keys = Vec::new();
            for (b, users) in uses.iter().enumerate() {
                let wanted = users.iter().any(|(v, (_, proto, _))| {
                    *proto <= protocols(python) && values[*v].min_version() <= version
                });
                if !wanted {
                    continue;
                }
                for u in Pickler::of(python) {
                    tasks.push(json!([b.to_string(), u.as_str()]));
                    keys.push((b, u));
                }
            }
            let mut req = Map::new();
            req.insert("op".into(), "load".into());
            req.insert("blobs".into(), Json::Object(ids.clone()));
            async move {
                (
                    c,
                    version,
                    keys,
                    self.worker.run(python, &req, &tasks, self.cancel).await,
                )
            }
        }))
        .buffer_unordered(self.jobs.max(1))
        .collect::<Vec<_>>()
        .await;
        for (c, version, keys, done) in loads {
            for ((b, u), done) in keys.into_iter().zip(done?) {
                let outcome = Outcome::from(done, false);
                for (v, (p, proto, k)) in uses[b] {
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
