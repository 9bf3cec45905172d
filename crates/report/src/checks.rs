//! The scenario's checks as reports say them: how each fared (or that it
//! never ran) and which of them a label's `check` errors are.

use headroom_bundle::summary::CheckFigures;
use std::collections::BTreeMap;

/// "12 passed, 3 failed (20.0%)", or "never ran" for a check no step
/// evaluated (not "0 passed, 0 failed", which reads as a success).
pub fn outcome(c: &CheckFigures) -> String {
    match c.failure_pct() {
        None => "never ran".into(),
        Some(pct) if c.failures > 0 => format!(
            "{} passed, {} failed ({})",
            c.passes,
            c.failures,
            percent(pct)
        ),
        Some(_) => format!("{} passed, 0 failed", c.passes),
    }
}

/// A failure share with the digits it needs: "20.0%", "<0.1%".
pub fn percent(pct: f64) -> String {
    if pct > 0.0 && pct < 0.1 {
        "<0.1%".into()
    } else {
        format!("{pct:.1}%")
    }
}

/// The checks that failed on `label`'s steps, most failures first
/// (a check several labels share counts its failures over all of them).
/// Empty when the bundle does not say which steps a check belongs to.
pub fn failed_on<'a>(
    checks: &'a BTreeMap<String, CheckFigures>,
    label: &str,
) -> Vec<(&'a str, &'a CheckFigures)> {
    let mut failed: Vec<(&str, &CheckFigures)> = checks
        .iter()
        .filter(|(_, c)| c.failures > 0 && c.labels.iter().any(|l| l == label))
        .map(|(name, c)| (name.as_str(), c))
        .collect();
    failed.sort_by(|a, b| b.1.failures.cmp(&a.1.failures).then(a.0.cmp(b.0)));
    failed
}

/// Every check that failed, most failures first: "contains "Welcome"
/// (20 failed); status 200 (3 failed)".
pub fn failed_anywhere(checks: &BTreeMap<String, CheckFigures>) -> String {
    let mut failed: Vec<(&String, &CheckFigures)> =
        checks.iter().filter(|(_, c)| c.failures > 0).collect();
    failed.sort_by(|a, b| b.1.failures.cmp(&a.1.failures).then(a.0.cmp(b.0)));
    failed
        .iter()
        .map(|(name, c)| format!("{name} ({} failed)", c.failures))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A label's `check` errors in words: "check: contains "Welcome"" (the
/// checks of its steps that failed), or plain "check" when unknown.
pub fn label_check_errors(checks: &BTreeMap<String, CheckFigures>, label: &str) -> String {
    let names: Vec<&str> = failed_on(checks, label)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    if names.is_empty() {
        "check".into()
    } else {
        format!("check: {}", names.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(passes: u64, failures: u64, labels: &[&str]) -> CheckFigures {
        CheckFigures {
            passes,
            failures,
            labels: labels.iter().map(|l| l.to_string()).collect(),
        }
    }

    #[test]
    fn a_check_that_never_ran_says_so() {
        assert_eq!(outcome(&figures(0, 0, &["a"])), "never ran");
        assert_eq!(outcome(&figures(12, 0, &["a"])), "12 passed, 0 failed");
        assert_eq!(
            outcome(&figures(12, 3, &["a"])),
            "12 passed, 3 failed (20.0%)"
        );
        assert_eq!(
            outcome(&figures(99_999, 1, &["a"])),
            "99999 passed, 1 failed (<0.1%)"
        );
    }

    #[test]
    fn a_labels_check_errors_name_the_checks_that_failed_there() {
        let checks: BTreeMap<String, CheckFigures> = [
            ("status 200".to_string(), figures(10, 2, &["home", "login"])),
            (
                "contains \"Welcome\"".to_string(),
                figures(1, 9, &["login"]),
            ),
            ("extract t".to_string(), figures(10, 0, &["login"])),
        ]
        .into();
        assert_eq!(
            label_check_errors(&checks, "login"),
            "check: contains \"Welcome\"; status 200"
        );
        assert_eq!(label_check_errors(&checks, "home"), "check: status 200");
        assert_eq!(label_check_errors(&checks, "other"), "check");
        assert_eq!(
            failed_anywhere(&checks),
            "contains \"Welcome\" (9 failed); status 200 (2 failed)"
        );
    }
}
