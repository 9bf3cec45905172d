//! The search's answer from its levels ([`answer`]): the capacity's
//! figures (a repeated level speaks through its median repetition), the
//! knee and what saturated there, whether the answer is valid (the
//! generator was the limit, a deciding level was thin, Little's law says
//! the capacity level was not steady), the range the repetitions support,
//! and `--fail-if` judged on it ([`judge`]). capacity.json's types and
//! their words are the bundle crate's.

use crate::ladder::repetition_capacity;
use crate::level::little;
use headroom_analysis::capacity::{bottleneck, ApdexGoal};
use headroom_analysis::{Criterion, Metric, Verdict};
use headroom_bundle::capacity::{
    Agreement, CapacityAnswer, CapacityResult, CapacitySetup, Confirmation, CriterionOutcome,
    Level, LittlesLaw, Quoted, LITTLE_TOLERANCE,
};
use headroom_bundle::SCHEMA_VERSION;
use std::path::PathBuf;
use std::time::Duration;

/// The answer of a search whose levels are `levels` (in the order run)
/// and whose ladder found `capacity`; `at_least` when the target held at
/// `--max`, `think` the planned think per request, `monitored` whether
/// server resources were watched.
pub fn answer(
    target: ApdexGoal,
    levels: Vec<Level>,
    capacity: Option<u32>,
    at_least: bool,
    think: Duration,
    monitored: bool,
    bundle: PathBuf,
) -> CapacityResult {
    let best = capacity.and_then(|c| worst_at(&levels, c));
    let knee = levels
        .iter()
        .filter(|l| l.broken() && capacity.is_none_or(|c| l.users > c))
        .min_by_key(|l| l.users);
    let bottleneck = knee.and_then(|k| bottleneck(k.users, &k.resources));
    let little = best.and_then(|l| little(l, think));
    let mut invalid = invalid(best, knee, little.as_ref());
    if let Some(b) = bottleneck.as_ref().filter(|b| b.crowded_out()) {
        invalid.push(format!(
            "the machine's CPU was saturated at the knee ({:.0}%) while the watched server processes (--process) used {:.0}% of the host: other work on the machine (the load generator, other programs) limited the levels, not the server; run the load generator on another machine, or stop the other work, and search again",
            b.figure,
            b.server_pct.unwrap_or(0.0)
        ));
    }
    let generator_limited = best.into_iter().chain(knee).any(|l| l.generator_limited);
    let limit = knee.and_then(|k| k.limits.iter().find(|l| l.saturated).cloned());
    let limit_note = if generator_limited {
        "the load generator itself was the limit (its CPU was saturated or starved): the result is not the server's; run headroom on another machine or give it more CPU".into()
    } else if knee.is_none() {
        "the target held at every level tried: raise --max".into()
    } else if bottleneck.is_some() {
        String::new()
    } else if let Some(missing) = knee.filter(|k| !k.missing.is_empty()) {
        format!(
            "no data from {} at the knee: those resources are unknown, not idle, so the limit cannot be named",
            missing.missing.join(", ")
        )
    } else if let Some(limit) = &limit {
        limit.describe()
    } else if let (Some(knee), true) = (knee, monitored) {
        nothing_full(knee)
    } else {
        "no server resources were monitored (--monitor): the limit cannot be named".into()
    };
    let confirmation = capacity.and_then(|c| confirmation(&levels, c, knee, target.apdex));
    let range = capacity.map(|c| {
        let high = knee.map_or(c, |k| k.users.saturating_sub(1).max(c));
        match &confirmation {
            Some(conf) => [conf.low.min(c), conf.high.max(high)],
            None => [c, high],
        }
    });
    let mut result = CapacityResult {
        schema_version: SCHEMA_VERSION,
        setup: CapacitySetup::default(),
        status: "complete".into(),
        target,
        capacity: CapacityAnswer {
            users: capacity,
            apdex: best.and_then(|l| l.apdex),
            apdex_rating: best.and_then(|l| l.apdex_rating.clone()),
            rps: best.map(|l| l.rps),
            p95_ms: best.and_then(|l| l.p95_ms),
            at_least,
            quoted: best.and_then(|b| quoted(&levels, b)),
        },
        knee_users: knee.map(|l| l.users),
        bottleneck,
        limit,
        limit_note,
        valid: invalid.is_empty(),
        invalid,
        think_s: think.as_secs_f64(),
        little,
        confirmation,
        criteria: Vec::new(),
        range,
        inversions: Vec::new(),
        agreement: agreement(&levels),
        verdict: String::new(),
        answer: None,
        host_bench: Vec::new(),
        requests: None,
        model: None,
        levels,
        bundle,
    };
    result.verdict = result.verdict();
    result
}

