//! headroom's journeys: what a scenario file says ([`scenario`]: steps,
//! templates, extraction, checks, its load [`profile`], a [`lesson`]'s
//! arrivals), mixes of journeys ([`journey_mix`]), and pages loaded as a
//! browser loads them, with its cache ([`page_load`]).

pub mod check_text;
pub mod journey_mix;
pub mod lesson;
pub mod page_load;
pub mod profile;
pub mod scenario;
pub mod shard;
pub mod stages;
pub mod trial_text;
pub mod yaml;
