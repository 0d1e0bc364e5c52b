//! A case file's YAML as a tree of nodes that know where they stand (line and column of each
//! key and value), read under limits that refuse a hostile file before any time is spent on
//! it: its size, how deep it nests and how far its aliases expand.
//!
//! The events come from libyaml (`unsafe-libyaml-norway`), the parser serde_norway uses, so
//! what is valid YAML is what it was; the case's types are read from this tree (`de.rs`),
//! the text is parsed once. The parser streams: the limits are checked event by event, so a file nested
//! 100,000 levels deep is refused after reading the first [`MAX_DEPTH`] of them.

use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::rc::Rc;

use unsafe_libyaml_norway as unsafe_libyaml;

/// The largest case file read, in bytes (checked before reading it).
pub const MAX_BYTES: u64 = 1024 * 1024;
/// How deep collections may nest (a case needs about six levels).
pub const MAX_DEPTH: usize = 32;
/// How many nodes the document may hold once every alias is expanded.
pub const MAX_NODES: usize = 100_000;

/// 1-based line and column.
pub type Pos = (usize, usize);

/// A node of the document and where it starts.
#[derive(Debug, Clone)]
pub struct Node {
    pub at: Pos,
    /// Where the content was written: `at` itself, or for an alias (`*a`) its anchor's node
    /// (where serde's errors about the content point).
    pub origin: Pos,
    /// A collection's tag (`!name [...]`); a scalar's is in its [`Scalar`].
    pub tag: Option<String>,
    pub kind: Kind,
}

#[derive(Debug, Clone)]
pub enum Kind {
    Scalar(Scalar),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

/// A scalar as written: its text, whether it was plain (unquoted, not a block), its tag.
#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    pub text: String,
    pub plain: bool,
    /// A literal block (`|`).
    pub literal: bool,
    /// The resolved tag (`tag:yaml.org,2002:str` for `!!str`), when the scalar has one.
    pub tag: Option<String>,
}

/// Why the text is not a document this loader accepts: not YAML, or beyond a limit.
#[derive(Debug, Clone, PartialEq)]
pub struct YamlError {
    pub at: Pos,
    pub message: String,
}

/// One step of a path into the tree: a mapping's key, or a sequence's item.
#[derive(Debug, Clone, Copy)]
pub enum PathStep<'a> {
    Key(&'a str),
    Item(usize),
}

impl Node {
    /// The node at `path` below this one (`[Key("expect"), Item(3), Key("python")]`), if it is
    /// there.
    pub fn find(&self, path: &[PathStep]) -> Option<&Node> {
        path.iter().try_fold(self, |node, step| match *step {
            PathStep::Key(key) => node.get(key),
            PathStep::Item(i) => node.item(i),
        })
    }

    /// The node at `path`, or the last node on the way to it that is there.
    pub fn nearest(&self, path: &[PathStep]) -> &Node {
        let mut node = self;
        for i in 1..=path.len() {
            match self.find(&path[..i]) {
                Some(next) => node = next,
                None => break,
            }
        }
        node
    }

