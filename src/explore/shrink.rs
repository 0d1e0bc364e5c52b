//! The one-step smaller values of a value, smallest first: the value replaced by one of its
//! children, an element left out, a number brought towards zero, a string shortened; each
//! strictly smaller by [`Value::size`], so that shrinking ends. A reference whose container
//! was cut away becomes `None`, and a name nothing refers to any more is dropped.

use std::collections::BTreeSet;

use super::value::{Std, Value};
use num_bigint::BigInt;

impl Value {
    /// Nodes, plus the length of strings and the digits of numbers: what shrinking lowers.
    pub fn size(&self) -> usize {
        let own = match self {
            Value::Int(i) => 1 + i.bits() as usize,
            Value::Str(s) => 1 + s.chars().count(),
            Value::Bytes(b) | Value::ByteArray(b) => 1 + b.len(),
            Value::Std(Std::Decimal(d) | Std::Path(d)) => 1 + d.len(),
            Value::Std(Std::Pattern(p, flags)) => 1 + p.len() + usize::from(*flags != 0),
            Value::Std(Std::Array(_, items)) => 1 + items.len(),
            Value::List(Some(_), _) | Value::Dict(Some(_), _) => 2,
            Value::Std(Std::DateTime(_, _, f, tz) | Std::Time(_, _, f, tz)) => {
                2 + *f as usize + usize::from(tz.is_some())
            }
            _ => 1,
        };
        let mut n = own;
        self.for_each_child(&mut |c| n += c.size());
        n
    }

    /// Candidates one step smaller, in the order they should be tried.
    pub fn shrinks(&self) -> Vec<Value> {
        let size = self.size();
        let mut out: Vec<Value> = self
            .raw_shrinks()
            .into_iter()
            .map(|v| v.normalized())
            .filter(|v| v.size() < size)
            .collect();
        let mut seen = Vec::new();
        out.retain(|v| {
            if seen.contains(v) {
                false
            } else {
                seen.push(v.clone());
                true
            }
        });
        out
    }

    fn raw_shrinks(&self) -> Vec<Value> {
        let mut out = Vec::new();
        // The whole value replaced by one of its children.
        self.for_each_child(&mut |c| out.push(c.clone()));
        out.extend(self.own_shrinks());
        // One child shrunk in place.
        let n = self.child_count();
        for i in 0..n {
            let child = self.child(i).expect("a child").clone();
            for smaller in child.raw_shrinks() {
                let mut v = self.clone();
                *v.child_mut(i).expect("a child") = smaller;
                out.push(v);
            }
        }
        out
    }

    /// Smaller versions of this node itself: fewer elements, a smaller scalar.
    fn own_shrinks(&self) -> Vec<Value> {
        let mut out = Vec::new();
        match self {
            Value::List(Some(_), items) => out.push(Value::List(None, items.clone())),
            Value::Dict(Some(_), pairs) => out.push(Value::Dict(None, pairs.clone())),
            _ => {}
        }
        match self {
            Value::Tuple(items)
            | Value::List(_, items)
            | Value::Set(items)
            | Value::FrozenSet(items)
            | Value::Std(Std::Deque(items, _))
            | Value::Made(_, items) => {
                for i in 0..items.len() {
                    let mut v = self.clone();
                    v.items_mut().expect("a sequence").remove(i);
                    out.push(v);
                }
            }
            Value::Dict(_, pairs)
            | Value::Std(Std::OrderedDict(pairs) | Std::DefaultDict(_, pairs)) => {
                for i in 0..pairs.len() {
                    let mut v = self.clone();
                    v.pairs_mut().expect("a mapping").remove(i);
                    out.push(v);
                }
            }
            Value::Std(Std::Counter(pairs)) => {
                for i in 0..pairs.len() {
                    let mut p = pairs.clone();
                    p.remove(i);
                    out.push(Value::Std(Std::Counter(p)));
                }
            }
            Value::Std(Std::Array(code, items)) => {
                for i in 0..items.len() {
                    let mut c = items.clone();
                    c.remove(i);
                    out.push(Value::Std(Std::Array(*code, c)));
                }
            }
            _ => out.extend(self.scalar_shrinks()),
        }
        out
    }

