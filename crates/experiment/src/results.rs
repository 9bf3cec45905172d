//! The study's result from its finished runs: each cell's figures across
//! repetitions, each factor's main effect, each level against its factor's
//! baseline (Welch's interval; "not distinguishable from noise" when the
//! interval holds 0), and runs whose environment differs from the others'.

use crate::figure::Figure;
use crate::file::Experiment;
use crate::plan::cell_label;
use crate::store::{self, RunRow};
use headroom_analysis::experiment::{
    against_baseline, main_effect, AgainstBaseline, Cell, Difference, Summary,
};
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

#[derive(Debug, Clone)]
pub struct CellResult {
    pub cell: Cell,
    pub label: String,
    /// Repetitions finished.
    pub runs: usize,
    /// Per figure of the experiment: the repetitions' values and their summary.
    pub values: Vec<Vec<f64>>,
    /// Per figure: how many of the values are lower bounds ("at least":
    /// a capacity search that still held at its max).
    pub at_least: Vec<usize>,
    pub summaries: Vec<Option<Summary>>,
    /// Repetitions whose environment differs from most runs', with how.
    pub odd_environment: Vec<(u32, String)>,
}

/// A level against its factor's baseline, the other factors held.
#[derive(Debug, Clone)]
pub struct LevelComparison {
    pub factor: String,
    pub level: String,
    pub baseline: String,
    /// The other factors' levels, as `users=30`.
    pub held: String,
    pub figure: Figure,
    pub cell: usize,
    pub baseline_cell: usize,
    pub difference: Option<Difference>,
    /// The change of the means in % of the baseline's (`None` when the
    /// baseline's mean is 0 or a side has no value).
    pub change_pct: Option<f64>,
    /// The change as said: in % of the baseline, in percentage points
    /// (a share: errors, CPU) or in the figure's unit, with its 95%
    /// interval in the same unit (`None` when no change is said).
    pub shown: Option<ShownChange>,
    /// What the comparison says, in words.
    pub verdict: String,
    /// The change is real (its interval excludes 0, or the two cells
    /// differ in every repetition without varying).
    pub real: bool,
    /// The change is real and in the worse direction.
    pub worse: bool,
}

/// A factor's effect on a figure: each level's mean over the cells at it.
#[derive(Debug, Clone)]
pub struct MainEffect {
    pub factor: String,
    pub figure: Figure,
    pub levels: Vec<(String, f64)>,
}

/// The unit a comparison's change is said in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeUnit {
    /// % of the baseline's mean; the interval is Fieller's (the ratio of
    /// the two means), so it accounts for the baseline's own spread.
    Percent,
    /// Percentage points: a share (errors, CPU) changes in its own unit,
    /// and the interval is Welch's, in points.
    Points,
    /// The figure's own unit (ms, req/s, users): the baseline's mean is
    /// too close to 0 for a share of it to mean anything.
    Figure,
}

/// "99%", "99.5%": a confidence level (0.99) as said.
pub fn level_name(level: f64) -> String {
    let percent = level * 100.0;
    if (percent - percent.round()).abs() < 1e-9 {
        format!("{percent:.0}%")
    } else {
        format!("{percent:.1}%")
    }
}

/// A change and its 95% interval, both in `unit`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShownChange {
    pub unit: ChangeUnit,
    pub value: f64,
    /// `None` when there is no interval (a side did not vary, or has one
    /// repetition).
    pub ci95: Option<(f64, f64)>,
}

impl ShownChange {
    /// The change in the unit the figure's comparison is said in; `None`
    /// without a change to say (a side without values, or lower bounds).
    pub fn of(figure: Figure, base: &[f64], other: &[f64], d: Option<&Difference>) -> Option<Self> {
        let (a, b) = (Summary::of(base)?.mean, Summary::of(other)?.mean);
        if figure.is_share() {
            return Some(ShownChange {
                unit: ChangeUnit::Points,
                value: figure.shown(b - a),
                ci95: d.map(|d| {
                    let (low, high) = figure.clip_difference(d.ci95);
                    (figure.shown(low), figure.shown(high))
                }),
            });
        }
        match d {
            Some(d) => match d.relative_ci95 {
                Some((low, high)) => Some(ShownChange {
                    unit: ChangeUnit::Percent,
                    value: (b - a) / a * 100.0,
                    ci95: Some((low * 100.0, high * 100.0)),
                }),
                None => Some(ShownChange {
                    unit: ChangeUnit::Figure,
                    value: b - a,
                    ci95: Some(d.ci95),
                }),
            },
            None if a.abs() > f64::EPSILON => Some(ShownChange {
                unit: ChangeUnit::Percent,
                value: (b - a) / a * 100.0,
                ci95: None,
            }),
            None => Some(ShownChange {
                unit: ChangeUnit::Figure,
                value: b - a,
                ci95: None,
            }),
        }
    }

    /// One value in the unit: "+20.3%", "−1.2 pp", "+5.0 ms".
    pub fn value_text(&self, figure: Figure, value: f64) -> String {
        match self.unit {
            ChangeUnit::Percent => format!("{}%", signed(value, 1)),
            ChangeUnit::Points => format!("{} pp", signed(value, 1)),
            ChangeUnit::Figure => {
                let unit = figure.unit();
                let number = signed(value, figure.decimals().max(1));
                if unit.is_empty() {
                    number
                } else {
                    format!("{number} {unit}")
                }
            }
        }
    }

    /// The interval alone: "95%: +18.1% to +22.6%".
    pub fn interval_text(&self, figure: Figure) -> Option<String> {
        self.ci95.map(|(low, high)| {
            format!(
                "95%: {} to {}",
                self.value_text(figure, low),
                self.value_text(figure, high)
            )
        })
    }

