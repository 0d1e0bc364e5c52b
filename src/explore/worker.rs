//! The embedded worker (`prelude.py` and `worker.py`, valid on 2.7 and every Python 3) and
//! its processes: one per interpreter for the whole run (observing and shrinking), started
//! through `sys/process.rs`, fed batches over a pipe in length-prefixed messages (a JSON header
//! and the pickles as raw bytes) and answering each batch with one message. A worker that dies
//! or outlives a batch's time is replaced and the batch tried again in halves, down to one
//! task tried twice: only then is a crash or a hang ([`Done::Crash`], [`Done::Hang`]) blamed
//! on that task's value. A worker that cannot start at all is an error naming it.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value as Json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio_util::sync::CancellationToken;

use crate::python::{sanitized_env, Interpreter};
use crate::sys::process::{self, Captured, Exit, ProcessSpec};

/// The helpers shared by the worker and the case files explore writes.
pub const PRELUDE: &str = include_str!("prelude.py");
const WORKER: &str = include_str!("worker.py");
/// The loads of `explore --streams` (`stream.rs`).
const STREAMS: &str = include_str!("streams.py");

/// How long a worker may take to say it is ready.
const START_LIMIT: Duration = Duration::from_secs(30);
/// The most parts, and the largest part, a message may have.
const MAX_PARTS: usize = 1 << 20;
const MAX_PART: usize = 1 << 30;

/// How one task ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Done {
    /// A dump's pickle.
    Dumped(Vec<u8>),
    /// A load's canonical description whose hash is the one the request expected.
    Expected,
    /// A load's canonical description: its hash, and its text when that was not the hash the
    /// request expected.
    Loaded { hash: String, canon: Option<String> },
    /// The dump's value could not be built (its error is in [`Answer::built`]).
    NotBuilt,
    /// The exception's type, message and where it was raised (`pickle.save_global`,
    /// `_pickle`; empty where the worker did not say).
    Error(String, String, String),
    /// The task outlived the time limit.
    Hang,
    /// The worker's process ended during this task, as described.
    Crash(String),
}

/// A value built: its canonical description and hash, or the exception's type and message.
pub type Built = Result<(String, String), (String, String)>;

/// A value's id, a protocol, and the C and the Python pickles once optimized.
pub type Parity = (String, u32, Vec<u8>, Vec<u8>);

/// What a worker said of a batch.
#[derive(Debug, Default)]
pub struct Answer {
    /// Per value (dumps): its canonical description and hash, or what building it raised.
    pub built: BTreeMap<String, Built>,
    /// One per task, in order.
    pub tasks: Vec<Done>,
    /// Per value and protocol (dumps): the C and the Python pickles once optimized, where they
    /// still differ.
    pub parity: Vec<Parity>,
}

/// Why a batch got no answer.
#[derive(Debug)]
pub enum Failed {
    /// Cancelled (a signal, or past `--time`).
    Stopped,
    /// The worker of this interpreter cannot start (the message names it).
    Start(String),
}

/// The worker script, written once into a folder of its own (its only neighbour on
/// `sys.path`), and a process per interpreter.
pub struct Worker {
    dir: tempfile::TempDir,
    /// Seconds one task may take.
    pub limit: f64,
    procs: Vec<tokio::sync::Mutex<Option<Proc>>>,
    /// Workers started, over the run (the first of each and every replacement).
    pub starts: std::sync::atomic::AtomicUsize,
    /// Seconds a batch may take per task, beyond its 10 s and twice the limit.
    pub per_task: f64,
    /// Workers busy at once, whatever asks ([`Worker::with_jobs`]): the dumps of one batch,
    /// the loads of another and a shrink's requests share these.
    busy: tokio::sync::Semaphore,
    /// Per worker slot, how long a task took it of late (nanoseconds, a moving average of its
    /// batches; 0 before its first): what [`Worker::slowest_first`] orders requests by.
    pace: Vec<std::sync::atomic::AtomicU64>,
}

/// One worker process.
struct Proc {
    child: Child,
    pid: u32,
    stdin: ChildStdin,
    /// Buffered: a message is many small reads (a count and a length per part).
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Mutex<Captured>>,
}

