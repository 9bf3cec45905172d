//! `headroom predict SEARCH --for HOST...`'s work and words: the search
//! read as a model ([`crate::predict`]), its error against the levels
//! measured, and each host's users at the search's target
//! ([`headroom_bench::host_scale`]); the header, each host's answer, the
//! cautions, the text the terminal shows and the JSON document. The CLI
//! maps the flags to a [`PredictAsk`] and prints.

use crate::predict::{read_search, Fit, MeasuredServer, Prediction};
use headroom_analysis::prediction::{disk_variability, CpuFit, Demands, BUSY};
use headroom_bench::host_scale::{scale, MeasuredHost, PredictedHost, ScaledHost};
use std::path::Path;

/// The curve is drawn to this many times the measured capacity's users.
const CURVE_TIMES: u32 = 4;

/// What `headroom predict` is asked: the search, the hosts to predict
/// for, and what is known of the measured host.
pub struct PredictAsk<'a> {
    /// The capacity search's directory.
    pub search: &'a Path,
    /// The hosts as given (`pi4`, `cpus=N`, a bench directory, `,iops=N`).
    pub hosts: &'a [String],
    /// A bench bundle of the measured host.
    pub bench_here: Option<&'a Path>,
    /// The CPUs the server could use when measured.
    pub server_cpus: Option<f64>,
    /// The server's workers, if bounded.
    pub pool: Option<u32>,
}

/// The search as a model, its fit, its answer for the measured host and
/// each host's prediction.
pub struct HostPredictions {
    pub server: MeasuredServer,
    pub fits: Vec<Fit>,
    pub itself: Prediction,
    pub predictions: Vec<(ScaledHost, Prediction)>,
}

/// Reads the search and predicts each host asked for.
pub fn predict_hosts(ask: &PredictAsk<'_>) -> Result<HostPredictions, String> {
    let targets = ask
        .hosts
        .iter()
        .map(|h| PredictedHost::parse(h))
        .collect::<Result<Vec<_>, _>>()?;
    let server = read_search(ask.search, ask.server_cpus, ask.pool)?;
    if let Some(given) = targets.iter().find_map(|t| t.disk_iops) {
        if server.levels.iter().any(|l| l.disk_iops.is_none()) {
            return Err(format!(
                "{}: the search's levels did not keep the disks' operations a second (searched before headroom kept them, or its monitoring saw no disk), so a disk given in them ({given:.0} IOPS) cannot be modelled: search again with --monitor",
                ask.search.display()
            ));
        }
    }
    let bench = match ask.bench_here {
        Some(dir) => Some(headroom_bundle::bench::read(dir).map_err(|e| e.to_string())?),
        None => None,
    };
    let here = MeasuredHost {
        server_cpus: server.server_cpus,
        architecture: &server.architecture,
        bench: bench.as_ref(),
    };
    let fits = server.fit()?;
    let most = server
        .levels
        .iter()
        .map(|l| l.users)
        .max()
        .unwrap_or(1)
        .max(server.measured_users.unwrap_or(1))
        * CURVE_TIMES;
    let itself = server.predict(&server.here(), most)?;
    let mut predictions: Vec<(ScaledHost, Prediction)> = Vec::new();
    for target in &targets {
        let host = scale(target, &here)?;
        let prediction = server.predict(&host.scale, most)?;
        predictions.push((host, prediction));
    }
    Ok(HostPredictions {
        server,
        fits,
        itself,
        predictions,
    })
}

impl HostPredictions {
    /// The page's findings: the header, the model against the search, and
    /// what is assumed.
    pub fn findings(&self) -> Vec<String> {
        let mut findings = header(&self.server);
        findings.extend(against_the_search(&self.server, &self.itself));
        findings.push(assumed(&self.server));
        findings
    }

    /// Each host's answer in words, in the order of the hosts.
    pub fn answers(&self) -> Vec<String> {
        self.predictions
            .iter()
            .map(|(host, p)| answer(&self.server, host, p))
            .collect()
    }

    /// What the prediction cannot know from this search.
    pub fn cautions(&self) -> Vec<String> {
        cautions(&self.server)
    }

    /// The terminal's lines.
    pub fn describe(&self) -> Vec<String> {
        describe(&self.server, &self.fits, &self.itself, &self.predictions)
    }

    /// The JSON document (docs/json.md#predict).
    pub fn json(&self) -> serde_json::Value {
        json(&self.server, &self.fits, &self.itself, &self.predictions)
    }
}

fn ms(s: f64) -> String {
    format!("{:.1} ms", s * 1000.0)
}

