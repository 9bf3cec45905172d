//! `headroom doctor`: the environment and what in it would distort a run.

use crate::args::DoctorArgs;
use crate::execute::examine_host;
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
        let hosts: Vec<serde_json::Value> = remote
            .iter()
            .map(|(agent, f, findings)| serde_json::json!({ "agent": agent, "fingerprint": f, "findings": findings }))
            .collect();
        let latest = bench.as_ref().map(|(path, b)| {
            serde_json::json!({
                "bundle": path, "started": b.started,
                "headlines": headroom_bench::latest::headlines(b, None),
            })
        });
        let doc = serde_json::json!({
            "fingerprint": f, "findings": findings, "monitored_hosts": hosts, "latest_bench": latest,
        });
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        return ExitCode::SUCCESS;
    }
    print_host(&f, &findings);
    if let Some((path, b)) = &bench {
        println!("  latest bench ({}, {}):", path.display(), b.started);
        for line in headroom_bench::latest::headlines(b, None) {
            println!("    {line}");
        }
    }
    for (agent, f, findings) in &remote {
        println!("\nagent {agent}:");
        print_host(f, findings);
    }
    ExitCode::SUCCESS
}

fn print_host(f: &headroom_monitor::Fingerprint, findings: &[headroom_monitor::Finding]) {
    let opt = |v: Option<String>| v.unwrap_or_else(|| "unknown".into());
    println!(
        "{} ({}): {}, {} cores, {} ({}-bit userland)",
        f.hostname, f.os_release, f.cpu_model, f.cores, f.architecture, f.userland_bits
    );
    println!(
        "  kernel {}, memory {} MB, swap {} MB ({} MB used)",
        f.kernel, f.memory_mb, f.swap_mb, f.swap_used_mb
    );
    println!(
        "  governor {}, frequency {} (min {}, max {}), temperature {}",
        opt(f.governor.clone()),
        opt(f.frequency_mhz.map(|v| format!("{v:.0} MHz"))),
        opt(f.frequency_min_mhz.map(|v| format!("{v:.0}"))),
        opt(f.frequency_max_mhz.map(|v| format!("{v:.0}"))),
        opt(f.temperature_c.map(|t| format!("{t:.1} °C")))
    );
    if let Some(s) = &f.storage {
        println!(
            "  storage for {}: {} ({}, {}), {}, scheduler {}, model {}",
            s.mount_point,
            s.device,
            s.filesystem,
            s.mount_options,
            match s.rotational {
                Some(true) => "rotational",
                Some(false) => "solid state",
                None => "unknown type",
            },
            opt(s.scheduler.clone()),
            opt(s.model.clone())
        );
    }
    println!(
        "  virtualization {}, load average {:.2} {:.2} {:.2}{}",
        f.virtualization,
        f.load_average[0],
        f.load_average[1],
        f.load_average[2],
        f.raspberry_pi_model
            .as_ref()
            .map(|m| format!(", {m}"))
            .unwrap_or_default()
    );
    if findings.is_empty() {
        println!("\nNo findings: nothing here is known to distort a run.");
    } else {
        println!();
        for finding in findings {
            println!("  {}: {}", finding.check, finding.message);
        }
    }
}
