//! JMeter test plans where scenarios are read (`run`, `scenario check`,
//! `scenario try`): a `.jmx` is converted (headroom_import::jmx) into a
//! scenario's text and parsed as one, beside the plan so its CSV files
//! are found where JMeter finds them; what was not converted is said on
//! stderr before anything runs.

use crate::scenario::{parse_file, parse_str, Scenario};
use headroom_http::target::Target;
use std::collections::BTreeMap;
use std::path::Path;

pub fn is_jmx(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("jmx"))
}

/// `-J name=value` pairs as a map (JMeter's properties).
pub fn properties(pairs: &[String]) -> Result<BTreeMap<String, String>, String> {
    pairs
        .iter()
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.to_string()))
                .filter(|(k, _)| !k.is_empty())
                .ok_or_else(|| format!("-J {p}: write -Jname=value"))
        })
        .collect()
}

/// The plan converted, and what the conversion said.
pub fn convert(
    path: &Path,
    properties: &BTreeMap<String, String>,
) -> Result<headroom_import::jmx::Converted, String> {
    convert_for(path, properties, false)
}

/// As [`convert`]; `on_target`: every sampler to `--target`.
fn convert_for(
    path: &Path,
    properties: &BTreeMap<String, String>,
    on_target: bool,
) -> Result<headroom_import::jmx::Converted, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let plan =
        headroom_import::jmx::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    Ok(headroom_import::jmx::convert_for(
        &plan, &name, properties, on_target,
    ))
}

/// `--strict`: anything not converted is a reason not to run.
pub fn refuse_if_strict(
    path: &Path,
    converted: &headroom_import::jmx::Converted,
    strict: bool,
) -> Result<(), String> {
    if strict && !converted.not_converted.is_empty() {
        return Err(format!(
            "{}: --strict, and {} part(s) of the plan were not converted:\n  {}",
            path.display(),
            converted.not_converted.len(),
            converted.not_converted.join("\n  ")
        ));
    }
    Ok(())
}

/// A scenario from a YAML file or a JMeter plan.
pub fn scenario(
    path: &Path,
    target: Option<&Target>,
    properties: &BTreeMap<String, String>,
    strict: bool,
) -> Result<Scenario, String> {
    if !is_jmx(path) {
        return parse_file(path, target).map_err(|e| e.to_string());
    }
    let converted = convert_for(path, properties, target.is_some())?;
    refuse_if_strict(path, &converted, strict)?;
    for note in &converted.not_converted {
        eprintln!("headroom: {}: not converted: {note}", path.display());
    }
    check(path, &converted.yaml, target)
}

/// The scenario converted from the plan at `path`, checked; an error names
/// the plan and the line of the converted text.
pub fn check(path: &Path, yaml: &str, target: Option<&Target>) -> Result<Scenario, String> {
    // Parsed as if it stood beside the plan: relative CSV paths resolve there.
    let as_yaml = path.with_extension("jmx.yaml");
    parse_str(yaml, &as_yaml, target).map_err(|e| converted_error(path, yaml, &e))
}

/// An error in the scenario converted from `plan`: said of the plan and,
/// when known, of its element, with the line of the converted text (no
/// file of that name exists).
fn converted_error(plan: &Path, yaml: &str, e: &crate::scenario::ScenarioError) -> String {
    let plan = plan.display();
    let place = if e.line == 0 {
        String::new()
    } else {
        format!(" (line {}, column {} of it)", e.line, e.column)
    };
    let element = match headroom_import::jmx::source_of(yaml, e.line) {
        Some(element) => format!("{element}: "),
        None => String::new(),
    };
    format!(
        "{plan}: {element}{}\n(in the scenario converted from this plan{place}; `headroom scenario from-jmx {plan}` prints it)",
        e.message
    )
}