/// One attempt's failure.
enum Attempt {
    Stopped,
    /// It died (how) or hung (`None`).
    Lost(Option<String>),
}

#[derive(Deserialize)]
struct WireAnswer<'a> {
    #[serde(default)]
    built: BTreeMap<String, WireBuilt>,
    /// The answers that are not in the answers' table ([`OTHER`] there), in the order of
    /// their tasks, as written: read by [`WireOther`]'s visitor, once per text.
    #[serde(borrow, default)]
    other: Vec<&'a serde_json::value::RawValue>,
    #[serde(default)]
    parity: Vec<(String, u32, usize, usize)>,
}

/// A value built, `[CANON, HASH]`, or not, `{"err": [TYPE, MESSAGE]}`: read by a visitor of
/// its own (serde's untagged enums buffer every value to try each form).
struct WireBuilt(Built);

impl<'de> Deserialize<'de> for WireBuilt {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = WireBuilt;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("[CANON, HASH] or {\"err\": [TYPE, MESSAGE]}")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<WireBuilt, A::Error> {
                let canon: String = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let hash: String = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(1, &self))?;
                Ok(WireBuilt(Ok((canon, hash))))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<WireBuilt, A::Error> {
                let mut err = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key == "err" {
                        err = Some(map.next_value::<(String, String)>()?);
                    } else {
                        map.next_value::<de::IgnoredAny>()?;
                    }
                }
                err.map(|e| WireBuilt(Err(e)))
                    .ok_or_else(|| de::Error::missing_field("err"))
            }
        }
        d.deserialize_any(V)
    }
}

/// An answer of "other": `{"h": HASH}` (and `"canon"`), `{"err": [TYPE, MESSAGE, SITE]}`,
/// `{"hang": 1}`, `{"built": 0}`, `{"crash": HOW}`; read by a visitor of its own (its keys
/// borrowed, not a struct of seven options per task).
struct WireOther(Done);

impl<'de> Deserialize<'de> for WireOther {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = WireOther;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a task's answer")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<WireOther, A::Error> {
                let (mut hash, mut canon, mut err) = (None, None, None);
                let (mut hang, mut built, mut crash) = (false, false, None);
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match &*key {
                        "h" => hash = Some(map.next_value::<String>()?),
                        "canon" => canon = Some(map.next_value::<String>()?),
                        "err" => err = Some(map.next_value::<Vec<String>>()?),
                        "crash" => crash = Some(map.next_value::<String>()?),
                        other => {
                            hang |= other == "hang";
                            built |= other == "built";
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                let done = if let Some(hash) = hash {
                    Done::Loaded { hash, canon }
                } else if let Some(e) = err {
                    let mut e = e.into_iter();
                    match (e.next(), e.next(), e.next()) {
                        (Some(t), Some(m), site) => Done::Error(t, m, site.unwrap_or_default()),
                        _ => {
                            return Err(de::Error::custom(
                                "an exception without its type and message",
                            ))
                        }
                    }
                } else if hang {
                    Done::Hang
                } else if built {
                    Done::NotBuilt
                } else if let Some(how) = crash {
                    Done::Crash(how)
                } else {
                    return Err(de::Error::custom("a task answered with nothing"));
                };
                Ok(WireOther(done))
            }
        }
        d.deserialize_any(V)
    }
}

/// An answer of "other", read by [`WireOther`]'s visitor.
fn parsed(json: &str) -> Result<Done, String> {
    serde_json::from_str(json)
        .map(|WireOther(done)| done)
        .map_err(|e| format!("a bad answer: {e}"))
}

/// In an answers' table, an answer that is in "other" (worker.py).
const OTHER: u32 = u32::MAX;

/// A task as it is written into a request's JSON header.
pub trait WireRequest {
    /// Append this task's JSON to `out`.
    fn write_json(&self, out: &mut Vec<u8>);
}

impl WireRequest for Json {
    fn write_json(&self, out: &mut Vec<u8>) {
        serde_json::to_writer(out, self).expect("JSON to memory");
    }
}

