//! Fork servers (`--isolation fork`): for each (interpreter, environment, case `env`), one
//! long-lived Python process started exactly as a run's interpreter is (same program, `-c`
//! boot program, environment and hash seed, standard streams as pipes) that has imported
//! nothing more than `python -c pass` does, and forks a fresh child for each run. The driver
//! is the server's side of the protocol, which its header states (`driver/0_protocol.py`);
//! this is crosspickle's side: starting, sharing, replacing and retiring servers, and watching
//! each forked run to its end.
//!
//! A forked child is not crosspickle's own: its end is learnt from a pidfd, then the server
//! (its parent) is asked to reap it and tell its status. Its stdout and stderr are FIFOs in the
//! run's private folder, which it opens itself.
//!
//! A server that dies, stops answering (10 s) or is killed by a case loses the runs in flight:
//! their children are killed with their groups, and each is run again alone on a new server
//! of its own ([`Servers::run`] says what became of it). Servers idle for [`IDLE`] exit; at
//! most [`max_alive`] are alive at once, counting those still exiting and those started for a
//! run alone: one more waits for the least recently used idle one to be retired and gone.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::ChildStdin;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::driver::{report_pid, Request, RunDirs};
use crate::sys::fifo::Fifo;
use crate::sys::process::{self, Captured, Exit, Finished, ProcessSpec, Watched};

/// How long a server may take to answer a request before it is taken for hung and killed.
pub const REPLY_DEADLINE: Duration = Duration::from_secs(10);
/// How long a server may stay idle before it is asked to exit.
pub const IDLE: Duration = Duration::from_secs(5);
/// Servers alive at once, at most: enough for every interpreter of a machine like this
/// project's (twelve) with room for case environments, and always more than the runs at once.
pub fn max_alive(jobs: usize) -> usize {
    16.max(jobs + 1)
}

/// What a server is started with: the program (an interpreter or a virtual environment's) and
/// the whole environment of its runs (the case's `env` included).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ServerKey {
    pub program: PathBuf,
    pub env: Vec<(OsString, OsString)>,
    /// The program's arguments: the boot program (compiled, or `-c` and its text) and the
    /// file of its fallback.
    pub args: Vec<OsString>,
    /// The case's `preload`: modules imported before any request is run.
    pub preload: Vec<String>,
}

impl ServerKey {
    /// Its program, arguments and environment as bytes, to name what depends on them.
    pub fn identity(&self) -> Vec<u8> {
        let mut bytes = self.program.as_os_str().as_encoded_bytes().to_vec();
        for part in self
            .args
            .iter()
            .chain(self.env.iter().flat_map(|(k, v)| [k, v]))
        {
            bytes.push(0);
            bytes.extend_from_slice(part.as_encoded_bytes());
        }
        for module in &self.preload {
            bytes.push(1);
            bytes.extend_from_slice(module.as_bytes());
        }
        bytes
    }

    /// What the process reads first, before its requests (`run`), or before its one request
    /// (`once`): the modules to import, if there are any. A server imports them with what they
    /// write kept from its protocol (`preload a,b`); a process that runs one request, where
    /// what they write is the run's (`import a,b`).
    pub fn opening(&self, once: bool) -> String {
        if self.preload.is_empty() {
            String::new()
        } else {
            let verb = if once { "import" } else { "preload" };
            format!("{verb} {}\n", self.preload.join(","))
        }
    }
}

/// Why a server cannot run a request any more.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct Lost(pub String);

/// How many servers are alive (started and not yet reaped, retiring ones included), and a
/// signal each time one is gone.
#[derive(Default)]
struct Alive {
    count: AtomicUsize,
    gone: tokio::sync::Notify,
}

#[derive(Default)]
struct Replies {
    started: HashMap<u64, oneshot::Sender<Result<u32, String>>>,
    exited: HashMap<u32, oneshot::Sender<i32>>,
}

