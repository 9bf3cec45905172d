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
