//! The one way crosspickle starts a child process, whatever it runs (a case, the probe, an
//! installer, git, make): in its own process group (or a session it makes), killed as a whole when
//! it ends, outlives its time limit or is cancelled (so nothing it started survives it);
//! standard input empty or given bytes; stdout and stderr captured to a bounded head and tail,
//! or appended to a log file. [`output`] and [`logged`] run a tool and turn a failure into a
//! [`ToolError`]. [`supervise`] watches any process that leads its own group to its end, also
//! one crosspickle did not start itself (a fork server's child, whose end a pidfd tells:
//! [`exited`]); [`spawn_service`] starts a long-lived child that crosspickle talks to through
//! its standard streams.
//!
//! Should crosspickle be killed (SIGKILL, which nothing can catch), nothing it started outlives
//! it: each child it starts gets a parent-death signal (`dies_with_parent` of the OS layer, Linux),
//! but one that waits for its input before it does anything (`waits_for_input`: a case's
//! exec'd run), which its input's end stops should crosspickle die first; and every group
//! being watched is on the list of a reaper, a small shell started with the first, that kills
//! the groups still on it when its input ends, which is when crosspickle is gone (a `pip` that
//! pip started, in its group, included). A service ends, with what it started, when its input
//! ends.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use super::os;

/// How much of each stream is kept by default: this many bytes of its head and as many of its
/// tail.
pub const DEFAULT_CAPTURE: usize = 32 * 1024;

/// What the child reads on its standard input.
#[derive(Debug, Clone, Default)]
pub enum Stdin {
    /// Nothing: `/dev/null`.
    #[default]
    Null,
    /// These bytes, then end of file.
    Bytes(Vec<u8>),
}

/// Where the child's stdout and stderr go.
#[derive(Debug, Clone)]
pub enum Output {
    /// Captured, each stream to its first and last this many bytes.
    Capture(usize),
    /// Both streams appended to this file (a build log); nothing is captured.
    Log(PathBuf),
}

/// What to run.
#[derive(Debug, Clone)]
pub struct ProcessSpec {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// The whole environment of the child (nothing is inherited besides).
    pub env: Vec<(OsString, OsString)>,
    pub cwd: Option<PathBuf>,
    /// `None`: no time limit (a build that takes as long as it takes; cancellation still
    /// stops it).
    pub time_limit: Option<Duration>,
    pub stdin: Stdin,
    pub output: Output,
    /// The child makes a session of its own as it starts (`setsid`: a new process group, no
    /// controlling terminal): crosspickle does not put it in a group of its own, or it could
    /// not. Until it does, it is in crosspickle's group (a time limit then kills it alone).
    pub makes_own_session: bool,
    /// The child does nothing of its own before it has read its input to its end (the driver,
    /// whose request is its input): it is started without the parent-death signal, which makes
    /// the standard library fork crosspickle to start it rather than use posix_spawn (a fork
    /// of a process of crosspickle's size, and the copy-on-write faults that follow it in
    /// crosspickle, cost more than the rest of what crosspickle does for an exec'd run). The
    /// reaper stands in for it: it is told of the child before the input is written, so that
    /// should crosspickle be killed before, the child reads end of file and ends by itself, and
    /// after, the reaper kills its group.
    pub waits_for_input: bool,
}

impl ProcessSpec {
    /// `program` with the caller's environment, no arguments, empty stdin, default capture and
    /// the time limit given: every caller says how long its process may take.
    pub fn new(program: impl Into<PathBuf>, time_limit: Option<Duration>) -> Self {
        Self::with_env(program, time_limit, std::env::vars_os().collect())
    }

    /// [`ProcessSpec::new`] with `env` as the whole environment, instead of the caller's
    /// (read, then thrown away, for every run of a case).
    pub fn with_env(
        program: impl Into<PathBuf>,
        time_limit: Option<Duration>,
        env: Vec<(OsString, OsString)>,
    ) -> Self {
        ProcessSpec {
            program: program.into(),
            args: Vec::new(),
            env,
            cwd: None,
            time_limit,
            stdin: Stdin::Null,
            output: Output::Capture(DEFAULT_CAPTURE),
            makes_own_session: false,
            waits_for_input: false,
        }
    }

    /// The child makes a session of its own as it starts (see [`ProcessSpec`]).
    pub fn makes_own_session(mut self) -> Self {
        self.makes_own_session = true;
        self
    }

