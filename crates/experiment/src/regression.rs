//! `--fail-if regression>5%`: what a study's regression limit says, and
//! whether the experiment file can show one.

use crate::figure::{Figure, ALL};
use crate::file::Experiment;
use headroom_units::quantity::parse_threshold_pct;

/// `regression>5%` or `regression(p95)>5%`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RegressionLimit {
    pub figure: Option<Figure>,
    pub threshold_pct: f64,
}

impl RegressionLimit {
    pub fn parse(text: &str) -> Result<RegressionLimit, String> {
        let usage = || {
            format!(
                "'{text}': write regression>5% or regression(p95)>5% (a percentage of the baseline)"
            )
        };
        let rest = text.trim().strip_prefix("regression").ok_or_else(usage)?;
        let (figure, rest) = match rest.strip_prefix('(') {
            Some(inner) => {
                let (name, after) = inner.split_once(')').ok_or_else(usage)?;
                let figure = Figure::parse(name).ok_or_else(|| {
                    let names: Vec<&str> = ALL.iter().map(|f| f.name()).collect();
                    format!("'{text}': '{name}' is not a figure ({})", names.join(", "))
                })?;
                (Some(figure), after)
            }
            None => (None, rest),
        };
        let value = rest.trim().strip_prefix('>').ok_or_else(usage)?;
        Ok(RegressionLimit {
            figure,
            threshold_pct: parse_threshold_pct(value.trim())?,
        })
    }

    /// Refuses a limit the experiment cannot show: no factor with a
    /// baseline and another level, no cell one factor away from a baseline
    /// cell, or a figure the experiment does not measure.
    pub fn check(&self, experiment: &Experiment) -> Result<(), String> {
        if experiment.factors.iter().all(|f| f.levels.len() < 2) {
            return Err(
                "--fail-if regression needs a factor with two levels or more (a baseline and a level to compare with it)".into(),
            );
        }
        let comparable = experiment.factors.iter().any(|factor| {
            let baseline = experiment.baseline_of(factor);
            let empty = vec![Vec::new(); experiment.cells.len()];
            !headroom_analysis::experiment::against_baseline(
                &factor.name,
                &baseline,
                &experiment.cells,
                &empty,
            )
            .is_empty()
        });
        if !comparable {
            return Err(
                "--fail-if regression needs a cell that differs from a baseline cell in one factor only; the file's cells: have none".into(),
            );
        }
        if let Some(figure) = self.figure {
            if !experiment.figures.contains(&figure) {
                return Err(format!(
                    "--fail-if regression({}): the experiment does not measure {}; add it to measure:",
                    figure.name(),
                    figure.name()
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_names_its_figure_and_percentage() {
        assert_eq!(
            RegressionLimit::parse("regression>5%").unwrap(),
            RegressionLimit {
                figure: None,
                threshold_pct: 5.0
            }
        );
        let p95 = RegressionLimit::parse(" regression(p95) > 2.5% ").unwrap();
        assert_eq!(p95.threshold_pct, 2.5);
        assert!(p95.figure.is_some());
        assert!(RegressionLimit::parse("regression(nope)>5%")
            .unwrap_err()
            .contains("'nope' is not a figure"));
        assert!(RegressionLimit::parse("slower>5%")
            .unwrap_err()
            .contains("write regression>5%"));
        assert!(RegressionLimit::parse("regression>5000%")
            .unwrap_err()
            .contains("between 0% and 1000%"));
    }
}