    /// "+20.3% (95%: +18.1% to +22.6%)", or the change alone without an
    /// interval.
    pub fn text(&self, figure: Figure) -> String {
        self.text_at(figure, None, &[])
    }

    /// The interval at another `level` (0.99), in this change's unit;
    /// `None` without a 95% interval, or when Fieller's is unbounded there.
    pub fn interval_at(&self, figure: Figure, d: &Difference, level: f64) -> Option<(f64, f64)> {
        self.ci95?;
        match self.unit {
            ChangeUnit::Points => {
                let (low, high) = figure.clip_difference(d.interval(level));
                Some((figure.shown(low), figure.shown(high)))
            }
            ChangeUnit::Percent => d
                .relative_interval(level)
                .map(|(low, high)| (low * 100.0, high * 100.0)),
            ChangeUnit::Figure => Some(d.interval(level)),
        }
    }

    /// [`ShownChange::text`] with the intervals at `levels` after the 95%
    /// one: "+20.3% (95%: +18.1% to +22.6%; 99%: +17.0% to +23.7%)".
    pub fn text_at(&self, figure: Figure, d: Option<&Difference>, levels: &[f64]) -> String {
        let mut intervals: Vec<String> = self.interval_text(figure).into_iter().collect();
        if let (Some(d), false) = (d, intervals.is_empty()) {
            for &level in levels {
                intervals.push(match self.interval_at(figure, d, level) {
                    Some((low, high)) => format!(
                        "{}: {} to {}",
                        level_name(level),
                        self.value_text(figure, low),
                        self.value_text(figure, high)
                    ),
                    None => format!("{}: unbounded", level_name(level)),
                });
            }
        }
        let value = self.value_text(figure, self.value);
        if intervals.is_empty() {
            value
        } else {
            format!("{value} ({})", intervals.join("; "))
        }
    }

    /// The JSON name of the unit: `pct` (of the baseline), `pp`, or the
    /// figure's own.
    pub fn unit_name(&self) -> &'static str {
        match self.unit {
            ChangeUnit::Percent => "percent of the baseline",
            ChangeUnit::Points => "percentage points",
            ChangeUnit::Figure => "the figure's unit",
        }
    }
}

impl LevelComparison {
    /// `mean  delay=120 vs 100 (users=30): +19.8%, worse (95% CI …)`.
    pub fn describe(&self) -> String {
        format!(
            "{:<16} {}: {}",
            self.figure.name(),
            self.change("vs", ""),
            self.verdict
        )
    }

    /// The change compared, in the words given: `delay=120 vs 100
    /// (users=30)` of `change("vs", "")`, `delay=120 instead of 100 (with
    /// users=30)` of `change("instead of", "with ")`.
    pub fn change(&self, against: &str, with: &str) -> String {
        format!(
            "{}={} {against} {}{}",
            self.factor,
            self.level,
            self.baseline,
            if self.held.is_empty() {
                String::new()
            } else {
                format!(" ({with}{})", self.held)
            }
        )
    }
}

#[derive(Debug, Clone)]
pub struct Results {
    pub cells: Vec<CellResult>,
    pub main_effects: Vec<MainEffect>,
    pub comparisons: Vec<LevelComparison>,
    /// The environment most runs had.
    pub usual_environment: String,
    /// The runs that failed (their target was not serving): kept out of
    /// the figures above.
    pub failed: Vec<FailedRun>,
    /// What the throughput figure counts: "req/s", or "pages/s" when the
    /// runs loaded pages ([`rate_unit`]).
    pub rate_unit: &'static str,
}

impl Results {
    /// A figure's title with the throughput's own unit: "throughput
    /// (pages/s)" for runs that loaded pages.
    pub fn title(&self, figure: Figure) -> String {
        match figure {
            Figure::Throughput => format!("throughput ({})", self.rate_unit),
            other => other.title().to_string(),
        }
    }

    /// A figure's unit, the throughput's as the runs counted it.
    pub fn unit(&self, figure: Figure) -> &'static str {
        match figure {
            Figure::Throughput => self.rate_unit,
            other => other.unit(),
        }
    }
}

/// What the throughput of a study's runs in `dir` counts, from the first
/// run that completed: "pages/s" when it loaded pages (its summary counts
/// pages, the requests they were made of beside them), "steps/s" for a
/// capacity search whose steps were partly pages, else "req/s".
pub fn rate_unit(dir: &std::path::Path, experiment: &Experiment, rows: &[RunRow]) -> &'static str {
    let Some(row) = rows.iter().find(|r| !r.failed()) else {
        return "req/s";
    };
    let bundle = dir.join(&row.bundle);
    let counted = if experiment.workload.command == crate::file::WorkloadCommand::Capacity {
        headroom_bundle::capacity::read(&bundle)
            .map(|c| c.setup.rate().to_string())
            .unwrap_or_default()
    } else {
        headroom_bundle::manifest::read_manifest(&bundle)
            .ok()
            .and_then(|m| m.summary)
            .filter(|s| s.requests.is_some_and(|w| w.pages > 0))
            .map(|_| "pages/s".to_string())
            .unwrap_or_default()
    };
    match counted.as_str() {
        "pages/s" => "pages/s",
        "steps/s" => "steps/s",
        _ => "req/s",
    }
}

/// [`analyse`] with the throughput's unit read from the runs in `dir`.
pub fn analyse_study(dir: &std::path::Path, experiment: &Experiment, rows: &[RunRow]) -> Results {
    let mut results = analyse(experiment, rows);
    results.rate_unit = rate_unit(dir, experiment, rows);
    results
}

/// A run kept out of the statistics, and why.
#[derive(Debug, Clone)]
pub struct FailedRun {
    pub label: String,
    pub repetition: u32,
    pub bundle: std::path::PathBuf,
    pub why: String,
}

