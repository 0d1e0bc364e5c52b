//! Short, stable digests for folder and cache names (SHA-256, truncated, in hex).

use sha2::{Digest, Sha256};

/// The first `hex_digits` hex digits of the SHA-256 of `bytes` (at most 64).
pub fn short_hex(bytes: &[u8], hex_digits: usize) -> String {
    let mut hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    hex.truncate(hex_digits);
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digest_truncated() {
        // sha256("abc") = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
        assert_eq!(short_hex(b"abc", 16), "ba7816bf8f01cfea");
        assert_eq!(short_hex(b"abc", 12), "ba7816bf8f01");
        assert_eq!(short_hex(b"abc", 64).len(), 64);
        assert_ne!(short_hex(b"abd", 16), short_hex(b"abc", 16));
    }
}
