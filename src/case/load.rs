//! Finding case files and turning each into a validated [`Case`], or into errors that name the
//! file, the line and the column of the offending key or value, and quote it. Limits: a file
//! of at most 1 MiB, nested at most 32 levels, at most 100,000 nodes once aliases are
//! expanded ([`yaml`]), at most 10,000 param combinations, a `timeout` of at most a week.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use indexmap::IndexMap;

use super::bounce::Bounce;
use super::ends::PairEnds;
use super::model::{Body, Case, Expected, RangeAt, Rule, SetupLines};
use super::pairs::PairRelations;
use super::params::python_float_repr;
use super::params::ParamValue;
use super::schema::{Phase, RawCase, RawRule, PROTOCOLS};
use super::selectors::{InterpreterSelector, WhereValue};
use super::yaml::{self, Kind, Node, PathStep, PathStep::Item, PathStep::Key, Pos};
use crate::errors::{CaseError, Error};
use crate::version::PythonVersion;

/// Every `*.yaml` / `*.yml` file under `paths` (files are taken as given), sorted, each once.
pub fn find_case_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|_| Error::MissingPath(path.clone()))?;
        if meta.is_dir() {
            walk(path, &mut files)
                .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
        } else {
            files.push(path.clone());
        }
    }
    let mut seen = std::collections::HashSet::new();
    files.retain(|f| seen.insert(std::fs::canonicalize(f).unwrap_or_else(|_| f.clone())));
    if files.is_empty() {
        return Err(Error::NoCases(paths.to_vec()));
    }
    Ok(files)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            walk(&path, out)?;
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml")
        ) {
            out.push(path);
        }
    }
    Ok(())
}

/// Load every case file; all problems of all files are reported together, ids checked unique.
pub fn load_cases(files: &[PathBuf]) -> Result<Vec<Case>, Error> {
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    let mut ids: HashMap<String, PathBuf> = HashMap::new();
    for file in files {
        match load_file(file) {
            Ok(case) => {
                if let Some(first) = ids.get(&case.id) {
                    errors.push(CaseError {
                        path: file.clone(),
                        location: Some(case.id_at),
                        message: format!(
                            "duplicate id `{}`: {} has it already; ids must be unique (give one of them an `id:`)",
                            case.id,
                            first.display()
                        ),
                    });
                } else {
                    ids.insert(case.id.clone(), file.clone());
                    cases.push(case);
                }
            }
            Err(mut errs) => errors.append(&mut errs),
        }
    }
    if errors.is_empty() {
        Ok(cases)
    } else {
        Err(Error::Cases(errors))
    }
}

pub fn load_file(path: &Path) -> Result<Case, Vec<CaseError>> {
    let unreadable = |message: String| {
        vec![CaseError {
            path: path.to_path_buf(),
            location: None,
            message,
        }]
    };
    // A file too large is refused before a byte of it is read.
    let size = std::fs::metadata(path)
        .map_err(|e| unreadable(format!("cannot read: {e}")))?
        .len();
    if size > yaml::MAX_BYTES {
        return Err(unreadable(yaml::too_large(size)));
    }
    let text =
        std::fs::read_to_string(path).map_err(|e| unreadable(format!("cannot read: {e}")))?;
    parse_case(path, &text)
}

/// Parse and validate one case file's text. Every error names a line and a column.
pub fn parse_case(path: &Path, text: &str) -> Result<Case, Vec<CaseError>> {
    let fail = |at: Pos, message: String| {
        vec![CaseError {
            path: path.to_path_buf(),
            location: Some(at),
            message,
        }]
    };
    // The tree first: it refuses hostile files (size, nesting, aliases) before serde reads
    // them, and it knows where every key and value stands.
    let root = match yaml::parse(text) {
        Err(e) => return Err(fail(e.at, e.message)),
        Ok(None) => {
            return Err(fail(
                (1, 1),
                "the file is empty: a case needs at least `title` and `code`".into(),
            ))
        }
        Ok(Some(root)) => root,
    };
    if !matches!(root.kind, Kind::Map(_)) {
        return Err(fail(
            root.at,
            format!(
                "a case file is a mapping of keys (`title:`, `code:`, ...), not {}",
                root.quoted()
            ),
        ));
    }
    let raw: RawCase =
        super::de::from_node(&root).map_err(|e| fail(e.at.unwrap_or(root.at), e.message))?;
    Validator {
        path,
        root: &root,
        errors: Vec::new(),
    }
    .validate(raw)
    .map(|case| Case {
        source: text.into(),
        ..case
    })
}

/// The longest time limit a case or the command line may give a run: a week.
pub const MAX_TIMEOUT_S: f64 = 7.0 * 24.0 * 3600.0;

/// The most attempts a case's `repeat` (or `--repeat`) may ask of each run.
pub const MAX_REPEAT: u32 = 10_000;

/// The most param combinations a case may have (each is a run per interpreter).
pub const MAX_COMBINATIONS: usize = 10_000;

/// The checks of one case's typed keys, by key group (identity, body, limits, lists, params,
/// requires, expectations), each error placed where the tree says its key or value stands.
struct Validator<'a> {
    path: &'a Path,
    root: &'a Node,
    errors: Vec<CaseError>,
}