/// One fork server.
pub struct Server {
    key: ServerKey,
    pid: u32,
    /// Its input, and what it must read before the first request (its key's opening).
    stdin: tokio::sync::Mutex<(Option<ChildStdin>, String)>,
    replies: Arc<Mutex<Replies>>,
    /// Cancelled once the server is gone (its stdout closed): nothing more will be answered.
    lost: CancellationToken,
    why: Arc<Mutex<Option<String>>>,
    next_id: AtomicU64,
    busy: AtomicUsize,
    /// Children it started: a server that died before starting any cannot serve at all.
    started_any: std::sync::atomic::AtomicBool,
    last_used: Mutex<Instant>,
}

impl Server {
    /// Start a server for `key` in folder `cwd`, counted in `alive` until it is reaped.
    fn start(key: ServerKey, cwd: PathBuf, alive: Arc<Alive>) -> std::io::Result<Arc<Server>> {
        let spec = ProcessSpec::new(&key.program, None)
            .args(key.args.iter().cloned())
            .env(key.env.clone())
            .cwd(cwd);
        let mut child = process::spawn_service(&spec)?;
        alive.count.fetch_add(1, Ordering::SeqCst);
        let pid = child.id().unwrap_or(0);
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let server = Arc::new(Server {
            stdin: tokio::sync::Mutex::new((stdin, key.opening(false))),
            key,
            pid,
            replies: Arc::new(Mutex::new(Replies::default())),
            lost: CancellationToken::new(),
            why: Arc::new(Mutex::new(None)),
            next_id: AtomicU64::new(0),
            busy: AtomicUsize::new(0),
            started_any: false.into(),
            last_used: Mutex::new(Instant::now()),
        });
        let said = tokio::spawn(what_it_says(stderr));
        let (replies, lost, why) = (
            server.replies.clone(),
            server.lost.clone(),
            server.why.clone(),
        );
        tokio::spawn(async move {
            if let Some(stdout) = stdout {
                let mut lines = BufReader::new(stdout).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    dispatch(&replies, &line);
                }
            }
            // Gone (or it closed its stdout, which only a dying server does): learn how.
            let status = match tokio::time::timeout(Duration::from_secs(2), child.wait()).await {
                Ok(status) => ended(status),
                Err(_) => {
                    process::kill_group(pid);
                    ended(child.wait().await)
                }
            };
            let said = tokio::time::timeout(Duration::from_secs(1), said)
                .await
                .ok()
                .and_then(Result::ok)
                .map(|c| c.text().trim().to_string())
                .unwrap_or_default();
            let mut text = format!("its fork server (pid {pid}) {status}");
            if !said.is_empty() {
                text.push_str(&format!(", saying: {said}"));
            }
            why.lock().unwrap().get_or_insert(text);
            *replies.lock().unwrap() = Replies::default();
            lost.cancel();
            alive.count.fetch_sub(1, Ordering::SeqCst);
            alive.gone.notify_waiters();
        });
        Ok(server)
    }

    fn lost_error(&self) -> Lost {
        Lost(
            self.why
                .lock()
                .unwrap()
                .clone()
                .unwrap_or_else(|| format!("its fork server (pid {}) is gone", self.pid)),
        )
    }

    /// Take the server for hung: kill it (its children are in sessions of their own).
    fn kill(&self, why: String) {
        self.why.lock().unwrap().get_or_insert(why);
        process::kill_group(self.pid);
    }

    async fn send(&self, line: String) -> Result<(), Lost> {
        let mut stdin = self.stdin.lock().await;
        let (Some(pipe), opening) = &mut *stdin else {
            return Err(Lost("its fork server was retired".into()));
        };
        let text = if opening.is_empty() {
            line
        } else {
            std::mem::take(opening) + &line
        };
        if pipe.write_all(text.as_bytes()).await.is_err() {
            return Err(self.lost_error());
        }
        Ok(())
    }

    /// Wait for a reply on `rx`, at most `deadline`.
    async fn reply<T>(
        &self,
        rx: oneshot::Receiver<T>,
        what: &str,
        deadline: Duration,
    ) -> Result<T, Lost> {
        tokio::select! {
            r = rx => r.map_err(|_| self.lost_error()),
            _ = self.lost.cancelled() => Err(self.lost_error()),
            _ = tokio::time::sleep(deadline) => {
                self.kill(format!(
                    "its fork server (pid {}) did not {what} within {:.1}s: it was killed",
                    self.pid,
                    deadline.as_secs_f64()
                ));
                Err(self.lost_error())
            }
        }
    }

    /// Fork a child running `request`; its pid. A server that does not answer within
    /// `deadline` is killed.
    async fn fork(&self, request: &Request, deadline: Duration) -> Result<u32, Lost> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.replies.lock().unwrap().started.insert(id, tx);
        if self.lost.is_cancelled() {
            return Err(self.lost_error());
        }
        self.send(format!("run {id} {}\n", request.to_wire()))
            .await?;
        match self.reply(rx, "start a run", deadline).await? {
            Ok(pid) => {
                self.started_any.store(true, Ordering::Relaxed);
                Ok(pid)
            }
            Err(why) => Err(Lost(format!("its fork server could not fork: {why}"))),
        }
    }

    /// How child `pid`, which has ended, ended: its parent, the server, reaps it.
    async fn reap(&self, pid: u32) -> Result<Exit, Lost> {
        let (tx, rx) = oneshot::channel();
        self.replies.lock().unwrap().exited.insert(pid, tx);
        if self.lost.is_cancelled() {
            return Err(self.lost_error());
        }
        self.send(format!("reap {pid}\n")).await?;
        let raw = self.reply(rx, "reap a run", REPLY_DEADLINE).await?;
        if raw < 0 {
            return Err(Lost(format!(
                "its fork server could not wait for its child {pid}"
            )));
        }
        Ok(process::exit_of_raw(raw))
    }

    /// Run `request` in a forked child, watched like any process: time limit, cancellation,
    /// its group killed at its end, output captured from FIFOs in the run's private folder.
    /// Each attempt has a result file of its own (returned with how it ended), so that a
    /// child of a lost attempt can never write into the next one's. `Err((started, lost))`:
    /// the server was lost, before the child started or after.
    async fn run(
        &self,
        dirs: &RunDirs,
        attempt: usize,
        request: &Request,
        capture: usize,
        time_limit: Duration,
        cancel: &CancellationToken,
    ) -> Result<(Finished, PathBuf), (bool, Lost)> {
        let start = Instant::now();
        let fifo = |name: &str| {
            let path = dirs.private_file(&format!("{name}-{attempt}"));
            Fifo::create(&path).map(|f| (path, f))
        };
        let io = |e: std::io::Error| (false, Lost(format!("cannot make its output FIFOs: {e}")));
        let (out_path, out) = fifo("stdout").map_err(io)?;
        let (err_path, err) = fifo("stderr").map_err(io)?;
        let result = dirs.private_file(&format!("result-{attempt}"));
        let request = request
            .clone()
            .path("result", &result)
            .and_then(|r| r.path("cwd", dirs.cwd()))
            .and_then(|r| r.path("stdout", &out_path))
            .and_then(|r| r.path("stderr", &err_path))
            .map_err(io)?;
        // A server that cannot start a run within its time limit is as good as hung (an
        // interpreter that hangs as it starts would time the run out with exec isolation).
        let deadline = REPLY_DEADLINE.min(time_limit);
        let pid = match self.fork(&request, deadline).await {
            Ok(pid) => pid,
            Err(lost) => {
                // It may have forked the child all the same: the child wrote its pid as soon
                // as its result file was open, and goes on only if its server is alive (a
                // server stopped, by that very child, is). Then the run started, and the
                // server could fork: it is not one that cannot serve, whose runs are left to
                // exec isolation, where a case that stops its parent would stop crosspickle.
                let Some(pid) = std::fs::read(&result).ok().and_then(|b| report_pid(&b)) else {
                    return Err((false, lost));
                };
                process::kill_group(pid);
                self.started_any.store(true, Ordering::Relaxed);
                return Err((true, lost));
            }
        };
        // Should this future be dropped before the child is known to have ended (it is not
        // crosspickle's own child: nothing else would kill it), its group is killed.
        let guard = KillOnDrop(Some(pid));
        let ended = async move {
            tokio::select! {
                r = process::exited(pid) => {
                    r.map_err(|e| std::io::Error::other(format!("cannot watch its process: {e}")))?
                }
                _ = self.lost.cancelled() => {
                    return Err(std::io::Error::other(self.lost_error()));
                }
            }
            self.reap(pid).await.map_err(std::io::Error::other)
        };
        let watched = Watched {
            pid,
            ended,
            stdout: Some(Box::new(out.reader)),
            stderr: Some(Box::new(err.reader)),
            hold: Box::new((out.keeper, err.keeper)),
        };
        let supervised =
            process::supervise(watched, start, capture, Some(time_limit), cancel).await;
        guard.disarm();
        supervised
            .map(|finished| (finished, result))
            .map_err(|e| (true, Lost(e.to_string())))
    }
}

