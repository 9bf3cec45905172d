//! `--junit FILE`: the run as a JUnit XML test suite, so CI systems show
//! each `--fail-if` threshold as a test: one test case per criterion, plus
//! one that the run itself completed.

use crate::html::escape;
use crate::json::ReportInput;
use headroom_bundle::summary::RunStatus;
use std::fmt::Write;

/// The JUnit XML document of a run that could not start (an unreachable
/// target, a bad certificate, an unwritable bundle): one failed test case
/// `run started` with the reason, so a CI publisher finds a result.
pub fn junit_not_started(reason: &str) -> String {
    let reason = escape(reason);
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <testsuites name=\"headroom\" tests=\"1\" failures=\"1\" errors=\"0\" time=\"0.000\">\n\
         \x20 <testsuite name=\"headroom\" tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\" time=\"0.000\">\n\
         \x20   <testcase classname=\"headroom.run\" name=\"run started\" time=\"0\">\n\
         \x20     <failure type=\"run\" message=\"{reason}\"/>\n\
         \x20   </testcase>\n\
         \x20 </testsuite>\n\
         </testsuites>\n"
    )
}

/// The JUnit XML document of a capacity search: a test case that the
/// search completed with an answer (the verdict), and one per `--fail-if`
/// criterion on the answer.
pub fn junit_capacity(
    url: &str,
    verdict: &str,
    completed: bool,
    elapsed_s: f64,
    verdicts: &[headroom_analysis::Verdict],
) -> String {
    let failures = verdicts.iter().filter(|v| v.failed).count() + usize::from(!completed);
    let tests = verdicts.len() + 1;
    let suite = escape(&format!("headroom capacity {url}"));
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"headroom\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" time=\"{elapsed_s:.3}\">"
    );
    let _ = writeln!(
        xml,
        "  <testsuite name=\"{suite}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\" time=\"{elapsed_s:.3}\">"
    );
    let _ = writeln!(
        xml,
        "    <testcase classname=\"headroom.capacity\" name=\"search completed\" time=\"{elapsed_s:.3}\">"
    );
    if completed {
        let _ = writeln!(xml, "      <system-out>{}</system-out>", escape(verdict));
    } else {
        let _ = writeln!(
            xml,
            "      <failure type=\"search\" message=\"{}\"/>",
            escape(verdict)
        );
    }
    xml.push_str("    </testcase>\n");
    for v in verdicts {
        let _ = writeln!(
            xml,
            "    <testcase classname=\"headroom.fail-if\" name=\"{}\" time=\"0\">",
            escape(&v.criterion.expression)
        );
        if v.failed {
            let _ = writeln!(
                xml,
                "      <failure type=\"fail-if\" message=\"{}\"/>",
                escape(&v.message)
            );
        } else {
            let _ = writeln!(xml, "      <system-out>{}</system-out>", escape(&v.message));
        }
        xml.push_str("    </testcase>\n");
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// The JUnit XML document; `started_at` is the run's RFC 3339 start.
pub fn junit_xml(input: &ReportInput<'_>, started_at: &str) -> String {
    let elapsed = input.summary.elapsed_s;
    let completed = input.status == RunStatus::Complete;
    let failures = input.verdicts.iter().filter(|v| v.failed).count() + usize::from(!completed);
    let tests = input.verdicts.len() + 1;
    let suite = escape(&format!("headroom {}", input.target));
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"headroom\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" time=\"{elapsed:.3}\">"
    );
    let _ = writeln!(
        xml,
        "  <testsuite name=\"{suite}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\" time=\"{elapsed:.3}\" timestamp=\"{}\">",
        escape(started_at)
    );
    let _ = writeln!(xml, "    <properties>");
    let total = &input.summary.total;
    for (name, value) in [
        ("bundle", input.bundle.display().to_string()),
        ("status", format!("{:?}", input.status).to_lowercase()),
        ("requests", total.count.to_string()),
        ("errors", total.errors.to_string()),
        (
            "apdex",
            total.apdex.map_or(String::new(), |a| format!("{a:.3}")),
        ),
        ("rps", format!("{:.1}", total.rps)),
    ] {
        let _ = writeln!(
            xml,
            "      <property name=\"{name}\" value=\"{}\"/>",
            escape(&value)
        );
    }
    let _ = writeln!(xml, "    </properties>");
    let _ = write!(
        xml,
        "    <testcase classname=\"headroom.run\" name=\"run completed\" time=\"{elapsed:.3}\""
    );
    if completed {
        xml.push_str("/>\n");
    } else {
        let _ = writeln!(
            xml,
            ">\n      <failure type=\"run\" message=\"the run ended {}\"/>\n    </testcase>",
            format!("{:?}", input.status).to_lowercase()
        );
    }
    for verdict in input.verdicts {
        let name = escape(&verdict.criterion.expression);
        let _ = write!(
            xml,
            "    <testcase classname=\"headroom.fail-if\" name=\"{name}\" time=\"0\""
        );
        if verdict.failed {
            let _ = writeln!(
                xml,
                ">\n      <failure type=\"threshold\" message=\"{}\"/>\n    </testcase>",
                escape(&verdict.message)
            );
        } else {
            let _ = writeln!(
                xml,
                ">\n      <system-out>{}</system-out>\n    </testcase>",
                escape(&verdict.message)
            );
        }
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}
