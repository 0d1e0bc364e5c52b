//! Printing to standard output and standard error when the reader may be gone (`crosspickle
//! list | head`, `crosspickle -p 3.99 2>&1 | head -2`).

use std::io::Write;

/// Print `text` to stdout and flush; a closed pipe is not an error worth a panic. While GitHub
/// reads the output, no line of it can be a workflow command ([`neutralised`]).
pub fn emit(text: &str) {
    if github_reads() {
        emit_commands(&neutralised(text));
    } else {
        emit_commands(text);
    }
}

/// Print `text` to stdout as it is, workflow commands and all: crosspickle's own annotations and
/// the guard around its report.
pub fn emit_commands(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
}

/// Print `text` to stderr; a closed pipe is not an error worth a panic (the crate's
/// `eprintln!`).
pub fn emit_err(text: &str) {
    let text = if github_reads() {
        std::borrow::Cow::Owned(neutralised(text))
    } else {
        std::borrow::Cow::Borrowed(text)
    };
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|_| err.flush());
}

/// Whether GitHub's runner reads what crosspickle prints (`GITHUB_ACTIONS` is `true`): then
/// every line [`emit`] and [`emit_err`] print is [`neutralised`], and only crosspickle's own
/// workflow commands go out as they are ([`emit_commands`]).
static GITHUB: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Read `GITHUB_ACTIONS` once, at the start of a command, for [`emit`] and [`emit_err`].
pub fn watch_for_github() {
    let on = std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true");
    GITHUB.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether GitHub's runner reads this process's output ([`watch_for_github`]).
pub fn github_reads() -> bool {
    GITHUB.load(std::sync::atomic::Ordering::Relaxed)
}

/// What breaks a workflow command's syntax without showing: a zero-width space.
const BREAK: char = '\u{200b}';

/// `text` with no line that GitHub's runner reads as a workflow command: `::` at the start of a
/// line (after whitespace) and `##[` anywhere get a zero-width space between their first two
/// characters; nothing else changes.
pub fn neutralised(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let indent = line.len() - line.trim_start().len();
        let (lead, rest) = line.split_at(indent);
        out.push_str(lead);
        let rest = match rest.strip_prefix("::") {
            Some(after) => {
                out.push(':');
                out.push(BREAK);
                out.push(':');
                after
            }
            None => rest,
        };
        let mut pieces = rest.split("##[");
        out.push_str(pieces.next().unwrap_or(""));
        for piece in pieces {
            out.push('#');
            out.push(BREAK);
            out.push_str("#[");
            out.push_str(piece);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_line_stays_a_workflow_command() {
        let hostile = "::error::a\n  \t::add-mask::b\nsay ##[error]c and ##[warning]d\nx::y::z\n";
        let out = neutralised(hostile);
        for line in out.lines() {
            assert!(!line.trim_start().starts_with("::"), "{line:?}");
            assert!(!line.contains("##["), "{line:?}");
        }
        assert_eq!(out.replace(BREAK, ""), hostile);
        assert_eq!(neutralised("plain text\n"), "plain text\n");
    }
}
