//! What differs between the Futhark versions pmx supports, in one place:
//! the version read from `futhark --version`, the supported range, and
//! the capabilities the generator and the glue depend on. Facts from
//! Futhark's CHANGELOG, `docs/c-api.rst` and `docs/manifest.schema.json`.

/// A Futhark release, `0.minor.patch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

const fn v(minor: u32, patch: u32) -> Version {
    Version { major: 0, minor, patch }
}

/// The oldest and the newest minor versions pmx generates code and glue
/// for: 0.22 to 0.27.
pub const SUPPORTED: (Version, Version) = (v(22, 0), v(27, u32::MAX));

/// What a version does that pmx's code and glue depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    pub version: Version,
    /// 0.26.1: an entry has exactly one output; several results come back
    /// as one opaque tuple (`futhark_project_opaque_*`), and the manifest
    /// says `output` instead of `outputs`.
    pub single_output: bool,
    /// 0.25.14: `futhark_new_raw_*` takes no offset and, in the `c` and
    /// `multicore` backends, wraps the caller's buffer without copying
    /// (it must stay alive, and unchanged, while the array lives).
    pub raw_arrays_wrap: bool,
    /// 0.25.1: sizes may be any expression (`flatten` gives `[n*m]`,
    /// `split`/`unflatten` lost their size arguments, `concat_to` and
    /// `flatten_to` are gone). The generator writes one form that every
    /// supported version accepts (checked by `futhark check` with each
    /// version in the tests), so it does not branch on this.
    pub size_expressions: bool,
}

impl Capabilities {
    pub fn of(version: Version) -> Capabilities {
        Capabilities {
            version,
            single_output: version >= v(26, 1),
            raw_arrays_wrap: version >= v(25, 14),
            size_expressions: version >= v(25, 1),
        }
    }
}

/// The version in the first line of `futhark --version` (`Futhark
/// 0.25.8`, or with more words after it), if supported; else why not,
/// naming the supported range.
pub fn parse(line: &str) -> Result<Version, String> {
    let (lo, hi) = SUPPORTED;
    let range = format!("pmx supports Futhark 0.{} to 0.{}", lo.minor, hi.minor);
    let number = line.split_whitespace().nth(1).unwrap_or("");
    let parts: Vec<u32> = number.split('.').map_while(|p| p.parse().ok()).collect();
    let version = match parts.as_slice() {
        [major, minor] => Version { major: *major, minor: *minor, patch: 0 },
        [major, minor, patch, ..] => Version { major: *major, minor: *minor, patch: *patch },
        _ => {
            return Err(format!("cannot tell the version of this futhark (`futhark --version` said `{line}`): {range}"))
        }
    };
    if (lo..=hi).contains(&version) {
        Ok(version)
    } else {
        Err(format!("Futhark {number} is not supported: {range}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_and_the_range_is_named() {
        assert_eq!(parse("Futhark 0.25.8").unwrap(), v(25, 8));
        assert_eq!(parse("Futhark 0.27.1 (prerelease - include info below when reporting bugs)").unwrap(), v(27, 1));
        assert_eq!(parse("Futhark 0.22").unwrap(), v(22, 0));
        for old in ["Futhark 0.21.15", "Futhark 0.28.0", "Futhark 1.0.0"] {
            assert!(parse(old).unwrap_err().contains("pmx supports Futhark 0.22 to 0.27"), "{old}");
        }
        assert!(parse("something else").unwrap_err().contains("cannot tell the version"));
    }

    #[test]
    fn capabilities_change_at_the_releases_that_changed_them() {
        let c = |minor, patch| Capabilities::of(v(minor, patch));
        assert!(!c(22, 7).single_output && !c(22, 7).raw_arrays_wrap && !c(22, 7).size_expressions);
        assert!(c(25, 1).size_expressions && !c(25, 13).raw_arrays_wrap && c(25, 14).raw_arrays_wrap);
        assert!(!c(25, 35).single_output && c(26, 1).single_output && c(27, 1).single_output);
    }
}
