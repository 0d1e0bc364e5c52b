//! Short, stable digests for folder and cache names (SHA-256, truncated, in hex), and bytes
//! in hex (pickles in explore's reports, the driver's requests).

use sha2::{Digest, Sha256};

/// The first `hex_digits` hex digits of the SHA-256 of `bytes` (at most 64).
pub fn short_hex(bytes: &[u8], hex_digits: usize) -> String {
    let mut digest = hex(&Sha256::digest(bytes));
    digest.truncate(hex_digits);
    digest
}

/// `bytes` in lower-case hex, as Python's `bytes.fromhex` reads it.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    // Bytes, then one check that they are text: a `char` pushed at a time was 1.5% of
    // crosspickle's instructions in explore (the text of every distinct pickle).
    let mut text = Vec::with_capacity(bytes.len() * 2);
    for b in bytes {
        text.extend_from_slice(&[DIGITS[(b >> 4) as usize], DIGITS[(b & 15) as usize]]);
    }
    String::from_utf8(text).expect("hex digits are ASCII")
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

    #[test]
    fn bytes_in_hex() {
        assert_eq!(hex(b"\x00\xff\x1a"), "00ff1a");
        assert_eq!(hex(b"\x80\x04\x0a\xff"), "80040aff");
        assert_eq!(hex(b""), "");
    }
}
