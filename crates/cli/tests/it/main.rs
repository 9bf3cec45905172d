//! The integration tests: one binary (linked once, not once per feature),
//! a module per feature. Each runs the headroom binary against servers it
//! starts on 127.0.0.1. `cargo test -p headroom --test it capacity::` runs
//! one feature's tests.

mod support;

mod access_log;
mod agent;
mod bad_input;
mod bench;
mod capacity;
mod class;
mod compare;
mod crashes;
mod demo;
mod deploy;
mod emulate;
mod experiment;
mod har_apps;
mod har_import;
mod http2;
mod jmeter;
mod journeys;
mod lesson;
mod limits;
mod load;
mod log_sessions;
mod misbehaving;
mod mix;
mod page_failures;
mod page_loads;
mod predict;
mod prometheus;
mod release;
mod replay;
mod report;
mod scenario;
mod script_requests;
mod server_timing;
mod shard;
mod structure;
mod testbed;
mod tls_errors;
mod wire_counts;
