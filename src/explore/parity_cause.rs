//! The cause of a *parity* finding: what the C and the Python pickler of one interpreter chose
//! differently, read from their two pickles once optimized, and named so that the value's
//! items and arguments do not enter it. A frozenset whose items one pickler writes as a tuple
//! and the other as a list is `TUPLE/LIST` whatever its items are (ints, texts, none), and
//! however many (`TUPLE1`, `EMPTY_TUPLE` and `MARK … TUPLE` are one container).

use std::collections::BTreeSet;

use super::stream::{name, split};

/// The opcodes a pickle's memo is written with.
const MEMO_WRITES: &[&str] = &["PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE"];

/// The opcodes a pickle's memo is read with.
const MEMO_READS: &[&str] = &["GET", "BINGET", "LONG_BINGET"];

/// What no pickler chooses for a value: framing, the protocol, the end, stack marks and memo
/// reads (a memo written by one pickler alone is named before these are dropped).
const IGNORED: &[&str] = &[
    "PROTO",
    "FRAME",
    "STOP",
    "MARK",
    "POP",
    "POP_MARK",
    "DUP",
    "GET",
    "BINGET",
    "LONG_BINGET",
    "PUT",
    "BINPUT",
    "LONG_BINPUT",
    "MEMOIZE",
];

/// The opcodes that fill a container already built: how a pickler batches, not what it built.
const FILLS: &[&str] = &["APPEND", "APPENDS", "SETITEM", "SETITEMS", "ADDITEMS"];

/// An opcode's family, or none where it is not of those a tier compares.
type Family = fn(&str) -> Option<&'static str>;

/// A filling opcode, by its own name.
fn fill(op: &str) -> Option<&'static str> {
    FILLS.iter().find(|f| **f == op).copied()
}

/// A container or a reduction, by what it builds: the one name of each family.
fn structure(op: &str) -> Option<&'static str> {
    Some(match op {
        "TUPLE" | "TUPLE1" | "TUPLE2" | "TUPLE3" | "EMPTY_TUPLE" => "TUPLE",
        "LIST" | "EMPTY_LIST" => "LIST",
        "DICT" | "EMPTY_DICT" => "DICT",
        "EMPTY_SET" => "SET",
        "FROZENSET" => "FROZENSET",
        "GLOBAL" | "STACK_GLOBAL" => "GLOBAL",
        "EXT1" | "EXT2" | "EXT4" => "EXT",
        "PERSID" | "BINPERSID" => "PERSID",
        "REDUCE" => "REDUCE",
        "BUILD" => "BUILD",
        "NEWOBJ" => "NEWOBJ",
        "NEWOBJ_EX" => "NEWOBJ_EX",
        "INST" => "INST",
        "OBJ" => "OBJ",
        "NEXT_BUFFER" => "NEXT_BUFFER",
        "READONLY_BUFFER" => "READONLY_BUFFER",
        _ => return None,
    })
}

/// The cause of the difference between the C pickler's pickle `c` and the Python pickler's
/// `py` (both optimized, their memo numbered alike), as `C/PY`:
/// - `memo: c only` or `memo: py only` where, at the first opcode that differs (framing left
///   aside), one pickler writes to or reads from the memo and the other does not (it writes
///   the object again), whatever that object is;
/// - else the containers and reductions each pickler wrote that the other did not (`TUPLE/LIST`,
///   `REDUCE/NEWOBJ`, `-` for none), by family and without their arguments;
/// - else the filling opcodes each wrote that the other did not (`APPEND/APPENDS`);
/// - else the first opcodes that differ, by name (`FLOAT` where only the argument does,
///   `BININT/LONG1`);
/// - `bytes` where the opcodes are the same.
pub fn cause(c: &[u8], py: &[u8]) -> String {
    let (a, b) = (split(c), split(py));
    let (fa, fb) = (unframed(&a), unframed(&b));
    let Some(first) = fa.iter().zip(&fb).position(|(x, y)| x != y).or_else(|| {
        // One is the other and more.
        (fa.len() != fb.len()).then_some(fa.len().min(fb.len()))
    }) else {
        return "bytes".into();
    };
    let at = |ops: &[&[u8]]| ops.get(first).map_or("end", |op| name(op));
    let (x, y) = (at(&fa), at(&fb));
    if let Some(which) = memo_only(x, y) {
        return format!("memo: {which} only");
    }
    let (a, b) = (chosen(&a), chosen(&b));
    let (only_c, only_py) = unmatched(&a, &b);
    for pick in [structure as Family, fill] {
        let kept = |ops: &[&[u8]]| -> BTreeSet<&'static str> {
            ops.iter().filter_map(|op| pick(name(op))).collect()
        };
        let (sc, sp) = (kept(&only_c), kept(&only_py));
        if sc != sp {
            return format!("{}/{}", names(&sc), names(&sp));
        }
    }
    let named = |x: &str, y: &str| {
        if x == y {
            x.to_string()
        } else {
            format!("{x}/{y}")
        }
    };
    match a.iter().zip(&b).find(|(p, q)| p != q) {
        Some((p, q)) => named(name(p), name(q)),
        None if a.len() > b.len() => named(name(a[b.len()]), "end"),
        None if a.len() < b.len() => named("end", name(b[a.len()])),
        // They differ only in what no pickler chooses.
        None => named(x, y),
    }
}