    pub fn scalar(&self) -> Option<&Scalar> {
        match &self.kind {
            Kind::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// The value of `key` in a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|(_, v)| v)
    }

    /// The key node and the value node of `key` in a mapping.
    pub fn entry(&self, key: &str) -> Option<(&Node, &Node)> {
        match &self.kind {
            Kind::Map(entries) => entries
                .iter()
                .find(|(k, _)| k.scalar().is_some_and(|s| s.text == key))
                .map(|(k, v)| (k, v)),
            _ => None,
        }
    }

    /// Item `i` of a sequence.
    pub fn item(&self, i: usize) -> Option<&Node> {
        match &self.kind {
            Kind::Seq(items) => items.get(i),
            _ => None,
        }
    }

    /// The items of a sequence, or the node itself for anything else (`where: {p: 5}` and
    /// `where: {p: [4, 5]}` alike).
    pub fn items_or_self(&self) -> Vec<&Node> {
        match &self.kind {
            Kind::Seq(items) => items.iter().collect(),
            _ => vec![self],
        }
    }

    /// The node as an error message quotes it: a scalar's text (cut when long), `[...]` or
    /// `{...}` for a collection.
    pub fn quoted(&self) -> String {
        match &self.kind {
            Kind::Scalar(s) => {
                let mut text: String = s.text.chars().take(80).collect();
                if s.text.chars().count() > 80 {
                    text.push('…');
                }
                format!("`{}`", text.replace('\n', "\\n"))
            }
            Kind::Seq(_) => "a list".to_string(),
            Kind::Map(_) => "a mapping".to_string(),
        }
    }
}

/// Parse `text`: `Ok(None)` for a document without content (empty, or comments only).
pub fn parse(text: &str) -> Result<Option<Node>, YamlError> {
    if text.len() as u64 > MAX_BYTES {
        return Err(YamlError {
            at: (1, 1),
            message: too_large(text.len() as u64),
        });
    }
    let mut parser = Parser::new(text.as_bytes());
    let mut builder = Builder::default();
    loop {
        let (event, at) = parser.next()?;
        match builder.push(event, at)? {
            Step::More => {}
            Step::Done(root) => return Ok(root),
        }
    }
}

/// The message for a file of `size` bytes, over [`MAX_BYTES`].
pub fn too_large(size: u64) -> String {
    format!(
        "the file is {size} bytes: case files are limited to {MAX_BYTES} bytes (1 MiB); refused unread"
    )
}

enum Event {
    StreamStart,
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    Alias(String),
    Scalar(Scalar, Option<String>),
    /// Anchor, tag.
    SequenceStart(Option<String>, Option<String>),
    SequenceEnd,
    MappingStart(Option<String>, Option<String>),
    MappingEnd,
}

enum Step {
    More,
    Done(Option<Node>),
}

/// A collection being read, with its anchor and how many nodes it holds so far.
struct Open {
    at: Pos,
    anchor: Option<String>,
    tag: Option<String>,
    nodes: usize,
    kind: Kind,
    /// A mapping's key waiting for its value.
    key: Option<Node>,
}

#[derive(Default)]
struct Builder {
    stack: Vec<Open>,
    /// Each anchor's node and its size in nodes (what an alias to it adds).
    anchors: HashMap<String, (Rc<Node>, usize)>,
    total: usize,
    documents: usize,
    root: Option<Node>,
}

impl Builder {
    fn push(&mut self, event: Event, at: Pos) -> Result<Step, YamlError> {
        match event {
            Event::StreamStart | Event::DocumentEnd => {}
            Event::DocumentStart => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(YamlError {
                        at,
                        message: "a second YAML document (`---`): a case file holds one case"
                            .into(),
                    });
                }
            }
            Event::StreamEnd => return Ok(Step::Done(self.root.take())),
            Event::Alias(name) => {
                let Some((node, size)) = self.anchors.get(&name) else {
                    return Err(YamlError {
                        at,
                        message: format!("alias `*{name}` names no anchor before it"),
                    });
                };
                let (node, size) = (node.clone(), *size);
                self.count(size, at, Some(&name))?;
                // The copy keeps its `origin`: the anchored node's position.
                let mut node = (*node).clone();
                node.at = at;
                self.close(node, size, None)?;
            }
            Event::Scalar(scalar, anchor) => {
                self.count(1, at, None)?;
                let node = Node {
                    at,
                    origin: at,
                    tag: None,
                    kind: Kind::Scalar(scalar),
                };
                self.close(node, 1, anchor)?;
            }
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                let (is_map, anchor, tag) = match event {
                    Event::MappingStart(anchor, tag) => (true, anchor, tag),
                    Event::SequenceStart(anchor, tag) => (false, anchor, tag),
                    _ => unreachable!("matched above"),
                };
                self.count(1, at, None)?;
                if self.stack.len() >= MAX_DEPTH {
                    return Err(YamlError {
                        at,
                        message: format!(
                            "nesting deeper than {MAX_DEPTH} levels: a case needs a handful; refused before reading further"
                        ),
                    });
                }
                self.stack.push(Open {
                    at,
                    anchor,
                    tag,
                    nodes: 1,
                    kind: if is_map {
                        Kind::Map(Vec::new())
                    } else {
                        Kind::Seq(Vec::new())
                    },
                    key: None,
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let open = self.stack.pop().expect("libyaml balances collections");
                let node = Node {
                    at: open.at,
                    origin: open.at,
                    tag: open.tag,
                    kind: open.kind,
                };
                self.close(node, open.nodes, open.anchor)?;
            }
        }
        Ok(Step::More)
    }

