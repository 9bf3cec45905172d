//! What a page view costs the server, measured before a lesson search's
//! first lesson at short non-stop levels (the users do not think). A lone
//! user walks the journey as one student does: its samples give a
//! student's steps (each page's document and resources, in order, and the
//! think after each). Then a crowd arrives as a lesson's students do, each
//! iteration a new student (logging in, its cache empty), twice as many a
//! level until the server's throughput stops growing: at the fullest level
//! the server is shared among the requests in flight, so each label's mean
//! time is in proportion to its work (processor sharing), and the server's
//! busy time is the level's; [`Work`] is each request's share of it.
//! [`crate::lesson_model`] simulates a lesson from them.

use crate::lesson_model::StepCost;
use headroom_bundle::jtl_read::JtlSample;
use headroom_bundle::summary::RunSummary;
use headroom_journey::profile::Think;
use headroom_journey::scenario::runner::JourneyPlan;
use headroom_journey::scenario::RequestStep;
use headroom_load::engine::{EnginePlan, Workload};
use std::collections::HashMap;
use std::time::Duration;

/// The lone user's level: long enough for its journey's first steps and
/// some of its steady ones.
pub const LONE: Duration = Duration::from_secs(6);
/// Each later level.
pub const CROWDED: Duration = Duration::from_secs(5);
/// The most non-stop levels (1 user, then 2 to 32).
pub const MOST_LEVELS: usize = 6;
/// A level with more failed requests than this share says the server
/// gave up: the levels stop, and it does not count.
pub const FAILING: f64 = 0.10;

/// What a run's label is to the journey.
#[derive(Debug, Clone, PartialEq)]
pub enum Role {
    /// A request that is a step of its own (not a page), and its think.
    Request(Think),
    /// A page's document.
    Document,
    /// A page's resources.
    Resources,
    /// A page: its document and resources, until the last came; its think.
    Page(Think),
    /// A group of steps, not a request.
    Group,
}

/// Each of a run's labels' role, by name.
pub fn roles(plan: &EnginePlan, names: &[String]) -> HashMap<String, Role> {
    let mut roles = HashMap::new();
    let mut of_journey = |journey: &JourneyPlan, offset: u16| {
        let name = |label: u16| names.get(usize::from(label + offset)).cloned();
        for step in &journey.scenario.requests {
            step_roles(step, journey.think, &name, &mut roles);
        }
        for (i, info) in journey.scenario.labels.iter().enumerate() {
            if info.kind == headroom_journey::scenario::LabelKind::Group {
                if let Some(n) = name(i as u16) {
                    roles.insert(n, Role::Group);
                }
            }
        }
    };
    match &plan.workload {
        Workload::Journey(journey) => of_journey(journey, 0),
        Workload::Mix(mix) => {
            for entry in &mix.journeys {
                of_journey(&entry.plan, entry.first_label);
            }
        }
        _ => {
            for n in names {
                roles.insert(n.clone(), Role::Request(plan.think));
            }
        }
    }
    roles
}

fn step_roles(
    step: &RequestStep,
    default: Think,
    name: &impl Fn(u16) -> Option<String>,
    roles: &mut HashMap<String, Role>,
) {
    let think = step.think.unwrap_or(default);
    match &step.page {
        None => {
            if let Some(n) = name(step.label) {
                roles.insert(n, Role::Request(think));
            }
        }
        Some(page) => {
            for (label, role) in [
                (page.html, Role::Document),
                (page.resources, Role::Resources),
                (step.label, Role::Page(think)),
            ] {
                if let Some(n) = name(label) {
                    roles.insert(n, role);
                }
            }
        }
    }
}

/// What each request costs the server: its label's share of the fullest
/// non-stop level's busy time, in seconds of the whole server.
#[derive(Debug, Clone, PartialEq)]
pub struct Work {
    pub by_label: HashMap<String, f64>,
    /// A request of a label the fullest level did not see.
    pub mean: f64,
    /// Requests in flight at once at that level, on average (its time
    /// over its length): the share each label's mean time is divided by.
    pub in_flight: f64,
}