    /// The child does nothing before it has read all of its input (see [`ProcessSpec`]).
    pub fn waits_for_input(mut self) -> Self {
        self.waits_for_input = true;
        self
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Replace the whole environment.
    pub fn env(mut self, env: Vec<(OsString, OsString)>) -> Self {
        self.env = env;
        self
    }

    /// Set one variable (replacing it if present).
    pub fn set_env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        let key = key.into();
        self.env.retain(|(k, _)| *k != key);
        self.env.push((key, value.into()));
        self
    }

    pub fn remove_env(mut self, key: &str) -> Self {
        self.env.retain(|(k, _)| k != key);
        self
    }

    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    pub fn stdin(mut self, stdin: Stdin) -> Self {
        self.stdin = stdin;
        self
    }

    pub fn output(mut self, output: Output) -> Self {
        self.output = output;
        self
    }
}

/// How the process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    TimedOut,
    Cancelled,
}

impl Exit {
    /// As the standard library prints an exit status: `exit status: 2`, `signal: 9 (SIGKILL)`.
    pub fn describe(&self) -> String {
        match self {
            Exit::Code(c) => format!("exit status: {c}"),
            Exit::Signal(s) => format!("signal: {s} ({})", super::signal::name(*s)),
            Exit::TimedOut => "time limit reached".to_string(),
            Exit::Cancelled => "cancelled".to_string(),
        }
    }
}

#[derive(Debug)]
pub struct Finished {
    pub exit: Exit,
    pub stdout: Captured,
    pub stderr: Captured,
    pub duration: Duration,
}

/// A stream kept to its first and last `limit` bytes, with the count of all it carried.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
    limit: usize,
    /// Still open when reading it stopped (see [`drained`]).
    left_open: bool,
}

impl Captured {
    pub fn new(limit: usize) -> Self {
        Captured {
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
            limit,
            left_open: false,
        }
    }