/// The model's answer for the measured host beside the search's, and
/// what a gap between them means.
fn against_the_search(server: &MeasuredServer, itself: &Prediction) -> Vec<String> {
    let (Some(model), Some(measured)) = (itself.users, server.measured_users) else {
        return Vec::new();
    };
    if server.at_least {
        return vec![format!(
            "the model of this host: {model} {} (the search measured at least {measured}: it found no limit to check the model against)",
            server.users_are
        )];
    }
    let mut lines = vec![format!(
        "the model of this host: {model} {} (the search measured {measured})",
        server.users_are
    )];
    if f64::from(model) > 1.15 * f64::from(measured) {
        let most_busy = server
            .levels
            .iter()
            .filter(|l| l.met)
            .map(|l| l.cpu_busy / server.server_cpus)
            .fold(0.0, f64::max);
        lines.push(format!(
            "  the server stopped short of its CPU (at most {:.0}% of the {} CPU it could use in a level that met the target): something the model does not hold limited it (a lock, a pool, the disk, the generator); a host whose CPU is near this one's would be predicted too high, and one with much less CPU is limited by it first",
            100.0 * most_busy,
            server.server_cpus
        ));
    }
    lines
}

/// What one user is, the server, and a request's demands.
fn header(server: &MeasuredServer) -> Vec<String> {
    let d = &server.demands;
    let unit = &server.rate_unit;
    let mut lines = Vec::new();
    if !server.user.is_empty() {
        lines.push(format!("a user: {}", server.user));
    }
    lines.extend([
        format!(
            "the server: {} on {} ({} cores; it could use {} CPU), as searched in {}",
            server.processes.join(", "),
            server.host,
            server.cores,
            server.server_cpus,
            server.dir.display()
        ),
        format!(
            "a request ({unit}) needs: CPU {} ({}), disk {}, and {} unqueued elsewhere (the network, the generator); users think {:.1} s",
            match (d.cpu_by_share.first(), d.cpu_by_share.last()) {
                (Some(&(light, _)), Some(&(busy, _))) if light < busy => format!(
                    "{} on a full CPU, {} with it {:.0}% busy",
                    ms(d.cpu_at(d.cpu_s, busy)),
                    ms(d.cpu_at(d.cpu_s, light)),
                    100.0 * light
                ),
                _ => ms(d.cpu_s),
            },
            fitted_over(d),
            if d.disk_ops > 0.0 {
                format!("{} ({:.1} operations)", ms(d.disk_s), d.disk_ops)
            } else {
                ms(d.disk_s)
            },
            ms(d.delay_s),
            server.think_s
        ),
        format!(
            "the model: mean value analysis, a request's CPU as the levels measured it at each busy share; {}{}",
            if d.variability < 1.0 {
                format!(
                    "its queues {:.0}% of exponential service's (the levels below the knee queued less)",
                    100.0 * d.variability
                )
            } else {
                "its queues as exponential service's".to_string()
            },
            if d.disk_ops >= 1.0 {
                format!(
                    "; the disk's {:.0}% ({:.1} operations one after another a request)",
                    100.0 * disk_variability(d.disk_ops),
                    d.disk_ops
                )
            } else {
                String::new()
            }
        ),
    ]);
    lines
}

/// The levels a full CPU's demand rests on and their least and most, in
/// words.
fn fitted_over(d: &Demands) -> String {
    let busy = 100.0 * BUSY;
    let range = format!("{}–{}", ms(d.cpu_range_s[0]), ms(d.cpu_range_s[1]));
    let source = match d.cpu_fit {
        CpuFit::Busy => return format!("the levels at {busy:.0}% of the CPU or more: {range}"),
        CpuFit::Met => "the levels that met the target",
        CpuFit::All => "every level",
    };
    if d.busiest_share >= BUSY {
        format!("{range} in {source}: fewer than two levels reached {busy:.0}% of the CPU")
    } else {
        format!(
            "{range} in {source}: no level reached {busy:.0}% of the CPU, the server at most {:.0}%; a demand measured at low load may be off",
            100.0 * d.busiest_share
        )
    }
}

