//! `headroom agent`: serves this machine's resources to headroom runs.

use crate::args::AgentArgs;
use crate::execute::EXIT_USAGE;
use headroom_monitor::agent::{Agent, AgentConfig};
use headroom_monitor::procfs::Roots;
use headroom_monitor::SamplerConfig;
use std::process::ExitCode;

pub fn run(args: AgentArgs) -> ExitCode {
    let config = AgentConfig {
        listen: args.listen,
        token: args.token,
        sampler: SamplerConfig {
            roots: Roots {
                proc: args.proc,
                sys: args.sys,
            },
            processes: args.process,
            link_capacity_mbit: args.link_capacity,
            databases: args
                .credentials
                .as_deref()
                .and_then(|path| headroom_monitor::database::read_credentials(path).ok())
                .unwrap_or_default(),
        },
        bench_endpoints: args.bench_endpoints,
    };
    match Agent::start(config) {
        Ok(agent) => {
            let bench = if args.bench_endpoints {
                "; network benchmark endpoints on (/bench/...)"
            } else {
                ""
            };
            eprintln!(
                "headroom agent on http://{}/ (samples every second; /samples?since=N, /fingerprint, /metrics for Prometheus{bench}); Ctrl-C stops it",
                agent.address
            );
            loop {
                std::thread::park();
            }
        }
        Err(e) => {
            eprintln!("headroom: {e}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}
