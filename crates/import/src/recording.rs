//! The HAR import pipeline: a recording file becomes a scenario's YAML.
//! [`import`] reads the recording (refusing one too large to hold),
//! picks the site, keeps its page requests, correlates them, chooses the
//! data file of the typed account ([`crate::accounts`]) and emits the
//! scenario. It writes nothing: the caller writes the account file and
//! the scenario where the user asked, checks the YAML with the scenario
//! parser, and prints [`crate::har_summary::lines`].

use crate::accounts;
use crate::correlate::{correlate, Correlation};
use crate::emit::{self, DataFile, Meta};
use crate::har::{self, Entry, LeftOut, Step};
use std::path::{Path, PathBuf};

/// Larger recordings are refused rather than read into memory.
pub const MAX_HAR_BYTES: u64 = 512 << 20;

/// What the user asked for (`headroom scenario from-har`'s flags).
#[derive(Debug, Clone, Copy)]
pub struct ImportOptions<'a> {
    /// The recording.
    pub har: &'a Path,
    /// Where the scenario goes (None: standard output).
    pub out: Option<&'a Path>,
    pub base_url: Option<&'a str>,
    pub include_static: bool,
    /// The scenario's name (default: the recording's file stem).
    pub name: Option<&'a str>,
    /// The user's CSV of accounts.
    pub data: Option<&'a Path>,
}

/// The recorded account, to be written (owner-readable only) as the
/// scenario's data file.
pub struct AccountFile {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
}

/// A recording turned into a scenario, with what the summary tells.
pub struct ImportedRecording {
    pub yaml: String,
    /// The path the scenario is checked as (its directory is where
    /// relative data paths start).
    pub check_path: PathBuf,
    /// The recorded account to write before the scenario, if the journey
    /// logs in and no --data was given.
    pub account_file: Option<AccountFile>,
    pub har: PathBuf,
    pub out: Option<PathBuf>,
    pub base: String,
    /// Entries in the recording.
    pub recorded: usize,
    pub steps: Vec<Step>,
    pub left: LeftOut,
    pub correlation: Correlation,
    pub data: Option<DataFile>,
}

/// Turns the recording into a scenario; `warn` hears each warning as it
/// arises (the caller prefixes and prints it).
pub fn import(
    request: &ImportOptions<'_>,
    warn: &mut dyn FnMut(String),
) -> Result<ImportedRecording, String> {
    let har_path = request.har;
    refuse_overwriting(request)?;
    if let Some(base) = request.base_url {
        if base
            .splitn(4, '/')
            .nth(3)
            .is_some_and(|path| !path.is_empty())
        {
            warn(format!(
                "--base-url {base}: only its scheme, host and port choose the site; steps keep their full paths"
            ));
        }
    }
    let entries = read_entries(har_path)?;
    let base = har::base_origin(&entries, request.base_url)
        .map_err(|e| format!("{}: {e}", har_path.display()))?;
    let recorded = entries.len();
    let (steps, left) = har::steps(entries, &base, request.include_static);
    if steps.is_empty() {
        return Err(format!(
            "{}: no page request to {base} is left once static files and other hosts are left out (--include-static keeps static files; --base-url picks the site)",
            har_path.display()
        ));
    }
    let correlation = correlate(&steps);
    let stem = file_stem(Some(har_path)).unwrap_or_else(|| "recording".into());
    let scenario_dir = scenario_dir(request.out);
    let (data, account_file) = data_file(request, &correlation, &scenario_dir, &stem, &mut *warn)?;
    let source = har_path
        .file_name()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let name = request
        .name
        .map(str::to_string)
        .unwrap_or_else(|| stem.clone());
    let yaml = emit::scenario(
        &steps,
        &correlation,
        &Meta {
            name: &name,
            source: &source,
            base: &base,
            requests: recorded,
            left_out: &left,
            data: data.as_ref(),
        },
    );
    let check_path = match request.out {
        Some(out) => out.to_path_buf(),
        None => scenario_dir.join(format!("{stem}.yaml")),
    };
    Ok(ImportedRecording {
        yaml,
        check_path,
        account_file,
        har: har_path.to_path_buf(),
        out: request.out.map(Path::to_path_buf),
        base,
        recorded,
        steps,
        left,
        correlation,
        data,
    })
}

/// `-o` naming the recording itself would replace it.
fn refuse_overwriting(request: &ImportOptions<'_>) -> Result<(), String> {
    let Some(out) = request.out else {
        return Ok(());
    };
    let same = std::fs::canonicalize(out)
        .ok()
        .zip(std::fs::canonicalize(request.har).ok())
        .is_some_and(|(a, b)| a == b);
    if same {
        return Err(format!(
            "-o {} is the recording itself: choose another file for the scenario",
            out.display()
        ));
    }
    Ok(())
}

