//! `crosspickle explore --streams`: byte streams ([`super::stream`]) loaded by every
//! interpreter's C and Python unpickler and `pickletools.dis` in the persistent workers
//! (`streams.py`: each load in a child of its own, under limits of time and memory), a
//! finding wherever they disagree (accept or refuse, the value loaded, the exception's
//! class, a crash, a hang), shrunk by delta debugging over opcodes, and the loads that had
//! to be contained (hangs, crashes, memory errors) reported.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use futures::stream::{self as fstream, StreamExt};
use serde_json::{json, Map, Value as Json};
use tokio_util::sync::CancellationToken;

use super::observe::{protocols, Pickler};
use super::stream;
use super::value::{self, Vocabulary};
use super::worker::{self, Done, Failed, Worker};
use super::Progress;
use crate::python::Interpreter;

/// What loads a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reader {
    /// `_pickle` (2.7: `cPickle`).
    C,
    /// `pickle._Unpickler` (2.7: `pickle.Unpickler`).
    Py,
    /// `pickletools.dis`.
    Dis,
}

impl Reader {
    pub fn as_str(self) -> &'static str {
        match self {
            Reader::C => "c",
            Reader::Py => "py",
            Reader::Dis => "dis",
        }
    }

    /// What `python` has: the C unpickler where its accelerator is there.
    pub fn of(python: &Interpreter) -> Vec<Reader> {
        let mut out: Vec<Reader> = Pickler::of(python)
            .into_iter()
            .map(|p| match p {
                Pickler::C => Reader::C,
                Pickler::Py => Reader::Py,
            })
            .collect();
        out.push(Reader::Dis);
        out
    }
}

/// How one load of a stream ended.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Seen {
    /// The hash of the canonical description of what loaded, and the description when short.
    Loaded(String, Option<String>),
    /// The exception's type and message.
    Raised(String, String),
    Hang,
    Crash(String),
}

impl Seen {
    /// What is compared: the value's hash, the exception's class, hang, crash.
    pub fn class(&self) -> String {
        match self {
            Seen::Loaded(h, _) => format!("loaded {h}"),
            Seen::Raised(t, _) => t.clone(),
            Seen::Hang => "hang".into(),
            Seen::Crash(_) => "crash".into(),
        }
    }

    /// The class, any loaded value alike (what shrinking keeps).
    fn kind(&self) -> String {
        match self {
            Seen::Loaded(..) => "loaded".into(),
            other => other.class(),
        }
    }
}

/// Per interpreter (its index) and reader: what a stream did.
pub type Seens = BTreeMap<(usize, Reader), Seen>;

pub struct Options {
    pub seed: u64,
    pub count: Option<u64>,
    pub time: Option<Duration>,
    pub batch: usize,
    pub task_limit: f64,
    pub jobs: usize,
    /// Bytes one load may allocate beyond what the worker holds.
    pub memory: u64,
    /// The streams of `--stream-file`, instead of generated ones.
    pub given: Option<Vec<Vec<u8>>>,
    pub shrinks_per_kind: usize,
}

/// A disagreement, shrunk.
#[derive(Debug, Clone)]
pub struct Finding {
    pub signature: String,
    /// The stream, opcode by opcode.
    pub ops: Vec<Vec<u8>>,
    /// The stream's number (of its seed, or its line in `--stream-file`).
    pub index: u64,
    pub seen: Seens,
    /// Streams that showed it before shrinking.
    pub occurrences: u64,
}

/// A load that had to be contained: it hung, crashed or ran out of memory.
#[derive(Debug, Clone)]
pub struct Contained {
    pub index: u64,
    pub python: usize,
    pub reader: Reader,
    pub seen: Seen,
}

#[derive(Debug, Default)]
pub struct Report {
    pub streams: u64,
    /// The real pickles mutated.
    pub real: usize,
    pub findings: Vec<Finding>,
    pub contained: Vec<Contained>,
    pub interrupted: bool,
    pub workers_started: usize,
}

/// The most contained loads listed.
const CONTAINED_LISTED: usize = 100;