impl Validator<'_> {
    fn err(&mut self, location: Option<Pos>, message: String) {
        self.errors.push(CaseError {
            path: self.path.to_path_buf(),
            location: location.or(Some(self.root.at)),
            message,
        });
    }

    /// Where the node at `path` stands, if it is there.
    fn find(&self, path: &[PathStep]) -> Option<Pos> {
        self.root.find(path).map(|n| n.at)
    }

    /// Where the node at `path` stands, or the last node on the way to it that is there.
    fn near(&self, path: &[PathStep]) -> Option<Pos> {
        Some(self.root.nearest(path).at)
    }

    /// Where the key `key` of the top-level mapping `top` stands, else the mapping.
    fn key_under(&self, top: &str, key: &str) -> Option<Pos> {
        let map = self.root.get(top)?;
        Some(map.entry(key).map_or(map.at, |(k, _)| k.at))
    }

    /// The line of the top-level key `key`.
    fn key_line(&self, key: &str) -> Option<usize> {
        self.root.entry(key).map(|(k, _)| k.at.0)
    }

    /// The line of the file holding the first line of the code under the top-level key `key`,
    /// when every line of the code is a line of the file: a literal block (`|`, its text
    /// starts on the line after the indicator) or a scalar of one line. A folded block or a
    /// quoted scalar over several lines has none.
    fn code_start(&self, key: &str) -> Option<usize> {
        let node = self.root.get(key)?;
        let scalar = node.scalar()?;
        if scalar.literal {
            Some(node.origin.0 + 1)
        } else if !scalar.text.trim_end().contains('\n') {
            Some(node.origin.0)
        } else {
            None
        }
    }

    fn validate(mut self, raw: RawCase) -> Result<Case, Vec<CaseError>> {
        let id = self.id(raw.id);
        let title = self.title(raw.title.as_deref());
        let setup = raw.setup.unwrap_or_default();
        let body = match self.body(raw.code, raw.dump, raw.load) {
            Body::Code(code) => Body::Code(SetupLines::join(&setup, &code)),
            Body::RoundTrip { dump, load } => Body::RoundTrip {
                dump: SetupLines::join(&setup, &dump),
                load: SetupLines::join(&setup, &load),
            },
        };
        let round_trip = matches!(body, Body::RoundTrip { .. });
        let bounce = self.bounce(raw.relay, raw.reload, &setup, round_trip, &raw.expect);
        self.limits(raw.timeout, raw.repeat);
        self.lists(&raw.links, &raw.tags, &raw.preload, &raw.env);
        let support = self.support(&raw.support);
        let mut params = self.params("params", raw.python.as_ref(), round_trip);
        let mut side_params = (Vec::new(), Vec::new());
        for (key, names) in [
            ("dump_params", &mut side_params.0),
            ("load_params", &mut side_params.1),
        ] {
            let side = self.params(key, raw.python.as_ref(), round_trip);
            if !side.is_empty() && !round_trip {
                let at = self.find(&[Key(key)]);
                self.err(at, format!("`{key}` gives one side of a round trip params of its own, but this case has `code`, not `dump` and `load`: use `params`"));
            }
            for (name, values) in side {
                if params.contains_key(&name) {
                    let at = self.key_under(key, &name);
                    self.err(
                        at,
                        format!("param `{name}` of `{key}` is a param already: rename one of them"),
                    );
                }
                names.push(name.clone());
                params.insert(name, values);
            }
        }
        let combinations = params
            .values()
            .fold(1usize, |n, v| n.saturating_mul(v.len().max(1)));
        if combinations > MAX_COMBINATIONS {
            let at = self
                .find(&[Key("load_params")])
                .or(self.find(&[Key("dump_params")]));
            self.err(at, format!("the params, dump_params and load_params make {combinations} combinations: at most {MAX_COMBINATIONS}"));
        }
        if raw.protocol.is_some() {
            self.protocols(&mut params);
        }
        let gil = raw
            .gil
            .as_deref()
            .map(|values| self.gil(values, &mut params, &raw.env));
        let sides = [&raw.dump_requires, &raw.load_requires];
        self.requires(&raw.requires, sides, &params, round_trip);
        let expect = self.expectations(raw.expect, &params, round_trip);
        if !self.errors.is_empty() {
            return Err(self.errors);
        }
        let body_lines = (
            self.key_line("code").or_else(|| self.key_line("dump")),
            self.key_line("load"),
        );
        let code_starts = (
            self.code_start("code").or_else(|| self.code_start("dump")),
            self.code_start("load"),
        );
        Ok(Case {
            id,
            path: self.path.to_path_buf(),
            id_at: self.find(&[Key("id")]).unwrap_or(self.root.at),
            title,
            description: raw.description,
            links: raw.links,
            tags: raw.tags,
            applies_to: InterpreterSelector {
                python: raw.python,
                implementation: raw.implementation,
                implementation_version: raw.implementation_version,
                features: raw.features,
                platform: Vec::new(),
            },
            requires: raw.requires,
            dump_requires: raw.dump_requires,
            load_requires: raw.load_requires,
            env: raw.env,
            timeout: raw.timeout,
            repeat: raw.repeat,
            isolation: raw.isolation,
            preload: raw.preload,
            support,
            params,
            protocol_each: raw.protocol.is_some(),
            side_params,
            gil: gil.is_some(),
            body_lines,
            code_starts,
            setup_lines: SetupLines {
                count: SetupLines::count_of(&setup),
                start: self.code_start("setup"),
            },
            bounce,
            source: "".into(),
            ranges: self.ranges(),
            body,
            expect,
        })
    }

    /// Every version range of the file with its place: the case's `python`, then each rule's
    /// `python`, `dump_python` and `load_python`, item by item.
    fn ranges(&self) -> Vec<RangeAt> {
        let mut out = Vec::new();
        let mut add = |node: &Node, field: String, of_rule: bool| {
            let list = node.item(0).is_some();
            for (i, item) in node.items_or_self().into_iter().enumerate() {
                let Some(request) = item.scalar().and_then(|s| s.text.parse().ok()) else {
                    continue;
                };
                let field = if list {
                    format!("{field}[{i}]")
                } else {
                    field.clone()
                };
                out.push(RangeAt {
                    field,
                    request,
                    at: item.at,
                    of_rule,
                });
            }
        };
        if let Some(node) = self.root.get("python") {
            add(node, "python".into(), false);
        }
        let rules = self.root.get("expect").map(Node::items_or_self);
        for (n, rule) in rules.unwrap_or_default().into_iter().enumerate() {
            for key in [
                "python",
                "dump_python",
                "load_python",
                "older_python",
                "newer_python",
                "either_python",
            ] {
                if let Some(node) = rule.get(key) {
                    add(node, format!("expect[{n}].{key}"), true);
                }
            }
        }
        out
    }

    /// `id`, or the file's stem.
    fn id(&mut self, id: Option<String>) -> String {
        match id {
            Some(id) => {
                if !valid_id(&id) {
                    let at = self.find(&[Key("id")]);
                    self.err(at, format!("id `{id}` is invalid: use lowercase letters, digits, `.`, `_` and `-`, starting with a letter or digit (ids become file names and report keys)"));
                }
                id
            }
            None => {
                let stem = self
                    .path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if !valid_id(&stem) {
                    self.err(None, format!("the file name `{stem}` is not a valid id (lowercase letters, digits, `.`, `_`, `-`): rename the file or give the case an `id:`"));
                }
                stem
            }
        }
    }

    fn title(&mut self, title: Option<&str>) -> String {
        let at = self.find(&[Key("title")]);
        match title.map(str::trim) {
            Some(t) if !t.is_empty() => {
                if t.contains('\n') {
                    let first = t.lines().next().unwrap_or_default();
                    self.err(
                        at,
                        format!("`title` must be one line, not `{first}` and more (put the rest in `description`)"),
                    );
                }
                t.to_string()
            }
            _ => {
                self.err(
                    at,
                    "missing `title`: every case needs a one-line title".into(),
                );
                String::new()
            }
        }
    }

    /// `code`, or `dump` and `load`.
    fn body(&mut self, code: Option<String>, dump: Option<String>, load: Option<String>) -> Body {
        let (at, message) = match (code, dump, load) {
            (Some(code), None, None) => return Body::Code(code),
            (None, Some(dump), Some(load)) => return Body::RoundTrip { dump, load },
            (None, None, None) => (
                None,
                "missing `code` (or `dump` and `load` for a round trip)",
            ),
            (Some(_), _, _) => (
                self.find(&[Key("dump")])
                    .or_else(|| self.find(&[Key("load")])),
                "a case has either `code` or `dump` and `load`, not both",
            ),
            (None, Some(_), None) => (
                self.find(&[Key("dump")]),
                "`dump` needs a `load` to go with it",
            ),
            (None, None, Some(_)) => (
                self.find(&[Key("load")]),
                "`load` needs a `dump` to go with it",
            ),
        };
        self.err(at, message.into());
        Body::Code(String::new())
    }

    /// `relay` and `reload`, both or neither and in a round trip only; a rule's `phase: relay`
    /// or `phase: reload` only where they are.
    fn bounce(
        &mut self,
        relay: Option<String>,
        reload: Option<String>,
        setup: &str,
        round_trip: bool,
        rules: &[RawRule],
    ) -> Option<Bounce> {
        if let Some((key, message)) =
            super::bounce::misuse(relay.is_some(), reload.is_some(), round_trip)
        {
            let at = self.find(&[Key(key)]);
            self.err(at, message.into());
            return None;
        }
        let bounce = match (relay, reload) {
            (Some(relay), Some(reload)) => Some(Bounce {
                relay,
                reload: SetupLines::join(setup, &reload),
                lines: (self.key_line("relay"), self.key_line("reload")),
                starts: (self.code_start("relay"), self.code_start("reload")),
            }),
            _ => None,
        };
        for (i, rule) in rules.iter().enumerate() {
            let leg = rule
                .phase
                .filter(|p| matches!(p, Phase::Relay | Phase::Reload));
            if let (Some(leg), None, true) = (leg, &bounce, round_trip) {
                let at = self.find(&[Key("expect"), Item(i), Key("phase")]);
                self.err(at, format!("`phase: {leg}` selects a leg of the bounce, but this case has no `relay` and `reload`: add them, or select `dump` or `load`"));
            }
        }
        bounce
    }

    /// `timeout` and `repeat`.
    fn limits(&mut self, timeout: Option<f64>, repeat: Option<u32>) {
        if let Some(t) = timeout {
            let at = self.find(&[Key("timeout")]);
            if !(t.is_finite() && t > 0.0) {
                self.err(
                    at,
                    format!(
                        "`timeout` must be a positive number of seconds, not {}",
                        python_float_repr(t)
                    ),
                );
            } else if t > MAX_TIMEOUT_S {
                self.err(
                    at,
                    format!(
                        "`timeout` {} is too long: at most {MAX_TIMEOUT_S} seconds (a week)",
                        python_float_repr(t)
                    ),
                );
            }
        }
        if let Some(n) = repeat.filter(|n| !(1..=MAX_REPEAT).contains(n)) {
            let at = self.find(&[Key("repeat")]);
            self.err(
                at,
                format!("`repeat` must be from 1 to {MAX_REPEAT} attempts, not {n}"),
            );
        }
    }

    /// `support`: each a `.py` file beside the case file, named as a module, listed once; the
    /// files as absolute paths (a case file named without a folder, `x.yaml`, is in the
    /// working directory: its parent is the empty path, which `absolute` refuses).
    fn support(&mut self, names: &[String]) -> Vec<PathBuf> {
        let folder = match self.path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let folder = std::path::absolute(folder).unwrap_or_else(|_| folder.to_path_buf());
        let mut files = Vec::new();
        for (i, name) in names.iter().enumerate() {
            let file = folder.join(name);
            let problem = match name.strip_suffix(".py") {
                Some(stem) if ascii_identifier(stem) => {
                    if names[..i].contains(name) {
                        Some("is listed twice".to_string())
                    } else if !file.is_file() {
                        Some(format!(
                            "is not there: no file {}; write it beside the case file, or leave it out of `support`",
                            file.display()
                        ))
                    } else {
                        None
                    }
                }
                _ => Some(
                    "is not a Python file beside the case named as a module: give a name such as `helpers.py` (letters, digits and `_`, then `.py`; no folder)"
                        .into(),
                ),
            };
            match problem {
                Some(problem) => {
                    let at = self.near(&[Key("support"), Item(i)]);
                    self.err(at, format!("`support` file `{name}` {problem}"));
                }
                None => files.push(file),
            }
        }
        files
    }

    /// `links`, `tags`, `preload`, `env`: each item checked where it stands.
    fn lists(
        &mut self,
        links: &[String],
        tags: &[String],
        preload: &[String],
        env: &BTreeMap<String, String>,
    ) {
        for (i, link) in links.iter().enumerate() {
            if !(link.starts_with("https://") || link.starts_with("http://")) {
                let at = self.near(&[Key("links"), Item(i)]);
                self.err(
                    at,
                    format!("link `{link}` is not a URL (http:// or https://)"),
                );
            }
        }
        for (i, tag) in tags.iter().enumerate() {
            if tag.trim().is_empty() || tag.contains(char::is_whitespace) {
                let at = self.near(&[Key("tags"), Item(i)]);
                self.err(at, format!("tag `{tag}` must be one word"));
            }
        }
        for (i, module) in preload.iter().enumerate() {
            if let Some(problem) = bad_module_name(module, &preload[..i]) {
                let at = self.near(&[Key("preload"), Item(i)]);
                self.err(at, format!("`preload` module `{module}` {problem}"));
            }
        }
        for key in env.keys() {
            if key.is_empty() || key.contains('=') || key.contains('\0') {
                let at = self.key_under("env", key);
                self.err(at, format!("environment variable name `{key}` is invalid"));
            }
        }
    }

    /// `gil`: each value 0 or 1, once; added to `params` as the last param, `gil`, which
    /// neither `params` nor `env` (`PYTHON_GIL`) may give too.
    fn gil(
        &mut self,
        values: &[u8],
        params: &mut IndexMap<String, Vec<ParamValue>>,
        env: &BTreeMap<String, String>,
    ) {
        if values.is_empty() {
            let at = self.root.entry("gil").map(|(k, _)| k.at);
            self.err(at, "`gil` has no values: give it [0, 1], [0] or [1]".into());
        }
        for (i, &v) in values.iter().enumerate() {
            let at = self.near(&[Key("gil"), Item(i)]);
            if v > 1 {
                self.err(
                    at,
                    format!("`gil` values are PYTHON_GIL's, 0 (off) or 1 (on), not {v}"),
                );
            } else if values[..i].contains(&v) {
                self.err(at, format!("`gil` lists {v} twice"));
            }
        }
        if params.contains_key("gil") {
            let at = self.key_under("params", "gil");
            self.err(
                at,
                "param `gil` and the `gil` key both name the `gil` dimension: rename the param"
                    .into(),
            );
        }
        if env.contains_key("PYTHON_GIL") {
            let at = self.key_under("env", "PYTHON_GIL");
            self.err(
                at,
                "`env` sets PYTHON_GIL, which `gil` sets for each run: drop one of them".into(),
            );
        }
        let values = values.iter().map(|&v| ParamValue::Int(v.into())).collect();
        params.insert("gil".into(), values);
    }

    /// `protocol: each`: the param `protocol`, 0 to 5, before `gil` (refused beside a param of
    /// that name).
    fn protocols(&mut self, params: &mut IndexMap<String, Vec<ParamValue>>) {
        if params.contains_key("protocol") {
            let at = self.key_under("params", "protocol");
            self.err(
                at,
                "param `protocol` and `protocol: each` both name the `protocol` dimension: drop one of them".into(),
            );
        }
        let values = PROTOCOLS.map(|p| ParamValue::Int(p.into())).collect();
        params.insert("protocol".into(), values);
    }

    /// `requires`, and a round trip's `dump_requires` and `load_requires` (refused in a `code` case).
    fn requires(
        &mut self,
        requires: &[String],
        [dump, load]: [&Vec<String>; 2],
        params: &IndexMap<String, Vec<ParamValue>>,
        round_trip: bool,
    ) {
        self.requirements("requires", requires, params);
        for (key, list) in [("dump_requires", dump), ("load_requires", load)] {
            if !round_trip && self.find(&[Key(key)]).is_some() {
                let at = self.find(&[Key(key)]);
                self.err(at, format!("`{key}` gives one side of a round trip its packages, but this case has `code`, not `dump` and `load`: use `requires`"));
                continue;
            }
            self.requirements(key, list, params);
        }
    }

    /// The requirement strings of the list `key` (`requires`, `dump_requires`,
    /// `load_requires`), each checked where it stands: not empty, not an installer option,
    /// every placeholder a param, and a PEP 508 requirement, as written or, when it names
    /// params, with each of their values put in.
    fn requirements(
        &mut self,
        key: &str,
        list: &[String],
        params: &IndexMap<String, Vec<ParamValue>>,
    ) {
        for (i, req) in list.iter().enumerate() {
            let at = self.near(&[Key(key), Item(i)]);
            let shown: String = req.chars().take(200).collect();
            if req.trim().is_empty() {
                self.err(at, format!("empty requirement in `{key}`"));
                continue;
            }
            if req.trim_start().starts_with('-') {
                self.err(at, format!("{shown:?} in `{key}` is an installer option, not a PEP 508 requirement: a case names packages only; give a folder of wheels with `--find-links DIR`, or an index in the installer's own configuration (pip.conf, uv.toml)"));
                continue;
            }
            let names = placeholders(req);
            let unknown: Vec<&String> = names.iter().filter(|n| !params.contains_key(*n)).collect();
            for name in &unknown {
                self.err(
                    at,
                    format!(
                        "requirement `{req}` uses `{{{name}}}` but the case has no param `{name}`"
                    ),
                );
            }
            if !unknown.is_empty() {
                continue;
            }
            if names.is_empty() {
                if let Some(why) = super::requirement::problem(req.trim()) {
                    self.err(at, format!("{shown:?} in `{key}` is not a PEP 508 requirement ({why}): write it as `name`, `name==1.0`, `name[extra]>=1; python_version >= \"3.8\"` or `name @ URL`"));
                }
            } else if let Some((became, given, why)) =
                super::requirement::first_bad_resolution(req, &names, params)
            {
                let became: String = became.chars().take(200).collect();
                self.err(at, format!("{shown:?} in `{key}` becomes {became:?} with {given}, which is not a PEP 508 requirement ({why}): change that param value, or the requirement"));
            }
        }
    }

    /// The params, each value typed from its YAML text (serde has checked the shape), with
    /// every name and value checked where it stands.
    fn params(
        &mut self,
        key: &str,
        python: Option<&super::selectors::VersionRequests>,
        round_trip: bool,
    ) -> IndexMap<String, Vec<ParamValue>> {
        let mut params = IndexMap::new();
        let Some(Kind::Map(entries)) = self.root.get(key).map(|n| &n.kind) else {
            return params;
        };
        let keywords = Keywords::of(python);
        for (key, list) in entries {
            let name = key.scalar().map(|s| s.text.clone()).unwrap_or_default();
            if let Some(problem) = bad_param_name(&name, round_trip, &keywords) {
                self.err(Some(key.at), format!("param `{name}` {problem}"));
            }
            let values = self.param_values(&name, list);
            params.insert(name, values);
        }
        let combinations = params.values().fold(1usize, |n, v: &Vec<ParamValue>| {
            n.saturating_mul(v.len().max(1))
        });
        if combinations > MAX_COMBINATIONS {
            let at = self.find(&[Key(key)]);
            self.err(
                at,
                format!("the params make {combinations} combinations, each a run on every interpreter: at most {MAX_COMBINATIONS}"),
            );
        }
        params
    }

    /// The values of param `name`, typed, none twice.
    fn param_values(&mut self, name: &str, list: &Node) -> Vec<ParamValue> {
        let items = list.items_or_self();
        if items.is_empty() {
            self.err(
                Some(list.at),
                format!("param `{name}` has no values: give it a non-empty list"),
            );
        }
        let mut values: Vec<(ParamValue, Pos)> = Vec::new();
        for item in items {
            let Some(scalar) = item.scalar() else {
                continue;
            };
            match ParamValue::from_yaml(scalar) {
                Err(e) => self.err(Some(item.at), format!("param `{name}`: {e}")),
                Ok(v) => {
                    if let Some((_, first)) = values.iter().find(|(known, _)| *known == v) {
                        self.err(
                            Some(item.at),
                            format!(
                                "param `{name}` lists the value {} twice (first at line {}, column {})",
                                v.name(),
                                first.0,
                                first.1
                            ),
                        );
                    } else {
                        values.push((v, item.at));
                    }
                }
            }
        }
        values.into_iter().map(|(v, _)| v).collect()
    }

    /// `expect`: every rule, then no rule after one that decides every run.
    fn expectations(
        &mut self,
        raw: Vec<RawRule>,
        params: &IndexMap<String, Vec<ParamValue>>,
        round_trip: bool,
    ) -> Vec<Rule> {
        let rules: Vec<Rule> = raw
            .into_iter()
            .enumerate()
            .map(|(i, r)| self.rule(i, r, params, round_trip))
            .collect();
        if let Some(first) = rules.iter().position(Rule::selects_everything) {
            // A rule for the comparison with recorded bytes (`phase: compare`) is not a rule
            // the one without selectors decides for.
            // Nor is a rule of named checks (`check`), which decides no run.
            let compare = |r: &Rule| r.phase == Some(super::schema::Phase::Compare);
            let shadowed =
                (first + 1..rules.len()).find(|&i| !compare(&rules[i]) && rules[i].check.is_none());
            if let Some(later) = shadowed {
                let at = self.find(&[Key("expect"), Item(later)]);
                self.err(at, format!("expect[{later}] can never be chosen: expect[{first}] has no selector and decides every run (rules are tried in order)"));
            }
        }
        rules
    }

    /// Rule `expect[index]`: its keys checked (`checks.rs`), its `where` typed, its `match`
    /// compiled.
    fn rule(
        &mut self,
        index: usize,
        raw: RawRule,
        params: &IndexMap<String, Vec<ParamValue>>,
        round_trip: bool,
    ) -> Rule {
        let here = |v: &Self, key: &str| v.near(&[Key("expect"), Item(index), Key(key)]);
        for problem in super::checks::rule(index, &raw, round_trip) {
            let at = here(self, problem.key);
            self.err(at, problem.message);
        }
        let where_ = self.rule_where(index, params);
        for problem in super::checks::expectation(index, &raw, round_trip) {
            let at = here(self, problem.key);
            self.err(at, problem.message);
        }
        let pattern = raw.pattern.as_deref().and_then(|pattern| {
            super::pyre::Pattern::compile(pattern)
                .map_err(|e| {
                    let at = here(self, "match");
                    self.err(
                        at,
                        format!("expect[{index}].match `{pattern}` is not a valid regular expression (Python's `re` syntax): {e}"),
                    );
                })
                .ok()
        });
        let line = self
            .find(&[Key("expect"), Item(index)])
            .map(|(line, _)| line);
        let rule = build_rule(raw, where_, pattern, line);
        if let Some((key, why)) = rule.relations.never(&rule.dump, &rule.load) {
            let at = here(self, key);
            self.err(at, format!("expect[{index}] can never be chosen: {why}"));
        }
        rule
    }

    /// Rule `expect[index]`'s `where`, each value typed from the tree and checked against
    /// the case's params.
    fn rule_where(
        &mut self,
        index: usize,
        params: &IndexMap<String, Vec<ParamValue>>,
    ) -> IndexMap<String, WhereValue> {
        let mut where_ = IndexMap::new();
        let root = self.root;
        let Some(Kind::Map(entries)) = root
            .find(&[Key("expect"), Item(index), Key("where")])
            .map(|w| &w.kind)
        else {
            return where_;
        };
        for (key, value) in entries {
            let name = key.scalar().map(|s| s.text.clone()).unwrap_or_default();
            // `{not: VALUE}` / `{not: [VALUES]}`: every value but these (serde checked the shape).
            let (negated, value) = match value.get("not") {
                Some(inner) => (true, inner),
                None => (false, value),
            };
            let mut values = Vec::new();
            for item in value.items_or_self() {
                let Some(scalar) = item.scalar() else {
                    continue;
                };
                match ParamValue::from_yaml(scalar) {
                    Ok(v) => values.push((v, item.at)),
                    Err(e) => self.err(
                        Some(item.at),
                        format!("expect[{index}].where: param `{name}`: {e}"),
                    ),
                }
            }
            self.where_param(index, key, &name, negated, &values, params);
            let values = values.into_iter().map(|(v, _)| v).collect();
            where_.insert(
                name,
                if negated {
                    WhereValue::NoneOf(values)
                } else {
                    WhereValue::AnyOf(values)
                },
            );
        }
        where_
    }

    /// `where`'s param `name` is one of the case's, and each of its values one of the param's.
    fn where_param(
        &mut self,
        index: usize,
        key: &Node,
        name: &str,
        negated: bool,
        values: &[(ParamValue, Pos)],
        params: &IndexMap<String, Vec<ParamValue>>,
    ) {
        let Some(declared) = params.get(name) else {
            let known = if params.is_empty() {
                "the case has no params".to_string()
            } else {
                format!(
                    "its params are {}",
                    params
                        .keys()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            self.err(
                Some(key.at),
                format!("expect[{index}].where names param `{name}`, but {known}"),
            );
            return;
        };
        for (v, at) in values {
            if !declared.contains(v) {
                let list = declared
                    .iter()
                    .map(ParamValue::name)
                    .collect::<Vec<_>>()
                    .join(", ");
                self.err(Some(*at), format!("expect[{index}].where: param `{name}` has no value {} (its values are [{list}])", v.name()));
            }
        }
        if negated && declared.iter().all(|d| values.iter().any(|(v, _)| v == d)) {
            let list: Vec<String> = values.iter().map(|(v, _)| v.name()).collect();
            self.err(Some(key.at), format!("expect[{index}].where: `{name}: {{not: [{}]}}` leaves no value of param `{name}`: the rule would never be chosen", list.join(", ")));
        }
    }
}

/// The rule as the runner asks it, from its typed keys.
fn build_rule(
    raw: RawRule,
    where_: IndexMap<String, WhereValue>,
    pattern: Option<super::pyre::Pattern>,
    line: Option<usize>,
) -> Rule {
    Rule {
        on: InterpreterSelector {
            python: raw.python,
            implementation: raw.implementation,
            implementation_version: raw.implementation_version,
            features: raw.features,
            platform: raw.platform,
        },
        dump: InterpreterSelector {
            python: raw.dump_python,
            implementation: raw.dump_implementation,
            implementation_version: raw.dump_implementation_version,
            features: raw.dump_features,
            platform: Vec::new(),
        },
        load: InterpreterSelector {
            python: raw.load_python,
            implementation: raw.load_implementation,
            implementation_version: raw.load_implementation_version,
            features: raw.load_features,
            platform: Vec::new(),
        },
        ends: PairEnds {
            older: InterpreterSelector {
                python: raw.older_python,
                implementation: raw.older_implementation,
                features: raw.older_features,
                ..Default::default()
            },
            newer: InterpreterSelector {
                python: raw.newer_python,
                implementation: raw.newer_implementation,
                features: raw.newer_features,
                ..Default::default()
            },
            either: InterpreterSelector {
                python: raw.either_python,
                implementation: raw.either_implementation,
                features: raw.either_features,
                ..Default::default()
            },
        },
        relations: PairRelations {
            same: raw.same.unwrap_or_default(),
            different: raw.different.unwrap_or_default(),
            pairs: raw.pairs.unwrap_or_default(),
        },
        where_,
        phase: raw.phase,
        check: raw.check,
        expected: Expected {
            outcome: raw.outcome.first,
            also: raw.outcome.also,
            exception: raw.exception,
            instance_of: raw.instance_of,
            signal: raw.signal,
            pattern,
            reason: raw.reason,
            line,
        },
    }
}

pub(crate) fn valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
}

