//! Printing to standard output and standard error when the reader may be gone (`crosspickle
//! list | head`, `crosspickle -p 3.99 2>&1 | head -2`).

use std::io::Write;

/// Print `text` to stdout and flush; a closed pipe is not an error worth a panic.
pub fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
}

/// Print `text` to stderr; a closed pipe is not an error worth a panic (the crate's
/// `eprintln!`).
pub fn emit_err(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|_| err.flush());
}