/// What was measured at `knee` and found not full, and what was not
/// measured: said instead of a limit when nothing saturated.
fn nothing_full(knee: &Level) -> String {
    let mut measured: Vec<String> = Vec::new();
    for host in &knee.resources {
        let mut add = |what: &str, figure: Option<f64>| {
            if let Some(figure) = figure {
                measured.push(format!("{} {what} {figure:.0}%", host.host));
            }
        };
        add("machine CPU", host.cpu_avg);
        add("busiest core", host.busiest_core.map(|(_, busy)| busy));
        add("memory", host.memory_avg);
        add("disk", host.disk_avg);
        add("network link", host.net_link_avg);
    }
    let mut unmeasured: Vec<String> = Vec::new();
    for limit in &knee.limits {
        if let Some(why) = &limit.unmeasured {
            unmeasured.push(format!("{} ({why})", limit.resource));
            continue;
        }
        let (how, what) = limit.units();
        measured.push(format!(
            "{} {:.0}% {how}{}",
            limit.resource,
            limit.utilization_pct,
            limit
                .waiting
                .filter(|_| !what.is_empty())
                .map_or(String::new(), |w| format!(" ({w:.1} {what} on average)"))
        ));
    }
    let mut text = format!(
        "nothing measured was full at the knee: {}",
        measured.join(", ")
    );
    if knee.limits.is_empty() {
        text.push_str(". Not measured: the server's own worker pools, CPU quota and accept queues, because no server process was watched (name them with --process, e.g. nginx,php-fpm8.2)");
    } else if unmeasured.is_empty() {
        text.push_str(". The requests' own time grew without a measured resource filling up");
    } else {
        text.push_str(&format!(". Not measured: {}", unmeasured.join(", ")));
    }
    text
}

/// A level measured several times (--confirm, a lesson's final level)
/// speaks through its worst run (the lowest Apdex it was judged by, then
/// the highest p95): one set of figures, and the one a user must plan
/// for. A lesson is judged by its worst phase: a lesson that ran only its
/// arrival is not the best for lacking the reading's faster pages.
fn worst_at(levels: &[Level], users: u32) -> Option<&Level> {
    levels.iter().filter(|l| l.users == users).min_by(|a, b| {
        let (a_apdex, b_apdex) = (a.judged_apdex(), b.judged_apdex());
        let apdex = a_apdex.unwrap_or(0.0).total_cmp(&b_apdex.unwrap_or(0.0));
        let p95 = b.p95_ms.unwrap_or(0.0).total_cmp(&a.p95_ms.unwrap_or(0.0));
        apdex.then(p95)
    })
}

/// Which run of its level `best` is, when the level ran more than once.
fn quoted(levels: &[Level], best: &Level) -> Option<Quoted> {
    let runs: Vec<&Level> = levels.iter().filter(|l| l.users == best.users).collect();
    let run = runs.iter().position(|l| l.bundle == best.bundle)? + 1;
    (runs.len() > 1).then(|| Quoted {
        bundle: best.bundle.clone(),
        run: run as u32,
        runs: runs.len() as u32,
    })
}

