//! `match` patterns: Python's `re` syntax and meaning (str patterns, as Python 3.11 to 3.13
//! read them), translated into an equivalent `fancy-regex` pattern, or refused with Python's
//! own reason (`nothing to repeat at position 0`) or the reason crosspickle cannot give
//! Python's meaning.
//!
//! What is translated rather than passed through, because the two engines read it
//! differently: `$` (before a final newline too), `\Z` (the very end), `\d`, `\w`, `\s`,
//! `\b`, `\B` (Python's Unicode classes), `.`, `^` and `$` under the `s` and `m` flags, `{`
//! that is not a repeat (a literal), `[[`, `&&`, `--`, `~~` in classes (literals), `\<`, `\>`
//! (literals), escapes (`\x41`, `\u0041`, octal `\101`, `\0`), `(?P<name>...)` and
//! `(?P=name)` (numbered groups), conditionals, `(?x)` verbose mode (comments and spaces
//! dropped here), possessive repeats (atomic groups). What is refused: everything Python
//! refuses, `\N{...}` names, lone surrogates, `(?a)` with `(?i)`, and back-references or
//! conditionals inside a look-behind.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// How far a match may backtrack before giving up (messages are matched whole).
const BACKTRACK_LIMIT: usize = 10_000_000;

/// Python's largest repeat count.
const MAX_REPEAT: u64 = 4_294_967_295;

/// A `match` pattern as written, with its compiled form. The loader compiles it once
/// ([`Pattern::compile`]), and every run judged against the rule shares that form (clones
/// share it too); one read back from a results file is compiled the first time it is matched.
#[derive(Clone)]
pub struct Pattern {
    text: String,
    compiled: Arc<OnceLock<Option<fancy_regex::Regex>>>,
}

impl Pattern {
    /// The pattern compiled now, or Python's (or crosspickle's) reason it cannot be.
    pub fn compile(text: &str) -> Result<Pattern, String> {
        let regex = compile(text)?;
        Ok(Pattern {
            text: text.to_string(),
            compiled: Arc::new(OnceLock::from(Some(regex))),
        })
    }

