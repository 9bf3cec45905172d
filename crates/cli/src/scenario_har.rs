//! `headroom scenario from-har RECORDING.har`: a browser's recording as a
//! journey (headroom_import does the work); this module reads and writes
//! the files, the data file of the typed account among them, checks the
//! result as `scenario check` would, and tells the user what was
//! correlated, what was typed and what was left out.

use crate::args::FromHarArgs;
use crate::execute::EXIT_USAGE;
use headroom_import::correlate::{correlate, Extract};
use headroom_import::emit::{self, DataFile, Meta};
use headroom_import::har;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Larger recordings are refused rather than read into memory.
const MAX_HAR_BYTES: u64 = 512 << 20;

pub fn run(args: FromHarArgs) -> ExitCode {
    match import(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("headroom: {e}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn import(args: &FromHarArgs) -> Result<(), String> {
    let har_path = &args.file;
    if let Some(out) = &args.out {
        let same = std::fs::canonicalize(out)
            .ok()
            .zip(std::fs::canonicalize(har_path).ok())
            .is_some_and(|(a, b)| a == b);
        if same {
            return Err(format!(
                "-o {} is the recording itself: choose another file for the scenario",
                out.display()
            ));
        }
    }
    if let Some(base) = &args.base_url {
        if base
            .splitn(4, '/')
            .nth(3)
            .is_some_and(|path| !path.is_empty())
        {
            eprintln!(
                "headroom: warning: --base-url {base}: only its scheme, host and port choose the site; steps keep their full paths"
            );
        }
    }
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
    let entries = {
        // The file's text is dropped once read: memory holds it once.
        let text = std::fs::read_to_string(har_path)
            .map_err(|e| format!("cannot read {}: {e}", har_path.display()))?;
        har::read(&text).map_err(|e| format!("{}: {e}", har_path.display()))?
    };
    let base = har::base_origin(&entries, args.base_url.as_deref())
        .map_err(|e| format!("{}: {e}", har_path.display()))?;
    let recorded = entries.len();
    let (steps, left) = har::steps(entries, &base, args.include_static);
    if steps.is_empty() {
        return Err(format!(
            "{}: no page request to {base} is left once static files and other hosts are left out (--include-static keeps static files; --base-url picks the site)",
            har_path.display()
        ));
    }
    let c = correlate(&steps);
    let stem = har_path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "recording".into());
    let name = args.name.clone().unwrap_or_else(|| stem.clone());
    // The scenario's directory: where relative data paths start.
    let scenario_dir = match &args.out {
        Some(out) => out
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from(".")),
        None => PathBuf::from("."),
    };
    let mut written_csv = None;
    let data = if c.data.is_empty() {
        if args.data.is_some() {
            eprintln!(
                "headroom: warning: --data is not used: the recording has no login form (no password field was sent)"
            );
        }
        None
    } else {
        Some(match &args.data {
            Some(path) => data_from_user(path, &c.data, &scenario_dir)?,
            None => {
                let out_stem = args
                    .out
                    .as_ref()
                    .and_then(|o| o.file_stem())
                    .map(|s| s.to_string_lossy().to_string())
                    .unwrap_or(stem.clone());
                let file = format!("{out_stem}-users.csv");
                let path = scenario_dir.join(&file);
                if path.exists() {
                    return Err(format!(
                        "{} exists: pass --data {} to use its accounts, or remove it",
                        path.display(),
                        path.display()
                    ));
                }
                let mut w = csv::Writer::from_writer(Vec::new());
                let names: Vec<&str> = c.data.iter().map(|d| d.name.as_str()).collect();
                // The CSV holds the values as typed (the scenario's text escapes `${`).
                let values: Vec<String> = c
                    .data
                    .iter()
                    .map(|d| d.value.replace("$${", "${"))
                    .collect();
                w.write_record(&names).map_err(|e| e.to_string())?;
                w.write_record(&values).map_err(|e| e.to_string())?;
                let bytes = w.into_inner().map_err(|e| e.to_string())?;
                write_private(&path, &bytes)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                written_csv = Some(path);
                DataFile {
                    file,
                    columns: names.iter().map(|s| s.to_string()).collect(),
                    header: true,
                }
            }
        })
    };
    let source = har_path
        .file_name()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let yaml = emit::scenario(
        &steps,
        &c,
        &Meta {
            name: &name,
            source: &source,
            base: &base,
            requests: recorded,
            left_out: &left,
            data: data.as_ref(),
        },
    );
    // What `scenario check` would say, before anything is written.
    let check_path = match &args.out {
        Some(out) => out.clone(),
        None => scenario_dir.join(format!("{stem}.yaml")),
    };
    if let Err(e) = headroom_load::scenario::parse_str(&yaml, &check_path, None) {
        return Err(format!(
            "the imported journey does not pass scenario check ({e}); this is a defect of the importer: please report it with the recording's shape (no secrets)"
        ));
    }
    match &args.out {
        Some(out) => std::fs::write(out, &yaml)
            .map_err(|e| format!("cannot write {}: {e}", out.display()))?,
        None => print!("{yaml}"),
    }
    report(
        &args.file,
        &base,
        recorded,
        &steps,
        &left,
        &c,
        written_csv.as_deref(),
        data.as_ref(),
        args.out.as_deref(),
    );
    Ok(())
}

