//! Shards, as cargo-nextest's `--partition`: `hash:M/N` and `slice:M/N` (1-based), applied to
//! the units that `-k` and `--tag` selected. The unit is a case with one param combination
//! (`id[params]`): every run of it, on every interpreter and every producer/consumer pair of a
//! round trip, is in the same shard, so a round trip's pickle is made and loaded in one job.
//!
//! - `hash:M/N`: the unit is in shard `h mod N + 1`, `h` the first 8 bytes of the SHA-256 of its
//!   name: a unit stays in its shard when other cases are added, removed or reordered.
//! - `slice:M/N`: the selected units in order, dealt round-robin (the 1st to shard 1, the 2nd to
//!   shard 2, ...): shards of even size, but adding a case moves the ones after it.
//!
//! A [`Shard`] records which shard a run was and a digest of the whole selection, so that
//! [`check_complete`] can tell, when the shards are merged, that one is missing, given twice or
//! made from another partitioning or selection.

use std::fmt;

use sha2::{Digest, Sha256};

/// How units are dealt to shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Hash,
    Slice,
}

impl Scheme {
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Hash => "hash",
            Scheme::Slice => "slice",
        }
    }

    pub fn from_name(name: &str) -> Option<Scheme> {
        match name {
            "hash" => Some(Scheme::Hash),
            "slice" => Some(Scheme::Slice),
            _ => None,
        }
    }
}

/// `--partition`: shard `shard` of `total` (1 ≤ shard ≤ total) by `scheme`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    pub scheme: Scheme,
    pub shard: u32,
    pub total: u32,
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}/{}", self.scheme.as_str(), self.shard, self.total)
    }
}

impl Partition {
    /// `hash:2/5` or `slice:1/3`; the error says what is wrong and what is meant.
    pub fn parse(text: &str) -> Result<Partition, String> {
        let usage = "give hash:M/N or slice:M/N, shard M of N counted from 1 (as cargo-nextest's --partition)";
        let (scheme, rest) = text
            .split_once(':')
            .ok_or_else(|| format!("--partition `{text}`: {usage}"))?;
        let scheme = Scheme::from_name(scheme)
            .ok_or_else(|| format!("--partition `{text}`: unknown scheme `{scheme}`: {usage}"))?;
        let (m, n) = rest
            .split_once('/')
            .ok_or_else(|| format!("--partition `{text}`: no `/`: {usage}"))?;
        let number = |s: &str| {
            s.parse::<u32>()
                .map_err(|_| format!("--partition `{text}`: `{s}` is not a whole number: {usage}"))
        };
        let (shard, total) = (number(m)?, number(n)?);
        if total == 0 || shard == 0 || shard > total {
            return Err(format!(
                "--partition `{text}`: the shard must be from 1 to the number of shards ({}): {usage}",
                total.max(1)
            ));
        }
        Ok(Partition {
            scheme,
            shard,
            total,
        })
    }

    /// The shard (1-based) of each unit, `units` being the selected units' names in order.
    pub fn shards_of(&self, units: &[String]) -> Vec<u32> {
        units
            .iter()
            .enumerate()
            .map(|(i, name)| match self.scheme {
                Scheme::Hash => (hash(name) % u64::from(self.total)) as u32 + 1,
                Scheme::Slice => (i as u64 % u64::from(self.total)) as u32 + 1,
            })
            .collect()
    }

    /// Which of `units` (the selected units' names, in order) this shard keeps, and the
    /// [`Shard`] a run of it records.
    pub fn select(&self, units: &[String]) -> (Vec<bool>, Shard) {
        let keep: Vec<bool> = self
            .shards_of(units)
            .into_iter()
            .map(|s| s == self.shard)
            .collect();
        let shard = Shard {
            partition: *self,
            units: keep.iter().filter(|k| **k).count(),
            selected: units.len(),
            selection: selection_digest(units),
        };
        (keep, shard)
    }
}

