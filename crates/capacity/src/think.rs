//! The think time a search plans with ([`PlannedThink`]): the users' mean
//! think per request (Little's law's Z, and what a level's timing fits),
//! the think a user's first iteration adds (a scenario's `once:` steps),
//! and how capacity.json says it. Each level also measures the think its
//! users took ([`crate::watch`]).

use headroom_bundle::manifest::ThinkRecord;
use headroom_load::profile::Think;
use headroom_load::scenario::{Node, Scenario};
use std::time::Duration;

/// The think a search plans with.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedThink {
    /// The users' mean think per request of a steady iteration.
    pub mean: Duration,
    /// The think a user's first iteration adds (its `once:` steps').
    pub first: Duration,
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
    use headroom_load::scenario::parse_str;
    use headroom_load::target::Target;
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
        let PlannedThink { mean, first, text } = PlannedThink::of_scenario(&scenario, Some(think));
        assert_eq!((mean.as_millis(), first), (7333, Duration::ZERO));
        assert!(
            text.starts_with("7.333 s planned per request of a steady iteration (its if: steps counted as taken)"),
            "{text}"
        );
        // Without a scenario, the flag's think (or none).
        assert_eq!(PlannedThink::of_flag(None).text, "none");
        assert_eq!(PlannedThink::of_flag(Some(think)).mean, Duration::ZERO);
    }
}