pub async fn explore(
    pythons: &[Interpreter],
    options: &Options,
    cancel: &CancellationToken,
    progress: &mut dyn FnMut(Progress),
) -> Result<Report, String> {
    let mut worker = Worker::new(options.task_limit, pythons.len())
        .map_err(|e| format!("cannot write the explore worker: {e}"))?;
    // Each load is a child of its own, killed past the limit: a batch may take that long per
    // load (and the 2 s the worker gives a child to answer) without its worker being lost.
    worker.per_task = options.task_limit + 2.0;
    let stop = cancel.child_token();
    let timer = options.time.map(|t| {
        let stop = stop.clone();
        tokio::spawn(async move {
            tokio::time::sleep(t + super::grace(t)).await;
            stop.cancel();
        })
    });
    let bench = Bench {
        pythons,
        worker: &worker,
        options,
        cancel: &stop,
    };
    let mut report = Report::default();
    let result = run(&bench, &mut report, progress).await;
    worker.shutdown().await;
    if let Some(timer) = timer {
        timer.abort();
    }
    report.interrupted = cancel.is_cancelled();
    if !cancel.is_cancelled() {
        match result {
            Err(Failed::Start(why)) => return Err(why),
            Err(Failed::Stopped) | Ok(()) => {}
        }
    }
    report.workers_started = worker.starts.load(std::sync::atomic::Ordering::Relaxed);
    Ok(report)
}

struct Bench<'a> {
    pythons: &'a [Interpreter],
    worker: &'a Worker,
    options: &'a Options,
    cancel: &'a CancellationToken,
}

async fn run(
    bench: &Bench<'_>,
    report: &mut Report,
    progress: &mut dyn FnMut(Progress),
) -> Result<(), Failed> {
    let options = bench.options;
    let start = Instant::now();
    let late = || options.time.is_some_and(|t| start.elapsed() >= t);
    let real = match &options.given {
        Some(_) => Vec::new(),
        None => bench.real_pickles().await?,
    };
    report.real = real.len();
    let count = match &options.given {
        Some(given) => Some(given.len() as u64),
        None => options.count,
    };
    let all: Vec<usize> = (0..bench.pythons.len()).collect();
    // Per kind of disagreement (its signature with any value alike): values seen, shrunk.
    let mut kinds: BTreeMap<String, (u64, usize)> = BTreeMap::new();
    let mut found: BTreeMap<String, Finding> = BTreeMap::new();
    while !bench.cancel.is_cancelled() && !late() {
        let left = count.map_or(options.batch as u64, |c| c.saturating_sub(report.streams));
        if left == 0 {
            break;
        }
        let first = report.streams;
        let n = left.min(options.batch as u64);
        let streams: Vec<Vec<Vec<u8>>> = (first..first + n)
            .map(|i| match &options.given {
                Some(given) => stream::split(&given[i as usize]),
                None => stream::generate(options.seed, i, &real),
            })
            .collect();
        let bytes: Vec<Vec<u8>> = streams.iter().map(|s| s.concat()).collect();
        let seen = bench.observe(&bytes, &all, None).await?;
        for ((ops, seens), index) in streams.iter().zip(seen).zip(first..) {
            for ((python, reader), s) in &seens {
                let memory = matches!(s, Seen::Raised(t, _) if t == "MemoryError");
                if (memory || matches!(s, Seen::Hang | Seen::Crash(_)))
                    && report.contained.len() < CONTAINED_LISTED
                {
                    report.contained.push(Contained {
                        index,
                        python: *python,
                        reader: *reader,
                        seen: s.clone(),
                    });
                }
            }
            let Some(kind) = signature(&seens, bench.pythons, Seen::kind) else {
                continue;
            };
            let entry = kinds.entry(kind).or_default();
            entry.0 += 1;
            if entry.1 >= options.shrinks_per_kind {
                continue;
            }
            entry.1 += 1;
            let (ops, seens) = if bench.cancel.is_cancelled() || late() {
                (ops.clone(), seens)
            } else {
                progress(Progress::Shrinking(format!("stream {index}")));
                bench.shrink(ops, &seens).await?
            };
            let Some(sig) = signature(&seens, bench.pythons, Seen::class) else {
                continue;
            };
            found.entry(sig.clone()).or_insert(Finding {
                signature: sig,
                ops,
                index,
                seen: seens,
                occurrences: 0,
            });
        }
        report.streams += n;
        progress(Progress::Values(report.streams, found.len()));
    }
    for f in found.values_mut() {
        f.occurrences = signature(&f.seen, bench.pythons, Seen::kind)
            .and_then(|k| kinds.get(&k))
            .map_or(1, |k| k.0);
    }
    report.findings = found.into_values().collect();
    Ok(())
}