/// Reads `governor=… max_mhz=…` into its pairs.
fn environment_pairs(text: &str) -> BTreeMap<&str, &str> {
    text.split_whitespace()
        .filter_map(|pair| pair.split_once('='))
        .collect()
}

pub fn analyse(experiment: &Experiment, all_rows: &[RunRow]) -> Results {
    let failed = all_rows
        .iter()
        .filter_map(|r| {
            r.failure.as_ref().map(|why| FailedRun {
                label: r.label.clone(),
                repetition: r.repetition,
                bundle: r.bundle.clone(),
                why: why.clone(),
            })
        })
        .collect();
    let rows: Vec<RunRow> = all_rows.iter().filter(|r| !r.failed()).cloned().collect();
    let usual = usual_environment(&rows);
    let cells: Vec<CellResult> = experiment
        .cells
        .iter()
        .enumerate()
        .map(|(i, cell)| cell_result(experiment, &rows, &usual, i, cell))
        .collect();
    let mut main_effects = Vec::new();
    let mut comparisons = Vec::new();
    for factor in experiment.factors.iter().filter(|f| f.levels.len() > 1) {
        let baseline = experiment.baseline_of(factor);
        for (k, figure) in experiment.figures.iter().enumerate() {
            main_effects.push(main_effect_of(experiment, &cells, &factor.name, k));
            let runs: Vec<Vec<f64>> = cells.iter().map(|c| c.values[k].clone()).collect();
            for found in against_baseline(&factor.name, &baseline, &experiment.cells, &runs) {
                let side = |cell: usize| (cells[cell].at_least[k], &cells[cell]);
                let sides = Sides {
                    baseline: &runs[found.baseline_cell],
                    other: &runs[found.cell],
                    censored: lower_bounds(side(found.baseline_cell), side(found.cell), *figure, k),
                };
                comparisons.push(comparison(
                    experiment,
                    &factor.name,
                    &baseline,
                    *figure,
                    found,
                    &sides,
                ));
            }
        }
    }
    Results {
        cells,
        main_effects,
        comparisons,
        usual_environment: usual,
        failed,
        rate_unit: "req/s",
    }
}

/// The environment most runs had.
fn usual_environment(rows: &[RunRow]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for row in rows {
        *counts.entry(row.environment.as_str()).or_default() += 1;
    }
    counts
        .iter()
        .max_by_key(|(_, n)| **n)
        .map(|(env, _)| env.to_string())
        .unwrap_or_default()
}

/// Cell `i`'s figures over its repetitions, and its runs whose
/// environment differs from the `usual` one, with how.
fn cell_result(
    experiment: &Experiment,
    rows: &[RunRow],
    usual: &str,
    i: usize,
    cell: &Cell,
) -> CellResult {
    let figures = experiment.figures.len();
    let mut mine: Vec<&RunRow> = rows.iter().filter(|r| r.cell == i).collect();
    mine.sort_by_key(|r| r.repetition);
    let values: Vec<Vec<f64>> = (0..figures)
        .map(|k| mine.iter().filter_map(|r| r.values[k]).collect())
        .collect();
    let at_least: Vec<usize> = (0..figures)
        .map(|k| {
            mine.iter()
                .filter(|r| r.values[k].is_some() && r.at_least.get(k).copied().unwrap_or(false))
                .count()
        })
        .collect();
    let usual_pairs = environment_pairs(usual);
    let odd_environment = mine
        .iter()
        .filter(|r| r.environment != usual)
        .map(|r| {
            let theirs = environment_pairs(&r.environment);
            let differs: Vec<String> = usual_pairs
                .iter()
                .filter(|(k, v)| theirs.get(*k) != Some(v))
                .map(|(k, v)| format!("{k} {} (others {v})", theirs.get(k).unwrap_or(&"unknown")))
                .collect();
            (r.repetition, differs.join(", "))
        })
        .collect();
    CellResult {
        cell: cell.clone(),
        label: cell_label(cell),
        runs: mine.len(),
        summaries: values.iter().map(|v| Summary::of(v)).collect(),
        values,
        at_least,
        odd_environment,
    }
}

/// `factor`'s main effect on figure `k` (none over lower bounds: a mean
/// over them is not an effect).
fn main_effect_of(
    experiment: &Experiment,
    cells: &[CellResult],
    factor: &str,
    k: usize,
) -> MainEffect {
    let means: Vec<Option<f64>> = cells
        .iter()
        .map(|c| c.summaries[k].as_ref().map(|s| s.mean))
        .collect();
    let bounded = cells.iter().any(|c| c.at_least[k] > 0);
    MainEffect {
        factor: factor.to_string(),
        figure: experiment.figures[k],
        levels: if bounded {
            Vec::new()
        } else {
            main_effect(factor, &experiment.cells, &means)
        },
    }
}

/// The two sides of a comparison: the baseline cell's and the other
/// cell's values, and why they are not compared when either holds lower
/// bounds.
struct Sides<'a> {
    baseline: &'a [f64],
    other: &'a [f64],
    censored: Option<String>,
}