/// What a sharded run records (the JSON's `partition`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    pub partition: Partition,
    /// Units (case and params) in this shard.
    pub units: usize,
    /// Units selected before partitioning, in every shard together.
    pub selected: usize,
    /// A digest of the names of the selected units: the same in every shard of one partitioning.
    pub selection: String,
}

/// 64 bits of the SHA-256 of a unit's name.
fn hash(name: &str) -> u64 {
    let digest = Sha256::digest(name.as_bytes());
    u64::from_be_bytes(digest[..8].try_into().expect("8 bytes"))
}

/// The first 16 hex digits of the SHA-256 of the names, one a line.
pub fn selection_digest(units: &[String]) -> String {
    let mut text = String::new();
    for u in units {
        text.push_str(u);
        text.push('\n');
    }
    crate::sys::hash::short_hex(text.as_bytes(), 16)
}

/// Why shards do not make one whole run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShardProblem {
    /// Two inputs were made with different `--partition` schemes, numbers of shards or
    /// selections (`-k`, `--tag`, other cases).
    Mixed {
        first: (String, String),
        other: (String, String),
    },
    /// Shards of the partitioning that no input is (on `platform`, when the jobs ran on
    /// several): the first [`MISSING_NAMED`] of them, and how many in all.
    Missing {
        partition: String,
        shards: Vec<u32>,
        count: usize,
        platform: Option<String>,
    },
    /// The same shard in two inputs that ran an interpreter in common.
    Twice {
        shard: String,
        first: String,
        second: String,
    },
}

impl fmt::Display for ShardProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShardProblem::Mixed { first, other } => write!(
                f,
                "{} is shard {} and {} is shard {}, of another partitioning or selection \
                 (--partition, -k, --tag and the cases must be the same in every shard): \
                 merge the shards of one run",
                first.0, first.1, other.0, other.1
            ),
            ShardProblem::Missing {
                partition,
                shards,
                count,
                platform,
            } => {
                let mut names: Vec<String> = shards
                    .iter()
                    .map(|s| partition.replacen("M", &s.to_string(), 1))
                    .collect();
                if *count > names.len() {
                    names.push(format!("and {} more", count - names.len()));
                }
                let on = platform
                    .as_deref()
                    .map(|p| format!(" for {p}"))
                    .unwrap_or_default();
                write!(
                    f,
                    "{} missing: the merged results would lack {} runs; give every shard's JSON",
                    if *count == 1 {
                        format!("shard {}{on} is", names[0])
                    } else {
                        format!("shards {}{on} are", names.join(", "))
                    },
                    if *count == 1 { "its" } else { "their" }
                )
            }
            ShardProblem::Twice {
                shard,
                first,
                second,
            } => write!(
                f,
                "shard {shard} is given twice, {first} and {second}, with interpreters in common: \
                 give each shard once"
            ),
        }
    }
}

/// An interpreter of a shard's job: its label and the platform it ran on (`linux-x86_64`; empty
/// when the JSON does not say). The same label on two platforms is two interpreters.
pub type Ran<'a> = (&'a str, &'a str);