/// What tells a disagreement apart: for the unpicklers, then for `pickletools.dis`, each
/// class of outcome (`class` or `kind`) with the interpreters and readers that showed it.
/// `None` when they all agree, or when a stream named a global the worker does not allow.
pub fn signature(
    seens: &Seens,
    pythons: &[Interpreter],
    class: fn(&Seen) -> String,
) -> Option<String> {
    if seens
        .values()
        .any(|s| matches!(s, Seen::Raised(t, _) if t == "Refused"))
    {
        return None;
    }
    let mut parts = Vec::new();
    for dis in [false, true] {
        let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for ((p, r), s) in seens {
            if (*r == Reader::Dis) == dis {
                groups.entry(class(s)).or_default().push(format!(
                    "{}/{}",
                    pythons[*p].label,
                    r.as_str()
                ));
            }
        }
        if groups.len() > 1 {
            let text: Vec<String> = groups
                .into_iter()
                .map(|(c, who)| format!("{c}: {}", who.join(",")))
                .collect();
            parts.push(format!(
                "{} {}",
                if dis { "dis" } else { "load" },
                text.join("; ")
            ));
        }
    }
    // pickletools.dis refusing what both unpicklers of its interpreter load (python/cpython
    // gh-127079: a STOP with items left on the stack).
    let refused: Vec<String> = pythons
        .iter()
        .enumerate()
        .filter(|&(p, _)| {
            let dis = seens.get(&(p, Reader::Dis));
            let loads: Vec<&Seen> = [Reader::C, Reader::Py]
                .iter()
                .filter_map(|r| seens.get(&(p, *r)))
                .collect();
            matches!(dis, Some(Seen::Raised(..)))
                && !loads.is_empty()
                && loads.iter().all(|s| matches!(s, Seen::Loaded(..)))
        })
        .map(|(_, python)| python.label.clone())
        .collect();
    if !refused.is_empty() {
        parts.push(format!("dis refuses what loads: {}", refused.join(",")));
    }
    (!parts.is_empty()).then(|| parts.join(" | "))
}

/// Two loads that disagree, to shrink by: on one interpreter if its readers disagree there
/// (one worker to ask), else on two; the unpicklers before `dis`.
fn witness(seens: &Seens) -> Option<[(usize, Reader); 2]> {
    let keys: Vec<&(usize, Reader)> = seens.keys().collect();
    let mut best: Option<[(usize, Reader); 2]> = None;
    for dis in [false, true] {
        for a in keys.iter().filter(|k| (k.1 == Reader::Dis) == dis) {
            for b in keys.iter().filter(|k| (k.1 == Reader::Dis) == dis) {
                if a < b && seens[*a].class() != seens[*b].class() {
                    if a.0 == b.0 {
                        return Some([**a, **b]);
                    }
                    best.get_or_insert([**a, **b]);
                }
            }
        }
        if best.is_some() {
            return best;
        }
    }
    // dis refuses what the unpicklers load.
    seens.iter().find_map(|(&(p, r), s)| {
        let loaded = matches!(seens.get(&(p, Reader::Py)), Some(Seen::Loaded(..)));
        (r == Reader::Dis && matches!(s, Seen::Raised(..)) && loaded)
            .then_some([(p, Reader::Py), (p, Reader::Dis)])
    })
}