    /// Smaller scalars: a number towards zero, a string shorter, a fold or a time zone dropped.
    fn scalar_shrinks(&self) -> Vec<Value> {
        let mut out = Vec::new();
        match self {
            Value::Int(i) if i.sign() != num_bigint::Sign::NoSign => {
                out.push(Value::Int(BigInt::from(0)));
                out.push(Value::Int(BigInt::from(1)));
                out.push(Value::Int(i / 2));
                out.push(Value::Int(i / 16));
            }
            Value::Str(s) if !s.is_empty() => {
                let chars: Vec<char> = s.chars().collect();
                for i in 0..chars.len() {
                    let mut c = chars.clone();
                    c.remove(i);
                    out.push(Value::Str(c.into_iter().collect()));
                }
            }
            Value::Bytes(b) | Value::ByteArray(b) if !b.is_empty() => {
                for i in 0..b.len() {
                    let mut c = b.clone();
                    c.remove(i);
                    out.push(if matches!(self, Value::Bytes(_)) {
                        Value::Bytes(c)
                    } else {
                        Value::ByteArray(c)
                    });
                }
            }
            Value::Std(Std::Path(p)) if !p.is_empty() => {
                out.push(Value::Std(Std::Path(String::new())))
            }
            Value::Std(Std::Pattern(p, flags)) => {
                if !p.is_empty() {
                    out.push(Value::Std(Std::Pattern(String::new(), *flags)));
                }
                if *flags != 0 {
                    out.push(Value::Std(Std::Pattern(p.clone(), 0)));
                }
            }
            Value::Std(Std::DateTime(d, us, f, tz)) => {
                if tz.is_some() {
                    out.push(Value::Std(Std::DateTime(*d, *us, *f, None)));
                }
                if *f != 0 {
                    out.push(Value::Std(Std::DateTime(*d, *us, 0, *tz)));
                }
            }
            Value::Std(Std::Time(t, us, f, tz)) => {
                if tz.is_some() {
                    out.push(Value::Std(Std::Time(*t, *us, *f, None)));
                }
                if *f != 0 {
                    out.push(Value::Std(Std::Time(*t, *us, 0, *tz)));
                }
            }
            _ => {}
        }
        out
    }

    fn child_count(&self) -> usize {
        let mut n = 0;
        self.for_each_child(&mut |_| n += 1);
        n
    }

    fn child(&self, i: usize) -> Option<&Value> {
        let mut found = None;
        let mut k = 0;
        self.for_each_child(&mut |c| {
            if k == i {
                found = Some(c);
            }
            k += 1;
        });
        found
    }

    fn child_mut(&mut self, i: usize) -> Option<&mut Value> {
        match self {
            Value::Tuple(items)
            | Value::List(_, items)
            | Value::Set(items)
            | Value::FrozenSet(items)
            | Value::Std(Std::Deque(items, _))
            | Value::Obj(_, items)
            | Value::Made(_, items) => items.get_mut(i),
            Value::Dict(_, pairs)
            | Value::Std(Std::OrderedDict(pairs) | Std::DefaultDict(_, pairs)) => pairs
                .get_mut(i / 2)
                .map(|(k, v)| if i % 2 == 0 { k } else { v }),
            Value::Std(Std::Counter(pairs)) => pairs.get_mut(i).map(|(k, _)| k),
            Value::Slice(parts) => parts.get_mut(i),
            _ => None,
        }
    }

