//! Interpreters installed on request (`--download-python`): which requests `uv python install`
//! can serve (and what to use instead for those it cannot), where uv is, and the one uv call
//! that installs them into crosspickle's own folder of the cache ([`folder`]), with no
//! executable linked onto the user's PATH. Discovery's uv source searches that folder, so what
//! uv installed there is found, probed and selected like any uv-managed interpreter.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use tokio_util::sync::CancellationToken;

use super::request::PythonRequest;
use crate::sys::process::{self, ProcessSpec, ToolError};
use crate::version::VersionRequest;

/// The environment variable naming the uv to use, before the one on PATH.
pub const UV_VARIABLE: &str = "CROSSPICKLE_UV";

/// Where crosspickle has uv install interpreters: `<cache>/pythons`.
pub fn folder(cache_dir: &Path) -> PathBuf {
    cache_dir.join("pythons")
}

/// What uv is asked to install for the request `text`, or why uv cannot serve it and what to
/// use instead. uv installs the standalone builds of CPython and PyPy 3.8 and newer, by
/// version: not a path, not a pythons.toml name, not 2.7, 3.6 or 3.7.
pub fn uv_request(text: &str) -> Result<String, String> {
    let request = PythonRequest::parse(text).map_err(|e| e.to_string())?;
    let version = match &request {
        PythonRequest::Path(_) => {
            return Err(format!(
                "`{text}` is a path, and uv installs versions, not files: install the interpreter at that path yourself, or ask for a version (`3.12`)"
            ))
        }
        PythonRequest::Name(_) => {
            return Err(format!(
                "`{text}` is a name (of pythons.toml, or a label), and uv installs versions: name the interpreter's path in pythons.toml, or ask for a version (`3.12`, `pypy3.10`)"
            ))
        }
        PythonRequest::Version(v) => Some(v),
        PythonRequest::Implementation(_, v) => v.as_ref(),
        PythonRequest::Build { version, .. } => Some(version),
    };
    let served = VersionRequest::from_str(">=3.8").expect("a version request");
    if version.is_some_and(|v| v.disjoint(&served)) {
        return Err(format!(
            "uv installs Python 3.8 and newer, not `{text}`: install it with pyenv (`pyenv install {}`) or your system's packages, where discovery finds it, or name its path in pythons.toml",
            version.map(|v| v.as_str()).unwrap_or(text)
        ));
    }
    Ok(text.trim().to_string())
}

/// The uv that came with crosspickle, else the one on PATH: the wheel depends on uv, so pip,
/// pipx and `uv tool install` put a `uv` in the folder of crosspickle's own executable.
pub fn bundled_or_path_uv() -> Option<PathBuf> {
    let name = format!("uv{}", std::env::consts::EXE_SUFFIX);
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(&name)))
        .filter(|uv| uv.is_file())
        .or_else(|| which::which("uv").ok())
}

/// The uv to run: the one `CROSSPICKLE_UV` names, else the one beside crosspickle's executable,
/// else `uv` on PATH; what to do when there is none.
pub fn find_uv() -> Result<PathBuf, String> {
    if let Some(named) = std::env::var_os(UV_VARIABLE).filter(|v| !v.is_empty()) {
        let path = PathBuf::from(named);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "{UV_VARIABLE}={} names no file: give the path of a uv executable",
                path.display()
            ))
        };
    }
    bundled_or_path_uv().ok_or_else(|| {
        format!("uv is neither beside crosspickle nor on PATH: install uv (`pipx install uv`, or `pip install uv` in a virtual environment) or set {UV_VARIABLE} to its path")
    })
}

/// `uv python install` of `requests` (as [`uv_request`] gave them) into `folder`, without
/// linking executables into `~/.local/bin` (`--no-bin`); the rest of uv's settings (a mirror,
/// `UV_PYTHON_DOWNLOADS_JSON_URL`, its cache) are the user's.
pub async fn install(
    uv: &Path,
    folder: &Path,
    requests: &[String],
    cancel: &CancellationToken,
) -> Result<(), ToolError> {
    let mut args: Vec<OsString> = ["python", "install", "--no-bin", "--install-dir"]
        .map(OsString::from)
        .to_vec();
    args.push(folder.as_os_str().to_owned());
    args.push("--".into());
    args.extend(requests.iter().map(OsString::from));
    let spec = ProcessSpec::new(uv, None).args(args);
    let what = format!("uv python install {}", requests.join(" "));
    process::output(&spec, &what, cancel).await.map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_uv_serves() {
        for ok in [
            "3.12",
            "3.8",
            "3",
            ">=3.7",
            "cpython3.12",
            "pypy3.10",
            "pypy",
            "3.13t",
            "3.14d",
        ] {
            assert_eq!(uv_request(ok).as_deref(), Ok(ok), "{ok}");
        }
        for (no, says) in [
            ("2.7", "pyenv install 2.7"),
            ("3.6", "pyenv install 3.6"),
            ("3.7", "pyenv install 3.7"),
            ("<3.8", "3.8 and newer"),
            ("pypy2.7", "pyenv install 2.7"),
            ("./python3", "is a path"),
            ("/usr/bin/python3.11", "is a path"),
            ("debian-dbg", "is a name"),
        ] {
            let why = uv_request(no).unwrap_err();
            assert!(why.contains(says), "{no}: {why}");
        }
    }
}