    /// The pattern, compiled when it is first matched (one that cannot be matches nothing).
    pub fn lazy(text: String) -> Pattern {
        Pattern {
            text,
            compiled: Arc::new(OnceLock::new()),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Does Python's `re.search` find the pattern in `message`? (False when the match gives up
    /// after too much backtracking.)
    pub fn is_match(&self, message: &str) -> bool {
        self.compiled
            .get_or_init(|| compile(&self.text).ok())
            .as_ref()
            .and_then(|re| re.is_match(message).ok())
            .unwrap_or(false)
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.text, f)
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl serde::Serialize for Pattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> serde::Deserialize<'de> for Pattern {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Pattern::lazy)
    }
}

/// Compile a `match` pattern written in Python's `re` syntax.
pub fn compile(pattern: &str) -> Result<fancy_regex::Regex, String> {
    let translated = translate(pattern)?;
    fancy_regex::RegexBuilder::new(&translated)
        .backtrack_limit(BACKTRACK_LIMIT)
        .build()
        .map_err(|e| format!("cannot be matched here: {e}"))
}

/// The fancy-regex pattern with the meaning Python gives `pattern`.
pub fn translate(pattern: &str) -> Result<String, String> {
    let mut t = Translator {
        chars: pattern.chars().collect(),
        pos: 0,
        groups: 0,
        open: Vec::new(),
        names: HashMap::new(),
        condition_refs: Vec::new(),
        lookbehind: 0,
    };
    let mut flags = Flags::default();
    t.leading_flags(&mut flags)?;
    let body = t.alternation(flags)?;
    if t.pos < t.chars.len() {
        // Only a `)` stops the top level early.
        return Err(t.error("unbalanced parenthesis"));
    }
    if let Some(&(group, at)) = t.condition_refs.iter().find(|(g, _)| *g > t.groups) {
        return Err(format!("invalid group reference {group} at position {at}"));
    }
    Ok(if flags.i {
        format!("(?i){}", body.text)
    } else {
        body.text
    })
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Flags {
    i: bool,
    m: bool,
    s: bool,
    x: bool,
    a: bool,
}

/// A piece of the translation and how many characters it matches.
#[derive(Debug, Clone)]
struct Piece {
    text: String,
    min: u64,
    /// `None`: unbounded, or unknown (a back-reference).
    max: Option<u64>,
    kind: PieceKind,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum PieceKind {
    /// Matches something; can be repeated.
    Atom,
    /// A zero-width assertion on position (`^`, `$`, `\b`, `\A`, `\Z`): Python refuses to
    /// repeat it.
    Anchor,
    /// Already repeated: repeating again is Python's "multiple repeat".
    Repeated,
}

impl Piece {
    fn atom(text: impl Into<String>, width: u64) -> Piece {
        Piece {
            text: text.into(),
            min: width,
            max: Some(width),
            kind: PieceKind::Atom,
        }
    }

    fn anchor(text: impl Into<String>) -> Piece {
        Piece {
            text: text.into(),
            min: 0,
            max: Some(0),
            kind: PieceKind::Anchor,
        }
    }
}

struct Translator {
    chars: Vec<char>,
    pos: usize,
    /// Capturing groups opened so far (Python numbers them by their opening parenthesis).
    groups: usize,
    /// The numbers of the groups still open.
    open: Vec<usize>,
    names: HashMap<String, usize>,
    /// Groups that conditionals name, to check once every group is known.
    condition_refs: Vec<(usize, usize)>,
    /// How many look-behinds enclose the current position.
    lookbehind: usize,
}

/// Python's `\s` for str patterns: `str.isspace()`.
const SPACE: &str = r"\t\n\x0B\x0C\r\x1C-\x1F \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}";
/// Python's `\w` for str patterns: `str.isalnum()` or `_`.
const WORD: &str = r"\p{L}\p{N}_";
const ASCII_SPACE: &str = r" \t\n\r\x0C\x0B";
const ASCII_WORD: &str = r"0-9A-Za-z_";

impl Translator {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn error(&self, what: &str) -> String {
        format!("{what} at position {}", self.pos)
    }

    fn error_at(&self, what: &str, at: usize) -> String {
        format!("{what} at position {at}")
    }

    /// `(?aimsux)` groups at the very start set the flags of the whole pattern (Python 3.11
    /// refuses them anywhere else).
    fn leading_flags(&mut self, flags: &mut Flags) -> Result<(), String> {
        while self.chars[self.pos..].starts_with(&['(', '?'])
            && self.peek_at(2).is_some_and(|c| "aiLmsux".contains(c))
        {
            let save = self.pos;
            self.pos += 2;
            let mut local = *flags;
            self.flag_letters(&mut local, true)?;
            if self.eat(')') {
                *flags = local;
            } else {
                // A scoped group `(?i:...)`: part of the body.
                self.pos = save;
                break;
            }
        }
        Ok(())
    }

    /// Flag letters after `(?`; `on` is false after a `-`.
    fn flag_letters(&mut self, flags: &mut Flags, on: bool) -> Result<(), String> {
        let mut seen_unicode = false;
        while let Some(c) = self.peek() {
            match c {
                'i' => flags.i = on,
                'm' => flags.m = on,
                's' => flags.s = on,
                'x' => flags.x = on,
                'a' | 'u' | 'L' if !on => {
                    return Err(
                        self.error("bad inline flag: cannot turn off flags 'a', 'u' and 'L'")
                    )
                }
                'a' => flags.a = true,
                'u' => seen_unicode = true,
                'L' => {
                    return Err(
                        self.error("bad inline flag: cannot use 'L' flag with a str pattern")
                    )
                }
                _ => break,
            }
            self.pos += 1;
        }
        if seen_unicode && flags.a {
            return Err(self.error("bad inline flag: flags 'a', 'u' and 'L' are incompatible"));
        }
        if flags.a && flags.i {
            return Err(self.error(
                "(?a) with (?i): ASCII-only case folding is not supported here (Python's re would fold only ASCII letters)",
            ));
        }
        Ok(())
    }

    /// Branches separated by `|`, up to a `)` (not consumed) or the end.
    fn alternation(&mut self, flags: Flags) -> Result<Piece, String> {
        let mut branches = vec![self.sequence(flags)?];
        while self.eat('|') {
            branches.push(self.sequence(flags)?);
        }
        if branches.len() == 1 {
            return Ok(branches.pop().expect("one branch"));
        }
        let min = branches.iter().map(|b| b.min).min().unwrap_or(0);
        let max = branches
            .iter()
            .map(|b| b.max)
            .try_fold(0, |acc, m| m.map(|m| acc.max(m)));
        let text = branches
            .iter()
            .map(|b| b.text.as_str())
            .collect::<Vec<_>>()
            .join("|");
        Ok(Piece {
            text,
            min,
            max,
            kind: PieceKind::Atom,
        })
    }

    /// Items up to a `|` or `)` (not consumed) or the end, repeats applied.
    fn sequence(&mut self, flags: Flags) -> Result<Piece, String> {
        let mut items: Vec<Piece> = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let start = self.pos;
            self.pos += 1;
            if flags.x {
                if " \t\n\r\x0B\x0C".contains(c) {
                    continue;
                }
                if c == '#' {
                    while let Some(c) = self.peek() {
                        self.pos += 1;
                        if c == '\n' {
                            break;
                        }
                    }
                    continue;
                }
            }
            match c {
                '*' | '+' | '?' => self.repeat(&mut items, start, c)?,
                '{' => {
                    if !self.brace_repeat(&mut items, start)? {
                        items.push(Piece::atom(r"\{", 1));
                    }
                }
                '.' => items.push(Piece::atom(if flags.s { "(?s:.)" } else { r"[^\n]" }, 1)),
                '^' => items.push(Piece::anchor(if flags.m { "(?m:^)" } else { r"\A" })),
                '$' => items.push(Piece::anchor(if flags.m { "(?m:$)" } else { r"(?=\n?\z)" })),
                '[' => {
                    let class = self.class(flags)?;
                    items.push(Piece::atom(class, 1));
                }
                '(' => {
                    if let Some(piece) = self.group(flags, start)? {
                        items.push(piece);
                    }
                }
                '\\' => items.push(self.escape(flags)?),
                c => items.push(Piece::atom(literal(c), 1)),
            }
        }
        let min = items.iter().map(|p| p.min).fold(0u64, u64::saturating_add);
        let max = items
            .iter()
            .try_fold(0u64, |acc, p| p.max.map(|m| acc.saturating_add(m)));
        Ok(Piece {
            text: items.into_iter().map(|p| p.text).collect(),
            min,
            max,
            kind: PieceKind::Atom,
        })
    }

    /// `*`, `+`, `?` applied to the last item, with a lazy `?` or possessive `+` after it.
    fn repeat(&mut self, items: &mut [Piece], at: usize, op: char) -> Result<(), String> {
        let (min, max) = match op {
            '*' => (0, None),
            '+' => (1, None),
            _ => (0, Some(1)),
        };
        self.apply_repeat(items, at, op.to_string(), min, max)
    }

    /// `{m}`, `{m,}`, `{,n}`, `{m,n}`; `false` (and nothing consumed) when the brace does not
    /// open one: then it is a literal, as in Python.
    fn brace_repeat(&mut self, items: &mut [Piece], at: usize) -> Result<bool, String> {
        let save = self.pos;
        let digits = |t: &mut Translator| {
            let start = t.pos;
            while t.peek().is_some_and(|c| c.is_ascii_digit()) {
                t.pos += 1;
            }
            t.chars[start..t.pos].iter().collect::<String>()
        };
        let lo = digits(self);
        let (hi, comma) = if self.eat(',') {
            (digits(self), true)
        } else {
            (lo.clone(), false)
        };
        if !self.eat('}') || (lo.is_empty() && !comma) {
            self.pos = save;
            return Ok(false);
        }
        let number = |s: &str| -> Result<Option<u64>, String> {
            if s.is_empty() {
                return Ok(None);
            }
            match s.parse::<u64>() {
                Ok(n) if n <= MAX_REPEAT => Ok(Some(n)),
                _ => Err(format!(
                    "the repetition number is too large at position {}",
                    at + 1
                )),
            }
        };
        let min = number(&lo)?.unwrap_or(0);
        let max = number(&hi)?;
        if max.is_some_and(|max| max < min) {
            return Err(self.error_at("min repeat greater than max repeat", at + 1));
        }
        let op = match (max, comma) {
            (Some(max), false) => format!("{{{max}}}"),
            (Some(max), true) => format!("{{{min},{max}}}"),
            (None, _) => format!("{{{min},}}"),
        };
        self.apply_repeat(items, at, op, min, max)?;
        Ok(true)
    }

    fn apply_repeat(
        &mut self,
        items: &mut [Piece],
        at: usize,
        op: String,
        min: u64,
        max: Option<u64>,
    ) -> Result<(), String> {
        let Some(last) = items.last_mut() else {
            return Err(self.error_at("nothing to repeat", at));
        };
        match last.kind {
            PieceKind::Anchor => return Err(self.error_at("nothing to repeat", at)),
            PieceKind::Repeated => return Err(self.error_at("multiple repeat", at)),
            PieceKind::Atom => {}
        }
        let text = if self.eat('?') {
            format!("{}{op}?", last.text)
        } else if self.eat('+') {
            format!("(?>{}{op})", last.text)
        } else {
            format!("{}{op}", last.text)
        };
        *last = Piece {
            text,
            min: last.min.saturating_mul(min),
            max: match (last.max, max) {
                (Some(0), _) => Some(0),
                (Some(a), Some(b)) => Some(a.saturating_mul(b)),
                _ => None,
            },
            kind: PieceKind::Repeated,
        };
        Ok(())
    }

    /// After `(`: a group of any kind; `None` for a comment or flags that produce nothing.
    fn group(&mut self, flags: Flags, at: usize) -> Result<Option<Piece>, String> {
        if !self.eat('?') {
            self.groups += 1;
            let n = self.groups;
            return self.capture(flags, n, at).map(Some);
        }
        let Some(c) = self.peek() else {
            return Err(self.error("unexpected end of pattern"));
        };
        self.pos += 1;
        match c {
            ':' => self.enclosed(flags, at, "(?:", ")").map(Some),
            '>' => self.enclosed(flags, at, "(?>", ")").map(Some),
            '#' => {
                while let Some(c) = self.peek() {
                    self.pos += 1;
                    if c == ')' {
                        return Ok(None);
                    }
                }
                Err(self.error_at("missing ), unterminated comment", at))
            }
            '=' | '!' => {
                let open = if c == '=' { "(?=" } else { "(?!" };
                let mut piece = self.enclosed(flags, at, open, ")")?;
                piece.min = 0;
                piece.max = Some(0);
                Ok(Some(piece))
            }
            '<' if matches!(self.peek(), Some('=' | '!')) => self.lookbehind(flags, at).map(Some),
            'P' => self.named(flags, at),
            '(' => self.conditional(flags, at).map(Some),
            c if "aiLmsux-".contains(c) => {
                self.pos -= 1;
                self.scoped_flags(flags, at).map(Some)
            }
            '<' => Err(self.error(&format!(
                "unknown extension ?<{}",
                self.peek().map(String::from).unwrap_or_default()
            ))),
            c => Err(self.error_at(&format!("unknown extension ?{c}"), at + 1)),
        }
    }

    /// After `(?<=` or `(?<!`'s `<`: a look-behind, of a fixed width.
    fn lookbehind(&mut self, flags: Flags, at: usize) -> Result<Piece, String> {
        let negative = self.peek() == Some('!');
        self.pos += 1;
        self.lookbehind += 1;
        let inner = self.alternation(flags);
        self.lookbehind -= 1;
        let inner = inner?;
        if !self.eat(')') {
            return Err(self.error_at("missing ), unterminated subpattern", at));
        }
        if inner.max != Some(inner.min) {
            return Err(self.error_at("look-behind requires fixed-width pattern", at));
        }
        let open = if negative { "(?<!" } else { "(?<=" };
        Ok(Piece {
            text: format!("{open}{})", inner.text),
            min: 0,
            max: Some(0),
            kind: PieceKind::Atom,
        })
    }

    /// After `(?P`: a named group `(?P<name>...)` or a back-reference `(?P=name)`.
    fn named(&mut self, flags: Flags, at: usize) -> Result<Option<Piece>, String> {
        match self.peek() {
            Some('<') => {
                self.pos += 1;
                let name = self.name('>')?;
                if self.names.contains_key(&name) {
                    return Err(format!(
                    "redefinition of group name '{name}' as group {}; was group {} at position {}",
                    self.groups + 1,
                    self.names[&name],
                    at + 4
                ));
                }
                self.groups += 1;
                let n = self.groups;
                self.names.insert(name, n);
                self.capture(flags, n, at).map(Some)
            }
            Some('=') => {
                self.pos += 1;
                let name_at = self.pos;
                let name = self.name(')')?;
                let Some(&n) = self.names.get(&name) else {
                    return Err(self.error_at(&format!("unknown group name '{name}'"), name_at));
                };
                self.backref(n, name_at).map(Some)
            }
            _ => Err(self.error("unknown extension ?P")),
        }
    }

    /// After `(?`, at its flag letters: `(?i:...)`, `(?-i:...)` and the like.
    fn scoped_flags(&mut self, flags: Flags, at: usize) -> Result<Piece, String> {
        let mut local = flags;
        self.flag_letters(&mut local, true)?;
        if self.eat('-') {
            if !self.peek().is_some_and(|c| "imsx".contains(c)) {
                return Err(self.error("missing flag"));
            }
            self.flag_letters(&mut local, false)?;
        }
        if self.eat(')') {
            return Err(self.error_at("global flags not at the start of the expression", at));
        }
        if !self.eat(':') {
            return Err(self.error("missing :"));
        }
        let open = match (flags.i, local.i) {
            (false, true) => "(?i:",
            (true, false) => "(?-i:",
            _ => "(?:",
        };
        self.enclosed(local, at, open, ")")
    }

    /// A capturing group numbered `n` (it stays open, for back-references, until its `)`).
    fn capture(&mut self, flags: Flags, n: usize, at: usize) -> Result<Piece, String> {
        self.open.push(n);
        let piece = self.enclosed(flags, at, "(", ")");
        self.open.pop();
        piece
    }

    /// The alternation up to the closing `)`, between `open` and `close`.
    fn enclosed(
        &mut self,
        flags: Flags,
        at: usize,
        open: &str,
        close: &str,
    ) -> Result<Piece, String> {
        let inner = self.alternation(flags)?;
        if !self.eat(')') {
            return Err(self.error_at("missing ), unterminated subpattern", at));
        }
        Ok(Piece {
            text: format!("{open}{}{close}", inner.text),
            min: inner.min,
            max: inner.max,
            kind: PieceKind::Atom,
        })
    }

    /// `(?(1)yes|no)` or `(?(name)yes|no)`, after `(?(`.
    fn conditional(&mut self, flags: Flags, at: usize) -> Result<Piece, String> {
        if self.lookbehind > 0 {
            return Err(self.error_at(
                "a conditional inside a look-behind is not supported here",
                at,
            ));
        }
        let name_at = self.pos;
        let name = self.name(')')?;
        let group = if name.chars().all(|c| c.is_ascii_digit()) {
            let n: usize = name
                .parse()
                .map_err(|_| self.error_at("invalid group reference", name_at))?;
            if n == 0 {
                return Err(self.error_at("bad group number", name_at));
            }
            self.condition_refs.push((n, name_at));
            n
        } else {
            match self.names.get(&name) {
                Some(&n) => n,
                None => return Err(self.error_at(&format!("unknown group name '{name}'"), name_at)),
            }
        };
        let yes = self.sequence(flags)?;
        let no = if self.eat('|') {
            Some(self.sequence(flags)?)
        } else {
            None
        };
        if self.peek() == Some('|') {
            return Err(self.error("conditional backref with more than two branches"));
        }
        if !self.eat(')') {
            return Err(self.error_at("missing ), unterminated subpattern", at));
        }
        let no_text = no.as_ref().map(|n| n.text.as_str()).unwrap_or("");
        let (min, max) = match &no {
            Some(no) => (
                yes.min.min(no.min),
                yes.max.zip(no.max).map(|(a, b)| a.max(b)),
            ),
            None => (0, yes.max),
        };
        Ok(Piece {
            text: format!("(?({group}){}|{no_text})", yes.text),
            min,
            max,
            kind: PieceKind::Atom,
        })
    }

    /// A group name up to `end` (consumed): an identifier, as Python requires.
    fn name(&mut self, end: char) -> Result<String, String> {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c == end {
                break;
            }
            self.pos += 1;
        }
        let name: String = self.chars[start..self.pos].iter().collect();
        if !self.eat(end) {
            return Err(self.error_at(&format!("missing {end}, unterminated name"), start));
        }
        if name.is_empty() {
            return Err(self.error_at("missing group name", start));
        }
        let ok = name.chars().all(|c| c.is_ascii_digit()) || is_identifier(&name);
        if !ok {
            return Err(self.error_at(&format!("bad character in group name '{name}'"), start));
        }
        Ok(name)
    }

    fn backref(&mut self, n: usize, at: usize) -> Result<Piece, String> {
        if self.open.contains(&n) {
            return Err(self.error_at("cannot refer to an open group", at));
        }
        if self.lookbehind > 0 {
            return Err(self.error_at(
                "a back-reference inside a look-behind is not supported here",
                at,
            ));
        }
        Ok(Piece {
            text: format!(r"(?:\{n})"),
            min: 0,
            max: None,
            kind: PieceKind::Atom,
        })
    }

    /// After `\` outside a class.
    fn escape(&mut self, flags: Flags) -> Result<Piece, String> {
        let at = self.pos - 1;
        let Some(c) = self.peek() else {
            return Err(self.error_at("bad escape (end of pattern)", at));
        };
        self.pos += 1;
        let word = if flags.a { ASCII_WORD } else { WORD };
        Ok(match c {
            'A' => Piece::anchor(r"\A"),
            'Z' => Piece::anchor(r"\z"),
            'b' => Piece::anchor(format!(
                r"(?:(?<=[{word}])(?![{word}])|(?<![{word}])(?=[{word}]))"
            )),
            'B' => Piece::anchor(format!(
                r"(?!\A\z)(?:(?<=[{word}])(?=[{word}])|(?<![{word}])(?![{word}]))"
            )),
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => Piece::atom(class_escape(c, flags.a, false), 1),
            '0'..='9' => {
                if let Some(value) = self.octal(c, at, false)? {
                    Piece::atom(literal(value), 1)
                } else {
                    let start = self.pos - 1;
                    if self.peek().is_some_and(|d| d.is_ascii_digit()) {
                        self.pos += 1;
                    }
                    let digits: String = self.chars[start..self.pos].iter().collect();
                    let n: usize = digits.parse().expect("digits");
                    if n > self.groups {
                        return Err(self.error_at(&format!("invalid group reference {n}"), at + 1));
                    }
                    self.backref(n, at)?
                }
            }
            c => Piece::atom(literal(self.char_escape(c, at)?), 1),
        })
    }

    /// An octal escape after `\` and its first digit `first`, or `None` when it is a group
    /// reference (outside classes: `\1` to `\99`).
    fn octal(&mut self, first: char, at: usize, in_class: bool) -> Result<Option<char>, String> {
        let is_oct = |c: Option<char>| c.is_some_and(|c| ('0'..='7').contains(&c));
        let mut digits = String::from(first);
        if first == '0' {
            for _ in 0..2 {
                if is_oct(self.peek()) {
                    digits.push(self.peek().expect("a digit"));
                    self.pos += 1;
                }
            }
        } else if in_class {
            if !('1'..='7').contains(&first) {
                return Err(self.error_at(&format!("bad escape \\{first}"), at));
            }
            for _ in 0..2 {
                if is_oct(self.peek()) {
                    digits.push(self.peek().expect("a digit"));
                    self.pos += 1;
                }
            }
        } else if ('1'..='7').contains(&first) && is_oct(self.peek()) && is_oct(self.peek_at(1)) {
            digits.push(self.peek().expect("a digit"));
            digits.push(self.peek_at(1).expect("a digit"));
            self.pos += 2;
        } else {
            return Ok(None);
        }
        let value = u32::from_str_radix(&digits, 8).expect("octal digits");
        if value > 0o377 {
            return Err(self.error_at(
                &format!("octal escape value \\{digits} outside of range 0-0o377"),
                at,
            ));
        }
        Ok(Some(char::from_u32(value).expect("below 256")))
    }

    /// A character escape (`\n`, `\x41`, `\u00e9`, `\.`), the same inside and outside classes
    /// except for what the callers handle first.
    fn char_escape(&mut self, c: char, at: usize) -> Result<char, String> {
        let hex = |t: &mut Translator, n: usize, kind: char| -> Result<char, String> {
            let digits: String = t.chars[t.pos..].iter().take(n).collect();
            if digits.chars().count() < n || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err(t.error_at(&format!("incomplete escape \\{kind}{digits}"), at));
            }
            t.pos += n;
            let value = u32::from_str_radix(&digits, 16).expect("hex digits");
            char::from_u32(value).ok_or_else(|| {
                if (0xD800..0xE000).contains(&value) {
                    t.error_at(
                        &format!("\\{kind}{digits} is a lone surrogate, which no message holds"),
                        at,
                    )
                } else {
                    t.error_at(&format!("bad escape \\{kind}{digits}"), at)
                }
            })
        };
        Ok(match c {
            'a' => '\x07',
            'f' => '\x0C',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\x0B',
            'x' => hex(self, 2, 'x')?,
            'u' => hex(self, 4, 'u')?,
            'U' => hex(self, 8, 'U')?,
            'N' => {
                return Err(self.error_at(
                    "\\N{...} named characters are not supported here: write the character itself or \\uXXXX",
                    at,
                ))
            }
            c if c.is_ascii_alphanumeric() => {
                return Err(self.error_at(&format!("bad escape \\{c}"), at))
            }
            c => c,
        })
    }

