//! Python versions and version requests: `3.8` (a series), `3.8.1` (one release) or a PEP 440
//! specifier set such as `>=3.8,<3.8.2`, as the case format and `--python` spell them.

use std::fmt;
use std::str::FromStr;

use pep440_rs::{Version, VersionSpecifiers};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// An interpreter's version, compared as PEP 440 orders it (`3.14.0rc1 < 3.14.0`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PythonVersion(Version);

impl PythonVersion {
    /// From `sys.version_info`'s five fields; a development build (`3.15.0a2+`) compares as
    /// its last pre-release, which is what `version_info` says anyway.
    pub fn from_version_info(major: u64, minor: u64, micro: u64, level: &str, serial: u64) -> Self {
        let pre = match level {
            "alpha" => format!("a{serial}"),
            "beta" => format!("b{serial}"),
            "candidate" => format!("rc{serial}"),
            _ => String::new(),
        };
        let text = format!("{major}.{minor}.{micro}{pre}");
        PythonVersion(
            Version::from_str(&text).expect("version_info always forms a PEP 440 version"),
        )
    }

    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim().trim_end_matches('+');
        Version::from_str(text).ok().map(PythonVersion)
    }

    pub fn release(&self) -> &[u64] {
        self.0.release()
    }
}

impl fmt::Display for PythonVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for PythonVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PythonVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        PythonVersion::parse(&s).ok_or_else(|| de::Error::custom(format!("invalid version `{s}`")))
    }
}

/// A set of versions: what `python:` in a case or a rule, and `--python 3.8`, ask for.
#[derive(Debug, Clone)]
pub struct VersionRequest {
    text: String,
    specifiers: VersionSpecifiers,
}

