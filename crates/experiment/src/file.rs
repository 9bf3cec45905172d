//! The experiment file (YAML): factors and their levels, the workload every
//! run applies, hooks, services, repetitions, order, quiet waits, faults
//! and the figures compared. Every error names file:line:column.

use crate::figure::{Figure, DEFAULT_FIGURES};
use crate::template::FactorTemplate;
use headroom_analysis::experiment::{Cell, Factor, RepetitionRule};
use headroom_journey::yaml::{read_text, Doc, LocatedError};
use marked_yaml::types::MarkedMappingNode;
use marked_yaml::Node as Yaml;
use std::path::{Path, PathBuf};
use std::time::Duration;

type Res<T> = Result<T, LocatedError>;

/// The largest experiment file read.
const MAX_FILE_BYTES: u64 = 1_000_000;
/// The template name of the study's output directory (`${out}`).
pub const OUT: &str = "out";
/// Most runs one experiment plans.
pub const MAX_RUNS: usize = 10_000;

/// A checked experiment file.
#[derive(Debug, Clone)]
pub struct Experiment {
    pub file: PathBuf,
    /// The file as written (copied into the experiment's bundle).
    pub text: String,
    pub name: String,
    pub factors: Vec<Factor>,
    /// The cells, in order: the factors' product, or the file's `cells:` list.
    pub cells: Vec<Cell>,
    /// Per factor, the level others are compared with (default: its first).
    pub baseline: Vec<(String, String)>,
    pub workload: StudyWorkload,
    /// Run once before anything else (and before the cells' runs are
    /// checked): make a dataset, write a journey into `${out}`.
    pub prepare: Option<FactorTemplate>,
    pub hooks: Hooks,
    pub services: Vec<Service>,
    /// Services, setup and teardown around every run instead of every
    /// visit of a cell (`services_per: run`): each run starts from the
    /// same state.
    pub fresh_each_run: bool,
    pub repetitions: RepetitionRule,
    /// The figure whose CoV decides dynamic repetitions.
    pub repetitions_on: Figure,
    pub order: Order,
    pub seed: u64,
    pub quiet: Option<Quiet>,
    pub faults: Vec<StudyFault>,
    pub figures: Vec<Figure>,
    /// Levels (0.99 for 99%) of the intervals reported beside the 95%
    /// ones (`confidence:`); the verdicts stay the 95% intervals'.
    pub confidence: Vec<f64>,
    /// Compare this label's figures instead of the total.
    pub label: Option<String>,
}

/// What each run runs: `headroom run` (a scenario), `headroom load` (a
/// URL) or `headroom capacity`, with flags made from the file's keys.
#[derive(Debug, Clone)]
pub struct StudyWorkload {
    pub command: WorkloadCommand,
    /// The scenario file or URL.
    pub subject: FactorTemplate,
    /// (flag, value) pairs, e.g. ("--users", "${users}").
    pub flags: Flags,
    /// More command-line arguments, as written.
    pub extra: Vec<FactorTemplate>,
    /// The planned length of one run (ramp-up + duration), when the
    /// duration is given and depends on no factor.
    pub planned: Option<Duration>,
}

/// (flag, value) pairs, e.g. ("--users", "${users}").
pub type Flags = Vec<(String, FactorTemplate)>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadCommand {
    Run,
    Load,
    Capacity,
}

impl Experiment {
    /// The baseline level of `factor` (its first level unless the file
    /// names another).
    pub fn baseline_of(&self, factor: &Factor) -> String {
        self.baseline
            .iter()
            .find(|(f, _)| *f == factor.name)
            .map(|(_, l)| l.clone())
            .unwrap_or_else(|| factor.levels[0].clone())
    }
}

impl StudyWorkload {
    /// The ramp-up when it is the same for every cell (zero otherwise).
    pub fn ramp_up_fixed(&self) -> Duration {
        self.flags
            .iter()
            .find(|(flag, t)| flag == "--ramp-up" && !t.uses_factors())
            .and_then(|(_, t)| headroom_units::quantity::parse_duration(&t.source).ok())
            .unwrap_or_default()
    }
}