    /// After `[`: a character class, as a fancy-regex class.
    fn class(&mut self, flags: Flags) -> Result<String, String> {
        let at = self.pos - 1;
        let mut out = String::from("[");
        if self.eat('^') {
            out.push('^');
        }
        let mut first = true;
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error_at("unterminated character set", at));
            };
            if c == ']' && !first {
                self.pos += 1;
                break;
            }
            first = false;
            let item_at = self.pos;
            let lo = self.class_item(flags)?;
            // A range `a-z`, unless the `-` ends the class.
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']') {
                self.pos += 1;
                let hi = self.class_item(flags)?;
                let (ClassItem::Char(lo), ClassItem::Char(hi)) = (&lo, &hi) else {
                    let text: String = self.chars[item_at..self.pos].iter().collect();
                    return Err(self.error_at(&format!("bad character range {text}"), item_at));
                };
                if lo > hi {
                    let text: String = self.chars[item_at..self.pos].iter().collect();
                    return Err(self.error_at(&format!("bad character range {text}"), item_at));
                }
                out.push_str(&class_literal(*lo));
                out.push('-');
                out.push_str(&class_literal(*hi));
                continue;
            }
            match lo {
                ClassItem::Char(c) => out.push_str(&class_literal(c)),
                ClassItem::Set(s) => out.push_str(&s),
            }
        }
        out.push(']');
        Ok(out)
    }

    fn class_item(&mut self, flags: Flags) -> Result<ClassItem, String> {
        let c = self.peek().expect("the caller checked");
        self.pos += 1;
        if c != '\\' {
            return Ok(ClassItem::Char(c));
        }
        let at = self.pos - 1;
        let Some(e) = self.peek() else {
            return Err(self.error_at("unterminated character set", at));
        };
        self.pos += 1;
        Ok(match e {
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => ClassItem::Set(class_escape(e, flags.a, true)),
            'b' => ClassItem::Char('\x08'),
            '0'..='9' => ClassItem::Char(self.octal(e, at, true)?.expect("octal in a class")),
            e => ClassItem::Char(self.char_escape(e, at)?),
        })
    }
}

