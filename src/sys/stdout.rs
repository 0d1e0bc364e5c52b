//! Printing to standard output when the reader may be gone (`crosspickle list | head`).

use std::io::Write;

/// Print `text` to stdout and flush; a closed pipe is not an error worth a panic.
pub fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
}
