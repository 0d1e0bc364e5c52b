//! A pickle replayed as the unpickler's stack would take it, without building anything: which
//! opcodes built each object, of what type, and what each memo read reads. From that, the
//! pickle *written out*: every memo read replaced by the opcodes that built what it reads, the
//! memo writes and the framing left out. Two picklers' pickles of one value that are the same
//! written out differ in their memo alone, and where one of them reads an object the other
//! writes again is found by walking the two side by side, opcode by opcode: no alignment of
//! the two is guessed. That object's type names a parity finding's memo cause
//! (`parity_cause.rs`): `text` for the escaped copy of a text that 3.12's `pickle.py` memoizes
//! at protocol 0 in place of the text itself.

use std::collections::HashMap;

use super::stream::{memo_index, name, text};

/// The most opcodes a pickle is written out to: shared objects inside shared objects double
/// with each level; past this the pickle is not written out.
const MOST: usize = 200_000;

/// One object on the stack: the opcodes that built it (`start..=end`, its fills and `BUILD`
/// included), its type, and for a text or a global what it holds (a global's
/// `module.qualname`).
#[derive(Debug, Clone)]
struct Object {
    start: usize,
    end: usize,
    kind: &'static str,
    text: Option<String>,
}

/// What the stack holds: a mark (at this opcode) or an object.
#[derive(Debug, Clone, Copy)]
enum Slot {
    Mark(usize),
    Object(usize),
}

/// A pickle replayed: its opcodes, the objects they built, and for each memo read (by its
/// opcode's position) the object it reads.
#[derive(Debug)]
struct Replay<'p> {
    ops: &'p [Vec<u8>],
    objects: Vec<Object>,
    reads: HashMap<usize, usize>,
}

/// One opcode of a pickle written out, and the object of the outermost memo read it was
/// written out of (none where the pickler wrote it itself).
type Written<'a> = (Out<'a>, Option<usize>);

/// What a pickle is written out to: its opcodes, and for a read of an object not yet made
/// (a cycle) how many opcodes back that object starts, which is the same in two pickles the
/// same written out whatever their memo's numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Out<'a> {
    Op(&'a [u8]),
    Back(usize),
}

impl Out<'_> {
    /// The opcode: a read back as a `GET` of its distance.
    fn bytes(&self) -> Vec<u8> {
        match self {
            Out::Op(op) => op.to_vec(),
            Out::Back(n) => format!("g{n}\n").into_bytes(),
        }
    }
}

/// How two picklers' pickles of one value compare, written out.
#[derive(Debug, PartialEq, Eq)]
pub enum Compared {
    /// One of them does not replay (an opcode that is none, a stack that runs short), or
    /// written out it is too long.
    Unknown,
    /// Written out they differ: more than the memo does.
    Apart { c: Vec<Vec<u8>>, py: Vec<Vec<u8>> },
    /// Written out they are the same, and read from their memos alike.
    Alike,
    /// Written out they are the same; the first object one reads from its memo where the
    /// other writes it again: which (`c` or `py`) reads it, and its type.
    Shared {
        reader: &'static str,
        kind: &'static str,
    },
}

/// The C pickler's pickle `c` and the Python pickler's `py` of one value (each cut into its
/// opcodes, `stream::split`), written out and walked side by side.
pub fn compare(c: &[Vec<u8>], py: &[Vec<u8>]) -> Compared {
    let (Some(rc), Some(rpy)) = (Replay::of(c), Replay::of(py)) else {
        return Compared::Unknown;
    };
    let (Some(wc), Some(wpy)) = (rc.written(), rpy.written()) else {
        return Compared::Unknown;
    };
    let same = wc.len() == wpy.len() && wc.iter().zip(&wpy).all(|(a, b)| a.0 == b.0);
    if !same {
        let owned = |w: &[Written]| w.iter().map(|(op, _)| op.bytes()).collect();
        return Compared::Apart {
            c: owned(&wc),
            py: owned(&wpy),
        };
    }
    let first = wc
        .iter()
        .zip(&wpy)
        .find(|(a, b)| a.1.is_some() != b.1.is_some());
    match first {
        Some(((_, Some(read)), _)) => Compared::Shared {
            reader: "c",
            kind: rc.objects[*read].kind,
        },
        Some((_, (_, Some(read)))) => Compared::Shared {
            reader: "py",
            kind: rpy.objects[*read].kind,
        },
        _ => Compared::Alike,
    }
}

