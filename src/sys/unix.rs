//! The Unix side of the seam (Linux and macOS): process groups and `killpg`, wait statuses,
//! watching a process that is not a child (Linux's pidfd), named pipes, permission bits, inode
//! numbers, symbolic links and signal names, through `std::os::unix`, `nix` and `rustix`. The
//! OS-neutral modules above (`process`, `fifo`, `fs`, `signal`) call these and nothing else of
//! the operating system.

use std::fs::{File, Metadata, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::process::ExitStatus;
use std::str::FromStr;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use super::fs::FileIdentity;
use super::process::Exit;

// ---- processes ----

/// Put the child `cmd` starts in a process group of its own, which it leads. (Not `setsid` in
/// a `pre_exec` hook: that would make the standard library fork crosspickle instead of using
/// `posix_spawn`, a fork that costs a third of what crosspickle spends on a run of its own.)
pub fn own_group(cmd: &mut tokio::process::Command) {
    cmd.process_group(0);
}

/// Make the tree of a child just started killable as a whole: nothing to do on Unix, where
/// the child leads the group [`own_group`] made for it.
pub fn adopt(_child: &tokio::process::Child) -> std::io::Result<()> {
    Ok(())
}

/// Kill the process group `pid` leads, or, when there is no such group, the process alone (one
/// that has not made its group or session yet).
pub fn kill_group(pid: u32) {
    let Some(pid) = nix_pid(pid) else { return };
    if killpg(pid, Signal::SIGKILL) == Err(nix::errno::Errno::ESRCH) {
        let _ = nix::sys::signal::kill(pid, Signal::SIGKILL);
    }
}

/// Kill what is left of the process group `pid` led, once that process has ended.
pub fn kill_leftovers(pid: u32) {
    if let Some(pid) = nix_pid(pid) {
        let _ = killpg(pid, Signal::SIGKILL);
    }
}

fn nix_pid(pid: u32) -> Option<Pid> {
    i32::try_from(pid)
        .ok()
        .filter(|&raw| raw > 0)
        .map(Pid::from_raw)
}

/// The [`Exit`] of a wait(2) status: the signal that killed it, or its exit code.
pub fn exit_of(status: ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match status.signal() {
        Some(sig) => Exit::Signal(sig),
        None => Exit::Code(status.code().unwrap_or(-1)),
    }
}

/// The [`Exit`] of a raw wait(2) status, as a process's parent read it.
pub fn exit_of_raw(raw: i32) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    exit_of(ExitStatus::from_raw(raw))
}

/// Resolves once process `pid` has ended (it may be a zombie still, or reaped), also when it
/// is not crosspickle's child: Linux tells it through a pidfd. An error when the process cannot
/// be watched (it is already gone and reaped, or the system has no pidfd).
#[cfg(target_os = "linux")]
pub async fn exited(pid: u32) -> std::io::Result<()> {
    use rustix::process::{pidfd_open, PidfdFlags};
    let raw = i32::try_from(pid).map_err(|_| std::io::Error::other("pid out of range"))?;
    let pid = rustix::process::Pid::from_raw(raw).ok_or_else(|| std::io::Error::other("pid 0"))?;
    let fd = pidfd_open(pid, PidfdFlags::NONBLOCK)?;
    // SAFETY: `fd` is an OwnedFd the AsyncFd takes and owns to its end: it stays open and
    // the same descriptor for the AsyncFd's whole life.
    let fd = unsafe {
        tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
    }
    .map_err(|e| e.into_parts().1)?;
    let _ready = fd.readable().await?;
    Ok(())
}

/// Resolves once process `pid` has ended, also when it is not crosspickle's child: macOS tells
/// it through a kqueue's process filter (`EVFILT_PROC`, `NOTE_EXIT`), waited on by a thread of
/// its own. A process that has already ended cannot be watched there (`ESRCH`): for a process
/// that is not reaped yet (a fork server's child, until crosspickle asks the server to reap
/// it), whose pid no other process can have, that means it has ended.
#[cfg(target_os = "macos")]
pub async fn exited(pid: u32) -> std::io::Result<()> {
    use nix::sys::event::{EventFilter, EventFlag, FilterFlag, KEvent, Kqueue};
    nix_pid(pid).ok_or_else(|| std::io::Error::other("pid out of range"))?;
    let kqueue = Kqueue::new()?;
    let watch = KEvent::new(
        pid as usize,
        EventFilter::EVFILT_PROC,
        EventFlag::EV_ADD | EventFlag::EV_ONESHOT,
        FilterFlag::NOTE_EXIT,
        0,
        0,
    );
    let now = nix::libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    match kqueue.kevent(&[watch], &mut [], Some(now)) {
        Ok(_) => {}
        Err(nix::errno::Errno::ESRCH) => return Ok(()),
        Err(e) => return Err(e.into()),
    }
    tokio::task::spawn_blocking(move || {
        let mut events = [watch];
        loop {
            match kqueue.kevent(&[], &mut events, None) {
                Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
                Ok(_) => return Ok(()),
                Err(e) => return Err(e.into()),
            }
        }
    })
    .await
    .map_err(std::io::Error::other)?
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub async fn exited(_pid: u32) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "watching a process that is not a child needs Linux's pidfd or macOS's kqueue",
    ))
}