    pub fn push(&mut self, mut chunk: &[u8]) {
        self.total += chunk.len() as u64;
        if self.head.len() < self.limit {
            let take = (self.limit - self.head.len()).min(chunk.len());
            self.head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        if chunk.len() >= self.limit {
            self.tail.clear();
            self.tail.extend(&chunk[chunk.len() - self.limit..]);
        } else {
            self.tail.extend(chunk);
            let excess = self.tail.len().saturating_sub(self.limit);
            self.tail.drain(..excess);
        }
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// Everything the stream carried was kept.
    pub fn is_complete(&self) -> bool {
        (self.head.len() + self.tail.len()) as u64 >= self.total
    }

    /// The end of the stream, at most `max` bytes of it from a line's start (when a line starts
    /// in them), trimmed, after a line saying how many bytes before it were left out: what a
    /// failing tool said last, bounded however much it said.
    pub fn tail_text(&self, max: usize) -> String {
        let (a, b) = self.tail.as_slices();
        let contiguous = (self.head.len() + self.tail.len()) as u64 == self.total;
        let mut end: Vec<u8> = Vec::with_capacity(max.min(self.total as usize));
        if contiguous && self.tail.len() < max {
            let from_head = (max - self.tail.len()).min(self.head.len());
            end.extend_from_slice(&self.head[self.head.len() - from_head..]);
        }
        end.extend_from_slice(a);
        end.extend_from_slice(b);
        let mut start = end.len().saturating_sub(max);
        if start > 0 || (end.len() as u64) < self.total {
            // Cut: begin at a line's start when there is one in what is kept.
            if let Some(nl) = end[start..].iter().position(|&c| c == b'\n') {
                if start + nl + 1 < end.len() {
                    start += nl + 1;
                }
            }
        }
        let shown = String::from_utf8_lossy(&end[start..]).trim().to_string();
        let left_out = self.total - (end.len() - start) as u64;
        if left_out == 0 {
            return shown;
        }
        format!("[… {left_out} bytes before these left out …]\n{shown}")
    }

    /// Head and tail as text, with a marker saying how much was left out between them.
    pub fn text(&self) -> String {
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        let kept = (self.head.len() + self.tail.len()) as u64;
        if self.total > kept {
            out.push_str(&format!(
                "\n[... {} bytes omitted ...]\n",
                self.total - kept
            ));
        }
        let (a, b) = self.tail.as_slices();
        let mut tail = a.to_vec();
        tail.extend_from_slice(b);
        out.push_str(&String::from_utf8_lossy(&tail));
        if self.left_open {
            out.push_str(&format!(
                "\n[... read until {}s after the process ended: a process that left its group \
                 (a session of its own) still holds this stream ...]\n",
                DRAIN.as_secs()
            ));
        }
        out
    }
}

/// The most bytes of a stream read at once.
const READ_CHUNK: usize = 64 * 1024;

async fn capture(
    mut reader: impl AsyncRead + Unpin,
    limit: usize,
    stop: CancellationToken,
) -> Captured {
    let mut captured = Captured::new(limit);
    // Read into the buffer's spare capacity, which is never zeroed: a zeroed 64 KiB buffer
    // for each stream was a quarter of crosspickle's own instructions for a trivial exec'd
    // run (callgrind), for streams that most runs leave empty.
    let mut buf = Vec::with_capacity(READ_CHUNK);
    loop {
        tokio::select! {
            biased;
            _ = stop.cancelled() => {
                captured.left_open = true;
                break;
            }
            read = reader.read_buf(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    captured.push(&buf);
                    buf.clear();
                }
            },
        }
    }
    captured
}

/// The command of `spec`, its streams set up: piped when captured, the log file otherwise.
/// One that is not `a_service` dies with crosspickle ([`dies_with_parent`]).
fn command(spec: &ProcessSpec, a_service: bool) -> std::io::Result<tokio::process::Command> {
    let mut cmd = tokio::process::Command::new(&spec.program);
    cmd.args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(match spec.stdin {
            Stdin::Null => Stdio::null(),
            Stdin::Bytes(_) => Stdio::piped(),
        })
        .kill_on_drop(true);
    if !spec.makes_own_session {
        os::own_group(&mut cmd);
    }
    if !a_service && !spec.waits_for_input {
        os::dies_with_parent(&mut cmd);
    }
    match &spec.output {
        Output::Capture(_) => {
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        }
        Output::Log(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?;
            cmd.stdout(file.try_clone()?).stderr(file);
        }
    }
    if let Some(cwd) = &spec.cwd {
        cmd.current_dir(cwd);
    }
    Ok(cmd)
}

/// Run `spec` to its end, its time limit, or `cancel`. Whatever it started is killed with it.
pub async fn run(spec: &ProcessSpec, cancel: &CancellationToken) -> std::io::Result<Finished> {
    let start = Instant::now();
    let mut child = command(spec, false)?.spawn()?;
    let pid = child.id().unwrap_or(0);
    os::adopt(&child)?;
    // Known to the reaper before its input is written (see `waits_for_input`), until its group
    // has been killed (dropped at the end of `supervise`).
    let reaped = Reaped::new(pid);
    if let (Stdin::Bytes(bytes), Some(mut stdin)) = (&spec.stdin, child.stdin.take()) {
        let bytes = bytes.clone();
        // A child that does not read its input closes the pipe: that is not an error here.
        tokio::spawn(async move {
            let _ = stdin.write_all(&bytes).await;
        });
    }
    let limit = match spec.output {
        Output::Capture(limit) => limit,
        Output::Log(_) => 0,
    };
    let watched = Watched {
        pid,
        stdout: child.stdout.take().map(|s| Box::new(s) as OutputStream),
        stderr: child.stderr.take().map(|s| Box::new(s) as OutputStream),
        hold: Box::new(()),
        ended: async move { child.wait().await.map(exit_of) },
    };
    supervise_reaped(watched, reaped, start, limit, spec.time_limit, cancel).await
}

/// A stream of a watched process's output.
pub type OutputStream = Box<dyn AsyncRead + Send + Unpin>;

/// A process to watch to its end: its pid (which is also its process group's: it leads its
/// group), how its end is learnt, and its output.
pub struct Watched<E> {
    pub pid: u32,
    /// Resolves, once the process has ended, to how it ended ([`Exit::Code`] or
    /// [`Exit::Signal`]); an error when that can no longer be known.
    pub ended: E,
    pub stdout: Option<OutputStream>,
    pub stderr: Option<OutputStream>,
    /// Kept until the process has ended, then dropped: the write ends crosspickle holds itself
    /// on a FIFO, so that its reader sees end of file only once the process is gone.
    pub hold: Box<dyn Send>,
}

/// What `program args` prints, when it can be started, ends within 10 seconds and succeeds
/// (else none: it is killed at the limit). For a quick question asked while there is no
/// runtime to wait in, such as the py launcher's list of interpreters on Windows.
pub fn output_blocking(program: &str, args: &[&str]) -> Option<String> {
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut text).map(|_| text)
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().ok()? {
            break status;
        }
        if start.elapsed() > std::time::Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let text = reader.join().ok()?.ok()?;
    status
        .success()
        .then(|| String::from_utf8_lossy(&text).into_owned())
}

