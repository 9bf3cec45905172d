//! headroom's load engine. A pipeline of plain values:
//! target + request + profile → [`engine`] (virtual users on per-core
//! runtimes) → [`sample::Sample`]s → per-thread [`recorder`] → per-second
//! interval pieces → [`run`]'s collector → a bundle on disk (written by
//! `headroom_bundle`) and its `RunSummary`.
//!
//! A run is described by a [`spec::RunSpec`] and assembled by [`assemble`].
//! Below it: the HTTP client (`headroom_http`), journeys and their page
//! loads (`headroom_journey`), access-log models and replay
//! (`headroom_traffic`).

pub mod agent_samples;
pub mod assemble;
pub mod clock;
pub mod engine;
pub mod failures;
pub mod fault;
pub mod live_metrics;
pub mod monitoring;
pub mod phases;
pub mod precise_timer;
pub mod recorder;
pub mod run;
pub mod run_text;
pub mod spec;
pub mod start;