impl WorkloadCommand {
    pub fn name(self) -> &'static str {
        match self {
            WorkloadCommand::Run => "run",
            WorkloadCommand::Load => "load",
            WorkloadCommand::Capacity => "capacity",
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Hooks {
    /// Before a cell's runs (when the runner comes to the cell).
    pub setup: Option<FactorTemplate>,
    /// After them (when the runner leaves the cell).
    pub teardown: Option<FactorTemplate>,
    pub before_each: Option<FactorTemplate>,
    pub after_each: Option<FactorTemplate>,
    /// Most time a hook may take.
    pub timeout: Duration,
}

/// A long-running command started for a cell and stopped after it.
#[derive(Debug, Clone)]
pub struct Service {
    pub name: String,
    pub command: FactorTemplate,
    pub ready: Option<Ready>,
    pub timeout: Duration,
}

#[derive(Debug, Clone)]
pub enum Ready {
    /// host:port accepts TCP connections.
    Tcp(FactorTemplate),
    /// The URL answers with a status below 500.
    Http(FactorTemplate),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Interleaved,
    Sequential,
}

/// Wait before each run until the machine is idle and its temperature steady.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quiet {
    /// Busiest the CPUs may be, percent over one second.
    pub cpu_below_pct: f64,
    /// Most the hottest sensor may change over `window`, °C.
    pub temperature_change_c: f64,
    pub window: Duration,
    pub timeout: Duration,
}

#[derive(Debug, Clone)]
pub struct StudyFault {
    pub at: Duration,
    pub command: FactorTemplate,
    /// The scenario check that fails for a user whose session the fault
    /// lost (e.g. "logged in"): such users are counted.
    pub lost_check: Option<String>,
}

/// The factors, their cells and the baseline, as the file gives them.
struct Design {
    factors: Vec<Factor>,
    cells: Vec<Cell>,
    baseline: Vec<(String, String)>,
}

const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "factors",
    "cells",
    "baseline",
    "workload",
    "prepare",
    "setup",
    "teardown",
    "before_each",
    "after_each",
    "hook_timeout",
    "services",
    "services_per",
    "repetitions",
    "order",
    "seed",
    "quiet",
    "faults",
    "measure",
    "confidence",
];
const SUBJECT_KEYS: &[&str] = &["scenario", "url"];
/// StudyWorkload keys that become `--key` flags of the run (`ramp_up` → `--ramp-up`).
const PROFILE_KEYS: &[&str] = &[
    "users",
    "duration",
    "ramp_up",
    "rate",
    "max_vus",
    "think",
    "throughput",
    "iterations",
    "requests",
    "target",
    "apdex_t",
    "apdex_f",
    "timeout",
    "threads",
    "http",
];
/// Keys of `workload.capacity`, each a flag of `headroom capacity`.
const CAPACITY_KEYS: &[&str] = &[
    "apdex_target",
    "max_error",
    "p95_max",
    "start",
    "step",
    "max",
    "resolution",
    "step_duration",
    "min_samples",
    "warmup",
    "confirm",
];
/// Flags the runner sets on every run, or that would stop it from running.
const RUNNER_FLAGS: &[&str] = &[
    "--out",
    "--seed",
    "--quiet",
    "-q",
    "--fault",
    "--json",
    "--help",
    "-h",
    "--version",
    "-V",
];
const SERVICE_KEYS: &[&str] = &["name", "command", "ready", "timeout"];
const READY_KEYS: &[&str] = &["tcp", "http"];
const REPETITION_KEYS: &[&str] = &["min", "max", "until_cov", "on"];
const QUIET_KEYS: &[&str] = &["cpu_below", "temperature_change", "window", "timeout"];
const FAULT_KEYS: &[&str] = &["at", "command", "lost_check"];
const MEASURE_KEYS: &[&str] = &["figures", "label"];

/// Reads and checks an experiment file.
pub fn parse_file(path: &Path) -> Res<Experiment> {
    let text = read_text(
        path,
        MAX_FILE_BYTES,
        "the experiment file",
        "Keep data in the scenario's data: files",
    )?;
    parse_str(&text, path)
}

/// Checks experiment text; `path` names it in messages and anchors
/// relative scenario files.
pub fn parse_str(text: &str, path: &Path) -> Res<Experiment> {
    let doc = Doc {
        file: path.to_path_buf(),
    };
    let root = doc.parse(
        text,
        "the experiment file must be a mapping of keys such as factors: and workload:",
    )?;
    let map = doc.mapping(&root, "the experiment file")?;
    doc.keys(map, TOP_KEYS, "the experiment file")?;
    let reader = Reader {
        doc: &doc,
        factor_names: Vec::new(),
    };
    reader.experiment(map, text)
}

struct Reader<'d> {
    doc: &'d Doc,
    factor_names: Vec<String>,
}