impl<'p> Replay<'p> {
    /// The pickle of these opcodes replayed, or none where it does not replay.
    fn of(ops: &'p [Vec<u8>]) -> Option<Replay<'p>> {
        let mut objects: Vec<Object> = Vec::new();
        let mut stack: Vec<Slot> = Vec::new();
        let mut memo: HashMap<u64, usize> = HashMap::new();
        let mut reads = HashMap::new();
        for (i, op) in ops.iter().enumerate() {
            let op_name = name(op);
            let new = |objects: &mut Vec<Object>, start, kind, text| {
                objects.push(Object {
                    start,
                    end: i,
                    kind,
                    text,
                });
                Slot::Object(objects.len() - 1)
            };
            match op_name {
                "PROTO" | "FRAME" | "STOP" => {}
                "MARK" => stack.push(Slot::Mark(i)),
                "POP" => {
                    stack.pop()?;
                }
                "POP_MARK" => {
                    to_mark(&mut stack)?;
                }
                "DUP" => stack.push(Slot::Object(top(&stack)?)),
                "PUT" | "BINPUT" | "LONG_BINPUT" => {
                    memo.insert(memo_index(op)?, top(&stack)?);
                }
                "MEMOIZE" => {
                    memo.insert(memo.len() as u64, top(&stack)?);
                }
                "GET" | "BINGET" | "LONG_BINGET" => {
                    let read = *memo.get(&memo_index(op)?)?;
                    reads.insert(i, read);
                    let (kind, text) = (objects[read].kind, objects[read].text.clone());
                    let slot = new(&mut objects, i, kind, text);
                    stack.push(slot);
                }
                "TUPLE" | "LIST" | "DICT" | "FROZENSET" | "INST" | "OBJ" => {
                    let (mark, _) = to_mark(&mut stack)?;
                    let slot = new(&mut objects, mark, built(op_name), None);
                    stack.push(slot);
                }
                "APPENDS" | "SETITEMS" | "ADDITEMS" => {
                    to_mark(&mut stack)?;
                    objects[top(&stack)?].end = i;
                }
                "APPEND" | "SETITEM" | "BUILD" | "READONLY_BUFFER" => {
                    pop(&mut stack, taken(op_name))?;
                    objects[top(&stack)?].end = i;
                }
                "TUPLE1" | "TUPLE2" | "TUPLE3" | "BINPERSID" => {
                    let items = pop(&mut stack, taken(op_name))?;
                    let start = objects[items[0]].start;
                    let slot = new(&mut objects, start, built(op_name), None);
                    stack.push(slot);
                }
                "REDUCE" | "NEWOBJ" | "NEWOBJ_EX" => {
                    let callable = &objects[pop(&mut stack, taken(op_name))?[0]];
                    let (start, kind) = (callable.start, reduced(callable.text.as_deref()));
                    let slot = new(&mut objects, start, kind, None);
                    stack.push(slot);
                }
                "STACK_GLOBAL" => {
                    let names = pop(&mut stack, taken(op_name))?;
                    let (module, qualname) = (&objects[names[0]], &objects[names[1]]);
                    let global = match (&module.text, &qualname.text) {
                        (Some(m), Some(q)) => Some(format!("{m}.{q}")),
                        _ => None,
                    };
                    let start = module.start;
                    let slot = new(&mut objects, start, "global", global);
                    stack.push(slot);
                }
                "GLOBAL" => {
                    let arg = String::from_utf8_lossy(op.get(1..).unwrap_or_default());
                    let mut lines = arg.lines();
                    let global = format!("{}.{}", lines.next()?, lines.next()?);
                    let slot = new(&mut objects, i, "global", Some(global));
                    stack.push(slot);
                }
                _ => {
                    let kind = scalar(op_name)?;
                    let slot = new(&mut objects, i, kind, text(op));
                    stack.push(slot);
                }
            }
        }
        Some(Replay {
            ops,
            objects,
            reads,
        })
    }

    /// The pickle written out: every memo read replaced by the opcodes of what it reads (a
    /// read of an object inside its own opcodes, a cycle, kept as a read back to where that
    /// object starts), each opcode with the object of the outermost read it came from; memo
    /// writes and framing left out. None past [`MOST`] opcodes.
    fn written(&self) -> Option<Vec<Written<'_>>> {
        let mut writing = Writing::default();
        self.write(0, self.ops.len(), None, &mut writing)?;
        Some(writing.out)
    }

