//! The cause of a *parity* finding: what the C and the Python pickler of one interpreter chose
//! differently, read from their two pickles once optimized, and named so that the value's
//! items and arguments do not enter it. A frozenset whose items one pickler writes as a tuple
//! and the other as a list is `TUPLE/LIST` whatever its items are (ints, texts, none), and
//! however many (`TUPLE1`, `EMPTY_TUPLE` and `MARK … TUPLE` are one container). A global is
//! named by the module and qualified name it refers to (`GLOBAL copyreg._reconstructor`),
//! whichever opcode wrote it: `STACK_GLOBAL`'s two operands are read from the texts pushed
//! before it (or read from the memo), so that two picklers that chose different globals are
//! apart, and the same global written as `GLOBAL` and as `STACK_GLOBAL` is one. Where the two
//! pickles differ in their memo alone, the cause is the object one pickler reads from its memo
//! and the other writes again, by its type (`memo: c only, text`), as `replay.rs` finds it.

use std::collections::{BTreeSet, HashMap};

use super::replay::{self, Compared};
use super::stream::{memo_index, name, split, text};

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
type Family = fn(&Op) -> Option<String>;

/// One opcode as the tiers compare it: its name and bytes, and for a global (`GLOBAL`, or
/// `STACK_GLOBAL` whose two operands it stands for) the `module.qualname` it refers to.
#[derive(Debug, Clone)]
struct Op<'a> {
    name: &'static str,
    bytes: &'a [u8],
    global: Option<String>,
}

impl Op<'_> {
    /// What the opcode tier names it by: a global's opcode and what it refers to.
    fn shown(&self) -> String {
        match &self.global {
            Some(global) => format!("{} {global}", self.name),
            None => self.name.to_string(),
        }
    }

    /// The same opcode and argument (a global: the same opcode and the same global).
    fn same_as(&self, other: &Op) -> bool {
        self.name == other.name
            && self.global == other.global
            && (self.global.is_some() || self.bytes == other.bytes)
    }
}

/// Two opcodes one pickler wrote where the other wrote the same: the same global whichever
/// opcode wrote it, else the same bytes.
impl PartialEq for Op<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (&self.global, &other.global) {
            (Some(a), Some(b)) => a == b,
            (None, None) => self.bytes == other.bytes,
            _ => false,
        }
    }
}

/// A container, a reduction or a global, by what it builds: the one name of each family, a
/// global's with what it refers to.
fn structure(op: &Op) -> Option<String> {
    if let Some(global) = &op.global {
        return Some(format!("GLOBAL {global}"));
    }
    Some(
        match op.name {
            "TUPLE" | "TUPLE1" | "TUPLE2" | "TUPLE3" | "EMPTY_TUPLE" => "TUPLE",
            "LIST" | "EMPTY_LIST" => "LIST",
            "DICT" | "EMPTY_DICT" => "DICT",
            "EMPTY_SET" => "SET",
            "FROZENSET" => "FROZENSET",
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
        }
        .to_string(),
    )
}

/// A filling opcode, by its own name.
fn fill(op: &Op) -> Option<String> {
    FILLS.contains(&op.name).then(|| op.name.to_string())
}

/// The cause of the difference between the C pickler's pickle `c` and the Python pickler's
/// `py` (both optimized, their memo numbered alike), as `C/PY`:
/// - `memo: c only, text` or `memo: py only, bytes` where the two pickles are the same
///   written out (each memo read replaced by what it reads, `replay.rs`): the pickler that
///   reads from its memo an object the other writes again, and that object's type (the
///   first such object);
/// - `memo: c only` or `memo: py only` where they do not replay and, at the first opcode that
///   differs (framing left aside), one pickler writes to or reads from the memo and the other
///   does not;
/// - else (written out, where they replay) the containers and reductions each pickler wrote
///   that the other did not (`TUPLE/LIST`, `REDUCE/NEWOBJ`, `-` for none), by family and
///   without their arguments;
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
    let (a, b) = match replay::compare(&a, &b) {
        Compared::Shared { reader, kind } => return format!("memo: {reader} only, {kind}"),
        // More than the memo differs: what each wrote, its memo reads written out.
        Compared::Apart { c, py } => (c, py),
        Compared::Alike | Compared::Unknown => {
            if let Some(which) = memo_only(x, y) {
                return format!("memo: {which} only");
            }
            (a, b)
        }
    };
    let (a, b) = (chosen(&resolved(&a)), chosen(&resolved(&b)));
    let (only_c, only_py) = unmatched(&a, &b);
    for pick in [structure as Family, fill] {
        let kept = |ops: &[Op]| -> BTreeSet<String> { ops.iter().filter_map(pick).collect() };
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
    match a.iter().zip(&b).find(|(p, q)| !p.same_as(q)) {
        Some((p, q)) => named(&p.shown(), &q.shown()),
        None if a.len() > b.len() => named(&a[b.len()].shown(), "end"),
        None if a.len() < b.len() => named("end", &b[a.len()].shown()),
        // They differ only in what no pickler chooses.
        None => named(x, y),
    }
}