enum ClassItem {
    Char(char),
    /// A class escape (`\d`), as fancy-regex class text.
    Set(String),
}

/// `\d`, `\D`, `\s`, `\S`, `\w`, `\W` with Python's meaning, as an item of a class when
/// `in_class`, else as a class of its own.
fn class_escape(c: char, ascii: bool, in_class: bool) -> String {
    let (set, negated) = match (c, ascii) {
        ('d' | 'D', false) => (r"\p{Nd}", c == 'D'),
        ('d' | 'D', true) => ("0-9", c == 'D'),
        ('s' | 'S', false) => (SPACE, c == 'S'),
        ('s' | 'S', true) => (ASCII_SPACE, c == 'S'),
        ('w' | 'W', false) => (WORD, c == 'W'),
        _ => (ASCII_WORD, c == 'W'),
    };
    let caret = if negated { "^" } else { "" };
    if in_class && !negated {
        set.to_string()
    } else {
        format!("[{caret}{set}]")
    }
}

/// A character outside a class, escaped for fancy-regex when it could mean something there
/// (`<` and `>` stay bare: escaped, they would be word boundaries).
fn literal(c: char) -> String {
    class_literal(c)
}

/// A character, escaped when it could mean something to fancy-regex in or out of a class.
fn class_literal(c: char) -> String {
    if c.is_ascii_punctuation() && c != '<' && c != '>' {
        format!("\\{c}")
    } else if c.is_control() || c.is_whitespace() {
        format!("\\x{{{:X}}}", c as u32)
    } else {
        c.to_string()
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(pattern: &str, text: &str) -> bool {
        compile(pattern)
            .unwrap_or_else(|e| panic!("{pattern}: {e}"))
            .is_match(text)
            .unwrap()
    }

    fn refused(pattern: &str) -> String {
        match translate(pattern) {
            Err(e) => e,
            Ok(t) => panic!("{pattern} was translated to {t}"),
        }
    }

    #[test]
    fn dollar_and_end_anchors_mean_what_python_says() {
        assert!(search("abc$", "abc\n"));
        assert!(search("abc$", "abc"));
        assert!(!search("abc$", "abc\n\n"));
        assert!(!search(r"abc\Z", "abc\n"));
        assert!(search(r"abc\Z", "abc"));
        assert!(search("(?m)^b$", "a\nb\nc"));
        assert!(!search("^b$", "a\nb\nc"));
        assert!(search(r"\Aa", "ab"));
    }

    #[test]
    fn groups_and_back_references() {
        assert!(search(r"(?P<q>['])x(?P=q)", "'x'"));
        assert!(!search(r"(?P<q>['])x(?P=q)", "'x\""));
        assert!(search(r"(a)(b)\2\1", "abba"));
        assert!(refused(r"(a)\10").contains("invalid group reference 10"));
        assert!(search(r"(?P<x>a)?(?(x)b|c)", "ab"));
        assert!(search(r"(?P<x>a)?(?(x)b|c)", "c"));
        assert!(search(r"(a)?(?(1)b|c)", "c"));
        assert!(refused("(?P<x>a)(?P<x>b)").contains("redefinition of group name"));
        assert!(refused("(?P=nope)").contains("unknown group name 'nope'"));
        assert!(refused(r"(a\1)").contains("cannot refer to an open group"));
        assert!(refused("(?<name>a)").contains("unknown extension ?<n"));
    }

    #[test]
    fn inline_flags() {
        assert!(search("(?i)abc", "ABC"));
        assert!(search("a(?i:b)c", "aBc"));
        assert!(!search("a(?i:b)c", "aBC"));
        assert!(search("(?i)a(?-i:b)", "Ab"));
        assert!(!search("(?i)a(?-i:b)", "AB"));
        assert!(search("(?s)a.b", "a\nb"));
        assert!(!search("a.b", "a\nb"));
        assert!(search("(?x) a b  # comment\n c", "abc"));
        assert!(search("(?x)[ ]", " "));
        assert!(search(r"(?x)a\ b", "a b"));
        assert!(search("(?a)\\w", "a"));
        assert!(!search("(?a)^\\w$", "é"));
        assert!(search("^\\w$", "é"));
        assert!(refused("a(?i)b").contains("global flags not at the start"));
        assert!(refused("(?L)a").contains("'L' flag with a str pattern"));
        assert!(refused("(?ai)a").contains("ASCII-only case folding"));
        assert!(refused("(?au)a").contains("incompatible"));
    }

    #[test]
    fn literals_python_reads_as_literals() {
        assert!(search("{'a': 1}", "x {'a': 1}"));
        assert!(search("a{", "a{"));
        assert!(search("a{1,x}", "a{1,x}"));
        assert!(search(r"\<lambda\>", "<lambda>"));
        assert!(search("[[]", "["));
        assert!(search("[a&&b]", "&"));
        assert!(search("[a-]", "-"));
        assert!(search("[]a]", "]"));
        assert!(search(r"[\b]", "\x08"));
        assert!(search(r"^\x41\u00e9\101\0$", "AéA\0"));
        assert!(search(r"a{,2}b", "aab"));
        assert!(search("#", "#"));
        assert!(search("a b", "a b"));
    }

    #[test]
    fn classes_are_python_s() {
        assert!(
            search(r"^\s$", "\x1c"),
            "Python's \\s has the file separators"
        );
        assert!(
            !search(r"^\w$", "\u{301}"),
            "Python's \\w has no combining marks"
        );
        assert!(search(r"^\w$", "²"), "Python's \\w has every number");
        assert!(search(r"^\d$", "٣"));
        assert!(search(r"\bfoo\b", "a foo."));
        assert!(!search(r"\bfoo\b", "afoo"));
        assert!(search(r"\Bfoo", "afoo"));
        assert!(!search(r"\B", ""), "as in Python 3.13");
        assert!(search(r"[^\W\d]", "x"));
        assert!(!search(r"[^\W\d]", "5"));
    }

    #[test]
    fn repeats() {
        assert!(search("^a{2}$", "aa"));
        assert!(search("^a{2,}$", "aaa"));
        assert!(search("^a*?b", "aab"));
        assert!(!search("^a++a", "aaa"), "possessive: gives nothing back");
        assert!(search("^(?>ab|a)b", "abb"));
        assert_eq!(refused("*a"), "nothing to repeat at position 0");
        assert!(refused("a**").contains("multiple repeat"));
        assert!(refused("^*").contains("nothing to repeat"));
        assert!(refused("a{3,2}").contains("min repeat greater than max repeat"));
        assert!(refused("a{4294967296}").contains("too large"));
    }

    #[test]
    fn look_around() {
        assert!(search("(?<=a)b", "ab"));
        assert!(search("(?<!a)b", "cb"));
        assert!(search("(?<=ab|cd)e", "cde"));
        assert!(refused("(?<=a+)b").contains("fixed-width"));
        assert!(refused("(?<=a|bc)d").contains("fixed-width"));
        assert!(refused(r"(a)(?<=\1)").contains("look-behind"));
        assert!(search("a(?=b)", "ab"));
        assert!(search("a(?!b)", "ac"));
    }

    #[test]
    fn errors_python_gives() {
        for (pattern, error) in [
            (
                "(unclosed",
                "missing ), unterminated subpattern at position 0",
            ),
            ("a)", "unbalanced parenthesis at position 1"),
            ("[a", "unterminated character set at position 0"),
            (r"\q", "bad escape \\q at position 0"),
            (r"\x4", "incomplete escape \\x4 at position 0"),
            ("[z-a]", "bad character range z-a at position 1"),
            (r"[\d-z]", "bad character range \\d-z at position 1"),
            (
                r"\N{DIGIT ONE}",
                "\\N{...} named characters are not supported",
            ),
            (r"\ud800", "lone surrogate"),
            (r"\777", "octal escape value \\777 outside of range 0-0o377"),
            ("(?Px)", "unknown extension ?P"),
        ] {
            let e = refused(pattern);
            assert!(e.contains(error), "{pattern}: {e}");
        }
    }

    #[test]
    fn the_corpus_patterns_still_match() {
        assert!(search(
            "^unsupported pickle protocol: [45]$",
            "unsupported pickle protocol: 5"
        ));
        assert!(search(
            r"^Can't get attribute 'nope' on <module 'builtins' \(built-in\)>$",
            "Can't get attribute 'nope' on <module 'builtins' (built-in)>"
        ));
        assert!(search(
            r"^Can't pickle <built-in method \w+ of _socket.socket object",
            "Can't pickle <built-in method recv of _socket.socket object at 0x7f>"
        ));
        assert!(search("^$", ""));
    }
}