    /// Count `n` more nodes (an alias counts every node it expands to).
    fn count(&mut self, n: usize, at: Pos, alias: Option<&str>) -> Result<(), YamlError> {
        self.total = self.total.saturating_add(n);
        if self.total > MAX_NODES {
            let message = match alias {
                Some(name) => format!(
                    "alias `*{name}` expands the document past {MAX_NODES} nodes: aliases that expand to that much are refused (a case needs a few hundred)"
                ),
                None => format!(
                    "more than {MAX_NODES} nodes: a case needs a few hundred; refused before reading further"
                ),
            };
            return Err(YamlError { at, message });
        }
        Ok(())
    }

    /// A finished node of `size` nodes goes into its parent, or becomes the root.
    fn close(&mut self, node: Node, size: usize, anchor: Option<String>) -> Result<(), YamlError> {
        if let Some(name) = anchor {
            self.anchors.insert(name, (Rc::new(node.clone()), size));
        }
        let Some(parent) = self.stack.last_mut() else {
            self.root = Some(node);
            return Ok(());
        };
        parent.nodes = parent.nodes.saturating_add(size);
        match &mut parent.kind {
            Kind::Seq(items) => items.push(node),
            Kind::Map(entries) => match parent.key.take() {
                None => parent.key = Some(node),
                Some(key) => {
                    if let Some(text) = key.scalar().map(|s| s.text.clone()) {
                        if let Some((first, _)) = entries
                            .iter()
                            .find(|(k, _)| k.scalar().is_some_and(|s| s.text == text))
                        {
                            return Err(YamlError {
                                at: key.at,
                                message: format!(
                                    "duplicate key `{text}` (first at line {}): a mapping names each key once",
                                    first.at.0
                                ),
                            });
                        }
                    }
                    entries.push((key, node));
                }
            },
            Kind::Scalar(_) => unreachable!("only collections are open"),
        }
        Ok(())
    }
}

/// libyaml's parser over a borrowed text. The parser keeps pointers into itself (its input
/// handler's data) and into the text, so it lives in a box that never moves, and the text
/// outlives it.
struct Parser<'a> {
    sys: Box<MaybeUninit<unsafe_libyaml::yaml_parser_t>>,
    text: &'a [u8],
    /// The position of the last event, from which the next one is counted on.
    cursor: Cursor,
}

