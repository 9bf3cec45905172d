//! The think time a search plans with ([`PlannedThink`]): the users' mean
//! think per request (Little's law's Z, and what a level's timing fits),
//! the think a user's first iteration adds (a scenario's `once:` steps),
//! and how capacity.json says it. Each level also measures the think its
//! users took ([`crate::watch`]).

use headroom_bundle::manifest::ThinkRecord;
use headroom_journey::profile::Think;
use headroom_journey::scenario::mix::Mix;
use headroom_journey::scenario::{Node, Scenario};
use std::time::Duration;

/// The think a search plans with.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedThink {
    /// The users' mean think per request of a steady iteration.
    pub mean: Duration,
    /// The think a user's first iteration adds (its `once:` steps').
    pub first: Duration,
    /// The run's own default think, by whose mean a lesson's arrival phase
    /// outlasts its arrivals (the phases' split): `--think`, else the
    /// scenario's `think:`, else the mix's journeys' shared one.
    pub split: Duration,
    /// As a person reads it (capacity.json's `setup.think`).
    pub text: String,
}

impl PlannedThink {
    /// A URL's users: `--think` when given, else none.
    pub fn of_flag(think: Option<Think>) -> PlannedThink {
        let Some(t) = think else {
            return PlannedThink {
                mean: Duration::ZERO,
                first: Duration::ZERO,
                split: Duration::ZERO,
                text: "none".into(),
            };
        };
        // The engine's think time serializes to the record's shape.
        let record: ThinkRecord = serde_json::to_value(t)
            .and_then(serde_json::from_value)
            .unwrap_or_default();
        PlannedThink {
            mean: t.mean(),
            first: Duration::ZERO,
            split: t.mean(),
            text: record.describe(),
        }
    }

    /// A scenario's users: its own think per step (or its default), and
    /// `think` (`--think`) for the steps without their own.
    pub fn of_scenario(scenario: &Scenario, think: Option<Think>) -> PlannedThink {
        let default = think.unwrap_or(scenario.think);
        let mean = scenario.think_per_request(default);
        PlannedThink {
            mean,
            first: scenario.first_iteration_think(default),
            split: default.mean(),
            text: format!(
                "{:.3} s planned per request of a steady iteration{}, from the scenario's steps{} (each level measures the think its users took)",
                mean.as_secs_f64(),
                if has_conditions(&scenario.flow) {
                    " (its if: steps counted as taken)"
                } else {
                    ""
                },
                if think.is_some() {
                    " and --think for those without their own"
                } else {
                    ""
                }
            ),
        }
    }
}

impl PlannedThink {
    /// A mix's users: each journey's steady cycle weighted by its share
    /// of the users, so the mean think per request is the whole mix's.
    pub fn of_mix(mix: &Mix, think: Option<Think>) -> PlannedThink {
        let total: f64 = mix.journeys.iter().map(|j| j.weight).sum();
        let (mut requests, mut thinking) = (0.0, 0.0);
        let mut first = Duration::ZERO;
        for journey in &mix.journeys {
            let default = think.unwrap_or(journey.scenario.think);
            let (r, t) = journey.scenario.steady_cycle(default);
            let share = journey.weight / total;
            requests += share * r;
            thinking += share * t.as_secs_f64();
            first = first.max(journey.scenario.first_iteration_think(default));
        }
        let mean = if requests > 0.0 {
            Duration::from_secs_f64(thinking / requests)
        } else {
            Duration::ZERO
        };
        PlannedThink {
            mean,
            first,
            split: think
                .unwrap_or_else(|| headroom_load::assemble::users_think(mix))
                .mean(),
            text: format!(
                "{:.3} s planned per request of a steady iteration, from the mix's journeys weighted by their shares{} (each level measures the think its users took)",
                mean.as_secs_f64(),
                if think.is_some() {
                    " and --think for steps without their own"
                } else {
                    ""
                }
            ),
        }
    }
}

/// Whether a step (or block) runs only `if:` its condition holds.
fn has_conditions(nodes: &[Node]) -> bool {
    nodes.iter().any(|n| {
        n.flags().condition.is_some()
            || match n {
                Node::Request { .. } => false,
                Node::Loop { children, .. }
                | Node::Group { children, .. }
                | Node::Block { children, .. } => has_conditions(children),
            }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_http::target::Target;
    use headroom_journey::scenario::parse_str;
    use std::path::Path;

    /// A scenario whose if: step (20 s think) is never taken planned
    /// 7.333 s per request while its users took 1.000 s: the text said
    /// "mean per request of a steady iteration" as if measured.
    #[test]
    fn a_planned_think_with_if_steps_says_they_count_as_taken() {
        let yaml = "steps:\n  - label: a\n    path: /a\n    think: 2s\n  - label: b\n    path: /b\n    if: {var: flag, equals: \"yes\"}\n    think: 20s\n  - label: c\n    path: /c\nvariables:\n  flag: \"\"\n";
        let target = Target::parse("http://127.0.0.1:1/").unwrap();
        let scenario = parse_str(yaml, Path::new("if.yaml"), Some(&target)).unwrap();
        let think = Think::parse("0s").unwrap();
        let PlannedThink {
            mean, first, text, ..
        } = PlannedThink::of_scenario(&scenario, Some(think));
        assert_eq!((mean.as_millis(), first), (7333, Duration::ZERO));
        assert!(
            text.starts_with("7.333 s planned per request of a steady iteration (its if: steps counted as taken)"),
            "{text}"
        );
        // Without a scenario, the flag's think (or none).
        assert_eq!(PlannedThink::of_flag(None).text, "none");
        assert_eq!(PlannedThink::of_flag(Some(think)).mean, Duration::ZERO);
    }

    /// A 1:1 mix of a 1-request journey thinking 4 s and a 3-request one
    /// thinking 1 s: a user's cycle is on average 0.5 × (1 request, 4 s) +
    /// 0.5 × (3 requests, 3 s) = 2 requests and 3.5 s, so 1.75 s a request
    /// (not 2.5 s, the mean of the two journeys' means).
    #[test]
    fn a_mix_plans_its_users_think_per_request() {
        let dir = std::env::temp_dir().join(format!("headroom-mix-think-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("a.yaml"),
            "think: 4s\nsteps:\n  - label: a\n    path: /a\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("b.yaml"),
            "think: 1s\nsteps:\n  - label: b\n    path: /b\n  - label: c\n    path: /c\n  - label: d\n    path: /d\n",
        )
        .unwrap();
        let text = "mix:\n  - {scenario: a.yaml, weight: 1}\n  - {scenario: b.yaml, weight: 1}\n";
        let target = Target::parse("http://127.0.0.1:1/").unwrap();
        let mix =
            headroom_journey::scenario::mix::parse_mix(text, &dir.join("m.yaml"), Some(&target))
                .unwrap();
        let planned = PlannedThink::of_mix(&mix, None);
        assert_eq!(planned.mean, Duration::from_millis(1750));
        let user = crate::who::of_mix(&mix, &planned);
        assert!(
            user.contains(
                "'a' 50% (1 request), 'b' 50% (3 requests); reading 1.8 s between requests"
            ),
            "{user}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
