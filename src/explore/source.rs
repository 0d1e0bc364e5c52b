//! A [`Value`] written as Python source that builds it the same on 2.7 and every Python 3
//! (`u''` text, `b''` bytes, `set([...])`, `range_` for 2.7's `xrange`), with named lists and
//! dicts made empty first and filled last so that shared and cyclic references can be
//! written; what the value needs of the interpreter ([`Value::min_version`]); and its shape
//! ([`Value::type_path`]), which findings are told apart by.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::value::{Std, Value, NEWER, NEWER_CLASSES};

impl Value {
    /// Statements that leave the value in `value` (imports first, then named containers).
    pub fn source(&self) -> String {
        let mut imports = BTreeSet::new();
        self.imports(&mut imports);
        let mut out = String::new();
        for m in &imports {
            let _ = writeln!(out, "import {m}");
        }
        let mut named = Vec::new();
        self.named(&mut named);
        named.sort_by_key(|(n, _)| *n);
        for (n, v) in &named {
            let empty = if matches!(v, Value::List(..)) {
                "[]"
            } else {
                "{}"
            };
            let _ = writeln!(out, "v{n} = {empty}");
        }
        let _ = writeln!(out, "value = {}", self.expr(true));
        for (n, v) in &named {
            match v {
                Value::List(_, items) if !items.is_empty() => {
                    let _ = writeln!(out, "v{n}.extend([{}])", list(items));
                }
                Value::Dict(_, pairs) if !pairs.is_empty() => {
                    let _ = writeln!(out, "v{n}.update([{}])", pair_tuples(pairs));
                }
                _ => {}
            }
        }
        out
    }

    fn named<'a>(&'a self, out: &mut Vec<(usize, &'a Value)>) {
        if let Value::List(Some(n), _) | Value::Dict(Some(n), _) = self {
            out.push((*n, self));
        }
        self.for_each_child(&mut |c| c.named(out));
    }

    fn imports(&self, out: &mut BTreeSet<&'static str>) {
        if let Value::Std(s) = self {
            out.insert(match s {
                Std::Date(..) | Std::DateTime(..) | Std::Time(..) | Std::TimeDelta(..) => {
                    "datetime"
                }
                Std::Decimal(_) => "decimal",
                Std::Fraction(..) => "fractions",
                Std::Uuid(_) => "uuid",
                Std::Enum(_) => "explore_types",
                Std::Array(..) => "array",
                Std::Path(_) => "pathlib",
                Std::Pattern(..) => "re",
                _ => "collections",
            });
        }
        if let Value::Obj(..) = self {
            out.insert("explore_types");
        }
        if let Value::Made(kind, _) = self {
            let module = match *kind {
                "SimpleNamespace" => "types",
                "ChainMap" => "collections",
                "ip_address" | "ip_network" | "ip_interface" => "ipaddress",
                "Flag" | "noted" => "explore_types",
                "partial" | "Placeholder" => "functools",
                "Template" => "string.templatelib",
                "ZoneInfo" => "zoneinfo",
                "PickleBuffer" => "pickle",
                _ => "",
            };
            if !module.is_empty() {
                out.insert(module);
            }
        }
        self.for_each_child(&mut |c| c.imports(out));
    }

    /// Calls `f` on every direct child.
    pub fn for_each_child<'a>(&'a self, f: &mut dyn FnMut(&'a Value)) {
        match self {
            Value::Tuple(items)
            | Value::List(_, items)
            | Value::Set(items)
            | Value::FrozenSet(items) => items.iter().for_each(f),
            Value::Dict(_, pairs)
            | Value::Std(Std::OrderedDict(pairs))
            | Value::Std(Std::DefaultDict(_, pairs)) => {
                for (k, v) in pairs {
                    f(k);
                    f(v);
                }
            }
            Value::Std(Std::Counter(pairs)) => pairs.iter().for_each(|(k, _)| f(k)),
            Value::Std(Std::Deque(items, _)) | Value::Obj(_, items) | Value::Made(_, items) => {
                items.iter().for_each(f)
            }
            Value::Slice(parts) => parts.iter().for_each(f),
            _ => {}
        }
    }