impl<'a> Parser<'a> {
    fn new(text: &'a [u8]) -> Parser<'a> {
        let mut boxed = Box::new(MaybeUninit::<unsafe_libyaml::yaml_parser_t>::uninit());
        // SAFETY: `yaml_parser_initialize` initialises the whole struct in place (it fails
        // only when allocation fails, which aborts in Rust anyway); the box never moves, so
        // the self-pointer libyaml stores stays valid; `text` outlives the parser (`'a`).
        unsafe {
            let parser = boxed.as_mut_ptr();
            if unsafe_libyaml::yaml_parser_initialize(parser).fail {
                panic!("libyaml could not allocate its parser");
            }
            unsafe_libyaml::yaml_parser_set_encoding(parser, unsafe_libyaml::YAML_UTF8_ENCODING);
            unsafe_libyaml::yaml_parser_set_input_string(parser, text.as_ptr(), text.len() as u64);
        }
        Parser {
            sys: boxed,
            text,
            cursor: Cursor::default(),
        }
    }

    fn next(&mut self) -> Result<(Event, Pos), YamlError> {
        let mut event = MaybeUninit::<unsafe_libyaml::yaml_event_t>::uninit();
        // SAFETY: the parser was initialised in `new`; an event that `yaml_parser_parse`
        // filled in is read, then freed once with `yaml_event_delete`.
        unsafe {
            let parser = self.sys.as_mut_ptr();
            if (&*parser).error != unsafe_libyaml::YAML_NO_ERROR
                || unsafe_libyaml::yaml_parser_parse(parser, event.as_mut_ptr()).fail
            {
                return Err(parse_error(parser, self.text));
            }
            let event = event.as_mut_ptr();
            let at = self
                .cursor
                .advance(self.text, (*event).start_mark.index as usize);
            let converted = convert(&*event);
            unsafe_libyaml::yaml_event_delete(event);
            Ok((converted, at))
        }
    }
}

impl Drop for Parser<'_> {
    fn drop(&mut self) {
        // SAFETY: initialised in `new`, deleted once.
        unsafe { unsafe_libyaml::yaml_parser_delete(self.sys.as_mut_ptr()) }
    }
}

/// The line and column of byte `index` of `text` as an editor counts them: lines end at `\n`
/// only, columns count characters. (libyaml's own line and column also end lines at U+0085,
/// U+2028 and U+2029, as YAML 1.1 does, so a file an editor shows as one line could get an
/// error on its third; its byte index is exact.)
pub fn position(text: &[u8], index: usize) -> Pos {
    Cursor::default().advance(text, index)
}

/// A position in a text, moved forward byte by byte, so that positions asked for in order
/// cost one pass over the text in all (libyaml's events come in order).
#[derive(Debug, Clone, Copy)]
struct Cursor {
    index: usize,
    line: usize,
    column: usize,
}

impl Default for Cursor {
    fn default() -> Self {
        Cursor {
            index: 0,
            line: 1,
            column: 1,
        }
    }
}

impl Cursor {
    fn advance(&mut self, text: &[u8], index: usize) -> Pos {
        let index = index.min(text.len());
        if index < self.index {
            *self = Cursor::default();
        }
        for &b in &text[self.index..index] {
            if b == b'\n' {
                self.line += 1;
                self.column = 1;
            } else if b & 0xC0 != 0x80 {
                // Characters, not bytes: every byte but a UTF-8 continuation byte starts one.
                self.column += 1;
            }
        }
        self.index = index;
        (self.line, self.column)
    }
}

/// libyaml's error: its problem, its context, where it was found.
unsafe fn parse_error(parser: *const unsafe_libyaml::yaml_parser_t, source: &[u8]) -> YamlError {
    let text = |ptr: *const std::ffi::c_char| {
        (!ptr.is_null()).then(|| {
            // SAFETY: libyaml's problem and context are NUL-terminated static strings.
            unsafe { std::ffi::CStr::from_ptr(ptr) }
                .to_string_lossy()
                .into_owned()
        })
    };
    // SAFETY: the caller passes an initialised parser.
    let parser = unsafe { &*parser };
    let (problem, context, mark) = (
        text(parser.problem.cast()),
        text(parser.context.cast()),
        parser.problem_mark,
    );
    let mut message = problem.unwrap_or_else(|| "not valid YAML".to_string());
    if let Some(context) = context {
        message.push_str(&format!(" ({context})"));
    }
    let at = position(source, mark.index as usize);
    if let Some(hint) = hint(&message, source, at.0) {
        message.push_str("; ");
        message.push_str(hint);
    }
    YamlError { at, message }
}

