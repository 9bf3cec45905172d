//! Several bench bundles on one page (`headroom report A/ B/ C/ D/`, or
//! `compare -o` of bench bundles): the hosts side by side, as 000 charts
//! sysbench in four environments and 002 five Pi models. Per benchmark,
//! every figure's mean and 95% interval on each host with its change
//! against the first, one bar chart per unit with a bar per host, the
//! settings that differ between the hosts' runs; then the environment
//! fields in which the hosts differ.

use crate::bench::{changes, cov, figure, half_interval, setting_differences};
use crate::bench_html::short_name;
use crate::charts::{interval_bars, IntervalBar};
use crate::compare::differences;
use crate::html::{escape, to_value, STYLE};
use headroom_analysis::experiment::Summary;
use headroom_bundle::bench::{BenchBundle, Measure};
use std::fmt::Write;

const EXTRA_STYLE: &str = "td.wrap,th.wrap{white-space:normal;text-align:left;min-width:8em}\
     .better{color:#1b5e20}.worse{color:#b71c1c}";

/// The page of `benches`, each named by `names` (its directory); the
/// first is the baseline of the changes.
pub fn render_benches_report(benches: &[BenchBundle], names: &[String]) -> String {
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>headroom bench: {n} hosts</title><style>{STYLE}{EXTRA_STYLE}</style></head><body><main>\n\
         <h1>headroom bench: {n} bundles side by side</h1>\
         <p class=\"meta\">Each figure's mean over its repetitions with half its 95% interval; the change is \
         against the first bundle, with its 95% interval (Fieller's), and says better or worse only \
         when the interval excludes no change.</p>\n",
        n = benches.len()
    );
    hosts(&mut html, benches, names);
    let mut benchmarks: Vec<&str> = Vec::new();
    for b in benches {
        for r in &b.results {
            if !benchmarks.contains(&r.benchmark.as_str()) {
                benchmarks.push(&r.benchmark);
            }
        }
    }
    for benchmark in benchmarks {
        section(&mut html, benches, names, benchmark);
    }
    environment(&mut html, benches, names);
    html.push_str("</main></body></html>\n");
    html
}

/// Who each bundle is: its directory, host, CPU, cores, memory, kernel.
fn hosts(html: &mut String, benches: &[BenchBundle], names: &[String]) {
    html.push_str(
        "<div class=\"scroll\"><table><tr><th class=\"wrap\">Bundle</th><th class=\"wrap\">Host</th>\
         <th class=\"wrap\">CPU</th><th>Cores</th><th>Memory (MB)</th><th class=\"wrap\">Kernel</th>\
         <th class=\"wrap\">Started</th><th class=\"wrap\">Benchmarks</th></tr>",
    );
    for (b, name) in benches.iter().zip(names) {
        let f = &b.fingerprint;
        let _ = write!(
            html,
            "<tr><td class=\"wrap\">{}</td><td class=\"wrap\">{}</td><td class=\"wrap\">{}</td><td>{}</td>\
             <td>{}</td><td class=\"wrap\">{}</td><td class=\"wrap\">{}</td><td class=\"wrap\">{}</td></tr>",
            escape(name),
            escape(f.raspberry_pi_model.as_deref().unwrap_or(&f.hostname)),
            escape(&f.cpu_model),
            f.cores,
            f.memory_mb,
            escape(&f.kernel),
            escape(&b.started),
            escape(
                &b.results
                    .iter()
                    .map(|r| r.benchmark.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        );
    }
    html.push_str("</table></div>\n");
}

/// The measure `key` of `benchmark` in bundle `b`, if it ran.
fn measure<'a>(b: &'a BenchBundle, benchmark: &str, key: &str) -> Option<&'a Measure> {
    b.results
        .iter()
        .find(|r| r.benchmark == benchmark)?
        .measures
        .iter()
        .find(|m| m.key == key)
}

