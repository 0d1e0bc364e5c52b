//! `crosspickle explore`'s engine: generate values ([`value`], [`source`]), pickle them on every
//! producer and load them on every consumer in batches ([`observe`], through the embedded
//! [`worker`]), find the differences ([`oracle`]), shrink each to the smallest value that still
//! shows it ([`shrink`]), deduplicate by signature and write each as a case file ([`case`]).
//! The command line (arguments, progress, reports) is `cli/explore.rs`.

pub mod case;
pub mod memo;
pub mod message;
pub mod observe;
pub mod oracle;
pub mod params;
pub mod parity_cause;
pub mod refusals;
pub mod replay;
pub mod shrink;
pub mod sides;
pub mod source;
pub mod stream;
pub mod stream_case;
pub mod streams;
pub mod value;
pub mod wording;
pub mod worker;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use tokio_util::sync::CancellationToken;

use self::memo::Memo;
use self::observe::{Bench, Observation};
use self::oracle::{Finding, Stability};
use self::value::{Value, Vocabulary};
use self::worker::{Failed, Worker};
use crate::python::Interpreter;

/// What to explore.
#[derive(Debug, Clone)]
pub struct Options {
    pub seed: u64,
    /// Stop after this many values...
    pub count: Option<u64>,
    /// ...or once this long has passed (the batch under way is finished, for at most
    /// [`grace`] more: then what is under way is dropped, whatever a worker does).
    pub time: Option<Duration>,
    pub vocabulary: Vocabulary,
    /// `--values FILE.py`: the file and its builders; value i is builder i modulo their
    /// number, instead of a generated value.
    pub builders: Option<(String, Vec<String>)>,
    /// Values per batch (one request to each interpreter's worker per batch).
    pub batch: usize,
    /// Seconds one dump or load may take before it is a hang.
    pub task_limit: f64,
    /// Workers busy at once.
    pub jobs: usize,
    /// Findings of one kind (all but the value's shape) shrunk at most this many times.
    pub shrinks_per_kind: usize,
    /// Each side's packages (the case files get them).
    pub requires: sides::Requires,
    /// Where the consumers' packages differ from the producers': for each interpreter, the
    /// one the loads run on (the python of its consumer's environment), with workers of its
    /// own; the selection itself runs the dumps.
    pub loaders: Option<Vec<Interpreter>>,
    /// `--partition M/N`: (M, N), this run explores the value numbers `i` with `i % N == M - 1`
    /// (`count` counts value numbers, so every shard of `--count C` covers `0..C` together).
    pub shard: Option<(u64, u64)>,
}

impl Options {
    /// The value number of this run's `n`th value (0-based).
    pub fn index_of(&self, n: u64) -> u64 {
        self.shard.map_or(n, |(m, total)| n * total + (m - 1))
    }

    /// How many of the value numbers `0..count` this run explores.
    pub fn values_in(&self, count: u64) -> u64 {
        self.shard
            .map_or(count, |(m, total)| (count + total - m) / total)
    }
}

/// One finding, shrunk and deduplicated.
#[derive(Debug, Clone)]
pub struct Reported {
    /// What tells it apart: oracle, observed, and per protocol and picklers the producers and
    /// consumers (not the value's shape: one cause shown by values of two shapes is one finding).
    pub signature: String,
    /// The finding shrinking kept (its protocol and picklers those the value was found with).
    pub finding: Finding,
    /// The findings of the same oracle and observation that the shrunk value shows with
    /// every protocol and pickler.
    pub group: Vec<Finding>,
    /// Every protocol, pickler and unpickler of `group`, and the one combination the case
    /// file runs.
    pub params: params::Params,
    /// The keys of `group` (occurrences are counted by them).
    pub keys: Vec<String>,
    pub value: Value,
    /// The value it was found with (its number in the seed's sequence).
    pub index: u64,
    /// How many generated values showed this kind of finding.
    pub occurrences: u64,
    /// Everything the shrunk value did on every interpreter.
    pub observation: Observation,
    /// The case file's text.
    pub case: String,
}

/// Stability information: which producers write which bytes.
#[derive(Debug, Clone)]
pub struct StabilityReport {
    pub stability: Stability,
    /// The source of the first value that showed it, and its number.
    pub source: String,
    pub index: u64,
    pub occurrences: u64,
}

/// What a run found.
#[derive(Debug, Default)]
pub struct Report {
    pub values: u64,
    /// Of `values`, those drawn again and not observed again (their first observation stood
    /// for them, [`memo`]).
    pub repeated: u64,
    /// Time spent on the generated values, and on shrinking.
    pub exploring: Duration,
    pub shrinking: Duration,
    /// Values whose description differed between the interpreters that built them (not
    /// compared after loading).
    pub not_comparable: u64,
    pub not_comparable_example: Option<String>,
    pub findings: Vec<Reported>,
    pub stability: Vec<StabilityReport>,
    pub interrupted: bool,
    /// Worker processes started (one per interpreter, and each replacement).
    pub workers_started: usize,
    /// Per finding key (all but the value's shape): how many values showed it (what the
    /// merge of shards adds up to count a finding's occurrences).
    pub kinds: BTreeMap<String, u64>,
    /// Findings shrunk (each a series of rounds, then the smallest value on every interpreter).
    pub shrinks: u64,
    /// `--values`: per builder and interpreter (its index) that could not build its value (a
    /// strategy where Hypothesis is not installed, say): the first error, and how many values.
    /// Not findings: those values are neither dumped nor loaded there.
    pub unavailable: BTreeMap<(String, usize), (String, u64)>,
}

