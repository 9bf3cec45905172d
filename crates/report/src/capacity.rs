//! The terminal summary of a capacity search.

use headroom_bundle::capacity::{CapacityResult, Level, LogPeakRecord};
use headroom_units::quantity::{count, round_figure as seconds, span};

/// The terminal summary of a search.
pub fn render_capacity(result: &CapacityResult) -> String {
    if result.levels.is_empty() {
        return format!(
            "\n  No level was measured.\n\n  Capacity: {}\n  Bundle: {}\n",
            result.verdict(),
            result.bundle.display()
        );
    }
    let (rows, left) = level_table(result);
    let mut out = String::from("\n");
    if let Some(answer) = crate::first_sentence::search_answer(result) {
        out.push_str(&crate::first_sentence::indented(&answer));
        out.push('\n');
    }
    out.push_str(&padded(&rows, &left));
    out.push_str(&format!("\n  Capacity: {}\n", result.verdict()));
    capacity_notes(&mut out, result);
    out.push_str(&format!("  Bundle: {}\n", result.bundle.display()));
    out
}

/// The table of the levels, by users: its rows (the header first) and
/// which columns are text, left-aligned (the Apdex with its rating word,
/// the target, how it ran, why), where figures are right-aligned.
fn level_table(result: &CapacityResult) -> (Vec<Vec<String>>, Vec<bool>) {
    let mut levels: Vec<&Level> = result.levels.iter().collect();
    levels.sort_by_key(|l| l.users);
    // The users as the answer calls them (students, ...).
    let (_, many) = result.setup.nouns();
    let why = format!("why this many {many}");
    let header: Vec<String> = [
        many.as_str(),
        "Apdex",
        "errors",
        "p50",
        "p90",
        "p95",
        result.setup.rate(),
        "machine CPU",
    ]
    .iter()
    .map(|h| h.to_string())
    .collect();
    let processes = watched_processes(result);
    let mut header = header;
    // A workload from an access log: each level in its peaks.
    let peak = result.setup.log_peak.as_ref();
    if peak.is_some() {
        header.insert(1, "× log's peak".into());
    }
    if !processes.is_empty() {
        header.push(server_cpu_title(&processes));
    }
    header.push("target".into());
    header.push("ran (warm-up + measured)".into());
    header.push(why.clone());
    let mut rows = vec![header];
    for l in levels {
        rows.push(level_row(l, peak, !processes.is_empty()));
    }
    let text_columns = ["Apdex", "target", "ran (warm-up + measured)", why.as_str()];
    let left: Vec<bool> = rows[0]
        .iter()
        .map(|h| text_columns.contains(&h.as_str()))
        .collect();
    (rows, left)
}

/// A level's row: its figures, in the log's peaks when the workload came
/// from a log (`peak`), its server's CPU when processes were watched, and
/// whether it met the target, how it ran and why.
fn level_row(l: &Level, peak: Option<&LogPeakRecord>, processes_watched: bool) -> Vec<String> {
    let cpu = machine_cpu(l);
    let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.0}ms"));
    let mut row = vec![
        l.users.to_string(),
        l.apdex.map_or("-".into(), |a| {
            format!("{a:.3} {}", l.apdex_rating.as_deref().unwrap_or(""))
        }),
        format!("{:.2}%", l.error_rate * 100.0),
        ms(l.p50_ms),
        ms(l.p90_ms),
        ms(l.p95_ms),
        format!("{:.1}", l.rps),
        if cpu.is_empty() { "-".into() } else { cpu },
    ];
    if let Some(peak) = peak {
        row.insert(
            1,
            format!("{:.2}", f64::from(l.users) / peak.users.max(1) as f64),
        );
    }
    if processes_watched {
        row.push(server_cpu(l).unwrap_or_else(|| "-".into()));
    }
    row.extend([
        l.verdict().into(),
        format!(
            "{}{}",
            ran(l),
            if l.generator_limited {
                " (generator limited)"
            } else {
                ""
            }
        ),
        l.why.clone(),
    ]);
    row
}