fn section(html: &mut String, benches: &[BenchBundle], names: &[String], benchmark: &str) {
    let _ = write!(html, "<h2 id=\"{id}\">{id}</h2>", id = escape(benchmark));
    // The method as the first bundle that ran it says it.
    if let Some(r) = benches
        .iter()
        .flat_map(|b| &b.results)
        .find(|r| r.benchmark == benchmark)
    {
        let _ = write!(html, "<p>{}</p>", escape(&r.method));
    }
    let measures = measures_of(benches, benchmark);
    figures_table(html, benches, names, benchmark, &measures);
    html.push_str("<div class=\"charts\">");
    charts(html, benches, names, benchmark, &measures);
    html.push_str("</div>");
    settings_differ(html, benches, names, benchmark);
}

/// The figures of `benchmark` in `benches`, in the order of their first
/// appearance.
fn measures_of<'a>(benches: &'a [BenchBundle], benchmark: &str) -> Vec<&'a Measure> {
    let mut measures: Vec<&Measure> = Vec::new();
    for b in benches {
        if let Some(r) = b.results.iter().find(|r| r.benchmark == benchmark) {
            for m in &r.measures {
                if !measures.iter().any(|x| x.key == m.key) {
                    measures.push(m);
                }
            }
        }
    }
    measures
}

/// The table of the figures, a row per figure and bundle, each against
/// the first bundle's.
fn figures_table(
    html: &mut String,
    benches: &[BenchBundle],
    names: &[String],
    benchmark: &str,
    measures: &[&Measure],
) {
    let base = &benches[0];
    let base_changes: Vec<Vec<crate::bench::Change>> =
        benches.iter().map(|b| changes(base, b)).collect();
    html.push_str(
        "<div class=\"scroll\"><table><tr><th class=\"wrap\">Figure</th><th class=\"wrap\">Bundle</th>\
         <th>Mean</th><th>95% ±</th><th>CoV</th><th>n</th><th class=\"wrap\">Against the first</th></tr>",
    );
    for m in measures {
        for (i, (b, name)) in benches.iter().zip(names).enumerate() {
            let Some(s) = measure(b, benchmark, &m.key).and_then(|x| Summary::of(&x.values)) else {
                let _ = write!(
                    html,
                    "<tr><td class=\"wrap\">{}</td><td class=\"wrap\">{}</td><td>—</td><td></td><td></td><td>0</td><td class=\"wrap\">not measured</td></tr>",
                    escape(&m.name),
                    escape(name)
                );
                continue;
            };
            let against = if i == 0 {
                "(baseline)".to_string()
            } else {
                base_changes[i]
                    .iter()
                    .find(|c| c.benchmark == benchmark && c.measure.key == m.key)
                    .map_or("—".into(), against_first)
            };
            let _ = write!(
                html,
                "<tr><td class=\"wrap\">{}{}</td><td class=\"wrap\">{}</td><td><b>{}</b> {unit}</td><td>{} {unit}</td>\
                 <td>{}</td><td>{}</td><td class=\"wrap\">{against}</td></tr>",
                escape(&m.name),
                if m.higher_is_better { "" } else { " <span class=\"meta\">(lower is better)</span>" },
                escape(name),
                figure(s.mean),
                half_interval(&s),
                cov(&s),
                s.n,
                unit = escape(&m.unit)
            );
        }
    }
    html.push_str("</table></div>\n");
}

/// A figure's change against the first bundle's, its interval and its
/// verdict.
fn against_first(c: &crate::bench::Change) -> String {
    let change = c.change_pct.map_or("—".into(), |p| format!("{p:+.1}%"));
    let interval = c.ci_pct.map_or(String::new(), |(lo, hi)| {
        format!(" (95%: {lo:+.1}% to {hi:+.1}%)")
    });
    format!(
        "<span class=\"{v}\">{change}{interval}, {v}</span>",
        v = c.verdict
    )
}

