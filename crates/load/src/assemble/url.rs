//! One URL's run: the request built once, the closed or open profile.

use super::parts::{apdex, connect_checked, ensure_file_limit, AssembledRun, AssemblyError};
use super::pipeline::{finish, Shaped, Tables};
use super::profile::{describe_profile, url_profile};
use crate::engine::{PreparedRequest, Workload};
use crate::spec::{BodySpec, RunSpec, UrlRequest};
use headroom_bundle::scenario_record::{ScenarioRecord, UrlRecord};
use headroom_http::target::{RequestSpec, Target};
use headroom_journey::profile::Think;
use headroom_journey::shard::Shard;
use std::sync::Arc;

fn request(url: &UrlRequest) -> Result<RequestSpec, AssemblyError> {
    let body = match &url.body {
        Some(BodySpec::Text(text)) => text.clone().into_bytes(),
        Some(BodySpec::File(path)) => std::fs::read(path).map_err(|e| {
            AssemblyError::Usage(format!("cannot read --body-file {}: {e}", path.display()))
        })?,
        None => Vec::new(),
    };
    let request = RequestSpec {
        method: url.method.clone(),
        headers: url.headers.clone(),
        body,
        keep_alive: url.keep_alive,
    };
    request
        .validate()
        .map_err(|e| AssemblyError::Usage(super::parts::describe(&e)))?;
    Ok(request)
}

/// The manifest's `scenario` section of a URL run.
fn scenario_record(request: &RequestSpec, target: &Target, label: &str) -> ScenarioRecord {
    ScenarioRecord::Url(UrlRecord {
        body_bytes: request.body.len(),
        // Credentials stay out of the bundle.
        headers: request
            .headers
            .iter()
            .map(|(n, v)| headroom_http::target::redact_secrets(&format!("{n}: {v}")))
            .collect(),
        keep_alive: request.keep_alive,
        label: label.to_string(),
        method: request.method.clone(),
        url: target.url.clone(),
    })
}

pub(super) async fn assemble(
    spec: &RunSpec,
    url: &UrlRequest,
    shard: Option<Shard>,
) -> Result<AssembledRun, AssemblyError> {
    let target = Target::parse(&url.url).map_err(|e| AssemblyError::Usage(e.to_string()))?;
    let request = request(url)?;
    let profile = url_profile(&spec.profile).map_err(AssemblyError::Usage)?;
    let apdex = apdex(&spec.apdex)?;
    let think = spec.think.unwrap_or(Think::None);
    let label = url
        .label
        .clone()
        .unwrap_or_else(|| target.path_and_query.clone());
    let population = u64::from(profile.population());
    let population = shard.map_or(population, |s| s.share(population));
    ensure_file_limit(population + 64)?;
    let connector = connect_checked(&target, spec.insecure, spec.http.unwrap_or_default()).await?;
    let prepared_request = Arc::new(PreparedRequest {
        label: 0,
        bytes: request.serialize(&target, &target.path_and_query),
        is_head: request.method.eq_ignore_ascii_case("HEAD"),
        keep_alive: request.keep_alive,
    });
    let description = format!(
        "headroom: {} {} — {}",
        request.method,
        target,
        describe_profile(&profile, &think, spec.throughput)
    );
    finish(
        spec,
        Shaped {
            same_host: connector.address.ip().is_loopback(),
            connections: connector.negotiated.iter().cloned().collect(),
            workload: Workload::Url {
                connector: Arc::new(connector),
                request: prepared_request,
            },
            profile,
            iterations: None,
            think,
            throughput: spec.throughput,
            timeout: url.timeout,
            apdex,
            kind: "load",
            target: target.url.clone(),
            scenario: scenario_record(&request, &target, &label),
            labels: vec![label.clone()],
            slug: format!("{}{}", target.host, target.path_and_query),
            description,
            tables: Tables {
                label_urls: vec![(label, target.url.clone())],
                ..Tables::default()
            },
        },
    )
}