/// A level against its factor's baseline on one figure.
fn comparison(
    experiment: &Experiment,
    factor: &str,
    baseline: &str,
    figure: Figure,
    found: AgainstBaseline,
    sides: &Sides,
) -> LevelComparison {
    let cell = &experiment.cells[found.cell];
    let level = cell
        .iter()
        .find(|(f, _)| f == factor)
        .map(|(_, l)| l.clone())
        .unwrap_or_default();
    let held: Vec<String> = cell
        .iter()
        .filter(|(f, _)| f != factor)
        .map(|(f, l)| format!("{f}={l}"))
        .collect();
    let censored = sides.censored.is_some();
    let shown = if censored {
        None
    } else {
        ShownChange::of(
            figure,
            sides.baseline,
            sides.other,
            found.difference.as_ref(),
        )
    };
    let (verdict, real, worse) = match &sides.censored {
        Some(why) => (why.clone(), false, false),
        None => verdict(
            figure,
            found.difference.as_ref(),
            shown.as_ref(),
            (sides.baseline, sides.other),
            &experiment.confidence,
        ),
    };
    let means = (
        Summary::of(sides.baseline).map(|s| s.mean),
        Summary::of(sides.other).map(|s| s.mean),
    );
    let change_pct = match means {
        (Some(a), Some(b)) if a.abs() > f64::EPSILON && !censored => Some((b - a) / a * 100.0),
        _ => None,
    };
    LevelComparison {
        shown,
        change_pct,
        factor: factor.to_string(),
        level,
        baseline: baseline.to_string(),
        held: held.join(" "),
        figure,
        cell: found.cell,
        baseline_cell: found.baseline_cell,
        // A lower bound's mean is not the cell's mean: no change.
        difference: if censored { None } else { found.difference },
        verdict,
        real,
        worse,
    }
}

/// When either side of a comparison holds lower bounds (a capacity
/// search that still held at its max, "at least N"), its mean is not the
/// cell's capacity and the two cannot be compared as numbers: the words
/// say so, and the comparison is never "better" or "worse".
fn lower_bounds(
    base: (usize, &CellResult),
    other: (usize, &CellResult),
    figure: Figure,
    k: usize,
) -> Option<String> {
    let side = |(n, cell): (usize, &CellResult)| -> Option<String> {
        (n > 0).then(|| {
            let low = cell.values[k].iter().copied().fold(f64::INFINITY, f64::min);
            format!(
                "{} reached the search's max in {n} of {} (at least {:.*} {})",
                cell.label,
                headroom_units::quantity::count(cell.values[k].len(), "repetition", "repetitions"),
                figure.decimals(),
                figure.shown(low),
                figure.name()
            )
        })
    };
    let said: Vec<String> = [side(base), side(other)].into_iter().flatten().collect();
    (!said.is_empty()).then(|| {
        format!(
            "not comparable: {}; a lower bound is not a capacity (raise the search's max)",
            said.join("; ")
        )
    })
}

/// "+1.2", "−3.4" (a true minus), "0.0".
fn signed(value: f64, decimals: usize) -> String {
    let text = format!("{value:+.decimals$}");
    if text
        .trim_start_matches(['+', '-'])
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        text.trim_start_matches(['+', '-']).to_string()
    } else {
        text.replace('-', "−")
    }
}

/// How a comparison of a figure that no run reported begins.
pub const NOT_MEASURED: &str = "not measured: ";

/// The comparison in words, whether the change is real, and whether it is
/// a real change for the worse.
fn verdict(
    figure: Figure,
    d: Option<&Difference>,
    shown: Option<&ShownChange>,
    (base, other): (&[f64], &[f64]),
    levels: &[f64],
) -> (String, bool, bool) {
    let mean = |values: &[f64]| Summary::of(values).map_or(0.0, |s| s.mean);
    let (base_mean, other_mean) = (mean(base), mean(other));
    let Some(d) = d else {
        if base.is_empty() && other.is_empty() {
            return (
                format!("{NOT_MEASURED}{}", figure.missing_reason()),
                false,
                false,
            );
        }
        // One side's runs did not report the figure (no such process
        // there, no sensor): there is nothing to compare with.
        if base.is_empty() || other.is_empty() {
            let side = if base.is_empty() {
                "the baseline's"
            } else {
                "this level's"
            };
            return (
                format!("not comparable: {side} runs did not report it"),
                false,
                false,
            );
        }
        if base.len() < 2 || other.len() < 2 {
            return (
                "not tested: each side needs at least 2 repetitions".into(),
                false,
                false,
            );
        }
        // Neither side varies: equal values are no difference, unequal
        // ones differ in every repetition.
        if base_mean == other_mean {
            return (
                "no difference: the same value in every repetition".into(),
                false,
                false,
            );
        }
        let better = (other_mean > base_mean) == figure.higher_is_better();
        return (
            format!(
                "{}{} in every repetition (no variation to test)",
                shown.map_or(String::new(), |s| format!("{}, ", s.text(figure))),
                if better { "better" } else { "worse" }
            ),
            true,
            !better,
        );
    };
    let change = shown.map_or_else(
        || signed(d.change, 1),
        |s| s.text_at(figure, Some(d), levels),
    );
    if !d.significant {
        return (
            format!("{change}, not distinguishable from noise (the interval includes no change)"),
            false,
            false,
        );
    }
    let better = (d.change > 0.0) == figure.higher_is_better();
    (
        format!("{change}, {}", if better { "better" } else { "worse" }),
        true,
        !better,
    )
}

fn shown(figure: Figure, summary: Option<&Summary>) -> String {
    match summary {
        Some(s) => figure.with_interval(
            figure.shown(s.mean),
            s.ci95.map(|(low, _)| figure.shown(s.mean - low)),
        ),
        None => "—".into(),
    }
}

/// A cell's figure; "≥" before it when a repetition's value is a lower
/// bound.
fn shown_cell(figure: Figure, cell: &CellResult, k: usize) -> String {
    let text = shown(figure, cell.summaries[k].as_ref());
    if cell.at_least[k] > 0 {
        format!("≥{text}")
    } else {
        text
    }
}

/// The tables as the terminal shows them: per figure, the first factor
/// down and the second across (the rest as separate tables), each value
/// "mean ±half-width of its 95% interval".
pub fn render_text(experiment: &Experiment, results: &Results) -> String {
    let mut text = String::new();
    for (k, figure) in experiment.figures.iter().enumerate() {
        figure_tables(&mut text, experiment, results, *figure, k);
    }
    main_effects_text(&mut text, experiment, results);
    comparisons_text(&mut text, experiment, results);
    notes_text(&mut text, results);
    text
}

