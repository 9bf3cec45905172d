//! headroom's load engine. A pipeline of plain values:
//! target + request + profile → [`engine`] (virtual users on per-core
//! runtimes) → [`sample::Sample`]s → per-thread [`recorder`] → per-second
//! interval pieces → [`run`]'s collector → a bundle on disk (written by
//! `headroom_bundle`) and its `RunSummary`.
//!
//! A run is described by a [`spec::RunSpec`] and assembled by [`assemble`];
//! a journey's steps run in [`scenario::runner`], and a step loaded as a
//! browser loads it fetches its resources through [`page_load`].

pub mod agent_samples;
pub mod assemble;
pub mod client;
pub mod clock;
pub mod conn;
pub mod content_encoding;
pub mod engine;
pub mod exchange;
pub mod failures;
pub mod fault;
pub mod http1;
pub mod http2;
pub mod journey_mix;
pub mod lesson;
pub mod live_metrics;
pub mod monitoring;
pub mod page_load;
pub mod phases;
pub mod precise_timer;
pub mod preflight;
pub mod probe;
pub mod profile;
pub mod protocol;
pub mod recorder;
pub mod replay;
pub mod run;
pub mod scenario;
pub mod sent;
pub mod shard;
pub mod spec;
pub mod stages;
pub mod start;
pub mod target;
pub mod tls_failure;
pub mod traffic;
pub mod yaml;