/// Writes a file only its owner reads (it holds the recorded secrets).
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    options.open(path)?.write_all(bytes)
}

/// The user's CSV of accounts: its header names the columns when it
/// holds the typed fields' names (or username/password); otherwise its
/// first columns are taken in the order the fields were typed.
fn data_from_user(
    path: &Path,
    typed: &[headroom_import::correlate::DataColumn],
    scenario_dir: &Path,
) -> Result<DataFile, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_path(path)
        .map_err(|e| format!("cannot read --data {}: {e}", path.display()))?;
    let first: Vec<String> = match reader.records().next() {
        Some(Ok(r)) => r.iter().map(|c| c.trim().to_string()).collect(),
        Some(Err(e)) => return Err(format!("--data {}: {e}", path.display())),
        None => {
            return Err(format!(
                "--data {} is empty: one row per account",
                path.display()
            ))
        }
    };
    let matches = |cell: &str, d: &headroom_import::correlate::DataColumn| {
        let cell = cell.to_ascii_lowercase();
        cell == d.name
            || cell == d.field.to_ascii_lowercase()
            || (d.name == "username"
                && ["user", "login", "email", "account"].contains(&cell.as_str()))
            || (d.name == "password" && ["pass", "passwd", "pw"].contains(&cell.as_str()))
    };
    let header = typed
        .iter()
        .any(|d| first.iter().any(|cell| matches(cell, d)));
    // A header that names some columns must name every value the journey
    // reads from the file (a secret among them): say which is missing.
    if header {
        if let Some(d) = typed
            .iter()
            .find(|d| !first.iter().any(|cell| matches(cell, d)))
        {
            return Err(format!(
                "--data {}: its header has no column {} (the value sent in field {} by step {:02}{}): add that column with each user's value",
                path.display(),
                d.name,
                d.field,
                d.step + 1,
                if d.secret { ", a secret" } else { "" }
            ));
        }
    }
    // Words without a digit or symbol in every cell look like a header the
    // importer could not read: say so rather than log in as "login/pwd".
    let looks_like_names = first.iter().all(|c| {
        !c.is_empty()
            && c.chars()
                .all(|ch| ch.is_ascii_alphabetic() || ch == '_' || ch == ' ')
    });
    if !header && looks_like_names {
        eprintln!(
            "headroom: warning: --data {}: the first row ({}) looks like a header but names no column username or password; it is read as an account. Name the columns username,password (or remove the header)",
            path.display(),
            first.join(",")
        );
    }
    let columns = if header {
        first
            .iter()
            .enumerate()
            .map(|(i, cell)| match typed.iter().find(|d| matches(cell, d)) {
                Some(d) => d.name.clone(),
                None => format!("column_{}", i + 1),
            })
            .collect()
    } else {
        if first.len() < typed.len() {
            return Err(format!(
                "--data {}: its rows have {} columns and no header naming them; the login form needs {} ({})",
                path.display(),
                first.len(),
                typed.len(),
                typed.iter().map(|d| d.name.as_str()).collect::<Vec<_>>().join(", ")
            ));
        }
        (0..first.len())
            .map(|i| match typed.get(i) {
                Some(d) => d.name.clone(),
                None => format!("column_{}", i + 1),
            })
            .collect()
    };
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = std::fs::canonicalize(scenario_dir).unwrap_or_else(|_| scenario_dir.to_path_buf());
    let file = match absolute.strip_prefix(&dir) {
        Ok(relative) => relative.display().to_string(),
        Err(_) => absolute.display().to_string(),
    };
    Ok(DataFile {
        file,
        columns,
        header,
    })
}

