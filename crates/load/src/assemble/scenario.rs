//! A scenario file's run: its journeys over one connector per origin, its
//! profile with the spec's settings on top.

use super::parts::{apdex, connect_checked, ensure_file_limit, AssembledRun, AssemblyError};
use super::pipeline::{finish, Shaped, Tables};
use super::profile::{describe_profile, scenario_profile};
use crate::engine::Workload;
use crate::spec::{ProfileSpec, RunSpec, ScenarioSource};
use headroom_bundle::scenario_record::{
    BeforeRecord, DataRecord, ScenarioFileRecord, ScenarioRecord,
};
use headroom_http::target::Target;
use headroom_journey::profile::{Profile, Think};
use headroom_journey::scenario::runner::JourneyPlan;
use headroom_journey::scenario::Scenario;
use headroom_journey::shard::Shard;
use headroom_units::quantity::{count, Rate};
use std::path::Path;
use std::sync::Arc;

fn usage(text: String) -> AssemblyError {
    AssemblyError::Usage(text)
}

/// The scenario as the source names it, this shard's data rows only.
fn read(source: &ScenarioSource, shard: Option<Shard>) -> Result<Scenario, AssemblyError> {
    let target = source
        .target
        .as_deref()
        .map(Target::parse)
        .transpose()
        .map_err(|e| usage(e.to_string()))?;
    let mut scenario = headroom_journey::scenario::jmx::scenario(
        &source.file,
        target.as_ref(),
        &source.jmeter_properties,
        source.strict,
    )
    .map_err(usage)?;
    if let (Some(shard), Some(data)) = (shard, scenario.data.as_mut()) {
        data.keep_shard_rows(shard).map_err(usage)?;
    }
    Ok(scenario)
}

/// The manifest's `scenario` section of a scenario run.
fn scenario_record(file: &Path, scenario: &Scenario) -> ScenarioRecord {
    ScenarioRecord::Scenario(file_record(file, scenario))
}

/// A journey file as the manifest records it.
pub(super) fn file_record(file: &Path, scenario: &Scenario) -> ScenarioFileRecord {
    ScenarioFileRecord {
        before: scenario.before.as_ref().map(|b| BeforeRecord {
            iterations: b.iterations,
            name: b.name.clone(),
            users: b.users,
        }),
        checks: scenario.checks.clone(),
        data: scenario.data.as_ref().map(|d| DataRecord {
            file: d.file.display().to_string(),
            recycle: d.recycle,
            rows: d.rows.len(),
            shared: d.shared,
            visits: d.visits.as_ref().map(|v| v.count()),
        }),
        file: file.display().to_string(),
        name: scenario.name.clone(),
        steps: scenario.requests.len(),
        text: headroom_http::target::redact_secrets(
            &std::fs::read_to_string(file).unwrap_or_default(),
        ),
        variables: scenario.vars.names().to_vec(),
    }
}

/// The line said before the run.
fn description(
    file: &Path,
    scenario: &Scenario,
    target: &str,
    (profile, iterations): (&Profile, Option<u64>),
    think: &Think,
    throughput: Option<Rate>,
) -> String {
    let description = format!(
        "headroom: {} ({}) against {target} — {}{}",
        file.display(),
        count(scenario.requests.len(), "step", "steps"),
        describe_profile(profile, think, throughput),
        iterations
            .map(|n| format!(
                ", {} per user",
                count(n as usize, "iteration", "iterations")
            ))
            .unwrap_or_default(),
    );
    let description = match (&scenario.peak, profile) {
        (Some(peak), Profile::Closed { users, .. }) => {
            format!("{description}; {}", peak.times(*users))
        }
        _ => description,
    };
    match &scenario.before {
        Some(b) => format!(
            "{description}; before them, {}{} × {}",
            b.name
                .as_ref()
                .map(|n| format!("'{n}': "))
                .unwrap_or_default(),
            count(b.users as usize, "user", "users"),
            count(b.iterations as usize, "iteration", "iterations"),
        ),
        None => description,
    }
}

/// `--peak-times N`: N times the users of the log's peak the workload was
/// written from, as `-c` would give them.
fn in_peaks(flags: &ProfileSpec, scenario: &Scenario) -> Result<ProfileSpec, AssemblyError> {
    let Some(times) = flags.peak_times else {
        return Ok(flags.clone());
    };
    let peak = scenario.peak.as_ref().ok_or_else(|| {
        AssemblyError::Usage(format!(
            "--peak-times {times}: {} has no peak: (only a workload written from an access log, by headroom scenario from-log --out, knows its peak); give the users with -c",
            scenario.source.display()
        ))
    })?;
    let users = (times * peak.users as f64)
        .round()
        .clamp(1.0, f64::from(u32::MAX)) as u32;
    Ok(ProfileSpec {
        users: Some(users),
        peak_times: None,
        ..flags.clone()
    })
}

