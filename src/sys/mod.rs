//! The bottom layer: what crosspickle needs from the operating system, with nothing of
//! crosspickle's own. [`process`] is the one way a child process is started (cases, probes,
//! installers, git, make) and the way any process is watched to its end; [`fifo`] makes named
//! pipes for the output of processes crosspickle did not start itself; [`fs`] writes files atomically; [`lock`] holds file locks between
//! crosspickle processes; [`stdout`] prints without panicking on a closed pipe; [`signal`]
//! names signals; [`hash`] makes short digests for folder names. Nothing here imports from the
//! rest of the crate.
//!
//! The operating system is behind one seam: the modules above are OS-neutral and call `os`,
//! which is `unix.rs` on Linux and macOS and `windows.rs` on Windows (as cargo-nextest splits
//! it). Nothing outside `sys` uses `std::os::unix`, `nix` or `rustix`.

pub mod fifo;
pub mod fs;
pub mod hash;
pub mod lock;
pub mod process;
pub mod signal;
pub mod stdout;

#[cfg(unix)]
#[path = "unix.rs"]
mod os;
#[cfg(windows)]
#[path = "windows.rs"]
mod os;

/// Have the memory allocator keep what is freed for reuse, where it would give it back to the
/// kernel at once (glibc: the top of its heap beyond 128 KB, and each block of 128 KB or more,
/// which it maps on its own). Called first thing, before any thread starts. Without it every
/// batch of `explore` met its answers' vectors (a megabyte of tasks) in pages the kernel
/// mapped and zeroed anew: a tenth of explore's own CPU.
pub fn keep_freed_memory() {
    os::keep_freed_memory();
}

/// The number of cores (2 when it cannot be told): the default number of processes at once.
pub fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
}