/// One chart per unit (of eight figures at most): a group per figure, a
/// bar per bundle.
fn charts(
    html: &mut String,
    benches: &[BenchBundle],
    names: &[String],
    benchmark: &str,
    measures: &[&Measure],
) {
    let mut units: Vec<&str> = Vec::new();
    for m in measures {
        if !units.contains(&m.unit.as_str()) {
            units.push(&m.unit);
        }
    }
    for unit in units {
        let of_unit: Vec<&&Measure> = measures.iter().filter(|m| m.unit == unit).collect();
        if of_unit.len() > 8 {
            continue;
        }
        let groups: Vec<String> = of_unit.iter().map(|m| short_name(&m.name)).collect();
        let series: Vec<(String, Vec<Option<IntervalBar>>)> = benches
            .iter()
            .zip(names)
            .map(|(b, name)| {
                let bars = of_unit
                    .iter()
                    .map(|m| {
                        measure(b, benchmark, &m.key)
                            .and_then(|x| Summary::of(&x.values))
                            .map(|s| IntervalBar {
                                mean: s.mean,
                                ci95: s.ci95,
                            })
                    })
                    .collect();
                (name.clone(), bars)
            })
            .collect();
        let title = format!("{benchmark} ({unit})");
        let svg = interval_bars(&title, unit, &groups, &series);
        let _ = write!(
            html,
            "<figure>{svg}<figcaption>{}: a bar per bundle, the whisker its 95% interval.</figcaption></figure>",
            escape(&title)
        );
    }
}

/// The bundles that ran `benchmark` with other settings than the first,
/// if any.
fn settings_differ(html: &mut String, benches: &[BenchBundle], names: &[String], benchmark: &str) {
    let base = &benches[0];
    let differ: Vec<String> = benches
        .iter()
        .zip(names)
        .skip(1)
        .flat_map(|(b, name)| {
            setting_differences(base, b)
                .into_iter()
                .filter(|d| d.starts_with(&format!("{benchmark} ")))
                .map(move |d| format!("{name}: {d}"))
        })
        .collect();
    if !differ.is_empty() {
        let _ = write!(
            html,
            "<p class=\"verdict\">Measured with other settings than the first (their figures are not the same measure): {}</p>",
            escape(&differ.join("; "))
        );
    }
}

/// The environment fields in which the hosts differ.
fn environment(html: &mut String, benches: &[BenchBundle], names: &[String]) {
    let fingerprints: Vec<Vec<(String, serde_json::Value)>> = benches
        .iter()
        .map(|b| vec![("host".to_string(), to_value(&b.fingerprint))])
        .collect();
    let diffs = differences(&fingerprints);
    html.push_str("<h2>Environment</h2>");
    if diffs.is_empty() {
        html.push_str("<p class=\"meta\">No fingerprint field differs.</p>");
        return;
    }
    let mut diffs = diffs;
    for d in &mut diffs {
        d.field = d.field.trim_start_matches("host.").to_string();
    }
    crate::compare_html::differences_table(html, names, &diffs);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::test_bundle;

    #[test]
    fn four_hosts_share_one_page() {
        let benches = vec![
            test_bundle("pi4-sd", vec![1478.0, 1480.0, 1476.0], "10000"),
            test_bundle("pi4-ssd", vec![1479.0, 1477.0, 1481.0], "10000"),
            test_bundle("pi5", vec![2737.0, 2740.0, 2734.0], "10000"),
            test_bundle("vm", vec![5300.0, 5290.0, 5310.0], "20000"),
        ];
        let names: Vec<String> = ["sd", "ssd", "pi5", "vm"].map(String::from).to_vec();
        let html = render_benches_report(&benches, &names);
        assert!(html.contains("4 bundles side by side"));
        // Each host's mean, the first as the baseline, a real change said.
        assert!(
            html.contains("<b>1,478</b>") || html.contains("<b>1478</b>"),
            "{html}"
        );
        assert!(html.contains("(baseline)"));
        assert!(
            html.contains("+85.2%") && html.contains(", better</span>"),
            "{html}"
        );
        assert!(html.contains(", noise</span>"), "{html}");
        // One chart with a bar per host.
        assert_eq!(html.matches("<svg").count(), 1, "{html}");
        for name in &names {
            assert!(html.contains(&format!(">{name}<")), "{name}");
        }
        // The vm measured with other settings: said.
        assert!(html.contains("vm: cpu max_prime: 10000 vs 20000"), "{html}");
        // The hosts differ by name: the environment table says so.
        assert!(html.contains("<td>hostname</td>"), "{html}");
        assert!(!html.contains("<script"));
    }
}
