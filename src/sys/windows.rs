//! The Windows side of the seam. A child is put in a Job Object of its own as it starts (as
//! cargo-nextest does), so that its whole tree is killed at once when it ends, outlives its
//! time limit or is cancelled, and when crosspickle itself goes (the job kills what it holds
//! when its last handle is closed). A crash ends a process with an NTSTATUS code (an access
//! violation is `0xC0000005`): such a code is reported as the signal a Unix system would have
//! sent for it (`SIGSEGV`), so that a case that expects a crash means the same on both. There
//! are no named pipes in the Unix sense and no fork servers: [`make_fifo`] says so, and
//! [`can_watch_any_process`] is false, which makes exec isolation the only one. Files have no
//! permission bits: a read-only flag stands for them.
//!
//! This file is type-checked for `x86_64-pc-windows-msvc` and `-gnu` in CI (.ci/cross-check.sh)
//! but not run there: no Windows machine runs crosspickle's tests.

use std::collections::HashMap;
use std::fs::{File, Metadata, OpenOptions};
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::path::Path;
use std::process::ExitStatus;
use std::sync::{Mutex, OnceLock};

use windows_sys::Win32::Foundation::{ERROR_CANT_RESOLVE_FILENAME, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Threading::{
    OpenProcess, TerminateProcess, WaitForSingleObject, CREATE_NEW_PROCESS_GROUP, INFINITE,
    PROCESS_SYNCHRONIZE, PROCESS_TERMINATE,
};

use super::fs::FileIdentity;
use super::process::Exit;

// ---- processes ----

/// The exit code a killed tree's processes end with (as `TerminateProcess` gives it).
const KILLED: u32 = 1;

/// The Job Object of each child started and not yet ended, by its pid.
fn jobs() -> &'static Mutex<HashMap<u32, OwnedHandle>> {
    static JOBS: OnceLock<Mutex<HashMap<u32, OwnedHandle>>> = OnceLock::new();
    JOBS.get_or_init(Default::default)
}

/// Start the child in a process group of its own: a Ctrl-C in crosspickle's console is
/// crosspickle's to handle (it then kills its runs), as on Unix, where the child is not in the
/// terminal's foreground group.
pub fn own_group(cmd: &mut tokio::process::Command) {
    cmd.creation_flags(CREATE_NEW_PROCESS_GROUP);
}

/// Put a child just started in a Job Object of its own, which its children join as they
/// start: [`kill_group`] kills them all. An unhandled exception ends a process of the job at
/// once with its code (no error dialog waits for a click).
pub fn adopt(child: &tokio::process::Child) -> std::io::Result<()> {
    let (Some(pid), Some(process)) = (child.id(), child.raw_handle()) else {
        return Ok(()); // Already reaped: there is nothing left to hold.
    };
    // SAFETY: no security attributes and no name: a new anonymous job, or null on failure.
    let raw = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
    if raw.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `raw` is a handle just made and owned by nobody else.
    let job = unsafe { OwnedHandle::from_raw_handle(raw as RawHandle) };
    let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
    limits.BasicLimitInformation.LimitFlags =
        JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
    // SAFETY: `limits` is the structure the information class names, of the size given.
    let set = unsafe {
        SetInformationJobObject(
            handle(&job),
            JobObjectExtendedLimitInformation,
            &limits as *const _ as *const core::ffi::c_void,
            std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
        )
    };
    if set == 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both handles are open: the job's is owned here, the process's by `child`.
    if unsafe { AssignProcessToJobObject(handle(&job), process as HANDLE) } == 0 {
        return Err(std::io::Error::last_os_error());
    }
    jobs().lock().unwrap().insert(pid, job);
    Ok(())
}

fn handle(owned: &OwnedHandle) -> HANDLE {
    owned.as_raw_handle() as HANDLE
}

/// Kill the tree of `pid` (its Job Object), or, when it has none, the process alone.
pub fn kill_group(pid: u32) {
    if let Some(job) = jobs().lock().unwrap().get(&pid) {
        // SAFETY: the job's handle is open while it is in the table.
        unsafe { TerminateJobObject(handle(job), KILLED) };
        return;
    }
    // SAFETY: OpenProcess returns a new handle or null; the handle is closed by OwnedHandle.
    let raw = unsafe { OpenProcess(PROCESS_TERMINATE, 0, pid) };
    if !raw.is_null() {
        let process = unsafe { OwnedHandle::from_raw_handle(raw as RawHandle) };
        unsafe { TerminateProcess(handle(&process), KILLED) };
    }
}