    fn items_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Tuple(items)
            | Value::List(_, items)
            | Value::Set(items)
            | Value::FrozenSet(items)
            | Value::Std(Std::Deque(items, _))
            | Value::Made(_, items) => Some(items),
            _ => None,
        }
    }

    fn pairs_mut(&mut self) -> Option<&mut Vec<(Value, Value)>> {
        match self {
            Value::Dict(_, pairs)
            | Value::Std(Std::OrderedDict(pairs) | Std::DefaultDict(_, pairs)) => Some(pairs),
            _ => None,
        }
    }

    /// References to containers no longer in the value become `None`; names nothing refers to
    /// are dropped (a name defined twice, after a child replaced its parent, keeps its first).
    pub fn normalized(mut self) -> Value {
        let mut defined = BTreeSet::new();
        self.define(&mut defined);
        self.cut_dangling(&defined);
        let mut used = BTreeSet::new();
        self.refs(&mut used);
        self.drop_unused(&used);
        self
    }

    fn define(&mut self, defined: &mut BTreeSet<usize>) {
        if let Value::List(name, _) | Value::Dict(name, _) = self {
            if let Some(n) = *name {
                if !defined.insert(n) {
                    *name = None;
                }
            }
        }
        self.for_each_child_mut(&mut |c| c.define(defined));
    }

    fn cut_dangling(&mut self, defined: &BTreeSet<usize>) {
        if let Value::Ref(n) = self {
            if !defined.contains(n) {
                *self = Value::None;
            }
            return;
        }
        self.for_each_child_mut(&mut |c| c.cut_dangling(defined));
    }

    fn refs(&self, used: &mut BTreeSet<usize>) {
        if let Value::Ref(n) = self {
            used.insert(*n);
        }
        self.for_each_child(&mut |c| c.refs(used));
    }

    fn drop_unused(&mut self, used: &BTreeSet<usize>) {
        if let Value::List(name, _) | Value::Dict(name, _) = self {
            if name.is_some_and(|n| !used.contains(&n)) {
                *name = None;
            }
        }
        self.for_each_child_mut(&mut |c| c.drop_unused(used));
    }

    fn for_each_child_mut(&mut self, f: &mut dyn FnMut(&mut Value)) {
        let n = self.child_count();
        for i in 0..n {
            if let Some(c) = self.child_mut(i) {
                f(c);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::value::{generate, Vocabulary};

    /// Shrink greedily while `holds`, as explore does.
    fn shrink(mut v: Value, holds: impl Fn(&Value) -> bool) -> Value {
        while let Some(next) = v.shrinks().into_iter().find(|c| holds(c)) {
            v = next;
        }
        v
    }

    fn has_high_byte(v: &Value) -> bool {
        let mut found = matches!(v, Value::Bytes(b) if b.iter().any(|&c| c >= 0x80));
        v.for_each_child(&mut |c| found |= has_high_byte(c));
        found
    }

    #[test]
    fn shrinks_to_the_smallest_value_that_still_shows_it() {
        let v = Value::List(
            None,
            vec![
                Value::Int(BigInt::from(123456789)),
                Value::Dict(
                    None,
                    vec![(
                        Value::Str("key".into()),
                        Value::Tuple(vec![Value::Bytes(b"ab\xe9cd".to_vec()), Value::None]),
                    )],
                ),
            ],
        );
        assert_eq!(shrink(v, has_high_byte), Value::Bytes(b"\xe9".to_vec()));
        let n = Value::Tuple(vec![
            Value::Int(BigInt::from(-5000)),
            Value::Str("x".into()),
        ]);
        let big = |v: &Value| matches!(v, Value::Tuple(items) if items.iter().any(|i| matches!(i, Value::Int(n) if n.bits() > 3)));
        assert_eq!(
            shrink(n, big),
            Value::Tuple(vec![Value::Int(BigInt::from(-9))])
        );
    }

    #[test]
    fn every_candidate_is_smaller_and_whole() {
        fn refs_defined(v: &Value) -> bool {
            let (mut defined, mut used) = (BTreeSet::new(), BTreeSet::new());
            fn walk(v: &Value, d: &mut BTreeSet<usize>, u: &mut BTreeSet<usize>) {
                match v {
                    Value::List(Some(n), _) | Value::Dict(Some(n), _) => {
                        d.insert(*n);
                    }
                    Value::Ref(n) => {
                        u.insert(*n);
                    }
                    _ => {}
                }
                v.for_each_child(&mut |c| walk(c, d, u));
            }
            walk(v, &mut defined, &mut used);
            used.is_subset(&defined) && defined.is_subset(&used)
        }
        let vocabulary = Vocabulary {
            max_size: 14,
            stdlib: true,
            py36: true,
        };
        for i in 0..300 {
            let v = generate(11, i, &vocabulary).normalized();
            for c in v.shrinks() {
                assert!(c.size() < v.size(), "{c:?} is not smaller than {v:?}");
                assert!(
                    refs_defined(&c),
                    "a dangling reference or an unused name in {c:?}"
                );
            }
        }
    }

    #[test]
    fn a_cut_cycle_becomes_none() {
        let v = Value::List(Some(0), vec![Value::Tuple(vec![Value::Ref(0)])]);
        assert!(v.shrinks().contains(&Value::Tuple(vec![Value::None])));
        assert!(v
            .shrinks()
            .contains(&Value::List(None, vec![Value::Tuple(vec![Value::None])])));
    }
}