impl Reader<'_> {
    fn template(&self, node: &Yaml, what: &str) -> Res<FactorTemplate> {
        let s = self.doc.scalar(node, what)?;
        FactorTemplate::parse(s.as_str(), &self.factor_names)
            .map_err(|e| self.doc.at(s.span(), format!("{what}: {e}")))
    }

    /// A duration that cannot depend on the cell: `${…}` is refused by
    /// name, and so is zero when `positive`.
    fn fixed_duration(&self, node: &Yaml, what: &str, positive: bool) -> Res<Duration> {
        let s = self.doc.scalar(node, what)?;
        if s.as_str().contains("${") {
            return Err(self.doc.at(
                s.span(),
                format!(
                    "factors (${{…}}) are not allowed in {what}: it is the same for every cell"
                ),
            ));
        }
        let d = self.doc.duration(node, what)?;
        if positive && d.is_zero() {
            return Err(self.doc.at(s.span(), format!("{what} must be above 0")));
        }
        Ok(d)
    }

    fn command(&self, node: &Yaml, what: &str) -> Res<FactorTemplate> {
        let t = self.template(node, what)?;
        if t.source.trim().is_empty() {
            return Err(self.doc.at(node.span(), format!("{what} is empty")));
        }
        Ok(t)
    }

    fn experiment(mut self, map: &MarkedMappingNode, text: &str) -> Res<Experiment> {
        let doc = self.doc;
        let name = match map.get_node("name") {
            Some(node) => doc.text(node, "name")?,
            None => doc
                .file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "experiment".into()),
        };
        let Design {
            factors,
            cells,
            baseline,
        } = self.design(map)?;
        let Some(workload_node) = map.get_node("workload") else {
            return Err(doc.at(
                doc.map_at(map),
                "the experiment has no workload: add workload: with scenario: FILE or url: URL, and users: and duration:",
            ));
        };
        let workload = self.workload(workload_node)?;
        let (prepare, hooks) = self.hooks(map)?;
        let services = match map.get_node("services") {
            Some(node) => self.services(node)?,
            None => Vec::new(),
        };
        let fresh_each_run = self.one_of(
            map,
            "services_per",
            &[("run", true), ("cell", false)],
            false,
        )?;
        let (figures, label) = self.measure(map.get_node("measure"), workload.command)?;
        let (repetitions, repetitions_on) =
            self.repetitions(map.get_node("repetitions"), &figures)?;
        let order = self.one_of(
            map,
            "order",
            &[
                ("interleaved", Order::Interleaved),
                ("sequential", Order::Sequential),
            ],
            Order::Interleaved,
        )?;
        let seed = match map.get_node("seed") {
            Some(node) => doc.whole(node, "seed", 0)?,
            None => 1,
        };
        let quiet = map
            .get_node("quiet")
            .map(|node| self.quiet(node))
            .transpose()?;
        let faults = match map.get_node("faults") {
            Some(node) => self.faults(node, &workload)?,
            None => Vec::new(),
        };
        let figures = self.all_figures(map, figures, &workload, &faults)?;
        let confidence = match map.get_node("confidence") {
            Some(node) => self.confidence(node)?,
            None => Vec::new(),
        };
        let runs = cells.len() * repetitions.max as usize;
        if runs > MAX_RUNS {
            return Err(doc.at(
                doc.map_at(map),
                format!(
                    "the experiment plans {runs} runs ({} cells × up to {} repetitions), more than the {MAX_RUNS} headroom runs: use fewer levels or repetitions",
                    cells.len(),
                    repetitions.max
                ),
            ));
        }
        Ok(Experiment {
            file: doc.file.clone(),
            text: text.to_string(),
            name,
            factors,
            cells,
            baseline,
            workload,
            prepare,
            hooks,
            services,
            fresh_each_run,
            repetitions,
            repetitions_on,
            order,
            seed,
            quiet,
            faults,
            figures,
            label,
            confidence,
        })
    }

    /// `confidence: 99` or `[90, 99]`: the levels (as shares, 0.99) of the
    /// intervals reported beside the 95% ones.
    fn confidence(&self, node: &Yaml) -> Res<Vec<f64>> {
        let doc = self.doc;
        let items: Vec<&Yaml> = match node.as_sequence() {
            Some(seq) => seq.iter().collect(),
            None => vec![node],
        };
        let mut levels = Vec::new();
        for item in items {
            let s = doc.scalar(item, "confidence")?;
            let text = s.as_str().trim();
            let level = text
                .trim_end_matches('%')
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|p| *p >= 50.0 && *p <= 99.9)
                .ok_or_else(|| {
                    doc.at(
                        s.span(),
                        format!(
                            "confidence: '{text}' is not a level in percent from 50 to 99.9: write e.g. 99 or [90, 99] (the 95% intervals are always given)"
                        ),
                    )
                })?;
            let level = level / 100.0;
            if (level - 0.95).abs() > 1e-9 && !levels.contains(&level) {
                levels.push(level);
            }
        }
        Ok(levels)
    }

    /// The factors, the cells they make (or the file lists) and the
    /// baseline; the factors' names become the names `${…}` may use.
    fn design(&mut self, map: &MarkedMappingNode) -> Res<Design> {
        let doc = self.doc;
        let factors = match map.get_node("factors") {
            Some(node) => self.factors(node)?,
            None => Vec::new(),
        };
        self.factor_names = factors.iter().map(|f| f.name.clone()).collect();
        self.factor_names.push(OUT.to_string());
        // The product's size first: a study of millions of cells is
        // refused before any is built.
        let product = factors
            .iter()
            .fold(1usize, |n, f| n.saturating_mul(f.levels.len()));
        if map.get_node("cells").is_none() && product > MAX_RUNS {
            return Err(doc.at(
                map.get_node("factors").map_or(doc.map_at(map), |n| n.span()),
                format!(
                    "the factors make {} cells, more than the {MAX_RUNS} runs headroom plans: use fewer levels, or list the cells wanted under cells:",
                    if product == usize::MAX { "billions of".to_string() } else { product.to_string() }
                ),
            ));
        }
        let cells = match map.get_node("cells") {
            Some(node) => self.cells(node, &factors)?,
            None => headroom_analysis::experiment::cells(&factors),
        };
        let baseline = self.baseline(map.get_node("baseline"), &factors)?;
        Ok(Design {
            factors,
            cells,
            baseline,
        })
    }

    /// `prepare`, and the hooks around cells and runs with their timeout.
    fn hooks(&self, map: &MarkedMappingNode) -> Res<(Option<FactorTemplate>, Hooks)> {
        let hook_timeout = match map.get_node("hook_timeout") {
            Some(node) => self.fixed_duration(node, "hook_timeout", true)?,
            None => Duration::from_secs(600),
        };
        let hook = |key: &str| -> Res<Option<FactorTemplate>> {
            map.get_node(key)
                .map(|node| self.command(node, key))
                .transpose()
        };
        let prepare = hook("prepare")?;
        let hooks = Hooks {
            setup: hook("setup")?,
            teardown: hook("teardown")?,
            before_each: hook("before_each")?,
            after_each: hook("after_each")?,
            timeout: hook_timeout,
        };
        Ok((prepare, hooks))
    }

    /// The value of `key`, one of two words (`default` without the key).
    fn one_of<T: Copy>(
        &self,
        map: &MarkedMappingNode,
        key: &str,
        choices: &[(&str, T); 2],
        default: T,
    ) -> Res<T> {
        let Some(node) = map.get_node(key) else {
            return Ok(default);
        };
        let s = self.doc.scalar(node, key)?;
        let word = s.as_str().trim();
        match choices.iter().find(|(name, _)| *name == word) {
            Some((_, value)) => Ok(*value),
            None => Err(self.doc.at(
                s.span(),
                format!(
                    "{key} must be {} or {}, not '{word}'",
                    choices[0].0, choices[1].0
                ),
            )),
        }
    }

    /// The figures measured, with the faults' own; a host figure needs a monitor,
    /// a server figure watched processes too, and faults a run of
    /// known length.
    fn all_figures(
        &self,
        map: &MarkedMappingNode,
        mut figures: Vec<Figure>,
        workload: &StudyWorkload,
        faults: &[StudyFault],
    ) -> Res<Vec<Figure>> {
        let doc = self.doc;
        let has = |flag: &str| workload.extra.iter().any(|t| t.source.starts_with(flag));
        if let Some(figure) = figures.iter().find(|f| f.of_host()) {
            if !has("--monitor") {
                return Err(doc.at(
                    map.get_node("measure").map_or(doc.map_at(map), |n| n.span()),
                    format!(
                        "{} is a figure of the monitored host: add workload.flags: [--monitor, local] (or an agent's URL)",
                        figure.name()
                    ),
                ));
            }
        }
        if let Some(figure) = figures.iter().find(|f| f.of_server()) {
            if !has("--process") {
                return Err(doc.at(
                    map.get_node("measure").map_or(doc.map_at(map), |n| n.span()),
                    format!(
                        "{} is the watched server processes' figure on the monitored host: add workload.flags: [--monitor, local, --process, NAME] (a --process per server program)",
                        figure.name()
                    ),
                ));
            }
        }
        if !faults.is_empty()
            && workload.planned.is_none()
            && !workload.flags.iter().any(|(flag, _)| flag == "--duration")
        {
            return Err(doc.at(
                map.get_node("faults").map_or(doc.map_at(map), |n| n.span()),
                "faults need runs of a known length: give the workload a duration:",
            ));
        }
        if !faults.is_empty() {
            figures.extend([Figure::FaultErrors, Figure::Recovery]);
            if faults[0].lost_check.is_some() {
                figures.push(Figure::UsersLost);
            }
        }
        Ok(figures)
    }

    fn factors(&self, node: &Yaml) -> Res<Vec<Factor>> {
        let doc = self.doc;
        let map = doc.mapping(node, "factors")?;
        let mut factors = Vec::new();
        for (key, levels) in map.iter() {
            let name = key.as_str().to_string();
            let valid = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(doc.at(
                    key.span(),
                    format!("factor name '{name}': use letters, digits and _ (it is written ${{{name}}} in templates)"),
                ));
            }
            if let Some(other) = factors
                .iter()
                .find(|f: &&Factor| f.name.eq_ignore_ascii_case(&name))
            {
                return Err(doc.at(
                    key.span(),
                    format!(
                        "factor '{name}' differs from '{}' only in case: hooks see both as HEADROOM_FACTOR_{}; rename one",
                        other.name,
                        name.to_ascii_uppercase()
                    ),
                ));
            }
            if name == OUT {
                return Err(doc.at(
                    key.span(),
                    "'out' is the study's directory (${out}): give the factor another name",
                ));
            }
            let what = format!("the levels of factor '{name}'");
            let list = levels.as_sequence().ok_or_else(|| {
                doc.at(
                    levels.span(),
                    format!("{what} must be a list, e.g. {name}: [a, b]"),
                )
            })?;
            if list.is_empty() {
                return Err(doc.at(levels.span(), format!("{what}: the list is empty")));
            }
            if list.len() > MAX_RUNS {
                return Err(doc.at(
                    levels.span(),
                    format!(
                        "{what}: {} levels, more than the {MAX_RUNS} runs headroom plans",
                        list.len()
                    ),
                ));
            }
            let mut values: Vec<String> = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for level in list.iter() {
                let text = doc.text(level, &what)?;
                if text.trim().is_empty() {
                    return Err(doc.at(level.span(), format!("{what}: a level is empty")));
                }
                if !seen.insert(text.clone()) {
                    return Err(doc.at(level.span(), format!("{what}: '{text}' is given twice")));
                }
                values.push(text);
            }
            factors.push(Factor {
                name,
                levels: values,
            });
        }
        Ok(factors)
    }

    /// An explicit list of cells, each a level of every factor.
    fn cells(&self, node: &Yaml, factors: &[Factor]) -> Res<Vec<Cell>> {
        let doc = self.doc;
        let list = node.as_sequence().ok_or_else(|| {
            doc.at(
                node.span(),
                "cells must be a list of mappings, e.g. - {store: redis, users: 30}",
            )
        })?;
        let mut cells: Vec<Cell> = Vec::new();
        for item in list.iter() {
            let map = doc.mapping(item, "a cell")?;
            let mut cell = Cell::new();
            for factor in factors {
                let Some(level) = map.get_node(&factor.name) else {
                    return Err(doc.at(
                        doc.map_at(map),
                        format!("this cell has no level of factor '{}'", factor.name),
                    ));
                };
                let text = doc.text(level, &format!("the level of '{}'", factor.name))?;
                if !factor.levels.contains(&text) {
                    return Err(doc.at(
                        level.span(),
                        format!(
                            "'{text}' is not a level of factor '{}' (its levels: {})",
                            factor.name,
                            factor.levels.join(", ")
                        ),
                    ));
                }
                cell.push((factor.name.clone(), text));
            }
            for key in map.keys() {
                if !factors.iter().any(|f| f.name == key.as_str()) {
                    return Err(doc.at(
                        key.span(),
                        format!("'{}' is not a factor: list it under factors:", key.as_str()),
                    ));
                }
            }
            if cells.contains(&cell) {
                return Err(doc.at(item.span(), "this cell is listed twice"));
            }
            cells.push(cell);
        }
        if cells.is_empty() {
            return Err(doc.at(node.span(), "cells: the list is empty"));
        }
        Ok(cells)
    }

    fn baseline(&self, node: Option<&Yaml>, factors: &[Factor]) -> Res<Vec<(String, String)>> {
        let doc = self.doc;
        let mut baseline: Vec<(String, String)> = factors
            .iter()
            .map(|f| (f.name.clone(), f.levels[0].clone()))
            .collect();
        let Some(node) = node else {
            return Ok(baseline);
        };
        let map = doc.mapping(node, "baseline")?;
        for (key, value) in map.iter() {
            let Some(factor) = factors.iter().find(|f| f.name == key.as_str()) else {
                return Err(doc.at(
                    key.span(),
                    format!("baseline: '{}' is not a factor", key.as_str()),
                ));
            };
            let level = doc.text(value, "a baseline level")?;
            if !factor.levels.contains(&level) {
                return Err(doc.at(
                    value.span(),
                    format!(
                        "baseline: '{level}' is not a level of '{}' (its levels: {})",
                        factor.name,
                        factor.levels.join(", ")
                    ),
                ));
            }
            for entry in baseline.iter_mut().filter(|(f, _)| *f == factor.name) {
                entry.1 = level.clone();
            }
        }
        Ok(baseline)
    }

    fn workload(&self, node: &Yaml) -> Res<StudyWorkload> {
        let doc = self.doc;
        let map = doc.mapping(node, "workload")?;
        let mut allowed: Vec<&str> = SUBJECT_KEYS.to_vec();
        allowed.extend_from_slice(PROFILE_KEYS);
        allowed.extend_from_slice(&["capacity", "flags"]);
        doc.keys(map, &allowed, "workload")?;
        let subject = match (map.get_node("scenario"), map.get_node("url")) {
            (Some(_), Some(url)) => {
                return Err(doc.at(
                    url.span(),
                    "give the workload a scenario: or a url:, not both",
                ))
            }
            // A relative path is taken from the experiment file's directory (plan.rs).
            (Some(file), None) => self.template(file, "workload.scenario")?,
            (None, Some(url)) => self.template(url, "workload.url")?,
            (None, None) => {
                return Err(doc.at(
                    doc.map_at(map),
                    "the workload needs scenario: FILE (a journey, run with `headroom run`) or url: URL (`headroom load`)",
                ))
            }
        };
        let is_scenario = map.get_node("scenario").is_some();
        let capacity = map.get_node("capacity");
        let command = match (capacity.is_some(), is_scenario) {
            (true, _) => WorkloadCommand::Capacity,
            (false, true) => WorkloadCommand::Run,
            (false, false) => WorkloadCommand::Load,
        };
        if command == WorkloadCommand::Capacity && is_scenario && map.get_node("target").is_none() {
            return Err(doc.at(
                doc.map_at(map),
                "a capacity search of a scenario needs target: URL (the scenario's base URL)",
            ));
        }
        let (mut flags, planned) = self.profile_flags(map, command)?;
        if let Some(node) = capacity {
            let cap = doc.mapping(node, "workload.capacity")?;
            doc.keys(cap, CAPACITY_KEYS, "workload.capacity")?;
            for (key, value) in cap.iter() {
                let t = self.template(value, &format!("workload.capacity.{}", key.as_str()))?;
                flags.push((format!("--{}", key.as_str().replace('_', "-")), t));
            }
        }
        let extra = self.extra_args(map)?;
        Ok(StudyWorkload {
            command,
            subject,
            flags,
            extra,
            planned,
        })
    }

    /// The profile keys as flags (`ramp_up` → `--ramp-up`), each refused
    /// where the command takes no such flag; with the planned length of a
    /// run when its duration depends on no factor.
    fn profile_flags(
        &self,
        map: &MarkedMappingNode,
        command: WorkloadCommand,
    ) -> Res<(Flags, Option<Duration>)> {
        let doc = self.doc;
        let mut flags = Vec::new();
        let mut planned = Duration::ZERO;
        let mut has_duration = false;
        for key in PROFILE_KEYS {
            let Some(value) = map.get_node(key) else {
                continue;
            };
            let wrong = match (*key, command) {
                ("iterations", WorkloadCommand::Load | WorkloadCommand::Capacity) => {
                    Some("iterations: applies to a scenario workload; a URL workload takes requests:")
                }
                ("requests", WorkloadCommand::Run | WorkloadCommand::Capacity) => {
                    Some("requests: applies to a URL workload; a scenario workload takes iterations:")
                }
                ("target", WorkloadCommand::Load) => {
                    Some("target: applies to a scenario workload; a URL workload's url: is its target")
                }
                (
                    "users" | "duration" | "ramp_up" | "rate" | "max_vus",
                    WorkloadCommand::Capacity,
                ) => Some(
                    "a capacity search sets users, duration and ramp-up per level: use capacity: {start, step, max, step_duration, warmup}",
                ),
                _ => None,
            };
            if let Some(message) = wrong {
                let span = map
                    .keys()
                    .find(|k| k.as_str() == *key)
                    .map_or(value.span(), |k| k.span());
                return Err(doc.at(span, message));
            }
            let t = self.template(value, &format!("workload.{key}"))?;
            if matches!(*key, "duration" | "ramp_up") && !t.uses_factors() {
                let d = doc.duration(value, &format!("workload.{key}"))?;
                planned += d;
                has_duration |= *key == "duration";
            }
            flags.push((format!("--{}", key.replace('_', "-")), t));
        }
        Ok((flags, has_duration.then_some(planned)))
    }

    /// `workload.flags`: more arguments, as written; the runner's own are
    /// refused.
    fn extra_args(&self, map: &MarkedMappingNode) -> Res<Vec<FactorTemplate>> {
        let doc = self.doc;
        let mut extra = Vec::new();
        if let Some(node) = map.get_node("flags") {
            let list = node.as_sequence().ok_or_else(|| {
                doc.at(
                    node.span(),
                    "workload.flags must be a list of arguments, e.g. [--apdex-t, 300ms]",
                )
            })?;
            for item in list.iter() {
                let t = self.template(item, "an argument of workload.flags")?;
                let flag = t.source.split('=').next().unwrap_or_default();
                if RUNNER_FLAGS.contains(&flag) {
                    return Err(doc.at(
                        item.span(),
                        format!(
                            "{flag} is the experiment's to set (each run's --out, --seed and --fault, quiet output): leave it out of workload.flags"
                        ),
                    ));
                }
                extra.push(t);
            }
        }
        Ok(extra)
    }

    fn services(&self, node: &Yaml) -> Res<Vec<Service>> {
        let doc = self.doc;
        let list = node.as_sequence().ok_or_else(|| {
            doc.at(
                node.span(),
                "services must be a list, e.g. - {name: redis, command: redis-server --port 6390, ready: {tcp: 127.0.0.1:6390}}",
            )
        })?;
        let mut services: Vec<Service> = Vec::new();
        for item in list.iter() {
            let map = doc.mapping(item, "a service")?;
            doc.keys(map, SERVICE_KEYS, "a service")?;
            let Some(command) = map.get_node("command") else {
                return Err(doc.at(doc.map_at(map), "this service has no command:"));
            };
            let command = self.command(command, "a service's command")?;
            let name = match map.get_node("name") {
                Some(node) => {
                    let name = doc.text(node, "a service's name")?;
                    let valid = !name.is_empty()
                        && name
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
                    if !valid {
                        return Err(doc.at(
                            node.span(),
                            format!("service name '{name}': use letters, digits, - _ and . (it names the service's log file)"),
                        ));
                    }
                    name
                }
                None => format!("service-{}", services.len() + 1),
            };
            if services.iter().any(|s| s.name == name) {
                return Err(doc.at(item.span(), format!("two services are named '{name}'")));
            }
            let ready = match map.get_node("ready") {
                None => None,
                Some(node) => {
                    let ready = doc.mapping(node, "a service's ready:")?;
                    doc.keys(ready, READY_KEYS, "ready")?;
                    match (ready.get_node("tcp"), ready.get_node("http")) {
                        (Some(tcp), None) => {
                            let t = self.template(tcp, "ready.tcp")?;
                            let valid = t.uses_factors()
                                || t.source.rsplit_once(':').is_some_and(|(host, port)| {
                                    !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0)
                                });
                            if !valid {
                                return Err(doc.at(
                                    tcp.span(),
                                    format!(
                                        "ready.tcp '{}' is not HOST:PORT, e.g. 127.0.0.1:6379",
                                        t.source
                                    ),
                                ));
                            }
                            Some(Ready::Tcp(t))
                        }
                        (None, Some(http)) => {
                            let t = self.template(http, "ready.http")?;
                            if !t.source.starts_with("http://") && !t.source.starts_with("${") {
                                return Err(doc.at(
                                    http.span(),
                                    format!(
                                        "ready.http '{}' must be a plain http:// URL, e.g. http://127.0.0.1:8080/",
                                        t.source
                                    ),
                                ));
                            }
                            Some(Ready::Http(t))
                        }
                        _ => {
                            return Err(doc.at(
                                node.span(),
                                "ready: takes one of tcp: HOST:PORT or http: URL",
                            ))
                        }
                    }
                }
            };
            let timeout = match map.get_node("timeout") {
                Some(node) => self.fixed_duration(node, "a service's timeout", true)?,
                None => Duration::from_secs(30),
            };
            services.push(Service {
                name,
                command,
                ready,
                timeout,
            });
        }
        Ok(services)
    }

    fn figure(&self, node: &Yaml, what: &str) -> Res<Figure> {
        let s = self.doc.scalar(node, what)?;
        Figure::parse(s.as_str()).ok_or_else(|| {
            let names: Vec<&str> = crate::figure::ALL.iter().map(|f| f.name()).collect();
            self.doc.at(
                s.span(),
                format!(
                    "{what}: '{}' is not a figure: {}(figures: {})",
                    s.as_str(),
                    headroom_journey::yaml::did_you_mean(s.as_str(), &names),
                    names.join(", ")
                ),
            )
        })
    }

    fn measure(
        &self,
        node: Option<&Yaml>,
        command: WorkloadCommand,
    ) -> Res<(Vec<Figure>, Option<String>)> {
        let doc = self.doc;
        let capacity = command == WorkloadCommand::Capacity;
        let Some(node) = node else {
            // A capacity search's figure is its answer.
            let figures = if capacity {
                vec![Figure::Users]
            } else {
                DEFAULT_FIGURES.to_vec()
            };
            return Ok((figures, None));
        };
        let (list_node, label) = match node {
            Yaml::Sequence(_) => (Some(node), None),
            _ => {
                let map = doc.mapping(node, "measure")?;
                doc.keys(map, MEASURE_KEYS, "measure")?;
                let label = map
                    .get_node("label")
                    .map(|n| doc.text(n, "measure.label"))
                    .transpose()?;
                (map.get_node("figures"), label)
            }
        };
        let figures = match list_node {
            None if capacity => vec![Figure::Users],
            None => DEFAULT_FIGURES.to_vec(),
            Some(list) => {
                let items = list.as_sequence().ok_or_else(|| {
                    doc.at(list.span(), "the figures must be a list, e.g. [mean, p90]")
                })?;
                let mut figures = Vec::new();
                for item in items.iter() {
                    let figure = self.figure(item, "measure")?;
                    if !capacity && figure == Figure::Users {
                        return Err(doc.at(
                            item.span(),
                            "users (a capacity search's answer) needs a workload with capacity:",
                        ));
                    }
                    if !figures.contains(&figure) {
                        figures.push(figure);
                    }
                }
                if figures.is_empty() {
                    return Err(doc.at(list.span(), "measure: the list of figures is empty"));
                }
                // A capacity search's answer comes first; its other figures
                // are those of the level at the capacity.
                if capacity && !figures.contains(&Figure::Users) {
                    figures.insert(0, Figure::Users);
                }
                figures
            }
        };
        Ok((figures, label))
    }

    fn repetitions(
        &self,
        node: Option<&Yaml>,
        figures: &[Figure],
    ) -> Res<(RepetitionRule, Figure)> {
        let doc = self.doc;
        let first = figures[0];
        let Some(node) = node else {
            return Ok((RepetitionRule::fixed(3), first));
        };
        if node.as_scalar().is_some() {
            let n = doc.whole(node, "repetitions", 1)?;
            return Ok((RepetitionRule::fixed(n.min(u32::MAX as u64) as u32), first));
        }
        let map = doc.mapping(node, "repetitions")?;
        doc.keys(map, REPETITION_KEYS, "repetitions")?;
        let min = match map.get_node("min") {
            Some(n) => doc.whole(n, "repetitions.min", 1)?,
            None => 3,
        };
        let max = match map.get_node("max") {
            Some(n) => doc.whole(n, "repetitions.max", 1)?,
            None => min.max(10),
        };
        if max < min {
            return Err(doc.at(
                map.get_node("max").map_or(node.span(), |n| n.span()),
                format!("repetitions.max ({max}) is below min ({min})"),
            ));
        }
        let until_cov = match map.get_node("until_cov") {
            None => None,
            Some(n) => {
                let s = doc.scalar(n, "repetitions.until_cov")?;
                let text = s.as_str().trim();
                let value = text
                    .strip_suffix('%')
                    .and_then(|p| p.trim().parse::<f64>().ok())
                    .filter(|v| *v > 0.0 && v.is_finite());
                Some(value.map(|v| v / 100.0).ok_or_else(|| {
                    doc.at(
                        s.span(),
                        format!(
                            "repetitions.until_cov must be a percentage above 0, e.g. 3.5%, not '{text}'"
                        ),
                    )
                })?)
            }
        };
        let on = match map.get_node("on") {
            Some(n) => self.figure(n, "repetitions.on")?,
            None => first,
        };
        let clamp = |n: u64| n.min(u32::MAX as u64) as u32;
        Ok((
            RepetitionRule {
                min: clamp(min),
                max: clamp(max),
                until_cov,
            },
            on,
        ))
    }

    fn quiet(&self, node: &Yaml) -> Res<Quiet> {
        let doc = self.doc;
        let map = doc.mapping(node, "quiet")?;
        doc.keys(map, QUIET_KEYS, "quiet")?;
        let percent = |key: &str, default: f64| -> Res<f64> {
            let Some(n) = map.get_node(key) else {
                return Ok(default);
            };
            let s = doc.scalar(n, key)?;
            s.as_str()
                .trim()
                .trim_end_matches('%')
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|v| (0.0..=100.0).contains(v) && *v > 0.0)
                .ok_or_else(|| {
                    doc.at(
                        s.span(),
                        format!(
                            "quiet.{key} must be a percentage above 0, e.g. 10%, not '{}'",
                            s.as_str()
                        ),
                    )
                })
        };
        let cpu_below_pct = percent("cpu_below", 10.0)?;
        let temperature_change_c = match map.get_node("temperature_change") {
            None => 0.2,
            Some(n) => {
                let s = doc.scalar(n, "quiet.temperature_change")?;
                s.as_str()
                    .trim()
                    .trim_end_matches('C')
                    .trim_end_matches('°')
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| *v > 0.0 && v.is_finite())
                    .ok_or_else(|| {
                        doc.at(
                            s.span(),
                            format!(
                                "quiet.temperature_change must be degrees above 0, e.g. 0.2, not '{}'",
                                s.as_str()
                            ),
                        )
                    })?
            }
        };
        let window = match map.get_node("window") {
            Some(n) => self.fixed_duration(n, "quiet.window", true)?,
            None => Duration::from_secs(5),
        };
        let timeout = match map.get_node("timeout") {
            Some(n) => self.fixed_duration(n, "quiet.timeout", true)?,
            None => Duration::from_secs(120),
        };
        Ok(Quiet {
            cpu_below_pct,
            temperature_change_c,
            window,
            timeout,
        })
    }

    fn faults(&self, node: &Yaml, workload: &StudyWorkload) -> Res<Vec<StudyFault>> {
        let doc = self.doc;
        if workload.command == WorkloadCommand::Capacity {
            return Err(doc.at(
                node.span(),
                "a capacity search runs no faults: a fault belongs to one run (use users: and duration: instead of capacity:)",
            ));
        }
        let list = node.as_sequence().ok_or_else(|| {
            doc.at(
                node.span(),
                "faults must be a list, e.g. - {at: 10s, command: redis-cli -p 6390 shutdown}",
            )
        })?;
        let mut faults = Vec::new();
        for item in list.iter() {
            let map = doc.mapping(item, "a fault")?;
            doc.keys(map, FAULT_KEYS, "a fault")?;
            let (Some(at), Some(command)) = (map.get_node("at"), map.get_node("command")) else {
                return Err(doc.at(
                    doc.map_at(map),
                    "a fault needs at: (a moment of the run, e.g. 10s) and command:",
                ));
            };
            let at_value = self.fixed_duration(at, "a fault's at", false)?;
            if let Some(planned) = workload.planned {
                if at_value >= planned {
                    return Err(doc.at(
                        at.span(),
                        format!(
                            "this fault comes at {} but a run lasts {}: it would never happen",
                            humantime::format_duration(at_value),
                            humantime::format_duration(planned)
                        ),
                    ));
                }
            }
            let lost_check = match map.get_node("lost_check") {
                None => None,
                Some(node) => {
                    if workload.command != WorkloadCommand::Run {
                        return Err(doc.at(
                            node.span(),
                            "lost_check: names a check of the scenario: it needs a workload with scenario:",
                        ));
                    }
                    Some(doc.text(node, "a fault's lost_check")?)
                }
            };
            faults.push(StudyFault {
                at: at_value,
                command: self.command(command, "a fault's command")?,
                lost_check,
            });
        }
        Ok(faults)
    }
}
