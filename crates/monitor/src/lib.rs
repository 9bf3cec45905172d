//! Host resources on the load timeline. [`sampler`] reads Linux's /proc
//! and /sys (from any root, so tests use fixture trees) and turns counter
//! deltas into per-second figures: CPU, memory, disks, network,
//! temperatures, frequencies and named processes.

pub mod agent;
pub mod agent_metrics;
pub mod cgroup_io;
pub mod database;
pub mod doctor;
pub mod exposition;
pub mod fingerprint;
pub mod fingerprint_text;
pub mod gauges;
pub mod listen;
pub mod netbench;
pub mod pressure;
pub mod procfs;
pub mod redis;
pub mod sampler;
pub mod server_metrics;
pub mod server_status;
pub mod software;
pub mod stub_status;
pub mod threads;

pub use doctor::{examine, Finding};
pub use fingerprint::Fingerprint;
pub use sampler::{Resources, Sampler, SamplerConfig};