/// The recording's entries; the file's text is dropped once read, so
/// memory holds it once.
fn read_entries(har_path: &Path) -> Result<Vec<Entry>, String> {
    let size = std::fs::metadata(har_path)
        .map_err(|e| format!("cannot read {}: {e}", har_path.display()))?
        .len();
    if size > MAX_HAR_BYTES {
        return Err(format!(
            "{} is {} MiB; recordings up to {} MiB are read. Record only the journey (clear the Network tab first)",
            har_path.display(),
            size >> 20,
            MAX_HAR_BYTES >> 20
        ));
    }
    let text = std::fs::read_to_string(har_path)
        .map_err(|e| format!("cannot read {}: {e}", har_path.display()))?;
    har::read(&text).map_err(|e| format!("{}: {e}", har_path.display()))
}

fn file_stem(path: Option<&Path>) -> Option<String> {
    path.and_then(Path::file_stem)
        .map(|s| s.to_string_lossy().to_string())
}

/// The scenario's directory: where relative data paths start.
fn scenario_dir(out: Option<&Path>) -> PathBuf {
    out.and_then(Path::parent)
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The data file of the typed account: the user's --data, or a new CSV
/// beside the scenario holding the recorded account (returned to be
/// written); none when nothing was typed into a login form.
fn data_file(
    request: &ImportOptions<'_>,
    correlation: &Correlation,
    scenario_dir: &Path,
    stem: &str,
    warn: &mut dyn FnMut(String),
) -> Result<(Option<DataFile>, Option<AccountFile>), String> {
    if correlation.data.is_empty() {
        if request.data.is_some() {
            warn(
                "--data is not used: the recording has no login form (no password field was sent)"
                    .into(),
            );
        }
        return Ok((None, None));
    }
    if let Some(path) = request.data {
        let data = accounts::from_user(path, &correlation.data, scenario_dir, warn)?;
        return Ok((Some(data), None));
    }
    let out_stem = file_stem(request.out).unwrap_or_else(|| stem.to_string());
    let file = format!("{out_stem}-users.csv");
    let path = scenario_dir.join(&file);
    if path.exists() {
        return Err(format!(
            "{} exists: pass --data {} to use its accounts, or remove it",
            path.display(),
            path.display()
        ));
    }
    let (data, bytes) = accounts::recorded(file, &correlation.data)?;
    Ok((Some(data), Some(AccountFile { path, bytes })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(har: &Path) -> ImportOptions<'_> {
        ImportOptions {
            har,
            out: None,
            base_url: None,
            include_static: false,
            name: None,
            data: None,
        }
    }

    fn recording(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("headroom-recording-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    const ONE_PAGE: &str = r#"{"log": {"version": "1.2", "entries": [{
        "startedDateTime": "2026-11-26T05:30:00.000Z", "time": 12,
        "request": {"method": "GET", "url": "http://site.test/index.php", "headers": [], "queryString": []},
        "response": {"status": 200, "statusText": "OK", "headers": [{"name": "Content-Type", "value": "text/html"}],
                     "content": {"size": 13, "mimeType": "text/html", "text": "<p>hello</p>"}}
    }]}}"#;

    #[test]
    fn a_recording_becomes_a_scenario_named_after_it() {
        let har = recording("shop.har", ONE_PAGE);
        let mut warned = Vec::new();
        let imported = import(
            &ImportOptions {
                base_url: Some("http://site.test/shop"),
                ..options(&har)
            },
            &mut |w| warned.push(w),
        )
        .unwrap();
        assert_eq!(imported.steps.len(), 1);
        assert_eq!(imported.base, "http://site.test");
        assert!(imported.yaml.contains("shop"), "{}", imported.yaml);
        assert_eq!(imported.check_path, Path::new("./shop.yaml"));
        assert!(imported.account_file.is_none());
        assert_eq!(warned.len(), 1);
        assert!(warned[0].contains("only its scheme, host and port choose the site"));
        let lines = crate::har_summary::lines(&imported, None);
        assert!(
            lines[0].starts_with("headroom: 1 steps from 1 requests in ")
                && lines[0].ends_with("(site http://site.test)"),
            "{lines:?}"
        );
    }

    #[test]
    fn writing_over_the_recording_and_unknown_files_are_refused() {
        let har = recording("self.har", ONE_PAGE);
        let e = import(
            &ImportOptions {
                out: Some(&har),
                ..options(&har)
            },
            &mut |_| {},
        )
        .err()
        .unwrap();
        assert!(
            e.ends_with("is the recording itself: choose another file for the scenario"),
            "{e}"
        );
        let missing = har.with_file_name("missing.har");
        let e = import(&options(&missing), &mut |_| {}).err().unwrap();
        assert!(e.starts_with("cannot read "), "{e}");
    }
}
