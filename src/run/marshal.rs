//! A run's request as the driver reads it: a dict of text and parameter values written in
//! Python's `marshal` format, which every interpreter crosspickle runs (2.7, every 3.x, PyPy)
//! loads alike, sent as hex on the request's line. Loading it parses and compiles nothing:
//! `eval` of a dict literal, which it replaces, set up and ran the interpreter's parser in
//! every exec'd run (1.4 M instructions of a trivial run's 46.5 M on 3.12, where `python -c
//! pass` parses `pass` once).

use num_bigint::{BigInt, Sign};

use crate::case::ParamValue;

/// A value of the request.
#[derive(Debug, Clone)]
pub enum Value {
    Text(String),
    Param(ParamValue),
    /// Text keys, in this order.
    Dict(Vec<(String, Value)>),
}

/// `value` marshalled (the codes of marshal version 2, which every reader since 2.5 knows: no
/// references, strings as `u`, which 2.7 loads as `unicode`, as it did `u"..."` literals).
pub fn dumps(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    write(&mut out, value);
    out
}

fn write(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Text(text) => text_of(out, text),
        Value::Param(param) => param_of(out, param),
        Value::Dict(items) => {
            out.push(b'{');
            for (key, value) in items {
                text_of(out, key);
                write(out, value);
            }
            out.push(b'0');
        }
    }
}

fn text_of(out: &mut Vec<u8>, text: &str) {
    out.push(b'u');
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
}

fn param_of(out: &mut Vec<u8>, value: &ParamValue) {
    match value {
        ParamValue::Null => out.push(b'N'),
        ParamValue::Bool(true) => out.push(b'T'),
        ParamValue::Bool(false) => out.push(b'F'),
        ParamValue::Float(f) => {
            out.push(b'g');
            out.extend_from_slice(&f.to_le_bytes());
        }
        ParamValue::Str(s) => text_of(out, s),
        ParamValue::Int(i) => int_of(out, i),
    }
}

/// An int: `i` and 4 bytes when it fits, else `l`, its count of 15-bit digits (negative for a
/// negative number) and the digits, least significant first.
fn int_of(out: &mut Vec<u8>, value: &BigInt) {
    if let Ok(small) = i32::try_from(value) {
        out.push(b'i');
        out.extend_from_slice(&small.to_le_bytes());
        return;
    }
    let (sign, bytes) = value.to_bytes_le();
    let mut digits: Vec<u16> = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for b in bytes {
        acc |= (b as u32) << bits;
        bits += 8;
        while bits >= 15 {
            digits.push((acc & 0x7fff) as u16);
            acc >>= 15;
            bits -= 15;
        }
    }
    digits.push(acc as u16);
    while digits.last() == Some(&0) {
        digits.pop();
    }
    let count = digits.len() as i32;
    out.push(b'l');
    let count = if sign == Sign::Minus { -count } else { count };
    out.extend_from_slice(&count.to_le_bytes());
    for d in digits {
        out.extend_from_slice(&d.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_marshalled_as_python_writes_them() {
        // The bytes of marshal.dumps(…, 2) on CPython 3.12, but for `u`, which it writes as
        // `\xfa` (short ASCII, 3.4 and later) and every reader loads as `u`.
        let text = |s: &str| Value::Text(s.into());
        assert_eq!(dumps(&text("é")), b"u\x02\x00\x00\x00\xc3\xa9");
        let int = |i: i64| dumps(&Value::Param(ParamValue::Int(BigInt::from(i))));
        assert_eq!(int(-2), b"i\xfe\xff\xff\xff");
        // marshal.dumps(2**31, 2): three 15-bit digits, 0, 0, 2.
        assert_eq!(int(1 << 31), b"l\x03\x00\x00\x00\x00\x00\x00\x00\x02\x00");
        assert_eq!(
            int(-(1 << 40)),
            b"l\xfd\xff\xff\xff\x00\x00\x00\x00\x00\x04"
        );
        let float = dumps(&Value::Param(ParamValue::Float(1.5)));
        assert_eq!(float, b"g\x00\x00\x00\x00\x00\x00\xf8\x3f");
        let dict = Value::Dict(vec![
            ("a".into(), Value::Param(ParamValue::Null)),
            ("b".into(), Value::Dict(vec![])),
        ]);
        assert_eq!(dumps(&dict), b"{u\x01\x00\x00\x00aNu\x01\x00\x00\x00b{00");
    }
}