/// Append `text` to `out` as a JSON string: as it is when it is printable ASCII with nothing
/// to escape (a load task's hash, most sources), which is what serde_json writes for it too,
/// without its writer's machinery (1.5% of crosspickle's instructions in explore).
pub fn json_str(out: &mut Vec<u8>, text: &str) {
    if text
        .bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
    {
        out.reserve(text.len() + 2);
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    } else {
        serde_json::to_writer(out, text).expect("JSON to memory");
    }
}

/// Append `n` to `out` in decimal (a task's numbers: `write!` through the formatter was 7% of
/// crosspickle's instructions in explore, writing the workers' requests).
pub fn push_number(out: &mut Vec<u8>, n: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// A request's members but its tasks and limit (`"op":"dump","values":[...]`), as JSON text
/// without the braces: written once per request, not once per attempt.
pub fn members(base: &Map<String, Json>) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, (key, value)) in base.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json_str(&mut out, key);
        out.push(b':');
        value.write_json(&mut out);
    }
    out
}

/// A request's header: its members, its tasks and the time limit, as one JSON object.
fn header<T: WireRequest>(members: &[u8], tasks: &[T], limit: f64) -> Vec<u8> {
    let mut out = Vec::with_capacity(members.len() + 16 * tasks.len() + 32);
    out.push(b'{');
    out.extend_from_slice(members);
    if !members.is_empty() {
        out.push(b',');
    }
    out.extend_from_slice(b"\"tasks\":[");
    for (i, t) in tasks.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        t.write_json(&mut out);
    }
    out.extend_from_slice(b"],\"limit\":");
    serde_json::to_writer(&mut out, &limit).expect("JSON to memory");
    out.push(b'}');
    out
}

impl Worker {
    /// The worker script, for `count` interpreters (none started yet).
    pub fn new(limit: f64, count: usize) -> std::io::Result<Worker> {
        let dir = tempfile::Builder::new()
            .prefix("crosspickle-explore-")
            .tempdir()?;
        std::fs::write(
            dir.path().join("explore_worker.py"),
            format!("{PRELUDE}\n{STREAMS}\n{WORKER}"),
        )?;
        Ok(Worker {
            dir,
            limit,
            procs: (0..count).map(|_| tokio::sync::Mutex::new(None)).collect(),
            starts: 0.into(),
            per_task: 0.05,
            busy: tokio::sync::Semaphore::new(count.max(1)),
            pace: (0..count).map(|_| 0.into()).collect(),
        })
    }

    /// How long `tasks` tasks may take the worker of `slot`, by its recent pace (the longest
    /// there is for a worker not measured yet).
    fn estimate(&self, slot: usize, tasks: usize) -> u64 {
        match self.pace[slot].load(std::sync::atomic::Ordering::Relaxed) {
            0 => u64::MAX,
            pace => pace.saturating_mul(tasks as u64),
        }
    }

    /// `requests` (each with its slot and its number of tasks) in the order they should be
    /// asked of the workers: the longest first (a worker not measured yet counts as the
    /// longest), so that the last requests of a batch are short ones and no core waits alone
    /// for the slowest interpreter at the end of each batch. Equal estimates keep their order.
    pub fn slowest_first<R>(&self, mut requests: Vec<(usize, usize, R)>) -> Vec<R> {
        requests.sort_by_key(|&(slot, tasks, _)| std::cmp::Reverse(self.estimate(slot, tasks)));
        requests.into_iter().map(|(.., r)| r).collect()
    }

    /// A batch of `tasks` took the worker of `slot` `took`: its pace moves a quarter of the
    /// way towards this batch's.
    fn note_pace(&self, slot: usize, tasks: usize, took: Duration) {
        if tasks == 0 {
            return;
        }
        let this = (took.as_nanos() / tasks as u128).min(u64::MAX as u128) as u64;
        let pace = &self.pace[slot];
        let was = pace.load(std::sync::atomic::Ordering::Relaxed);
        let now = if was == 0 {
            this
        } else {
            was - was / 4 + this / 4
        };
        pace.store(now.max(1), std::sync::atomic::Ordering::Relaxed);
    }

    /// At most `jobs` workers busy at once (each worker is one request at a time already).
    pub fn with_jobs(mut self, jobs: usize) -> Worker {
        self.busy = tokio::sync::Semaphore::new(jobs.max(1));
        self
    }