/// The lines under the capacity: one user's experience, the capacity in
/// the log's peaks, the phases, the uncertainty, Little's law, other
/// think times, why a level is not valid, and the host's benchmarks.
fn capacity_notes(out: &mut String, result: &CapacityResult) {
    if let Some(line) = one_user(result) {
        out.push_str(&format!("  {line}\n"));
    }
    if let Some(line) = in_peaks(result) {
        out.push_str(&format!("  {line}\n"));
    }
    if let Some(line) = phases_at_capacity(result) {
        out.push_str(&format!("  {line}\n"));
    }
    for line in uncertainty(result) {
        out.push_str(&format!("  {line}\n"));
    }
    if let Some(little) = &result.little {
        out.push_str(&format!(
            "  Little's law: {}\n",
            little.describe(result.setup.rate())
        ));
    }
    if let Some(line) = other_think_times(result) {
        out.push_str(&format!("  {line}\n"));
    }
    for why in &result.invalid {
        out.push_str(&format!("  Not valid: {why}\n"));
    }
    if let Some((first, rest)) = result.host_bench.split_first() {
        out.push_str(&format!("  Beside the bottleneck, {first}:\n"));
        for line in rest {
            out.push_str(&format!("    {line}\n"));
        }
    }
}

/// "That is 4.20× the log's peak (...)": the capacity in peaks of the log
/// the workload was written from.
pub fn in_peaks(result: &CapacityResult) -> Option<String> {
    let peak = result.setup.log_peak.as_ref()?;
    let users = result.capacity.users?;
    Some(format!(
        "That is {}{}",
        if result.capacity.at_least {
            "at least "
        } else {
            ""
        },
        peak.times(users)
    ))
}

/// "A student: runs the journey ...": what one user is, when the search
/// said it.
pub fn one_user(result: &CapacityResult) -> Option<String> {
    if result.setup.user.is_empty() {
        return None;
    }
    let (one, _) = result.setup.nouns();
    // "A user", "an admin": "u" sounds as "you".
    let vowel = one
        .chars()
        .next()
        .is_some_and(|c| "aeio".contains(c.to_ascii_lowercase()));
    let article = if vowel { "An" } else { "A" };
    Some(format!("{article} {one}: {}", result.setup.user))
}

/// A lesson search's answer, phase by phase: "At 400 students: arrival
/// 0–2 s: ... met; reading 2–6 s: ... met".
pub fn phases_at_capacity(result: &CapacityResult) -> Option<String> {
    let users = result.capacity.users?;
    let level = result.quoted_level().filter(|l| !l.phases.is_empty())?;
    let (one, many) = result.setup.nouns();
    let mut phases: Vec<String> = level.phases.iter().map(|p| p.describe()).collect();
    // A lesson that ran only its arrival: the reading that stands for it.
    if let Some((k, by, reading)) = result.reading_as(level) {
        phases.push(format!(
            "not read again: level {k}, {}, {}",
            count(by.users as usize, &one, &many),
            reading.describe()
        ));
    }
    Some(format!(
        "At {}{}: {}",
        count(users as usize, &one, &many),
        match &result.capacity.quoted {
            Some(q) => format!(" ({})", q.describe()),
            None => String::new(),
        },
        phases.join("; ")
    ))
}

