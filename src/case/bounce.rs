//! The bounce of a round trip (`relay` and `reload`, docs/case-format.md "The bounce"): the
//! consumer pickles again, after its `load` and in its process, what the `relay` code puts in
//! `data`, and the producer's interpreter, with the producer's packages, reads that pickle back
//! in a fresh process (`reload`). This file owns the loaded form of the two keys and what is
//! checked of them as a whole: both or neither, and only in a round trip.

/// A round trip's bounce, as loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bounce {
    /// `relay`'s code as written: run after `load`'s, in the same `__main__` (so without
    /// `setup` again).
    pub relay: String,
    /// `setup` then `reload`'s code: the program of the producer's fresh process.
    pub reload: String,
    /// The lines of the keys `relay:` and `reload:` (where a run that no rule decides points).
    pub lines: (Option<usize>, Option<usize>),
    /// The lines of the file that hold the first line of `relay` and of `reload`, when each
    /// line of the code is a line of the file (as `Case::code_starts`).
    pub starts: (Option<usize>, Option<usize>),
}

/// The file each leg's code is written to in its run's folder: tracebacks name it, and
/// reports turn its lines into the case file's.
pub const RELAY_FILE: &str = "relay.py";
pub const RELOAD_FILE: &str = "reload.py";

/// What is wrong with `relay` and `reload` as given (`None` when they are well formed): the
/// key to place the message at and the message. `round_trip` is false for a case with `code`.
pub fn misuse(relay: bool, reload: bool, round_trip: bool) -> Option<(&'static str, &'static str)> {
    match (relay, reload, round_trip) {
        (false, false, _) => None,
        (true, _, false) => Some(("relay", "`relay` bounces a round trip's pickle back, but this case has `code`, not `dump` and `load`")),
        (false, true, false) => Some(("reload", "`reload` reads a round trip's relayed pickle, but this case has `code`, not `dump` and `load`")),
        (true, false, true) => Some(("relay", "`relay` needs a `reload` to read the pickle it makes: add `reload:` (the producer's check of it)")),
        (false, true, true) => Some(("reload", "`reload` needs a `relay` to make the pickle it reads: add `relay:` (the consumer's pickle of what it loaded)")),
        (true, true, true) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_or_neither_and_only_in_a_round_trip() {
        assert_eq!(misuse(false, false, false), None);
        assert_eq!(misuse(true, true, true), None);
        assert_eq!(misuse(true, true, false).map(|m| m.0), Some("relay"));
        assert_eq!(misuse(false, true, false).map(|m| m.0), Some("reload"));
        assert_eq!(misuse(true, false, true).map(|m| m.0), Some("relay"));
        assert_eq!(misuse(false, true, true).map(|m| m.0), Some("reload"));
    }
}