impl VersionRequest {
    /// PEP 440 containment, except that a pre-release interpreter compares as its version
    /// orders (the case format's rule): `<3.14.0` holds for `3.14.0rc1`, which PEP 440's
    /// exclusive comparisons would refuse.
    pub fn contains(&self, version: &PythonVersion) -> bool {
        use pep440_rs::Operator;
        self.specifiers.iter().all(|spec| match spec.operator() {
            Operator::LessThan => version.0 < *spec.version(),
            Operator::GreaterThan => version.0 > *spec.version(),
            _ => spec.contains(&version.0),
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether no version is in both requests, as far as their bounds tell: `!=`, `~=`'s
    /// exclusions and `===` are taken to allow anything, so `false` can also mean "cannot tell".
    pub fn disjoint(&self, other: &VersionRequest) -> bool {
        self.span().intersect(&other.span()).is_empty()
    }

    /// The range of versions between this request's bounds.
    fn span(&self) -> Span {
        use pep440_rs::Operator;
        let mut span = Span::default();
        for spec in self.specifiers.iter() {
            let v = spec.version().clone();
            let bound = |v: Version, inclusive| Some((v, inclusive));
            let next = match spec.operator() {
                Operator::LessThan => Span {
                    low: None,
                    high: bound(v, false),
                },
                Operator::LessThanEqual => Span {
                    low: None,
                    high: bound(v, true),
                },
                Operator::GreaterThan => Span {
                    low: bound(v, false),
                    high: None,
                },
                Operator::GreaterThanEqual => Span {
                    low: bound(v, true),
                    high: None,
                },
                Operator::Equal => Span {
                    low: bound(v.clone(), true),
                    high: bound(v, true),
                },
                Operator::EqualStar => series(v.release()),
                Operator::TildeEqual if v.release().len() >= 2 => Span {
                    low: bound(v.clone(), true),
                    high: series(&v.release()[..v.release().len() - 1]).high,
                },
                _ => Span::default(),
            };
            span = span.intersect(&next);
        }
        span
    }

    /// Whether `text` looks like a version request rather than a name or a path.
    pub fn looks_like(text: &str) -> bool {
        let t = text.trim();
        t.starts_with(|c: char| c.is_ascii_digit() || "<>=!~".contains(c))
    }
}

/// The versions between two bounds (each a version and whether it is included); none is open.
#[derive(Debug, Clone, Default)]
struct Span {
    low: Option<(Version, bool)>,
    high: Option<(Version, bool)>,
}

impl Span {
    fn intersect(&self, other: &Span) -> Span {
        let low = match (&self.low, &other.low) {
            (Some(a), Some(b)) => Some(
                if a.0 > b.0 || (a.0 == b.0 && !a.1) {
                    a
                } else {
                    b
                }
                .clone(),
            ),
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        let high = match (&self.high, &other.high) {
            (Some(a), Some(b)) => Some(
                if a.0 < b.0 || (a.0 == b.0 && !a.1) {
                    a
                } else {
                    b
                }
                .clone(),
            ),
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        Span { low, high }
    }

    fn is_empty(&self) -> bool {
        match (&self.low, &self.high) {
            (Some((low, low_in)), Some((high, high_in))) => {
                low > high || (low == high && !(*low_in && *high_in))
            }
            _ => false,
        }
    }
}

/// `==X.*`: from the first development release of X to the first of the next series.
fn series(release: &[u64]) -> Span {
    let start = Version::new(release.iter().copied()).with_dev(Some(0));
    let mut next: Vec<u64> = release.to_vec();
    if let Some(last) = next.last_mut() {
        *last += 1;
    }
    let end = Version::new(next).with_dev(Some(0));
    Span {
        low: Some((start, true)),
        high: Some((end, false)),
    }
}

impl FromStr for VersionRequest {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let t = text.trim();
        if t.is_empty() {
            return Err("empty version request".into());
        }
        let spec_text = if t.starts_with(|c: char| c.is_ascii_digit()) {
            // A bare version names a series: `3.8` is `==3.8.*`, `3.8.1` is `==3.8.1`.
            let version = Version::from_str(t).map_err(|e| first_line(&e.to_string()))?;
            if version.release().len() >= 3 || version.any_prerelease() {
                format!("=={t}")
            } else {
                format!("=={t}.*")
            }
        } else {
            t.to_string()
        };
        let specifiers =
            VersionSpecifiers::from_str(&spec_text).map_err(|e| first_line(&e.to_string()))?;
        let request = VersionRequest {
            text: t.to_string(),
            specifiers,
        };
        if request.span().is_empty() {
            return Err(
                "its bounds exclude each other: no version can match it (a typo, such as \
                        `<3.1` for `<3.10`?)"
                    .to_string(),
            );
        }
        Ok(request)
    }
}

/// The first line of a parser's message, without the colon some end it with (pep440_rs's
/// `must be one of ~= == != <= >= < > ===:`).
fn first_line(message: &str) -> String {
    let line = message.lines().next().unwrap_or("").trim_end();
    line.trim_end_matches(':').trim_end().to_string()
}

impl fmt::Display for VersionRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for VersionRequest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for VersionRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = VersionRequest;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a version request in quotes, such as \"3.8\" or \">=3.8,<3.8.2\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<VersionRequest, E> {
                VersionRequest::from_str(v)
                    .map_err(|e| E::custom(format!("invalid version request `{v}`: {e}")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<VersionRequest, E> {
                Err(E::custom(format!(
                    "version requests are strings: YAML reads this as the number {v}; put it in quotes (\"3.10\", not 3.10)"
                )))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<VersionRequest, E> {
                Err(E::custom(format!(
                    "version requests are strings: YAML reads this as the number {v}; put it in quotes (\"{v}\")"
                )))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<VersionRequest, E> {
                self.visit_i64(v as i64)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(s: &str) -> VersionRequest {
        s.parse().unwrap()
    }
    fn v(s: &str) -> PythonVersion {
        PythonVersion::parse(s).unwrap()
    }

    #[test]
    fn bare_versions_name_series_or_releases() {
        assert!(req("3.8").contains(&v("3.8.18")));
        assert!(req("3.8").contains(&v("3.8.0")));
        assert!(!req("3.8").contains(&v("3.9.0")));
        assert!(req("3.8.1").contains(&v("3.8.1")));
        assert!(!req("3.8.1").contains(&v("3.8.18")));
        assert!(req("3").contains(&v("3.13.0")));
        assert!(!req("3").contains(&v("2.7.18")));
    }

    #[test]
    fn specifier_sets() {
        let r = req(">=3.8,<3.8.2");
        assert!(r.contains(&v("3.8.0")));
        assert!(r.contains(&v("3.8.1")));
        assert!(!r.contains(&v("3.8.2")));
        assert!(!r.contains(&v("3.7.16")));
        assert!(req("<3.4").contains(&v("2.7.18")));
    }

    #[test]
    fn prereleases_compare_as_versions() {
        let rc = PythonVersion::from_version_info(3, 14, 0, "candidate", 1);
        assert_eq!(rc.to_string(), "3.14.0rc1");
        assert!(req("3.14").contains(&rc));
        assert!(!req(">=3.14.0").contains(&rc));
        assert!(req("<3.14.0").contains(&rc));
        let dev = PythonVersion::parse("3.15.0a2+").unwrap();
        assert_eq!(dev, PythonVersion::from_version_info(3, 15, 0, "alpha", 2));
    }

    #[test]
    fn numbers_are_rejected_with_advice() {
        let err = serde_norway::from_str::<VersionRequest>("3.10")
            .unwrap_err()
            .to_string();
        assert!(err.contains("put it in quotes"), "{err}");
        assert!(serde_norway::from_str::<VersionRequest>("\"3.10\"")
            .unwrap()
            .contains(&v("3.10.13")));
    }

    #[test]
    fn disjoint_requests() {
        let apart = |a: &str, b: &str| req(a).disjoint(&req(b));
        assert!(apart("<3", ">=3"));
        assert!(apart("<3", ">=3,<3.7.7"));
        assert!(apart("3.12", ">=3.13"));
        assert!(apart("3.12", "3.13"));
        assert!(apart("<3.8", "3.8.1"));
        assert!(apart(">=3.8.0,<3.8.2", "3.7"));
        assert!(apart("~=3.8.1", "3.9"));
        assert!(!apart("<3.8", "3.7"));
        assert!(!apart("<3.12", "3.11"));
        assert!(!apart(">=3.8", "<3.8.2"));
        assert!(!apart("<=3.8", ">=3.8"));
        assert!(!apart("!=3.8", "3.8.1"));
        // A pre-release of 3.8.0 is in the series 3.8 and below 3.8.
        assert!(!apart("3.8", "<3.8"));
        assert!(req("3.8").contains(&v("3.8.0rc1")) && req("<3.8").contains(&v("3.8.0rc1")));
        assert!(!apart("3.8", "<3.8.0.dev1"));
    }

    #[test]
    fn garbage_is_an_error() {
        assert!("3.x".parse::<VersionRequest>().is_err());
        assert!(">=banana".parse::<VersionRequest>().is_err());
    }
}