impl Work {
    /// From the fullest level's summary: each request label's mean time
    /// over the requests in flight at once (under processor sharing, a
    /// request's time is its work times the requests sharing the server).
    pub fn of(fullest: &RunSummary, roles: &HashMap<String, Role>) -> Work {
        let requests: Vec<(&String, f64, u64)> = fullest
            .labels
            .iter()
            .filter(|(label, f)| f.count > 0 && is_request(roles.get(*label)))
            .map(|(label, f)| (label, f.mean_ms / 1000.0, f.count))
            .collect();
        let busy: f64 = requests.iter().map(|(_, mean, n)| mean * *n as f64).sum();
        let count: u64 = requests.iter().map(|r| r.2).sum();
        let in_flight = sharing(busy, fullest.elapsed_s);
        Work {
            by_label: requests
                .iter()
                .map(|(label, mean, _)| ((*label).clone(), mean / in_flight))
                .collect(),
            mean: if count > 0 {
                busy / count as f64 / in_flight
            } else {
                0.0
            },
            in_flight,
        }
    }

    /// The work a level did a second, in seconds of the whole server as
    /// the fullest level priced it: 1 at the fullest level itself (its
    /// server was busy all the time), less where a crowd slowed it. A
    /// short level of a larger crowd holds a different mix of requests
    /// (its students, slower, reach fewer of their later steps), so its
    /// requests a second alone do not say its speed: on DokuWiki, 32 new
    /// students in 5 s were still at its logins, a heavier mix, and made
    /// 112 requests a second where 16 had made 153, at 1.3 times their
    /// work a second.
    pub fn rate(&self, summary: &RunSummary, roles: &HashMap<String, Role>) -> f64 {
        let done: f64 = summary
            .labels
            .iter()
            .filter(|(label, _)| is_request(roles.get(*label)))
            .map(|(label, f)| f.count as f64 * self.of_label(label))
            .sum();
        done / summary.elapsed_s.max(1e-9)
    }

    fn of_label(&self, label: &str) -> f64 {
        self.by_label.get(label).copied().unwrap_or(self.mean)
    }
}

/// Requests in flight at once, on average, over a level (its requests'
/// time over its length; at least one).
pub fn in_flight(summary: &RunSummary, roles: &HashMap<String, Role>) -> f64 {
    let busy: f64 = summary
        .labels
        .iter()
        .filter(|(label, _)| is_request(roles.get(*label)))
        .map(|(_, f)| f.mean_ms / 1000.0 * f.count as f64)
        .sum();
    sharing(busy, summary.elapsed_s)
}

/// Requests in flight at once from their time (`busy`, seconds) over a
/// level's length; at least one.
fn sharing(busy: f64, elapsed_s: f64) -> f64 {
    (busy / elapsed_s.max(1e-9)).max(1.0)
}

/// Whether a label's samples are requests over the wire (not a page that
/// stands for its document and resources, nor a group).
fn is_request(role: Option<&Role>) -> bool {
    matches!(
        role,
        None | Some(Role::Request(_) | Role::Document | Role::Resources)
    )
}

/// One student's journey from the lone user's samples, in the order it
/// recorded them: a page's document opens its step, its resources join
/// it, the page's own sample closes it with its think; a request of its
/// own is a step. Each request costs its label's [`Work`].
pub fn journey(samples: &[JtlSample], roles: &HashMap<String, Role>, work: &Work) -> Vec<StepCost> {
    let mut steps = Vec::new();
    let mut open: Option<StepCost> = None;
    for sample in samples.iter().filter(|s| !s.transaction) {
        let cost = work.of_label(&sample.label);
        match roles.get(&sample.label) {
            Some(Role::Document) => {
                open = Some(StepCost {
                    first_s: cost,
                    then_s: Vec::new(),
                    think: Think::None,
                });
            }
            Some(Role::Resources) => {
                if let Some(step) = open.as_mut() {
                    step.then_s.push(cost);
                }
            }
            Some(Role::Page(think)) => {
                if let Some(mut step) = open.take() {
                    step.think = *think;
                    steps.push(step);
                }
            }
            Some(Role::Group) => {}
            Some(Role::Request(think)) => steps.push(StepCost {
                first_s: cost,
                then_s: Vec::new(),
                think: *think,
            }),
            // A label the plan did not name (a redirect's): a request.
            None => steps.push(StepCost {
                first_s: cost,
                then_s: Vec::new(),
                think: Think::None,
            }),
        }
    }
    steps
}