/// A pickle's opcodes but its framing, which is no choice: a frame's length differs wherever
/// anything inside it does.
fn unframed(ops: &[Vec<u8>]) -> Vec<&[u8]> {
    ops.iter()
        .map(Vec::as_slice)
        .filter(|op| !matches!(name(op), "PROTO" | "FRAME"))
        .collect()
}

/// A pickle's opcodes but those no pickler chooses for a value.
fn chosen(ops: &[Vec<u8>]) -> Vec<&[u8]> {
    ops.iter()
        .map(Vec::as_slice)
        .filter(|op| !IGNORED.contains(&name(op)))
        .collect()
}

/// Which pickler alone uses its memo where the two first differ at `x` (the C pickler's
/// opcode) and `y`: the one that writes to it where the other does not, else the one that
/// reads from it where the other neither reads nor writes (it writes the object again).
fn memo_only(x: &str, y: &str) -> Option<&'static str> {
    let (wx, wy) = (MEMO_WRITES.contains(&x), MEMO_WRITES.contains(&y));
    let (rx, ry) = (MEMO_READS.contains(&x), MEMO_READS.contains(&y));
    match () {
        _ if wx && !wy => Some("c"),
        _ if wy && !wx => Some("py"),
        _ if rx && !ry && !wy => Some("c"),
        _ if ry && !rx && !wx => Some("py"),
        _ => None,
    }
}

/// Sorted names joined by `+`, `-` for none.
fn names(set: &BTreeSet<&str>) -> String {
    if set.is_empty() {
        "-".into()
    } else {
        set.iter().copied().collect::<Vec<_>>().join("+")
    }
}

