//! Reading headroom's YAML files (scenarios, experiments) with every error
//! located at file:line:column and saying how to fix it: the file's text
//! within a size limit, and typed values from marked YAML nodes.

use headroom_units::quantity::{parse_duration, parse_rate, Rate};
use marked_yaml::types::{MarkedMappingNode, MarkedScalarNode};
use marked_yaml::{LoadError, LoaderOptions, Node as Yaml, Span};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A problem in a file, with its location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocatedError {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for LocatedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Line 0: about the whole file (it cannot be read, or is too large).
        if self.line == 0 {
            return write!(f, "{}: {}", self.file.display(), self.message);
        }
        write!(
            f,
            "{}:{}:{}: {}",
            self.file.display(),
            self.line,
            self.column,
            self.message
        )
    }
}

impl std::error::Error for LocatedError {}

type Res<T> = Result<T, LocatedError>;

/// The text of `path`, read through a limit of `max_bytes` (so a pipe or
/// a device is bounded like a file), refused when it is UTF-16 or not
/// UTF-8 (naming the first bad byte). `what` names the file in messages
/// and `too_large_hint` says what to do instead of a file that large.
pub fn read_text(path: &Path, max_bytes: u64, what: &str, too_large_hint: &str) -> Res<String> {
    let fail = |message: String| LocatedError {
        file: path.to_path_buf(),
        line: 0,
        column: 0,
        message,
    };
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(max_bytes + 1).read_to_end(&mut bytes))
        .map_err(|e| fail(format!("cannot read {what}: {e}")))?;
    if bytes.len() as u64 > max_bytes {
        return Err(fail(format!(
            "{what} is larger than {} MB, the most headroom reads. {too_large_hint}",
            max_bytes / 1_000_000
        )));
    }
    if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
        return Err(fail(
            "the file is UTF-16 text: save it as UTF-8 (most editors offer it under \"Save as\" or \"Encoding\")".into(),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|b| **b == b'\n').count() + 1;
        let column = good.len() - good.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1) + 1;
        LocatedError {
            file: path.to_path_buf(),
            line,
            column,
            message: "this byte is not UTF-8: save the file as UTF-8".into(),
        }
    })
}

/// What a node is, for "must be a mapping, found a list" messages.
pub fn kind_of(node: &Yaml) -> &'static str {
    match node {
        Yaml::Scalar(_) => "a value",
        Yaml::Mapping(_) => "a mapping (key: value lines)",
        Yaml::Sequence(_) => "a list (- items)",
    }
}

/// Edit distance, for "did you mean" hints.
pub fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = (previous + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(current + 1);
            previous = current;
        }
    }
    row[b.len()]
}

/// The closest of `allowed` to `word`, as a "did you mean 'x'? " hint
/// when it is close enough; empty otherwise.
pub fn did_you_mean(word: &str, allowed: &[&str]) -> String {
    let closest = allowed
        .iter()
        .min_by_key(|k| distance(k, word))
        .copied()
        .unwrap_or_default();
    if !closest.is_empty() && distance(closest, word) <= 2 {
        format!("did you mean '{closest}'? ")
    } else {
        String::new()
    }
}

/// One YAML document being read: locates errors in its file.
pub struct Doc {
    pub file: PathBuf,
}

impl Doc {
    /// Parses `text` (a byte-order mark is skipped; duplicate keys are
    /// errors); `top_level` says what the file must be when it is not a
    /// mapping.
    pub fn parse(&self, text: &str, top_level: &str) -> Res<Yaml> {
        // Editors on Windows start UTF-8 files with a byte-order mark.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let options = LoaderOptions::default().error_on_duplicate_keys(true);
        marked_yaml::parse_yaml_with_options(0, text, options)
            .map_err(|e| self.load_error(e, top_level))
    }

    pub fn at(&self, span: &Span, message: impl Into<String>) -> LocatedError {
        let (line, column) = span.start().map_or((1, 1), |m| (m.line(), m.column()));
        LocatedError {
            file: self.file.clone(),
            line,
            column,
            message: message.into(),
        }
    }