    fn script(&self) -> PathBuf {
        self.dir.path().join("explore_worker.py")
    }

    fn folder(&self) -> &Path {
        self.dir.path()
    }

    /// Run `tasks` with the request's `members` (`op` and, for dumps, the values: see
    /// [`members`]) and the pickles `parts` on interpreter `slot`, `python`; a worker that
    /// dies or hangs is replaced and the tasks tried again in halves, each task at most twice
    /// before it is blamed.
    pub async fn run<T: WireRequest>(
        &self,
        slot: usize,
        python: &Interpreter,
        base: &[u8],
        tasks: &[T],
        parts: &[&[u8]],
        stop: &CancellationToken,
    ) -> Result<Answer, Failed> {
        let mut done: Vec<Option<Done>> = vec![None; tasks.len()];
        let mut answer = Answer::default();
        let mut pending: VecDeque<(std::ops::Range<usize>, bool)> = VecDeque::new();
        if !tasks.is_empty() {
            pending.push_back((0..tasks.len(), false));
        }
        while let Some((range, retried)) = pending.pop_front() {
            let chunk = &tasks[range.clone()];
            match self.once(slot, python, base, chunk, parts, stop).await? {
                Ok(part) => {
                    answer.built.extend(part.built);
                    answer.parity.extend(part.parity);
                    for (i, d) in range.zip(part.tasks) {
                        done[i] = Some(d);
                    }
                }
                Err(Attempt::Stopped) => return Err(Failed::Stopped),
                Err(Attempt::Lost(why)) => {
                    if range.len() > 1 {
                        let mid = range.start + range.len() / 2;
                        pending.push_back((range.start..mid, false));
                        pending.push_back((mid..range.end, false));
                    } else if !retried {
                        pending.push_back((range, true));
                    } else {
                        done[range.start] = Some(why.map_or(Done::Hang, Done::Crash));
                    }
                }
            }
        }
        answer.tasks = done
            .into_iter()
            .map(|d| d.unwrap_or(Done::Crash("no answer".into())))
            .collect();
        Ok(answer)
    }

    /// One attempt at a batch on the worker of `slot`, started if need be.
    async fn once<T: WireRequest>(
        &self,
        slot: usize,
        python: &Interpreter,
        base: &[u8],
        tasks: &[T],
        parts: &[&[u8]],
        stop: &CancellationToken,
    ) -> Result<Result<Answer, Attempt>, Failed> {
        let mut guard = self.procs[slot].lock().await;
        // Taken with the worker held (never the other way round): whoever holds a permit is
        // under way on a worker of its own, and gives the permit back.
        let Ok(_busy) = self.busy.acquire().await else {
            return Err(Failed::Stopped);
        };
        if guard.is_none() {
            *guard = Some(self.start(python, stop).await?);
        }
        let proc = guard.as_mut().expect("started");
        let header = header(base, tasks, self.limit);
        let message = encode(&header, parts);
        let time =
            Duration::from_secs_f64(10.0 + self.limit * 2.0 + tasks.len() as f64 * self.per_task);
        let began = Instant::now();
        let exchange = async {
            proc.stdin.write_all(&message).await?;
            proc.stdin.flush().await?;
            read_message(&mut proc.stdout).await
        };
        // None: it hung; Some(None): stopped.
        let got = tokio::select! {
            got = exchange => Some(Some(got)),
            _ = tokio::time::sleep(time) => None,
            _ = stop.cancelled() => Some(None),
        };
        let got = match got {
            Some(Some(got)) => {
                self.note_pace(slot, tasks.len(), began.elapsed());
                got
            }
            Some(None) => {
                end(guard.take().expect("started")).await;
                return Ok(Err(Attempt::Stopped));
            }
            None => {
                end(guard.take().expect("started")).await;
                return Ok(Err(Attempt::Lost(None)));
            }
        };
        match got
            .map_err(|e| e.to_string())
            .and_then(|p| decode(p, tasks.len()))
        {
            Ok(answer) => Ok(Ok(answer)),
            Err(_) => Ok(Err(Attempt::Lost(Some(
                end(guard.take().expect("started")).await,
            )))),
        }
    }

