//! Which operating system and machine an interpreter runs on, as Python names them
//! (`sys.platform`: `linux`, `darwin`, `win32`; `platform.machine()`: `x86_64`, `arm64`,
//! `AMD64`), and the host's own in the same words: an interpreter whose platform or machine is
//! not the host's gets it in its label ([`tag`]), so that results of Linux, macOS and Windows
//! jobs keep their columns apart when merged.

use std::fmt;

/// An operating system a rule can select on (`platform:` in a case's rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Platform {
    Linux,
    Darwin,
    Win32,
}

impl Platform {
    pub const ALL: &[Platform] = &[Platform::Linux, Platform::Darwin, Platform::Win32];

    /// The name `sys.platform` gives it (and rules use).
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Linux => "linux",
            Platform::Darwin => "darwin",
            Platform::Win32 => "win32",
        }
    }

    /// A rule's name for a platform (`linux`, `darwin`, `win32`), as written.
    pub fn from_name(name: &str) -> Option<Platform> {
        Platform::ALL.iter().copied().find(|p| p.as_str() == name)
    }

    /// The platform of a `sys.platform` value: `linux2` (Python 2.7) is `linux`; `cygwin` or
    /// `freebsd14` are none of these.
    pub fn of_sys_platform(value: &str) -> Option<Platform> {
        if value.starts_with("linux") {
            return Some(Platform::Linux);
        }
        Platform::from_name(value)
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `sys.platform` as an interpreter built for this host would say it (`linux` for Linux, which
/// Python 2.7 calls `linux2`).
pub fn host_platform() -> &'static str {
    match std::env::consts::OS {
        "linux" => "linux",
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    }
}

/// `platform.machine()` as it reads on this host: Windows says `AMD64` and `ARM64`, macOS
/// `arm64`, Linux `x86_64` and `aarch64`.
pub fn host_machine() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("windows", "x86_64") => "AMD64",
        ("windows", "aarch64") => "ARM64",
        ("macos", "aarch64") => "arm64",
        (_, arch) => arch,
    }
}

/// The normal form of a probed `sys.platform` (`linux2` is `linux`).
pub fn normal(sys_platform: &str) -> String {
    match Platform::of_sys_platform(sys_platform) {
        Some(p) => p.as_str().to_string(),
        None => sys_platform.to_string(),
    }
}

/// What an interpreter's label says of its platform, when it is not `host`'s: `win32-AMD64`
/// for another system, `x86_64` for another machine alone (an x86-64 Python under Rosetta on
/// an arm64 Mac); none when both are the host's or not known.
pub fn tag(platform: Option<&str>, machine: Option<&str>, host: (&str, &str)) -> Option<String> {
    let platform = platform?;
    let machine = machine.unwrap_or("");
    if platform != host.0 {
        Some(if machine.is_empty() {
            platform.to_string()
        } else {
            format!("{platform}-{machine}")
        })
    } else if !machine.is_empty() && machine != host.1 {
        Some(machine.to_string())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_tags() {
        assert_eq!(Platform::of_sys_platform("linux2"), Some(Platform::Linux));
        assert_eq!(Platform::of_sys_platform("win32"), Some(Platform::Win32));
        assert_eq!(Platform::of_sys_platform("cygwin"), None);
        assert_eq!(Platform::from_name("linux2"), None);
        assert_eq!(normal("linux2"), "linux");
        assert_eq!(normal("freebsd14"), "freebsd14");
        let linux = ("linux", "x86_64");
        assert_eq!(tag(Some("linux"), Some("x86_64"), linux), None);
        assert_eq!(tag(None, None, linux), None);
        assert_eq!(
            tag(Some("win32"), Some("AMD64"), linux).as_deref(),
            Some("win32-AMD64")
        );
        assert_eq!(
            tag(Some("darwin"), Some("x86_64"), ("darwin", "arm64")).as_deref(),
            Some("x86_64")
        );
        assert_eq!(tag(Some("darwin"), None, linux).as_deref(), Some("darwin"));
        for p in Platform::ALL {
            assert_eq!(Platform::from_name(p.as_str()), Some(*p));
        }
        if cfg!(target_os = "linux") {
            assert_eq!(
                (host_platform(), host_machine()),
                ("linux", std::env::consts::ARCH)
            );
        }
        if cfg!(all(windows, target_arch = "x86_64")) {
            assert_eq!((host_platform(), host_machine()), ("win32", "AMD64"));
        }
    }
}