/// The opcodes (with their arguments) of `a` and of `b` that a longest common subsequence of
/// the two leaves out: what one pickler wrote and the other did not. Past a size where that
/// costs too much, all of what lies between their common start and end.
fn unmatched<'a>(a: &[&'a [u8]], b: &[&'a [u8]]) -> (Vec<&'a [u8]>, Vec<&'a [u8]>) {
    const MOST: usize = 4_000_000;
    let start = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let end = a[start..]
        .iter()
        .rev()
        .zip(b[start..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a, b) = (&a[start..a.len() - end], &b[start..b.len() - end]);
    if a.len().saturating_mul(b.len()) > MOST {
        return (a.to_vec(), b.to_vec());
    }
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let width = b.len() + 1;
    let mut lcs = vec![0u32; (a.len() + 1) * width];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i * width + j] = if a[i] == b[j] {
                lcs[(i + 1) * width + j + 1] + 1
            } else {
                lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let (mut only_a, mut only_b) = (Vec::new(), Vec::new());
    while i < a.len() && j < b.len() {
        if a[i] == b[j] {
            i += 1;
            j += 1;
        } else if lcs[(i + 1) * width + j] >= lcs[i * width + j + 1] {
            only_a.push(a[i]);
            i += 1;
        } else {
            only_b.push(b[j]);
            j += 1;
        }
    }
    only_a.extend_from_slice(&a[i..]);
    only_b.extend_from_slice(&b[j..]);
    (only_a, only_b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A protocol 2 pickle of `frozenset` reduced with `args` (its opcodes between the global
    /// and `TUPLE1 REDUCE`).
    fn frozen(args: &[u8]) -> Vec<u8> {
        [b"\x80\x02c__builtin__\nfrozenset\n", args, b"\x85R."].concat()
    }

    /// The same at protocol 4, framed (the frame's length is the pickle's).
    fn framed(args: &[u8]) -> Vec<u8> {
        let body = [b"\x8c\x08builtins\x8c\tfrozenset\x93", args, b"\x85R."].concat();
        let mut out = b"\x80\x04\x95".to_vec();
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend(body);
        out
    }

    /// Items in a tuple for one pickler and in a list for the other are one cause, whatever
    /// the items, how many, and the protocol.
    #[test]
    fn a_tuple_for_a_list_is_one_cause_whatever_the_items() {
        let shapes: &[(&[u8], &[u8])] = &[
            (b")", b"]"),
            (b"K\x01K\x02\x86", b"](K\x01K\x02e"),
            (b"X\x01\x00\x00\x00a\x85", b"]X\x01\x00\x00\x00aa"),
            (
                b"(G?\xf8\x00\x00\x00\x00\x00\x00NK\x01K\x02t",
                b"](G?\xf8\x00\x00\x00\x00\x00\x00NK\x01K\x02e",
            ),
            (b"K\x01K\x02\x86\x85", b"]K\x01K\x02\x86a"),
        ];
        for (c, py) in shapes {
            assert_eq!(cause(&frozen(c), &frozen(py)), "TUPLE/LIST", "{c:?} {py:?}");
            assert_eq!(cause(&framed(c), &framed(py)), "TUPLE/LIST", "{c:?} {py:?}");
        }
        // Protocol 0: MARK … TUPLE against MARK LIST … APPEND.
        assert_eq!(
            cause(
                b"c__builtin__\nfrozenset\n((I1\nttR.".as_slice(),
                b"c__builtin__\nfrozenset\n((lI1\natR.".as_slice()
            ),
            "TUPLE/LIST"
        );
    }

    /// Two different causes stay apart: another reduction, a memo one pickler alone writes, a
    /// batching, an argument, an integer's opcode.
    #[test]
    fn different_causes_stay_apart() {
        let global = b"\x80\x02cm\nC\n".as_slice();
        let with = |rest: &[u8]| [global, rest].concat();
        assert_eq!(cause(&with(b")\x81."), &with(b")R.")), "NEWOBJ/REDUCE");
        assert_eq!(cause(b"\x80\x02]q\x00.", b"\x80\x02]."), "memo: c only");
        assert_eq!(cause(b"\x80\x02].", b"\x80\x02]q\x00."), "memo: py only");
        // PyPy 3.11's C pickler at protocol 4: a bytes memoized and read again, a module
        // name read from the memo, where the Python pickler writes them again; the frames'
        // lengths differ first.
        assert_eq!(
            cause(
                b"\x80\x04\x95\x0e\x00\x00\x00\x00\x00\x00\x00}(\x8c\x00NC\x02\xff\xfe\x94h\x00u.",
                b"\x80\x04\x95\x0f\x00\x00\x00\x00\x00\x00\x00}(\x8c\x00NC\x02\xff\xfeC\x02\xff\xfeu."
            ),
            "memo: c only"
        );
        assert_eq!(
            cause(
                b"\x80\x04\x95/\x00\x00\x00\x00\x00\x00\x00\x8c\x05array\x94\x8c\x14_array_reconstructor\x93(h\x00h\x00\x93\x8c\x01dK\x10C\x00tR.",
                b"\x80\x04\x954\x00\x00\x00\x00\x00\x00\x00\x8c\x05array\x94\x8c\x14_array_reconstructor\x93(\x8c\x05arrayh\x00\x93\x8c\x01dK\x10C\x00tR."
            ),
            "memo: c only"
        );
        // CPython 3.12 at protocol 0: the C pickler memoizes a text the Python one reads
        // from its memo an opcode later, and writes again at the end.
        assert_eq!(
            cause(
                b"(lc_codecs\nencode\np0\n(V\\u0000\np2\ng1\ntRag2\na.",
                b"(lc_codecs\nencode\np0\n(V\\u0000\ng1\ntRaV\\u0000\na."
            ),
            "memo: c only"
        );
        assert_eq!(
            cause(b"\x80\x02](K\x01K\x02e.", b"\x80\x02]K\x01aK\x02a."),
            "APPENDS/APPEND"
        );
        assert_eq!(
            cause(b"F1.0000000000000001e+300\n.", b"F1e+300\n."),
            "FLOAT",
            "only the argument differs"
        );
        assert_eq!(
            cause(b"\x80\x02K\x01.", b"\x80\x02\x8a\x01\x01."),
            "BININT1/LONG1"
        );
        assert_eq!(cause(b"\x80\x02K\x01.", b"\x80\x02K\x01."), "bytes");
        // A pickle that ends early, and bytes that are no opcode: a name, no panic.
        assert_eq!(cause(b"\x80\x02K\x01", b"\x80\x02K\x01."), "end/STOP");
        assert_eq!(cause(b"\xff\xfe", b"\x80\x02."), "?/end");
    }
}
