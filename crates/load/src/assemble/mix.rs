//! A mix file's run: its journeys, each over its own connectors and with
//! its labels and checks prefixed by its name ("reader / Front page"), the
//! mix's profile with the spec's settings on top, and the split said
//! before the run and kept in the manifest.

use super::parts::{apdex, connect_checked, ensure_file_limit, AssembledRun, AssemblyError};
use super::pipeline::{finish, Shaped, Tables};
use super::profile::{describe_profile, scenario_profile};
use super::scenario::file_record;
use crate::engine::Workload;
use crate::spec::{RunSpec, ScenarioSource};
use headroom_bundle::scenario_record::{JourneyRecord, MixRecord, ScenarioRecord};
use headroom_http::conn::Connector;
use headroom_http::protocol::HttpChoice;
use headroom_http::target::Target;
use headroom_journey::journey_mix::{exact_split, MixEntry, MixPlan};
use headroom_journey::profile::{Profile, Think};
use headroom_journey::scenario::mix::{Mix, Workfile};
use headroom_journey::scenario::runner::JourneyPlan;
use headroom_journey::shard::Shard;
use headroom_units::quantity::count;
use std::sync::Arc;

fn usage(text: String) -> AssemblyError {
    AssemblyError::Usage(text)
}

/// Whether the profile runs arrivals (open model) rather than users.
fn is_open(profile: &Profile) -> bool {
    matches!(profile, Profile::Open { .. } | Profile::RampingRate { .. })
}

/// The mix as the source names it, this shard's data rows only.
fn read(source: &ScenarioSource, shard: Option<Shard>) -> Result<Mix, AssemblyError> {
    let target = source
        .target
        .as_deref()
        .map(Target::parse)
        .transpose()
        .map_err(|e| usage(e.to_string()))?;
    let mut mix = match headroom_journey::scenario::mix::read(&source.file, target.as_ref()) {
        Ok(Workfile::Mix(mix)) => *mix,
        Ok(Workfile::Scenario(_)) => {
            return Err(usage(format!(
                "{} is not a mix (it has no mix:)",
                source.file.display()
            )))
        }
        Err(e) => return Err(usage(e.to_string())),
    };
    if let Some(shard) = shard {
        for journey in &mut mix.journeys {
            if let Some(data) = journey.scenario.data.as_mut() {
                data.keep_shard_rows(shard)
                    .map_err(|e| usage(format!("journey {}: {e}", journey.name)))?;
            }
        }
    }
    Ok(mix)
}

/// The split said before the run: users per journey (closed model, over
/// the whole run), or each journey's share of the arrivals (open model).
pub fn split_line(mix: &Mix, users: Option<&[u64]>) -> String {
    let weights = mix.weights();
    let sum: f64 = weights.iter().sum();
    let parts: Vec<String> = mix
        .journeys
        .iter()
        .enumerate()
        .map(|(i, j)| match users {
            Some(users) if i == 0 => {
                format!("{} {}", j.name, count(users[0] as usize, "user", "users"))
            }
            Some(users) => format!("{} {}", j.name, users[i]),
            None => format!("{} {}%", j.name, percent(j.weight / sum)),
        })
        .collect();
    let of = if users.is_some() { "" } else { " of arrivals" };
    format!(
        "mix: {}{of} (weights {})",
        parts.join(", "),
        mix.weights_text()
    )
}

/// A share as a percentage, with a decimal only where it says something.
fn percent(share: f64) -> String {
    let p = share * 100.0;
    if (p - p.round()).abs() < 0.05 {
        format!("{:.0}", p)
    } else {
        format!("{:.1}", p)
    }
}

/// What each distinct origin's connections agreed on.
fn negotiated(connectors: &[Vec<Arc<Connector>>]) -> Vec<headroom_bundle::manifest::Negotiated> {
    let mut all: Vec<headroom_bundle::manifest::Negotiated> = Vec::new();
    for n in connectors
        .iter()
        .flatten()
        .filter_map(|c| c.negotiated.as_ref())
    {
        if !all.iter().any(|a| a.origin == n.origin) {
            all.push(n.clone());
        }
    }
    all
}

/// One connector per distinct origin of all the journeys.
async fn connectors(
    mix: &Mix,
    insecure: bool,
    http: Option<HttpChoice>,
) -> Result<Vec<Vec<Arc<Connector>>>, AssemblyError> {
    let mut known: Vec<(String, Arc<Connector>)> = Vec::new();
    let mut all = Vec::new();
    for journey in &mix.journeys {
        let mut mine = Vec::new();
        for origin in &journey.scenario.origins {
            let connector = match known.iter().find(|(url, _)| *url == origin.url) {
                Some((_, c)) => c.clone(),
                None => {
                    let asked = http.or(journey.scenario.http).unwrap_or_default();
                    let c = Arc::new(connect_checked(origin, insecure, asked).await?);
                    known.push((origin.url.clone(), c.clone()));
                    c
                }
            };
            mine.push(connector);
        }
        all.push(mine);
    }
    Ok(all)
}