/// The capacity's users at people's think times, as a model from Little's
/// law: the same throughput and response time, another think. `None`
/// without an answer, or when a throughput cap paced the users, or of a
/// lesson search: its students read as they do, and a lesson's burst of
/// logins, not the steady reading Little's law holds, is what limits it
/// (on the testbed the model said 273 where the lessons measured 199).
pub fn other_think_times(result: &CapacityResult) -> Option<String> {
    let little = result.little.as_ref()?;
    result.capacity.users?;
    if result.capacity.at_least || little.rps <= 0.0 || result.setup.is_lesson() {
        return None;
    }
    let (_, many) = result.setup.nouns();
    let rows: Vec<String> = little
        .other_think_times()
        .into_iter()
        .map(|(think, users)| {
            format!(
                "{} s → {}",
                think.as_secs(),
                count(users.floor() as usize, &many, &many)
            )
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(format!(
        "Reading longer between requests (a model: {:.1} {} at {:.3} s mean response, the capacity's, held whatever the think; a search with that think measures it): {}",
        little.rps,
        result.setup.rate(),
        little.mean_response_s,
        rows.join(", ")
    ))
}

/// The whole machine's CPU of each monitored host over the level, "53%"
/// or "53%/18%": every process on it, the generator's too when it runs
/// there; empty when nothing was monitored.
pub fn machine_cpu(level: &Level) -> String {
    level
        .resources
        .iter()
        .filter_map(|h| h.cpu_avg.map(|c| format!("{c:.0}%")))
        .collect::<Vec<_>>()
        .join("/")
}

/// The server processes the search watched (`--process`), else those the
/// levels' figures name (a capacity.json from before the setup said so).
pub fn watched_processes(result: &CapacityResult) -> Vec<String> {
    if !result.setup.processes.is_empty() {
        return result.setup.processes.clone();
    }
    let mut names: Vec<String> = Vec::new();
    for (name, _) in result
        .levels
        .iter()
        .flat_map(|l| &l.resources)
        .flat_map(|h| &h.processes)
    {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    names
}

/// "server CPU (php-fpm, nginx)".
pub fn server_cpu_title(processes: &[String]) -> String {
    format!("server CPU ({})", processes.join(", "))
}

/// The watched processes' CPU of each host that has them, summed, in %
/// of the whole host (the scale of the machine's CPU): "41%", or
/// "41%/12%" for two hosts; `None` when no host had a watched process.
pub fn server_cpu(level: &Level) -> Option<String> {
    let hosts: Vec<String> = level
        .resources
        .iter()
        .filter(|h| !h.processes.is_empty())
        .map(|h| format!("{:.0}%", h.processes.iter().map(|p| p.1).sum::<f64>()))
        .collect();
    (!hosts.is_empty()).then(|| hosts.join("/"))
}

/// The line that opens a search: its URL, target, ladder and how each
/// level warms up and measures (`start` and `max`: the ladder's ends).
pub fn search_heading(
    setup: &headroom_bundle::capacity::CapacitySetup,
    target: &headroom_analysis::capacity::ApdexGoal,
    start: u32,
    max: u32,
) -> String {
    let (one, many) = setup.nouns();
    let ladder = if setup.ladder == "model" {
        format!(
            "first what a page view costs (short non-stop levels, about a minute), then lessons aimed by a model of the lesson start{}",
            if max < headroom_bundle::capacity::MOST_MODELLED {
                format!(", at most {}", count(max as usize, &one, &many))
            } else {
                String::new()
            }
        )
    } else {
        format!(
            "{} ladder from {} up to {} ({})",
            setup.ladder,
            start,
            count(max as usize, &one, &many),
            if setup.ladder == "aimed" {
                format!(
                    "steps of at least {}",
                    count(setup.step as usize, &one, &many)
                )
            } else {
                format!("steps of {}", count(setup.step as usize, &one, &many))
            }
        )
    };
    format!(
        "headroom capacity: {} — target Apdex ≥ {:.2}, errors ≤ {:.1}%{}; {}; {}",
        setup.url,
        target.apdex,
        target.max_error * 100.0,
        target
            .p95_max
            .map_or(String::new(), |p| format!(", p95 ≤ {} ms", p.as_millis())),
        ladder,
        if setup.early_stop {
            format!(
                "each level warms up {} (until steady) and measures {} (until its verdict settles{})",
                span(setup.warmup_min_s, setup.warmup_s, "s"),
                span(setup.min_measured_s, setup.measured_s, "s"),
                if setup.near_min_measured_s > setup.min_measured_s {
                    format!(
                        "; near the target at least {} s",
                        seconds(setup.near_min_measured_s)
                    )
                } else {
                    String::new()
                }
            )
        } else {
            format!(
                "each level {:.0} s warm-up + {:.0} s measured",
                setup.warmup_s, setup.measured_s
            )
        }
    )
}

/// The line printed after each level; `many` names the users (students,
/// ...), `rate` the throughput's unit
/// ([`headroom_bundle::capacity::CapacitySetup::rate`]).
pub fn level_line(level: &Level, many: &str, rate: &str) -> String {
    format!(
        "  {:>5} {many}: Apdex {} {}, errors {:.2}%, p95 {}, {:.1} {rate}{}{} → {}",
        level.users,
        level.apdex.map_or("-".into(), |a| format!("{a:.3}")),
        level.apdex_rating.as_deref().unwrap_or(""),
        level.error_rate * 100.0,
        level.p95_ms.map_or("-".into(), |p| format!("{p:.0} ms")),
        level.rps,
        level
            .resources
            .iter()
            .filter_map(|h| h
                .cpu_avg
                .map(|c| format!(", {} machine CPU {c:.0}%", h.host)))
            .collect::<String>()
            + &server_cpu(level).map_or(String::new(), |cpu| format!(", server CPU {cpu}")),
        if level.generator_limited {
            ", generator limited"
        } else {
            ""
        },
        level.verdict(),
    ) + &format!(" ({})", level.ended)
}

/// How the search chose its levels, in one line (the rule in
/// headroom_capacity::ladder::Search): why the steps are ×2, ×1.25 or
/// halves.
pub fn ladder_note(setup: &headroom_bundle::capacity::CapacitySetup) -> Option<String> {
    let resolution = if setup.resolution > 0 {
        format!(
            "--resolution {}",
            count(setup.resolution as usize, "user", "users")
        )
    } else {
        "--resolution".to_string()
    };
    let step = if setup.step > 0 {
        format!("+{}", count(setup.step as usize, "user", "users"))
    } else {
        "--step".to_string()
    };
    match setup.ladder.as_str() {
        "model" => Some(
            "Ladder: model: what a page view costs, measured first at short non-stop levels (a lone student's walk, then 2 to 32 new students at a time), and a simulation of the lesson start from it, whose answer is the first lesson; then a ninth above a met lesson (×1.25 past that) or a tenth below a broken one, halving the gap until it is at most a tenth of the broken level; each level's why says which rule chose it".to_string()
        ),
        "aimed" => Some(format!(
            "Ladder: aimed: from --start the users double (at least {step}) until the throughput stops growing or a resource nears 100%, then aim just past the knee Little's law gives, ×1.25 a level once a level met at or past it; from the first broken level, cuts between the last met and it (where the Apdex should cross the target, else halfway) down to {resolution}; each level's why says which rule chose it"
        )),
        "plain" => Some(format!(
            "Ladder: plain: {step} a level (--step) until two levels in a row break or --max, then halving the gap between the last met and the first broken level down to {resolution}"
        )),
        _ => None,
    }
}

/// The rows as columns, each as wide as its widest cell counted in
/// characters (not bytes: "±", "…"), two spaces apart; `left[i]` says
/// which columns are left-aligned. Every line starts with two spaces, and
/// a left-aligned last column is not padded.
pub fn padded(rows: &[Vec<String>], left: &[bool]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            let pad = widths[i].saturating_sub(cell.chars().count());
            line.push_str("  ");
            if left.get(i).copied().unwrap_or(false) {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// "4+5 s, settled" / "15+60 s": how long a level ran and why it stopped.
pub fn ran(level: &Level) -> String {
    format!(
        "{:.0}+{:.0} s{}",
        level.warmup_s,
        level.measured_s,
        if level.stopped_early { ", settled" } else { "" }
    )
}

/// "its" for one, "their" for more.
fn its(n: usize) -> &'static str {
    if n == 1 {
        "its"
    } else {
        "their"
    }
}

/// How the levels that did not stop early ended: their full
/// --step-duration, measured on past it for their --min-samples requests
/// (up to 4 times it), or ended before it (a run cut short). Each said
/// only of the levels it is true of.
fn the_others(result: &CapacityResult, early: usize) -> String {
    let (one, many) = result.setup.nouns();
    let full_s = result.setup.measured_s;
    let others: Vec<&Level> = result.levels.iter().filter(|l| !l.stopped_early).collect();
    let past: Vec<&Level> = others
        .iter()
        .copied()
        .filter(|l| l.measured_s > full_s + 0.5)
        .collect();
    let short: Vec<&Level> = others
        .iter()
        .copied()
        .filter(|l| l.measured_s < full_s - 0.5)
        .collect();
    let full = others.len() - past.len() - short.len();
    let mut said = Vec::new();
    if !past.is_empty() {
        let longest = past.iter().map(|l| l.measured_s).fold(0.0, f64::max);
        said.push(format!(
            "{} measured on past {full_s:.0} s (up to {longest:.0} s) for {} {} requests",
            past.len(),
            its(past.len()),
            result.setup.min_samples
        ));
    }
    if !short.is_empty() {
        let measured: Vec<String> = short
            .iter()
            .map(|l| {
                format!(
                    "{:.0} s at {}",
                    l.measured_s,
                    count(l.users as usize, &one, &many)
                )
            })
            .collect();
        said.push(format!(
            "{} ended before {} full {full_s:.0} s ({} measured)",
            short.len(),
            its(short.len()),
            measured.join(", ")
        ));
    }
    if full > 0 {
        let who = match (past.is_empty() && short.is_empty(), early, full) {
            (true, 0, 1) => "the level".to_string(),
            (true, 0, n) => format!("all {n}"),
            (true, _, 1) => "the other".to_string(),
            (true, _, _) => "the others".to_string(),
            (false, _, n) => n.to_string(),
        };
        said.push(format!("{who} ran {} full {full_s:.0} s", its(full)));
    }
    said.join("; ")
}

/// What the answer's uncertainty is, and how the levels ended: the range
/// of users it lies in, levels whose verdicts contradict, how many stopped
/// early, and (with --full-levels) how often an early verdict held.
pub fn uncertainty(result: &CapacityResult) -> Vec<String> {
    let (one, many) = result.setup.nouns();
    let mut lines: Vec<String> = ladder_note(&result.setup).into_iter().collect();
    lines.extend(model_line(result));
    lines.extend(range_line(result));
    lines.extend(apdex_at_capacity(result));
    for [broken, met] in &result.inversions {
        lines.push(format!(
            "Noisy: broken at {} but met at {met}: the server's verdicts contradict each other; repeat the levels near the answer (--confirm 3)",
            count(*broken as usize, &one, &many)
        ));
    }
    if result.setup.early_stop {
        lines.push(early_stops(result));
    }
    lines.extend(thin_levels(result));
    if let Some(a) = result
        .agreement
        .as_ref()
        .filter(|_| !result.setup.early_stop)
    {
        lines.push(format!(
            "Early verdicts: the full duration confirmed {} of the {} that settled early",
            a.agreed,
            count(a.settled as usize, "verdict", "verdicts")
        ));
    }
    if let Some(sent) = &result.requests {
        lines.push(format!(
            "Requests: {} (what the server's access log counts)",
            sent.describe()
        ));
    }
    lines
}

/// What a modelled lesson search measured before its lessons and what its
/// model said: "Model: a page view's cost from 6 non-stop levels (the most,
/// 94.7 requests/s with 32 new students at a time, 28.7 in flight); it
/// answered 468 students (with 472 the arrival's Apdex 0.697), the lessons
/// 422".
fn model_line(result: &CapacityResult) -> Option<String> {
    let model = result.model.as_ref()?;
    let (one, many) = result.setup.nouns();
    let fullest = model.non_stop.iter().find(|n| n.users == model.fullest)?;
    let above = model.above.as_ref().map_or(String::new(), |a| {
        format!(
            " (with {} the arrival's Apdex {})",
            a.students,
            a.apdex[0].map_or("-".into(), |x| format!("{x:.3}"))
        )
    });
    Some(format!(
        "Model: a page view's cost from {} non-stop levels in {:.0} s (the most, {} requests/s with {} new {} at a time, {} in flight); it answered {}{}{}, the lessons {}",
        model.non_stop.len(),
        model.seconds,
        seconds(fullest.requests_per_s),
        fullest.users,
        many,
        seconds(model.in_flight),
        if model.capped { "at least " } else { "" },
        count(model.students as usize, &one, &many),
        above,
        result
            .capacity
            .users
            .map_or("found none".to_string(), |u| u.to_string()),
    ))
}

/// The range of users the answer lies in, when there is an answer.
fn range_line(result: &CapacityResult) -> Option<String> {
    let (one, many) = result.setup.nouns();
    let (Some([low, high]), Some(users)) = (result.range, result.capacity.users) else {
        return None;
    };
    let users = count(users as usize, &one, &many);
    Some(if result.capacity.at_least {
        format!("Range: at least {users} (the target held at --max)")
    } else if low == high {
        format!("Range: {users} exactly (the next level up broke the target)")
    } else {
        format!(
            "Range: {low}–{high} {many} ({}; a finer --resolution or --confirm narrows it)",
            match &result.confirmation {
                Some(c) => format!(
                    "the repetitions and the levels either side, {} each",
                    count(c.repetitions as usize, "run", "runs")
                ),
                None => "between the last level met and the first broken above it".into(),
            }
        )
    })
}

/// The Apdex at the capacity with its interval, when the level quoted
/// has one.
fn apdex_at_capacity(result: &CapacityResult) -> Option<String> {
    let (one, many) = result.setup.nouns();
    let (users, apdex, [low, high]) = result.quoted_level().and_then(|l| {
        l.apdex_interval
            .map(|i| (l.users, l.apdex.unwrap_or(0.0), i))
    })?;
    let run = match &result.capacity.quoted {
        Some(q) => format!(" ({})", q.describe()),
        None => String::new(),
    };
    Some(format!(
        "Apdex at {}{run}: {apdex:.3}, 99% interval {low:.3}–{high:.3} (from its per-second figures)",
        count(users as usize, &one, &many)
    ))
}

/// How many levels stopped when their verdict settled, by which rule,
/// and how the others ran.
fn early_stops(result: &CapacityResult) -> String {
    let early = result.levels.iter().filter(|l| l.stopped_early).count();
    let setup = &result.setup;
    let near = setup.near_min_measured_s.max(setup.min_measured_s);
    let rule = if seconds(near) == seconds(setup.min_measured_s) {
        format!(
            "after at least {} s measured",
            seconds(setup.min_measured_s)
        )
    } else {
        format!(
            "after at least {} s measured, {} s near the target",
            seconds(setup.min_measured_s),
            seconds(near)
        )
    };
    let total = result.levels.len();
    let head = if early == 0 {
        format!("Levels: none stopped early (a verdict may settle {rule})")
    } else {
        format!(
            "Levels: {early} of {total} stopped when {} verdict settled ({rule})",
            its(early)
        )
    };
    let others = the_others(result, early);
    if others.is_empty() {
        head
    } else {
        format!("{head}; {others}")
    }
}

/// The levels that measured too few requests for a verdict, if any.
fn thin_levels(result: &CapacityResult) -> Option<String> {
    let (one, many) = result.setup.nouns();
    let thin: Vec<String> = result
        .levels
        .iter()
        .filter(|l| l.thin)
        .map(|l| {
            format!(
                "{} ({})",
                count(l.users as usize, &one, &many),
                count(l.samples as usize, "request", "requests")
            )
        })
        .collect();
    if thin.is_empty() {
        return None;
    }
    Some(format!(
        "Thin: {} measured fewer requests than a verdict needs ({}, --min-samples): {} shown, not trusted",
        thin.join(", "),
        result.setup.min_samples,
        if thin.len() == 1 {
            "its verdict is"
        } else {
            "their verdicts are"
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_analysis::capacity::ApdexGoal;
    use std::path::PathBuf;
    use std::time::Duration;

    fn level(users: u32, measured_s: f64, stopped_early: bool) -> Level {
        serde_json::from_value(serde_json::json!({
            "users": users, "good": true, "apdex": 1.0, "apdex_rating": "Excellent",
            "samples": 80, "error_rate": 0.0, "mean_ms": 20.0, "p50_ms": 20.0,
            "p90_ms": 20.0, "p95_ms": 20.0, "rps": 2.0, "measured_s": measured_s,
            "resources": [], "generator_limited": false, "bundle": "level",
            "stopped_early": stopped_early, "min_samples": 100
        }))
        .unwrap()
    }

    fn levels_line(levels: Vec<Level>) -> String {
        let target = ApdexGoal {
            apdex: 0.7,
            max_error: 0.01,
            p95_max: None,
        };
        let mut result = headroom_capacity::answer::answer(
            target,
            levels,
            None,
            false,
            Duration::from_secs(5),
            false,
            PathBuf::new(),
        );
        result.setup.early_stop = true;
        result.setup.measured_s = 10.0;
        result.setup.min_measured_s = 5.0;
        result.setup.min_samples = 100;
        uncertainty(&result)
            .into_iter()
            .find(|l| l.starts_with("Levels:"))
            .unwrap()
    }

    /// The answer says what a user is, under its noun, and the users the
    /// same throughput holds at people's think times: 2 req/s at 20 ms
    /// with 5 s think is 10 users; at 30 s, 2 × 30.02 = 60.
    #[test]
    fn the_answer_names_its_users_and_models_other_think_times() {
        let target = ApdexGoal {
            apdex: 0.7,
            max_error: 0.01,
            p95_max: None,
        };
        let mut result = headroom_capacity::answer::answer(
            target,
            vec![level(10, 40.0, false), level(20, 40.0, false)],
            Some(20),
            false,
            Duration::from_secs(5),
            false,
            PathBuf::new(),
        );
        assert_eq!(one_user(&result), None);
        result.setup.user = "reads the course page".into();
        result.setup.users_are = Some("students".into());
        assert_eq!(
            one_user(&result).unwrap(),
            "A student: reads the course page"
        );
        assert!(
            result.verdict().starts_with("20 students at Apdex"),
            "{}",
            result.verdict()
        );
        let line = other_think_times(&result).unwrap();
        assert!(
            line.ends_with(": 10 s → 20 students, 30 s → 60 students, 60 s → 120 students"),
            "{line}"
        );
        // A lesson search's students read as they do: no such model.
        let mut lesson = result.clone();
        lesson.setup.arrive_within_s = Some(60.0);
        assert_eq!(other_think_times(&lesson), None);
        // The table and the per-level lines call them so too.
        let text = render_capacity(&result);
        let header = text.lines().find(|l| l.contains("Apdex  ")).unwrap();
        assert!(
            header.trim_start().starts_with("students")
                && header.contains("why this many students"),
            "{text}"
        );
        assert!(
            level_line(&result.levels[0], "students", "req/s")
                .starts_with("     10 students: Apdex 1.000"),
            "{}",
            level_line(&result.levels[0], "students", "req/s")
        );
        result.setup.users_are = Some("everyday activities".into());
        assert_eq!(result.setup.nouns().0, "everyday activity");
        // A user of an access log's workload: "a user"; the answer and
        // every level in the log's peaks.
        result.setup.users_are = None;
        assert!(one_user(&result).unwrap().starts_with("A user: "));
        assert_eq!(in_peaks(&result), None);
        result.setup.log_peak = Some(headroom_bundle::capacity::LogPeakRecord {
            minute: "2026-11-20 10:01".into(),
            pages: 300,
            users: 8,
        });
        assert_eq!(
            in_peaks(&result).unwrap(),
            "That is 2.50× the log's peak of 8 users (at 2026-11-20 10:01 UTC, 300 pages that minute)"
        );
        let text = render_capacity(&result);
        let header = text.lines().find(|l| l.contains("Apdex  ")).unwrap();
        assert!(header.contains("users  × log's peak"), "{text}");
        let row = text
            .lines()
            .find(|l| l.trim_start().starts_with("20 "))
            .unwrap();
        assert!(row.contains(" 2.50 "), "{row}");
    }

    /// Two levels of 2 req/s measured 40 s each for their 100 requests
    /// (--step-duration 10s) were said to have "ran their full 10 s",
    /// beside a table that says 10+40 s.
    #[test]
    fn levels_measured_past_the_step_duration_are_said_so() {
        let line = levels_line(vec![level(10, 40.0, false), level(20, 40.0, false)]);
        assert!(
            line.ends_with("; 2 measured on past 10 s (up to 40 s) for their 100 requests"),
            "{line}"
        );
        let line = levels_line(vec![level(10, 40.0, false), level(20, 10.0, false)]);
        assert!(
            line.ends_with(
                "; 1 measured on past 10 s (up to 40 s) for its 100 requests; 1 ran its full 10 s"
            ),
            "{line}"
        );
        let line = levels_line(vec![level(10, 10.0, false), level(20, 6.0, true)]);
        assert!(line.ends_with("; the other ran its full 10 s"), "{line}");
        // Every level settled: no "others".
        let line = levels_line(vec![level(20, 6.0, true)]);
        assert_eq!(
            line,
            "Levels: 1 of 1 stopped when its verdict settled (after at least 5 s measured)"
        );
    }

    /// "Levels: 5 of 9 stopped when their verdict settled ...; the others
    /// ran their full 20 s" was said when the others had not: each part is
    /// said only of the levels it is true of, in the right number.
    #[test]
    fn the_levels_line_says_only_what_happened() {
        // None settled.
        let line = levels_line(vec![level(10, 10.0, false), level(20, 10.0, false)]);
        assert_eq!(
            line,
            "Levels: none stopped early (a verdict may settle after at least 5 s measured); all 2 ran their full 10 s"
        );
        // Levels cut short are not said to have run their full duration.
        let line = levels_line(vec![
            level(10, 6.0, true),
            level(20, 4.0, false),
            level(40, 3.0, false),
        ]);
        assert_eq!(
            line,
            "Levels: 1 of 3 stopped when its verdict settled (after at least 5 s measured); 2 ended before their full 10 s (4 s at 20 users, 3 s at 40 users measured)"
        );
        assert!(
            !line.contains("full 10 s;") && !line.contains("ran"),
            "{line}"
        );
        assert_eq!(span(1.0, 1.0, "s"), "1 s");
        assert_eq!(span(1.0, 3.0, "s"), "1–3 s");
        assert_eq!(span(2.0, 2.5, "s"), "2–2.5 s");
    }

    /// The rating words differ in width (Excellent, Good, Fair, Poor,
    /// Unacceptable): rows other than Excellent's were one column out of
    /// line with the header. Every column ends at the same character in
    /// every row.
    #[test]
    fn every_rating_lines_up_with_the_header() {
        let levels: Vec<Level> = [
            (10, 0.98, "Excellent"),
            (20, 0.90, "Good"),
            (30, 0.75, "Fair"),
            (40, 0.60, "Poor"),
            (50, 0.30, "Unacceptable"),
        ]
        .iter()
        .enumerate()
        .map(|(i, (users, apdex, rating))| {
            let mut l = level(*users, 10.0, false);
            l.apdex = Some(*apdex);
            l.apdex_rating = Some(rating.to_string());
            l.error_rate = i as f64 * 0.011;
            l.p50_ms = Some(100.0 + i as f64);
            l
        })
        .collect();
        let target = ApdexGoal {
            apdex: 0.7,
            max_error: 0.01,
            p95_max: None,
        };
        let result = headroom_capacity::answer::answer(
            target,
            levels,
            Some(30),
            false,
            Duration::from_secs(1),
            false,
            PathBuf::new(),
        );
        let text = render_capacity(&result);
        let lines: Vec<&str> = text.lines().collect();
        let header = lines.iter().position(|l| l.contains("errors")).unwrap();
        let end_of = |line: &str, word: &str| {
            let at = line
                .find(word)
                .unwrap_or_else(|| panic!("{word} in {line}"));
            line[..at].chars().count() + word.chars().count()
        };
        let errors_end = end_of(lines[header], "errors");
        let p50_end = end_of(lines[header], "p50");
        for i in 0..5 {
            let row = lines[header + 1 + i];
            let errors = format!("{:.2}%", i as f64 * 1.1);
            let p50 = format!("{}ms", 100 + i);
            assert_eq!(end_of(row, &errors), errors_end, "errors in\n{text}");
            assert_eq!(end_of(row, &p50), p50_end, "p50 in\n{text}");
        }
    }

    /// The "server CPU" column was the whole machine's CPU (the generator
    /// and other tenants included). It is named so, and with --process the
    /// named processes' CPU has its own column, in % of the same host.
    #[test]
    fn the_machine_cpu_and_the_server_processes_cpu_are_apart() {
        let mut l = level(10, 10.0, false);
        l.resources = vec![serde_json::from_value(serde_json::json!({
            "host": "local", "cpu_avg": 53.0, "cpu_peak": 60.0, "memory_avg": 40.0,
            "disk_avg": 1.0, "net_link_avg": null, "temperature_max": null,
            "throttled_seconds": 0, "busiest_core": null,
            "processes": [["php-fpm", 30.4], ["nginx", 4.2]]
        }))
        .unwrap()];
        let target = ApdexGoal {
            apdex: 0.7,
            max_error: 0.01,
            p95_max: None,
        };
        let mut result = headroom_capacity::answer::answer(
            target,
            vec![l],
            Some(10),
            true,
            Duration::from_secs(1),
            true,
            PathBuf::new(),
        );
        result.setup.processes = vec!["php-fpm".into(), "nginx".into()];
        let text = render_capacity(&result);
        let header = text.lines().find(|l| l.contains("machine CPU")).unwrap();
        assert!(
            header.contains("users") && header.contains("server CPU (php-fpm, nginx)"),
            "{text}"
        );
        let row = text
            .lines()
            .find(|l| l.trim_start().starts_with("10 "))
            .unwrap();
        assert!(row.contains(" 53% ") && row.contains(" 35% "), "{text}");
        // Both right-aligned under their headers.
        let end_of = |line: &str, word: &str| {
            let at = line.find(word).unwrap();
            line[..at].chars().count() + word.chars().count()
        };
        assert_eq!(end_of(row, "53%"), end_of(header, "machine CPU"), "{text}");
        assert_eq!(
            end_of(row, "35%"),
            end_of(header, "server CPU (php-fpm, nginx)"),
            "{text}"
        );
        assert_eq!(end_of(row, "met"), end_of(header, "target") - 3, "{text}");
        // Without --process: only the machine's, named so.
        result.setup.processes.clear();
        result.levels[0].resources[0].processes.clear();
        let text = render_capacity(&result);
        assert!(
            text.contains("machine CPU") && !text.contains("server CPU"),
            "{text}"
        );
    }

    /// The levels grew ×1.25 a step where the docs said ×2, and nothing
    /// said why: each level says why, and a line says the ladder's rule.
    #[test]
    fn each_level_says_why_and_the_ladder_says_its_rule() {
        let mut a = level(10, 10.0, false);
        a.why = "--start".into();
        let mut b = level(13, 10.0, false);
        b.why =
            "×1.25: met at or past the knee Little's law puts at 9, so the break is near".into();
        let target = ApdexGoal {
            apdex: 0.7,
            max_error: 0.01,
            p95_max: None,
        };
        let mut result = headroom_capacity::answer::answer(
            target,
            vec![a, b],
            Some(13),
            false,
            Duration::from_secs(1),
            false,
            PathBuf::new(),
        );
        result.setup.ladder = "aimed".into();
        result.setup.step = 10;
        result.setup.resolution = 2;
        let text = render_capacity(&result);
        let row = text
            .lines()
            .find(|l| l.trim_start().starts_with("13 "))
            .unwrap();
        assert!(
            row.ends_with(
                "×1.25: met at or past the knee Little's law puts at 9, so the break is near"
            ),
            "{text}"
        );
        assert!(text.contains("why this many users"), "{text}");
        assert!(
            text.contains("Ladder: aimed: from --start the users double (at least +10 users)")
                && text.contains("×1.25 a level once a level met at or past it")
                && text.contains("down to --resolution 2 users"),
            "{text}"
        );
        result.setup.ladder = "plain".into();
        assert!(render_capacity(&result).contains("Ladder: plain: +10 users a level (--step) until two levels in a row break or --max, then halving the gap"));
    }
}
