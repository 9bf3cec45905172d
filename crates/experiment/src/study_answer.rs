//! A study's answer first, in words (`headroom experiment`, its page and
//! experiment.json's `answer`): of the changes it tried, how many made its
//! first figure better, worse or no change it could tell from noise, and
//! the largest real one with its interval. A study without a comparison
//! names its best cell. The tables and comparisons follow it.

use crate::figure::Figure;
use crate::file::Experiment;
use crate::results::{LevelComparison, Results};
use headroom_units::quantity::count;

/// The first sentences of a study's results; `None` when it has no figure
/// to speak of (no cell measured it).
pub fn study_answer(experiment: &Experiment, results: &Results) -> Option<String> {
    let figure = *experiment.figures.first()?;
    let title = results.title(figure);
    // "p95 (ms)" reads "the p95" in a sentence; its unit goes with values.
    let name = title
        .split(" (")
        .next()
        .unwrap_or(&title)
        .trim_start_matches("its ")
        .to_string();
    let compared: Vec<&LevelComparison> = results
        .comparisons
        .iter()
        .filter(|c| c.figure == figure)
        .collect();
    if compared.is_empty() {
        return best_cell(results, figure, &name);
    }
    let named = |c: &LevelComparison| c.change("instead of", "with ");
    if let [c] = compared[..] {
        return Some(format!(
            "Judged by the {name}, the one change this study tried, {}, {}: {}.",
            named(c),
            did(c),
            change(c, figure)
        ));
    }
    let better = compared.iter().filter(|c| c.real && !c.worse).count();
    let worse = compared.iter().filter(|c| c.real && c.worse).count();
    let unclear = compared.len() - better - worse;
    let mut parts = Vec::new();
    if better > 0 {
        parts.push(format!("{better} made it better"));
    }
    if worse > 0 {
        parts.push(format!("{worse} made it worse"));
    }
    if unclear > 0 {
        parts.push(format!(
            "{unclear} made no change this study could tell from noise"
        ));
    }
    let mut text = format!(
        "Judged by the {name}, of the {} changes this study tried, {}.",
        compared.len(),
        join(&parts)
    );
    // The largest real change, by its share of the baseline.
    let largest = compared
        .iter()
        .filter(|c| c.real)
        .max_by(|a, b| magnitude(a).total_cmp(&magnitude(b)));
    if let Some(c) = largest {
        text.push_str(&format!(
            " The largest: {} {}: {}.",
            named(c),
            did(c),
            change(c, figure)
        ));
    }
    Some(text)
}

/// What a change did to the figure, in words.
fn did(c: &LevelComparison) -> &'static str {
    match (c.real, c.worse) {
        (true, false) => "made it better",
        (true, true) => "made it worse",
        (false, _) => "made no change this study could tell from noise",
    }
}

/// The change with its interval ("-40.1% (95%: -43.0% to -37.2%)"), or
/// the comparison's own words where it has no figure (not measured, not
/// comparable).
fn change(c: &LevelComparison, figure: Figure) -> String {
    c.shown
        .as_ref()
        .map_or_else(|| c.verdict.clone(), |s| s.text(figure))
}

/// A change's size for ordering: its share of the baseline, else its
/// shown value.
fn magnitude(c: &LevelComparison) -> f64 {
    c.change_pct
        .or_else(|| c.shown.as_ref().map(|s| s.value))
        .map_or(0.0, f64::abs)
}

/// "a", "a and b", "a, b and c".
fn join(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [head @ .., last] => format!("{} and {last}", head.join(", ")),
    }
}

/// Without comparisons: the cell with the best mean, and its value.
fn best_cell(results: &Results, figure: Figure, name: &str) -> Option<String> {
    let k = 0;
    let measured: Vec<(&str, f64)> = results
        .cells
        .iter()
        .filter_map(|c| Some((c.label.as_str(), c.summaries.get(k)?.as_ref()?.mean)))
        .collect();
    let best = measured.iter().max_by(|a, b| {
        let order = a.1.total_cmp(&b.1);
        if figure.higher_is_better() {
            order
        } else {
            order.reverse()
        }
    })?;
    let unit = results.unit(figure);
    let value = format!(
        "{:.d$}{}{unit}",
        figure.shown(best.1),
        if unit.is_empty() || unit == "%" {
            ""
        } else {
            " "
        },
        d = figure.decimals()
    );
    Some(if measured.len() == 1 {
        format!("This study measured one cell: its {name} was {value} on average.")
    } else {
        format!(
            "Of this study's {}, {} had the best {name}: {value} on average (no cell differs from a baseline in one factor only, so no change was tested).",
            count(measured.len(), "cell", "cells"),
            best.0
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::analyse;
    use crate::store::RunRow;
    use std::path::Path;

    fn study(levels: &str) -> Experiment {
        crate::file::parse_str(
            &format!("name: t\nfactors:\n  storage: [{levels}]\nworkload:\n  url: http://127.0.0.1:1/\n  users: 1\n  duration: 2s\nrepetitions: 5\nmeasure: [p95]\n"),
            Path::new("t.yaml"),
        )
        .unwrap()
    }

    /// Each cell's five repetitions of the p95, in cell order.
    fn rows(experiment: &Experiment, cells: &[[f64; 5]]) -> Vec<RunRow> {
        let levels = &experiment.factors[0].levels;
        let mut rows = Vec::new();
        for (cell, values) in cells.iter().enumerate() {
            for (i, value) in values.iter().enumerate() {
                rows.push(RunRow::measured(
                    cell,
                    format!("storage={}", levels[cell]),
                    i as u32 + 1,
                    &[*value],
                ));
            }
        }
        rows
    }

    /// SD card (the baseline), SSD (p95 about 40% lower, every time) and
    /// a USB stick (no change beyond the noise): one change better, one
    /// not told from noise, and the SSD named as the largest with its
    /// interval.
    #[test]
    fn a_study_says_what_its_changes_did() {
        let experiment = study("sd, ssd, usb");
        let results = analyse(
            &experiment,
            &rows(
                &experiment,
                &[
                    [300.0, 310.0, 295.0, 305.0, 290.0],
                    [180.0, 185.0, 178.0, 182.0, 176.0],
                    [290.0, 320.0, 280.0, 315.0, 300.0],
                ],
            ),
        );
        let answer = study_answer(&experiment, &results).unwrap();
        assert!(
            answer.starts_with("Judged by the p95, of the 2 changes this study tried, 1 made it better and 1 made no change this study could tell from noise. The largest: storage=ssd instead of sd made it better: −39.9% (95%: "),
            "{answer}"
        );
        assert!(answer.ends_with("%)."), "{answer}");
    }

    /// A study of one cell names its figure; several cells without a
    /// baseline to compare with name the best one.
    #[test]
    fn a_study_without_comparisons_names_its_best_cell() {
        let one = study("sd");
        let results = analyse(&one, &rows(&one, &[[300.0, 310.0, 295.0, 305.0, 290.0]]));
        assert_eq!(
            study_answer(&one, &results).unwrap(),
            "This study measured one cell: its p95 was 300.0 ms on average."
        );
        let mut results = analyse(
            &study("sd, ssd"),
            &rows(
                &study("sd, ssd"),
                &[[300.0, 310.0, 295.0, 305.0, 290.0], [180.0; 5]],
            ),
        );
        results.comparisons.clear();
        assert_eq!(
            study_answer(&study("sd, ssd"), &results).unwrap(),
            "Of this study's 2 cells, storage=ssd had the best p95: 180.0 ms on average (no cell differs from a baseline in one factor only, so no change was tested)."
        );
    }
}
