//! What explore keeps of the values it has observed, so that a value drawn again is not
//! observed again: the generator draws small values often (`()`, `None`, `b''`), and of the
//! first 65,600 values of seed 7 only 26,544 are distinct. The workers are the same processes
//! for the whole run, so a value observed again would show what it showed the first time;
//! what its first observation showed stands for it.
//!
//! Kept by the value's source, in two generations of at most [`Memo::KEPT`] each (the newer
//! filled, then made the older, the older dropped): what is drawn often stays, in bounded
//! memory. Only sources of at most [`Memo::LONGEST`] bytes are kept: the values drawn again are
//! small ones (of the 39,056 repeats of those 65,600 values, 446 have a longer source than
//! 64 bytes, and none one longer than 256), and a long one would take a short one's room.

use std::collections::HashMap;
use std::sync::Arc;

/// Observations (`T`) of the values seen so far, by source.
#[derive(Debug)]
pub struct Memo<T> {
    newer: HashMap<String, Arc<T>>,
    older: HashMap<String, Arc<T>>,
}

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Memo {
            newer: HashMap::new(),
            older: HashMap::new(),
        }
    }
}

impl<T> Memo<T> {
    /// Entries per generation.
    pub const KEPT: usize = 16_384;
    /// The longest source kept.
    pub const LONGEST: usize = 256;

    /// What the value of this source showed, if it was kept; one found in the older
    /// generation is moved to the newer.
    pub fn get(&mut self, source: &str) -> Option<Arc<T>> {
        if let Some(t) = self.newer.get(source) {
            return Some(Arc::clone(t));
        }
        let t = self.older.remove(source)?;
        self.put(source.to_owned(), Arc::clone(&t));
        Some(t)
    }

    /// Whether a value of this source is kept (its source at most [`Memo::LONGEST`] long).
    pub fn keeps(source: &str) -> bool {
        source.len() <= Self::LONGEST
    }

    /// Keep what the value of this source showed, where [`Memo::keeps`] it.
    pub fn insert(&mut self, source: &str, t: Arc<T>) {
        if Self::keeps(source) && !self.newer.contains_key(source) {
            self.put(source.to_owned(), t);
        }
    }

    fn put(&mut self, source: String, t: Arc<T>) {
        if self.newer.len() >= Self::KEPT {
            self.older = std::mem::take(&mut self.newer);
        }
        self.newer.insert(source, t);
    }

    /// Sources kept.
    pub fn len(&self) -> usize {
        self.newer.len() + self.older.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_kept_is_found_again() {
        let mut memo = Memo::default();
        memo.insert("value = ()\n", Arc::new(1));
        assert_eq!(memo.get("value = ()\n").as_deref(), Some(&1));
        assert_eq!(memo.get("value = []\n"), None);
    }

    #[test]
    fn a_long_source_is_not_kept() {
        let mut memo = Memo::default();
        let long = format!("value = {:?}\n", "x".repeat(Memo::<u8>::LONGEST));
        memo.insert(&long, Arc::new(1u8));
        assert_eq!(memo.get(&long), None);
        assert!(memo.is_empty());
    }

    #[test]
    fn the_oldest_are_dropped_and_what_is_used_stays() {
        let mut memo = Memo::default();
        let kept = Memo::<usize>::KEPT;
        memo.insert("often", Arc::new(usize::MAX));
        for i in 0..kept - 1 {
            memo.insert(&format!("v{i}"), Arc::new(i));
        }
        // The newer generation is full: the next insert makes it the older.
        memo.insert("next", Arc::new(0));
        assert_eq!(memo.len(), kept + 1);
        // Used again: moved to the newer generation.
        assert_eq!(memo.get("often").as_deref(), Some(&usize::MAX));
        for i in 0..kept {
            memo.insert(&format!("w{i}"), Arc::new(i));
        }
        // A generation later, what was not used again is gone; what was, is there.
        assert_eq!(memo.get("v0"), None);
        assert_eq!(memo.get("often").as_deref(), Some(&usize::MAX));
        assert!(memo.len() <= 2 * kept);
    }
}
