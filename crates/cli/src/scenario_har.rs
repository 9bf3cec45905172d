//! `headroom scenario from-har RECORDING.har`: a browser's recording as a
//! journey (headroom_import's [`recording`] does the work); this module
//! writes the files, the data file of the typed account among them, checks
//! the result as `scenario check` would, and prints what was correlated,
//! what was typed and what was left out ([`har_summary`]).

use crate::args::FromHarArgs;
use crate::execute::EXIT_USAGE;
use headroom_import::har_summary;
use headroom_import::recording::{self, ImportOptions};
use std::path::Path;
use std::process::ExitCode;

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
    let options = ImportOptions {
        har: &args.file,
        out: args.out.as_deref(),
        base_url: args.base_url.as_deref(),
        include_static: args.include_static,
        name: args.name.as_deref(),
        data: args.data.as_deref(),
    };
    let imported = recording::import(&options, &mut |warning| {
        eprintln!("headroom: warning: {warning}")
    })?;
    let mut written_csv = None;
    if let Some(account) = &imported.account_file {
        write_private(&account.path, &account.bytes)
            .map_err(|e| format!("cannot write {}: {e}", account.path.display()))?;
        written_csv = Some(account.path.as_path());
    }
    // What `scenario check` would say, before the scenario is written.
    if let Err(e) =
        headroom_journey::scenario::parse_str(&imported.yaml, &imported.check_path, None)
    {
        return Err(format!(
            "the imported journey does not pass scenario check ({e}); this is a defect of the importer: please report it with the recording's shape (no secrets)"
        ));
    }
    match &args.out {
        Some(out) => std::fs::write(out, &imported.yaml)
            .map_err(|e| format!("cannot write {}: {e}", out.display()))?,
        None => print!("{}", imported.yaml),
    }
    for line in har_summary::lines(&imported, written_csv) {
        eprintln!("{line}");
    }
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