    /// Opcodes `from..to` written out; `outer` the outermost read they came from.
    fn write<'a>(
        &'a self,
        from: usize,
        to: usize,
        outer: Option<usize>,
        writing: &mut Writing<'a>,
    ) -> Option<()> {
        for i in from..to {
            let op = self.ops[i].as_slice();
            if matches!(
                name(op),
                "PROTO" | "FRAME" | "PUT" | "BINPUT" | "LONG_BINPUT" | "MEMOIZE"
            ) {
                continue;
            }
            let object = |read: usize| &self.objects[read];
            match self.reads.get(&i) {
                // A read inside what it reads is of an object not yet made: kept as the read.
                Some(&read)
                    if !writing.open.contains(&read)
                        && !(object(read).start..=object(read).end).contains(&i) =>
                {
                    let object = object(read);
                    writing.open.push(read);
                    let outer = outer.or(Some(read));
                    self.write(object.start, object.end + 1, outer, writing)?;
                    writing.open.pop();
                }
                Some(&read) => {
                    let start = writing.at.get(&object(read).start).copied();
                    let back = writing.out.len() - start.unwrap_or(0);
                    writing.out.push((Out::Back(back), outer));
                }
                None => {
                    writing.at.insert(i, writing.out.len());
                    writing.out.push((Out::Op(op), outer));
                }
            }
            if writing.out.len() > MOST {
                return None;
            }
        }
        Some(())
    }
}

/// A pickle being written out: the opcodes so far, the objects whose reads are being written
/// out (a read of one of them is kept as a read back), and where each opcode was last written.
#[derive(Debug, Default)]
struct Writing<'a> {
    out: Vec<Written<'a>>,
    open: Vec<usize>,
    at: HashMap<usize, usize>,
}

/// The object on top of the stack.
fn top(stack: &[Slot]) -> Option<usize> {
    match stack.last()? {
        Slot::Object(o) => Some(*o),
        Slot::Mark(_) => None,
    }
}

/// The top `n` objects taken off the stack, the deepest first.
fn pop(stack: &mut Vec<Slot>, n: usize) -> Option<Vec<usize>> {
    let at = stack.len().checked_sub(n)?;
    stack
        .drain(at..)
        .map(|s| match s {
            Slot::Object(o) => Some(o),
            Slot::Mark(_) => None,
        })
        .collect()
}

/// The objects above the topmost mark and the mark taken off the stack: the mark's opcode and
/// the objects.
fn to_mark(stack: &mut Vec<Slot>) -> Option<(usize, Vec<usize>)> {
    let at = stack.iter().rposition(|s| matches!(s, Slot::Mark(_)))?;
    let Slot::Mark(mark) = stack[at] else {
        return None;
    };
    let objects = pop(stack, stack.len() - at - 1)?;
    stack.pop();
    Some((mark, objects))
}

/// How many objects an opcode that takes a fixed number of them takes from the stack (what
/// it fills, or builds on, stays).
fn taken(op: &str) -> usize {
    match op {
        "READONLY_BUFFER" => 0,
        "SETITEM" | "TUPLE2" | "REDUCE" | "NEWOBJ" | "STACK_GLOBAL" => 2,
        "TUPLE3" | "NEWOBJ_EX" => 3,
        _ => 1,
    }
}

/// The type of what a building opcode builds.
fn built(op: &str) -> &'static str {
    match op {
        "TUPLE" | "TUPLE1" | "TUPLE2" | "TUPLE3" => "tuple",
        "LIST" => "list",
        "DICT" => "dict",
        "FROZENSET" => "frozenset",
        "BINPERSID" => "persistent",
        _ => "object",
    }
}