/// Whether a parity cause names the object one pickler reads from its memo where the other
/// writes it again (`memo: c only, text`): one cause however many values show it, so that a
/// finding of it on fewer interpreters is within one on more, as a finding raised at the same
/// places is (`explore::within`).
pub fn names_what_is_shared(cause: &str) -> bool {
    cause.starts_with("memo: ") && cause.contains(" only, ")
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
fn chosen<'a>(ops: &[Op<'a>]) -> Vec<Op<'a>> {
    ops.iter()
        .filter(|op| !IGNORED.contains(&op.name))
        .cloned()
        .collect()
}

/// `ops` with each global named: `GLOBAL`'s `module\nname\n` as `module.name`, and
/// `STACK_GLOBAL` as the two texts pushed before it (each its opcode or a memo read of one,
/// memo writes and framing between them passed over), which it takes the place of; `?` where
/// they are not texts.
fn resolved(ops: &[Vec<u8>]) -> Vec<Op<'_>> {
    const BESIDE: &[&str] = &["PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE", "FRAME"];
    // Each op with the text it pushes, if any.
    let mut out: Vec<(Op, Option<String>)> = Vec::with_capacity(ops.len());
    // What each memo index holds, where it is a text.
    let mut memo: HashMap<u64, Option<String>> = HashMap::new();
    for op in ops {
        let name = name(op);
        // The text on top of the stack, pushed by the last opcode that pushed anything.
        let top = || {
            out.iter()
                .rev()
                .find(|(o, _)| !BESIDE.contains(&o.name))
                .and_then(|(_, t)| t.clone())
        };
        let (mut global, mut pushed) = (None, None);
        match name {
            "PUT" | "BINPUT" | "LONG_BINPUT" => {
                let t = top();
                memo.insert(memo_index(op).unwrap_or(u64::MAX), t);
            }
            "MEMOIZE" => {
                let t = top();
                memo.insert(memo.len() as u64, t);
            }
            "GET" | "BINGET" | "LONG_BINGET" => {
                pushed = memo_index(op).and_then(|i| memo.get(&i).cloned().flatten());
            }
            "GLOBAL" => {
                let arg = String::from_utf8_lossy(op.get(1..).unwrap_or_default()).into_owned();
                let mut lines = arg.lines();
                let module = lines.next().unwrap_or("?");
                let qualname = lines.next().unwrap_or("?");
                global = Some(format!("{module}.{qualname}"));
            }
            "STACK_GLOBAL" => {
                // The two pushes before it, memo writes and framing aside.
                let at: Vec<usize> = (0..out.len())
                    .rev()
                    .filter(|&i| !BESIDE.contains(&out[i].0.name))
                    .take(2)
                    .collect();
                let texts: Vec<String> = at.iter().filter_map(|&i| out[i].1.clone()).collect();
                global = Some(match texts.as_slice() {
                    [qualname, module] => {
                        let target = format!("{module}.{qualname}");
                        for &i in &at {
                            out.remove(i);
                        }
                        target
                    }
                    _ => "?".into(),
                });
            }
            _ => pushed = text(op),
        }
        let op = Op {
            name,
            bytes: op,
            global,
        };
        out.push((op, pushed));
    }
    out.into_iter().map(|(op, _)| op).collect()
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
fn names(set: &BTreeSet<String>) -> String {
    if set.is_empty() {
        "-".into()
    } else {
        set.iter().cloned().collect::<Vec<_>>().join("+")
    }
}