/// How long past `--time` the batch under way may go on: a tenth of the time, at least 5 s.
pub fn grace(time: Duration) -> Duration {
    (time / 10).max(Duration::from_secs(5))
}

/// What the caller is told as the run goes.
pub enum Progress {
    /// This many values done, this many findings so far.
    Values(u64, usize),
    Shrinking(String),
}

pub async fn explore(
    pythons: &[Interpreter],
    options: &Options,
    cancel: &CancellationToken,
    progress: &mut dyn FnMut(Progress),
) -> Result<Report, String> {
    let slots = pythons.len() * if options.loaders.is_some() { 2 } else { 1 };
    let worker = Worker::new(options.task_limit, slots)
        .map_err(|e| format!("cannot write the explore worker: {e}"))?
        .with_jobs(options.jobs);
    // Cancelled by a signal, or once past --time and its grace.
    let stop = cancel.child_token();
    let timer = options.time.map(|t| {
        let stop = stop.clone();
        tokio::spawn(async move {
            tokio::time::sleep(t + grace(t)).await;
            stop.cancel();
        })
    });
    let bench = Bench {
        pythons,
        loaders: options.loaders.as_deref(),
        worker: &worker,
        jobs: options.jobs,
        cancel: &stop,
    };
    let mut state = State {
        bench,
        options,
        all: (0..pythons.len()).collect(),
        report: Report::default(),
        kinds: IndexMap::new(),
        covered: BTreeMap::new(),
        found: BTreeMap::new(),
        stable: IndexMap::new(),
        memo: Memo::default(),
        start: Instant::now(),
        signals: cancel,
    };
    let result = state.run(progress).await;
    worker.shutdown().await;
    if let Some(timer) = timer {
        timer.abort();
    }
    // A worker that failed as a signal stopped everything is not a tooling failure.
    if !cancel.is_cancelled() {
        result?;
    }
    state.report.workers_started = worker.starts.load(std::sync::atomic::Ordering::Relaxed);
    Ok(state.finish())
}

/// A batch of this run's values: `first..first + n`, their numbers and the values; those
/// observed (not drawn before in this batch or kept from an earlier one), with their sources,
/// and where each value's observation comes from.
struct Batch {
    n: u64,
    indices: Vec<u64>,
    values: Vec<Value>,
    fresh: Vec<Value>,
    sources: Vec<String>,
    slots: Vec<Slot>,
}

/// Where a value of a batch has its observation from.
enum Slot {
    /// The batch's `fresh` value of this number.
    Fresh(usize),
    /// An earlier batch's value of the same source.
    Known(Arc<Kept>),
}

/// What a batch works out of a fresh value's observation, once.
struct Seen {
    obs: Observation,
    findings: Vec<Finding>,
    stability: Vec<Stability>,
    /// Whether the interpreters that built it described it alike (a reference to compare the
    /// loads with).
    comparable: bool,
    /// The interpreters that could not build it, and why.
    unbuilt: Vec<(usize, String)>,
}

impl Seen {
    fn of(obs: Observation) -> Seen {
        Seen {
            findings: findings(&obs),
            stability: oracle::stability(&obs),
            comparable: oracle::reference(&obs).is_some() || obs.canon.is_empty(),
            unbuilt: obs
                .canon
                .iter()
                .filter_map(|(&p, built)| built.as_ref().err().map(|why| (p, why.clone())))
                .collect(),
            obs,
        }
    }
}

/// What the memo ([`memo`]) keeps of a value observed: what its observation showed, as the
/// numbers of its findings' kinds and of its stability groups in the run's tallies
/// ([`State::kinds`], [`State::stable`]): a hundred bytes, where the observation is a hundred
/// kilobytes for a small value on 19 interpreters and its findings ten. A value drawn again is
/// counted with them, and observed again only where one of its findings is to be shrunk.
#[derive(Debug)]
struct Kept {
    kinds: Vec<usize>,
    stable: Vec<usize>,
    comparable: bool,
    unbuilt: Vec<(usize, String)>,
}

