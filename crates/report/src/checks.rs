//! The scenario's checks as reports say them: how each fared, or that it
//! never ran.

use headroom_bundle::summary::CheckFigures;

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
}