    /// A new worker on `python`, once it said it is ready; tried twice.
    async fn start(&self, python: &Interpreter, stop: &CancellationToken) -> Result<Proc, Failed> {
        let mut why = String::new();
        for _ in 0..2 {
            self.starts
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let spec = ProcessSpec::new(&python.executable, None)
                .env(sanitized_env(&Default::default()))
                .arg(self.script())
                .cwd(self.folder());
            let mut child = process::spawn_service(&spec).map_err(|e| {
                Failed::Start(format!(
                    "the explore worker cannot start on {} ({}): {e}",
                    python.label,
                    python.executable.display()
                ))
            })?;
            let pid = child.id().unwrap_or(0);
            let (Some(stdin), Some(stdout), Some(err)) =
                (child.stdin.take(), child.stdout.take(), child.stderr.take())
            else {
                process::kill_group(pid);
                return Err(Failed::Start(format!(
                    "the explore worker on {} has no pipes",
                    python.label
                )));
            };
            let stderr = Arc::new(Mutex::new(Captured::new(4096)));
            tokio::spawn(drain(err, stderr.clone()));
            let mut stdout = BufReader::with_capacity(1 << 16, stdout);
            let ready = tokio::select! {
                r = tokio::time::timeout(START_LIMIT, read_message(&mut stdout)) => r,
                // Past --time (or a signal) before it said it was ready.
                _ = stop.cancelled() => {
                    let proc = Proc { child, pid, stdin, stdout, stderr };
                    end(proc).await;
                    return Err(Failed::Start(format!(
                        "the explore worker on {} ({}) did not say it was ready before the run was over",
                        python.label,
                        python.executable.display()
                    )));
                }
            };
            let proc = Proc {
                child,
                pid,
                stdin,
                stdout,
                stderr,
            };
            match ready {
                Ok(Ok(parts)) if parts.first().is_some_and(|p| p.starts_with(b"{\"ready\"")) => {
                    return Ok(proc);
                }
                Ok(_) => why = end(proc).await,
                Err(_) => {
                    end(proc).await;
                    why = format!(
                        "it did not say it was ready within {} s",
                        START_LIMIT.as_secs()
                    );
                }
            }
        }
        Err(Failed::Start(format!(
            "the explore worker cannot start on {} ({}): {why}",
            python.label,
            python.executable.display()
        )))
    }
}