/// Whether [`exited`] works here (Linux 5.3 and later, not forbidden by a sandbox; macOS).
pub fn can_watch_any_process() -> bool {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{getpid, pidfd_open, PidfdFlags};
        pidfd_open(getpid(), PidfdFlags::empty()).is_ok()
    }
    #[cfg(target_os = "macos")]
    {
        nix::sys::event::Kqueue::new().is_ok()
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        false
    }
}

/// Fork servers are the default isolation where they can run: on Linux. On macOS they can
/// (kqueue watches their children) but have never been run by crosspickle's tests, and
/// Python itself stopped forking there by default (3.8's multiprocessing: system frameworks
/// are not safe in a forked child), so runs get a process of their own unless the command
/// line asks for fork.
pub const FORK_BY_DEFAULT: bool = cfg!(target_os = "linux");

/// Why `--isolation fork` cannot be had here.
pub const NO_FORK: &str = "--isolation fork needs to watch processes that are not crosspickle's \
    children (Linux 5.3 or later with pidfd, or macOS), which this system does not allow: use \
    --isolation exec";

/// Process `pid` is gone: no such process (reaped), or a zombie of a dead group.
#[cfg(test)]
pub fn is_gone(pid: u32) -> bool {
    let Some(raw) = nix_pid(pid) else { return true };
    nix::sys::signal::kill(raw, None).is_err()
        || std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| s.contains(") Z "))
            .unwrap_or(true)
}

// ---- named pipes ----

/// The read end of a FIFO.
pub type FifoReader = tokio::net::unix::pipe::Receiver;

/// Make a FIFO at `path` (readable and writable by this user only) and open its read end and a
/// write end that does not block.
pub fn make_fifo(path: &Path) -> std::io::Result<(FifoReader, File)> {
    nix::unistd::mkfifo(
        path,
        nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
    )?;
    let reader = tokio::net::unix::pipe::OpenOptions::new().open_receiver(path)?;
    let keeper = OpenOptions::new()
        .write(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)?;
    Ok((reader, keeper))
}

// ---- files ----

/// The permission bits of a file (`0o7777` of its mode).
pub fn mode(meta: &Metadata) -> u32 {
    meta.mode() & 0o7777
}

/// How many names the file has (hard links).
pub fn link_count(meta: &Metadata) -> u64 {
    meta.nlink()
}

/// New files `options` makes get these permission bits (less the umask).
pub fn create_with_mode(options: &mut OpenOptions, mode: u32) {
    options.mode(mode);
}

/// Permissions with these bits, for `set_permissions` or a temporary file.
pub fn permissions(mode: u32) -> Option<std::fs::Permissions> {
    Some(std::fs::Permissions::from_mode(mode))
}

/// Anyone may execute it.
pub fn is_executable(meta: &Metadata, _path: &Path) -> bool {
    meta.is_file() && meta.permissions().mode() & 0o111 != 0
}

/// Size, modification time, inode and device.
pub fn identity(meta: &Metadata) -> FileIdentity {
    FileIdentity {
        size: meta.size(),
        mtime_ns: meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128,
        inode: meta.ino(),
        device: meta.dev(),
    }
}

/// A symbolic link at `link` to `target`.
pub fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// The error says a path went through too many symbolic links (a loop).
pub fn is_symlink_loop(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(nix::libc::ELOOP)
}

/// A path that is not valid Unicode (a byte that is no UTF-8).
#[cfg(test)]
pub fn non_unicode_path() -> std::path::PathBuf {
    use std::os::unix::ffi::OsStrExt;
    Path::new(std::ffi::OsStr::from_bytes(b"/t/\xff")).to_path_buf()
}

// ---- signals ----

