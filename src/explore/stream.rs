//! The byte streams of `explore --streams`: pickle opcodes and their arguments (the table of
//! pickletools, per protocol), a stream cut into its opcodes (so that a stream shrinks by
//! opcodes, not bytes), streams generated from a stack-typed grammar of opcodes per protocol
//! (mostly well formed, and the unusual: truncation, STOP with items left on the stack, memo
//! indices out of range, FRAME sizes that lie, EXT codes, `I01`-style integers, opcodes above
//! the declared PROTO) and streams mutated from real pickles. Seeded: the same seed and index
//! give the same stream on every machine.

use super::value::Rng;

/// How an opcode's argument is spelled after its byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arg {
    None,
    /// This many bytes.
    Fixed(usize),
    /// A line ending in `\n`.
    Line,
    /// Two such lines (GLOBAL, INST).
    Lines2,
    /// A little-endian length of this many bytes, then that many bytes.
    Counted(usize),
}

/// (byte, name, argument, protocol that introduced it).
const OPCODES: &[(u8, &str, Arg, u32)] = &[
    (b'(', "MARK", Arg::None, 0),
    (b'.', "STOP", Arg::None, 0),
    (b'0', "POP", Arg::None, 0),
    (b'1', "POP_MARK", Arg::None, 0),
    (b'2', "DUP", Arg::None, 0),
    (b'F', "FLOAT", Arg::Line, 0),
    (b'I', "INT", Arg::Line, 0),
    (b'L', "LONG", Arg::Line, 0),
    (b'N', "NONE", Arg::None, 0),
    (b'P', "PERSID", Arg::Line, 0),
    (b'R', "REDUCE", Arg::None, 0),
    (b'S', "STRING", Arg::Line, 0),
    (b'V', "UNICODE", Arg::Line, 0),
    (b'a', "APPEND", Arg::None, 0),
    (b'b', "BUILD", Arg::None, 0),
    (b'c', "GLOBAL", Arg::Lines2, 0),
    (b'd', "DICT", Arg::None, 0),
    (b'g', "GET", Arg::Line, 0),
    (b'i', "INST", Arg::Lines2, 0),
    (b'l', "LIST", Arg::None, 0),
    (b'p', "PUT", Arg::Line, 0),
    (b's', "SETITEM", Arg::None, 0),
    (b't', "TUPLE", Arg::None, 0),
    (b'G', "BINFLOAT", Arg::Fixed(8), 1),
    (b'J', "BININT", Arg::Fixed(4), 1),
    (b'K', "BININT1", Arg::Fixed(1), 1),
    (b'M', "BININT2", Arg::Fixed(2), 1),
    (b'Q', "BINPERSID", Arg::None, 1),
    (b'T', "BINSTRING", Arg::Counted(4), 1),
    (b'U', "SHORT_BINSTRING", Arg::Counted(1), 1),
    (b'X', "BINUNICODE", Arg::Counted(4), 1),
    (b'}', "EMPTY_DICT", Arg::None, 1),
    (b'e', "APPENDS", Arg::None, 1),
    (b'h', "BINGET", Arg::Fixed(1), 1),
    (b'j', "LONG_BINGET", Arg::Fixed(4), 1),
    (b']', "EMPTY_LIST", Arg::None, 1),
    (b'o', "OBJ", Arg::None, 1),
    (b'q', "BINPUT", Arg::Fixed(1), 1),
    (b'r', "LONG_BINPUT", Arg::Fixed(4), 1),
    (b'u', "SETITEMS", Arg::None, 1),
    (b')', "EMPTY_TUPLE", Arg::None, 1),
    (0x80, "PROTO", Arg::Fixed(1), 2),
    (0x81, "NEWOBJ", Arg::None, 2),
    (0x82, "EXT1", Arg::Fixed(1), 2),
    (0x83, "EXT2", Arg::Fixed(2), 2),
    (0x84, "EXT4", Arg::Fixed(4), 2),
    (0x85, "TUPLE1", Arg::None, 2),
    (0x86, "TUPLE2", Arg::None, 2),
    (0x87, "TUPLE3", Arg::None, 2),
    (0x88, "NEWTRUE", Arg::None, 2),
    (0x89, "NEWFALSE", Arg::None, 2),
    (0x8a, "LONG1", Arg::Counted(1), 2),
    (0x8b, "LONG4", Arg::Counted(4), 2),
    (b'B', "BINBYTES", Arg::Counted(4), 3),
    (b'C', "SHORT_BINBYTES", Arg::Counted(1), 3),
    (0x8c, "SHORT_BINUNICODE", Arg::Counted(1), 4),
    (0x8d, "BINUNICODE8", Arg::Counted(8), 4),
    (0x8e, "BINBYTES8", Arg::Counted(8), 4),
    (0x8f, "EMPTY_SET", Arg::None, 4),
    (0x90, "ADDITEMS", Arg::None, 4),
    (0x91, "FROZENSET", Arg::None, 4),
    (0x92, "NEWOBJ_EX", Arg::None, 4),
    (0x93, "STACK_GLOBAL", Arg::None, 4),
    (0x94, "MEMOIZE", Arg::None, 4),
    (0x95, "FRAME", Arg::Fixed(8), 4),
    (0x96, "BYTEARRAY8", Arg::Counted(8), 5),
    (0x97, "NEXT_BUFFER", Arg::None, 5),
    (0x98, "READONLY_BUFFER", Arg::None, 5),
];

