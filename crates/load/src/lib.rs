//! headroom's load engine. A pipeline of plain values:
//! target + request + profile → [`engine`] (virtual users on per-core
//! runtimes) → [`sample::Sample`]s → per-thread [`recorder`] → per-second
//! interval pieces → [`run`]'s collector → [`bundle`] on disk and a
//! [`summary::RunSummary`].

pub mod bundle;
pub mod bundle_reader;
pub mod client;
pub mod conn;
pub mod content_encoding;
pub mod engine;
pub mod hlog;
pub mod http1;
pub mod jtl;
pub mod monitoring;
pub mod precise_timer;
pub mod profile;
pub mod recorder;
pub mod recovery;
pub mod run;
pub mod sample;
pub mod scenario;
pub mod stages;
pub mod summary;
pub mod tally;
pub mod target;
pub mod warnings;