/// Do the shards among `inputs` (name, its shard if sharded, the interpreters it ran) make
/// whole runs? Unsharded inputs are left alone; sharded ones must all be of one partitioning
/// and selection, each shard there at least once for every platform, and a shard given twice
/// only for different interpreters or platforms (another machine's job of a matrix: a Linux and
/// a Windows job's `hash:1/3`).
pub fn check_complete(inputs: &[(&str, Option<&Shard>, Vec<Ran<'_>>)]) -> Result<(), ShardProblem> {
    let sharded: Vec<(&str, &Shard, &Vec<Ran<'_>>)> = inputs
        .iter()
        .filter_map(|(name, shard, ran)| shard.map(|s| (*name, s, ran)))
        .collect();
    let Some((first_name, first, _)) = sharded.first().copied() else {
        return Ok(());
    };
    let same = |s: &Shard| {
        s.partition.scheme == first.partition.scheme
            && s.partition.total == first.partition.total
            && s.selection == first.selection
    };
    if let Some((name, other, _)) = sharded.iter().find(|(_, s, _)| !same(s)) {
        return Err(ShardProblem::Mixed {
            first: (first_name.to_string(), first.partition.to_string()),
            other: (name.to_string(), other.partition.to_string()),
        });
    }
    for (i, (name, s, ran)) in sharded.iter().enumerate() {
        if let Some((earlier, _, _)) = sharded[..i].iter().find(|(_, e, r)| {
            e.partition.shard == s.partition.shard && r.iter().any(|x| ran.contains(x))
        }) {
            return Err(ShardProblem::Twice {
                shard: s.partition.to_string(),
                first: earlier.to_string(),
                second: name.to_string(),
            });
        }
    }
    // Every platform's jobs make the whole partitioning (a job that ran no interpreter counts
    // for every platform).
    let mut platforms: Vec<&str> = sharded
        .iter()
        .flat_map(|(_, _, ran)| ran.iter().map(|(_, p)| *p))
        .collect();
    platforms.sort_unstable();
    platforms.dedup();
    if platforms.is_empty() {
        platforms.push("");
    }
    let several = platforms.len() > 1;
    for platform in platforms {
        let on = |ran: &Vec<Ran<'_>>| ran.is_empty() || ran.iter().any(|(_, p)| *p == platform);
        let mut present: Vec<u32> = sharded
            .iter()
            .filter(|(_, _, ran)| on(ran))
            .map(|(_, s, _)| s.partition.shard)
            .filter(|m| (1..=first.partition.total).contains(m))
            .collect();
        present.sort_unstable();
        present.dedup();
        // Named up to MISSING_NAMED and counted, never listed: N can be 4,294,967,295.
        let count = first.partition.total as usize - present.len();
        if count > 0 {
            let missing: Vec<u32> = (1..=first.partition.total)
                .filter(|m| present.binary_search(m).is_err())
                .take(MISSING_NAMED)
                .collect();
            return Err(ShardProblem::Missing {
                partition: format!(
                    "{}:M/{}",
                    first.partition.scheme.as_str(),
                    first.partition.total
                ),
                shards: missing,
                count,
                platform: (several && !platform.is_empty()).then(|| platform.to_string()),
            });
        }
    }
    Ok(())
}

/// The missing shards an error names (the others are counted).
pub const MISSING_NAMED: usize = 10;

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("case-{i}[p={i}]")).collect()
    }

    #[test]
    fn parses_as_nextest_and_refuses_the_rest() {
        let p = Partition::parse("hash:2/5").unwrap();
        assert_eq!((p.scheme, p.shard, p.total), (Scheme::Hash, 2, 5));
        assert_eq!(p.to_string(), "hash:2/5");
        assert_eq!(Partition::parse("slice:1/1").unwrap().scheme, Scheme::Slice);
        for (bad, says) in [
            ("hash:0/3", "from 1 to the number of shards (3)"),
            ("hash:4/3", "from 1 to"),
            ("slice:1/0", "from 1 to"),
            ("count:1/2", "unknown scheme `count`"),
            ("hash:1", "no `/`"),
            ("hash:a/2", "`a` is not a whole number"),
            ("2/5", "give hash:M/N"),
        ] {
            let e = Partition::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn every_unit_in_exactly_one_shard() {
        let units = names(23);
        for scheme in [Scheme::Hash, Scheme::Slice] {
            for total in 1..=5 {
                let mut count = vec![0; units.len()];
                for shard in 1..=total {
                    let (keep, s) = Partition {
                        scheme,
                        shard,
                        total,
                    }
                    .select(&units);
                    assert_eq!(s.selected, 23);
                    assert_eq!(s.units, keep.iter().filter(|k| **k).count());
                    for (i, k) in keep.iter().enumerate() {
                        count[i] += *k as usize;
                    }
                }
                assert!(count.iter().all(|c| *c == 1), "{scheme:?} {total}");
            }
        }
    }

    #[test]
    fn slices_are_round_robin_and_hashes_stable_when_cases_are_added() {
        let slice = Partition::parse("slice:1/3").unwrap();
        assert_eq!(slice.shards_of(&names(5)), [1, 2, 3, 1, 2]);
        let hash = Partition::parse("hash:1/4").unwrap();
        let before = hash.shards_of(&names(10));
        let mut more = vec!["a-new-case".to_string()];
        more.extend(names(10));
        more.push("another[x=1]".into());
        let after = hash.shards_of(&more);
        assert_eq!(
            &after[1..11],
            &before[..],
            "the old units keep their shards"
        );
        // A known value: the hash is SHA-256's, not one of the platform.
        assert_eq!(super::hash("abc"), 0xba7816bf8f01cfea);
    }

    fn shard(text: &str, selection: &str) -> Shard {
        Shard {
            partition: Partition::parse(text).unwrap(),
            units: 1,
            selected: 3,
            selection: selection.into(),
        }
    }

    #[test]
    fn merge_names_missing_twice_and_mixed_shards() {
        let (a, b, c) = (
            shard("hash:1/3", "d"),
            shard("hash:2/3", "d"),
            shard("hash:3/3", "d"),
        );
        let py = || vec![("cpython-3.12.1", "linux-x86_64")];
        let whole = [
            ("a.json", Some(&a), py()),
            ("b.json", Some(&b), py()),
            ("c.json", Some(&c), py()),
            ("other.json", None, py()),
        ];
        assert_eq!(check_complete(&whole), Ok(()));
        let e = check_complete(&whole[..2]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "shard hash:3/3 is missing: the merged results would lack its runs; give every shard's JSON"
        );
        let e = check_complete(&whole[..1]).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("shards hash:2/3, hash:3/3 are missing"),
            "{e}"
        );
        let twice = [
            ("a.json", Some(&a), py()),
            ("a2.json", Some(&a), py()),
            ("b.json", Some(&b), py()),
            ("c.json", Some(&c), py()),
        ];
        assert!(matches!(
            check_complete(&twice),
            Err(ShardProblem::Twice { second, .. }) if second == "a2.json"
        ));
        // The same shard on other interpreters: another machine's job, fine.
        let machines = [
            ("a.json", Some(&a), py()),
            (
                "a-pypy.json",
                Some(&a),
                vec![("pypy-3.9.18", "linux-x86_64")],
            ),
            ("b.json", Some(&b), py()),
            ("c.json", Some(&c), py()),
        ];
        assert_eq!(check_complete(&machines), Ok(()));
        // The same shard and labels on another platform: a Linux and a Windows job.
        let windows = || vec![("cpython-3.12.1", "windows-amd64")];
        let mut systems = whole[..3].to_vec();
        systems.extend([
            ("a-win.json", Some(&a), windows()),
            ("b-win.json", Some(&b), windows()),
        ]);
        let e = check_complete(&systems).unwrap_err();
        assert_eq!(
            e.to_string(),
            "shard hash:3/3 for windows-amd64 is missing: the merged results would lack its runs; give every shard's JSON"
        );
        systems.push(("c-win.json", Some(&c), windows()));
        assert_eq!(check_complete(&systems), Ok(()));
        // Any N: named up to MISSING_NAMED and counted.
        let huge = shard("hash:1/4294967295", "d");
        let e = check_complete(&[("h.json", Some(&huge), py())]).unwrap_err();
        assert!(e.to_string().len() < 400, "{e}");
        assert!(e.to_string().contains("and 4294967284 more"), "{e}");
        let other_n = shard("hash:2/4", "d");
        let other_selection = shard("hash:2/3", "e");
        let other_scheme = shard("slice:2/3", "d");
        for other in [&other_n, &other_selection, &other_scheme] {
            let mixed = [("a.json", Some(&a), py()), ("x.json", Some(other), py())];
            assert!(
                matches!(check_complete(&mixed), Err(ShardProblem::Mixed { .. })),
                "{other:?}"
            );
        }
    }
}
