//! Exception messages as the oracles compare them: normalised ([`normalise`]: addresses,
//! quoting) and with what a value or a call puts in them masked ([`mask`]), so that what stays
//! is the wording. The message-differs oracle (`message.rs`) compares wordings; the
//! load-differs oracle (`refusals.rs`) tells apart two refusals raised in C code by theirs.

/// `msg` with what does not tell two messages apart made the same: addresses (`0x7f3a...`)
/// as `0x?`, a `u` before a quoted text dropped (2.7's `u'x'`), and double quotes as single
/// ones (`"x"` and `'x'`, as each `repr` chose).
pub fn normalise(msg: &str) -> String {
    let chars: Vec<char> = msg.chars().collect();
    let mut out = String::with_capacity(msg.len());
    let mut i = 0;
    let word = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric() || *c == '_');
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let after_word = i > 0 && word(chars.get(i - 1));
        if c == '0'
            && next == Some('x')
            && !after_word
            && chars.get(i + 2).is_some_and(char::is_ascii_hexdigit)
        {
            out.push_str("0x?");
            i += 2;
            while chars.get(i).is_some_and(char::is_ascii_hexdigit) {
                i += 1;
            }
            continue;
        }
        if c == 'u' && matches!(next, Some('\'' | '"')) && !after_word {
            i += 1;
            continue;
        }
        out.push(if c == '"' { '\'' } else { c });
        i += 1;
    }
    out
}

/// A normalised message with the parts a value or a call puts in it masked as `?`: quoted
/// texts (`'Slots'`, `b'x'`'s quotes), reprs in angle brackets (`<object at 0x?>`), and
/// numbers that stand alone (`protocol 0`, `missing 1 required`, `2.5`; not `latin1` or
/// `__getstate__`'s letters). What stays is the wording, which is what changed between
/// versions: two wordings stay two causes.
pub fn mask(msg: &str) -> String {
    let chars: Vec<char> = msg.chars().collect();
    let word = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric() || *c == '_');
    let mut out = String::with_capacity(msg.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let after_word = i > 0 && word(chars.get(i - 1));
        // A quote opens a text where no word runs into it (not `can't`), and the text ends at
        // the next quote that no word follows.
        if c == '\'' && (!after_word || chars[i - 1] == 'b') {
            let close = (i + 1..chars.len()).find(|&j| chars[j] == '\'' && !word(chars.get(j + 1)));
            if let Some(j) = close {
                out.push_str("'?'");
                i = j + 1;
                continue;
            }
        }
        if c == '<' {
            let mut depth = 0;
            let close = (i..chars.len()).find(|&j| {
                match chars[j] {
                    '<' => depth += 1,
                    '>' => depth -= 1,
                    _ => {}
                }
                depth == 0
            });
            if let Some(j) = close.filter(|&j| j > i + 1) {
                out.push_str("<?>");
                i = j + 1;
                continue;
            }
        }
        if c.is_ascii_digit() && !after_word && !(i > 0 && chars[i - 1] == '.') {
            let mut j = i;
            while j < chars.len()
                && (chars[j].is_ascii_digit()
                    || (chars[j] == '.' && chars.get(j + 1).is_some_and(char::is_ascii_digit)))
            {
                j += 1;
            }
            if !word(chars.get(j)) {
                out.push('?');
                i = j;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_quoting_are_no_difference() {
        assert_eq!(
            normalise("<object at 0x7f3a2b1c0d10> and u'x' with \"y\""),
            "<object at 0x?> and 'x' with 'y'"
        );
        assert_eq!(normalise("0x1f"), "0x?");
        // Not an address, not a prefix: left alone.
        assert_eq!(normalise("max0x1 menu'x' 0xg"), "max0x1 menu'x' 0xg");
        assert_eq!(normalise("b'x'"), "b'x'");
        assert_eq!(
            normalise("unsupported pickle protocol: 4"),
            "unsupported pickle protocol: 4"
        );
    }

    /// What a value puts in a message is masked, the wording stays: one change of wording is
    /// one cause whatever the value, two wordings are two.
    #[test]
    fn a_cause_masks_the_values_parts_and_keeps_the_wording() {
        let slots = |p: u32| {
            mask(&normalise(&format!(
                "cannot pickle 'Slots' object: a class that defines __slots__ without defining \
                 __getstate__ cannot be pickled with protocol {p}"
            )))
        };
        assert_eq!(slots(0), slots(1));
        assert_eq!(
            slots(0),
            "cannot pickle '?' object: a class that defines __slots__ without defining \
             __getstate__ cannot be pickled with protocol ?"
        );
        assert_eq!(
            mask(&normalise("cannot pickle 'generator' object")),
            mask(&normalise("cannot pickle \"frame\" object"))
        );
        assert_ne!(
            mask("cannot pickle 'generator' object"),
            mask("can't pickle generator objects"),
            "another wording"
        );
        assert_eq!(
            mask("can't pickle <function <lambda> at 0x?>: it's not found as __main__.f"),
            "can't pickle <?>: it's not found as __main__.f"
        );
        assert_eq!(
            mask("f() missing 1 required positional argument: 'a'"),
            "f() missing ? required positional argument: '?'"
        );
        assert_eq!(
            mask("invalid load key, b'x'. got 2.5, not 1e3"),
            "invalid load key, b'?'. got ?, not 1e3"
        );
        assert_eq!(mask("codec latin1 of py3k"), "codec latin1 of py3k");
        assert_eq!(mask("unclosed 'quote and <"), "unclosed 'quote and <");
    }
}