/// What the prediction cannot know from this search, each said: a search
/// that found no limit, a CPU demand measured at low load, disk figures
/// that hold other programs' work, a lesson's burst.
fn cautions(server: &MeasuredServer) -> Vec<String> {
    let d = &server.demands;
    let mut said = Vec::new();
    if let (true, Some(floor)) = (server.at_least, server.measured_users) {
        said.push(format!(
            "the search found no limit: the target held at every level it tried, so this host serves at least {floor} {users}. Every limit below is the model's, extrapolated past a limit nobody found, and less sure than a measured one: search with a higher --max until the target breaks, then predict from that search",
            users = server.users_are
        ));
    }
    if d.cpu_fit != CpuFit::Busy && d.busiest_share < BUSY {
        said.push(format!(
            "no level reached {:.0}% of the server's CPU (at most {:.0}% of its {} CPU): a full CPU's demand is from levels measured at low load and may be off, and so may every limit the CPU sets: search to a level that runs the server's CPU {:.0}% full or more",
            100.0 * BUSY,
            100.0 * d.busiest_share,
            server.server_cpus,
            100.0 * BUSY
        ));
    }
    if let (true, Some([(few_users, least), (many_users, most)])) =
        (d.disk_ops_unsteady(), d.disk_ops_spread)
    {
        said.push(format!(
            "the disk's operations a request varied from {least:.1} ({few_users} {users}) to {most:.1} ({many_users} {users}) between the levels{}: the disks' figures are the whole machine's (headroom keeps no process's own I/O), and other programs' reads and writes are in them. The disk's part of this model and of every prediction is not the server's own and not to be trusted: search again with nothing else using the disk, or search on the host itself",
            if least > 0.0 {
                format!(", {:.0} times", most / least)
            } else {
                String::new()
            },
            users = server.users_are
        ));
    }
    if let Some(within) = server.lesson_within_s {
        said.push(format!(
            "this model is of steady reading; the lesson start's burst ({} {}, logins, first pages) is not in it: check it with a lesson run on that host (headroom run with model: lesson, or capacity --arrive-within there)",
            server.users_are,
            if within > 0.0 {
                format!("arriving within {within} s")
            } else {
                "arriving together".to_string()
            }
        ));
    }
    said
}

/// A host's answer in words.
fn answer(server: &MeasuredServer, host: &ScaledHost, p: &Prediction) -> String {
    let goal = &server.goal;
    let floor = server.measured_users.filter(|_| server.at_least);
    let users = match (p.users, p.range, floor) {
        (Some(n), range, Some(floor)) => format!(
            "about {n} {} at Apdex ≥ {:.2}, limited by {}: extrapolated, {}{}",
            server.users_are,
            goal.apdex,
            p.limited_by,
            if n > floor {
                format!("more than the {floor} the search measured, past a limit it never found")
            } else {
                format!("the search found no limit (the target held up to {floor}), so none checks this one")
            },
            match range {
                [Some(a), Some(b)] if a != b => format!(
                    " (the model's least and most CPU a request give {a}–{b}, not a measured interval)"
                ),
                _ => String::new(),
            }
        ),
        (Some(n), [Some(a), Some(b)], None) if a != b => format!(
            "about {n} {} (between {a} and {b}) at Apdex ≥ {:.2}, limited by {}",
            server.users_are, goal.apdex, p.limited_by
        ),
        (Some(n), _, None) => format!(
            "about {n} {} at Apdex ≥ {:.2}, limited by {}",
            server.users_are, goal.apdex, p.limited_by
        ),
        (None, _, _) => format!(
            "not one user at Apdex ≥ {:.2}: a request alone takes too long there",
            goal.apdex
        ),
    };
    let disk = if p.limited_by == "disk" && server.demands.disk_ops_unsteady() {
        " (the disk's figure is not the server's own: not to be trusted)"
    } else {
        ""
    };
    format!("on {}: {users}{disk}", host.name)
}

/// The same software, data and users; what the interval is.
fn assumed(server: &MeasuredServer) -> String {
    match server.measured_users {
        Some(n) if server.at_least => format!(
            "(measured here: at least {n}; the same software, dataset and users; the search found no limit, so the model's is extrapolated)"
        ),
        measured => format!(
            "(measured here: {}; the same software, dataset and users; the interval is the model with the least and the most CPU a level measured)",
            measured.map_or("no answer".to_string(), |n| n.to_string())
        ),
    }
}

