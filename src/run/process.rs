//! One child process with a time limit: its own process group (so a timeout kills the
//! grandchildren too), empty stdin, stdout and stderr captured to a bounded head and tail.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::sync::CancellationToken;

/// How much of each stream is kept: this many bytes of its head and as many of its tail.
pub const DEFAULT_CAPTURE: usize = 32 * 1024;

/// What to run.
#[derive(Debug, Clone)]
pub struct ProcessSpec {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// The whole environment of the child (nothing is inherited besides).
    pub env: Vec<(OsString, OsString)>,
    pub cwd: Option<PathBuf>,
    pub timeout: Duration,
    pub capture: usize,
}

/// How the process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    TimedOut,
    Cancelled,
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
}

impl Captured {
    pub fn new(limit: usize) -> Self {
        Captured {
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
            limit,
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
        out
    }
}

async fn capture(mut reader: impl AsyncRead + Unpin, limit: usize) -> Captured {
    let mut captured = Captured::new(limit);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => captured.push(&buf[..n]),
        }
    }
    captured
}

/// Run `spec` to its end, its time limit, or `cancel`. Whatever it started is killed with it.
pub async fn run_process(
    spec: &ProcessSpec,
    cancel: &CancellationToken,
) -> std::io::Result<Finished> {
    let mut cmd = tokio::process::Command::new(&spec.program);
    cmd.args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(cwd) = &spec.cwd {
        cmd.current_dir(cwd);
    }
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let pgid = child.id().map(|id| Pid::from_raw(id as i32));
    let stdout = tokio::spawn(capture(child.stdout.take().expect("piped"), spec.capture));
    let stderr = tokio::spawn(capture(child.stderr.take().expect("piped"), spec.capture));

    let waited = tokio::select! {
        status = child.wait() => Some(status?),
        _ = tokio::time::sleep(spec.timeout) => None,
        _ = cancel.cancelled() => None,
    };
    let timed_out = waited.is_none();
    // Kill the whole group in every case: what the code left running must not outlive it.
    if let Some(pgid) = pgid {
        let _ = killpg(pgid, Signal::SIGKILL);
    }
    let status = match waited {
        Some(s) => s,
        None => child.wait().await?,
    };
    let duration = start.elapsed();
    use std::os::unix::process::ExitStatusExt;
    let exit = if timed_out {
        if cancel.is_cancelled() {
            Exit::Cancelled
        } else {
            Exit::TimedOut
        }
    } else if let Some(sig) = status.signal() {
        Exit::Signal(sig)
    } else {
        Exit::Code(status.code().unwrap_or(-1))
    };
    // A process that left its group may still hold the pipes: do not wait on it for long.
    let drain = Duration::from_secs(2);
    let stdout = tokio::time::timeout(drain, stdout)
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    let stderr = tokio::time::timeout(drain, stderr)
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    Ok(Finished {
        exit,
        stdout,
        stderr,
        duration,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_head_and_tail() {
        let mut c = Captured::new(4);
        c.push(b"abcdef");
        c.push(b"ghij");
        assert_eq!(c.total(), 10);
        assert_eq!(
            c.text(),
            "abcd\n[... 2 bytes omitted ...]\ngjij".replace("gjij", "ghij")
        );
        let mut small = Captured::new(8);
        small.push(b"hi");
        assert_eq!(small.text(), "hi");
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
}
