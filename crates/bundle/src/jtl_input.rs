//! JMeter results files where `report` and `compare` take bundles: a JTL
//! (CSV or XML) is imported into a bundle beside it (`results.jtl` →
//! `results-jtl-bundle/`), so the history a JMeter user has reads like any
//! run. The import is made once and again only when the JTL changed after
//! it; either way the files other commands wrote in the bundle (the
//! report.html of `headroom report`) stay. What the import says goes to
//! the caller's `say`, a line for standard error each.

use crate::scenario_record::ScenarioRecord;
use headroom_analysis::apdex::ApdexThresholds;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The bundle for `path`: the path itself when it is a directory, else the
/// bundle imported from the JTL file it names (`command_line` gives the
/// importing command's, for the bundle's manifest, when it imports).
pub fn resolve(
    path: &Path,
    command_line: &dyn Fn() -> Vec<String>,
    say: &mut dyn FnMut(String),
) -> Result<PathBuf, String> {
    if !path.is_file() {
        return Ok(path.to_path_buf());
    }
    // results.jtl → results-jtl/, results.xml → results-xml/.
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().replace('.', "-"))
        .unwrap_or_else(|| "results".into());
    let out = path.with_file_name(format!("{name}-bundle"));
    if out.exists() {
        // Ours (imported from this very file) is used, or brought up to date
        // when the file changed since; anything else is refused.
        // The same file however it is named (./results.jtl, an absolute path).
        let canonical = |p: &Path| std::fs::canonicalize(p).ok();
        let ours = crate::manifest::read_manifest(&out).is_ok_and(|m| {
            let Some(ScenarioRecord::Jtl(jtl)) = &m.scenario else {
                return false;
            };
            m.kind == "import" && canonical(Path::new(&jtl.file)) == canonical(path)
        });
        if !ours {
            return Err(format!(
                "{} exists and is not the import of {}: move it, and headroom will import the JTL there",
                out.display(),
                path.display()
            ));
        }
        if imported_after_last_change(path, &out) {
            return Ok(out);
        }
        return import_again(path, &out, command_line, say);
    }
    import(path, &out, command_line, say)?;
    Ok(out)
}

/// The bundle was written after the JTL last changed (JMeter is not still
/// appending to it): its figures are the file's.
fn imported_after_last_change(jtl: &Path, bundle: &Path) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    match (modified(jtl), modified(&bundle.join(crate::MANIFEST))) {
        (Some(jtl), Some(manifest)) => jtl <= manifest,
        _ => false,
    }
}

/// Imports a JTL that changed since its bundle was made: into a new
/// directory beside it, whose files then replace the import's own, one by
/// one; what else the bundle holds (a report written into it) stays.
fn import_again(
    jtl: &Path,
    out: &Path,
    command_line: &dyn Fn() -> Vec<String>,
    say: &mut dyn FnMut(String),
) -> Result<PathBuf, String> {
    let fresh = out.with_file_name(format!(
        "{}.importing",
        out.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
    ));
    if fresh.exists() {
        std::fs::remove_dir_all(&fresh).map_err(|e| format!("{}: {e}", fresh.display()))?;
    }
    import(jtl, &fresh, command_line, say)?;
    let moved = (|| -> std::io::Result<()> {
        for entry in std::fs::read_dir(&fresh)? {
            let entry = entry?;
            let target = out.join(entry.file_name());
            if target.is_dir() {
                std::fs::remove_dir_all(&target)?;
            }
            std::fs::rename(entry.path(), target)?;
        }
        std::fs::remove_dir(&fresh)
    })();
    moved.map_err(|e| {
        format!(
            "cannot update {} from {}: {e}",
            out.display(),
            fresh.display()
        )
    })?;
    Ok(out.to_path_buf())
}

/// Imports `path` into the new bundle `out`, saying what it did.
fn import(
    path: &Path,
    out: &Path,
    command_line: &dyn Fn() -> Vec<String>,
    say: &mut dyn FnMut(String),
) -> Result<(), String> {
    // JMeter's dashboard's defaults (jmeter.reportgenerator.apdex_*_threshold).
    let apdex = ApdexThresholds {
        satisfied: Duration::from_millis(500),
        tolerated: Duration::from_millis(1500),
    };
    let imported =
        crate::jtl_import::import(path, out, &apdex, command_line()).map_err(|e| e.to_string())?;
    for warning in &imported.warnings {
        say(format!("headroom: warning: {}: {warning}", path.display()));
    }
    say(format!(
        "headroom: imported {} ({} JTL) from {} into {}",
        headroom_units::quantity::count(imported.samples, "JMeter sample", "JMeter samples"),
        imported.format.name(),
        path.display(),
        out.display()
    ));
    Ok(())
}