/// Python 2.7's keywords (`print` and `exec` among them; `None` cannot be bound either).
const KEYWORDS_2: &[&str] = &[
    "and", "as", "assert", "break", "class", "continue", "def", "del", "elif", "else", "except",
    "exec", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "not", "or",
    "pass", "print", "raise", "return", "try", "while", "with", "yield", "None",
];

/// Python 3's keywords (3.0 to 3.14).
const KEYWORDS_3: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
    "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

/// Keywords since Python 3.7.
const KEYWORDS_37: &[&str] = &["async", "await"];

/// Which keyword lists apply to a case, from the versions its `python` admits.
struct Keywords {
    python2: bool,
    python3: bool,
    python37: bool,
}

impl Keywords {
    fn of(request: Option<&super::selectors::VersionRequests>) -> Keywords {
        let admits = |versions: &[&str]| {
            versions.iter().any(|v| {
                request.is_none_or(|r| PythonVersion::parse(v).is_some_and(|v| r.contains(&v)))
            })
        };
        Keywords {
            python2: admits(&["2.7.0", "2.7.18", "2.6.9", "2.99"]),
            python3: admits(&[
                "3.0.1", "3.5.10", "3.6.15", "3.7.0", "3.13.0", "3.99", "4.0",
            ]),
            python37: admits(&["3.7.0", "3.7.17", "3.13.0", "3.99", "4.0"]),
        }
    }