pub(super) async fn assemble(
    spec: &RunSpec,
    source: &ScenarioSource,
    shard: Option<Shard>,
) -> Result<AssembledRun, AssemblyError> {
    let scenario = read(source, shard)?;
    let flags = in_peaks(&spec.profile, &scenario)?;
    let (profile, iterations) =
        scenario_profile(&flags, &scenario.profile, spec.seed, shard).map_err(usage)?;
    let apdex = apdex(&spec.apdex)?;
    let population = u64::from(profile.population());
    let population = shard.map_or(population, |s| s.share(population));
    ensure_file_limit(population * scenario.origins.len() as u64 + 64)?;
    let mut connectors = Vec::new();
    for origin in &scenario.origins {
        let http = spec.http.or(scenario.http).unwrap_or_default();
        connectors.push(Arc::new(
            connect_checked(origin, spec.insecure, http).await?,
        ));
    }
    let throughput = spec.throughput.or(scenario.profile.throughput);
    let think = spec.think.unwrap_or(scenario.think);
    let labels: Vec<String> = scenario.labels.iter().map(|l| l.name.clone()).collect();
    let target = scenario
        .origins
        .first()
        .map(|o| o.url.clone())
        .unwrap_or_default();
    let slug = source
        .file
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let mut description = description(
        &source.file,
        &scenario,
        &target,
        (&profile, iterations),
        &think,
        throughput,
    );
    if let Some(note) = accounts_note(&scenario, profile.population()) {
        description = format!("{note}\n{description}");
    }
    let tables = Tables {
        label_urls: scenario
            .labels
            .iter()
            .map(|l| (l.name.clone(), l.url.clone()))
            .collect(),
        outside_total: scenario.labels.iter().map(|l| !l.kind.in_total()).collect(),
        label_roles: scenario.label_roles(),
        check_names: scenario.checks.clone(),
        check_labels: scenario.check_labels(),
        no_saved_failures: false,
    };
    let shaped = Shaped {
        same_host: connectors.iter().any(|c| c.address.ip().is_loopback()),
        connections: connectors
            .iter()
            .filter_map(|c| c.negotiated.clone())
            .collect(),
        scenario: scenario_record(&source.file, &scenario),
        timeout: scenario.timeout,
        workload: Workload::Journey(Arc::new(JourneyPlan::new(
            scenario, connectors, iterations, think,
        ))),
        profile,
        iterations,
        think,
        throughput,
        apdex,
        kind: "run",
        target,
        labels,
        slug,
        description,
        tables,
    };
    finish(spec, shaped)
}

/// Said before a run whose users outnumber its `accounts:` rows: user n
/// takes row n, so those past the last log in again as the first.
fn accounts_note(scenario: &Scenario, users: u32) -> Option<String> {
    let accounts = scenario.accounts.as_ref()?;
    let rows = accounts.rows.len();
    (users as usize > rows).then(|| {
        format!(
            "headroom: note: {users} users and {rows} accounts in {}: each user logs in with its own row, so the {} users past row {rows} log in again as the first accounts (user {} as the account of row 1); give the file a row for each user to log each in as someone else",
            accounts.file.display(),
            users as usize - rows,
            rows + 1
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_times_give_the_users_of_that_many_peaks() {
        let text = "defaults: {base_url: http://127.0.0.1:8080}\npeak: {minute: \"2026-11-20 10:01\", pages: 300, users: 8}\nsteps:\n  - {label: home, path: /}\n";
        let scenario =
            headroom_journey::scenario::parse_str(text, Path::new("w.yaml"), None).unwrap();
        let flags = ProfileSpec {
            peak_times: Some(2.5),
            ..ProfileSpec::default()
        };
        let resolved = in_peaks(&flags, &scenario).unwrap();
        assert_eq!((resolved.users, resolved.peak_times), (Some(20), None));
        // A tenth of a peak of 8 is still a user.
        let tenth = ProfileSpec {
            peak_times: Some(0.01),
            ..ProfileSpec::default()
        };
        assert_eq!(in_peaks(&tenth, &scenario).unwrap().users, Some(1));
        let plain = headroom_journey::scenario::parse_str(
            "defaults: {base_url: http://127.0.0.1:8080}\nsteps:\n  - {label: home, path: /}\n",
            Path::new("j.yaml"),
            None,
        )
        .unwrap();
        let e = in_peaks(&flags, &plain).unwrap_err();
        assert!(e.to_string().contains("j.yaml has no peak:"), "{e}");
    }

    /// 30 students, 25 accounts: said before the run; 25 or fewer: nothing.
    #[test]
    fn more_users_than_accounts_are_said() {
        let dir = std::env::temp_dir().join(format!("headroom-accounts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rows: String = (1..=25).map(|i| format!("student{i:02},pw{i}\n")).collect();
        std::fs::write(dir.join("accounts.csv"), rows).unwrap();
        let text = "defaults: {base_url: http://127.0.0.1:8080}\naccounts:\n  file: accounts.csv\n  columns: [user, password]\nsteps:\n  - {label: home, path: /}\n";
        let scenario =
            headroom_journey::scenario::parse_str(text, &dir.join("w.yaml"), None).unwrap();
        let note = accounts_note(&scenario, 30).unwrap();
        assert!(note.contains("30 users and 25 accounts"), "{note}");
        assert!(
            note.contains("the 5 users past row 25 log in again"),
            "{note}"
        );
        assert_eq!(accounts_note(&scenario, 25), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
