//! `headroom doctor`: the environment and what in it would distort a run
//! (each host in [`headroom_monitor::fingerprint_text`]'s words).

use crate::args::DoctorArgs;
use crate::execute::examine_host;
use headroom_bench::doctor_text::{doctor_json, latest_bench_lines};
use std::process::ExitCode;

pub fn run(args: DoctorArgs) -> ExitCode {
    if let Err(e) = crate::execute::check_agent_token(&args.monitor, args.agent_token.as_deref()) {
        eprintln!("headroom: {e}");
        return ExitCode::from(crate::execute::EXIT_USAGE);
    }
    let same_host = args.target.as_ref().is_some_and(|t| {
        use std::net::ToSocketAddrs;
        (t.host.as_str(), t.port)
            .to_socket_addrs()
            .map(|mut addrs| addrs.any(|a| a.ip().is_loopback()))
            .unwrap_or(false)
    });
    let (f, findings) = examine_host(same_host);
    let mut remote = Vec::new();
    for monitor in &args.monitor {
        let crate::args::Monitor::Agent(authority) = monitor else {
            continue;
        };
        match headroom_monitor::agent::fetch_fingerprint(authority, args.agent_token.as_deref()) {
            Ok(fingerprint) => {
                let findings = headroom_monitor::examine(&fingerprint, &[], false);
                remote.push((authority.clone(), fingerprint, findings));
            }
            Err(e) => {
                eprintln!("headroom: {e}");
                return ExitCode::from(crate::execute::EXIT_CANNOT_RUN);
            }
        }
    }
    let bench = headroom_bench::latest::latest(std::path::Path::new("runs"), &f.hostname);
    if args.json {
        let doc = doctor_json(&f, &findings, &remote, bench.as_ref());
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        return ExitCode::SUCCESS;
    }
    print_host(&f, &findings);
    for line in bench.as_ref().map(latest_bench_lines).unwrap_or_default() {
        println!("{line}");
    }
    for (agent, f, findings) in &remote {
        println!("\nagent {agent}:");
        print_host(f, findings);
    }
    ExitCode::SUCCESS
}

fn print_host(f: &headroom_monitor::Fingerprint, findings: &[headroom_monitor::Finding]) {
    for line in headroom_monitor::fingerprint_text::host_lines(f, findings) {
        println!("{line}");
    }
}