#[allow(clippy::too_many_arguments)]
fn report(
    har_path: &Path,
    base: &str,
    recorded: usize,
    steps: &[har::Step],
    left: &har::LeftOut,
    c: &headroom_import::correlate::Correlation,
    written_csv: Option<&Path>,
    data: Option<&DataFile>,
    out: Option<&Path>,
) {
    eprintln!(
        "headroom: {} steps from {} requests in {} (site {base}){}",
        steps.len(),
        recorded,
        har_path.display(),
        out.map(|o| format!(", written to {}", o.display()))
            .unwrap_or_default()
    );
    if left.static_files > 0 {
        eprintln!(
            "  left out: {} static files (--include-static keeps them)",
            left.static_files
        );
    }
    if !left.other_hosts.is_empty() {
        let hosts: Vec<String> = left
            .other_hosts
            .iter()
            .map(|(h, n)| format!("{h} ×{n}"))
            .collect();
        eprintln!("  left out: requests to other hosts: {}", hosts.join(", "));
    }
    if left.no_response > 0 {
        eprintln!(
            "  left out: {} requests without a response",
            left.no_response
        );
    }
    // A long recording's thousands of values: the first ones, then a count.
    const LISTED: usize = 40;
    if c.variables.len() > LISTED {
        eprintln!(
            "  correlated: {} values; the first {LISTED}:",
            c.variables.len()
        );
    }
    for v in c.variables.iter().take(LISTED) {
        let how = match &v.extract {
            Extract::Css { selector, .. } => selector.clone(),
            Extract::Json(p) => format!("JSON {p}"),
            Extract::Regex(_) => "text of the page".into(),
            Extract::Cookie(name) => format!("cookie {name}"),
        };
        let users: Vec<String> = v.used_by.iter().map(|s| format!("{:02}", s + 1)).collect();
        eprintln!(
            "  correlated: {} from step {:02} ({how}), sent by step {}",
            v.name,
            v.source + 1,
            users.join(", ")
        );
    }
    let (account, secrets): (Vec<_>, Vec<_>) = c
        .data
        .iter()
        .partition(|d| d.name == "username" || d.name == "password");
    if !account.is_empty() {
        let names: Vec<String> = account
            .iter()
            .map(|d| format!("{} (field {})", d.name, d.field))
            .collect();
        match (written_csv, data) {
            (Some(path), _) => eprintln!(
                "  typed: {} → data columns; {} holds the recorded account: add one row per user",
                names.join(", "),
                path.display()
            ),
            (None, Some(d)) => {
                eprintln!("  typed: {} → data columns of {}", names.join(", "), d.file)
            }
            _ => {}
        }
    }
    if !secrets.is_empty() {
        let names: Vec<String> = secrets
            .iter()
            .map(|d| format!("{} (field {}, step {:02})", d.name, d.field, d.step + 1))
            .collect();
        let file = match (written_csv, data) {
            (Some(path), _) => path.display().to_string(),
            (None, Some(d)) => d.file.clone(),
            _ => "the data file".into(),
        };
        eprintln!(
            "  secret: {} → data columns of {file}, written as ${{column}} wherever sent and never printed: put each user's value in that column",
            names.join(", ")
        );
    }
    if c.not_correlated.len() > LISTED {
        eprintln!(
            "  not correlated: {} values; the first {LISTED}:",
            c.not_correlated.len()
        );
    }
    for (s, place, value, why) in c.not_correlated.iter().take(LISTED) {
        if value.is_empty() {
            eprintln!("  not correlated: step {:02} {place}: {why}", s + 1);
            continue;
        }
        eprintln!(
            "  not correlated: step {:02} {place} = \"{value}\": {why}; sent as recorded",
            s + 1
        );
    }
}