impl Bench<'_> {
    /// Load each of `streams` on the interpreters `on` with their readers (or only those of
    /// `only`).
    async fn observe(
        &self,
        streams: &[Vec<u8>],
        on: &[usize],
        only: Option<&BTreeSet<(usize, Reader)>>,
    ) -> Result<Vec<Seens>, Failed> {
        let globals: Vec<Json> = stream::GLOBALS.iter().map(|(m, n)| json!([m, n])).collect();
        let parts: Vec<&[u8]> = streams.iter().map(Vec::as_slice).collect();
        let answers = fstream::iter(on.iter().copied().map(|p| {
            let mut tasks = Vec::new();
            let mut keys = Vec::new();
            for s in 0..streams.len() {
                for r in Reader::of(&self.pythons[p]) {
                    if only.is_none_or(|o| o.contains(&(p, r))) {
                        tasks.push(json!([s + 1, r.as_str()]));
                        keys.push((s, r));
                    }
                }
            }
            let mut req = Map::new();
            req.insert("op".into(), "streams".into());
            req.insert("memory".into(), self.options.memory.into());
            req.insert("globals".into(), Json::Array(globals.clone()));
            let req = worker::members(&req);
            let parts = &parts;
            async move {
                let done = self
                    .worker
                    .run(p, &self.pythons[p], &req, &tasks, parts, self.cancel)
                    .await;
                (p, keys, done)
            }
        }))
        .buffer_unordered(self.options.jobs.max(1))
        .collect::<Vec<_>>()
        .await;
        let mut out = vec![Seens::new(); streams.len()];
        for (p, keys, done) in answers {
            let answer = done?;
            for ((s, r), d) in keys.into_iter().zip(answer.tasks) {
                let seen = match d {
                    Done::Loaded { hash, canon } => Seen::Loaded(hash, canon),
                    Done::Error(t, m, _) => Seen::Raised(t, m),
                    Done::Hang => Seen::Hang,
                    Done::Crash(how) => Seen::Crash(how),
                    Done::Dumped(_) | Done::NotBuilt | Done::Expected => {
                        Seen::Crash("no answer".into())
                    }
                };
                out[s].insert((p, r), seen);
            }
        }
        Ok(out)
    }

    /// Pickles to mutate: 16 values of the seed pickled by the first interpreter with each
    /// of its protocols (its C pickler where it has one).
    async fn real_pickles(&self) -> Result<Vec<Vec<u8>>, Failed> {
        let Some(python) = self.pythons.first() else {
            return Ok(Vec::new());
        };
        let vocabulary = Vocabulary {
            max_size: 8,
            stdlib: true,
            py36: true,
        };
        let release = python.version.release();
        let version = (release[0], release.get(1).copied().unwrap_or(0));
        let pickler = Pickler::of(python)[0];
        let mut sources = Vec::new();
        let mut tasks = Vec::new();
        for i in 0..16 {
            let v = value::generate(self.options.seed, i, &vocabulary);
            if v.min_version() > version {
                continue;
            }
            sources.push(json!([i.to_string(), v.source()]));
            let protocol = i as u32 % (protocols(python) + 1);
            tasks.push(json!([i.to_string(), protocol, pickler.as_str()]));
        }
        let mut req = Map::new();
        req.insert("op".into(), "dump".into());
        req.insert("values".into(), Json::Array(sources));
        let answer = self
            .worker
            .run(0, python, &worker::members(&req), &tasks, &[], self.cancel)
            .await?;
        Ok(answer
            .tasks
            .into_iter()
            .filter_map(|d| match d {
                Done::Dumped(b) => Some(b),
                _ => None,
            })
            .collect())
    }

    /// Delta debugging over the opcodes of `ops` while two loads that disagree (the
    /// witness) still disagree the same way (the same exception classes, a value either
    /// side); then the smallest stream on every interpreter.
    async fn shrink(
        &self,
        ops: &[Vec<u8>],
        seens: &Seens,
    ) -> Result<(Vec<Vec<u8>>, Seens), Failed> {
        const ROUNDS: usize = 40;
        let Some(pair) = witness(seens) else {
            return Ok((ops.to_vec(), seens.clone()));
        };
        let want = [seens[&pair[0]].kind(), seens[&pair[1]].kind()];
        // A hang costs the whole time limit per candidate: not shrunk.
        if want.iter().any(|k| k == "hang") {
            return Ok((ops.to_vec(), seens.clone()));
        }
        let only: BTreeSet<(usize, Reader)> = pair.iter().copied().collect();
        let on: Vec<usize> = only
            .iter()
            .map(|k| k.0)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut best = ops.to_vec();
        let mut parts = 2;
        for _ in 0..ROUNDS {
            if best.len() <= 1 || self.cancel.is_cancelled() {
                break;
            }
            let candidates = stream::reductions(&best, parts);
            let bytes: Vec<Vec<u8>> = candidates.iter().map(|c| c.concat()).collect();
            let seen = self.observe(&bytes, &on, Some(&only)).await?;
            let keeps = |s: &Seens| {
                let (Some(a), Some(b)) = (s.get(&pair[0]), s.get(&pair[1])) else {
                    return false;
                };
                [a.kind(), b.kind()] == want && a.class() != b.class()
            };
            match candidates.into_iter().zip(&seen).find(|(_, s)| keeps(s)) {
                Some((c, _)) => {
                    let complement = c.len() > best.len() / 2;
                    best = c;
                    parts = if complement { (parts - 1).max(2) } else { 2 };
                }
                None if parts >= best.len() => break,
                None => parts = (parts * 2).min(best.len()),
            }
        }
        let all: Vec<usize> = (0..self.pythons.len()).collect();
        let seen = self.observe(&[best.concat()], &all, None).await?;
        let seen = seen.into_iter().next().unwrap_or_default();
        // Should the smallest not disagree on every interpreter as it did on two, the stream
        // as it was.
        if signature(&seen, self.pythons, Seen::kind).is_some() {
            Ok((stream::split(&best.concat()), seen))
        } else {
            Ok((ops.to_vec(), seens.clone()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::Implementation;

    fn pythons() -> Vec<Interpreter> {
        ["2.7.18", "3.12.1"]
            .iter()
            .map(|v| {
                let mut p = Interpreter::for_tests(Implementation::Cpython, v);
                p.label = v.to_string();
                p
            })
            .collect()
    }

    #[test]
    fn a_signature_groups_the_loads_by_what_they_did() {
        let pythons = pythons();
        let mut seens = Seens::new();
        seens.insert(
            (0, Reader::C),
            Seen::Raised("UnpicklingError".into(), "x".into()),
        );
        seens.insert((0, Reader::Py), Seen::Raised("KeyError".into(), "y".into()));
        seens.insert(
            (1, Reader::C),
            Seen::Raised("UnpicklingError".into(), "z".into()),
        );
        seens.insert((1, Reader::Py), Seen::Raised("KeyError".into(), "w".into()));
        seens.insert(
            (0, Reader::Dis),
            Seen::Raised("ValueError".into(), "".into()),
        );
        seens.insert(
            (1, Reader::Dis),
            Seen::Raised("ValueError".into(), "".into()),
        );
        assert_eq!(
            signature(&seens, &pythons, Seen::class).as_deref(),
            Some("load KeyError: 2.7.18/py,3.12.1/py; UnpicklingError: 2.7.18/c,3.12.1/c")
        );
        // The witness is on one interpreter: its C and its Python unpickler.
        assert_eq!(witness(&seens), Some([(0, Reader::C), (0, Reader::Py)]));
        // Values: by hash for the finding, alike for its kind.
        for k in [(0, Reader::Dis), (1, Reader::Dis)] {
            seens.insert(k, Seen::Loaded("dis-ok".into(), None));
        }
        for k in [(0, Reader::C), (0, Reader::Py), (1, Reader::C)] {
            seens.insert(k, Seen::Loaded("a".into(), None));
        }
        seens.insert((1, Reader::Py), Seen::Loaded("b".into(), None));
        assert!(signature(&seens, &pythons, Seen::class).is_some());
        assert_eq!(signature(&seens, &pythons, Seen::kind), None);
        // dis refusing what both unpicklers of its interpreter load (a STOP with items left).
        let mut stop = Seens::new();
        for p in 0..2 {
            stop.insert((p, Reader::C), Seen::Loaded("a".into(), None));
            stop.insert((p, Reader::Py), Seen::Loaded("a".into(), None));
        }
        stop.insert((0, Reader::Dis), Seen::Loaded("dis-ok".into(), None));
        stop.insert((1, Reader::Dis), Seen::Loaded("dis-ok".into(), None));
        assert_eq!(signature(&stop, &pythons, Seen::class), None);
        for p in 0..2 {
            stop.insert(
                (p, Reader::Dis),
                Seen::Raised("ValueError".into(), "".into()),
            );
        }
        assert_eq!(
            signature(&stop, &pythons, Seen::class).as_deref(),
            Some("dis refuses what loads: 2.7.18,3.12.1")
        );
        assert_eq!(witness(&stop), Some([(0, Reader::Py), (0, Reader::Dis)]));
        // A global the worker refused: not compared.
        seens.insert(
            (1, Reader::Py),
            Seen::Raised("Refused".into(), "os.system".into()),
        );
        assert_eq!(signature(&seens, &pythons, Seen::class), None);
    }
}