fn opcode(byte: u8) -> Option<(&'static str, Arg, u32)> {
    OPCODES
        .iter()
        .find(|o| o.0 == byte)
        .map(|&(_, name, arg, proto)| (name, arg, proto))
}

/// The name of the opcode a piece of a stream starts with (`?` for a byte that is none).
pub fn name(op: &[u8]) -> &'static str {
    op.first().and_then(|&b| opcode(b)).map_or("?", |o| o.0)
}

/// The texts pushed by `SHORT_BINUNICODE`, `BINUNICODE`, `BINUNICODE8` and `UNICODE`.
pub fn text(op: &[u8]) -> Option<String> {
    let counted = |width: usize| {
        let mut len = [0u8; 8];
        len[..width].copy_from_slice(op.get(1..1 + width)?);
        let body = op.get(1 + width..1 + width + usize::try_from(u64::from_le_bytes(len)).ok()?)?;
        Some(String::from_utf8_lossy(body).into_owned())
    };
    match name(op) {
        "SHORT_BINUNICODE" => counted(1),
        "BINUNICODE" => counted(4),
        "BINUNICODE8" => counted(8),
        "UNICODE" => Some(String::from_utf8_lossy(op.get(1..op.len() - 1)?).into_owned()),
        _ => None,
    }
}

/// The memo index a `GET` or `PUT` opcode names (a decimal line, one byte, four bytes).
pub fn memo_index(op: &[u8]) -> Option<u64> {
    let arg = op.get(1..)?;
    match name(op) {
        "GET" | "PUT" => std::str::from_utf8(arg).ok()?.trim().parse().ok(),
        "BINGET" | "BINPUT" => arg.first().map(|&b| u64::from(b)),
        "LONG_BINGET" | "LONG_BINPUT" => Some(u64::from(u32::from_le_bytes(arg.try_into().ok()?))),
        _ => None,
    }
}

