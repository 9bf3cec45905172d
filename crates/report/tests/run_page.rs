//! The run report and the terminal summary of a bundle with checks (one
//! that never ran, two with long names that failed every time), a 404
//! label and long error reasons: `tests/data/school` is a bundle that
//! `headroom run` wrote against the testbed (its manifest and intervals).

use headroom_report::html::render_report;
use headroom_report::run_data::RunData;
use headroom_report::{render_summary, ReportInput};
use std::path::Path;

fn school() -> RunData {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/school");
    RunData::load(&dir, "school").expect("the fixture bundle reads")
}

fn terminal(run: &RunData) -> String {
    render_summary(&ReportInput {
        status: run.manifest.status,
        bundle: &run.bundle,
        target: &run.manifest.target,
        summary: &run.summary,
        warnings: &[],
        verdicts: &[],
        label_order: &run.manifest.labels,
        arrive_within_s: run.manifest.profile.arrive_within_s,
    })
}

/// The part of `html` from `start` to the end of the table after it.
fn section<'a>(html: &'a str, start: &str) -> &'a str {
    let from = html
        .find(start)
        .unwrap_or_else(|| panic!("no {start} in the report"));
    let rest = &html[from..];
    &rest[..rest.find("</table>").expect("a table")]
}

#[test]
fn the_run_report_has_a_checks_section() {
    let html = render_report(&[school()]);
    let checks = section(&html, "<h3>Checks</h3>");
    assert!(checks.contains("5 checks: 2 failed at least once, 1 never ran."));
    // Each check with its step's label, passed, failed and failure %.
    assert!(
        checks.contains(
            "<tr><td class=\"text\">the course page welcomes its students with the full course \
             description and the teacher&#39;s name</td><td class=\"text\">02 course view as a guest</td>\
             <td>0</td><td class=\"Unacceptable\">72</td><td>100.0</td></tr>"
        ),
        "{checks}"
    );
    assert!(
        checks.contains(
            "<tr><td class=\"text\">status 200</td><td class=\"text\">01 front page</td>\
             <td>76</td><td>0</td><td>0.0</td></tr>"
        ),
        "{checks}"
    );
    // A check no user reached says so, not "0 passed, 0 failed".
    assert!(
        checks.contains(
            "<tr><td class=\"text\">admin page shows site administration</td>\
             <td class=\"text\">05 admin only</td><td colspan=\"3\" class=\"never\">never ran</td></tr>"
        ),
        "{checks}"
    );
}

#[test]
fn the_terminal_says_which_checks_never_ran() {
    let text = terminal(&school());
    let line = |start: &str| {
        text.lines()
            .find(|l| l.contains(start))
            .unwrap_or_else(|| panic!("no line with {start}:\n{text}"))
            .to_string()
    };
    let never = line("admin page shows site administration");
    assert!(
        never.contains("never ran  (step 05 admin only)") && !never.contains("0 passed"),
        "{never}"
    );
    assert!(
        line("ok   status 200 ").contains("76 passed, 0 failed  (step 01 front page)"),
        "{text}"
    );
    assert!(
        line("FAIL the course page welcomes").contains("0 passed, 72 failed (100.0%)"),
        "{text}"
    );
    // Its step's label ran no sample: no times, not "0µs".
    let label = line("  05 admin only ");
    assert!(!label.contains("0µs") && label.contains(" - "), "{label}");
}

#[test]
fn top_errors_per_label_name_the_check_that_failed() {
    let html = render_report(&[school()]);
    let top = section(&html, "<h3>Top errors per label</h3>");
    assert!(
        top.contains(
            "check: the course page welcomes its students with the full course description \
             and the teacher&#39;s name (72)"
        ),
        "{top}"
    );
    assert!(
        top.contains("check: matches /Timetable for grade 7, week 48:"),
        "{top}"
    );
    assert!(!top.contains(">check (72)"), "{top}");
    // The terminal's errors by kind name the checks too.
    let text = terminal(&school());
    let errors = text
        .lines()
        .find(|l| l.contains("Errors by kind:"))
        .expect("errors by kind");
    assert!(
        errors.contains(
            "check 144 (matches /Timetable for grade 7, week 48: (Monday|Tuesday|Wednesday|Thursday|Friday) \
             lessons with rooms, teachers and substitutions/ (72 failed); the course page welcomes its \
             students with the full course description and the teacher's name (72 failed))"
        ),
        "{errors}"
    );
}

/// Long reasons (a check's whole sentence, a long URL) wrap inside their
/// cell instead of running one line past the page's edge: every cell that
/// holds a reason is a text cell, and text cells wrap.
#[test]
fn long_error_reasons_wrap() {
    let html = render_report(&[school()]);
    let style = &html[html.find("<style>").unwrap()..html.find("</style>").unwrap()];
    let rule = style
        .split('}')
        .find(|r| r.starts_with("td.text{"))
        .unwrap_or_else(|| panic!("no td.text rule in {style}"));
    assert!(
        rule.contains("white-space:normal") && rule.contains("overflow-wrap:anywhere"),
        "{rule}"
    );
    let errors = section(&html, "<h3>Errors</h3>");
    assert!(
        errors.contains(
            "<td class=\"text\">matches /Timetable for grade 7, week 48: (Monday|Tuesday|Wednesday|Thursday|Friday) \
             lessons with rooms, teachers and substitutions/ (72 failed); the course page"
        ),
        "{errors}"
    );
    let top = section(&html, "<h3>Top errors per label</h3>");
    assert!(
        top.contains("<td class=\"text\">check: the course page welcomes"),
        "{top}"
    );
    let kept = section(&html, "<h3>Failed exchanges kept</h3>");
    assert!(kept.contains("<td class=\"text\">check failed: "), "{kept}");
}