    /// The Python versions for which `name` is a keyword, if any of them runs the case.
    fn keyword(&self, name: &str) -> Option<&'static str> {
        if self.python2 && KEYWORDS_2.contains(&name) {
            return Some("Python 2.7");
        }
        if self.python3 && KEYWORDS_3.contains(&name) {
            return Some("Python 3");
        }
        if self.python37 && KEYWORDS_37.contains(&name) {
            return Some("Python 3.7 and later");
        }
        None
    }
}

/// Whether `name` is an identifier of ASCII letters, digits and `_`, not starting with a digit.
fn ascii_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Why `name` cannot be a module of `preload` (which has `before` ahead of it), if it cannot.
fn bad_module_name(name: &str, before: &[String]) -> Option<String> {
    if !name.split('.').all(ascii_identifier) {
        return Some(
            "is not a module name: give dotted ASCII identifiers such as `pickle` or `xml.dom`"
                .into(),
        );
    }
    if name == "__main__" || name.starts_with("__crosspickle") {
        return Some("cannot be preloaded: the run makes its own `__main__`".into());
    }
    if before.iter().any(|b| b == name) {
        return Some("is listed twice".into());
    }
    None
}

/// Why `name` cannot be a param (a global of the case's code), if it cannot.
fn bad_param_name(name: &str, round_trip: bool, keywords: &Keywords) -> Option<String> {
    if !ascii_identifier(name) {
        return Some("is not an ASCII Python identifier (letters, digits and `_`, not starting with a digit): params become globals, and Python 2 allows no other names while Python 3 rewrites non-ASCII ones (NFKC)".into());
    }
    if name.len() > 4 && name.starts_with("__") && name.ends_with("__") {
        return Some("is a dunder name: Python and crosspickle's driver set those (`__name__`, `__file__`, `__builtins__`, ...) and the case must run as `__main__`; rename it".into());
    }
    if round_trip && name == "data" {
        return Some("would hide the pickle that `load` receives in `data`: rename it".into());
    }
    if let Some(versions) = keywords.keyword(name) {
        return Some(format!(
            "is a keyword of {versions}, which this case runs on: no code can name it; rename it (or narrow the case's `python`)"
        ));
    }
    None
}