/// The globals a stream may name, as (module, name): what the worker's unpicklers let a
/// stream import (anything else is refused before it is imported, so that no stream can call
/// what it likes). Both spellings of 2.7's and 3's modules.
pub const GLOBALS: &[(&str, &str)] = &[
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "list"),
    ("builtins", "dict"),
    ("builtins", "tuple"),
    ("builtins", "bytearray"),
    ("builtins", "bytes"),
    ("builtins", "int"),
    ("builtins", "str"),
    ("builtins", "complex"),
    ("builtins", "slice"),
    ("builtins", "range"),
    ("builtins", "object"),
    ("__builtin__", "set"),
    ("__builtin__", "frozenset"),
    ("__builtin__", "list"),
    ("__builtin__", "dict"),
    ("__builtin__", "bytearray"),
    ("__builtin__", "int"),
    ("__builtin__", "long"),
    ("__builtin__", "unicode"),
    ("__builtin__", "complex"),
    ("__builtin__", "xrange"),
    ("__builtin__", "object"),
    ("copy_reg", "_reconstructor"),
    ("copyreg", "_reconstructor"),
    ("copyreg", "__newobj__"),
    ("copyreg", "__newobj_ex__"),
    ("collections", "OrderedDict"),
    ("collections", "deque"),
    ("_codecs", "encode"),
    ("datetime", "date"),
    ("decimal", "Decimal"),
    ("fractions", "Fraction"),
];

/// A stream cut into its opcodes, each with its argument; a piece that is no whole opcode (a
/// byte that is none, an argument cut short) is the last piece, with the rest of the stream.
pub fn split(data: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let len = op_len(&data[at..]);
        match len {
            Some(n) => {
                out.push(data[at..at + n].to_vec());
                at += n;
            }
            None => {
                out.push(data[at..].to_vec());
                break;
            }
        }
    }
    out
}

/// The length of the whole opcode `data` starts with, if it is one.
fn op_len(data: &[u8]) -> Option<usize> {
    let (_, arg, _) = opcode(*data.first()?)?;
    let rest = &data[1..];
    let line = |from: usize| {
        rest.get(from..)?
            .iter()
            .position(|&b| b == b'\n')
            .map(|i| from + i + 1)
    };
    let n = match arg {
        Arg::None => 0,
        Arg::Fixed(k) => (rest.len() >= k).then_some(k)?,
        Arg::Line => line(0)?,
        Arg::Lines2 => line(line(0)?)?,
        Arg::Counted(k) => {
            let head = rest.get(..k)?;
            let mut size = [0u8; 8];
            size[..k].copy_from_slice(head);
            let size = u64::from_le_bytes(size);
            // LONG4's and BINSTRING's counts are signed: a negative one is no whole opcode.
            if matches!(data[0], 0x8b | b'T') && (size as u32 as i32) < 0 {
                return None;
            }
            let total = (k as u64).checked_add(size)?;
            (total <= rest.len() as u64).then_some(total as usize)?
        }
    };
    Some(1 + n)
}