impl State<'_> {
    /// The batches one after another, two under way at once: while one batch is loaded and
    /// its findings shrunk, the next one is dumped, so that the workers of the slowest
    /// interpreters, the end of each phase, and crosspickle's own work on a batch do not
    /// leave a core idle. What each batch observes does not depend on the other (every
    /// request carries its values), so the findings are those of one batch at a time.
    async fn run(&mut self, progress: &mut dyn FnMut(Progress)) -> Result<(), String> {
        let bench = self.bench;
        let all = self.all.clone();
        let began = Instant::now();
        let shrinking = self.report.shrinking;
        // The batch dumped, waiting for its loads; values made into batches so far.
        let mut current: Option<(Batch, observe::Dumped)> = None;
        let mut made = 0;
        loop {
            let next = self.next_batch(made);
            made += next.as_ref().map_or(0, |b| b.n);
            let Some((batch, dumped)) = current.take() else {
                // The first batch: nothing to overlap its dumps with.
                let Some(next) = next else { break };
                match bench.dump(&next.fresh, &all).await {
                    Ok(dumped) => current = Some((next, dumped)),
                    Err(Failed::Stopped) => break,
                    Err(Failed::Start(why)) => return Err(why),
                }
                continue;
            };
            let this = async {
                match bench.load(dumped, &all).await {
                    Ok(observed) => self.batch(&batch, observed, progress).await,
                    Err(Failed::Stopped) => Ok(false),
                    Err(Failed::Start(why)) => Err(why),
                }
            };
            let following = async {
                match &next {
                    Some(next) => Some(bench.dump(&next.fresh, &all).await),
                    None => None,
                }
            };
            let (done, dumped) = tokio::join!(this, following);
            if !done? {
                break;
            }
            self.report.values += batch.n;
            self.report.repeated += batch.n - batch.fresh.len() as u64;
            progress(Progress::Values(self.report.values, self.found.len()));
            match (next, dumped) {
                (Some(next), Some(Ok(dumped))) => current = Some((next, dumped)),
                (_, Some(Err(Failed::Start(why)))) => return Err(why),
                _ => break,
            }
        }
        // Observing is the run's time but shrinking's (the two overlap no more than the
        // dumps of one batch with the shrinking of the one before).
        self.report.exploring += began
            .elapsed()
            .saturating_sub(self.report.shrinking - shrinking);
        Ok(())
    }

    /// The batch after the values `made` so far, none once they are all made, past --time or
    /// stopped.
    fn next_batch(&mut self, made: u64) -> Option<Batch> {
        let options = self.options;
        if self.bench.cancel.is_cancelled() || self.late() {
            return None;
        }
        let left = options.count.map_or(options.batch as u64, |c| {
            options.values_in(c).saturating_sub(made)
        });
        if left == 0 {
            return None;
        }
        let n = left.min(options.batch as u64);
        let indices: Vec<u64> = (made..made + n).map(|i| options.index_of(i)).collect();
        let values: Vec<Value> = indices
            .iter()
            .map(|&i| match &options.builders {
                Some((file, names)) if !names.is_empty() => {
                    let name = names[i as usize % names.len()].clone();
                    Value::User(file.clone(), name, options.seed, i)
                }
                _ => value::generate(options.seed, i, &options.vocabulary),
            })
            .collect();
        // A value drawn before is observed once: earlier in this batch, or kept from an
        // earlier batch (not the one under way, whose observations are not in yet).
        let (mut fresh, mut sources, mut slots) = (Vec::new(), Vec::new(), Vec::new());
        let mut here: HashMap<String, usize> = HashMap::new();
        for value in &values {
            let source = value.source();
            if let Some(seen) = self.memo.get(&source) {
                slots.push(Slot::Known(seen));
            } else if let Some(&j) = here.get(&source) {
                slots.push(Slot::Fresh(j));
            } else {
                here.insert(source.clone(), fresh.len());
                slots.push(Slot::Fresh(fresh.len()));
                fresh.push(value.clone());
                sources.push(source);
            }
        }
        Some(Batch {
            n,
            indices,
            values,
            fresh,
            sources,
            slots,
        })
    }
}

/// What a run has seen so far.
struct State<'a> {
    bench: Bench<'a>,
    options: &'a Options,
    all: Vec<usize>,
    report: Report,
    /// Per finding key: how many values showed it, how many times it was shrunk.
    kinds: IndexMap<String, (u64, usize)>,
    /// Per finding key: the kinds of node (`value.kinds()`) of each reported finding's value
    /// that shows it. A value that has all the kinds of one of them is taken to show it for
    /// the same reason; one that lacks them (a `date` where `bytes` was reported) is shrunk.
    covered: BTreeMap<String, Vec<BTreeSet<&'static str>>>,
    found: BTreeMap<String, Reported>,
    /// Per protocol, pickler and the groups of producers that wrote alike.
    stable: IndexMap<StabilityKey, StabilityReport>,
    /// What the values observed so far showed, by source ([`memo`]).
    memo: Memo<Kept>,
    start: Instant,
    /// Cancelled by Ctrl-C, SIGTERM or SIGHUP.
    signals: &'a CancellationToken,
}