    /// Where a mapping starts, for errors about the whole mapping: its first key.
    pub fn map_at<'m>(&self, map: &'m MarkedMappingNode) -> &'m Span {
        map.keys().next().map_or(map.span(), |key| key.span())
    }

    pub fn load_error(&self, error: LoadError, top_level: &str) -> LocatedError {
        let (marker, message) = match &error {
            LoadError::TopLevelMustBeMapping(m) => (m, top_level.to_string()),
            LoadError::TopLevelMustBeSequence(m) => (m, error.to_string()),
            LoadError::UnexpectedAnchor(m) => (
                m,
                "anchors (&name) are not supported: repeat the value".to_string(),
            ),
            LoadError::MappingKeyMustBeScalar(m) => (m, "keys must be plain words".to_string()),
            LoadError::UnexpectedTag(m) => (m, "tags (!name) are not supported".to_string()),
            LoadError::ScanError(m, scan) => (
                m,
                format!("invalid YAML: {scan}; check the indentation and quotes on this line"),
            ),
            LoadError::DuplicateKey(inner) => {
                let key = &inner.key;
                return self.at(
                    key.span(),
                    format!("'{}' is given twice in the same mapping", key.as_str()),
                );
            }
        };
        LocatedError {
            file: self.file.clone(),
            line: marker.line(),
            column: marker.column(),
            message,
        }
    }

    pub fn mapping<'n>(&self, node: &'n Yaml, what: &str) -> Res<&'n MarkedMappingNode> {
        node.as_mapping().ok_or_else(|| {
            self.at(
                node.span(),
                format!(
                    "{what} must be a mapping (key: value lines), found {}",
                    kind_of(node)
                ),
            )
        })
    }

    pub fn scalar<'n>(&self, node: &'n Yaml, what: &str) -> Res<&'n MarkedScalarNode> {
        node.as_scalar().ok_or_else(|| {
            self.at(
                node.span(),
                format!("{what} must be a single value, found {}", kind_of(node)),
            )
        })
    }

    /// Refuses a key of `map` not in `allowed`, with the closest allowed one.
    pub fn keys(&self, map: &MarkedMappingNode, allowed: &[&str], what: &str) -> Res<()> {
        for key in map.keys() {
            if !allowed.contains(&key.as_str()) {
                let hint = did_you_mean(key.as_str(), allowed);
                return Err(self.at(
                    key.span(),
                    format!(
                        "unknown key '{}' in {what}: {hint}(allowed: {})",
                        key.as_str(),
                        allowed.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    pub fn text(&self, node: &Yaml, what: &str) -> Res<String> {
        Ok(self.scalar(node, what)?.as_str().to_string())
    }

    pub fn duration(&self, node: &Yaml, what: &str) -> Res<Duration> {
        let s = self.scalar(node, what)?;
        parse_duration(s.as_str()).map_err(|e| self.at(s.span(), format!("{what}: {e}")))
    }

    pub fn rate(&self, node: &Yaml, what: &str) -> Res<Rate> {
        let s = self.scalar(node, what)?;
        parse_rate(s.as_str()).map_err(|e| self.at(s.span(), format!("{what}: {e}")))
    }

    pub fn whole(&self, node: &Yaml, what: &str, min: u64) -> Res<u64> {
        let s = self.scalar(node, what)?;
        s.as_str()
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|n| *n >= min)
            .ok_or_else(|| {
                self.at(
                    s.span(),
                    format!(
                        "{what} must be a whole number of at least {min}, not '{}'",
                        s.as_str()
                    ),
                )
            })
    }

    pub fn boolean(&self, node: &Yaml, what: &str) -> Res<bool> {
        let s = self.scalar(node, what)?;
        match s.as_str().trim() {
            "true" | "yes" | "on" => Ok(true),
            "false" | "no" | "off" => Ok(false),
            other => Err(self.at(
                s.span(),
                format!("{what} must be true or false, not '{other}'"),
            )),
        }
    }
}