/// One figure's tables: the first factor down and the second across, one
/// table per combination of the other factors' levels (a list of the
/// cells with fewer than two factors).
fn figure_tables(
    text: &mut String,
    experiment: &Experiment,
    results: &Results,
    figure: Figure,
    k: usize,
) {
    let _ = writeln!(
        text,
        "\n{}{} — mean ±95% interval over repetitions",
        results.title(figure),
        experiment
            .label
            .as_ref()
            .map(|l| format!(" of '{l}'"))
            .unwrap_or_default()
    );
    let (Some(down), Some(across)) = (experiment.factors.first(), experiment.factors.get(1)) else {
        for c in &results.cells {
            let _ = writeln!(
                text,
                "  {:<32} {:>18}  n={}",
                c.label,
                shown_cell(figure, c, k),
                c.runs
            );
        }
        other_intervals(text, experiment, results, figure, k);
        return;
    };
    // The other factors' levels of a cell, as `users=30 think=1s`.
    let rest_of = |cell: &Cell| -> String {
        cell.iter()
            .skip(2)
            .map(|(f, l)| format!("{f}={l}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut rest: Vec<String> = Vec::new();
    for c in &results.cells {
        let key = rest_of(&c.cell);
        if !rest.contains(&key) {
            rest.push(key);
        }
    }
    for key in rest {
        if !key.is_empty() {
            let _ = writeln!(text, "  {key}:");
        }
        let _ = write!(
            text,
            "  {:<20}",
            format!("{} \\ {}", down.name, across.name)
        );
        for level in &across.levels {
            let _ = write!(text, " {:>18}", format!("{}={level}", across.name));
        }
        let _ = writeln!(text);
        for row in &down.levels {
            let _ = write!(text, "  {:<20}", format!("{}={row}", down.name));
            for col in &across.levels {
                let found = results.cells.iter().find(|c| {
                    c.cell.first().is_some_and(|(_, l)| l == row)
                        && c.cell.get(1).is_some_and(|(_, l)| l == col)
                        && rest_of(&c.cell) == key
                });
                let value = found
                    .map(|c| shown_cell(figure, c, k))
                    .unwrap_or_else(|| "not run".into());
                let _ = write!(text, " {value:>18}");
            }
            let _ = writeln!(text);
        }
    }
    other_intervals(text, experiment, results, figure, k);
}

/// The cells' intervals at the study's other confidence levels, a line
/// each: "  99%: store=db 30.1 to 33.9; store=redis 22.0 to 26.3".
fn other_intervals(
    text: &mut String,
    experiment: &Experiment,
    results: &Results,
    figure: Figure,
    k: usize,
) {
    for (level, cells) in cell_intervals(experiment, results, figure, k) {
        let _ = writeln!(text, "  {}: {}", level_name(level), cells.join("; "));
    }
}

/// Per other confidence level of the study (`confidence:`), each cell's
/// interval of the mean of figure `k`, as "store=db 30.1 to 33.9"; levels
/// where no cell has one are left out.
pub fn cell_intervals(
    experiment: &Experiment,
    results: &Results,
    figure: Figure,
    k: usize,
) -> Vec<(f64, Vec<String>)> {
    let d = figure.decimals();
    experiment
        .confidence
        .iter()
        .map(|&level| {
            let cells: Vec<String> = results
                .cells
                .iter()
                .filter_map(|c| {
                    let (low, high) = figure.clip(c.summaries[k].as_ref()?.interval(level)?);
                    Some(format!(
                        "{} {:.d$} to {:.d$}",
                        c.label,
                        figure.shown(low),
                        figure.shown(high)
                    ))
                })
                .collect();
            (level, cells)
        })
        .filter(|(_, cells)| !cells.is_empty())
        .collect()
}

fn main_effects_text(text: &mut String, experiment: &Experiment, results: &Results) {
    if experiment.factors.len() < 2 || results.main_effects.is_empty() {
        return;
    }
    let _ = writeln!(
        text,
        "\nmain effects (each level's mean over the cells at it):"
    );
    for e in results.main_effects.iter().filter(|e| !e.levels.is_empty()) {
        let levels: Vec<String> = e
            .levels
            .iter()
            .map(|(l, m)| format!("{}={l}: {:.1}", e.factor, e.figure.shown(*m)))
            .collect();
        let _ = writeln!(text, "  {:<16} {}", e.figure.name(), levels.join(", "));
    }
}

fn comparisons_text(text: &mut String, experiment: &Experiment, results: &Results) {
    let comparable = experiment.factors.iter().any(|f| f.levels.len() > 1);
    if comparable && results.comparisons.is_empty() {
        let _ = writeln!(
            text,
            "\nno comparisons: no cell differs from a baseline cell in one factor only (list such pairs under cells:)"
        );
    }
    if !results.comparisons.is_empty() {
        let _ = writeln!(
            text,
            "\nagainst the baseline (95% intervals: a change in % of the baseline by Fieller's interval of the ratio of the means, in percentage points (pp) for shares (errors, CPU, memory, disk busy, seconds throttled) by Welch's, and in the figure's own unit by Welch's where the baseline's mean is too uncertain for a ratio (its own interval reaches 0)):"
        );
        for c in &results.comparisons {
            let _ = writeln!(text, "  {}", c.describe());
        }
    }
}

/// Lower bounds, failed runs and runs in an odd environment.
fn notes_text(text: &mut String, results: &Results) {
    if results
        .cells
        .iter()
        .any(|c| c.at_least.iter().any(|n| *n > 0))
    {
        let _ = writeln!(
            text,
            "\n≥: a search reached its max in a repetition; that value is a lower bound (\"at least\"), not the capacity"
        );
    }
    if !results.failed.is_empty() {
        let _ = writeln!(
            text,
            "\nfailed runs, kept out of the figures above (run the study again to repeat them):"
        );
        for f in &results.failed {
            let _ = writeln!(
                text,
                "  {} repetition {}: {} ({})",
                f.label,
                f.repetition,
                f.why,
                f.bundle.display()
            );
        }
    }
    let odd: Vec<String> = results
        .cells
        .iter()
        .flat_map(|c| {
            c.odd_environment
                .iter()
                .map(move |(rep, how)| format!("  {} repetition {rep}: {how}", c.label))
        })
        .collect();
    if !odd.is_empty() {
        let _ = writeln!(
            text,
            "\nruns whose environment differs from the others' (their cells' figures mix environments):"
        );
        for line in odd {
            let _ = writeln!(text, "{line}");
        }
    }
}

/// `cells.csv`: one row per cell; per figure its mean, 95% interval, CoV,
/// range and peak repetitions (above 5 × the others' mean; the figure
/// `peaks` counts responses within a run instead).
/// `{"99%": [low, high]}` for each of `levels` (null where there is no
/// interval); `{}` without levels.
fn intervals_json(
    levels: &[f64],
    interval: impl Fn(f64) -> Option<(f64, f64)>,
) -> serde_json::Value {
    levels
        .iter()
        .map(|&level| {
            (
                level_name(level),
                json!(interval(level).map(|(l, h)| [l, h])),
            )
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

pub fn cells_csv(experiment: &Experiment, results: &Results) -> String {
    let mut out = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = vec!["cell".into(), "label".into()];
    header.extend(experiment.factors.iter().map(|f| f.name.clone()));
    header.push("repetitions".into());
    header.push("odd_environment".into());
    let levels: Vec<String> = experiment
        .confidence
        .iter()
        .map(|l| level_name(*l).trim_end_matches('%').replace('.', "_"))
        .collect();
    for f in &experiment.figures {
        let mut parts: Vec<String> = ["mean", "ci95_low", "ci95_high"].map(String::from).to_vec();
        for level in &levels {
            parts.push(format!("ci{level}_low"));
            parts.push(format!("ci{level}_high"));
        }
        parts.extend(["cov_pct", "min", "max", "peak_repetitions"].map(String::from));
        for part in parts {
            header.push(format!("{}_{part}", f.column()));
        }
    }
    let _ = out.write_record(&header);
    let number = |v: Option<f64>| v.map(|v| format!("{v:.6}")).unwrap_or_default();
    for (i, c) in results.cells.iter().enumerate() {
        let mut row: Vec<String> = vec![(i + 1).to_string(), c.label.clone()];
        row.extend(c.cell.iter().map(|(_, l)| l.clone()));
        row.push(c.runs.to_string());
        row.push(c.odd_environment.len().to_string());
        for (s, figure) in c.summaries.iter().zip(&experiment.figures) {
            let s = s.as_ref();
            let ci95 = s.and_then(|s| s.ci95).map(|ci| figure.clip(ci));
            row.push(number(s.map(|s| s.mean)));
            row.push(number(ci95.map(|ci| ci.0)));
            row.push(number(ci95.map(|ci| ci.1)));
            for &level in &experiment.confidence {
                let interval = s.and_then(|s| s.interval(level)).map(|ci| figure.clip(ci));
                row.push(number(interval.map(|ci| ci.0)));
                row.push(number(interval.map(|ci| ci.1)));
            }
            row.push(number(s.and_then(|s| s.cov).map(|c| c * 100.0)));
            row.push(number(s.map(|s| s.min)));
            row.push(number(s.map(|s| s.max)));
            row.push(
                s.map(|s| {
                    s.peaks
                        .iter()
                        .map(|p| (p + 1).to_string())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_default(),
            );
        }
        let _ = out.write_record(&row);
    }
    String::from_utf8(out.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// `experiment.json`: the result as data.
pub fn result_json(
    experiment: &Experiment,
    results: &Results,
    status: &str,
    runs_planned: (usize, usize),
) -> serde_json::Value {
    let figure_list: Vec<&str> = experiment.figures.iter().map(|f| f.name()).collect();
    json!({
        "schema_version": 1,
        "name": experiment.name,
        "status": status,
        "factors": experiment.factors.iter().map(|f| json!({"name": f.name, "levels": f.levels})).collect::<Vec<_>>(),
        "baseline": experiment.baseline.iter().map(|(f, l)| (f.clone(), json!(l))).collect::<serde_json::Map<_, _>>(),
        "figures": figure_list,
        "throughput_unit": results.rate_unit,
        "label": experiment.label,
        "runs_planned": {"min": runs_planned.0, "max": runs_planned.1},
        "runs_finished": results.cells.iter().map(|c| c.runs).sum::<usize>(),
        "failed_runs": results.failed.iter().map(|f| json!({
            "cell": f.label, "repetition": f.repetition,
            "bundle": f.bundle.display().to_string(), "why": f.why,
        })).collect::<Vec<_>>(),
        "usual_environment": results.usual_environment,
        "cells": results.cells.iter().map(|c| json!({
            "label": c.label,
            "levels": c.cell.iter().map(|(f, l)| (f.clone(), json!(l))).collect::<serde_json::Map<_, _>>(),
            "repetitions": c.runs,
            "figures": experiment.figures.iter().zip(&c.summaries).zip(&c.values).zip(&c.at_least).map(|(((f, s), v), at_least)| (f.name().to_string(), json!({
                "values": v,
                "at_least": at_least,
                "mean": s.as_ref().map(|s| s.mean),
                "ci95": s.as_ref().and_then(|s| s.ci95).map(|c| f.clip(c)).map(|c| [c.0, c.1]),
                "intervals": intervals_json(&experiment.confidence, |level| s.as_ref()?.interval(level).map(|c| f.clip(c))),
                "cov": s.as_ref().and_then(|s| s.cov),
                "min": s.as_ref().map(|s| s.min),
                "max": s.as_ref().map(|s| s.max),
                "peak_repetitions": s.as_ref().map(|s| s.peaks.iter().map(|p| p + 1).collect::<Vec<_>>()),
            }))).collect::<serde_json::Map<_, _>>(),
            "odd_environment": c.odd_environment.iter().map(|(r, how)| json!({"repetition": r, "differs": how})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "main_effects": results.main_effects.iter().map(|e| json!({
            "factor": e.factor, "figure": e.figure.name(),
            "levels": e.levels.iter().map(|(l, m)| json!({"level": l, "mean": m})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "comparisons": results.comparisons.iter().map(|c| json!({
            "factor": c.factor, "level": c.level, "baseline": c.baseline, "held": c.held,
            "figure": c.figure.name(),
            "difference": c.difference.map(|d| d.change),
            "difference_ci95": c.difference.map(|d| [d.ci95.0, d.ci95.1]),
            "difference_unit": match c.figure {
                Figure::Throughput => results.rate_unit,
                other => other.stored_unit(),
            },
            "change_pct": c.change_pct,
            "change_pct_ci95": c.shown.filter(|s| s.unit == ChangeUnit::Percent).and_then(|s| s.ci95).map(|(l, h)| [l, h]),
            "change_pp": c.shown.filter(|s| s.unit == ChangeUnit::Points).map(|s| s.value),
            "change_pp_ci95": c.shown.filter(|s| s.unit == ChangeUnit::Points).and_then(|s| s.ci95).map(|(l, h)| [l, h]),
            "change_said_in": c.shown.map(|s| s.unit_name()),
            "change_shown": c.shown.map(|s| s.text_at(c.figure, c.difference.as_ref(), &experiment.confidence)),
            "change_intervals": intervals_json(&experiment.confidence, |level| c.shown?.interval_at(c.figure, c.difference.as_ref()?, level)),
            "df": c.difference.map(|d| d.df),
            "significant": c.difference.map(|d| d.significant),
            "real": c.real,
            "worse": c.worse,
            "verdict": c.verdict,
        })).collect::<Vec<_>>(),
    })
}

/// Writes the study's results: [`store::CELLS`] and [`store::RESULT`]
/// (with `status`: complete, interrupted or failed).
pub fn write_results(
    out: &Path,
    experiment: &Experiment,
    results: &Results,
    status: &str,
    answer: Option<&str>,
) -> std::io::Result<()> {
    let (min, max, _) = crate::plan::estimate(experiment);
    let mut json = result_json(experiment, results, status, (min, max));
    if let (Some(answer), Some(fields)) = (answer, json.as_object_mut()) {
        fields.insert("answer".into(), json!(answer));
    }
    store::write_atomic(
        &out.join(store::CELLS),
        cells_csv(experiment, results).as_bytes(),
    )?;
    store::write_atomic(
        &out.join(store::RESULT),
        serde_json::to_string_pretty(&json)
            .unwrap_or_default()
            .as_bytes(),
    )
}

/// The comparisons that are real changes for the worse by more than
/// `threshold_pct` percent (of the figures in `only`, or all).
pub fn regressions(
    results: &Results,
    threshold_pct: f64,
    only: Option<Figure>,
) -> Vec<&LevelComparison> {
    results
        .comparisons
        .iter()
        .filter(|c| only.is_none_or(|f| f == c.figure))
        .filter(|c| c.worse)
        // From a baseline of 0 (no errors before) any worse value is beyond
        // any threshold.
        .filter(|c| c.change_pct.is_none_or(|p| p.abs() > threshold_pct))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn study() -> Experiment {
        crate::file::parse_str(
            "name: t\nfactors:\n  delay: [100, 120]\nworkload:\n  url: http://127.0.0.1:1/\n  users: 1\n  duration: 2s\nrepetitions: 5\nmeasure: [mean, errors]\n",
            Path::new("t.yaml"),
        )
        .unwrap()
    }

    fn rows(values: &[(usize, f64, f64)]) -> Vec<RunRow> {
        values
            .iter()
            .enumerate()
            .map(|(i, (cell, mean, errors))| {
                RunRow::measured(
                    *cell,
                    format!("delay={}", [100, 120][*cell]),
                    i as u32 + 1,
                    &[*mean, *errors],
                )
            })
            .collect()
    }

    /// The study's comparison said "+20.3%" beside an interval of the
    /// absolute difference without a unit ("+25.6 to +30.3"), and errors'
    /// change as a % of a share where the text said points. A relative
    /// change has Fieller's relative interval, which holds it; errors
    /// change in percentage points with their interval in points; the
    /// JSON names each field's unit.
    #[test]
    fn each_change_has_its_interval_in_its_own_unit() {
        let experiment = study();
        let base = [100.0, 104.0, 98.0, 101.0, 103.0];
        let other = [110.0, 112.0, 107.0, 115.0, 109.0];
        let (e_base, e_other) = (
            [0.010, 0.012, 0.011, 0.009, 0.013],
            [0.02, 0.022, 0.025, 0.021, 0.027],
        );
        let mut values = Vec::new();
        for i in 0..5 {
            values.push((0, base[i], e_base[i]));
            values.push((1, other[i], e_other[i]));
        }
        let results = analyse(&experiment, &rows(&values));
        let mean = &results.comparisons[0];
        let shown = mean.shown.unwrap();
        assert_eq!(shown.unit, ChangeUnit::Percent);
        let (low, high) = shown.ci95.unwrap();
        assert!(low < shown.value && shown.value < high, "{shown:?}");
        assert_eq!(shown.text(Figure::Mean), "+9.3% (95%: +5.2% to +13.5%)");
        assert_eq!(mean.verdict, "+9.3% (95%: +5.2% to +13.5%), worse");
        let errors = &results.comparisons[1];
        let shown = errors.shown.unwrap();
        assert_eq!(shown.unit, ChangeUnit::Points);
        assert_eq!(
            shown.text(Figure::Errors),
            "+1.2 pp (95%: +0.8 pp to +1.6 pp)"
        );
        let json = result_json(&experiment, &results, "complete", (10, 10));
        let c = &json["comparisons"][0];
        let ci = c["change_pct_ci95"].as_array().unwrap();
        assert!(
            (ci[0].as_f64().unwrap() - 5.221501721404609).abs() < 1e-6,
            "{c}"
        );
        assert_eq!(c["difference_unit"], "ms");
        assert_eq!(c["change_said_in"], "percent of the baseline");
        let e = &json["comparisons"][1];
        assert!((e["change_pp"].as_f64().unwrap() - 1.2).abs() < 1e-9, "{e}");
        assert_eq!(e["change_pp_ci95"].as_array().unwrap().len(), 2, "{e}");
        assert_eq!(e["change_pct_ci95"], serde_json::Value::Null, "{e}");
        let text = render_text(&experiment, &results);
        assert!(
            text.contains("+9.3% (95%: +5.2% to +13.5%), worse"),
            "{text}"
        );
    }

    /// A figure the baseline's runs did not report (the balancer's memory
    /// where there is no balancer) is not comparable, not "short of
    /// repetitions".
    #[test]
    fn a_figure_one_side_did_not_report_is_not_comparable() {
        let experiment = study();
        let mut rows = rows(&[
            (0, 100.0, 0.0),
            (1, 110.0, 0.0),
            (0, 101.0, 0.0),
            (1, 112.0, 0.0),
        ]);
        for r in rows.iter_mut().filter(|r| r.cell == 0) {
            r.values[1] = None;
        }
        let results = analyse(&experiment, &rows);
        assert_eq!(
            results.comparisons[1].verdict,
            "not comparable: the baseline's runs did not report it"
        );
        assert!(!results.comparisons[1].real);
    }

    /// 003 reports 99% intervals: `confidence: [90, 99]` adds each level's
    /// interval beside the 95% one (a 99% one wider, a 90% one narrower),
    /// for the cells' means and the changes, in the text, the JSON and
    /// cells.csv; the verdict stays the 95% interval's.
    #[test]
    fn other_confidence_levels_are_reported_beside_95() {
        let mut experiment = study();
        let with = crate::file::parse_str(
            "factors:\n  delay: [100, 120]\nworkload:\n  url: http://127.0.0.1:1/\n  users: 1\n  duration: 2s\nconfidence: [99, 90%, 95]\n",
            Path::new("t.yaml"),
        )
        .unwrap();
        assert_eq!(with.confidence, [0.99, 0.90]);
        experiment.confidence = with.confidence;
        let base = [100.0, 104.0, 98.0, 101.0, 103.0];
        let other = [110.0, 112.0, 107.0, 115.0, 109.0];
        let mut values = Vec::new();
        for i in 0..5 {
            values.push((0, base[i], 0.01));
            values.push((1, other[i], 0.01));
        }
        let results = analyse(&experiment, &rows(&values));
        let mean = &results.comparisons[0];
        assert!(
            mean.verdict
                .starts_with("+9.3% (95%: +5.2% to +13.5%; 99%: +3.")
                && mean.verdict.ends_with("), worse"),
            "{}",
            mean.verdict
        );
        let d = mean.difference.unwrap();
        let shown = mean.shown.unwrap();
        let (l99, h99) = shown.interval_at(Figure::Mean, &d, 0.99).unwrap();
        let (l90, h90) = shown.interval_at(Figure::Mean, &d, 0.90).unwrap();
        let (l95, h95) = shown.ci95.unwrap();
        assert!(l99 < l95 && l95 < l90 && h90 < h95 && h95 < h99);
        let json = result_json(&experiment, &results, "complete", (10, 10));
        let cell = &json["cells"][0]["figures"]["mean"];
        let i99 = cell["intervals"]["99%"].as_array().unwrap();
        // scipy: t.interval(0.99, 4, mean, sem) of the baseline's values.
        assert!(
            (i99[0].as_f64().unwrap() - 96.28417187788202).abs() < 1e-9,
            "{cell}"
        );
        assert!(
            (i99[1].as_f64().unwrap() - 106.11582812211799).abs() < 1e-9,
            "{cell}"
        );
        let c = &json["comparisons"][0]["change_intervals"]["90%"];
        assert!((c[0].as_f64().unwrap() - l90).abs() < 1e-9, "{c}");
        let csv = cells_csv(&experiment, &results);
        let header = csv.lines().next().unwrap();
        assert!(
            header.contains("mean_ms_ci95_high,mean_ms_ci99_low,mean_ms_ci99_high,mean_ms_ci90_low,mean_ms_ci90_high,mean_ms_cov_pct"),
            "{header}"
        );
        let text = render_text(&experiment, &results);
        assert!(
            text.contains("  99%: delay=100 96.3 to 106.1; delay=120"),
            "{text}"
        );
        // Levels outside 50..99.9 are refused with what to write.
        let refused = crate::file::parse_str(
            "factors:\n  delay: [100, 120]\nworkload:\n  url: http://127.0.0.1:1/\n  users: 1\n  duration: 2s\nconfidence: 100\n",
            Path::new("t.yaml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            refused.contains("not a level in percent from 50 to 99.9"),
            "{refused}"
        );
    }
}