/// The child is sent SIGKILL when crosspickle dies, even by SIGKILL, which nothing can catch
/// (Linux's parent-death signal: it fires when the thread that started the child ends, and
/// crosspickle runs on one thread that lives as long as it does). A child that finds
/// crosspickle already gone as it sets this up does not start. (This makes the standard library
/// fork crosspickle to start the child, not posix_spawn.)
#[cfg(target_os = "linux")]
pub fn dies_with_parent(cmd: &mut tokio::process::Command) {
    let parent = rustix::process::getpid();
    // SAFETY: the closure runs in the forked child before exec and makes only two system
    // calls (prctl, getppid): async-signal-safe, no allocation, no lock.
    unsafe {
        cmd.pre_exec(move || {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
            if rustix::process::getppid() != Some(parent) {
                return Err(std::io::Error::from_raw_os_error(3)); // ESRCH: no parent
            }
            Ok(())
        });
    }
}

/// Elsewhere (macOS) there is no parent-death signal: the reaper ([`spawn_reaper`]) alone ends
/// what crosspickle leaves.
#[cfg(not(target_os = "linux"))]
pub fn dies_with_parent(_cmd: &mut tokio::process::Command) {}

/// glibc's thresholds raised: blocks up to 32 MB come from the heap, and up to 64 MB free at
/// its top stay there.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn keep_freed_memory() {
    use nix::libc::{mallopt, M_MMAP_THRESHOLD, M_TRIM_THRESHOLD};
    // SAFETY: mallopt sets two of the allocator's parameters, before any other thread exists.
    unsafe {
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
        mallopt(M_TRIM_THRESHOLD, 64 << 20);
    }
}

/// Elsewhere (macOS, musl) the allocator's own policy stands.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn keep_freed_memory() {}

/// The reaper's program: it waits for its input to end, which is when crosspickle is gone
/// (crosspickle writes nothing to it), then kills each group its list (`$1`) still names: the
/// groups crosspickle added (`+PID`) and did not say were gone (`-PID`), each group (or the
/// process alone, where it has not made its group yet). Deaf to Ctrl-C and SIGHUP, which are
/// crosspickle's to handle. Told through a file rather than its input, it sleeps through
/// crosspickle's work: a line on a pipe woke it twice a run (a shell reads a pipe a byte at a
/// time), 45 µs of CPU a run, on a core a run's interpreter could have had.
const REAPER: &str = r#"trap '' INT HUP
while read -r _; do :; done
g=' '
if [ -f "$1" ]; then
  while read -r l; do
    case $l in
      +*) g="$g${l#+} " ;;
      -*) p=${l#-}; case $g in *" $p "*) g="${g%% $p *} ${g#* $p }" ;; esac ;;
    esac
  done < "$1"
  rm -f "$1"
fi
for p in $g; do kill -9 -$p 2>/dev/null || kill -9 $p 2>/dev/null; done
"#;

/// The reaper: a small shell ([`REAPER`]) in a process group of its own. Its input (kept open
/// and never written: it ends with crosspickle) and its list of groups, a file crosspickle
/// appends to (in memory, `/dev/shm`, where there is one), or `None` when it cannot start.
pub fn spawn_reaper() -> Option<(std::process::ChildStdin, std::fs::File)> {
    use std::os::unix::process::CommandExt;
    let named = |b: &mut tempfile::Builder| b.prefix("crosspickle-reaper-").tempfile();
    let list = tempfile::Builder::new()
        .prefix("crosspickle-reaper-")
        .tempfile_in("/dev/shm")
        .or_else(|_| named(&mut tempfile::Builder::new()))
        .ok()?;
    let (_, path) = list.keep().ok()?;
    let started = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .and_then(|list| {
            // (`-f`: the groups' numbers are never taken for file names.)
            let child = std::process::Command::new("/bin/sh")
                .args(["-f", "-c", REAPER, "reaper"])
                .arg(&path)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .process_group(0)
                .spawn()?;
            Ok((child, list))
        });
    match started {
        Ok((mut child, list)) => Some((child.stdin.take()?, list)),
        Err(_) => {
            let _ = std::fs::remove_file(&path);
            None
        }
    }
}

/// From the moment it is called (in a tokio runtime), Ctrl-C, SIGTERM and SIGHUP no longer end
/// crosspickle: what it returns resolves to the number of the first that comes.
pub fn stop_requested() -> std::io::Result<impl std::future::Future<Output = i32>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    Ok(async move {
        tokio::select! {
            _ = int.recv() => 2,
            _ = term.recv() => 15,
            _ = hup.recv() => 1,
        }
    })
}

/// The name of signal `number` on this system (`SIGSEGV`).
pub fn signal_name(number: i32) -> Option<&'static str> {
    Signal::try_from(number).ok().map(|s| s.as_str())
}

/// The number of the signal called `name` (`SIGSEGV`) on this system.
pub fn signal_number(name: &str) -> Option<i32> {
    Signal::from_str(name).ok().map(|s| s as i32)
}
