//! Python interpreters: what one is ([`Interpreter`], its [`Implementation`]), where they are
//! found ([`discover`], from which [`Source`]), what each says about itself ([`probe`]), which
//! ones the user asked for ([`request`]), which of those uv installs when asked
//! ([`download`]), all of it in one call for every command ([`choose`]), and the environment
//! every Python process crosspickle starts gets ([`sanitized_env`]).

pub mod choose;
pub mod config;
pub mod discover;
pub mod download;
mod environ;
mod native;
pub mod platform;
pub mod probe;
pub mod request;
mod source;

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::version::PythonVersion;

pub use environ::{isolating_flags, sanitized_env};
pub use platform::Platform;
pub use source::Source;

/// A Python implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Implementation {
    Cpython,
    Pypy,
}

impl Implementation {
    pub fn as_str(&self) -> &'static str {
        match self {
            Implementation::Cpython => "cpython",
            Implementation::Pypy => "pypy",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "cpython" => Some(Implementation::Cpython),
            "pypy" => Some(Implementation::Pypy),
            _ => None,
        }
    }
}

impl fmt::Display for Implementation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

fn gil_by_default() -> bool {
    true
}

/// A usable interpreter, as probed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Interpreter {
    /// Unique in a run and stable across machines: `cpython-3.8.18`, `pypy-3.9.18`,
    /// `cpython-3.11.2+debug`, `cpython-3.13.0+freethreaded`.
    pub label: String,
    pub version: PythonVersion,
    pub implementation: Implementation,
    /// PyPy's own version (`7.3.11`), when it is PyPy (`sys.implementation.version`; for
    /// CPython that is the Python version, see [`Interpreter::implementation_release`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation_version: Option<String>,
    /// The canonical executable.
    pub executable: PathBuf,
    pub debug: bool,
    pub free_threaded: bool,
    /// The GIL is on in the interpreter's processes (`sys._is_gil_enabled()`; before 3.13,
    /// `!free_threaded`). True when not recorded (results of older versions).
    #[serde(default = "gil_by_default")]
    pub gil_enabled: bool,
    /// The C accelerator of pickle: `_pickle` (3.x), `cPickle` (2.x), or none.
    pub c_pickle: Option<String>,
    /// The case format's feature `c_pickle`: `_pickle` is there and `pickle.Pickler`,
    /// `Unpickler`, `dump(s)` and `load(s)` are its objects (false on 2.7, where
    /// `pickle.Pickler` is the Python class even with cPickle there, and on PyPy without
    /// `_pickle`).
    #[serde(default)]
    pub c_pickle_used: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pickle_highest_protocol: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pickle_default_protocol: Option<u32>,
    /// `sys.platform` (`linux` for 2.7's `linux2`), none in results of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// `platform.machine()` (`x86_64`, `arm64`, `AMD64`), none in results of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    /// The name given in pythons.toml, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Where it was found: `pyenv`, `PATH`, `pythons.toml`, `--python`…
    #[serde(default)]
    pub sources: Vec<Source>,
    /// Set on the stand-in for an interpreter the user asked for by path or name that could
    /// not be used: its runs get the `env-error` verdict with this reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unusable: Option<String>,
}

impl Interpreter {
    /// A usable interpreter for unit tests: `implementation` at `version`, every fact but
    /// those the default of a stand-in at `/nowhere/python`.
    #[cfg(test)]
    pub fn for_tests(implementation: Implementation, version: &str) -> Self {
        let mut i = Interpreter::stand_in(&Unusable {
            path: std::path::PathBuf::from("/nowhere/python"),
            sources: vec![],
            name: None,
            reason: String::new(),
        });
        i.unusable = None;
        i.implementation = implementation;
        i.version = PythonVersion::parse(version).expect("a test's version");
        i
    }

    /// A producer of recorded pickles (`crosspickle record`), not an interpreter of this
    /// machine: its label is `recorded:` and the label it had.
    pub fn is_recorded(&self) -> bool {
        self.label.starts_with("recorded:")
    }