/// What a server says on its stderr (a traceback when it dies), kept to its first and last
/// 2 KiB.
async fn what_it_says(stderr: Option<tokio::process::ChildStderr>) -> Captured {
    let mut kept = Captured::new(2048);
    if let Some(mut stderr) = stderr {
        use tokio::io::AsyncReadExt;
        let mut buf = vec![0u8; 8192];
        while let Ok(n) = stderr.read(&mut buf).await {
            if n == 0 {
                break;
            }
            kept.push(&buf[..n]);
        }
    }
    kept
}

/// How a server ended, as its wait status tells it.
fn ended(status: std::io::Result<std::process::ExitStatus>) -> String {
    match status {
        Ok(status) => match process::exit_of(status) {
            Exit::Signal(sig) => format!("was killed by {}", crate::sys::signal::name(sig)),
            Exit::Code(code) => format!("exited with status {code}"),
            other => other.describe(),
        },
        Err(e) => format!("cannot be waited for: {e}"),
    }
}

/// Kills the process group of a forked run when dropped, unless disarmed.
struct KillOnDrop(Option<u32>);

impl KillOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            process::kill_group(pid);
        }
    }
}

/// Route one line from a server to whoever waits for it.
fn dispatch(replies: &Mutex<Replies>, line: &str) {
    let mut words = line.splitn(3, ' ');
    let (verb, a, b) = (words.next(), words.next(), words.next());
    let mut replies = replies.lock().unwrap();
    match (verb, a.and_then(|a| a.parse::<u64>().ok()), b) {
        (Some("started"), Some(id), Some(pid)) => {
            if let (Some(tx), Ok(pid)) = (replies.started.remove(&id), pid.parse()) {
                let _ = tx.send(Ok(pid));
            }
        }
        (Some("failed"), Some(id), why) => {
            if let Some(tx) = replies.started.remove(&id) {
                let _ = tx.send(Err(why.unwrap_or("").to_string()));
            }
        }
        (Some("exited"), Some(pid), Some(status)) => {
            let pid = u32::try_from(pid).unwrap_or(0);
            if let (Some(tx), Ok(status)) = (replies.exited.remove(&pid), status.parse()) {
                let _ = tx.send(status);
            }
        }
        _ => {}
    }
}