/// A non-stop level as measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NonStop {
    pub users: u32,
    /// Requests over the wire a second (documents, resources and plain
    /// steps).
    pub requests_per_s: f64,
    /// Their mean time (s).
    pub mean_s: f64,
    /// The share that failed.
    pub failed: f64,
}

impl NonStop {
    /// A level's figures from its summary and the roles of its labels.
    pub fn of(users: u32, summary: &RunSummary, roles: &HashMap<String, Role>) -> NonStop {
        let (mut count, mut errors, mut time) = (0u64, 0u64, 0.0);
        for (label, f) in &summary.labels {
            if is_request(roles.get(label)) {
                count += f.count;
                errors += f.errors;
                time += f.mean_ms / 1000.0 * f.count as f64;
            }
        }
        let elapsed = summary.elapsed_s.max(1e-9);
        NonStop {
            users,
            requests_per_s: count as f64 / elapsed,
            mean_s: if count > 0 { time / count as f64 } else { 0.0 },
            failed: if count > 0 {
                errors as f64 / count as f64
            } else {
                1.0
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_bundle::summary::LabelFigures;
    use std::collections::BTreeMap;

    fn figures(count: u64, errors: u64, mean_ms: f64) -> LabelFigures {
        let mut f: LabelFigures = serde_json::from_value(serde_json::json!({
            "count": count, "errors": errors, "error_rate": 0.0, "mean_ms": mean_ms,
            "min_ms": 1.0, "p50_ms": 1.0, "p90_ms": 1.0, "p95_ms": 1.0, "p99_ms": 1.0,
            "max_ms": 1.0, "stdev_ms": 0.0, "rps": 1.0, "apdex": null, "apdex_rating": null,
            "apdex_satisfied": 0, "apdex_tolerating": 0, "apdex_frustrated": 0,
            "bytes_received": 0, "bytes_sent": 0
        }))
        .unwrap();
        f.mean_ms = mean_ms;
        f
    }

    fn summary(labels: &[(&str, u64, u64, f64)], elapsed_s: f64) -> RunSummary {
        let mut s: RunSummary = serde_json::from_value(serde_json::json!({
            "elapsed_s": elapsed_s, "apdex_t_ms": 500.0, "apdex_f_ms": 2000.0,
            "total": serde_json::to_value(figures(0, 0, 0.0)).unwrap(),
            "labels": {}, "peak_vus": 1, "concurrency": 1.0, "throughput_mb_s": 0.0
        }))
        .unwrap();
        s.labels = labels
            .iter()
            .map(|(n, c, e, m)| (n.to_string(), figures(*c, *e, *m)))
            .collect::<BTreeMap<_, _>>();
        s
    }

    fn sample(label: &str, elapsed_ms: u64) -> JtlSample {
        JtlSample {
            label: label.into(),
            elapsed_ms,
            ..JtlSample::default()
        }
    }

    fn roles_of_a_class() -> HashMap<String, Role> {
        let read = Think::Constant {
            time: Duration::from_secs(30),
        };
        HashMap::from([
            ("login".to_string(), Role::Request(Think::None)),
            ("front (html)".to_string(), Role::Document),
            ("front (resources)".to_string(), Role::Resources),
            ("front".to_string(), Role::Page(read)),
            ("lesson".to_string(), Role::Group),
        ])
    }

    /// The fullest level's mean times over the requests in flight are
    /// each label's work; the samples in the order recorded make the
    /// steps: a page's document and resources one step with the page's
    /// think, each request costing its label's work.
    #[test]
    fn the_lone_users_samples_are_a_students_journey() {
        let roles = roles_of_a_class();
        // 10 s: 2 logins of 1 s, 10 documents of 0.5 s, 20 resources of
        // 0.1 s: 9 s of requests over 10 s, 0.9 in flight: less than
        // one, so each costs its own time.
        let calm = summary(
            &[
                ("login", 2, 0, 1000.0),
                ("front (html)", 10, 0, 500.0),
                ("front (resources)", 20, 0, 100.0),
                ("front", 10, 0, 9999.0),
                ("lesson", 1, 0, 9999.0),
            ],
            10.0,
        );
        let work = Work::of(&calm, &roles);
        assert_eq!(work.in_flight, 1.0);
        // Twice as long a level's times at 4 s: 18 s of requests in 4 s,
        // 4.5 in flight.
        let full = summary(
            &[
                ("login", 2, 0, 2000.0),
                ("front (html)", 10, 0, 1000.0),
                ("front (resources)", 20, 0, 200.0),
                ("front", 10, 0, 9999.0),
            ],
            4.0,
        );
        let work = Work::of(&full, &roles);
        assert!((work.in_flight - 4.5).abs() < 1e-9);
        assert!((work.by_label["login"] - 2.0 / 4.5).abs() < 1e-9);
        assert!(!work.by_label.contains_key("front"));
        assert!((work.mean - 18.0 / 32.0 / 4.5).abs() < 1e-9);
        let samples = [
            sample("login", 41),
            sample("front (html)", 12),
            sample("front (resources)", 1),
            sample("front (resources)", 0),
            sample("front", 14),
            sample("lesson", 55),
            sample("front (html)", 13),
            sample("front", 13),
            sample("unnamed redirect", 3),
        ];
        let steps = journey(&samples, &roles, &work);
        assert_eq!(steps.len(), 4);
        assert!((steps[0].first_s - 2.0 / 4.5).abs() < 1e-9);
        assert_eq!(steps[0].think, Think::None);
        assert!((steps[1].first_s - 1.0 / 4.5).abs() < 1e-9);
        assert_eq!(steps[1].then_s.len(), 2);
        assert!((steps[1].then_s[0] - 0.2 / 4.5).abs() < 1e-9);
        assert_eq!(steps[1].think.mean(), Duration::from_secs(30));
        assert!(steps[2].then_s.is_empty());
        assert!((steps[3].first_s - work.mean).abs() < 1e-12);
    }

    /// A level counts the requests that went over the wire (not the pages
    /// that stand for them, nor groups), and the requests it kept in
    /// flight.
    #[test]
    fn levels_count_the_requests_over_the_wire() {
        let roles = roles_of_a_class();
        let s = summary(
            &[
                ("login", 1, 0, 40.0),
                ("front (html)", 49, 0, 10.0),
                ("front (resources)", 50, 0, 10.0),
                ("front", 49, 0, 21.0),
                ("lesson", 1, 0, 999.0),
            ],
            1.0,
        );
        // The work a second as priced by a fuller level: the login 40 ms
        // of its own, the document and the resources 5 ms each (their
        // 10 ms over 2 in flight): 0.04 + 99 × 0.005 over 1 s.
        let fuller = Work {
            by_label: HashMap::from([
                ("login".to_string(), 0.04),
                ("front (html)".to_string(), 0.005),
                ("front (resources)".to_string(), 0.005),
            ]),
            mean: 0.005,
            in_flight: 2.0,
        };
        assert!((fuller.rate(&s, &roles) - 0.535).abs() < 1e-9);
        // A fullest level does its own work all the time.
        let own = Work::of(&s, &roles);
        assert!((own.rate(&s, &roles) - 1.0).abs() < 1e-9);
        let one = NonStop::of(1, &s, &roles);
        assert_eq!(one.requests_per_s, 100.0);
        assert!((one.mean_s - 0.0103).abs() < 1e-9);
        assert_eq!(one.failed, 0.0);
        assert!((in_flight(&s, &roles) - 1.03).abs() < 1e-9);
    }
}