    /// The stand-in for a requested interpreter that could not be used.
    pub fn stand_in(broken: &Unusable) -> Self {
        Interpreter {
            label: broken
                .name
                .clone()
                .unwrap_or_else(|| broken.path.display().to_string()),
            version: PythonVersion::parse("0").expect("0 is a version"),
            implementation: Implementation::Cpython,
            implementation_version: None,
            executable: broken.path.clone(),
            debug: false,
            free_threaded: false,
            gil_enabled: true,
            c_pickle: None,
            c_pickle_used: false,
            pickle_highest_protocol: None,
            pickle_default_protocol: None,
            platform: None,
            machine: None,
            name: broken.name.clone(),
            sources: broken.sources.clone(),
            unusable: Some(broken.reason.clone()),
        }
    }

    /// `sys.implementation.version`, what the case format's `implementation_version` compares:
    /// PyPy's own release (`7.3.11`), CPython's Python version. None for a PyPy whose release
    /// is not known (results written before it was recorded).
    pub fn implementation_release(&self) -> Option<PythonVersion> {
        match self.implementation {
            Implementation::Cpython => Some(self.version.clone()),
            Implementation::Pypy => self
                .implementation_version
                .as_deref()
                .and_then(PythonVersion::parse),
        }
    }

    /// The label before any de-duplication suffix: [`Interpreter::base_label`], then
    /// `+win32-AMD64` when its platform or machine is not the host's (see [`platform::tag`]).
    pub fn own_label(&self) -> String {
        let mut label = Self::base_label(
            self.implementation,
            &self.version,
            self.debug,
            self.free_threaded,
        );
        if let Some(tag) = self.platform_tag((platform::host_platform(), platform::host_machine()))
        {
            label.push('+');
            label.push_str(&tag);
        }
        label
    }

    /// Its platform and machine where they are not `host`'s: `win32-AMD64`, `x86_64`.
    pub fn platform_tag(&self, host: (&str, &str)) -> Option<String> {
        platform::tag(self.platform.as_deref(), self.machine.as_deref(), host)
    }

    /// The platform rules select on: the probed one, else (results of older versions, a
    /// stand-in) the host's.
    pub fn platform(&self) -> Option<Platform> {
        Platform::of_sys_platform(
            self.platform
                .as_deref()
                .unwrap_or(platform::host_platform()),
        )
    }

    /// The label before any de-duplication suffix and platform.
    pub fn base_label(
        implementation: Implementation,
        version: &PythonVersion,
        debug: bool,
        free_threaded: bool,
    ) -> String {
        let mut label = format!("{implementation}-{version}");
        if free_threaded {
            label.push_str("+freethreaded");
        }
        if debug {
            label.push_str("+debug");
        }
        label
    }

    /// What reports add to a column's label about the GIL: `free-threaded, GIL off` (or `GIL
    /// on`, when the probe found it turned back on) for a free-threaded build, `GIL off` for
    /// any other build without it; nothing for a build with its GIL.
    pub fn gil_note(&self) -> Option<&'static str> {
        match (self.free_threaded, self.gil_enabled) {
            (true, false) => Some("free-threaded, GIL off"),
            (true, true) => Some("free-threaded, GIL on"),
            (false, false) => Some("GIL off"),
            (false, true) => None,
        }
    }

    /// A short column header for the terminal matrix: `3.8.18`, `pp3.9.18`, `3.11.2d`, `3.13.0t`,
    /// `3.12.0+win32-AMD64`.
    pub fn short_label(&self) -> String {
        if self.unusable.is_some() {
            return self.label.clone();
        }
        let mut s = match self.implementation {
            Implementation::Cpython => self.version.to_string(),
            Implementation::Pypy => format!("pp{}", self.version),
        };
        if self.free_threaded {
            s.push('t');
        }
        if self.debug {
            s.push('d');
        }
        // The platform the label names (`+win32-AMD64`), as the label has it.
        let before_name = self.label.split('@').next().unwrap_or_default();
        for part in before_name.split('+').skip(1) {
            if part != "freethreaded" && part != "debug" {
                s.push('+');
                s.push_str(part);
            }
        }
        if let Some(i) = self.label.find('@') {
            s.push_str(&self.label[i..]);
        }
        s
    }
}

/// A candidate that could not be used, and why. Listed, never fatal.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Unusable {
    pub path: PathBuf,
    pub sources: Vec<Source>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub reason: String,
}
