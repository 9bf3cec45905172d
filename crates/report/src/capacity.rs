//! The terminal summary of a capacity search.

use headroom_bundle::capacity::{CapacityResult, Level};

/// The terminal summary of a search.
pub fn render_capacity(result: &CapacityResult) -> String {
    if result.levels.is_empty() {
        return format!(
            "\n  No level was measured.\n\n  Capacity: {}\n  Bundle: {}\n",
            result.verdict(),
            result.bundle.display()
        );
    }
    let mut out = String::from(
        "\n  users   Apdex          errors      p50      p90      p95    req/s   server CPU   target\n",
    );
    let mut levels: Vec<&Level> = result.levels.iter().collect();
    levels.sort_by_key(|l| l.users);
    for l in levels {
        let cpu = l
            .resources
            .iter()
            .filter_map(|h| h.cpu_avg.map(|c| format!("{c:.0}%")))
            .collect::<Vec<_>>()
            .join("/");
        let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.0}ms"));
        out.push_str(&format!(
            "  {:>5}   {:<14} {:>5.2}%  {:>7}  {:>7}  {:>7}  {:>7.1}   {:>10}   {}{}\n",
            l.users,
            l.apdex.map_or("-".into(), |a| format!(
                "{a:.3} {}",
                l.apdex_rating.as_deref().unwrap_or("")
            )),
            l.error_rate * 100.0,
            ms(l.p50_ms),
            ms(l.p90_ms),
            ms(l.p95_ms),
            l.rps,
            if cpu.is_empty() { "-".into() } else { cpu },
            if l.good { "met" } else { "broken" },
            if l.generator_limited {
                " (generator limited)"
            } else {
                ""
            }
        ));
    }
    out.push_str(&format!("\n  Capacity: {}\n", result.verdict()));
    if let Some(little) = &result.little {
        out.push_str(&format!("  Little's law: {}\n", little.describe()));
    }
    if let Some((first, rest)) = result.host_bench.split_first() {
        out.push_str(&format!("  Beside the bottleneck, {first}:\n"));
        for line in rest {
            out.push_str(&format!("    {line}\n"));
        }
    }
    out.push_str(&format!("  Bundle: {}\n", result.bundle.display()));
    out
}