/// What to do about a parser's error that is most often a tab or an indentation slip.
fn hint(message: &str, source: &[u8], line: usize) -> Option<&'static str> {
    let tab_here = source
        .split(|&b| b == b'\n')
        .nth(line.saturating_sub(1))
        .is_some_and(|l| {
            l.iter()
                .take_while(|b| b.is_ascii_whitespace())
                .any(|&b| b == b'\t')
        });
    if message.contains("tab character") || tab_here {
        return Some(
            "YAML indents with spaces only: replace the tabs at the start of this line with \
             spaces, as many as the lines around it use",
        );
    }
    let slips = [
        "did not find expected '-' indicator",
        "did not find expected key",
        "mapping values are not allowed",
        "did not find expected <block end>",
        "could not find expected ':'",
    ];
    slips.iter().any(|s| message.contains(s)).then_some(
        "this line's indentation does not match the lines above: the keys of one mapping start \
         in one column, and each item of a list (`- outcome: ...`) starts with `- ` in one column, \
         its keys below it aligned with the first",
    )
}

unsafe fn owned(ptr: *const u8) -> Option<String> {
    (!ptr.is_null()).then(|| {
        // SAFETY: libyaml's anchors and tags are NUL-terminated strings it owns until the
        // event is deleted; they are copied out here.
        unsafe { std::ffi::CStr::from_ptr(ptr.cast()) }
            .to_string_lossy()
            .into_owned()
    })
}