/// The [`Exit`] of a child's exit status: its code, or on Unix the signal that killed it.
pub fn exit_of(status: std::process::ExitStatus) -> Exit {
    os::exit_of(status)
}

/// The [`Exit`] of a raw wait(2) status, as a process's parent read it.
pub fn exit_of_raw(raw: i32) -> Exit {
    os::exit_of_raw(raw)
}

/// Kill the process group `pid` leads (on Windows, the Job Object its tree is in), or, when
/// there is no such group, the process alone (one that has not made its group or session yet).
/// Only for a process not yet waited for: the pid of one that was could be another process's
/// by now.
pub fn kill_group(pid: u32) {
    os::kill_group(pid)
}

/// Kill what is left of the process group `pid` led, once that process has ended.
fn kill_leftovers(pid: u32) {
    os::kill_leftovers(pid)
}

/// Watch `watched` to its end, its time limit, or `cancel`, capturing its output (each stream
/// to `limit` bytes of head and of tail). When it ends, outlives its limit or is cancelled, its
/// whole process group is killed, so that nothing it started survives it. `start` is when it
/// was asked to start: its duration counts from there. An error of `ended` is returned after
/// the group is killed.
pub async fn supervise<E>(
    watched: Watched<E>,
    start: Instant,
    limit: usize,
    time_limit: Option<Duration>,
    cancel: &CancellationToken,
) -> std::io::Result<Finished>
where
    E: Future<Output = std::io::Result<Exit>>,
{
    // Known to the reaper until its group has been killed (dropped at the end).
    let reaped = Reaped::new(watched.pid);
    supervise_reaped(watched, reaped, start, limit, time_limit, cancel).await
}

/// [`supervise`] of a process the reaper already knows of (`reaped`, dropped at the end).
async fn supervise_reaped<E>(
    watched: Watched<E>,
    _reaped: Reaped,
    start: Instant,
    limit: usize,
    time_limit: Option<Duration>,
    cancel: &CancellationToken,
) -> std::io::Result<Finished>
where
    E: Future<Output = std::io::Result<Exit>>,
{
    let Watched {
        pid,
        ended,
        stdout,
        stderr,
        hold,
    } = watched;
    let stop = CancellationToken::new();
    let stdout = stdout.map(|s| tokio::spawn(capture(s, limit, stop.clone())));
    let stderr = stderr.map(|s| tokio::spawn(capture(s, limit, stop.clone())));
    let mut ended = std::pin::pin!(ended);
    let time_limit = async {
        match time_limit {
            Some(limit) => tokio::time::sleep_until((start + limit).into()).await,
            None => std::future::pending().await,
        }
    };
    let waited = tokio::select! {
        status = &mut ended => Some(status),
        _ = time_limit => None,
        _ = cancel.cancelled() => None,
    };
    let stopped = waited.is_none();
    // Kill the whole group in every case: what the process left running must not outlive it.
    let status = match waited {
        Some(s) => {
            kill_leftovers(pid);
            s
        }
        None => {
            kill_group(pid);
            let s = ended.await;
            kill_leftovers(pid);
            s
        }
    };
    let duration = start.elapsed();
    drop(hold);
    let status = match status {
        Ok(status) => status,
        Err(e) => {
            for task in [&stdout, &stderr].into_iter().flatten() {
                task.abort();
            }
            return Err(e);
        }
    };
    let exit = if stopped {
        if cancel.is_cancelled() {
            Exit::Cancelled
        } else {
            Exit::TimedOut
        }
    } else {
        status
    };
    let (stdout, stderr) = drained(stdout, stderr, &stop).await;
    Ok(Finished {
        exit,
        stdout,
        stderr,
        duration,
    })
}

/// A long-lived child that crosspickle talks to: `spec`'s program, environment and folder, in
/// its own process group, with all three standard streams piped (take them from the child).
/// Its time limit and output settings do not apply: the caller decides when it ends. It gets
/// no parent-death signal: it ends, with what it started, when its input ends (also when
/// crosspickle is killed).
pub fn spawn_service(spec: &ProcessSpec) -> std::io::Result<tokio::process::Child> {
    let mut cmd = command(spec, true)?;
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn()?;
    os::adopt(&child)?;
    Ok(child)
}