/// A server in use by one run; it counts as busy until this is dropped.
struct Lease(Arc<Server>);

impl Drop for Lease {
    fn drop(&mut self) {
        *self.0.last_used.lock().unwrap() = Instant::now();
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What became of a run given to the fork servers.
pub enum Forked {
    /// It ran to its end (or its time limit, or was cancelled), and wrote its result here.
    Finished(Finished, PathBuf),
    /// Its interpreter cannot serve (servers for it die before they fork anything): run it
    /// with exec isolation.
    Exec,
    /// It lost its server twice while it ran, the second time alone on a server of its own:
    /// the case kills or stops the process that started it.
    LostTwice(Lost),
}

#[derive(Default)]
struct Pool {
    servers: Vec<Arc<Server>>,
    /// Keys whose servers died twice before forking anything: their runs use exec isolation.
    cannot_serve: HashMap<ServerKey, usize>,
}

/// The fork servers of one execution.
pub struct Servers {
    cwd: PathBuf,
    pool: Arc<Mutex<Pool>>,
    max_alive: usize,
    alive: Arc<Alive>,
}

impl Servers {
    /// Servers working in folder `cwd`, at most `max_alive` at once. Must be made inside the
    /// runtime: a task retires idle servers.
    pub fn new(cwd: PathBuf, max_alive: usize) -> Self {
        let pool = Arc::new(Mutex::new(Pool::default()));
        let weak = Arc::downgrade(&pool);
        tokio::spawn(retire_idle(weak));
        Servers {
            cwd,
            pool,
            max_alive,
            alive: Default::default(),
        }
    }

    /// The server for `key`, started if there is none; `None` when servers for `key` cannot
    /// serve. A server alone is started for one run and kept out of the pool.
    async fn lease(&self, key: &ServerKey, alone: bool) -> std::io::Result<Option<Lease>> {
        loop {
            let gone = self.alive.gone.notified();
            tokio::pin!(gone);
            gone.as_mut().enable();
            let retired = {
                let mut pool = self.pool.lock().unwrap();
                forget_lost(&mut pool);
                if !alone {
                    if pool.cannot_serve.get(key).copied().unwrap_or(0) >= 2 {
                        return Ok(None);
                    }
                    if let Some(s) = pool.servers.iter().find(|s| s.key == *key) {
                        s.busy.fetch_add(1, Ordering::SeqCst);
                        return Ok(Some(Lease(s.clone())));
                    }
                }
                if self.alive.count.load(Ordering::SeqCst) < self.max_alive {
                    let server = Server::start(key.clone(), self.cwd.clone(), self.alive.clone())?;
                    server.busy.fetch_add(1, Ordering::SeqCst);
                    if !alone {
                        pool.servers.push(server.clone());
                    }
                    return Ok(Some(Lease(server)));
                }
                // As many as may be are alive: retire the least recently used idle one, and
                // wait for one to be gone.
                let idle = pool
                    .servers
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.busy.load(Ordering::SeqCst) == 0)
                    .min_by_key(|(_, s)| *s.last_used.lock().unwrap())
                    .map(|(i, _)| i);
                idle.map(|i| pool.servers.swap_remove(i))
            };
            if let Some(server) = &retired {
                retire(server.clone());
            }
            if tokio::time::timeout(Duration::from_secs(2), gone)
                .await
                .is_err()
            {
                if let Some(server) = retired {
                    server.kill(format!(
                        "its fork server (pid {}) did not exit when retired",
                        server.pid
                    ));
                }
            }
        }
    }

    /// Run `request` for `key`: on its shared server, then, if that server is lost, once more
    /// alone on a new server of its own. With what became of it comes why its first server
    /// was lost, if it was.
    pub async fn run(
        &self,
        key: &ServerKey,
        dirs: &RunDirs,
        request: &Request,
        capture: usize,
        time_limit: Duration,
        cancel: &CancellationToken,
    ) -> std::io::Result<(Forked, Option<Lost>)> {
        let Some(lease) = self.lease(key, false).await? else {
            return Ok((Forked::Exec, None));
        };
        let server = lease.0.clone();
        let first = server
            .run(dirs, 1, request, capture, time_limit, cancel)
            .await;
        drop(lease);
        let lost = match first {
            Ok((finished, result)) => return Ok((Forked::Finished(finished, result), None)),
            Err((_, lost)) => lost,
        };
        self.server_lost(&server);
        if cancel.is_cancelled() {
            return Ok((Forked::Finished(cancelled(), PathBuf::new()), Some(lost)));
        }
        // Alone, so that a case that kills its server takes no other run with it.
        let Some(lease) = self.lease(key, true).await? else {
            return Ok((Forked::Exec, Some(lost)));
        };
        let alone = lease.0.clone();
        let second = alone
            .run(dirs, 2, request, capture, time_limit, cancel)
            .await;
        drop(lease);
        retire(alone.clone());
        let forked = match second {
            Ok((finished, result)) => Forked::Finished(finished, result),
            Err(_) if cancel.is_cancelled() => Forked::Finished(cancelled(), PathBuf::new()),
            Err((true, again)) => Forked::LostTwice(again),
            Err((false, _)) => {
                self.server_lost(&alone);
                Forked::Exec
            }
        };
        Ok((forked, Some(lost)))
    }

    /// Count a server that died before forking anything against its key.
    fn server_lost(&self, server: &Server) {
        if !server.started_any.load(Ordering::Relaxed) {
            let mut pool = self.pool.lock().unwrap();
            *pool.cannot_serve.entry(server.key.clone()).or_default() += 1;
        }
    }
}

impl Servers {
    /// Ask every server to exit and wait (2 s at most) until none is alive, so that none
    /// outlives the run that needed it.
    pub async fn shutdown(&self) {
        let servers: Vec<Arc<Server>> = self.pool.lock().unwrap().servers.drain(..).collect();
        for server in servers {
            retire(server);
        }
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            loop {
                let gone = self.alive.gone.notified();
                tokio::pin!(gone);
                gone.as_mut().enable();
                if self.alive.count.load(Ordering::SeqCst) == 0 {
                    return;
                }
                gone.await;
            }
        })
        .await;
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        let mut pool = self.pool.lock().unwrap();
        for server in pool.servers.drain(..) {
            retire(server);
        }
    }
}