pub(super) async fn assemble(
    spec: &RunSpec,
    source: &ScenarioSource,
    shard: Option<Shard>,
) -> Result<AssembledRun, AssemblyError> {
    let mix = read(source, shard)?;
    let (profile, iterations) =
        scenario_profile(&spec.profile, &mix.profile, spec.seed, shard).map_err(usage)?;
    if spec.profile.peak_times.is_some() {
        return Err(usage(
            "--peak-times: a mix has no peak: (only a workload written from an access log, by headroom scenario from-log --out, knows its peak); give the users with -c".into(),
        ));
    }
    let apdex = apdex(&spec.apdex)?;
    let population = u64::from(profile.population());
    let shard_population = shard.map_or(population, |s| s.share(population));
    let most_origins = mix
        .journeys
        .iter()
        .map(|j| j.scenario.origins.len())
        .max()
        .unwrap_or(1);
    ensure_file_limit(shard_population * most_origins as u64 + 64)?;
    let connectors = connectors(&mix, spec.insecure, spec.http).await?;
    let agreed = negotiated(&connectors);
    let throughput = spec.throughput.or(mix.profile.throughput);
    let weights = mix.weights();
    let users = (!is_open(&profile)).then(|| exact_split(&weights, population));

    let MixJourneys {
        entries: journeys,
        records,
        labels,
        tables,
    } = journeys(&mix, connectors, spec, users.as_deref(), iterations)?;
    let target = mix
        .journeys
        .iter()
        .find_map(|j| j.scenario.origins.first())
        .map(|o| o.url.clone())
        .unwrap_or_default();
    let think = spec.think.unwrap_or_else(|| users_think(&mix));
    let timeout = mix
        .journeys
        .iter()
        .map(|j| j.scenario.timeout)
        .max()
        .unwrap_or_default();
    let record = ScenarioRecord::Mix(MixRecord {
        file: source.file.display().to_string(),
        journeys: records,
        name: mix.name.clone(),
        text: headroom_http::target::redact_secrets(
            &std::fs::read_to_string(&source.file).unwrap_or_default(),
        ),
    });
    let slug = source
        .file
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let steps: usize = mix.journeys.iter().map(|j| j.scenario.requests.len()).sum();
    let mut description = format!(
        "headroom: {} ({}, {}) against {target} — {}{}\n{}",
        source.file.display(),
        count(mix.journeys.len(), "journey", "journeys"),
        count(steps, "step", "steps"),
        describe_profile(&profile, &think, throughput),
        iterations
            .map(|n| format!(
                ", {} per user",
                count(n as usize, "iteration", "iterations")
            ))
            .unwrap_or_default(),
        split_line(&mix, users.as_deref()),
    );
    if let Some(note) = mix.unused_profiles_note() {
        description = format!("{note}\n{description}");
    }
    let same_host = connectors_on_loopback(&journeys);
    let plan = MixPlan::new(journeys, &weights, population, spec.seed);
    finish(
        spec,
        Shaped {
            workload: Workload::Mix(Arc::new(plan)),
            profile,
            iterations,
            think,
            throughput,
            timeout,
            apdex,
            kind: "run",
            target,
            scenario: record,
            labels,
            same_host,
            connections: agreed,
            slug,
            description,
            tables,
        },
    )
}

/// What [`journeys`] makes of a mix's journeys.
struct MixJourneys {
    entries: Vec<MixEntry>,
    records: Vec<JourneyRecord>,
    labels: Vec<String>,
    tables: Tables,
}