impl State<'_> {
    /// Past --time.
    fn late(&self) -> bool {
        self.options.time.is_some_and(|t| self.start.elapsed() >= t)
    }

    /// A batch observed: each value's findings noted and shrunk; false when interrupted.
    async fn batch(
        &mut self,
        batch: &Batch,
        observed: Vec<Observation>,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<bool, String> {
        let fresh: Vec<Seen> = observed.into_iter().map(Seen::of).collect();
        // What each fresh value showed, once noted (a value drawn twice in the batch).
        let mut kept: Vec<Option<Arc<Kept>>> = vec![None; fresh.len()];
        let values = batch.values.iter().zip(&batch.indices);
        for ((value, &index), slot) in values.zip(&batch.slots) {
            // A yield between values: the next batch's dumps share this thread, and their
            // workers wait for it to read their answers and send them more
            // (`observe::Bench::dump`).
            tokio::task::yield_now().await;
            let observed_again;
            let seen = match slot {
                Slot::Fresh(j) => {
                    // Drawn twice in this batch: counted as a value drawn again.
                    if let Some(k) = &kept[*j] {
                        if !self.wants_shrink(value, k) {
                            self.again(value, k);
                            continue;
                        }
                    }
                    &fresh[*j]
                }
                Slot::Known(k) => {
                    if !self.wants_shrink(value, k) {
                        self.again(value, k);
                        continue;
                    }
                    // With a finding to shrink: observed again (the memo does not keep its
                    // observation).
                    match self
                        .bench
                        .observe(std::slice::from_ref(value), &self.all)
                        .await
                    {
                        Ok(mut o) if o.len() == 1 => {
                            observed_again = Seen::of(o.remove(0));
                            &observed_again
                        }
                        Ok(_) | Err(Failed::Stopped) => {
                            self.again(value, k);
                            continue;
                        }
                        Err(Failed::Start(why)) => return Err(why),
                    }
                }
            };
            let k = self.first(value, index, seen, progress).await?;
            if let Slot::Fresh(j) = slot {
                if kept[*j].is_none() {
                    let k = Arc::new(k);
                    self.memo.insert(&batch.sources[*j], Arc::clone(&k));
                    kept[*j] = Some(k);
                }
            }
        }
        Ok(true)
    }

    /// A value's observation noted (its stability groups, its findings counted by kind) and
    /// its findings shrunk where their kind wants it: what the memo keeps of it.
    async fn first(
        &mut self,
        value: &Value,
        index: u64,
        seen: &Seen,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Kept, String> {
        let options = self.options;
        let pythons = self.bench.pythons;
        let stable = self.note(value, index, seen);
        let kinds: Vec<usize> = seen
            .findings
            .iter()
            .map(|f| {
                let entry = self.kinds.entry(f.key(pythons));
                let id = entry.index();
                entry.or_default().0 += 1;
                id
            })
            .collect();
        let nodes = value.kinds();
        let obs = &seen.obs;
        for (f, &id) in seen.findings.iter().zip(&kinds) {
            if !self.wants(id, &nodes) {
                continue;
            }
            // Past --time, what is left of the batch is reported as it was found, not
            // shrunk.
            if self.bench.cancel.is_cancelled() || self.late() {
                self.keep(f.clone(), value.clone(), obs.clone(), index);
                continue;
            }
            // This value's findings of the same kind (other protocols and picklers) are
            // shrunk with this one.
            for (g, &other) in seen.findings.iter().zip(&kinds) {
                if same_cause(g, f) {
                    self.kinds[other].1 += 1;
                }
            }
            progress(Progress::Shrinking(
                self.kinds
                    .get_index(id)
                    .map_or_else(String::new, |(key, _)| key.clone()),
            ));
            let began = Instant::now();
            self.report.shrinks += 1;
            let (start, time) = (self.start, options.time);
            let late = move || time.is_some_and(|t| start.elapsed() >= t);
            let shrunk = shrink(&self.bench, f, (value, obs), &self.all, late).await;
            self.report.shrinking += began.elapsed();
            match shrunk {
                Ok(Some((finding, value, observation))) => {
                    self.keep(finding, value, observation, index)
                }
                Ok(None) => {}
                // Stopped while shrinking: the finding as it was found.
                Err(Failed::Stopped) => self.keep(f.clone(), value.clone(), obs.clone(), index),
                Err(Failed::Start(why)) => return Err(why),
            }
        }
        Ok(Kept {
            kinds,
            stable,
            comparable: seen.comparable,
            unbuilt: seen.unbuilt.clone(),
        })
    }

    /// Whether a finding of this kind (its number in [`State::kinds`]), shown by a value of
    /// these kinds of node, is to be shrunk: its kind shrunk fewer times than
    /// `--shrinks-per-kind`, and no reported finding's value covers it.
    fn wants(&self, id: usize, nodes: &BTreeSet<&'static str>) -> bool {
        let Some((key, &(_, tried))) = self.kinds.get_index(id) else {
            return false;
        };
        tried < self.options.shrinks_per_kind
            && !self
                .covered
                .get(key)
                .is_some_and(|all| all.iter().any(|k| k.is_subset(nodes)))
    }

    /// Whether a value drawn again has a finding to shrink (see [`State::wants`]).
    fn wants_shrink(&self, value: &Value, k: &Kept) -> bool {
        let limit = self.options.shrinks_per_kind;
        if !k.kinds.iter().any(|&id| self.kinds[id].1 < limit) {
            return false;
        }
        let nodes = value.kinds();
        k.kinds.iter().any(|&id| self.wants(id, &nodes))
    }

    /// A value drawn again, counted with what its first observation showed.
    fn again(&mut self, value: &Value, k: &Kept) {
        self.note_built(value, k.comparable, &k.unbuilt);
        for &id in &k.kinds {
            self.kinds[id].0 += 1;
        }
        for &id in &k.stable {
            self.stable[id].occurrences += 1;
        }
    }

    /// A value's stability groups noted: their numbers in [`State::stable`].
    fn note(&mut self, value: &Value, index: u64, seen: &Seen) -> Vec<usize> {
        self.note_built(value, seen.comparable, &seen.unbuilt);
        let mut ids = Vec::with_capacity(seen.stability.len());
        for s in &seen.stability {
            let entry = self.stable.entry(stability_key_of(s));
            ids.push(entry.index());
            entry
                .or_insert_with(|| StabilityReport {
                    stability: s.clone(),
                    source: value.source(),
                    index,
                    occurrences: 0,
                })
                .occurrences += 1;
        }
        ids
    }

    /// Whether a value could be compared at all, and the interpreters a builder of the
    /// user's could not build it on.
    fn note_built(&mut self, value: &Value, comparable: bool, unbuilt: &[(usize, String)]) {
        if let Value::User(_, builder, ..) = value {
            for (p, why) in unbuilt {
                let e = self.report.unavailable.entry((builder.clone(), *p));
                e.or_insert_with(|| (why.clone(), 0)).1 += 1;
            }
        }
        if !comparable {
            self.report.not_comparable += 1;
            self.report
                .not_comparable_example
                .get_or_insert_with(|| value.source());
        }
    }

    /// A shrunk finding, with its group, unless its signature is known.
    fn keep(&mut self, finding: Finding, value: Value, observation: Observation, index: u64) {
        let pythons = self.bench.pythons;
        let group: Vec<Finding> = findings(&observation)
            .into_iter()
            .filter(|g| same_cause(g, &finding))
            .collect();
        // What the group shows is known now: values that show it again for the same reason
        // (they have all the kinds of node of this one) are counted.
        let kinds = value.kinds();
        for g in &group {
            self.covered
                .entry(g.key(pythons))
                .or_default()
                .push(kinds.clone());
        }
        let params = params::Params::of(&group);
        let signature = signature(&finding, &group, pythons, &observation);
        if self.found.contains_key(&signature) {
            return;
        }
        // One cause shown by fewer: raised where a reported finding's exceptions were, on
        // interpreters among its own (3.8 to 3.12's `pickle.py` memoizes the bytes of a
        // `PickleBuffer` it writes in band without looking in its memo, which only some values'
        // bytes are already in, on some versions). The widest is kept whichever value showed it
        // first, so that the run and the merge of its shards agree: this one is left out under
        // a reported one that outranks it, and takes the place of those it outranks.
        let shown = Sides::of(&group);
        let this = (&finding, &shown, index);
        let mut outranked = Vec::new();
        for (key, r) in &self.found {
            let theirs = (&r.finding, &Sides::of(&r.group), r.index);
            if outranks(theirs, this) {
                return;
            }
            if outranks(this, theirs) {
                outranked.push(key.clone());
            }
        }
        for key in outranked {
            self.found.remove(&key);
        }
        let origin = case::Origin {
            seed: self.options.seed,
            index,
        };
        let sides = signature.split_once(" | ").map_or("", |(_, sides)| sides);
        let case = case::write(
            &finding,
            &params,
            &value,
            &observation,
            pythons,
            &origin,
            sides,
        );
        let round_trip = finding.oracle != oracle::Oracle::Parity;
        let case = self.options.requires.into_case(case, round_trip);
        let keys = group.iter().map(|g| g.key(pythons)).collect();
        let reported = Reported {
            signature: signature.clone(),
            finding,
            group,
            params,
            keys,
            value,
            index,
            occurrences: 0,
            observation,
            case,
        };
        self.found.insert(signature, reported);
    }

    fn finish(mut self) -> Report {
        self.report.interrupted = self.signals.is_cancelled();
        for r in self.found.values_mut() {
            r.occurrences = r
                .keys
                .iter()
                .filter_map(|k| self.kinds.get(k))
                .map(|k| k.0)
                .max()
                .unwrap_or(0);
        }
        self.report.kinds = self.kinds.iter().map(|(k, n)| (k.clone(), n.0)).collect();
        self.report.findings = self.found.into_values().collect();
        // A message change ranks below the type changes: listed after the others.
        self.report
            .findings
            .sort_by_key(|r| r.finding.oracle == oracle::Oracle::MessageDiffers);
        // In the order of their text (protocol, pickler, the groups' labels).
        let pythons = self.bench.pythons;
        let mut stability: Vec<StabilityReport> =
            std::mem::take(&mut self.stable).into_values().collect();
        stability.sort_by_cached_key(|r| stability_key(&r.stability, pythons));
        self.report.stability = stability;
        self.report
    }
}

/// Every finding of an observation: the oracles' (`oracle.rs`), then the messages' that
/// differ among errors of one type (`message.rs`).
fn findings(obs: &Observation) -> Vec<Finding> {
    let mut out = oracle::findings(obs);
    out.extend(message::findings(obs));
    out
}

/// One cause: the same oracle, observation and cause (what differs), whatever the protocol,
/// pickler, unpickler and interpreters; for a load refusal, raised where the same refusals
/// were (each finding holds every site of its cause: `refusals.rs`), so that two causes of one
/// exception type stay two.
fn same_cause(a: &Finding, b: &Finding) -> bool {
    (a.oracle, &a.observed, &a.cause) == (b.oracle, &b.observed, &b.cause)
        && (a.oracle != oracle::Oracle::LoadDiffers || a.sites == b.sites)
}

/// What tells a finding apart: the oracle, what differs ([`Finding::cause`]), where its
/// exceptions were raised ([`Finding::sites`], every protocol and pickler of its group), and the
/// implementations and version ranges on each side (the producers and the consumers of every
/// protocol, pickler and unpickler of its group at once). Not the value's shape, not which
/// protocols or which of the two unpicklers showed it: 2.7's `TypeError` on `Ellipsis` and on
/// `NotImplemented`, or its `str` state of a `date` and of a `time` that 3 cannot decode, are
/// one cause each, shown by values of two shapes.
fn signature(
    finding: &Finding,
    group: &[Finding],
    pythons: &[Interpreter],
    obs: &Observation,
) -> String {
    let Sides {
        producers,
        consumers,
        sites,
    } = Sides::of(group);
    // The interpreters that built the value: a side that holds all of them of an
    // implementation is that implementation, whichever were asked.
    let asked: BTreeSet<usize> = obs.canon.keys().copied().collect();
    let raised = if sites.is_empty() {
        String::new()
    } else {
        format!(" at {}", sites.into_iter().collect::<Vec<_>>().join(","))
    };
    let mut text = format!(
        "{} {}{raised} | {}",
        finding.oracle.as_str(),
        finding.cause,
        sides(&producers, &asked, pythons)
    );
    if !consumers.is_empty() {
        text.push_str(" > ");
        text.push_str(&sides(&consumers, &asked, pythons));
    }
    text
}

/// The producers, the consumers and the raise sites of a finding's group, every protocol,
/// pickler and unpickler at once.
struct Sides<'a> {
    producers: BTreeSet<usize>,
    consumers: BTreeSet<usize>,
    sites: BTreeSet<&'a str>,
}