fn cancelled() -> Finished {
    Finished {
        exit: Exit::Cancelled,
        stdout: Captured::default(),
        stderr: Captured::default(),
        duration: Duration::ZERO,
    }
}

/// Drop servers that are gone from the pool.
fn forget_lost(pool: &mut Pool) {
    pool.servers.retain(|s| !s.lost.is_cancelled());
}

/// Ask a server to exit: end of its input ends its loop, and it ends as an interpreter does.
fn retire(server: Arc<Server>) {
    let closed = match server.stdin.try_lock() {
        Ok(mut stdin) => {
            stdin.0.take();
            true
        }
        Err(_) => false,
    };
    if !closed {
        tokio::spawn(async move {
            server.stdin.lock().await.0.take();
        });
    }
}

/// Every second, retire the servers idle for [`IDLE`], until the pool is dropped.
async fn retire_idle(pool: Weak<Mutex<Pool>>) {
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let Some(pool) = pool.upgrade() else { return };
        let mut pool = pool.lock().unwrap();
        forget_lost(&mut pool);
        let mut i = 0;
        while i < pool.servers.len() {
            let s = &pool.servers[i];
            let idle =
                s.busy.load(Ordering::SeqCst) == 0 && s.last_used.lock().unwrap().elapsed() >= IDLE;
            if idle {
                retire(pool.servers.swap_remove(i));
            } else {
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_reach_whoever_waits_for_them() {
        let replies = Mutex::new(Replies::default());
        let (started, mut started_rx) = oneshot::channel();
        let (failed, mut failed_rx) = oneshot::channel();
        let (exited, mut exited_rx) = oneshot::channel();
        {
            let mut r = replies.lock().unwrap();
            r.started.insert(7, started);
            r.started.insert(8, failed);
            r.exited.insert(1234, exited);
        }
        dispatch(&replies, "started 7 1234");
        dispatch(
            &replies,
            "failed 8 [Errno 11] Resource temporarily unavailable",
        );
        dispatch(&replies, "exited 1234 139");
        dispatch(&replies, "started 99 1");
        dispatch(&replies, "garbage");
        assert_eq!(started_rx.try_recv().unwrap(), Ok(1234));
        assert_eq!(
            failed_rx.try_recv().unwrap(),
            Err("[Errno 11] Resource temporarily unavailable".to_string())
        );
        assert_eq!(exited_rx.try_recv().unwrap(), 139);
        // A wait status as Unix encodes it (fork servers are Unix's only).
        #[cfg(unix)]
        {
            assert_eq!(process::exit_of_raw(139), Exit::Signal(11));
            assert_eq!(process::exit_of_raw(3 << 8), Exit::Code(3));
        }
        assert!(replies.lock().unwrap().started.is_empty());
    }

    #[test]
    fn at_most_sixteen_servers_and_always_more_than_the_runs_at_once() {
        assert_eq!(max_alive(2), 16);
        assert_eq!(max_alive(40), 41);
    }
}