/// The event as owned data (the caller deletes the libyaml event afterwards).
unsafe fn convert(event: &unsafe_libyaml::yaml_event_t) -> Event {
    // SAFETY: each arm reads the union member that the event's type says is filled in.
    unsafe {
        match event.type_ {
            unsafe_libyaml::YAML_STREAM_START_EVENT => Event::StreamStart,
            unsafe_libyaml::YAML_STREAM_END_EVENT => Event::StreamEnd,
            unsafe_libyaml::YAML_DOCUMENT_START_EVENT => Event::DocumentStart,
            unsafe_libyaml::YAML_DOCUMENT_END_EVENT => Event::DocumentEnd,
            unsafe_libyaml::YAML_ALIAS_EVENT => {
                Event::Alias(owned(event.data.alias.anchor).unwrap_or_default())
            }
            unsafe_libyaml::YAML_SCALAR_EVENT => {
                let s = &event.data.scalar;
                let bytes = std::slice::from_raw_parts(s.value, s.length as usize);
                Event::Scalar(
                    Scalar {
                        text: String::from_utf8_lossy(bytes).into_owned(),
                        plain: s.style == unsafe_libyaml::YAML_PLAIN_SCALAR_STYLE,
                        literal: s.style == unsafe_libyaml::YAML_LITERAL_SCALAR_STYLE,
                        tag: owned(s.tag),
                    },
                    owned(s.anchor),
                )
            }
            unsafe_libyaml::YAML_SEQUENCE_START_EVENT => {
                let s = &event.data.sequence_start;
                Event::SequenceStart(owned(s.anchor), owned(s.tag))
            }
            unsafe_libyaml::YAML_SEQUENCE_END_EVENT => Event::SequenceEnd,
            unsafe_libyaml::YAML_MAPPING_START_EVENT => {
                let m = &event.data.mapping_start;
                Event::MappingStart(owned(m.anchor), owned(m.tag))
            }
            _ => Event::MappingEnd,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn root(text: &str) -> Node {
        parse(text).unwrap().unwrap()
    }

    #[test]
    fn positions_of_keys_and_values() {
        let r = root("title: t\nexpect:\n  - outcome: fail\n    match: 'a(b'\n");
        let rule = r.get("expect").unwrap().item(0).unwrap();
        assert_eq!(rule.at, (3, 5));
        let (k, v) = rule.entry("match").unwrap();
        assert_eq!((k.at, v.at), ((4, 5), (4, 12)));
        assert_eq!(v.scalar().unwrap().text, "a(b");
        assert!(!v.scalar().unwrap().plain);
        assert!(r.get("title").unwrap().scalar().unwrap().plain);
        assert!(parse("").unwrap().is_none());
        assert!(parse("# only a comment\n").unwrap().is_none());
    }

    #[test]
    fn paths_find_nodes_or_the_nearest_above() {
        use PathStep::{Item, Key};
        let r = root("expect:\n  - outcome: pass\n    python: '3.8'\n");
        let python = [Key("expect"), Item(0), Key("python")];
        assert_eq!(r.find(&python).unwrap().at, (3, 13));
        assert_eq!(r.nearest(&python).at, (3, 13));
        let missing = [Key("expect"), Item(0), Key("match")];
        assert!(r.find(&missing).is_none());
        assert_eq!(r.nearest(&missing).at, (2, 5), "the rule");
        assert_eq!(r.nearest(&[Key("expect"), Item(7)]).at, (2, 3), "the list");
        assert_eq!(r.nearest(&[Key("nope")]).at, r.at, "the root");
    }

    #[test]
    fn positions_count_lines_as_an_editor_does() {
        // libyaml also breaks lines at U+0085, U+2028 and U+2029; an editor shows one line.
        let e = parse("A:\u{2028}a").unwrap_err();
        assert_eq!(e.at.0, 1, "{e:?}");
        let r = root("a: \u{2028}\n\u{e9}\u{e9}: [x, y]\n");
        let value = r.get("\u{e9}\u{e9}").unwrap();
        assert_eq!(value.at, (2, 5));
        assert_eq!(position(b"ab\ncd", 4), (2, 2));
        assert_eq!(position(b"ab", 99), (1, 3));
    }

    #[test]
    fn flow_and_tags() {
        let r = root("p: {x: [1, !!str 2, \"3\"]}\n");
        let items = r.get("p").unwrap().get("x").unwrap().items_or_self();
        assert_eq!(items.len(), 3);
        assert_eq!(
            items[1].scalar().unwrap().tag.as_deref(),
            Some("tag:yaml.org,2002:str")
        );
        assert_eq!(items[2].at, (1, 21));
    }

    #[test]
    fn deep_nesting_is_refused_at_once() {
        let n = 100_000;
        let text = format!("x: {}{}\n", "[".repeat(n), "]".repeat(n));
        let start = Instant::now();
        let e = parse(&text).unwrap_err();
        assert!(
            start.elapsed() < Duration::from_millis(500),
            "{:?}",
            start.elapsed()
        );
        assert!(e.message.contains("nesting deeper than 32"), "{e:?}");
        assert_eq!(e.at.0, 1);
    }

    #[test]
    fn alias_expansion_is_bounded() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let refs = vec![format!("*a{}", i - 1); 10].join(", ");
            text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        let e = parse(&text).unwrap_err();
        assert!(e.message.contains("expands the document past"), "{e:?}");
        assert_eq!(e.at, (5, 45), "at the alias that crosses the limit: {e:?}");
        // A few aliases are fine.
        let r = root("a: &x [1, 2]\nb: *x\n");
        assert_eq!(r.get("b").unwrap().items_or_self().len(), 2);
        assert_eq!(r.get("b").unwrap().at, (2, 4));
    }

    #[test]
    fn errors_have_positions() {
        let e = parse("a: [1, 2\nb: 3\n").unwrap_err();
        assert!(e.at.0 >= 1 && e.message.contains("flow sequence"), "{e:?}");
        let e = parse("a: 1\na: 2\n").unwrap_err();
        assert_eq!(e.at, (2, 1));
        assert!(
            e.message.contains("duplicate key `a` (first at line 1)"),
            "{e:?}"
        );
        let e = parse("a: 1\n---\nb: 2\n").unwrap_err();
        assert!(e.message.contains("second YAML document"), "{e:?}");
        let e = parse("a: *nope\n").unwrap_err();
        assert!(
            e.message.contains("undefined") || e.message.contains("no anchor"),
            "{e:?}"
        );
        let big = "x".repeat(MAX_BYTES as usize + 1);
        assert!(parse(&big)
            .unwrap_err()
            .message
            .contains("limited to 1048576 bytes"));
    }
}