/// Resolves once process `pid` has ended (it may be a zombie still, or reaped), also when it
/// is not crosspickle's child: Linux tells it through a pidfd. An error when the process cannot
/// be watched (it is already gone and reaped, or the system cannot tell).
pub async fn exited(pid: u32) -> std::io::Result<()> {
    os::exited(pid).await
}

/// Whether [`exited`] works here (Linux 5.3 and later, not forbidden by a sandbox; macOS).
pub fn can_watch_any_process() -> bool {
    os::can_watch_any_process()
}

/// Whether processes that are not crosspickle's children should be watched by default (fork
/// isolation): on Linux, where they can be.
pub fn watch_any_process_by_default() -> bool {
    os::FORK_BY_DEFAULT && can_watch_any_process()
}

/// Why processes that are not crosspickle's children cannot be watched here, for a user who
/// asked for fork isolation.
pub const CANNOT_WATCH: &str = os::NO_FORK;

/// What the capture tasks of stdout and stderr kept. A process that left the group (its own
/// session) may still hold the pipes: they are read for [`DRAIN`] at most, then what came
/// until then is kept.
async fn drained(
    stdout: Option<tokio::task::JoinHandle<Captured>>,
    stderr: Option<tokio::task::JoinHandle<Captured>>,
    stop: &CancellationToken,
) -> (Captured, Captured) {
    let kept = |task: Option<tokio::task::JoinHandle<Captured>>| async move {
        match task {
            Some(task) => task.await.unwrap_or_default(),
            None => Captured::default(),
        }
    };
    let both = async { tokio::join!(kept(stdout), kept(stderr)) };
    let mut both = std::pin::pin!(both);
    tokio::select! {
        captured = &mut both => return captured,
        _ = tokio::time::sleep(DRAIN) => stop.cancel(),
    }
    both.await
}

/// The reaper (started with the first group it is told of: [`os::spawn_reaper`]), if it could
/// start: its input, held open until crosspickle ends, and its list of groups with how many of
/// them are live.
struct Reaper {
    _input: std::process::ChildStdin,
    list: std::fs::File,
    live: usize,
}

fn reaper() -> Option<&'static std::sync::Mutex<Reaper>> {
    static REAPER: std::sync::OnceLock<Option<std::sync::Mutex<Reaper>>> =
        std::sync::OnceLock::new();
    REAPER
        .get_or_init(|| {
            os::spawn_reaper().map(|(input, list)| {
                std::sync::Mutex::new(Reaper {
                    _input: input,
                    list,
                    live: 0,
                })
            })
        })
        .as_ref()
}

/// Put group `pid` on the reaper's list, or take it off (its group has been killed). The list
/// is emptied whenever no group is on it, so that it stays a few lines long. A reaper that is
/// gone or a list that cannot be written is no error.
fn tell_reaper(pid: u32, live: bool) {
    use std::io::Write;
    let Some(reaper) = reaper() else { return };
    let Ok(mut reaper) = reaper.lock() else {
        return;
    };
    if live {
        reaper.live += 1;
        let _ = reaper.list.write_all(format!("+{pid}\n").as_bytes());
    } else {
        reaper.live = reaper.live.saturating_sub(1);
        let _ = match reaper.live {
            0 => reaper.list.set_len(0),
            _ => reaper.list.write_all(format!("-{pid}\n").as_bytes()),
        };
    }
}

/// A group the reaper knows of while this is alive.
struct Reaped(u32);

impl Reaped {
    fn new(pid: u32) -> Reaped {
        if pid > 0 {
            tell_reaper(pid, true);
        }
        Reaped(pid)
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        if self.0 > 0 {
            tell_reaper(self.0, false);
        }
    }
}

/// How long the output of a process that has ended is read for, at most.
const DRAIN: Duration = Duration::from_secs(2);

/// A tool crosspickle runs for itself (git, make, pip, a build script) did not do its job.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("cannot start `{what}`: {source}")]
    Start {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// It ended unsuccessfully; `said` is the last of what it said.
    #[error("`{what}` failed ({status}): {said}")]
    Failed {
        what: String,
        status: String,
        said: String,
    },
    #[error("`{what}` said more than crosspickle keeps ({bytes} bytes)")]
    TooLong { what: String, bytes: u64 },
    #[error("`{what}` was cancelled")]
    Cancelled { what: String },
}

