//! Assembly without the binary: a spec becomes a run against a listener
//! on 127.0.0.1 (pre-flight only connects; nothing is run).

use super::parts::labels_note;
use super::*;
use crate::spec::{ProfileSpec, ScenarioSource, UrlRequest};
use headroom_bundle::scenario_record::ScenarioRecord;
use headroom_journey::profile::Profile;
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::Duration;

/// A listener that accepts connections (kept open by the test).
fn listener() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/home?x=1", listener.local_addr().unwrap());
    (listener, url)
}

fn url_spec(url: &str) -> RunSpec {
    RunSpec::new(WorkloadSource::Url(UrlRequest {
        headers: vec![("Authorization".into(), "Bearer secret".into())],
        timeout: Duration::from_secs(3),
        ..UrlRequest::get(url)
    }))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_url_spec_becomes_a_closed_run_with_its_manifest() {
    let (_listener, url) = listener();
    let mut spec = url_spec(&url)
        .with_users(3)
        .with_duration(Duration::from_secs(4))
        .with_ramp_up(Duration::from_secs(1))
        .with_bundle_dir(PathBuf::from("/tmp/headroom-assemble-test"));
    spec.seed = 7;
    spec.threads = Some(2);
    spec.outputs.command_line = vec!["headroom".into(), "load".into()];
    let run = runtime().block_on(assemble(&spec)).unwrap();
    assert_eq!(
        run.plan.profile,
        Profile::Closed {
            users: 3,
            ramp_up: Duration::from_secs(1),
            duration: Some(Duration::from_secs(4)),
            requests: None,
        }
    );
    let manifest = &run.setup.manifest;
    assert_eq!(manifest.kind, "load");
    assert_eq!(manifest.labels, vec!["/home?x=1".to_string()]);
    let Some(ScenarioRecord::Url(url)) = &manifest.scenario else {
        panic!("{:?}", manifest.scenario)
    };
    assert_eq!(url.headers[0], "Authorization: ***");
    assert_eq!(manifest.timeout_ms, 3000.0);
    assert_eq!((manifest.seed, manifest.threads), (7, 2));
    assert_eq!((manifest.apdex_t_ms, manifest.apdex_f_ms), (500.0, 1500.0));
    assert_eq!(manifest.command_line, spec.outputs.command_line);
    assert_eq!(manifest.shard, None);
    assert_eq!(
        run.setup.bundle_dir,
        PathBuf::from("/tmp/headroom-assemble-test")
    );
    assert!(
        run.description.ends_with("— 3 users, ramp-up 1s, 4s"),
        "{}",
        run.description
    );
    assert_eq!(run.start_at, None);
}

#[test]
fn an_open_url_spec_and_a_shard_of_it() {
    let (_listener, url) = listener();
    let mut spec = url_spec(&url).with_duration(Duration::from_secs(2));
    spec.profile.rate = Some(headroom_units::quantity::Rate { per_second: 50.0 });
    spec.shard = Some(crate::spec::ShardChoice::Given(
        headroom_journey::shard::Shard::new(1, 2).unwrap(),
    ));
    let run = runtime().block_on(assemble(&spec)).unwrap();
    assert!(matches!(
        run.plan.profile,
        Profile::Open { max_vus: 1000, .. }
    ));
    let record = run.setup.manifest.shard.as_ref().unwrap();
    assert_eq!((record.index, record.count), (1, 2));
    assert!(
        run.description.ends_with("[shard 1/2]"),
        "{}",
        run.description
    );
}

#[test]
fn wrong_input_is_a_usage_error_with_the_cli_words() {
    let (_listener, url) = listener();
    let mut spec = url_spec(&url);
    spec.apdex.tolerated = crate::spec::ToleratedSpec::Time(Duration::from_millis(100));
    let Err(AssemblyError::Usage(text)) = runtime().block_on(assemble(&spec)) else {
        panic!("F below T was accepted")
    };
    assert!(
        text.starts_with("--apdex-f (100 ms) is below --apdex-t (500 ms)"),
        "{text}"
    );
    let spec = url_spec(&url)
        .with_duration(Duration::from_secs(2))
        .with_ramp_up(Duration::from_secs(5));
    let Err(AssemblyError::Usage(text)) = runtime().block_on(assemble(&spec)) else {
        panic!("a ramp-up past the end was accepted")
    };
    assert!(text.contains("some users would never start"), "{text}");
}

#[test]
fn a_target_that_refuses_is_a_cannot_run_error() {
    let (listener, url) = listener();
    drop(listener);
    let Err(AssemblyError::CannotRun(text)) = runtime().block_on(assemble(&url_spec(&url))) else {
        panic!("a refusing target was accepted")
    };
    assert!(text.contains("refused"), "{text}");
}

#[test]
fn a_scenario_spec_takes_the_files_profile_under_the_specs() {
    let (_listener, url) = listener();
    let dir = std::env::temp_dir().join(format!("headroom-assemble-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("journey.yaml");
    std::fs::write(
        &file,
        "name: two steps\nthink: 1s\nprofile:\n  users: 4\n  duration: 1m\nsteps:\n  - label: first\n    path: /a\n  - label: second\n    path: /b\n",
    )
    .unwrap();
    let mut spec = RunSpec::new(WorkloadSource::Scenario(ScenarioSource {
        file: file.clone(),
        target: Some(url.clone()),
        jmeter_properties: Default::default(),
        strict: false,
    }));
    spec.profile = ProfileSpec {
        duration: Some(Duration::from_secs(5)),
        ..Default::default()
    };
    let run = runtime().block_on(assemble(&spec)).unwrap();
    assert_eq!(
        run.plan.profile,
        Profile::Closed {
            users: 4,
            ramp_up: Duration::ZERO,
            duration: Some(Duration::from_secs(5)),
            requests: None,
        }
    );
    let manifest = &run.setup.manifest;
    assert_eq!(manifest.kind, "run");
    let Some(ScenarioRecord::Scenario(file)) = &manifest.scenario else {
        panic!("{:?}", manifest.scenario)
    };
    assert_eq!(file.steps, 2);
    assert!(
        manifest.labels.contains(&"second".to_string()),
        "{:?}",
        manifest.labels
    );
    assert_eq!(
        run.plan.think,
        headroom_journey::profile::Think::Constant {
            time: Duration::from_secs(1)
        }
    );
    spec.profile.max_vus = Some(5);
    let Err(AssemblyError::Usage(text)) = runtime().block_on(assemble(&spec)) else {
        panic!("--max-vus on a closed run was accepted")
    };
    assert!(
        text.starts_with("--max-vus bounds the open model's users"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn many_labels_are_said_with_what_they_may_cost() {
    assert_eq!(labels_note(2_000), None);
    let note = labels_note(10_000).unwrap();
    assert!(
        note.contains("10000 labels") && note.contains("977 MB to 3.8 GB"),
        "{note}"
    );
}