/// Why the answer decided by `best` (the capacity) and `knee` is not
/// valid, a sentence each; empty when it is.
fn invalid(best: Option<&Level>, knee: Option<&Level>, little: Option<&LittlesLaw>) -> Vec<String> {
    let deciding: Vec<&Level> = best.into_iter().chain(knee).collect();
    let mut invalid = Vec::new();
    if deciding.iter().any(|l| l.generator_limited) {
        invalid.push("the load generator was the limit at a deciding level: the figures are not the server's".to_string());
    }
    for busy in deciding
        .iter()
        .filter(|l| l.rest.as_ref().is_some_and(|r| !r.quiet))
    {
        invalid.push(format!(
            "the level of {} users started on a server still busy with the level before (after {:.0} s of rest a probe did not answer as fast as the idle server): its burst met that work too; give the server time or a restart between searches",
            busy.users,
            busy.rest.as_ref().map_or(0.0, |r| r.waited_s)
        ));
    }
    for thin in deciding.iter().filter(|l| l.thin) {
        invalid.push(format!(
            "the level of {} users decided the answer on {} requests, fewer than the {} a verdict needs (--min-samples): lengthen --step-duration, or lower --min-samples knowingly",
            thin.users, thin.samples, thin.min_samples
        ));
    }
    // Only where the think the users took was measured (a throughput
    // cap's waits for a slot are not, and older searches have none), and
    // in a steady cycle: a lesson's students are still arriving in its
    // first phase, so fewer are busy than the level's number.
    let measured_think = best.is_some_and(|l| l.think_s.is_some() && l.phases.is_empty());
    if let Some(l) = little.filter(|l| measured_think && l.miss() > LITTLE_TOLERANCE) {
        invalid.push(format!(
            "Little's law at the capacity accounts for {:.0} users busy of {}: the measured window did not see the users in their steady cycle (they started or clicked in step, or waited somewhere not measured); lengthen --warmup and --step-duration to several think times",
            l.users_busy, l.users
        ));
    }
    invalid
}

/// With `--confirm`: the capacities the repetitions of the deciding
/// levels (the capacity `c` and the `knee`) support; `None` when `c` ran
/// once.
fn confirmation(
    levels: &[Level],
    c: u32,
    knee: Option<&Level>,
    target_apdex: f64,
) -> Option<Confirmation> {
    let at_c: Vec<&Level> = levels.iter().filter(|l| l.users == c).collect();
    if at_c.len() < 2 {
        return None;
    }
    let estimates: Vec<u32> = match knee.map(|l| l.users) {
        Some(k) => {
            let at_k: Vec<&Level> = levels.iter().filter(|l| l.users == k).collect();
            // A unanimous search measures the first broken level once:
            // each repetition of c is paired with the knee's latest.
            at_c.iter()
                .enumerate()
                .filter_map(|(i, lc)| Some((lc, *at_k.get(i).or(at_k.last())?)))
                .map(|(lc, lk)| {
                    repetition_capacity(
                        c,
                        k,
                        (lc.good, !lk.broken()),
                        (lc.judged_apdex(), lk.judged_apdex()),
                        target_apdex,
                    )
                })
                .collect()
        }
        // No broken level above: each repetition says c or less.
        None => at_c
            .iter()
            .map(|l| if l.good { c } else { c.saturating_sub(1) })
            .collect(),
    };
    Some(Confirmation {
        repetitions: at_c.len() as u32,
        low: estimates.iter().copied().min().unwrap_or(c).min(c),
        high: estimates.iter().copied().max().unwrap_or(c).max(c),
    })
}

/// With --full-levels: the levels whose verdict settled early, and how
/// many of those the full duration confirmed.
fn agreement(levels: &[Level]) -> Option<Agreement> {
    let ran_on: Vec<&Level> = levels
        .iter()
        .filter(|l| l.settled.is_some() && !l.stopped_early)
        .collect();
    (!ran_on.is_empty()).then(|| Agreement {
        settled: ran_on.len() as u32,
        agreed: ran_on
            .iter()
            .filter(|l| l.settled.as_ref().is_some_and(|s| s.met == l.good))
            .count() as u32,
    })
}

/// The search was stopped before it could decide: no capacity, no
/// bottleneck and not valid; the levels measured stay.
pub fn interrupted(mut result: CapacityResult) -> CapacityResult {
    result.status = "interrupted".into();
    result.capacity = CapacityAnswer {
        users: None,
        apdex: None,
        apdex_rating: None,
        rps: None,
        p95_ms: None,
        at_least: false,
        quoted: None,
    };
    result.knee_users = None;
    result.bottleneck = None;
    result.little = None;
    result.confirmation = None;
    result.range = None;
    result.valid = false;
    result.limit_note = format!(
        "the search was interrupted after {}, before it could decide: no capacity is claimed",
        headroom_units::quantity::count(result.levels.len(), "level", "levels")
    );
    result.verdict = result.verdict();
    result
}

