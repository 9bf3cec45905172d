//! JMeter results files where `report` and `compare` take bundles: a JTL
//! (CSV or XML) is imported into a bundle beside it (`results.jtl` →
//! `results-jtl-bundle/`), made again from the file each time, so the history a
//! JMeter user has reads like any run.

use headroom_analysis::apdex::ApdexThresholds;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The bundle for `path`: the path itself when it is a directory, else the
/// bundle imported from the JTL file it names.
pub fn resolve(path: &Path) -> Result<PathBuf, String> {
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
        // Ours (imported from this very file) is made again; anything else is kept.
        // The same file however it is named (./results.jtl, an absolute path).
        let canonical = |p: &Path| std::fs::canonicalize(p).ok();
        let ours = headroom_bundle::manifest::read_manifest(&out).is_ok_and(|m| {
            m.kind == "import"
                && m.scenario
                    .get("file")
                    .and_then(|f| f.as_str())
                    .and_then(|f| canonical(Path::new(f)))
                    == canonical(path)
        });
        if !ours {
            return Err(format!(
                "{} exists and is not the import of {}: move it, and headroom will import the JTL there",
                out.display(),
                path.display()
            ));
        }
        std::fs::remove_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    // JMeter's dashboard's defaults (jmeter.reportgenerator.apdex_*_threshold).
    let apdex = ApdexThresholds {
        satisfied: Duration::from_millis(500),
        tolerated: Duration::from_millis(1500),
    };
    let command_line: Vec<String> = std::env::args().collect();
    let imported = headroom_bundle::jtl_import::import(path, &out, &apdex, command_line)
        .map_err(|e| e.to_string())?;
    for warning in &imported.warnings {
        eprintln!("headroom: warning: {}: {warning}", path.display());
    }
    eprintln!(
        "headroom: imported {} JMeter samples ({} JTL) from {} into {}",
        imported.samples,
        imported.format.name(),
        path.display(),
        out.display()
    );
    Ok(out)
}