/// The opcodes (with their arguments) of `a` and of `b` that a longest common subsequence of
/// the two leaves out: what one pickler wrote and the other did not. Past a size where that
/// costs too much, all of what lies between their common start and end.
fn unmatched<T: PartialEq + Clone>(a: &[T], b: &[T]) -> (Vec<T>, Vec<T>) {
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
            only_a.push(a[i].clone());
            i += 1;
        } else {
            only_b.push(b[j].clone());
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
            "memo: c only, bytes"
        );
        assert_eq!(
            cause(
                b"\x80\x04\x95/\x00\x00\x00\x00\x00\x00\x00\x8c\x05array\x94\x8c\x14_array_reconstructor\x93(h\x00h\x00\x93\x8c\x01dK\x10C\x00tR.",
                b"\x80\x04\x954\x00\x00\x00\x00\x00\x00\x00\x8c\x05array\x94\x8c\x14_array_reconstructor\x93(\x8c\x05arrayh\x00\x93\x8c\x01dK\x10C\x00tR."
            ),
            "memo: c only, text"
        );
        // CPython 3.12 at protocol 0: the C pickler reads from its memo the text the Python
        // one writes again at the end (having memoized its escaped copy).
        assert_eq!(
            cause(
                b"(lc_codecs\nencode\n(V\\u0000\np0\nVlatin1\ntRag0\na.",
                b"(lc_codecs\nencode\n(V\\u0000\nVlatin1\ntRaV\\u0000\na."
            ),
            "memo: c only, text"
        );
        // The same with a read of what was never memoized: it does not replay, and the memo
        // is named where the two first differ, without a type.
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

    /// A protocol 4 pickle of a reduction by `module.qualname` (two texts, memoized, then
    /// `STACK_GLOBAL`), with `rest` after it.
    fn stacked(module: &[u8], qualname: &[u8], rest: &[u8]) -> Vec<u8> {
        let text = |t: &[u8]| [&[0x8c, t.len() as u8][..], t, b"\x94"].concat();
        [
            b"\x80\x04".as_slice(),
            &text(module),
            &text(qualname),
            b"\x93",
            rest,
        ]
        .concat()
    }

    /// Two picklers that reduce with different globals are apart, each global named by its
    /// module and qualified name, whether written by `GLOBAL` or `STACK_GLOBAL` (its module
    /// read from the memo, or pushed again), whatever the arguments.
    #[test]
    fn different_globals_are_apart_and_named() {
        let global = |f: &[u8], rest: &[u8]| [b"\x80\x02cm\n".as_slice(), f, b"\n", rest].concat();
        assert_eq!(
            cause(&global(b"f", b")R."), &global(b"g", b")R.")),
            "GLOBAL m.f/GLOBAL m.g"
        );
        assert_eq!(
            cause(&global(b"f", b"K\x01\x85R."), &global(b"h", b"K\x01\x85R.")),
            "GLOBAL m.f/GLOBAL m.h"
        );
        for rest in [b")R.".as_slice(), b"K\x01\x85R.", b"]\x85R."] {
            assert_eq!(
                cause(&stacked(b"m", b"f", rest), &stacked(b"m", b"g", rest)),
                "GLOBAL m.f/GLOBAL m.g",
                "{rest:?}"
            );
            assert_eq!(
                cause(&stacked(b"m", b"f", rest), &stacked(b"n", b"f", rest)),
                "GLOBAL m.f/GLOBAL n.f"
            );
        }
        // Two globals of one module, the second one's module read from the memo (where one
        // pickler alone reads it, the memo is the cause).
        let second = |via: &[u8], f: &[u8]| {
            let rest = [via, b"\x8c\x01", f, b"\x93)R\x86."].concat();
            [stacked(b"m", b"a", b"\x94"), rest].concat()
        };
        assert_eq!(
            cause(&second(b"h\x00", b"f"), &second(b"h\x00", b"g")),
            "GLOBAL m.f/GLOBAL m.g"
        );
        assert_eq!(
            cause(&second(b"h\x00", b"f"), &second(b"\x8c\x01m", b"f")),
            "memo: c only, text"
        );
        // A texts' push that is no global's operand is still a text (`SHORT_BINUNICODE`).
        assert_eq!(
            cause(
                &stacked(b"m", b"f", b"\x8c\x01a\x85R."),
                &stacked(b"m", b"f", b"\x8c\x01b\x85R.")
            ),
            "SHORT_BINUNICODE"
        );
    }

    /// The same global written as `GLOBAL` by one pickler and as `STACK_GLOBAL` by the other
    /// is one cause whatever follows it; beside another choice, that choice is named.
    #[test]
    fn one_global_by_two_opcodes_is_one_cause() {
        for rest in [
            b")R.".as_slice(),
            b"K\x01\x85R.",
            b"(X\x01\x00\x00\x00aK\x02tR.",
        ] {
            let c = [b"\x80\x04cm\nf\n".as_slice(), rest].concat();
            assert_eq!(
                cause(&c, &stacked(b"m", b"f", rest)),
                "GLOBAL m.f/STACK_GLOBAL m.f",
                "{rest:?}"
            );
        }
        assert_eq!(
            cause(b"\x80\x04cm\nf\n)R.", &stacked(b"m", b"f", b")\x81.")),
            "REDUCE/NEWOBJ"
        );
    }
}