/// The type of what a reduction by `global` builds: a builtin type by its name (`bytes` for
/// `_codecs.encode`, how protocols 0 to 2 write a bytes), anything else `object`.
fn reduced(global: Option<&str>) -> &'static str {
    match global.unwrap_or_default() {
        "_codecs.encode" => "bytes",
        "builtins.bytearray" | "__builtin__.bytearray" => "bytearray",
        "builtins.set" | "__builtin__.set" => "set",
        "builtins.frozenset" | "__builtin__.frozenset" => "frozenset",
        "builtins.complex" | "__builtin__.complex" => "complex",
        _ => "object",
    }
}

/// The type an opcode that takes nothing from the stack pushes; none for an opcode that is
/// none (or one this replay does not know).
fn scalar(op: &str) -> Option<&'static str> {
    Some(match op {
        "INT" | "BININT" | "BININT1" | "BININT2" | "LONG" | "LONG1" | "LONG4" => "int",
        "FLOAT" | "BINFLOAT" => "float",
        "NONE" => "none",
        "NEWTRUE" | "NEWFALSE" => "bool",
        "STRING" | "BINSTRING" | "SHORT_BINSTRING" => "string",
        "UNICODE" | "BINUNICODE" | "SHORT_BINUNICODE" | "BINUNICODE8" => "text",
        "BINBYTES" | "SHORT_BINBYTES" | "BINBYTES8" => "bytes",
        "BYTEARRAY8" => "bytearray",
        "EMPTY_TUPLE" => "tuple",
        "EMPTY_LIST" => "list",
        "EMPTY_DICT" => "dict",
        "EMPTY_SET" => "set",
        "EXT1" | "EXT2" | "EXT4" => "global",
        "PERSID" => "persistent",
        "NEXT_BUFFER" => "buffer",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::stream::split;

    /// Two pickles compared as they are written.
    fn compare(c: &[u8], py: &[u8]) -> Compared {
        super::compare(&split(c), &split(py))
    }

    fn shared(reader: &'static str, kind: &'static str) -> Compared {
        Compared::Shared { reader, kind }
    }

    /// 3.12's `pickle.py` at protocol 0 memoizes the escaped copy of a text: the C pickler
    /// reads the text itself from its memo where the Python one writes it again, one opcode
    /// after the two first differ and again at the end.
    #[test]
    fn the_text_3_12_writes_again_is_read_by_the_c_pickler() {
        assert_eq!(
            compare(
                b"(dV\nV\\u000a\np0\nsc_codecs\nencode\n(g0\nVlatin1\ntRF2.2e-308\ns.",
                b"(dV\nV\\u000a\nsc_codecs\nencode\n(V\\u000a\nVlatin1\ntRF2.2e-308\ns."
            ),
            shared("c", "text")
        );
        assert_eq!(
            compare(
                b"(lc_codecs\nencode\n(V\\u0000\np0\nVlatin1\ntRag0\na.",
                b"(lc_codecs\nencode\n(V\\u0000\nVlatin1\ntRaV\\u0000\na."
            ),
            shared("c", "text")
        );
    }

    /// The type is what the read reads, whatever the value holds besides and whichever
    /// opcode the two first differ at: PyPy 8's C pickler reads a bytes (protocol 4) and the
    /// bytes a reduction made (protocol 2); its Python pickler reads a complex where the C one
    /// reads only the global that makes it.
    #[test]
    fn the_type_is_that_of_the_object_read() {
        assert_eq!(
            compare(
                b"\x80\x04\x95\n\x00\x00\x00\x00\x00\x00\x00}C\x02\xff\xfe\x94h\x00s.",
                b"\x80\x04\x95\x0b\x00\x00\x00\x00\x00\x00\x00}C\x02\xff\xfeC\x02\xff\xfes."
            ),
            shared("c", "bytes")
        );
        assert_eq!(
            compare(
                b"\x80\x02}c_codecs\nencode\nX\x04\x00\x00\x00\xc3\xbf\xc3\xbeX\x06\x00\x00\x00latin1\x86Rq\x00h\x00s.",
                b"\x80\x02}c_codecs\nencode\nq\x00X\x04\x00\x00\x00\xc3\xbf\xc3\xbeX\x06\x00\x00\x00latin1q\x01\x86Rh\x00X\x04\x00\x00\x00\xc3\xbf\xc3\xbeh\x01\x86Rs."
            ),
            shared("c", "bytes")
        );
        let complex = b"G\xff\xf0\x00\x00\x00\x00\x00\x00GCA\xc3y7\xe0\x80\x00\x86R";
        let c = [
            b"\x80\x02](c__builtin__\ncomplex\nq\x00".as_slice(),
            complex,
            b"h\x00",
            complex,
            b"e.",
        ]
        .concat();
        let py = [
            b"\x80\x02](c__builtin__\ncomplex\n".as_slice(),
            complex,
            b"q\x00h\x00e.",
        ]
        .concat();
        assert_eq!(compare(&c, &py), shared("py", "complex"));
    }

    /// Where the two are other objects written out, it is more than the memo: a frozenset's
    /// items in a tuple and in a list, each pickler reading the global from its memo at
    /// another place.
    #[test]
    fn objects_that_differ_are_apart_however_the_memo_is_read() {
        let compared = compare(
            b"\x80\x02c__builtin__\nfrozenset\nq\x00h\x00)\x85R\x85\x85R.",
            b"\x80\x02c__builtin__\nfrozenset\nq\x00]h\x00]\x85Ra\x85R.",
        );
        let Compared::Apart { c, py } = compared else {
            panic!("apart: {compared:?}");
        };
        // Written out: the global twice in each, no memo opcode.
        let names = |ops: &[Vec<u8>]| ops.iter().map(|o| name(o)).collect::<Vec<_>>();
        assert_eq!(
            names(&c),
            [
                "GLOBAL",
                "GLOBAL",
                "EMPTY_TUPLE",
                "TUPLE1",
                "REDUCE",
                "TUPLE1",
                "TUPLE1",
                "REDUCE",
                "STOP"
            ]
        );
        assert_eq!(
            names(&py),
            [
                "GLOBAL",
                "EMPTY_LIST",
                "GLOBAL",
                "EMPTY_LIST",
                "TUPLE1",
                "REDUCE",
                "APPEND",
                "TUPLE1",
                "REDUCE",
                "STOP"
            ]
        );
    }

    /// A list memoized when it is made and filled after: read again, it is written out with
    /// its items; a list that holds itself is written out with the read of itself kept.
    #[test]
    fn a_read_is_written_out_whole_and_a_cycle_as_the_read() {
        let c = b"\x80\x02](]q\x00(K\x01K\x02eh\x00e.";
        let py = b"\x80\x02](](K\x01K\x02e](K\x01K\x02ee.";
        assert_eq!(compare(c, py), shared("c", "list"));
        let cycle = b"\x80\x02]q\x00h\x00a.";
        assert_eq!(compare(cycle, cycle), Compared::Alike);
        let ops = split(cycle);
        let Some(written) = Replay::of(&ops).and_then(|r| {
            r.written()
                .map(|w| w.iter().map(|(op, _)| op.bytes()).collect::<Vec<_>>())
        }) else {
            panic!("replays");
        };
        assert_eq!(written, [&b"]"[..], b"g1\n", b"a", b"."]);
        // 2.7's cPickle numbers its memo from 1, its pickle.py from 0, and 2.7's optimize does
        // not renumber: a list that holds itself is alike whatever its memo's numbers.
        assert_eq!(compare(b"(lp1\ng1\na.", b"(lp0\ng0\na."), Compared::Alike);
    }

    /// What does not replay is unknown, not a panic: an opcode that is none, a read of what
    /// was never memoized, a stack that runs short, a mark where an object is taken.
    #[test]
    fn what_does_not_replay_is_unknown() {
        for bad in [
            b"\xff\xfe".as_slice(),
            b"\x80\x02h\x05.",
            b"\x80\x02R.",
            b"\x80\x02(\x85.",
            b"\x80\x02a.",
        ] {
            assert_eq!(compare(bad, b"\x80\x02N."), Compared::Unknown, "{bad:?}");
        }
    }
}