impl ToolError {
    pub fn is_cancelled(&self) -> bool {
        matches!(self, ToolError::Cancelled { .. })
    }
}

/// Bytes kept of a tool's output read by [`output`]: far more than any git or pip listing.
pub const TOOL_OUTPUT: usize = 64 * 1024 * 1024;

/// Bytes of a failing tool's stderr quoted in its error: the end, where it says why.
pub const TOOL_SAID: usize = 4 * 1024;

/// What a failed tool said, for its error: the bounded tail of its stderr ([`TOOL_SAID`]), or
/// of its stdout when its stderr is empty.
pub fn said(finished: &Finished) -> String {
    let err = finished.stderr.tail_text(TOOL_SAID);
    if err.is_empty() {
        finished.stdout.tail_text(TOOL_SAID)
    } else {
        err
    }
}

/// Run a tool (its output captured with [`TOOL_OUTPUT`]) and return its whole stdout; a
/// failure quotes its stderr. `what` names it in errors (`git log`).
pub async fn output(
    spec: &ProcessSpec,
    what: &str,
    cancel: &CancellationToken,
) -> Result<String, ToolError> {
    let spec = spec.clone().output(Output::Capture(TOOL_OUTPUT));
    let finished = start(&spec, what, cancel).await?;
    if finished.exit != Exit::Code(0) {
        return Err(ToolError::Failed {
            what: what.to_string(),
            status: finished.exit.describe(),
            said: said(&finished),
        });
    }
    if !finished.stdout.is_complete() {
        return Err(ToolError::TooLong {
            what: what.to_string(),
            bytes: finished.stdout.total(),
        });
    }
    Ok(finished.stdout.text())
}

/// Run a tool with its output appended to `log` after a `$ what` line and before a line saying
/// how long it took; a failure names the tool and quotes the last line of its output.
pub async fn logged(
    spec: &ProcessSpec,
    what: &str,
    log: &Path,
    cancel: &CancellationToken,
) -> Result<(), ToolError> {
    use std::io::Write;
    let header = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .and_then(|mut f| writeln!(f, "$ {what}"));
    if let Err(source) = header {
        return Err(ToolError::Start {
            what: what.to_string(),
            source,
        });
    }
    let spec = spec.clone().output(Output::Log(log.to_path_buf()));
    let finished = start(&spec, what, cancel).await?;
    // How long it took, after its output (a log is for reading what a build spent its time on).
    let _ = std::fs::OpenOptions::new()
        .append(true)
        .open(log)
        .and_then(|mut f| {
            let took = finished.duration.as_secs_f64();
            writeln!(f, "$ ({what}: {took:.1} s, {})", finished.exit.describe())
        });
    if finished.exit == Exit::Code(0) {
        return Ok(());
    }
    Err(ToolError::Failed {
        what: what.to_string(),
        status: finished.exit.describe(),
        said: format!("{} (log: {})", log_tail(log, what), log.display()),
    })
}

/// The last lines `what` wrote to `log` (after its `$ what` line, crosspickle's own `$` lines
/// left out), at most [`TOOL_SAID`] bytes from a line's start, read from the log's end however
/// long it is; a line first says when earlier ones were left out.
fn log_tail(log: &Path, what: &str) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let mut end = Vec::new();
    let read = std::fs::File::open(log).and_then(|mut f| {
        let len = f.metadata()?.len();
        let want = (2 * TOOL_SAID as u64).min(len);
        f.seek(SeekFrom::Start(len - want))?;
        f.take(want).read_to_end(&mut end)?;
        Ok(want < len)
    });
    let Ok(mut cut) = read else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&end);
    let header = format!("$ {what}\n");
    let body = match text.rfind(&header) {
        Some(at) => &text[at + header.len()..],
        None => &text,
    };
    let lines: Vec<&str> = body
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty() && !l.starts_with("$ "))
        .collect();
    let mut kept = Vec::new();
    let mut size = 0;
    for (i, line) in lines.iter().enumerate().rev() {
        // A first line of a cut read may be a part of one: left out.
        if size + line.len() + 1 > TOOL_SAID || (i == 0 && cut && text.rfind(&header).is_none()) {
            cut = true;
            break;
        }
        size += line.len() + 1;
        kept.push(*line);
    }
    if kept.len() < lines.len() {
        cut = true;
    }
    kept.reverse();
    let shown = kept.join("\n");
    match (cut, shown.is_empty()) {
        (true, true) => "[… its output is in the log …]".to_string(),
        (true, false) => format!("[… earlier lines left out …]\n{shown}"),
        (false, _) => shown,
    }
}