/// Kill what is left of the tree of `pid`, once that process has ended, and let its job go.
pub fn kill_leftovers(pid: u32) {
    if let Some(job) = jobs().lock().unwrap().remove(&pid) {
        // SAFETY: the job's handle is open until `job` is dropped, after this call.
        unsafe { TerminateJobObject(handle(&job), KILLED) };
    }
}

/// NTSTATUS codes of crashes and the Unix signal each stands for here.
const CRASHES: &[(u32, &str)] = &[
    (0xC000_0005, "SIGSEGV"), // STATUS_ACCESS_VIOLATION
    (0xC000_00FD, "SIGSEGV"), // STATUS_STACK_OVERFLOW
    (0xC000_001D, "SIGILL"),  // STATUS_ILLEGAL_INSTRUCTION
    (0xC000_0096, "SIGILL"),  // STATUS_PRIVILEGED_INSTRUCTION
    (0xC000_008E, "SIGFPE"),  // STATUS_FLOAT_DIVIDE_BY_ZERO
    (0xC000_0094, "SIGFPE"),  // STATUS_INTEGER_DIVIDE_BY_ZERO
    (0xC000_0409, "SIGABRT"), // STATUS_STACK_BUFFER_OVERRUN: abort() and __fastfail
    (0x8000_0003, "SIGTRAP"), // STATUS_BREAKPOINT
];

/// The signal numbers names stand for here: those of the C runtime (`signal.h`) where it has
/// them, Linux's otherwise. They only ever meet names, never another system's numbers.
const SIGNALS: &[(&str, i32)] = &[
    ("SIGINT", 2),
    ("SIGILL", 4),
    ("SIGTRAP", 5),
    ("SIGFPE", 8),
    ("SIGKILL", 9),
    ("SIGSEGV", 11),
    ("SIGTERM", 15),
    ("SIGBREAK", 21),
    ("SIGABRT", 22),
];

/// The [`Exit`] of a child's exit status: a crash's NTSTATUS code (an error code, its two top
/// bits set, or a breakpoint) as the signal it stands for, any other code as it is.
pub fn exit_of(status: ExitStatus) -> Exit {
    let code = status.code().unwrap_or(-1);
    match crash_signal(code as u32) {
        Some(signal) => Exit::Signal(signal),
        None => Exit::Code(code),
    }
}

fn crash_signal(code: u32) -> Option<i32> {
    let (_, name) = CRASHES.iter().find(|(c, _)| *c == code)?;
    signal_number(name)
}

/// The [`Exit`] of a raw status as a process's parent read it: on Windows, its exit code.
pub fn exit_of_raw(raw: i32) -> Exit {
    use std::os::windows::process::ExitStatusExt;
    exit_of(ExitStatus::from_raw(raw as u32))
}

/// Resolves once process `pid` has ended, also when it is not crosspickle's child (a thread
/// waits on a handle to it).
pub async fn exited(pid: u32) -> std::io::Result<()> {
    // SAFETY: OpenProcess returns a new handle or null; OwnedHandle closes it.
    let raw = unsafe { OpenProcess(PROCESS_SYNCHRONIZE, 0, pid) };
    if raw.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    let process = unsafe { OwnedHandle::from_raw_handle(raw as RawHandle) };
    tokio::task::spawn_blocking(move || {
        // SAFETY: the handle stays open while `process` lives, to the end of this closure.
        unsafe { WaitForSingleObject(handle(&process), INFINITE) };
    })
    .await
    .map_err(std::io::Error::other)
}

/// Fork servers need `fork`, which Windows does not have: runs get a process of their own.
pub fn can_watch_any_process() -> bool {
    false
}

/// No fork servers on Windows.
pub const FORK_BY_DEFAULT: bool = false;

/// Why `--isolation fork` cannot be had here.
pub const NO_FORK: &str = "--isolation fork is not available on Windows, which has no fork: \
    every run starts an interpreter of its own (--isolation exec, the default there)";

// ---- named pipes ----

/// There is no FIFO on Windows; this reader is never made.
pub type FifoReader = tokio::io::Empty;

/// Not available on Windows (fork servers, the only users, are not either).
pub fn make_fifo(_path: &Path) -> std::io::Result<(FifoReader, File)> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "named pipes made at a path are not available on Windows (no fork isolation there)",
    ))
}