fn describe(
    server: &MeasuredServer,
    fits: &[Fit],
    itself: &Prediction,
    predictions: &[(ScaledHost, Prediction)],
) -> Vec<String> {
    let unit = &server.rate_unit;
    let mut lines = header(server);
    lines.extend(
        cautions(server)
            .into_iter()
            .map(|c| format!("caution: {c}")),
    );
    lines.extend([
        "the model against the levels measured:".to_string(),
        format!(
            "  {:>6}  {:>12}  {:>12}  {:>7}  {:>14}  {:>14}",
            "users", "measured", "model", "error", "measured rate", "model rate"
        ),
    ]);
    for f in fits {
        lines.push(format!(
            "  {:>6}  {:>12}  {:>12}  {:>+6.1}%  {:>14}  {:>14}",
            f.users,
            ms(f.measured_s),
            ms(f.model_s),
            100.0 * (f.model_s / f.measured_s - 1.0),
            format!("{:.1} {unit}", f.measured_throughput),
            format!("{:.1} {unit}", f.model_throughput)
        ));
    }
    lines.extend(against_the_search(server, itself));
    for (host, p) in predictions {
        lines.push(String::new());
        lines.push(answer(server, host, p));
        lines.push(format!("  {}", assumed(server)));
        for note in &host.notes {
            lines.push(format!("  {note}"));
        }
        // The disk's column when the model has a disk.
        let disk = p.curve.first().is_some_and(|c| c.utilization.len() > 1);
        lines.push(format!(
            "  {:>6}  {:>14}  {:>10}  {:>6}  {:>10}  {:>8}{}",
            "users",
            "rate",
            "response",
            "Apdex",
            "p95",
            "CPU busy",
            if disk { "  disk busy" } else { "" }
        ));
        let answer = p.users.unwrap_or(1);
        let mut shown: Vec<u32> = [
            1,
            answer / 2,
            answer * 3 / 4,
            answer,
            answer + 1,
            answer * 3 / 2,
            answer * 2,
        ]
        .into_iter()
        .filter(|n| *n >= 1 && (*n as usize) <= p.curve.len())
        .collect();
        shown.dedup();
        for n in shown {
            let point = &p.curve[n as usize - 1];
            lines.push(format!(
                "  {:>6}  {:>14}  {:>10}  {:>6.3}  {:>10}  {:>7.0}%{}",
                n,
                format!("{:.1} {unit}", point.throughput),
                ms(point.response_s),
                point.apdex,
                ms(point.p95_s),
                100.0 * point.utilization.first().copied().unwrap_or(0.0),
                match point.utilization.get(1) {
                    Some(busy) if disk => format!("  {:>8.0}%", 100.0 * busy),
                    _ => String::new(),
                }
            ));
        }
    }
    lines
}

fn json(
    server: &MeasuredServer,
    fits: &[Fit],
    itself: &Prediction,
    predictions: &[(ScaledHost, Prediction)],
) -> serde_json::Value {
    let d = &server.demands;
    serde_json::json!({
        "schema_version": 1,
        "search": server.dir,
        "host": server.host,
        "cores": server.cores,
        "server_cpus": server.server_cpus,
        "processes": server.processes,
        "user": server.user,
        "users_are": server.users_are,
        "rate_unit": server.rate_unit,
        "think_s": server.think_s,
        "measured_users": server.measured_users,
        "measured_at_least": server.at_least,
        "lesson_arrive_within_s": server.lesson_within_s,
        "model_users": itself.users,
        "cautions": cautions(server),
        "demands": {
            "cpu_s": d.cpu_s,
            "cpu_by_share": d.cpu_by_share,
            "cpu_range_s": d.cpu_range_s,
            "cpu_fit": match d.cpu_fit {
                CpuFit::Busy => "busy",
                CpuFit::Met => "met",
                CpuFit::All => "all",
            },
            "busiest_share": d.busiest_share,
            "disk_ops_spread": d.disk_ops_spread,
            "disk_s": d.disk_s,
            "disk_ops": d.disk_ops,
            "delay_s": d.delay_s,
            "variability": d.variability,
            "disk_variability": disk_variability(d.disk_ops),
            "levels": d.levels,
        },
        "fit": fits.iter().map(|f| serde_json::json!({
            "users": f.users,
            "measured_s": f.measured_s,
            "model_s": f.model_s,
            "measured_rate": f.measured_throughput,
            "model_rate": f.model_throughput,
        })).collect::<Vec<_>>(),
        "predictions": predictions.iter().map(|(host, p)| serde_json::json!({
            "host": host.name,
            "cpu_speed": host.scale.cpu_speed,
            "cpus": host.scale.cpus,
            "disk_speed": host.scale.disk_speed,
            "disk_iops": host.scale.disk_iops,
            "notes": host.notes,
            "users": p.users,
            "range": p.range,
            "limited_by": p.limited_by,
            "curve": p.curve.iter().map(|c| serde_json::json!({
                "users": c.users,
                "rate": c.throughput,
                "response_s": c.response_s,
                "apdex": c.apdex,
                "p95_s": c.p95_s,
                "utilization": c.utilization,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}