/// The `{name}` placeholders of a requirement string.
pub(crate) fn placeholders(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(open) = rest.find('{') {
        match rest[open..].find('}') {
            Some(close) => {
                out.push(rest[open + 1..open + close].to_string());
                rest = &rest[open + close + 1..];
            }
            None => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Case, Vec<CaseError>> {
        parse_case(Path::new("cases/x.yaml"), text)
    }

    #[test]
    fn a_duplicate_id_is_reported_at_its_id_or_first_key() {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<PathBuf> = [
            ("a/same.yaml", "title: t\ncode: pass\n"),
            ("b/same.yaml", "# c\n\ntitle: t\ncode: pass\n"),
            ("c.yaml", "title: t\n  \nid:   same\ncode: pass\n"),
        ]
        .iter()
        .map(|(name, text)| {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect();
        let Err(Error::Cases(errors)) = load_cases(&files) else {
            panic!("duplicates accepted")
        };
        let at: Vec<_> = errors.iter().map(|e| e.location).collect();
        assert_eq!(at, [Some((3, 1)), Some((3, 7))]);
        assert!(errors[1].message.starts_with("duplicate id `same`: "));
    }

    fn first_error(text: &str) -> String {
        parse(text).unwrap_err()[0].to_string()
    }

    /// `support` names `.py` files beside the case, each once; one that is not there is
    /// reported where it is listed, with the path it was looked for at.
    #[test]
    fn support_files_are_beside_the_case() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("helpers.py"), "X = 1\n").unwrap();
        let case_file = dir.path().join("x.yaml");
        let case = parse_case(&case_file, "title: t\nsupport: [helpers.py]\ncode: pass\n").unwrap();
        assert_eq!(case.support, [dir.path().join("helpers.py")]);
        let error = |text: &str| parse_case(&case_file, text).unwrap_err()[0].to_string();
        let e = error("title: t\nsupport: [helpers.py, gone.py]\ncode: pass\n");
        assert!(
            e.contains("x.yaml:2:23: `support` file `gone.py` is not there: no file")
                && e.contains("gone.py; write it beside the case file"),
            "{e}"
        );
        for bad in ["sub/helpers.py", "helpers.txt", "2x.py", "../helpers.py"] {
            let e = error(&format!("title: t\nsupport: ['{bad}']\ncode: pass\n"));
            assert!(
                e.contains(&format!(
                    "`support` file `{bad}` is not a Python file beside the case"
                )),
                "{e}"
            );
        }
        let e = error("title: t\nsupport: [helpers.py, helpers.py]\ncode: pass\n");
        assert!(e.contains("`helpers.py` is listed twice"), "{e}");
        // A case file named without a folder is in the working directory: its support files
        // are named by their absolute path there, not as a bare relative name.
        let bare = parse_case(
            Path::new("x.yaml"),
            "title: t\nsupport: [gone.py]\ncode: pass\n",
        );
        let e = bare.unwrap_err()[0].to_string();
        let here = std::env::current_dir().unwrap().join("gone.py");
        assert!(e.contains(&format!("no file {}", here.display())), "{e}");
        assert!(parse("title: t\ncode: pass\n").unwrap().support.is_empty());
    }

    #[test]
    fn minimal_case() {
        let case = parse("title: t\ncode: pass\n").unwrap();
        assert_eq!(case.id, "x");
        assert!(case.expect.is_empty());
    }

    #[test]
    fn rules_and_bodies_keep_their_lines() {
        let case = parse("title: t\ncode: |\n  pass\nexpect:\n  - python: \"<3\"\n    outcome: error\n  -\n    outcome: fail\n").unwrap();
        let lines: Vec<_> = case.expect.iter().map(|r| r.expected.line).collect();
        assert_eq!(lines, [Some(5), Some(8)]);
        assert_eq!(case.body_lines, (Some(2), None));
        let pair = parse("title: t\n\ndump: |\n  data = b''\nload: pass\n").unwrap();
        assert_eq!(pair.body_lines, (Some(3), Some(5)));
        assert_eq!(pair.code_starts, (Some(4), Some(5)));
    }

    #[test]
    fn code_lines_are_the_files_where_they_map_one_to_one() {
        let case = parse("title: t\ncode:\n  |\n    import os\n\n    raise X\n").unwrap();
        assert_eq!(case.code_starts, (Some(4), None));
        assert_eq!(
            &*case.source,
            "title: t\ncode:\n  |\n    import os\n\n    raise X\n"
        );
        let folded = parse("title: t\ncode: >\n  a\n\n  b\n").unwrap();
        assert_eq!(folded.code_starts, (None, None));
        let quoted = parse("title: t\ncode: \"a\\nb\"\n").unwrap();
        assert_eq!(quoted.code_starts, (None, None));
        let one = parse("title: t\ncode: \"raise X\"\n").unwrap();
        assert_eq!(one.code_starts, (Some(2), None));
    }

    #[test]
    fn setup_comes_ahead_of_every_program_with_its_lines() {
        let pair = parse(
            "title: t\nsetup: |\n  class C: pass\n  X = 1\ndump: |\n  data = b''\nload: pass\n",
        )
        .unwrap();
        let Body::RoundTrip { dump, load } = &pair.body else {
            panic!("a round trip: {:?}", pair.body)
        };
        assert_eq!(dump, "class C: pass\nX = 1\ndata = b''\n");
        assert_eq!(load, "class C: pass\nX = 1\npass");
        assert_eq!(
            pair.setup_lines,
            SetupLines {
                count: 2,
                start: Some(3)
            }
        );
        let one = parse("title: t\nsetup: import os\ncode: |\n  os.getcwd()\n").unwrap();
        let Body::Code(code) = &one.body else {
            panic!("code: {:?}", one.body)
        };
        assert_eq!(code, "import os\nos.getcwd()\n");
        assert_eq!(
            one.setup_lines,
            SetupLines {
                count: 1,
                start: Some(2)
            }
        );
        let none = parse("title: t\ncode: pass\n").unwrap();
        assert_eq!(none.setup_lines, SetupLines::default());
        let e = first_error("title: t\nsetup: [1]\ncode: pass\n");
        assert!(e.starts_with("cases/x.yaml:2:"), "{e}");
    }

    #[test]
    fn unknown_key_names_line_and_column() {
        let e = first_error("title: t\ncode: pass\nexpect:\n  - outcome: fail\n    mach: foo\n");
        assert!(e.starts_with("cases/x.yaml:5:"), "{e}");
        assert!(e.contains("unknown field `mach`"), "{e}");
    }

    #[test]
    fn unquoted_version_is_refused() {
        let e = first_error("title: t\npython: 3.10\ncode: pass\n");
        assert!(e.contains("cases/x.yaml:2:"), "{e}");
        assert!(e.contains("put it in quotes"), "{e}");
    }

    #[test]
    fn where_must_name_real_params() {
        let text = "title: t\nparams:\n  protocol: [2, 5]\ncode: pass\nexpect:\n  - outcome: pass\n  - where: {protocol: 4}\n    outcome: error\n";
        let e = first_error(text);
        assert!(e.starts_with("cases/x.yaml:7:23:"), "at the value: {e}");
        assert!(e.contains("has no value 4"), "{e}");
        let e =
            first_error("title: t\ncode: pass\nexpect:\n  - where: {p: 1}\n    outcome: fail\n");
        assert!(e.contains("no params"), "{e}");
    }

    #[test]
    fn gil_is_the_last_param_and_sets_python_gil() {
        let text = "title: t\nparams:\n  p: [a]\ngil: [0, 1]\ncode: pass\nexpect:\n  - where: {gil: 0}\n    outcome: error\n";
        let case = parse(text).unwrap();
        assert!(case.gil);
        let names: Vec<&String> = case.params.keys().collect();
        assert_eq!(names, ["p", "gil"]);
        let runs = case.param_combinations();
        assert_eq!(runs.len(), 2);
        assert_eq!(case.env_for(&runs[0])["PYTHON_GIL"], "0");
        assert_eq!(case.env_for(&runs[1])["PYTHON_GIL"], "1");
        let mut gil_build =
            crate::python::Interpreter::for_tests(crate::python::Implementation::Cpython, "3.13.0");
        assert!(case.gil_skip_reason(&runs[0], &gil_build).is_some());
        assert!(case.gil_skip_reason(&runs[1], &gil_build).is_none());
        gil_build.free_threaded = true;
        assert!(case.gil_skip_reason(&runs[0], &gil_build).is_none());
        // Without `gil`, a param named gil is just a param.
        let plain = parse("title: t\nparams:\n  gil: [0]\ncode: pass\n").unwrap();
        assert!(plain.env_for(&plain.param_combinations()[0]).is_empty());
    }

    #[test]
    fn protocol_each_is_a_param_skipped_above_an_interpreters_highest() {
        let case = parse("title: t\nparams:\n  p: [a]\nprotocol: each\ngil: [1]\ncode: pass\nexpect:\n  - where: {protocol: 5}\n    outcome: error\n").unwrap();
        let names: Vec<&String> = case.params.keys().collect();
        assert_eq!(names, ["p", "protocol", "gil"]);
        let runs = case.param_combinations();
        assert_eq!(runs.len(), 6);
        let mut old =
            crate::python::Interpreter::for_tests(crate::python::Implementation::Cpython, "2.7.18");
        old.pickle_highest_protocol = Some(2);
        let reasons: Vec<Option<String>> = runs
            .iter()
            .map(|r| case.protocol_skip_reason(r, &old))
            .collect();
        assert_eq!(reasons[..3], [None, None, None]);
        assert_eq!(
            reasons[3].as_deref(),
            Some("protocol 3 is above the highest of its pickle (2)")
        );
        assert!(reasons[4].is_some() && reasons[5].is_some());
        // Without `protocol: each`, a param named protocol is just a param.
        let plain = parse("title: t\nparams:\n  protocol: [5]\ncode: pass\n").unwrap();
        assert!(plain
            .protocol_skip_reason(&plain.param_combinations()[0], &old)
            .is_none());
        let e = first_error("title: t\nparams:\n  protocol: [5]\nprotocol: each\ncode: pass\n");
        assert!(
            e.starts_with("cases/x.yaml:3:") && e.contains("drop one"),
            "{e}"
        );
        let e = first_error("title: t\nprotocol: all\ncode: pass\n");
        assert!(
            e.starts_with("cases/x.yaml:2:") && e.contains("each"),
            "{e}"
        );
    }

    #[test]
    fn each_sides_params_are_params_the_other_side_does_not_see() {
        let pair = parse("title: t\nparams:\n  n: [1]\ndump_params:\n  pickler: [py, c]\nload_params:\n  unpickler: [py]\ndump: data=b''\nload: pass\nexpect:\n  - where: {pickler: c}\n    outcome: error\n").unwrap();
        let names: Vec<&String> = pair.params.keys().collect();
        assert_eq!(names, ["n", "pickler", "unpickler"]);
        let runs = pair.param_combinations();
        assert_eq!(runs.len(), 2);
        assert_eq!(
            pair.side_params(&runs[1], Some(crate::case::Phase::Dump))
                .to_string(),
            "n=1,pickler=c"
        );
        assert_eq!(
            pair.side_params(&runs[1], Some(crate::case::Phase::Load))
                .to_string(),
            "n=1,unpickler=py"
        );
        assert_eq!(pair.side_params(&runs[1], None), runs[1]);
        let e = first_error("title: t\ndump_params:\n  p: [1]\ncode: pass\n");
        assert!(
            e.starts_with("cases/x.yaml:3:") && e.contains("use `params`"),
            "{e}"
        );
        let e = first_error(
            "title: t\nparams:\n  p: [1]\nload_params:\n  p: [2]\ndump: data=b''\nload: pass\n",
        );
        assert!(
            e.starts_with("cases/x.yaml:5:") && e.contains("rename one"),
            "{e}"
        );
        let e = first_error("title: t\nload_params:\n  data: [2]\ndump: data=b''\nload: pass\n");
        assert!(
            e.starts_with("cases/x.yaml:3:") && e.contains("`data`"),
            "{e}"
        );
    }

    #[test]
    fn gil_values_are_checked_where_they_stand() {
        let e = first_error("title: t\ngil: [0, 2]\ncode: pass\n");
        assert!(
            e.starts_with("cases/x.yaml:2:") && e.contains("not 2"),
            "{e}"
        );
        let e = first_error("title: t\ngil: [1, 1]\ncode: pass\n");
        assert!(e.contains("lists 1 twice"), "{e}");
        let e = first_error("title: t\ngil: []\ncode: pass\n");
        assert!(e.contains("no values"), "{e}");
        let e = first_error("title: t\nparams:\n  gil: [0]\ngil: [0]\ncode: pass\n");
        assert!(
            e.starts_with("cases/x.yaml:3:") && e.contains("rename the param"),
            "{e}"
        );
        let e = first_error("title: t\nenv:\n  PYTHON_GIL: '0'\ngil: [0]\ncode: pass\n");
        assert!(
            e.starts_with("cases/x.yaml:3:") && e.contains("drop one"),
            "{e}"
        );
    }

    #[test]
    fn older_newer_and_either_select_the_ends_of_a_pair() {
        let pair = parse("title: t\ndump: data=b''\nload: pass\nexpect:\n  - older_python: \"<3\"\n    newer_implementation: pypy\n    either_features: {c_pickle: false}\n    outcome: error\n").unwrap();
        let ends = &pair.expect[0].ends;
        assert_eq!(
            ends.older.python.as_ref().map(|p| p.to_string()).as_deref(),
            Some("<3")
        );
        assert_eq!(
            ends.newer.implementation,
            [crate::python::Implementation::Pypy]
        );
        assert!(ends.either.features.is_some() && !pair.expect[0].selects_everything());
        assert_eq!(
            super::super::rules::selectors(&pair.expect[0]),
            [
                "older end by python <3",
                "newer end by pypy",
                "either end without c_pickle"
            ]
        );
        for key in [
            "older_python: \"3.8\"",
            "newer_implementation: pypy",
            "either_features: {debug: true}",
        ] {
            let e = first_error(&format!(
                "title: t\ncode: pass\nexpect:\n  - {key}\n    outcome: error\n"
            ));
            assert!(
                e.starts_with("cases/x.yaml:4:") && e.contains("selects round trips"),
                "{e}"
            );
        }
    }

    #[test]
    fn a_bounce_is_relay_and_reload_in_a_round_trip() {
        let pair = "title: t\nsetup: import pickle\ndump: data = b''\nload: pass\n";
        let case = parse(&format!(
            "{pair}relay: |\n  data = pickle.dumps(1)\nreload: |\n  assert pickle.loads(data) == 1\nexpect:\n  - phase: reload\n    outcome: fail\n"
        ))
        .unwrap();
        let bounce = case.bounce.as_ref().unwrap();
        // The relay runs in the load's `__main__`, after `setup` ran there; the reload is a
        // program of its own, `setup` first.
        assert_eq!(bounce.relay, "data = pickle.dumps(1)\n");
        assert_eq!(
            bounce.reload,
            "import pickle\nassert pickle.loads(data) == 1\n"
        );
        assert_eq!(bounce.lines, (Some(5), Some(7)));
        assert_eq!(bounce.starts, (Some(6), Some(8)));
        assert_eq!(case.expect[0].phase, Some(Phase::Reload));
        assert!(parse(pair).unwrap().bounce.is_none());
        for (text, at, says) in [
            (format!("{pair}relay: pass\n"), "x.yaml:5:8", "`relay` needs a `reload`"),
            (format!("{pair}reload: pass\n"), "x.yaml:5:9", "`reload` needs a `relay`"),
            (
                "title: t\ncode: pass\nrelay: pass\nreload: pass\n".into(),
                "x.yaml:3:8",
                "this case has `code`",
            ),
            (
                format!("{pair}expect:\n  - phase: relay\n    outcome: fail\n"),
                "x.yaml:6:12",
                "`phase: relay` selects a leg of the bounce, but this case has no `relay` and `reload`",
            ),
        ] {
            let e = first_error(&text);
            assert!(e.contains(at) && e.contains(says), "{e}");
        }
    }

    #[test]
    fn round_trip_selectors_need_round_trips() {
        let e = first_error("title: t\ncode: pass\nexpect:\n  - phase: dump\n    outcome: error\n");
        assert!(e.contains("round trips"), "{e}");
        assert!(parse(
            "title: t\ndump: data=b''\nload: pass\nexpect:\n  - phase: dump\n    outcome: error\n"
        )
        .is_ok());
    }

    #[test]
    fn preload_takes_module_names_once_each() {
        let case = parse("title: t\npreload: [pickle, xml.dom, _p2]\ncode: pass\n").unwrap();
        assert_eq!(case.preload, ["pickle", "xml.dom", "_p2"]);
        let e = first_error("title: t\npreload: [pickle, 'a b']\ncode: pass\n");
        assert!(
            e.starts_with("cases/x.yaml:2:19: `preload` module `a b` is not a module name"),
            "{e}"
        );
        for bad in ["1x", "a..b", "a.", "é", ""] {
            let e = first_error(&format!("title: t\npreload: ['{bad}']\ncode: pass\n"));
            assert!(e.contains("is not a module name"), "{bad}: {e}");
        }
        let e = first_error("title: t\npreload: [pickle, io, pickle]\ncode: pass\n");
        assert!(
            e.contains(":2:23: `preload` module `pickle` is listed twice"),
            "{e}"
        );
        let e = first_error("title: t\npreload: [__main__]\ncode: pass\n");
        assert!(e.contains("makes its own `__main__`"), "{e}");
        let e = first_error("title: t\npreload: pickle\ncode: pass\n");
        assert!(e.contains("cases/x.yaml:2:"), "{e}");
    }

    #[test]
    fn bad_ids_and_bodies() {
        assert!(first_error("id: Bad Id\ntitle: t\ncode: pass\n")
            .contains("cases/x.yaml:1:5: id `Bad Id` is invalid"));
        assert!(first_error("title: t\n").contains("missing `code`"));
        assert!(first_error("title: t\ncode: a\ndump: b\nload: c\n").contains("not both"));
        assert!(first_error("code: pass\n").contains("missing `title`"));
        assert!(first_error("").contains("empty"));
        assert!(first_error("title: t\ncode: pass\nparams:\n  x: []\n").contains("no values"));
        assert!(first_error(
            "title: t\ncode: pass\nexpect:\n  - outcome: crash\n    signal: SIGFOO\n"
        )
        .contains("not a signal"));
        assert!(first_error(
            "title: t\ncode: pass\nexpect:\n  - outcome: fail\n    match: '(unclosed'\n"
        )
        .contains("expect[0].match `(unclosed` is not a valid regular expression (Python's `re` syntax): missing ), unterminated subpattern at position 0"));
        assert!(
            first_error("title: t\ncode: pass\nexpect:\n  - outcome: bogus\n")
                .contains("unknown variant `bogus`")
        );
        assert!(
            first_error("title: t\ncode: pass\nrequires: ['loky=={loky}']\n")
                .contains("no param `loky`")
        );
    }

    #[test]
    fn each_side_of_a_round_trip_has_its_packages() {
        let case = parse("title: t\nparams:\n  v: ['1.0']\nrequires: [six]\ndump_requires: ['a=={v}']\nload_requires: [b]\ndump: data = b''\nload: pass\n").unwrap();
        use super::super::schema::Phase;
        assert_eq!(case.requires_for(Some(Phase::Dump)), ["six", "a=={v}"]);
        assert_eq!(case.requires_for(Some(Phase::Load)), ["six", "b"]);
        assert_eq!(case.requires_for(None), ["six"]);
        let e = first_error("title: t\ncode: pass\nload_requires: [b]\n");
        assert!(
            e.starts_with("cases/x.yaml:3:16: `load_requires` gives one side of a round trip its packages, but this case has `code`"),
            "{e}"
        );
        let e = first_error(
            "title: t\ndump: data = b''\nload: pass\ndump_requires:\n  - ok\n  - 'a=={v}'\n",
        );
        assert!(
            e.starts_with(
                "cases/x.yaml:6:5: requirement `a=={v}` uses `{v}` but the case has no param `v`"
            ),
            "{e}"
        );
        let e = first_error("title: t\ndump: data = b''\nload: pass\nload_requires: ['']\n");
        assert!(
            e.contains(":4:17: empty requirement in `load_requires`"),
            "{e}"
        );
    }

    #[test]
    fn rules_after_a_catch_all_are_refused() {
        let e = first_error("title: t\ncode: pass\nexpect:\n  - outcome: fail\n  - python: '3.8'\n    outcome: error\n");
        assert!(
            e.contains("cases/x.yaml:5:") && e.contains("expect[1] can never be chosen"),
            "{e}"
        );
    }

    #[test]
    fn check_rules_decide_checks_only() {
        use super::super::model::RunSide;
        use super::super::params::Params;
        use super::super::schema::OutcomeKind;
        // A rule of named checks may follow a rule without selectors, and decides checks only:
        // the first whose `check` names the check (by glob), else `pass`.
        let text = "title: t\ncode: pass\nexpect:\n  - outcome: fail\n  - check: 'frozen*'\n    python: '3.12'\n    outcome: error\n  - check: [a, 'b?']\n    outcome: skip\n    reason: r\n";
        let case = parse(text).unwrap();
        let i =
            crate::python::Interpreter::for_tests(crate::python::Implementation::Cpython, "3.12.1");
        let old =
            crate::python::Interpreter::for_tests(crate::python::Implementation::Cpython, "3.11.7");
        let params = Params::default();
        assert_eq!(case.deciding_rule(&params, RunSide::single(&i)), Some(0));
        let outcome = |interp, name| {
            case.expected_for_check(&params, RunSide::single(interp), name)
                .outcome
        };
        assert_eq!(outcome(&i, "frozenset"), OutcomeKind::Error);
        assert_eq!(outcome(&old, "frozenset"), OutcomeKind::Pass);
        assert_eq!(outcome(&i, "b1"), OutcomeKind::Skip);
        assert_eq!(outcome(&i, "b12"), OutcomeKind::Pass);
        // Their keys' errors are placed at their values.
        for (rule, wanted) in [
            (
                "check: []",
                "cases/x.yaml:4:12: expect[0].check is an empty list",
            ),
            (
                "check: ' '",
                "cases/x.yaml:4:12: expect[0].check has a blank name",
            ),
            (
                "check: 3",
                "cases/x.yaml:4:12: expect[0].check: invalid type: integer `3`, expected a check's name, a string (quote a name that YAML reads as another type: `check: \"3\"`)",
            ),
            (
                "check: [a, {b: 1}]",
                "cases/x.yaml:4:16: expect[0].check[1]: invalid type: map, expected a check's name",
            ),
        ] {
            let e = first_error(&format!(
                "title: t\ncode: pass\nexpect:\n  - {rule}\n    outcome: fail\n"
            ));
            assert!(e.starts_with(wanted), "{rule}: {e}");
        }
    }

    #[test]
    fn compare_rules_are_theirs_alone() {
        use super::super::model::RunSide;
        use super::super::params::Params;
        use super::super::schema::Phase;
        // A rule for the comparison with recorded bytes may follow one without selectors (which
        // does not decide it), and only it decides comparisons.
        let text = "title: t\ndump: data = b''\nload: pass\nexpect:\n  - outcome: fail\n  - phase: compare\n    outcome: fail\n";
        let case = parse(text).unwrap();
        let i =
            crate::python::Interpreter::for_tests(crate::python::Implementation::Cpython, "3.12.1");
        let params = Params::default();
        let decides = |phase| case.deciding_rule(&params, RunSide::pair(&i, &i, phase));
        assert_eq!(decides(Phase::Load), Some(0));
        assert_eq!(decides(Phase::Dump), Some(0));
        assert_eq!(decides(Phase::Compare), Some(1));
        let bare =
            parse("title: t\ndump: data = b''\nload: pass\nexpect:\n  - outcome: fail\n").unwrap();
        assert_eq!(
            bare.deciding_rule(&params, RunSide::pair(&i, &i, Phase::Compare)),
            None
        );
        let e = first_error(&format!("{text}  - python: '3.8'\n    outcome: error\n"));
        assert!(
            e.contains("cases/x.yaml:8:") && e.contains("expect[2] can never be chosen"),
            "{e}"
        );
    }

    #[test]
    fn placeholders_are_found() {
        assert_eq!(
            placeholders("loky=={loky}; python_version<'{py}'"),
            vec!["loky", "py"]
        );
    }
}