/// The mix's journeys as the engine runs them, each over its connectors,
/// with their records for the manifest, and the run's labels and tables:
/// each journey's labels and checks, prefixed with its name.
fn journeys(
    mix: &Mix,
    connectors: Vec<Vec<Arc<Connector>>>,
    spec: &RunSpec,
    users: Option<&[u64]>,
    iterations: Option<u64>,
) -> Result<MixJourneys, AssemblyError> {
    let sum: f64 = mix.weights().iter().sum();
    let mut tables = Tables::default();
    let mut labels = Vec::new();
    let mut journeys = Vec::new();
    let mut records = Vec::new();
    for (i, (journey, connectors)) in mix.journeys.iter().zip(connectors).enumerate() {
        let prefix = |name: &str| format!("{} / {name}", journey.name);
        let (first_label, first_check) = (labels.len(), tables.check_names.len());
        if first_label + journey.scenario.labels.len() > usize::from(u16::MAX)
            || first_check + journey.scenario.checks.len() > usize::from(u16::MAX)
        {
            return Err(usage(format!(
                "the mix's journeys have more than {} labels or checks together: use fewer journeys",
                u16::MAX
            )));
        }
        for label in &journey.scenario.labels {
            labels.push(prefix(&label.name));
            tables
                .label_urls
                .push((prefix(&label.name), label.url.clone()));
            tables.outside_total.push(!label.kind.in_total());
        }
        tables.label_roles.extend(
            journey
                .scenario
                .label_roles()
                .into_iter()
                .map(|(name, role)| (prefix(&name), role)),
        );
        tables
            .check_names
            .extend(journey.scenario.checks.iter().map(|c| prefix(c)));
        tables.check_labels.extend(
            journey
                .scenario
                .check_labels()
                .into_iter()
                .map(|names| names.iter().map(|n| prefix(n)).collect::<Vec<_>>()),
        );
        records.push(JourneyRecord {
            arrival_share: users.is_none().then(|| journey.weight / sum),
            file: journey.file.display().to_string(),
            name: journey.name.clone(),
            scenario: file_record(&journey.file, &journey.scenario),
            users: users.map(|u| u[i]),
            weight: journey.weight,
        });
        let think = spec.think.unwrap_or(journey.scenario.think);
        let plan = JourneyPlan::new(journey.scenario.clone(), connectors, iterations, think);
        journeys.push(MixEntry {
            plan: Arc::new(plan),
            first_label: first_label as u16,
            first_check: first_check as u16,
        });
    }
    Ok(MixJourneys {
        entries: journeys,
        records,
        labels,
        tables,
    })
}

/// The think that stands for the mix's users when `--think` does not
/// replace theirs: the journeys' own default `think:` when they share one
/// (a lesson's arrival phase lasts one mean of it past the arrivals, the
/// last student's first read), none when they differ.
pub fn users_think(mix: &Mix) -> Think {
    let mut thinks = mix.journeys.iter().map(|j| j.scenario.think);
    match thinks.next() {
        Some(first) if thinks.all(|t| t == first) => first,
        _ => Think::None,
    }
}

fn connectors_on_loopback(journeys: &[MixEntry]) -> bool {
    journeys
        .iter()
        .flat_map(|j| &j.plan.connectors)
        .any(|c| c.address.ip().is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_journey::scenario::mix::MixJourney;

    fn mix_of(weights: &[(&str, f64)]) -> Mix {
        let scenario = headroom_journey::scenario::parse_str(
            "defaults: {base_url: http://127.0.0.1:9}\nsteps:\n  - {label: a, path: /}\n",
            std::path::Path::new("j.yaml"),
            None,
        )
        .unwrap();
        Mix {
            source: "mix.yaml".into(),
            name: None,
            profile: Default::default(),
            journeys: weights
                .iter()
                .map(|(name, weight)| MixJourney {
                    name: name.to_string(),
                    file: format!("{name}.yaml").into(),
                    weight: *weight,
                    scenario: scenario.clone(),
                })
                .collect(),
        }
    }

    /// Readers and posters who both read ~30 s (the class of `testbed plan
    /// --class`): the mix's users think that, so a lesson's arrival phase
    /// lasts it past the arrivals; journeys that think differently leave
    /// the run without one think.
    #[test]
    fn journeys_of_one_think_give_the_mix_theirs() {
        let exp30 = Think::Exponential {
            mean: std::time::Duration::from_secs(30),
        };
        let mut mix = mix_of(&[("reader", 9.0), ("poster", 1.0)]);
        assert_eq!(users_think(&mix), Think::None);
        for journey in &mut mix.journeys {
            journey.scenario.think = exp30;
        }
        assert_eq!(users_think(&mix), exp30);
        mix.journeys[1].scenario.think = Think::Constant {
            time: std::time::Duration::from_secs(5),
        };
        assert_eq!(users_think(&mix), Think::None);
    }

    #[test]
    fn the_split_is_said_in_users_or_shares_of_arrivals() {
        let mix = mix_of(&[("reader", 90.0), ("poster", 9.0), ("teacher", 1.0)]);
        let users = exact_split(&mix.weights(), 30);
        assert_eq!(
            split_line(&mix, Some(&users)),
            "mix: reader 27 users, poster 3, teacher 0 (weights 90/9/1)"
        );
        assert_eq!(
            split_line(&mix, None),
            "mix: reader 90%, poster 9%, teacher 1% of arrivals (weights 90/9/1)"
        );
        let thirds = mix_of(&[("a", 1.0), ("b", 2.0)]);
        assert_eq!(
            split_line(&thirds, None),
            "mix: a 33.3%, b 66.7% of arrivals (weights 1/2)"
        );
    }
}