/// [`run`], with a process that cannot start or is cancelled as a [`ToolError`].
async fn start(
    spec: &ProcessSpec,
    what: &str,
    cancel: &CancellationToken,
) -> Result<Finished, ToolError> {
    let finished = run(spec, cancel).await.map_err(|source| ToolError::Start {
        what: what.to_string(),
        source,
    })?;
    if finished.exit == Exit::Cancelled {
        return Err(ToolError::Cancelled {
            what: what.to_string(),
        });
    }
    Ok(finished)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocking_output_of_a_quick_question() {
        let (program, args): (&str, &[&str]) = if cfg!(windows) {
            ("cmd", &["/c", "echo", "hello"])
        } else {
            ("sh", &["-c", "echo hello"])
        };
        assert_eq!(
            output_blocking(program, args).map(|s| s.trim().to_string()),
            Some("hello".to_string())
        );
        assert_eq!(output_blocking("no-such-program-crosspickle", &[]), None);
        if cfg!(unix) {
            assert_eq!(output_blocking("sh", &["-c", "exit 3"]), None);
        }
    }

    #[test]
    fn capture_keeps_head_and_tail() {
        let mut c = Captured::new(4);
        c.push(b"abcdef");
        c.push(b"ghij");
        assert_eq!(c.total(), 10);
        assert!(!c.is_complete());
        assert_eq!(c.text(), "abcd\n[... 2 bytes omitted ...]\nghij");
        let mut small = Captured::new(8);
        small.push(b"hi");
        assert_eq!(small.text(), "hi");
        assert!(small.is_complete());
        let mut big = Captured::new(3);
        big.push(&[b'x'; 1000]);
        big.push(b"end");
        assert_eq!(big.text(), "xxx\n[... 997 bytes omitted ...]\nend");
    }

    #[test]
    fn capture_head_then_small_tail() {
        let mut c = Captured::new(4);
        c.push(b"abcd");
        c.push(b"ef");
        assert_eq!(c.text(), "abcdef");
    }

    #[cfg(unix)]
    fn sh(script: &str, limit: Option<Duration>) -> ProcessSpec {
        ProcessSpec::new("/bin/sh", limit).args(["-c", script])
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn exit_codes_output_and_given_stdin() {
        let never = CancellationToken::new();
        let spec = sh("cat; echo oops >&2; exit 3", Some(Duration::from_secs(30)))
            .stdin(Stdin::Bytes(b"hello".to_vec()));
        let f = run(&spec, &never).await.unwrap();
        assert_eq!(f.exit, Exit::Code(3));
        assert_eq!(f.stdout.text(), "hello");
        assert_eq!(f.stderr.text(), "oops\n");
        let f = run(&sh("cat", None), &never).await.unwrap();
        assert_eq!((f.exit, f.stdout.text()), (Exit::Code(0), String::new()));
        let f = run(&sh("kill -SEGV $$", None), &never).await.unwrap();
        assert_eq!(f.exit, Exit::Signal(11));
        assert_eq!(f.exit.describe(), "signal: 11 (SIGSEGV)");
    }

    #[cfg(unix)]
    /// The pid a grandchild wrote to `file` is no longer alive.
    fn gone(file: &Path) -> bool {
        let pid: u32 = std::fs::read_to_string(file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Reaped by init or a zombie of a dead group.
        os::is_gone(pid)
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_end_of_a_process_that_is_not_a_child_is_seen() {
        use std::io::BufRead;
        assert!(can_watch_any_process());
        // A grandchild: `sh` starts `sleep` and waits for it.
        let mut sh = std::process::Command::new("sh")
            .args(["-c", "sleep 0.5 & echo $!; wait"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(sh.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let pid: u32 = line.trim().parse().unwrap();
        let started = Instant::now();
        exited(pid).await.unwrap();
        let took = started.elapsed();
        assert!(took > Duration::from_millis(200), "{took:?}");
        assert!(took < Duration::from_secs(5), "{took:?}");
        sh.wait().unwrap();
        // A process that does not lead a group is killed alone.
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        kill_group(child.id());
        assert_eq!(exit_of(child.wait().unwrap()), Exit::Signal(9));
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_time_limit_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let pid = dir.path().join("pid");
        let script = format!("sleep 60 & echo $! > {}; wait", pid.display());
        let started = Instant::now();
        let f = run(
            &sh(&script, Some(Duration::from_millis(300))),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
        assert_eq!(f.exit, Exit::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(200));
        assert!(gone(&pid), "the grandchild outlived the time limit");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn cancelling_stops_a_process_without_a_time_limit() {
        let dir = tempfile::tempdir().unwrap();
        let pid = dir.path().join("pid");
        let script = format!("sleep 60 & echo $! > {}; wait", pid.display());
        let cancel = CancellationToken::new();
        let stop = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            stop.cancel();
        });
        let f = run(&sh(&script, None), &cancel).await.unwrap();
        assert_eq!(f.exit, Exit::Cancelled);
        std::thread::sleep(Duration::from_millis(200));
        assert!(gone(&pid), "the grandchild outlived the cancellation");
        let e = output(&sh("true", None), "true", &cancel)
            .await
            .unwrap_err();
        assert!(e.is_cancelled(), "{e}");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn tools_log_and_fail_with_what_they_said() {
        let never = CancellationToken::new();
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("build.log");
        logged(&sh("echo built", None), "step one", &log, &never)
            .await
            .unwrap();
        let e = logged(
            &sh("echo broken >&2; exit 2", None),
            "step two",
            &log,
            &never,
        )
        .await
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "`step two` failed (exit status: 2): broken (log: {})",
                log.display()
            )
        );
        // Each command, its output, then how long it took and how it ended.
        let text = std::fs::read_to_string(&log).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 6, "{text}");
        assert_eq!(&lines[..2], ["$ step one", "built"]);
        assert!(lines[2].starts_with("$ (step one: ") && lines[2].ends_with(" s, exit status: 0)"));
        assert_eq!(&lines[3..5], ["$ step two", "broken"]);
        // A step saying megabytes: its last lines, within bounds, and nothing of the step before.
        let e = logged(
            &sh(
                "echo earlier; i=0; while [ $i -lt 20000 ]; do echo \"line $i of the build\"; i=$((i+1)); done; echo 'make: *** [all] Error 2' >&2; exit 2",
                None,
            ),
            "step three",
            &log,
            &never,
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(e.len() < TOOL_SAID + 400, "{} bytes", e.len());
        assert!(
            e.starts_with("`step three` failed (exit status: 2): [… earlier lines left out …]\n"),
            "{e}"
        );
        assert!(
            e.contains("line 19999 of the build\nmake: *** [all] Error 2 (log: "),
            "{e}"
        );
        assert!(!e.contains("earlier\n") && !e.contains("broken"), "{e}");
        assert!(lines[5].starts_with("$ (step two: ") && lines[5].ends_with(" s, exit status: 2)"));
        let out = output(&sh("echo a; echo b", None), "x", &never).await;
        assert_eq!(out.unwrap(), "a\nb\n");
        let e = output(&sh("echo no >&2; exit 1", None), "y", &never)
            .await
            .unwrap_err();
        assert_eq!(e.to_string(), "`y` failed (exit status: 1): no");
        let missing = ProcessSpec::new("/no/such/tool", None);
        let e = output(&missing, "tool", &never).await.unwrap_err();
        assert!(e.to_string().starts_with("cannot start `tool`: "), "{e}");
    }

    #[test]
    fn a_tail_is_bounded_and_starts_at_a_line() {
        let mut short = Captured::new(64);
        short.push(b"one\ntwo\n");
        assert_eq!(short.tail_text(100), "one\ntwo");
        // Kept whole in head and tail, cut to the lines that fit.
        let mut whole = Captured::new(64);
        whole.push(b"first line\nsecond line\nthe last line\n");
        assert_eq!(
            whole.tail_text(20),
            "[… 23 bytes before these left out …]\nthe last line"
        );
        // Megabytes, of which only the ends were kept: the end, counted from the start.
        let mut loud = Captured::new(1024);
        for _ in 0..100_000 {
            loud.push(b"noise noise noise\n");
        }
        loud.push(b"error: why it failed\n");
        let tail = loud.tail_text(100);
        assert!(tail.len() < 160, "{tail}");
        assert!(
            tail.ends_with("\nnoise noise noise\nerror: why it failed"),
            "{tail}"
        );
        let shown = tail.split_once('\n').unwrap().1.len() + 1;
        assert!(
            tail.starts_with(&format!(
                "[… {} bytes before these left out …]\n",
                loud.total() - shown as u64
            )),
            "{tail}"
        );
    }
}