/// `--fail-if` on the search's answer: the users, and the Apdex, request
/// rate and p95 at the capacity.
pub fn judge(criteria: &[Criterion], result: &CapacityResult) -> Vec<Verdict> {
    let answer = &result.capacity;
    criteria
        .iter()
        .map(|c| {
            let measured = match c.metric {
                Metric::Users => answer.users.map(f64::from),
                Metric::Apdex => answer.apdex,
                Metric::Rps => answer.rps,
                Metric::P95 => answer.p95_ms.map(|ms| ms / 1000.0),
                _ => None,
            };
            let mut verdict = c.evaluate_measured(measured, "capacity");
            if answer.at_least && c.metric == Metric::Users {
                // Only a lower bound: the target held up to --max.
                verdict.message.push_str(
                    " — at least: the target held up to --max, so the capacity may be higher; raise --max to tell",
                );
            }
            verdict
        })
        .collect()
}

/// The criteria's outcomes as capacity.json keeps them.
pub fn outcomes(verdicts: &[Verdict]) -> Vec<CriterionOutcome> {
    verdicts
        .iter()
        .map(|v| CriterionOutcome {
            expression: v.criterion.expression.clone(),
            measured: v.measured,
            failed: v.failed,
            message: v.message.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_analysis::capacity::{Bottleneck, HostFigures};
    use headroom_bundle::capacity::{read, write};
    use headroom_bundle::CAPACITY;
    use std::fs;

    fn bottleneck_of(level: &Level) -> Option<Bottleneck> {
        bottleneck(level.users, &level.resources)
    }

    fn level(users: u32, cpu: f64, disk: f64, throttled: u64) -> Level {
        Level {
            users,
            good: false,
            apdex: Some(0.5),
            apdex_rating: Some("Poor".into()),
            samples: 10,
            error_rate: 0.0,
            mean_ms: Some(10.0),
            p50_ms: None,
            p90_ms: None,
            p95_ms: None,
            rps: 1.0,
            measured_s: 1.0,
            resources: vec![HostFigures {
                host: "pi".into(),
                cpu_avg: Some(cpu),
                cpu_peak: Some(cpu),
                memory_avg: Some(40.0),
                disk_avg: Some(disk),
                disk_iops_avg: None,
                net_link_avg: None,
                temperature_max: Some(60.0),
                throttled_seconds: throttled,
                busiest_core: None,
                processes: Vec::new(),
            }],
            missing: Vec::new(),
            limits: Vec::new(),
            generator_limited: false,
            bundle: PathBuf::new(),
            warmup_s: 1.0,
            settled: None,
            stopped_early: false,
            apdex_interval: None,
            ended: String::new(),
            think_s: None,
            min_samples: 0,
            thin: false,
            why: String::new(),
            phases: Vec::new(),
            rest: None,
            put_aside: Vec::new(),
            uneven_floor: None,
            reading_as: None,
        }
    }

    #[test]
    fn the_most_saturated_resource_is_the_bottleneck() {
        let b = bottleneck_of(&level(50, 96.0, 20.0, 0)).unwrap();
        assert_eq!((b.resource.as_str(), b.figure, b.users), ("cpu", 96.0, 50));
        assert_eq!(b.describe(), "pi machine CPU 96% at 50 users");
        assert_eq!(
            bottleneck_of(&level(50, 92.0, 99.0, 0)).unwrap().resource,
            "disk"
        );
        assert_eq!(bottleneck_of(&level(50, 50.0, 20.0, 0)), None);
        assert_eq!(
            bottleneck_of(&level(50, 50.0, 20.0, 3)).unwrap().resource,
            "throttling"
        );
    }

    /// A level run three times: the answer quotes its worst run (the
    /// lowest Apdex) in the headline, and names it; its phases and
    /// interval are read from that same run.
    #[test]
    fn a_repeated_level_is_quoted_by_its_worst_run_everywhere() {
        let target = ApdexGoal {
            apdex: 0.7,
            max_error: 0.01,
            p95_max: None,
        };
        let run = |users: u32, apdex: f64, p95: f64, name: &str| {
            let mut l = level(users, 20.0, 1.0, 0);
            l.good = apdex >= 0.7;
            l.apdex = Some(apdex);
            l.p95_ms = Some(p95);
            l.apdex_interval = Some([apdex - 0.01, apdex]);
            l.bundle = PathBuf::from(name);
            l
        };
        let levels = vec![
            run(120, 1.0, 90.0, "level-0120"),
            run(240, 1.0, 300.0, "level-0240"),
            run(240, 0.99, 400.0, "level-0240-2"),
            run(240, 0.84, 1549.0, "level-0240-3"),
            run(300, 0.5, 4000.0, "level-0300"),
        ];
        let result = answer(
            target,
            levels,
            Some(240),
            false,
            Duration::ZERO,
            true,
            PathBuf::new(),
        );
        assert_eq!(result.capacity.apdex, Some(0.84));
        assert_eq!(result.capacity.p95_ms, Some(1549.0));
        let quoted = result.capacity.quoted.clone().unwrap();
        assert_eq!((quoted.run, quoted.runs), (3, 3));
        assert_eq!(quoted.bundle, PathBuf::from("level-0240-3"));
        assert_eq!(
            result.quoted_level().unwrap().bundle,
            PathBuf::from("level-0240-3")
        );
        assert!(
            result
                .verdict
                .contains("[figures of run 3 of 3, the worst]"),
            "{}",
            result.verdict
        );
        // A level run once names no run.
        let once = answer(
            target,
            vec![run(120, 1.0, 90.0, "a"), run(240, 0.5, 900.0, "b")],
            Some(120),
            false,
            Duration::ZERO,
            true,
            PathBuf::new(),
        );
        assert_eq!(once.capacity.quoted, None);
    }

    /// Lessons of 349 that met twice, too unevenly for a third (the search
    /// judged them broken): they, not 388 above, are where the answer's
    /// range ends.
    #[test]
    fn lessons_met_unevenly_are_the_knee() {
        let target = ApdexGoal {
            apdex: 0.7,
            max_error: 0.01,
            p95_max: None,
        };
        let run = |users: u32, apdex: f64, floor: Option<f64>| {
            let mut l = level(users, 20.0, 1.0, 0);
            l.good = apdex >= 0.7;
            l.apdex = Some(apdex);
            l.uneven_floor = floor;
            l
        };
        let levels = vec![
            run(388, 0.49, None),
            run(349, 0.781, Some(0.45)),
            run(349, 0.954, Some(0.45)),
            run(314, 0.93, None),
            run(314, 0.95, None),
            run(314, 0.91, None),
        ];
        assert_eq!(levels[1].verdict(), "met unevenly");
        let result = answer(
            target,
            levels,
            Some(314),
            false,
            Duration::ZERO,
            true,
            PathBuf::new(),
        );
        assert_eq!(result.knee_users, Some(349));
        assert_eq!(result.range, Some([314, 348]));
        let confirmation = result.confirmation.unwrap();
        assert_eq!((confirmation.low, confirmation.high), (314, 314));
    }

    /// With the server's processes watched, the ladder reads their CPU,
    /// not the machine's that other work keeps busy; the crowding is said.
    #[test]
    fn the_ladder_reads_the_servers_processes_not_a_busy_machine() {
        let mut busy = level(30, 100.0, 1.0, 0);
        assert_eq!(crate::level::utilization(&busy), Some(1.0));
        assert_eq!(crate::level::crowded(&busy), None);
        busy.resources[0].processes = vec![("php-fpm8.2".into(), 3.0), ("nginx".into(), 1.0)];
        let u = crate::level::utilization(&busy).unwrap();
        assert!((u - 0.04).abs() < 1e-9, "{u}");
        assert_eq!(
            crate::level::crowded(&busy).as_deref(),
            Some("pi: the machine's CPU 100% busy, the server's processes (--process) 4%")
        );
        // The server itself full: its processes decide, nothing crowds it.
        busy.resources[0].processes = vec![("php-fpm8.2".into(), 97.0)];
        assert_eq!(crate::level::utilization(&busy), Some(0.97));
        assert_eq!(crate::level::crowded(&busy), None);
    }

    /// A capacity level measured while its users were all thinking (400
    /// users, 1.2 req/s, 30 s think: Little's law finds 37 of them) and a
    /// knee judged on 40 requests: the answer is said, and is not valid.
    #[test]
    fn a_level_out_of_its_steady_cycle_or_thin_is_not_valid() {
        let target = ApdexGoal {
            apdex: 0.7,
            max_error: 0.01,
            p95_max: None,
        };
        let mut silent = level(400, 5.0, 1.0, 0);
        silent.good = true;
        silent.apdex = Some(1.0);
        silent.rps = 1.2;
        silent.think_s = Some(30.0);
        silent.samples = 150;
        silent.min_samples = 100;
        let search = |levels: Vec<Level>, capacity| {
            answer(
                target,
                levels,
                Some(capacity),
                false,
                Duration::from_secs(30),
                true,
                PathBuf::new(),
            )
        };
        let r = search(vec![silent.clone()], 400);
        assert!(!r.valid);
        assert!(r.invalid[0].contains("Little's law"), "{:?}", r.invalid);
        assert!(r.verdict.ends_with("[INVALID]"), "{}", r.verdict);
        // In its cycle: 400 users at 13 req/s with 30 s think.
        let mut steady = silent.clone();
        steady.rps = 13.0;
        let mut knee = level(500, 5.0, 1.0, 0);
        knee.samples = 40;
        knee.min_samples = 100;
        let r = search(vec![steady.clone(), knee.clone()], 400);
        assert!(r.valid, "{:?}", r.invalid);
        knee.thin = true;
        let r = search(vec![steady.clone(), knee], 400);
        assert!(!r.valid);
        assert_eq!(r.invalid.len(), 1, "{:?}", r.invalid);
        assert!(r.invalid[0].contains("500 users decided the answer on 40 requests"));
        // A deciding lesson level that started on a server still busy.
        let mut busy = steady.clone();
        busy.rest = Some(headroom_bundle::capacity::LevelRest {
            waited_s: 120.0,
            idle_ms: 4.0,
            probe_ms: Some(900.0),
            quiet: false,
            probes: 40,
        });
        let r = search(vec![busy.clone()], 400);
        assert_eq!(r.invalid.len(), 1, "{:?}", r.invalid);
        assert!(
            r.invalid[0].starts_with("the level of 400 users started on a server still busy"),
            "{:?}",
            r.invalid
        );
        busy.rest.as_mut().unwrap().quiet = true;
        assert!(search(vec![busy], 400).valid);
        // Without a measured think (a throughput cap's slots), no check.
        let mut paced = silent;
        paced.think_s = None;
        assert!(search(vec![paced], 400).valid);
    }

    /// The newcomer's search: the machine's CPU full (compilers beside it)
    /// while the wiki's php-fpm and nginx used 22% of the host. Not the
    /// server's limit, and not a valid answer; with the server using most
    /// of the CPU, the CPU is its limit.
    #[test]
    fn a_cpu_full_of_other_work_is_not_the_servers_limit() {
        let target = ApdexGoal {
            apdex: 0.7,
            max_error: 0.01,
            p95_max: None,
        };
        let mut good = level(1221, 100.0, 10.0, 0);
        good.good = true;
        good.apdex = Some(1.0);
        let mut knee = level(1223, 100.0, 10.0, 0);
        knee.resources[0].processes = vec![("php-fpm8.2".into(), 20.0), ("nginx".into(), 2.0)];
        let r = answer(
            target,
            vec![good.clone(), knee.clone()],
            Some(1221),
            false,
            Duration::from_secs(1),
            true,
            PathBuf::new(),
        );
        let b = r.bottleneck.as_ref().unwrap();
        assert!(b.crowded_out());
        assert_eq!(
            b.describe(),
            "pi machine CPU 100% at 1223 users, of which the watched server processes used only 22% (php-fpm8.2 20%, nginx 2%): other work on the machine (the load generator, other programs) took the rest, so this is not the server's own limit"
        );
        assert!(!r.valid);
        assert!(
            r.invalid
                .iter()
                .any(|why| why.contains("used 22% of the host")),
            "{:?}",
            r.invalid
        );
        // A server process using 80 of the 100%: the CPU is its limit.
        knee.resources[0].processes = vec![("php-fpm8.2".into(), 80.0)];
        let r = answer(
            target,
            vec![good, knee],
            Some(1221),
            false,
            Duration::from_secs(1),
            true,
            PathBuf::new(),
        );
        assert!(r.valid, "{:?}", r.invalid);
        assert_eq!(
            r.bottleneck.unwrap().describe(),
            "pi machine CPU 100% (php-fpm8.2 80% of it) at 1223 users"
        );
    }

    #[test]
    fn verdicts_name_the_limit_or_say_why_not() {
        let target = ApdexGoal {
            apdex: 0.7,
            max_error: 0.01,
            p95_max: None,
        };
        let mut good = level(40, 60.0, 10.0, 0);
        good.good = true;
        good.apdex = Some(0.74);
        good.apdex_rating = Some("Fair".into());
        good.rps = 25.3;
        let knee = level(50, 96.0, 10.0, 0);
        let r = answer(
            target,
            vec![good.clone(), knee],
            Some(40),
            false,
            Duration::from_secs(1),
            true,
            PathBuf::new(),
        );
        assert_eq!(
            r.verdict(),
            "40 users at Apdex ≥ 0.70 (Fair: 0.74), 25.3 req/s; pi machine CPU 96% at 50 users"
        );
        let calm = level(50, 30.0, 10.0, 0);
        let r = answer(
            target,
            vec![good.clone(), calm.clone()],
            Some(40),
            false,
            Duration::from_secs(1),
            true,
            PathBuf::new(),
        );
        assert_eq!(
            r.verdict(),
            "40 users at Apdex ≥ 0.70 (Fair: 0.74), 25.3 req/s; nothing measured was full at the knee: pi machine CPU 30%, pi memory 40%, pi disk 10%. Not measured: the server's own worker pools, CPU quota and accept queues, because no server process was watched (name them with --process, e.g. nginx,php-fpm8.2)"
        );
        // The server's own pool full at the knee is named, with its evidence.
        let mut pooled = calm.clone();
        pooled.limits = vec![headroom_bundle::limits::Limit {
            kind: "pool".into(),
            resource: "php-fpm8.2's pool www".into(),
            host: "pi".into(),
            utilization_pct: 99.0,
            saturated: true,
            waiting: Some(3.0),
            evidence: "its 2 workers were busy 99% of the measured time".into(),
            change: "Raise pm.max_children (now 2)".into(),
            unmeasured: None,
            severity: 1.2,
            waits_on_a_socket: false,
        }];
        let r = answer(
            target,
            vec![good.clone(), pooled],
            Some(40),
            false,
            Duration::from_secs(1),
            true,
            PathBuf::new(),
        );
        assert_eq!(
            r.verdict(),
            "40 users at Apdex ≥ 0.70 (Fair: 0.74), 25.3 req/s; php-fpm8.2's pool www: its 2 workers were busy 99% of the measured time. Raise pm.max_children (now 2)"
        );
        // A host that sent nothing at the knee is unknown, not idle.
        let mut blind = calm.clone();
        blind.resources.clear();
        blind.missing = vec!["pi (connection refused: the agent is not running)".into()];
        let r = answer(
            target,
            vec![good.clone(), blind],
            Some(40),
            false,
            Duration::from_secs(1),
            true,
            PathBuf::new(),
        );
        assert!(
            r.verdict().contains("no data from pi (connection refused")
                && !r.verdict().contains("elsewhere"),
            "{}",
            r.verdict()
        );
        let mut starved = calm;
        starved.generator_limited = true;
        let r = answer(
            target,
            vec![good, starved],
            Some(40),
            false,
            Duration::from_secs(1),
            true,
            PathBuf::new(),
        );
        assert!(!r.valid && r.verdict().ends_with("[INVALID]"));
        // capacity.json reads back as it was written.
        let dir = std::env::temp_dir().join(format!("headroom-capacity-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        write(&dir, &r).unwrap();
        let back = read(&dir).unwrap();
        assert_eq!(
            serde_json::to_value(&back).unwrap(),
            serde_json::to_value(&r).unwrap()
        );
        fs::write(dir.join(CAPACITY), "{\"schema_version\": 1, \"lev").unwrap();
        assert!(read(&dir).unwrap_err().to_string().contains("truncated"));
        let stopped = interrupted(r);
        assert_eq!(stopped.status, "interrupted");
        assert_eq!((stopped.capacity.users, stopped.valid), (None, false));
        assert!(stopped
            .verdict
            .starts_with("no answer: the search was interrupted after 2 levels"));
    }
}