impl Worker {
    /// End every worker: its input closed, it exits (killed after a second), and it is
    /// waited for (so that its CPU time counts among crosspickle's children's).
    pub async fn shutdown(&self) {
        for slot in &self.procs {
            let Some(mut proc) = slot.lock().await.take() else {
                continue;
            };
            drop(proc.stdin);
            if tokio::time::timeout(Duration::from_secs(1), proc.child.wait())
                .await
                .is_err()
            {
                process::kill_group(proc.pid);
                let _ = proc.child.wait().await;
            }
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        for slot in &self.procs {
            if let Ok(mut guard) = slot.try_lock() {
                if let Some(proc) = guard.take() {
                    process::kill_group(proc.pid);
                }
            }
        }
    }
}

/// Kill a worker and say how it ended: faulthandler's `Fatal Python error` line, its signal,
/// its status, with the end of what it wrote on stderr.
async fn end(mut proc: Proc) -> String {
    drop(proc.stdin);
    let status = match tokio::time::timeout(Duration::from_millis(200), proc.child.wait()).await {
        Ok(Ok(status)) => Some(status),
        _ => {
            process::kill_group(proc.pid);
            proc.child.wait().await.ok()
        }
    };
    let exit = status.map_or(Exit::Code(-1), process::exit_of);
    tokio::time::sleep(Duration::from_millis(20)).await;
    let said = proc.stderr.lock().unwrap().text();
    crash_text(exit, &said)
}

async fn drain(mut from: tokio::process::ChildStderr, into: Arc<Mutex<Captured>>) {
    let mut buf = [0u8; 4096];
    while let Ok(n) = from.read(&mut buf).await {
        if n == 0 {
            break;
        }
        into.lock().unwrap().push(&buf[..n]);
    }
}

/// What a crash was: faulthandler's `Fatal Python error` line, else the signal or status with
/// the last line the worker wrote.
fn crash_text(exit: Exit, stderr: &str) -> String {
    if let Some(fatal) = stderr.lines().find(|l| l.starts_with("Fatal Python error")) {
        return fatal.to_string();
    }
    let how = match exit {
        Exit::Signal(s) => format!("killed by {}", crate::sys::signal::name(s)),
        other => other.describe(),
    };
    match stderr.lines().rev().find(|l| !l.trim().is_empty()) {
        Some(last) => format!("{how}: {}", last.trim()),
        None => how,
    }
}

/// A message: the count of parts, then each part's length and bytes (big-endian `u32`s).
pub fn encode(header: &[u8], parts: &[&[u8]]) -> Vec<u8> {
    let size = 8 + header.len() + parts.iter().map(|p| 4 + p.len()).sum::<usize>();
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(&(1 + parts.len() as u32).to_be_bytes());
    for part in std::iter::once(header).chain(parts.iter().copied()) {
        out.extend_from_slice(&(part.len() as u32).to_be_bytes());
        out.extend_from_slice(part);
    }
    out
}

/// Read one message (see [`encode`]).
pub async fn read_message(from: &mut (impl AsyncRead + Unpin)) -> std::io::Result<Vec<Vec<u8>>> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let count = from.read_u32().await? as usize;
    if count == 0 || count > MAX_PARTS {
        return Err(bad("a message with no header or too many parts"));
    }
    let mut parts = Vec::with_capacity(count.min(1024));
    for _ in 0..count {
        let size = from.read_u32().await? as usize;
        if size > MAX_PART {
            return Err(bad("a part larger than 1 GiB"));
        }
        // Read into the part's capacity, never zeroed first (a message's parts are mostly
        // small pickles: zeroing each was a fortieth of crosspickle's own CPU).
        let mut part = Vec::with_capacity(size);
        let mut left = (&mut *from).take(size as u64);
        while part.len() < size {
            if left.read_buf(&mut part).await? == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
        }
        parts.push(part);
    }
    Ok(parts)
}