    /// The expression; a named container is its name (except where it is defined: `top`).
    fn expr(&self, top: bool) -> String {
        match self {
            Value::None => "None".into(),
            Value::Bool(b) => if *b { "True" } else { "False" }.into(),
            Value::Ellipsis => "Ellipsis".into(),
            Value::NotImplemented => "NotImplemented".into(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => float(*f),
            Value::Complex(r, i) => format!("complex({}, {})", float(*r), float(*i)),
            Value::Str(s) => text(s),
            Value::Bytes(b) => bytes(b),
            Value::ByteArray(b) => format!("bytearray({})", bytes(b)),
            Value::Tuple(items) if items.len() == 1 => format!("({},)", items[0].expr(false)),
            Value::Tuple(items) => format!("({})", list(items)),
            Value::List(Some(n), _) | Value::Dict(Some(n), _) | Value::Ref(n) => {
                let _ = top;
                format!("v{n}")
            }
            Value::List(None, items) => format!("[{}]", list(items)),
            Value::Dict(None, pairs) => format!(
                "{{{}}}",
                pairs
                    .iter()
                    .map(|(k, v)| format!("{}: {}", k.expr(false), v.expr(false)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Value::Set(items) => format!("set([{}])", list(items)),
            Value::FrozenSet(items) => format!("frozenset([{}])", list(items)),
            Value::Slice(p) => format!(
                "slice({}, {}, {})",
                p[0].expr(false),
                p[1].expr(false),
                p[2].expr(false)
            ),
            Value::Range(a, b, c) => format!("range_({a}, {b}, {c})"),
            Value::Std(s) => std_expr(s),
            Value::Obj(class, args) => format!("explore_types.{class}({})", list(args)),
            Value::Made(kind, items) => made_expr(kind, items),
            Value::User(file, builder, seed, i) => user_expr(file, builder, *seed, *i),
        }
    }

    /// What a consumer runs before loading the value's pickle: the folders of the user's
    /// builders (`--values`) put on `sys.path`, so that their classes load by reference.
    pub fn load_setup(&self) -> String {
        let mut out = String::new();
        if let Value::User(file, ..) = self {
            let dir = std::path::Path::new(file)
                .parent()
                .map(|d| d.display().to_string())
                .unwrap_or_default();
            let _ = writeln!(out, "__import__('sys').path.insert(0, {})", text(&dir));
        }
        self.for_each_child(&mut |c| out.push_str(&c.load_setup()));
        out
    }

    /// Whether a buffer of this value may go out of band with protocol 5: it holds a
    /// `PickleBuffer`, or is a builder's (whose types may make one, as NumPy's arrays do).
    /// Only those are dumped with the protocol `oob`.
    pub fn may_go_out_of_band(&self) -> bool {
        let mut found = matches!(self, Value::User(..) | Value::Made("PickleBuffer", _));
        self.for_each_child(&mut |c| found = found || c.may_go_out_of_band());
        found
    }

    /// The oldest Python (major, minor) that builds this value as written.
    pub fn min_version(&self) -> (u64, u64) {
        let own = match self {
            Value::Std(Std::DateTime(_, _, fold, tz) | Std::Time(_, _, fold, tz))
                if *fold != 0 || tz.is_some() =>
            {
                (3, 6)
            }
            Value::Std(Std::Enum(_) | Std::Path(_)) => (3, 4),
            Value::Made(kind, items) => {
                let scoped = (kind.starts_with("ip_")
                    && matches!(items.first(), Some(Value::Str(t)) if t.contains('%')))
                .then_some((3, 9));
                let own = NEWER
                    .iter()
                    .find(|(k, _)| k == kind)
                    .map_or((2, 7), |(_, v)| *v);
                own.max(scoped.unwrap_or((2, 7)))
            }
            Value::Obj(class, _) => NEWER_CLASSES
                .iter()
                .find(|(k, _)| k == class)
                .map_or((2, 7), |(_, v)| *v),
            _ => (2, 7),
        };
        let mut v = own;
        self.for_each_child(&mut |c| v = v.max(c.min_version()));
        v
    }

    /// The shape of the value, as findings are told apart: `list[bytes,int]`.
    pub fn type_path(&self) -> String {
        let mut kids = Vec::new();
        self.for_each_child(&mut |c| kids.push(c.type_path()));
        kids.sort();
        kids.dedup();
        let name = self.kind();
        if kids.is_empty() {
            name.to_string()
        } else {
            format!("{name}[{}]", kids.join(","))
        }
    }

    /// The kinds of every node of the value (`{"bytes", "list"}`).
    pub fn kinds(&self) -> BTreeSet<&'static str> {
        let mut all = BTreeSet::from([self.kind()]);
        self.for_each_child(&mut |c| all.extend(c.kinds()));
        all
    }

    /// The kind of this node, as Python names its type.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::None => "None",
            Value::Bool(_) => "bool",
            Value::Ellipsis => "Ellipsis",
            Value::NotImplemented => "NotImplemented",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Complex(..) => "complex",
            Value::Str(_) => "str",
            Value::Bytes(_) => "bytes",
            Value::ByteArray(_) => "bytearray",
            Value::Tuple(_) => "tuple",
            Value::List(..) => "list",
            Value::Dict(..) => "dict",
            Value::Set(_) => "set",
            Value::FrozenSet(_) => "frozenset",
            Value::Slice(_) => "slice",
            Value::Range(..) => "range",
            Value::Ref(_) => "ref",
            Value::Std(s) => match s {
                Std::Date(..) => "date",
                Std::DateTime(.., Some(_)) => "datetime+tz",
                Std::DateTime(..) => "datetime",
                Std::Time(.., Some(_)) => "time+tz",
                Std::Time(..) => "time",
                Std::TimeDelta(..) => "timedelta",
                Std::Decimal(_) => "Decimal",
                Std::Fraction(..) => "Fraction",
                Std::Uuid(_) => "UUID",
                Std::OrderedDict(_) => "OrderedDict",
                Std::Counter(_) => "Counter",
                Std::Deque(..) => "deque",
                Std::DefaultDict(..) => "defaultdict",
                Std::Enum(_) => "Enum",
                Std::Array(..) => "array",
                Std::Path(_) => "PurePosixPath",
                Std::Pattern(..) => "Pattern",
            },
            Value::Obj(class, _) | Value::Made(class, _) => class,
            Value::User(..) => "user",
        }
    }
}

fn list(items: &[Value]) -> String {
    items
        .iter()
        .map(|v| v.expr(false))
        .collect::<Vec<_>>()
        .join(", ")
}

fn pair_tuples(pairs: &[(Value, Value)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("({}, {})", k.expr(false), v.expr(false)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn tz(minutes: &Option<i32>) -> String {
    match minutes {
        None => String::new(),
        Some(m) => format!(", tzinfo=datetime.timezone(datetime.timedelta(minutes={m}))"),
    }
}

fn fold(f: u32) -> String {
    if f == 0 {
        String::new()
    } else {
        format!(", fold={f}")
    }
}

fn std_expr(s: &Std) -> String {
    match s {
        Std::Date(y, m, d) => format!("datetime.date({y}, {m}, {d})"),
        Std::DateTime([y, mo, d, h, mi, s], us, f, z) => format!(
            "datetime.datetime({y}, {mo}, {d}, {h}, {mi}, {s}, {us}{}{})",
            tz(z),
            fold(*f)
        ),
        Std::Time([h, m, s], us, f, z) => {
            format!("datetime.time({h}, {m}, {s}, {us}{}{})", tz(z), fold(*f))
        }
        Std::TimeDelta(d, s, us) => format!("datetime.timedelta({d}, {s}, {us})"),
        Std::Decimal(d) => format!("decimal.Decimal('{d}')"),
        Std::Fraction(n, d) => format!("fractions.Fraction({n}, {d})"),
        Std::Uuid(u) => format!("uuid.UUID(int={u})"),
        Std::OrderedDict(pairs) => format!("collections.OrderedDict([{}])", pair_tuples(pairs)),
        Std::Counter(pairs) => format!(
            "collections.Counter(dict([{}]))",
            pairs
                .iter()
                .map(|(k, n)| format!("({}, {n})", k.expr(false)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Std::Deque(items, None) => format!("collections.deque([{}])", list(items)),
        Std::Deque(items, Some(n)) => format!("collections.deque([{}], {n})", list(items)),
        Std::DefaultDict(factory, pairs) => format!(
            "collections.defaultdict({factory}, [{}])",
            pair_tuples(pairs)
        ),
        Std::Enum(member) => format!("explore_types.Color.{member}"),
        Std::Array(code, items) => {
            let items: Vec<String> = items
                .iter()
                .map(|i| {
                    if *code == 'd' {
                        format!("{i}.0")
                    } else {
                        i.to_string()
                    }
                })
                .collect();
            format!("array.array('{code}', [{}])", items.join(", "))
        }
        Std::Path(p) => format!("pathlib.PurePosixPath({})", text(p)),
        Std::Pattern(p, flags) => format!("re.compile({}, {flags})", text(p)),
    }
}

/// The call of a user's builder: its file's folder put first on `sys.path` (so that the
/// pickles of its classes load by reference wherever the value was built), then the builder,
/// what it returns given to `drawn` with the seed and the value number (a Hypothesis strategy
/// is drawn from, anything else is the value).
fn user_expr(file: &str, builder: &str, seed: u64, i: u64) -> String {
    let path = std::path::Path::new(file);
    let dir = path
        .parent()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let module = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(
        "drawn(__import__('sys').path.insert(0, {}) or __import__({}).{builder}(), {seed}, {i})",
        text(&dir),
        text(&module)
    )
}

/// The source of a [`Value::Made`]: the constructor of its kind applied to its parts.
fn made_expr(kind: &str, items: &[Value]) -> String {
    let part = |i: usize| items.get(i).map_or("None".to_string(), |v| v.expr(false));
    match kind {
        "SimpleNamespace" => format!(
            "types.SimpleNamespace({})",
            items
                .iter()
                .zip('a'..='z')
                .map(|(v, name)| format!("{name}={}", v.expr(false)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        "ChainMap" => format!("collections.ChainMap({})", list(items)),
        "ip_address" | "ip_network" | "ip_interface" => format!("ipaddress.{kind}({})", part(0)),
        "Flag" => format!("explore_types.Perm({})", part(0)),
        "noted" => format!("explore_types.noted({})", list(items)),
        "ExceptionGroup" => format!(
            "ExceptionGroup({}, [{}])",
            part(0),
            list(items.get(1..).unwrap_or_default())
        ),
        // The type names as they are, `int | str`.
        "union" => items
            .iter()
            .map(|v| match v {
                Value::Str(t) => t.clone(),
                other => other.expr(false),
            })
            .collect::<Vec<_>>()
            .join(" | "),
        "partial" => format!("functools.partial(divmod, {})", list(items)),
        "Placeholder" => format!(
            "functools.partial(divmod, functools.Placeholder, {})",
            list(items)
        ),
        "Template" => format!(
            "string.templatelib.Template({}, string.templatelib.Interpolation({}, 'x'), {})",
            part(0),
            part(1),
            part(2)
        ),
        "ZoneInfo" => format!("zoneinfo.ZoneInfo({})", part(0)),
        "PickleBuffer" => format!("pickle.PickleBuffer({})", part(0)),
        "frozendict" => format!("frozendict({})", part(0)),
        // ValueError, KeyError, OSError: the built-in of that name.
        _ => format!("{kind}({})", list(items)),
    }
}

/// A float as Python reads it back exactly (Rust's shortest round-trip form).
fn float(f: f64) -> String {
    if f.is_nan() {
        "float('nan')".into()
    } else if f.is_infinite() {
        if f > 0.0 {
            "float('inf')"
        } else {
            "float('-inf')"
        }
        .into()
    } else {
        format!("{f:?}")
    }
}

/// Text as a `u''` literal: printable ASCII as it is, the rest escaped.
fn text(s: &str) -> String {
    let mut out = String::from("u'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            ' '..='~' => out.push(c),
            c if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('\'');
    out
}

/// Bytes as a `b''` literal, printable ASCII as it is: the same on Python 2.7 and 3 (also
/// what `crosspickle repro` writes its pickles as).
pub fn bytes(b: &[u8]) -> String {
    let mut out = String::from("b'");
    for &c in b {
        match c {
            b'\\' => out.push_str("\\\\"),
            b'\'' => out.push_str("\\'"),
            b' '..=b'~' => out.push(c as char),
            _ => {
                let _ = write!(out, "\\x{c:02x}");
            }
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigInt;

    #[test]
    fn literals_read_the_same_on_2_7_and_3() {
        let v = Value::Tuple(vec![
            Value::Str("\u{e9}\u{20ac}\u{1f600}'\\".into()),
            Value::Bytes(b"\xe9'a".to_vec()),
            Value::Float(-0.0),
            Value::Float(f64::NAN),
            Value::Float(5e-324),
            Value::Int("-18446744073709551616".parse::<BigInt>().unwrap()),
            Value::Set(vec![]),
            Value::Range(1, 9, 2),
        ]);
        assert_eq!(
            v.source(),
            "value = (u'\\xe9\\u20ac\\U0001f600\\'\\\\', b'\\xe9\\'a', -0.0, float('nan'), 5e-324, -18446744073709551616, set([]), range_(1, 9, 2))\n"
        );
    }

    #[test]
    fn shared_and_cyclic_containers_are_made_empty_then_filled() {
        // v0 = [v0, {1: v0}], the dict named v1 and shared.
        let d = Value::Dict(Some(1), vec![(Value::Int(1.into()), Value::Ref(0))]);
        let v = Value::List(Some(0), vec![Value::Ref(0), d, Value::Ref(1)]);
        assert_eq!(
            v.source(),
            "v0 = []\nv1 = {}\nvalue = v0\nv0.extend([v0, v1, v1])\nv1.update([(1, v0)])\n"
        );
        assert_eq!(v.type_path(), "list[dict[int,ref],ref]");
    }

    #[test]
    fn stdlib_values_import_their_module_and_say_their_python() {
        let v = Value::List(
            None,
            vec![
                Value::Std(Std::Time([1, 2, 3], 0, 1, None)),
                Value::Std(Std::Decimal("1.10".into())),
            ],
        );
        assert_eq!(v.source(), "import datetime\nimport decimal\nvalue = [datetime.time(1, 2, 3, 0, fold=1), decimal.Decimal('1.10')]\n");
        assert_eq!(v.min_version(), (3, 6));
        assert_eq!(
            Value::Std(Std::Time([1, 2, 3], 0, 0, None)).min_version(),
            (2, 7)
        );
    }
}