/// A stream as its opcodes' names, for reports: `PROTO 2, BININT1, STOP`.
pub fn describe(ops: &[Vec<u8>]) -> String {
    ops.iter()
        .map(|op| {
            let n = name(op);
            if n == "?" {
                format!("byte 0x{:02x} (no opcode)", op[0])
            } else if op_len(op) == Some(op.len()) {
                n.to_string()
            } else {
                format!("{n}(cut short)")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the generator knows of a stack item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    Mark,
    /// A hashable scalar (number, text, None, bool).
    Scalar,
    List,
    Dict,
    Set,
    Tuple,
    /// A callable named by GLOBAL or STACK_GLOBAL.
    Callable,
    /// Text fit to be a STACK_GLOBAL's module or name.
    Name,
}

struct Gen {
    rng: Rng,
    protocol: u32,
    stack: Vec<Item>,
    memo: u32,
    ops: Vec<Vec<u8>>,
}

/// Stream number `index` of `seed`: generated from the grammar (three in four) or, where
/// `real` has pickles, one of them mutated.
pub fn generate(seed: u64, index: u64, real: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut rng = Rng::new(seed ^ 0x5742_EA4D, index);
    if !real.is_empty() && rng.below(4) == 3 {
        let base = &real[rng.below(real.len() as u64) as usize];
        return mutate(&mut rng, base);
    }
    let protocol = rng.below(6) as u32;
    let mut g = Gen {
        rng,
        protocol,
        stack: Vec::new(),
        memo: 0,
        ops: Vec::new(),
    };
    g.stream();
    g.ops
}

impl Gen {
    fn chance(&mut self, percent: u64) -> bool {
        self.rng.below(100) < percent
    }

    fn op(&mut self, code: u8, arg: &[u8]) {
        let mut v = vec![code];
        v.extend_from_slice(arg);
        self.ops.push(v);
    }

    fn stream(&mut self) {
        if self.protocol >= 2 || self.chance(5) {
            let declared = self.protocol as u8;
            self.op(0x80, &[declared]);
        }
        let frame_at = (self.protocol >= 4 && self.chance(50)).then_some(self.ops.len());
        let steps = 1 + self.rng.below(12);
        for _ in 0..steps {
            self.step();
        }
        // Close what is open: mostly one item left for STOP.
        while self.stack.len() > 1 && !self.chance(10) {
            self.reduce_top();
        }
        if let Some(at) = frame_at {
            let size: usize = self.ops[at..].iter().map(Vec::len).sum::<usize>() + 1;
            let size = match self.rng.below(10) {
                0 => size + 1 + self.rng.below(8) as usize,
                1 => size.saturating_sub(1 + self.rng.below(3) as usize),
                2 => 1 << 40,
                _ => size,
            };
            self.ops
                .insert(at, [&[0x95u8][..], &(size as u64).to_le_bytes()].concat());
        }
        match self.rng.below(20) {
            // Truncated: no STOP, or cut inside the last opcode.
            0 => {}
            1 => {
                if let Some(last) = self.ops.last_mut() {
                    if last.len() > 1 {
                        last.pop();
                    }
                }
            }
            _ => self.op(b'.', &[]),
        }
    }

    /// Opcodes of a protocol at most this stream's (or, rarely, above it).
    fn allowed(&mut self, since: u32) -> bool {
        since <= self.protocol || self.chance(3)
    }

    fn step(&mut self) {
        let top = self.stack.last().copied();
        let under = self.stack.len().checked_sub(2).map(|i| self.stack[i]);
        match self.rng.below(16) {
            0..=5 => self.scalar(),
            6 => self.container(),
            7 => {
                self.op(b'(', &[]);
                self.stack.push(Item::Mark);
            }
            8 if self.stack.contains(&Item::Mark) => self.close_mark(),
            9 => self.memo_op(),
            10 if top == Some(Item::Scalar) && under == Some(Item::List) => {
                self.op(b'a', &[]);
                self.stack.pop();
            }
            11 if top == Some(Item::Scalar)
                && under == Some(Item::Scalar)
                && self.stack.len() >= 3
                && self.stack[self.stack.len() - 3] == Item::Dict =>
            {
                self.op(b's', &[]);
                self.stack.truncate(self.stack.len() - 2);
            }
            12 => self.global(),
            13 if top == Some(Item::Tuple) && under == Some(Item::Callable) => {
                self.op(b'R', &[]);
                self.stack.truncate(self.stack.len() - 2);
                self.stack.push(Item::Scalar);
            }
            14 => self.unusual(),
            15 if !self.stack.is_empty() => {
                if self.chance(50) {
                    self.op(b'2', &[]);
                    let t = *self.stack.last().expect("not empty");
                    self.stack.push(t);
                } else {
                    self.op(b'0', &[]);
                    self.stack.pop();
                }
            }
            _ => self.scalar(),
        }
    }

    /// Bring the stack down by one item: wrap the top in a tuple, or end a MARK.
    fn reduce_top(&mut self) {
        if self.stack.contains(&Item::Mark) {
            self.close_mark();
        } else if self.protocol >= 2 && self.stack.len() >= 2 {
            self.op(0x86, &[]);
            self.stack.truncate(self.stack.len() - 2);
            self.stack.push(Item::Tuple);
        } else {
            self.op(b'0', &[]);
            self.stack.pop();
        }
    }

    fn close_mark(&mut self) {
        let at = self
            .stack
            .iter()
            .rposition(|&i| i == Item::Mark)
            .expect("a mark");
        let items: Vec<Item> = self.stack[at + 1..].to_vec();
        let hashable = items
            .iter()
            .all(|&i| matches!(i, Item::Scalar | Item::Tuple));
        let choice = self.rng.below(6);
        let (code, result) = match choice {
            0 => (b'l', Item::List),
            1 if items.len() % 2 == 0 && hashable => (b'd', Item::Dict),
            2 if hashable && self.allowed(4) => (0x91, Item::Set),
            3 => (b'1', Item::Mark),
            _ => (b't', Item::Tuple),
        };
        self.op(code, &[]);
        self.stack.truncate(at);
        if result != Item::Mark {
            self.stack.push(result);
        }
    }

    fn scalar(&mut self) {
        let r = &mut self.rng;
        let small = [0i64, 1, -1, 127, 128, 255, 256, 65535, 65536, -65536];
        let n = if r.below(2) == 0 {
            small[r.below(small.len() as u64) as usize]
        } else {
            (r.next_u64() >> r.below(64)) as i64
        };
        match self.rng.below(14) {
            0 => {
                // INT's spellings: I01 and I00 are True and False, and the unusual ones.
                let forms: [&[u8]; 10] = [
                    b"01",
                    b"00",
                    b"+0",
                    b"-0",
                    b" 7",
                    b"1_0",
                    b"0x10",
                    b"007",
                    b"",
                    b"99999999999999999999",
                ];
                let text = if self.chance(50) {
                    forms[self.rng.below(forms.len() as u64) as usize].to_vec()
                } else {
                    n.to_string().into_bytes()
                };
                self.op(b'I', &[&text[..], b"\n"].concat());
            }
            1 => {
                let suffix: &[u8] = if self.chance(70) { b"L" } else { b"" };
                self.op(b'L', &[n.to_string().as_bytes(), suffix, b"\n"].concat());
            }
            2 => {
                let forms: [&[u8]; 6] = [b"1.5", b"inf", b"nan", b"-0.0", b"1e400", b"0x1p3"];
                let f = forms[self.rng.below(6) as usize];
                self.op(b'F', &[f, b"\n"].concat());
            }
            3 => {
                let forms: [&[u8]; 6] = [
                    b"'abc'",
                    b"\"q\"",
                    b"'\\xff'",
                    b"'unterminated",
                    b"'\\u1234'",
                    b"''",
                ];
                let s = forms[self.rng.below(6) as usize];
                self.op(b'S', &[s, b"\n"].concat());
            }
            4 => {
                let forms: [&[u8]; 4] = [b"abc", b"\\u20ac", b"\\U0001f600", b"\\x"];
                let s = forms[self.rng.below(4) as usize];
                self.op(b'V', &[s, b"\n"].concat());
            }
            5 if self.allowed(1) => {
                if (0..256).contains(&n) {
                    self.op(b'K', &[n as u8]);
                } else if (0..65536).contains(&n) {
                    self.op(b'M', &(n as u16).to_le_bytes());
                } else {
                    self.op(b'J', &(n as i32).to_le_bytes());
                }
            }
            6 if self.allowed(2) => {
                let bytes = n.to_le_bytes();
                let len = self.rng.below(9) as usize;
                self.op(0x8a, &[&[len as u8][..], &bytes[..len]].concat());
            }
            7 if self.allowed(1) => {
                let text = self.text();
                self.op(
                    b'X',
                    &[&(text.len() as u32).to_le_bytes()[..], &text].concat(),
                );
            }
            8 if self.allowed(4) => {
                let text = self.text();
                self.op(0x8c, &[&[text.len() as u8][..], &text].concat());
                self.stack.push(Item::Name);
                return;
            }
            9 if self.allowed(3) => {
                let text = self.text();
                self.op(b'C', &[&[text.len() as u8][..], &text].concat());
            }
            10 if self.allowed(1) => {
                let text = self.text();
                self.op(b'U', &[&[text.len() as u8][..], &text].concat());
            }
            11 if self.allowed(1) => {
                let f = (n as f64) / 7.0;
                self.op(b'G', &f.to_be_bytes());
            }
            12 if self.allowed(2) => {
                let code = if self.chance(50) { 0x88 } else { 0x89 };
                self.op(code, &[]);
            }
            _ => self.op(b'N', &[]),
        }
        self.stack.push(Item::Scalar);
    }

    fn text(&mut self) -> Vec<u8> {
        let forms: [&[u8]; 7] = [
            b"",
            b"abc",
            b"builtins",
            b"\xc3\xa9",
            b"\xff\xfe",
            b"\xed\xa0\x80",
            b"\x00",
        ];
        forms[self.rng.below(forms.len() as u64) as usize].to_vec()
    }

    fn container(&mut self) {
        match self.rng.below(4) {
            0 if self.allowed(1) => {
                self.op(b']', &[]);
                self.stack.push(Item::List);
            }
            1 if self.allowed(1) => {
                self.op(b'}', &[]);
                self.stack.push(Item::Dict);
            }
            2 if self.allowed(4) => {
                self.op(0x8f, &[]);
                self.stack.push(Item::Set);
            }
            _ if self.allowed(1) => {
                self.op(b')', &[]);
                self.stack.push(Item::Tuple);
            }
            _ => {
                self.op(b'(', &[]);
                self.op(b'l', &[]);
                self.stack.push(Item::List);
            }
        }
    }

    /// PUT, GET and MEMOIZE, with indices in the memo and out of it.
    fn memo_op(&mut self) {
        let out_of_range = self.chance(20);
        let index = if out_of_range || self.memo == 0 {
            self.memo + self.rng.below(3) as u32 + if self.chance(30) { 1 << 20 } else { 0 }
        } else {
            self.rng.below(self.memo as u64) as u32
        };
        let get = self.memo > 0 && self.chance(50) || out_of_range;
        if get {
            match self.rng.below(3) {
                0 => self.op(b'g', format!("{index}\n").as_bytes()),
                1 if index < 256 && self.allowed(1) => self.op(b'h', &[index as u8]),
                _ if self.allowed(1) => self.op(b'j', &index.to_le_bytes()),
                _ => self.op(b'g', format!("{index}\n").as_bytes()),
            }
            self.stack.push(Item::Scalar);
            return;
        }
        if self.stack.is_empty() {
            return self.scalar();
        }
        let n = self.memo;
        match self.rng.below(3) {
            0 if self.allowed(4) => self.op(0x94, &[]),
            1 if n < 256 && self.allowed(1) => self.op(b'q', &[n as u8]),
            _ => self.op(b'p', format!("{n}\n").as_bytes()),
        }
        self.memo += 1;
    }

    fn global(&mut self) {
        let (module, name) = GLOBALS[self.rng.below(GLOBALS.len() as u64) as usize];
        if self.allowed(4) && self.chance(40) {
            for text in [module, name] {
                self.op(0x8c, &[&[text.len() as u8][..], text.as_bytes()].concat());
            }
            self.op(0x93, &[]);
        } else {
            self.op(b'c', format!("{module}\n{name}\n").as_bytes());
        }
        self.stack.push(Item::Callable);
        // Mostly called at once with a small tuple.
        if self.chance(70) {
            self.scalar();
            if self.allowed(2) {
                self.op(0x85, &[]);
            } else {
                self.ops.insert(self.ops.len() - 1, b"(".to_vec());
                self.op(b't', &[]);
            }
            self.stack.pop();
            self.stack.pop();
            self.op(b'R', &[]);
            self.stack.push(Item::Scalar);
        }
    }

    /// What well-formed streams never hold.
    fn unusual(&mut self) {
        match self.rng.below(9) {
            // EXT codes (none registered, unless copyreg's registry has some).
            0 => {
                let code = 1 + self.rng.below(3) as u8;
                let k = 1usize << (code - 1);
                let v = (self.rng.next_u64() & 0xffff_ffff).to_le_bytes();
                self.op(0x81 + code, &v[..k]);
                self.stack.push(Item::Scalar);
            }
            // A length far beyond the stream.
            1 => {
                let code = [0x8eu8, 0x8d, 0x96, b'B', b'X', 0x8b][self.rng.below(6) as usize];
                let (_, arg, _) = opcode(code).expect("an opcode");
                let Arg::Counted(k) = arg else { return };
                let huge = (1u64 << (30 + self.rng.below(30))).to_le_bytes();
                self.op(code, &huge[..k]);
                self.stack.push(Item::Scalar);
            }
            // A negative LONG4 or BINSTRING length.
            2 => {
                let code = if self.chance(50) { 0x8b } else { b'T' };
                self.op(code, &(-1i32).to_le_bytes());
                self.stack.push(Item::Scalar);
            }
            // A second PROTO, of any number.
            3 => {
                let p = self.rng.below(256) as u8;
                self.op(0x80, &[p]);
            }
            // An opcode of a higher protocol.
            4 => {
                let candidates: Vec<u8> = OPCODES
                    .iter()
                    .filter(|o| o.3 > self.protocol && o.2 == Arg::None)
                    .map(|o| o.0)
                    .collect();
                if let Some(&c) =
                    candidates.get(self.rng.below(candidates.len().max(1) as u64) as usize)
                {
                    self.op(c, &[]);
                }
            }
            // PERSID without a persistent_load.
            5 => {
                self.op(b'P', b"0\n");
                self.stack.push(Item::Scalar);
            }
            // BUILD or APPEND on what cannot take it.
            6 => {
                let code = [b'b', b'a', b'e', b'u', 0x90, b'o', 0x81][self.rng.below(7) as usize];
                self.op(code, &[]);
                if !self.stack.is_empty() {
                    self.stack.pop();
                }
            }
            // A byte that is no opcode.
            7 => {
                let free: Vec<u8> = (0u8..=255).filter(|b| opcode(*b).is_none()).collect();
                let b = free[self.rng.below(free.len() as u64) as usize];
                self.op(b, &[]);
            }
            // A STOP in the middle.
            _ => self.op(b'.', &[]),
        }
    }
}

/// A real pickle mutated at the level of its opcodes: one or a few of them dropped,
/// duplicated, swapped, an argument's bytes flipped, the stream cut short.
fn mutate(rng: &mut Rng, base: &[u8]) -> Vec<Vec<u8>> {
    let mut ops = split(base);
    let edits = 1 + rng.below(3);
    for _ in 0..edits {
        if ops.is_empty() {
            break;
        }
        let at = rng.below(ops.len() as u64) as usize;
        match rng.below(6) {
            0 => {
                ops.remove(at);
            }
            1 => {
                let op = ops[at].clone();
                ops.insert(at, op);
            }
            2 => {
                let other = rng.below(ops.len() as u64) as usize;
                ops.swap(at, other);
            }
            3 if ops[at].len() > 1 => {
                let i = 1 + rng.below(ops[at].len() as u64 - 1) as usize;
                ops[at][i] ^= 1 << rng.below(8);
            }
            4 => {
                let cut = rng.below(base.len() as u64) as usize;
                return split(&base[..cut]);
            }
            _ => {
                let b = OPCODES[rng.below(OPCODES.len() as u64) as usize];
                if b.2 == Arg::None {
                    ops.insert(at, vec![b.0]);
                }
            }
        }
    }
    ops
}

/// The candidates of one round of delta debugging over `ops` cut into `parts` chunks: each
/// chunk dropped (its complement), then each chunk alone, as ddmin tries them.
pub fn reductions(ops: &[Vec<u8>], parts: usize) -> Vec<Vec<Vec<u8>>> {
    let n = ops.len();
    let parts = parts.clamp(1, n.max(1));
    let bounds: Vec<(usize, usize)> = (0..parts)
        .map(|i| (i * n / parts, (i + 1) * n / parts))
        .filter(|(a, b)| a < b)
        .collect();
    let mut out = Vec::new();
    for &(a, b) in &bounds {
        let rest: Vec<Vec<u8>> = ops[..a].iter().chain(&ops[b..]).cloned().collect();
        if !rest.is_empty() {
            out.push(rest);
        }
    }
    if parts > 1 {
        for &(a, b) in &bounds {
            out.push(ops[a..b].to_vec());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_splits_into_its_opcodes_and_joins_back() {
        // pickle.dumps([1, 'ab', None], 4) as CPython 3.12 writes it.
        let data = b"\x80\x04\x95\x0f\x00\x00\x00\x00\x00\x00\x00]\x94(K\x01\x8c\x02ab\x94Ne.";
        let ops = split(data);
        assert_eq!(
            describe(&ops),
            "PROTO, FRAME, EMPTY_LIST, MEMOIZE, MARK, BININT1, SHORT_BINUNICODE, MEMOIZE, NONE, APPENDS, STOP"
        );
        assert_eq!(ops.concat(), data.to_vec());
        // Cut short: the last piece is what is left, named as cut.
        let cut = split(&data[..data.len() - 5]);
        assert_eq!(cut.concat(), data[..data.len() - 5].to_vec());
        assert!(
            describe(&cut).ends_with("SHORT_BINUNICODE(cut short)"),
            "{}",
            describe(&cut)
        );
        // A LONG4 whose length is negative or beyond the stream is not whole.
        assert_eq!(
            split(b"\x8b\xff\xff\xff\xff."),
            vec![b"\x8b\xff\xff\xff\xff.".to_vec()]
        );
        assert_eq!(
            split(b"I01\nI+0\n."),
            vec![b"I01\n".to_vec(), b"I+0\n".to_vec(), b".".to_vec()]
        );
    }

    #[test]
    fn streams_are_the_same_for_a_seed_and_mostly_end_in_stop() {
        let real = vec![b"\x80\x02]q\x00(K\x01K\x02e.".to_vec()];
        let a: Vec<_> = (0..200).map(|i| generate(7, i, &real)).collect();
        let b: Vec<_> = (0..200).map(|i| generate(7, i, &real)).collect();
        assert_eq!(a, b);
        let c: Vec<_> = (0..200).map(|i| generate(8, i, &real)).collect();
        assert_ne!(a, c);
        let stops = a
            .iter()
            .filter(|s| s.last().is_some_and(|op| op == b"."))
            .count();
        assert!(stops > 120, "{stops} of 200 end in STOP");
        // The unusual shows among them: an INT spelled I01, a FRAME, an EXT code.
        let all: Vec<u8> = a.iter().flatten().flatten().copied().collect();
        let has = |needle: &[u8]| all.windows(needle.len()).any(|w| w == needle);
        assert!(has(b"I01\n") || has(b"I+0\n"));
        assert!(a.iter().flatten().any(|op| op[0] == 0x95));
        assert!(a.iter().flatten().any(|op| (0x82..=0x84).contains(&op[0])));
        // Every global named is one the worker allows.
        for s in &a {
            for op in s {
                if op[0] == b'c' {
                    if let Ok(text) = std::str::from_utf8(&op[1..]) {
                        let mut lines = text.lines();
                        let pair = (lines.next().unwrap_or(""), lines.next().unwrap_or(""));
                        assert!(GLOBALS.contains(&pair), "{pair:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn delta_debugging_drops_each_chunk_then_keeps_each_alone() {
        let ops: Vec<Vec<u8>> = (0..4u8).map(|b| vec![b]).collect();
        let r = reductions(&ops, 2);
        assert_eq!(
            r,
            vec![
                vec![vec![2], vec![3]],
                vec![vec![0], vec![1]],
                vec![vec![0], vec![1]],
                vec![vec![2], vec![3]]
            ]
        );
        assert!(reductions(&ops, 1).is_empty());
        assert_eq!(reductions(&ops, 9).len(), 8);
    }
}