/// A worker's answer to a batch of `count` tasks (its pickles moved out of `parts`): the
/// header, the pickles, and last the answers' table, a big-endian `u32` per task (worker.py).
fn decode(mut parts: Vec<Vec<u8>>, count: usize) -> Result<Answer, String> {
    let head = std::mem::take(&mut parts[0]);
    let table = match parts.len() {
        2.. => parts.pop().expect("two parts or more"),
        _ => return Err("an answer without its answers' table".into()),
    };
    let wire: WireAnswer =
        serde_json::from_slice(&head).map_err(|e| format!("a bad answer: {e}"))?;
    if table.len() != 4 * count {
        return Err(format!("{} answers to {count} tasks", table.len() / 4));
    }
    // An answer in "other" (an exception, a load that built another value) is read once per
    // text: the tasks of a batch mostly fail alike (every protocol of a value that cannot be
    // pickled).
    let mut read: HashMap<&str, Done> = HashMap::new();
    let mut other = wire.other.iter();
    let codes = || {
        table
            .chunks_exact(4)
            .map(|code| u32::from_be_bytes(code.try_into().expect("4 bytes")))
    };
    // A part is named by one task or more (a dump with no protocol named is the default's
    // number's pickle) or one side of a parity pair: moved out at its last use, not copied.
    // Counted from the table first, so that the tasks are made once, in place (collected
    // through an intermediate list, growing it was a sixteenth of crosspickle's own CPU).
    let mut uses = vec![0usize; parts.len()];
    let named = codes()
        .filter(|&c| c != 0 && c != OTHER)
        .map(|c| c as usize);
    let paired = wire.parity.iter().flat_map(|(_, _, c, py)| [*c, *py]);
    for i in named.chain(paired) {
        if let Some(n) = uses.get_mut(i) {
            *n += 1;
        }
    }
    let mut part = |i: usize| match parts.get_mut(i).filter(|_| i > 0) {
        Some(p) => {
            uses[i] -= 1;
            Ok(if uses[i] == 0 {
                std::mem::take(p)
            } else {
                p.clone()
            })
        }
        None => Err(format!("no part {i}")),
    };
    let mut answer = Answer {
        built: wire.built.into_iter().map(|(id, b)| (id, b.0)).collect(),
        tasks: Vec::with_capacity(count),
        parity: Vec::new(),
    };
    for code in codes() {
        answer.tasks.push(match code {
            0 => Done::Expected,
            OTHER => {
                let text = other
                    .next()
                    .ok_or("the answers' table names more answers than there are")?
                    .get();
                if !read.contains_key(text) {
                    read.insert(text, parsed(text)?);
                }
                read[text].clone()
            }
            p => Done::Dumped(part(p as usize)?),
        });
    }
    if other.next().is_some() {
        return Err("more answers than the answers' table names".into());
    }
    for (id, protocol, c, py) in wire.parity {
        answer.parity.push((id, protocol, part(c)?, part(py)?));
    }
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A string is written as serde_json writes it, whether it takes the plain path or not.
    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        for text in [
            "",
            "0123abcdef",
            "plain text, (with) [brackets] ~",
            "a \"quote\"",
            "a \\ backslash",
            "a\nnew line\t\u{1}",
            "\u{7f} delete",
            "caf\u{e9} \u{1F600}",
        ] {
            let mut out = Vec::new();
            json_str(&mut out, text);
            assert_eq!(out, serde_json::to_vec(text).unwrap(), "{text:?}");
        }
    }

    /// Numbers are written in decimal, as `write!` wrote them.
    #[test]
    fn numbers_are_written_in_decimal() {
        let mut out = Vec::new();
        push_number(&mut out, 1234567usize);
        push_number(&mut out, 0u32);
        push_number(&mut out, usize::MAX);
        assert_eq!(out, format!("12345670{}", usize::MAX).into_bytes());
    }

    /// Requests go to the workers longest first, by each worker's pace times its tasks; one
    /// not measured yet goes first; equal estimates keep their order.
    #[test]
    fn the_longest_requests_go_first() {
        let worker = Worker::new(5.0, 4).unwrap();
        let ms = Duration::from_millis;
        worker.note_pace(0, 10, ms(10)); // 1 ms a task
        worker.note_pace(1, 10, ms(50)); // 5 ms a task
        worker.note_pace(2, 10, ms(10));
        // Slot 3 not measured yet.
        let order = worker.slowest_first(vec![
            (0, 100, "a"),
            (1, 10, "b"),
            (2, 100, "c"),
            (3, 1, "d"),
            (1, 30, "e"),
        ]);
        assert_eq!(order, vec!["d", "e", "a", "c", "b"]);
        // A slower batch moves the pace a quarter of the way: 1 ms -> 3 ms a task.
        worker.note_pace(0, 10, ms(90));
        assert_eq!(worker.estimate(0, 1), 3_000_000);
        // A request of no tasks says nothing of the pace.
        worker.note_pace(0, 0, ms(1000));
        assert_eq!(worker.estimate(0, 1), 3_000_000);
    }

    #[tokio::test]
    async fn a_message_reads_back_as_written() {
        let message = encode(b"{\"a\":1}", &[b"\x80\x04", b""]);
        let mut reader = &message[..];
        let parts = read_message(&mut reader).await.unwrap();
        assert_eq!(
            parts,
            vec![b"{\"a\":1}".to_vec(), b"\x80\x04".to_vec(), vec![]]
        );
        assert!(reader.is_empty());
        // Cut short: an error, not a panic.
        let mut short = &message[..message.len() - 3];
        assert!(read_message(&mut short).await.is_err());
    }

    /// A request's header is one JSON object: its members, its tasks, its limit.
    #[test]
    fn a_header_is_the_members_the_tasks_and_the_limit() {
        let mut base = Map::new();
        base.insert("op".into(), "dump".into());
        base.insert(
            "values".into(),
            serde_json::json!([["0", "value = u'\\xe9\"'"]]),
        );
        let tasks = vec![
            serde_json::json!(["0", 2, "c"]),
            serde_json::json!(["0", 3, "py"]),
        ];
        let written = header(&members(&base), &tasks, 2.5);
        let read: Json = serde_json::from_slice(&written).unwrap();
        let mut expected = base.clone();
        expected.insert("tasks".into(), Json::Array(tasks));
        expected.insert("limit".into(), 2.5.into());
        assert_eq!(read, Json::Object(expected));
        let empty: Json = serde_json::from_slice(&header::<Json>(b"", &[], 1.0)).unwrap();
        assert_eq!(empty, serde_json::json!({"tasks": [], "limit": 1.0}));
    }

    /// An answers' table of `codes` (worker.py's `_send`).
    fn table(codes: &[u32]) -> Vec<u8> {
        codes.iter().flat_map(|c| c.to_be_bytes()).collect()
    }

    #[test]
    fn an_answer_decodes_with_its_pickles() {
        let header = br#"{"built":{"0":["[1]","ab"],"1":{"err":["TypeError","no"]}},"other":[{"built":0},{"hang":1},{"err":["E","m","pickle.save"]},{"err":["F","n"]},{"h":"a\u0062","canon":"[2]"},{"hang":1}],"parity":[["0",2,2,3]]}"#;
        let codes = table(&[1, OTHER, OTHER, OTHER, OTHER, 0, OTHER, OTHER]);
        let parts = vec![
            header.to_vec(),
            b"P".to_vec(),
            b"C".to_vec(),
            b"Y".to_vec(),
            codes,
        ];
        let a = decode(parts.clone(), 8).unwrap();
        assert_eq!(a.built["0"], Ok(("[1]".into(), "ab".into())));
        assert_eq!(a.built["1"], Err(("TypeError".into(), "no".into())));
        assert_eq!(
            a.tasks,
            vec![
                Done::Dumped(b"P".to_vec()),
                Done::NotBuilt,
                Done::Hang,
                Done::Error("E".into(), "m".into(), "pickle.save".into()),
                Done::Error("F".into(), "n".into(), String::new()),
                Done::Expected,
                Done::Loaded {
                    hash: "ab".into(),
                    canon: Some("[2]".into())
                },
                Done::Hang,
            ]
        );
        assert_eq!(
            a.parity,
            vec![("0".into(), 2, b"C".to_vec(), b"Y".to_vec())]
        );
        assert!(decode(parts, 7).is_err(), "a count that does not match");
        let bad = |header: &str, codes: &[u32]| vec![header.as_bytes().to_vec(), table(codes)];
        assert!(
            decode(bad("{}", &[9]), 1).is_err(),
            "a part that is not there"
        );
        assert!(
            decode(bad(r#"{"other":[{"err":["E"]}]}"#, &[OTHER]), 1).is_err(),
            "an exception without its message"
        );
        assert!(
            decode(bad(r#"{"built":{"0":{"no":1}}}"#, &[]), 0).is_err(),
            "a value neither built nor not"
        );
        assert!(
            decode(bad(r#"{"other":[]}"#, &[OTHER]), 1).is_err(),
            "a table naming an answer that is not there"
        );
        assert!(
            decode(bad(r#"{"other":[{"hang":1}]}"#, &[0]), 1).is_err(),
            "an answer the table does not name"
        );
        assert!(
            decode(bad(r#"{"other":[12]}"#, &[OTHER]), 1).is_err(),
            "a number where an answer's object goes"
        );
        assert!(
            decode(vec![b"{}".to_vec()], 0).is_err(),
            "an answer without its table"
        );
        // The default protocol's dump names its number's part: both have the pickle, and a
        // parity pair of the two the same forms.
        let header = br#"{"built":{},"parity":[["0",4,2,3],["0",100,2,3]]}"#;
        let parts = vec![
            header.to_vec(),
            b"P".to_vec(),
            b"C".to_vec(),
            b"Y".to_vec(),
            table(&[1, 1]),
        ];
        let a = decode(parts, 2).unwrap();
        assert_eq!(a.tasks, vec![Done::Dumped(b"P".to_vec()); 2]);
        assert!(a
            .parity
            .iter()
            .all(|(_, _, c, py)| (&c[..], &py[..]) == (b"C", b"Y")));
    }
}