// ---- files ----

/// Windows has no permission bits: `0o444` or `0o666` by the read-only flag, and `0o111`
/// more for a folder.
pub fn mode(meta: &Metadata) -> u32 {
    let rw = if meta.permissions().readonly() {
        0o444
    } else {
        0o666
    };
    if meta.is_dir() {
        rw | 0o111
    } else {
        rw
    }
}

/// The standard library cannot tell the number of names of a file on Windows yet: 1.
pub fn link_count(_meta: &Metadata) -> u64 {
    1
}

/// No permission bits on Windows: nothing to set.
pub fn create_with_mode(_options: &mut OpenOptions, _mode: u32) {}

/// No permission bits on Windows: the caller sets the read-only flag instead.
pub fn permissions(_mode: u32) -> Option<std::fs::Permissions> {
    None
}

/// A file whose name ends with one of `PATHEXT`'s extensions (`.COM;.EXE;.BAT;.CMD` when it
/// is not set), as the command prompt runs it.
pub fn is_executable(meta: &Metadata, path: &Path) -> bool {
    let Some(ext) = path.extension().and_then(|e| e.to_str()) else {
        return false;
    };
    let pathext = std::env::var("PATHEXT").unwrap_or_else(|_| ".COM;.EXE;.BAT;.CMD".into());
    meta.is_file()
        && pathext
            .split(';')
            .any(|e| e.trim_start_matches('.').eq_ignore_ascii_case(ext))
}

/// Size and modification time; no file index (the standard library cannot give it yet).
pub fn identity(meta: &Metadata) -> FileIdentity {
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i128);
    FileIdentity {
        size: meta.len(),
        mtime_ns,
        inode: 0,
        device: 0,
    }
}

/// A symbolic link to a folder or a file, as `target` is (a file when it does not exist).
pub fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    let resolved = link
        .parent()
        .map_or(target.to_path_buf(), |p| p.join(target));
    if resolved.is_dir() {
        std::os::windows::fs::symlink_dir(target, link)
    } else {
        std::os::windows::fs::symlink_file(target, link)
    }
}

/// Windows says a path that goes round in symbolic links "cannot be resolved".
pub fn is_symlink_loop(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(ERROR_CANT_RESOLVE_FILENAME as i32)
}

/// A path holding a lone surrogate, which is no Unicode.
#[cfg(test)]
pub fn non_unicode_path() -> std::path::PathBuf {
    use std::os::windows::ffi::OsStringExt;
    let wide: Vec<u16> = "C:\\t\\".encode_utf16().chain([0xD800]).collect();
    std::path::PathBuf::from(std::ffi::OsString::from_wide(&wide))
}

// ---- signals ----

/// Windows has no parent-death signal; a run's Job Object ends its tree when crosspickle kills
/// it, but not when crosspickle itself is killed (not checked on Windows).
pub fn dies_with_parent(_cmd: &mut tokio::process::Command) {}

/// No reaper on Windows (its program is a POSIX shell's).
pub fn spawn_reaper() -> Option<(std::process::ChildStdin, std::fs::File)> {
    None
}

/// Ctrl-C (Ctrl-Break and closing the console are not handled): resolves to 2, as SIGINT.
pub fn stop_requested() -> std::io::Result<impl std::future::Future<Output = i32>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
        2
    })
}

/// The name of signal `number` (see [`SIGNALS`]).
pub fn signal_name(number: i32) -> Option<&'static str> {
    SIGNALS.iter().find(|(_, n)| *n == number).map(|(s, _)| *s)
}

/// The number a signal name stands for here (see [`SIGNALS`]).
pub fn signal_number(name: &str) -> Option<i32> {
    SIGNALS.iter().find(|(s, _)| *s == name).map(|(_, n)| *n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crashes_are_the_signals_they_stand_for() {
        use std::os::windows::process::ExitStatusExt;
        let segv = ExitStatus::from_raw(0xC000_0005);
        assert_eq!(exit_of(segv), Exit::Signal(11));
        assert_eq!(exit_of(ExitStatus::from_raw(3)), Exit::Code(3));
        assert_eq!(signal_name(22), Some("SIGABRT"));
        assert_eq!(exit_of_raw(0xC000_0409_u32 as i32), Exit::Signal(22));
    }
}

/// Windows' heap keeps its own policy.
pub fn keep_freed_memory() {}