impl<'a> Sides<'a> {
    fn of(group: &'a [Finding]) -> Sides<'a> {
        let mut sides = Sides {
            producers: BTreeSet::new(),
            consumers: BTreeSet::new(),
            sites: BTreeSet::new(),
        };
        for g in group {
            sides.producers.extend(g.producers.iter().copied());
            sides.consumers.extend(g.consumers.iter().copied());
            sides.sites.extend(g.sites.iter().map(String::as_str));
        }
        sides
    }
}

/// Whether finding `a` (its group's sides) is within `b`: the same oracle, observation and
/// cause, raised at the same places (exceptions: a finding with no raise site, a value or
/// bytes that differ, is never within another; but a parity finding whose cause is an object
/// one pickler reads from its memo and the other writes again, `memo: c only, text`, is), on
/// producers and consumers among `b`'s. `explore merge` applies the same rule to reports
/// (`cli/explore_merge.rs`).
fn within(a: &Finding, a_sides: &Sides, b: &Finding, b_sides: &Sides) -> bool {
    (a.oracle, &a.observed, &a.cause) == (b.oracle, &b.observed, &b.cause)
        && (!a_sides.sites.is_empty()
            || a.oracle == oracle::Oracle::Parity && parity_cause::names_what_is_shared(&a.cause))
        && a_sides.sites == b_sides.sites
        && a_sides.producers.is_subset(&b_sides.producers)
        && a_sides.consumers.is_subset(&b_sides.consumers)
}

/// A finding as [`outranks`] weighs it: its group's sides and its value's number.
type Shown<'f, 's> = (&'f Finding, &'s Sides<'s>, u64);

/// Whether `b` outranks `a`: `a` is within `b` and, where each is within the other, `b` was
/// shown by an earlier value.
/// The widest finding of a cause is kept whichever order the values came in.
fn outranks(b: Shown, a: Shown) -> bool {
    within(a.0, a.1, b.0, b.1) && (!within(b.0, b.1, a.0, a.1) || b.2 < a.2)
}

/// A set of interpreters by implementation and version range, among those `asked` of each
/// implementation in the order of their versions: `cpython` where it holds all of them,
/// else its runs of neighbours, `cpython 2.7 3.8-3.12`.
fn sides(set: &BTreeSet<usize>, asked: &BTreeSet<usize>, pythons: &[Interpreter]) -> String {
    let mut by: BTreeMap<String, Vec<(&crate::version::PythonVersion, bool)>> = BTreeMap::new();
    for i in asked.union(set) {
        let p = &pythons[*i];
        by.entry(p.implementation.to_string())
            .or_default()
            .push((&p.version, set.contains(i)));
    }
    let series = |v: &crate::version::PythonVersion| {
        let r = v.release();
        format!("{}.{}", r[0], r.get(1).copied().unwrap_or(0))
    };
    let mut parts = Vec::new();
    for (implementation, mut all) in by {
        all.sort();
        if !all.iter().any(|(_, inside)| *inside) {
            continue;
        }
        if all.iter().all(|(_, inside)| *inside) {
            parts.push(implementation);
            continue;
        }
        let mut runs: Vec<String> = Vec::new();
        let mut run: Vec<&crate::version::PythonVersion> = Vec::new();
        for (v, inside) in all.iter().map(|(v, i)| (*v, *i)).chain([(all[0].0, false)]) {
            if inside {
                run.push(v);
            } else if let (Some(first), Some(last)) = (run.first(), run.last()) {
                let (a, b) = (series(first), series(last));
                runs.push(if a == b { a } else { format!("{a}-{b}") });
                run.clear();
            }
        }
        parts.push(format!("{implementation} {}", runs.join(" ")));
    }
    parts.join(", ")
}

/// What tells one stability group from another: protocol, pickler, the sets of producers
/// (each set's interpreters, then `usize::MAX`: one allocation, where a set of sets is one a
/// set; a run of 600 s keeps twenty thousand of them).
type StabilityKey = (u32, observe::Pickler, Box<[usize]>);

fn stability_key_of(s: &Stability) -> StabilityKey {
    let n = s.groups.iter().map(|(set, _)| set.len() + 1).sum();
    let mut sets = Vec::with_capacity(n);
    for (set, _) in &s.groups {
        sets.extend(set.iter().copied());
        sets.push(usize::MAX);
    }
    (s.protocol, s.pickler, sets.into_boxed_slice())
}

fn stability_key(s: &Stability, pythons: &[Interpreter]) -> String {
    let groups: Vec<String> = s
        .groups
        .iter()
        .map(|(set, _)| {
            set.iter()
                .map(|&i| pythons[i].label.as_str())
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    format!(
        "protocol={} pickler={} groups={}",
        s.protocol,
        s.pickler.as_str(),
        groups.join(" | ")
    )
}

/// The kind of a finding without the interpreters (which shrinking may change).
fn same_kind(a: &Finding, b: &Finding) -> bool {
    (
        a.oracle,
        a.protocol,
        a.pickler,
        a.unpickler,
        &a.observed,
        &a.cause,
    ) == (
        b.oracle,
        b.protocol,
        b.pickler,
        b.unpickler,
        &b.observed,
        &b.cause,
    )
}

/// Shrink `value` while it shows `finding` on the interpreters involved, then observe the
/// smallest on every interpreter: the finding as it is there, the value, what it did.
/// A candidate tried in an earlier round is not observed again (its findings are kept by its
/// source).
async fn shrink(
    bench: &Bench<'_>,
    finding: &Finding,
    (value, obs): (&Value, &Observation),
    all: &[usize],
    late: impl Fn() -> bool,
) -> Result<Option<(Finding, Value, Observation)>, Failed> {
    const CANDIDATES: usize = 64;
    const ROUNDS: usize = 60;
    // Shrunk on one producer and one consumer that show it together (and the witness): a
    // process or two per round instead of one per interpreter; the smallest value is then observed on
    // every interpreter, which says where else it shows.
    let first = |set: &BTreeSet<usize>| set.iter().next().copied();
    let (p, c) = oracle::pair(finding, obs)
        .map(|(p, c)| (Some(p), Some(c)))
        .unwrap_or_else(|| (first(&finding.producers), first(&finding.consumers)));
    let mut pair = Finding {
        producers: p.into_iter().collect(),
        consumers: c.into_iter().collect(),
        ..finding.clone()
    };
    let involved = pair.involved();
    let mut best = value.clone();
    // Each candidate observed so far, by source: its findings on the interpreters involved.
    let mut tried: HashMap<String, Vec<Finding>> = HashMap::new();
    for _ in 0..ROUNDS {
        if bench.cancel.is_cancelled() || late() {
            break;
        }
        let candidates: Vec<(Value, String)> = best
            .shrinks()
            .into_iter()
            .take(CANDIDATES)
            .map(|v| {
                let source = v.source();
                (v, source)
            })
            .collect();
        if candidates.is_empty() {
            break;
        }
        let (new, sources): (Vec<Value>, Vec<&String>) = candidates
            .iter()
            .filter(|(_, source)| !tried.contains_key(source))
            .map(|(v, source)| (v.clone(), source))
            .unzip();
        if !new.is_empty() {
            let observed = bench.observe(&new, &involved).await?;
            for (source, o) in sources.into_iter().zip(observed) {
                tried.insert(source.clone(), findings(&o));
            }
        }
        let Some((next, shown)) = candidates.into_iter().find_map(|(v, source)| {
            let shown = tried
                .get(&source)?
                .iter()
                .find(|g| covers(g, &pair))?
                .clone();
            Some((v, shown))
        }) else {
            break;
        };
        best = next;
        // Two causes in one value: shrunk on as the one that is left alone.
        if oracle::part_of(&shown, &pair) {
            pair = Finding {
                producers: pair.producers,
                consumers: pair.consumers,
                witness: pair.witness,
                ..shown
            };
        }
    }
    // What was shrunk, on the interpreters the finding showed on.
    let shrunk = Finding {
        producers: finding.producers.clone(),
        consumers: finding.consumers.clone(),
        ..pair
    };
    // The smallest value on every interpreter; should it not show the finding there (a
    // difference that depends on what ran before it), the value as generated.
    for (v, finding) in [(best, &shrunk), (value.clone(), finding)] {
        let obs = bench
            .observe(std::slice::from_ref(&v), all)
            .await?
            .remove(0);
        let mut matching: Vec<Finding> = findings(&obs)
            .into_iter()
            .filter(|g| same_kind(g, finding))
            .collect();
        // Raised where it was first, then on the most of the same interpreters.
        matching.sort_by_key(|g| {
            let sites = g.sites.intersection(&finding.sites).count();
            (usize::MAX - sites, usize::MAX - overlap(g, finding))
        });
        if let Some(g) = matching.into_iter().next() {
            return Ok(Some((g, v, obs)));
        }
    }
    Ok(None)
}

/// `g` still shows `pair`: the same kind of finding (or one of two causes `pair` shows at once,
/// [`oracle::part_of`]) on (at least) its producer and consumer,
/// raised where `pair` was (a smaller value that raises the same type elsewhere is another
/// cause); a candidate that shows it on more of the interpreters observed is as good. A
/// message change is shown by its two wordings (its cause names both), whichever side is the
/// reference: on a producer and its witness alone the two groups tie, and the first
/// interpreter's is the reference.
fn covers(g: &Finding, pair: &Finding) -> bool {
    let sides = if g.oracle == oracle::Oracle::MessageDiffers {
        let (a, b) = (pair.involved(), g.involved());
        a.iter().all(|i| b.contains(i))
    } else {
        pair.producers.is_subset(&g.producers) && pair.consumers.is_subset(&g.consumers)
    };
    (same_kind(g, pair) || oracle::part_of(g, pair)) && g.sites.is_subset(&pair.sites) && sides
}

fn overlap(a: &Finding, b: &Finding) -> usize {
    let inter = |x: &BTreeSet<usize>, y: &BTreeSet<usize>| x.intersection(y).count();
    inter(&a.producers, &b.producers) + inter(&a.consumers, &b.consumers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::Implementation;

    /// A side is its implementations and version ranges among the interpreters asked: all of
    /// an implementation is the implementation alone.
    #[test]
    fn a_side_is_implementations_and_version_ranges() {
        let pythons: Vec<Interpreter> = [
            (Implementation::Cpython, "2.7.18"),
            (Implementation::Cpython, "3.6.15"),
            (Implementation::Cpython, "3.8.18"),
            (Implementation::Cpython, "3.12.1"),
            (Implementation::Pypy, "3.9.16"),
            (Implementation::Cpython, "3.14.1"),
        ]
        .into_iter()
        .map(|(i, v)| Interpreter::for_tests(i, v))
        .collect();
        let all: BTreeSet<usize> = (0..6).collect();
        let set = |s: &[usize]| s.iter().copied().collect::<BTreeSet<usize>>();
        assert_eq!(sides(&set(&[0]), &all, &pythons), "cpython 2.7");
        assert_eq!(
            sides(&set(&[1, 2, 3, 4, 5]), &all, &pythons),
            "cpython 3.6-3.14, pypy"
        );
        assert_eq!(
            sides(&set(&[0, 2, 3]), &all, &pythons),
            "cpython 2.7 3.8-3.12"
        );
        // A value 2.7 cannot build: every CPython that built it is all of them.
        assert_eq!(
            sides(&set(&[1, 2, 3, 5]), &set(&[1, 2, 3, 4, 5]), &pythons),
            "cpython"
        );
    }

    /// A message change shrunk on a producer and its witness alone is still shown when the
    /// two swap (a tie makes the first interpreter's wording the reference); another oracle
    /// is not shown by other producers.
    #[test]
    fn a_message_change_is_covered_whichever_side_is_the_reference() {
        let finding = |oracle, producer: usize, witness: usize| Finding {
            oracle,
            protocol: 0,
            pickler: observe::Pickler::C,
            unpickler: None,
            observed: "TypeError".into(),
            cause: "TypeError: a | b".into(),
            producers: BTreeSet::from([producer]),
            consumers: BTreeSet::new(),
            witness: Some(witness),
            detail: String::new(),
            sites: BTreeSet::new(),
        };
        let message = oracle::Oracle::MessageDiffers;
        assert!(covers(&finding(message, 0, 1), &finding(message, 1, 0)));
        assert!(!covers(&finding(message, 2, 0), &finding(message, 1, 0)));
        let dump = oracle::Oracle::DumpDiffers;
        assert!(!covers(&finding(dump, 0, 1), &finding(dump, 1, 0)));
        assert!(covers(&finding(dump, 1, 0), &finding(dump, 1, 0)));
    }

    fn options(shard: Option<(u64, u64)>) -> Options {
        Options {
            seed: 0,
            count: None,
            time: None,
            vocabulary: Vocabulary {
                max_size: 12,
                stdlib: true,
                py36: true,
            },
            builders: None,
            batch: 10,
            task_limit: 5.0,
            jobs: 1,
            shrinks_per_kind: 2,
            shard,
            requires: Default::default(),
            loaders: None,
        }
    }

    #[test]
    fn shards_share_out_the_value_numbers() {
        let whole = options(None);
        assert_eq!(whole.values_in(10), 10);
        assert_eq!(
            (0..4).map(|n| whole.index_of(n)).collect::<Vec<_>>(),
            [0, 1, 2, 3]
        );
        // Shards 1, 2 and 3 of 3 over 0..10: 0,3,6,9 / 1,4,7 / 2,5,8: each number once.
        let mut seen = Vec::new();
        for m in 1..=3 {
            let shard = options(Some((m, 3)));
            let n = shard.values_in(10);
            assert_eq!(n, [4, 3, 3][m as usize - 1]);
            seen.extend((0..n).map(|i| shard.index_of(i)));
        }
        seen.sort();
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
        // More shards than values: the last ones have none.
        assert_eq!(options(Some((3, 3))).values_in(2), 0);
    }
}
