//! A JMeter results file (JTL) as a run bundle, so `report`, `compare` and
//! experiments read JMeter's history like any run: each sample folded into
//! its second (by the time it ended) and its label, as the engine's
//! recorder does; the manifest marked `imported` with what a JTL does not
//! say. Transaction controllers' parent samples keep their own label and
//! stay out of the total, as in JMeter's dashboard.

use crate::jtl_read::{self, JtlFormat, JtlSample};
use crate::manifest::{ClientHost, Files, Manifest, ProfileRecord, Tool};
use crate::sample::{status_error, ErrorKind, Sample};
use crate::scenario_record::{DashboardFigures, JmeterDashboard, JtlRecord, ScenarioRecord};
use crate::summary::{LabelFigures, RunStatus, RunSummary};
use crate::tally::Tally;
use crate::writer::{BundleWriter, MergedInterval};
use crate::{invalid, BundleError, SCHEMA_VERSION};
use headroom_analysis::apdex::{ApdexCounts, ApdexThresholds};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant, UNIX_EPOCH};

/// What an import made.
pub struct Imported {
    pub manifest: Manifest,
    pub format: JtlFormat,
    pub samples: usize,
    /// What the file could not tell, for the user.
    pub warnings: Vec<String>,
}

/// The error kind of a failed JMeter sample: from its response code, or
/// from the Java exception JMeter names for a request without a response.
fn error_kind(s: &JtlSample, status: u16) -> Option<ErrorKind> {
    if s.success {
        return None;
    }
    if let Some(kind) = status_error(status) {
        return Some(kind);
    }
    let text = format!("{} {}", s.response_code, s.response_message);
    let has = |needle: &str| text.contains(needle);
    Some(if status != 0 {
        // A 2xx/3xx that failed: an assertion.
        ErrorKind::Check
    } else if has("SocketTimeout") || has("ConnectTimeout") || has("timed out") {
        ErrorKind::Timeout
    } else if has("ConnectException") || has("Connection refused") {
        ErrorKind::Refused
    } else if has("UnknownHost") {
        ErrorKind::Dns
    } else if has("SSL") || has("TLS") {
        ErrorKind::Tls
    } else if has("NoHttpResponse") || has("Connection reset") || has("SocketException") {
        ErrorKind::Reset
    } else if has("ClientProtocol") || has("ProtocolException") {
        ErrorKind::Protocol
    } else {
        ErrorKind::Other
    })
}

/// The thread's number from JMeter's thread name ("Moodle Test 1-12" → 12).
fn thread_number(name: &str) -> u32 {
    name.rsplit('-')
        .next()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// The longest span of samples one import takes: a week.
const MAX_SPAN_MS: i64 = 7 * 86_400_000;

/// Reads `jtl` and writes it as a bundle in `out` (which must not hold one).
pub fn import(
    jtl: &Path,
    out: &Path,
    apdex: &ApdexThresholds,
    command_line: Vec<String>,
) -> Result<Imported, BundleError> {
    let jtl_read::JtlFile {
        format,
        samples,
        warnings: read_warnings,
    } = jtl_read::read(jtl)?;
    let labels = Labels::of(jtl, &samples)?;
    let (first_ms, last_end_ms) = span(jtl, &samples)?;
    let wall_start = UNIX_EPOCH + Duration::from_millis(first_ms.max(0) as u64);
    // Times become instants after one base: only differences matter.
    let base = Instant::now();
    let converted = convert(&samples, &labels, first_ms, base);
    let elapsed = Duration::from_millis((last_end_ms - first_ms).max(1) as u64);
    let peak_threads = converted.iter().map(|(_, n, _)| *n).max().unwrap_or(0);
    let mut manifest = import_manifest(
        jtl,
        format,
        &samples,
        &labels,
        apdex,
        command_line,
        peak_threads,
        wall_start,
    );
    let mut writer = BundleWriter::create(out, &manifest, wall_start)?;
    let (cumulative, cumulative_total) = write_seconds(
        &mut writer,
        &converted,
        labels.names.len(),
        base,
        elapsed,
        apdex,
    )?;
    manifest.summary = Some(summary(
        &labels.names,
        &cumulative,
        &cumulative_total,
        elapsed,
        apdex,
        peak_threads,
    ));
    manifest.status = RunStatus::Complete;
    manifest.ended_at = Some(humantime::format_rfc3339_millis(wall_start + elapsed).to_string());
    manifest.elapsed_s = Some(elapsed.as_secs_f64());
    writer.finish(&manifest)?;
    let mut warnings = read_warnings;
    if samples.iter().all(|s| s.response_message.is_empty()) {
        warnings.push(
            "the file has no response messages: a transaction controller's parent sample cannot be told from a sampler's, so every sample counts in the total".to_string(),
        );
    }
    Ok(Imported {
        manifest,
        format,
        samples: samples.len(),
        warnings,
    })
}

/// The file's labels in order of first appearance, and which of them
/// name a transaction controller's parent samples.
struct Labels<'s> {
    names: Vec<String>,
    index: BTreeMap<&'s str, usize>,
    transaction: Vec<bool>,
}

impl<'s> Labels<'s> {
    /// At most `u16::MAX` labels, as the engine keeps.
    fn of(jtl: &Path, samples: &'s [JtlSample]) -> Result<Labels<'s>, BundleError> {
        let mut names: Vec<String> = Vec::new();
        let mut index: BTreeMap<&str, usize> = BTreeMap::new();
        let mut transaction: Vec<bool> = Vec::new();
        for s in samples {
            let i = *index.entry(&s.label).or_insert_with(|| {
                names.push(s.label.clone());
                transaction.push(false);
                names.len() - 1
            });
            transaction[i] |= s.transaction;
        }
        if names.len() > u16::MAX as usize {
            return Err(invalid(
                jtl,
                format!(
                    "{} labels; headroom keeps at most {}",
                    names.len(),
                    u16::MAX
                ),
            ));
        }
        Ok(Labels {
            names,
            index,
            transaction,
        })
    }
}

/// The first sample's start and the last one's end (Unix milliseconds),
/// at most a week apart.
fn span(jtl: &Path, samples: &[JtlSample]) -> Result<(i64, i64), BundleError> {
    // Times are checked by the reader (1990-2200, a day at most each).
    let first_ms = samples.iter().map(|s| s.timestamp_ms).min().unwrap_or(0);
    let last_end_ms = samples
        .iter()
        .map(|s| s.timestamp_ms + s.elapsed_ms as i64)
        .max()
        .unwrap_or(first_ms);
    // One interval per second: a file over a week long is some other file
    // (or a wrong clock), not one test.
    if last_end_ms - first_ms > MAX_SPAN_MS {
        let date = |ms: i64| {
            humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_millis(ms as u64))
        };
        return Err(invalid(
            jtl,
            format!(
                "its samples span {:.1} days ({} to {}); headroom imports one test of up to 7 days: split the file, or look for a sample with a wrong timeStamp",
                (last_end_ms - first_ms) as f64 / 86_400_000.0,
                date(first_ms),
                date(last_end_ms)
            ),
        ));
    }
    Ok((first_ms, last_end_ms))
}

/// Each JMeter sample as the engine's sample, with its active threads and
/// whether it is a transaction's; sorted by end.
fn convert(
    samples: &[JtlSample],
    labels: &Labels,
    first_ms: i64,
    base: Instant,
) -> Vec<(Sample, u32, bool)> {
    let mut converted: Vec<(Sample, u32, bool)> = samples
        .iter()
        .map(|s| {
            let start = base + Duration::from_millis((s.timestamp_ms - first_ms) as u64);
            let status = s.response_code.trim().parse::<u16>().unwrap_or(0);
            let sample = Sample {
                label: labels.index[s.label.as_str()] as u16,
                vu: thread_number(&s.thread_name),
                intended_start: start,
                actual_start: start,
                connect: Duration::from_millis(s.connect_ms),
                tls: None,
                first_byte: (s.latency_ms > 0).then(|| start + Duration::from_millis(s.latency_ms)),
                end: start + Duration::from_millis(s.elapsed_ms),
                status,
                bytes_received: s.bytes,
                bytes_sent: s.sent_bytes,
                error: error_kind(s, status),
                failed_check: None,
                detail: None,
                resent: false,
                server_timing: Default::default(),
            };
            (sample, s.all_threads, s.transaction)
        })
        .collect();
    converted.sort_by_key(|(s, _, _)| s.end);
    converted
}

/// The manifest of an imported run, still running: what the file says
/// and what it cannot say.
#[allow(clippy::too_many_arguments)]
fn import_manifest(
    jtl: &Path,
    format: JtlFormat,
    samples: &[JtlSample],
    labels: &Labels,
    apdex: &ApdexThresholds,
    command_line: Vec<String>,
    peak_threads: u32,
    wall_start: std::time::SystemTime,
) -> Manifest {
    let (t, f) = RunSummary::thresholds(apdex);
    let source = jtl.display().to_string();
    Manifest {
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "headroom".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        command_line,
        kind: "import".into(),
        target: most_common_host(samples).unwrap_or_else(|| "(JMeter results)".into()),
        scenario: Some(ScenarioRecord::Jtl(JtlRecord {
            file: source,
            format: format.name().into(),
            jmeter_dashboard: Some(jmeter_dashboard(samples, &labels.names, apdex)),
            name: jtl.file_name().map(|n| n.to_string_lossy().to_string()),
            samples: samples.len(),
            transactions: labels
                .names
                .iter()
                .zip(&labels.transaction)
                .filter(|(_, t)| **t)
                .map(|(l, _)| l.clone())
                .collect(),
            unknown: [
                "the load profile (threads, ramp-up, think times)",
                "the generator's and the server's environment",
                "Apdex thresholds JMeter used (headroom's are applied)",
                "response bodies and check names",
            ]
            .map(String::from)
            .to_vec(),
        })),
        profile: ProfileRecord {
            model: "imported from JMeter".into(),
            users: (peak_threads > 0).then_some(peak_threads),
            ..ProfileRecord::default()
        },
        apdex_t_ms: t,
        apdex_f_ms: f,
        timeout_ms: 0.0,
        threads: 0,
        seed: 0,
        labels: labels.names.clone(),
        label_roles: BTreeMap::new(),
        started_at: humantime::format_rfc3339_millis(wall_start).to_string(),
        ended_at: None,
        elapsed_s: None,
        status: RunStatus::Running,
        client: ClientHost {
            hostname: String::new(),
            os: String::new(),
            arch: String::new(),
            cores: 0,
        },
        fingerprint: None,
        doctor: Vec::new(),
        monitored_hosts: Vec::new(),
        warnings: Vec::new(),
        summary: None,
        measurement: None,
        save_failures: None,
        shard: None,
        merged: None,
        files: Files::new(false),
        connections: Vec::new(),
    }
}

/// Folds the sorted samples into one interval per second (by the time
/// each ended) and writes them; returns the tallies of the whole run, per
/// label and in total.
fn write_seconds(
    writer: &mut BundleWriter,
    converted: &[(Sample, u32, bool)],
    label_count: usize,
    base: Instant,
    elapsed: Duration,
    apdex: &ApdexThresholds,
) -> Result<(Vec<Tally>, Tally), BundleError> {
    let mut cumulative: Vec<Tally> = (0..label_count).map(|_| Tally::default()).collect();
    let mut cumulative_total = Tally::default();
    let mut i = 0;
    let last_second = elapsed.as_secs();
    for second in 0..=last_second {
        let mut tallies: Vec<Option<Tally>> = (0..label_count).map(|_| None).collect();
        let mut total = Tally::default();
        let mut active = 0;
        while i < converted.len()
            && converted[i].0.end.saturating_duration_since(base).as_secs() == second
        {
            let (sample, threads, is_transaction) = &converted[i];
            let label = sample.label as usize;
            tallies[label]
                .get_or_insert_with(Tally::default)
                .record(sample, apdex);
            // As JMeter's dashboard: each sample by its own kind (a sampler
            // may share a transaction's label).
            if !is_transaction {
                total.record(sample, apdex);
            }
            active = active.max(*threads);
            i += 1;
        }
        for (label, tally) in tallies.iter().enumerate() {
            if let Some(t) = tally {
                cumulative[label].add(t);
            }
        }
        cumulative_total.add(&total);
        let length = if second == last_second {
            elapsed - Duration::from_secs(last_second)
        } else {
            Duration::from_secs(1)
        };
        if length.is_zero() {
            continue;
        }
        writer.write_interval(&MergedInterval {
            index: second,
            length,
            tallies,
            total,
            active_vus: active,
            arrivals: 0,
            worker_busy: 0.0,
            worker_wait: 0.0,
            loop_lag: Duration::ZERO,
        })?;
    }
    Ok((cumulative, cumulative_total))
}

/// The imported run's summary from its whole-run tallies.
fn summary(
    labels: &[String],
    cumulative: &[Tally],
    cumulative_total: &Tally,
    elapsed: Duration,
    apdex: &ApdexThresholds,
    peak_threads: u32,
) -> RunSummary {
    let (t, f) = RunSummary::thresholds(apdex);
    let (total, total_summary) = LabelFigures::of(cumulative_total, elapsed);
    let label_figures = labels
        .iter()
        .zip(cumulative)
        .map(|(name, tally)| (name.clone(), LabelFigures::of(tally, elapsed).0))
        .collect();
    let response_sum = total_summary.latency.mean.as_secs_f64() * total_summary.count as f64;
    RunSummary {
        elapsed_s: elapsed.as_secs_f64(),
        apdex_t_ms: t,
        apdex_f_ms: f,
        total,
        labels: label_figures,
        peak_vus: peak_threads,
        concurrency: response_sum / elapsed.as_secs_f64(),
        throughput_mb_s: total_summary.bytes_received as f64 / 1e6 / elapsed.as_secs_f64(),
        checks: BTreeMap::new(),
        resources: Vec::new(),
        requests: None,
        ..RunSummary::default()
    }
}

/// What JMeter's dashboard shows for each label and the total, computed
/// as it does (its percentile estimator over the last 20,000 samples, in
/// the file's order; the total without transaction controllers), so the
/// imported run can be set beside the dashboard the user has.
fn jmeter_dashboard(
    samples: &[JtlSample],
    labels: &[String],
    apdex: &ApdexThresholds,
) -> JmeterDashboard {
    // JMeter's Apdex: a failed sample is frustrated; its overall figure
    // counts transaction controllers too (unlike its statistics' Total).
    let apdex_of = |of: &dyn Fn(&JtlSample) -> bool| {
        let mut counts = ApdexCounts::default();
        for s in samples.iter().filter(|s| of(s)) {
            counts.add_zone(apdex.zone(Duration::from_millis(s.elapsed_ms), !s.success));
        }
        counts.score()
    };
    use headroom_analysis::jmeter::{dashboard_percentiles, STATISTIC_WINDOW};
    let figures = |of: &dyn Fn(&JtlSample) -> bool| {
        let values: Vec<f64> = samples
            .iter()
            .filter(|s| of(s))
            .map(|s| s.elapsed_ms as f64)
            .collect();
        let p = dashboard_percentiles(&values, STATISTIC_WINDOW);
        // The mean over every sample (JMeter's is not windowed).
        let mean = (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64);
        DashboardFigures {
            apdex: apdex_of(of),
            error_count: samples.iter().filter(|s| of(s) && !s.success).count(),
            mean_ms: mean,
            median_ms: p.map(|p| p[0]),
            p90_ms: p.map(|p| p[1]),
            p95_ms: p.map(|p| p[2]),
            p99_ms: p.map(|p| p[3]),
            sample_count: values.len(),
        }
    };
    let mut by_label = BTreeMap::new();
    for label in labels {
        by_label.insert(label.clone(), figures(&|s: &JtlSample| &s.label == label));
    }
    by_label.insert("Total".into(), figures(&|s: &JtlSample| !s.transaction));
    JmeterDashboard {
        estimator: "Apache Commons Math Percentile (LEGACY), the last 20000 samples per label, as JMeter's dashboard (jmeter.reportgenerator.statistic_window)".into(),
        labels: by_label,
        overall_apdex: apdex_of(&|_: &JtlSample| true),
    }
}

/// The scheme and host most samples went to, from their URLs.
fn most_common_host(samples: &[JtlSample]) -> Option<String> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for s in samples {
        let Some(rest) = s.url.split_once("://").map(|(_, r)| r) else {
            continue;
        };
        let host = rest.split('/').next().unwrap_or(rest);
        let end = s.url.len() - rest.len() + host.len();
        *counts.entry(&s.url[..end]).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|(_, n)| *n)
        .map(|(h, _)| h.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dashboard(manifest: &Manifest) -> &JmeterDashboard {
        match &manifest.scenario {
            Some(ScenarioRecord::Jtl(JtlRecord {
                jmeter_dashboard: Some(d),
                ..
            })) => d,
            other => panic!("no JMeter dashboard: {other:?}"),
        }
    }

    #[test]
    fn a_jtl_becomes_a_bundle_with_jmeters_figures() {
        let dir = std::env::temp_dir().join(format!("headroom-jtl-import-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let jtl = dir.join("r.jtl");
        std::fs::write(
            &jtl,
            "timeStamp,elapsed,label,responseCode,responseMessage,threadName,success,bytes,sentBytes,allThreads,URL,Latency,Connect\n\
             1700000000000,100,home,200,OK,TG 1-1,true,1000,100,2,http://pi.local/,40,5\n\
             1700000000500,700,home,200,OK,TG 1-2,true,1000,100,2,http://pi.local/,40,0\n\
             1700000001200,2000,login,500,Error,TG 1-1,false,10,100,2,http://pi.local/login,40,0\n\
             1700000001300,100,login,200,OK,TG 1-2,false,10,100,2,http://pi.local/login,40,0\n\
             1700000001400,50,login,Non HTTP response code: java.net.ConnectException,Connection refused,TG 1-2,false,0,0,2,http://pi.local/login,0,0\n\
             1700000000000,3300,journey,200,\"Number of samples in transaction : 5, number of failing samples : 3\",TG 1-1,false,2020,400,2,,0,0\n\
             1700000000000,3300,home,200,\"Number of samples in transaction : 1, number of failing samples : 0\",TG 1-1,true,1000,100,2,,0,0\n",
        )
        .unwrap();
        let apdex = ApdexThresholds {
            satisfied: Duration::from_millis(500),
            tolerated: Duration::from_millis(1500),
        };
        let out = dir.join("bundle");
        let imported = import(&jtl, &out, &apdex, vec!["headroom".into()]).unwrap();
        let s = imported.manifest.summary.as_ref().unwrap();
        assert_eq!(
            s.total.count, 5,
            "transactions stay out of the total, a label shared or not"
        );
        assert_eq!(s.labels["home"].count, 3);
        assert_eq!(s.total.errors, 3);
        assert_eq!(s.labels["journey"].count, 1);
        let login = &s.labels["login"];
        assert_eq!(login.errors_by_kind.get("http_5xx"), Some(&1));
        assert_eq!(login.errors_by_kind.get("check"), Some(&1));
        assert_eq!(login.errors_by_kind.get("refused"), Some(&1));
        // Apdex: home 100 ms satisfied, 700 ms tolerating; failures frustrated.
        assert!(
            (s.total.apdex.unwrap() - (1.0 + 0.5) / 5.0).abs() < 1e-9,
            "{:?}",
            s.total.apdex
        );
        assert_eq!(imported.manifest.target, "http://pi.local");
        assert_eq!(imported.manifest.kind, "import");
        assert_eq!(s.peak_vus, 2);
        assert!((s.elapsed_s - 3.3).abs() < 1e-9);
        let dashboard = &dashboard(&imported.manifest).labels;
        assert_eq!(dashboard["Total"].sample_count, 5);
        assert_eq!(
            dashboard["home"].p90_ms,
            Some(3300.0),
            "the label's transaction sample too"
        );
        assert_eq!(dashboard["journey"].sample_count, 1);
        let read = crate::manifest::read_manifest(&out).unwrap();
        assert_eq!(read.status, RunStatus::Complete);
        assert!(
            import(&jtl, &out, &apdex, Vec::new()).is_err(),
            "an existing bundle is kept"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Samples exactly at T and at F = 4T, one past each and a failed fast
    /// one: JMeter's dashboard figure and headroom's summary both follow
    /// the one Apdex rule (at T satisfied, at F tolerating, a failure
    /// frustrated): (1 + 2 × ½) / 5 = 0.4.
    #[test]
    fn apdex_at_t_and_at_4t_follows_the_one_rule() {
        let dir = std::env::temp_dir().join(format!("headroom-jtl-apdex-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let jtl = dir.join("r.jtl");
        std::fs::write(
            &jtl,
            "timeStamp,elapsed,label,responseCode,success\n\
             1700000000000,500,home,200,true\n\
             1700000000100,501,home,200,true\n\
             1700000000200,2000,home,200,true\n\
             1700000000300,2001,home,200,true\n\
             1700000000400,100,home,500,false\n",
        )
        .unwrap();
        let apdex = ApdexThresholds::standard(Duration::from_millis(500));
        let out = dir.join("bundle");
        let imported = import(&jtl, &out, &apdex, Vec::new()).unwrap();
        let mut rule = ApdexCounts::default();
        for (ms, failed) in [
            (500, false),
            (501, false),
            (2000, false),
            (2001, false),
            (100, true),
        ] {
            rule.add_zone(apdex.zone(Duration::from_millis(ms), failed));
        }
        assert_eq!(
            (rule.satisfied, rule.tolerating, rule.frustrated),
            (1, 2, 2)
        );
        assert_eq!(rule.score(), Some(0.4));
        let summary = imported.manifest.summary.as_ref().unwrap();
        assert_eq!(summary.labels["home"].apdex, rule.score());
        assert_eq!(summary.total.apdex, rule.score());
        let dashboard = dashboard(&imported.manifest);
        assert_eq!(dashboard.overall_apdex, Some(0.4));
        assert_eq!(dashboard.labels["home"].apdex, Some(0.4));
        assert_eq!(dashboard.labels["Total"].apdex, Some(0.4));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// "Café" (10 ms) and "Cafè" (1000 ms) in a file's own encoding: two
    /// labels with their own means, whatever the bytes.
    #[test]
    fn labels_in_latin_encodings_stay_apart() {
        let dir = std::env::temp_dir().join(format!("headroom-jtl-latin-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let apdex = ApdexThresholds {
            satisfied: Duration::from_millis(500),
            tolerated: Duration::from_millis(1500),
        };
        // é is 0xE9, è 0xE8 in both windows-1252 and ISO-8859-1; 0x80 is
        // windows-1252's euro sign.
        let csv: &[u8] = b"timeStamp,elapsed,label,responseCode,success\n\
            1700000000000,10,Caf\xE9,200,true\n1700000000100,1000,Caf\xE8,200,true\n\
            1700000000200,10,\x80 price,200,true\n";
        let xml: &[u8] = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<testResults version=\"1.2\">\n\
            <httpSample t=\"10\" ts=\"1700000000000\" s=\"true\" lb=\"Caf\xE9\" rc=\"200\"/>\n\
            <httpSample t=\"1000\" ts=\"1700000000100\" s=\"true\" lb=\"Caf\xE8\" rc=\"200\"/>\n</testResults>\n";
        for (name, bytes, warned) in [("cp1252.jtl", csv, true), ("latin1.jtl", xml, false)] {
            let jtl = dir.join(name);
            std::fs::write(&jtl, bytes).unwrap();
            let imported = import(
                &jtl,
                &dir.join(format!("{name}.bundle")),
                &apdex,
                Vec::new(),
            )
            .unwrap();
            let s = imported.manifest.summary.as_ref().unwrap();
            let mean = |label: &str| s.labels[label].mean_ms;
            assert_eq!(s.labels["Café"].count, 1, "{name}: {:?}", s.labels.keys());
            assert_eq!(s.labels["Cafè"].count, 1, "{name}: {:?}", s.labels.keys());
            assert!(
                (mean("Café") - 10.0).abs() < 0.1,
                "{name}: {}",
                mean("Café")
            );
            assert!(
                (mean("Cafè") - 1000.0).abs() < 1.0,
                "{name}: {}",
                mean("Cafè")
            );
            if name == "cp1252.jtl" {
                assert_eq!(s.labels["€ price"].count, 1, "{:?}", s.labels.keys());
            }
            assert_eq!(
                imported
                    .warnings
                    .iter()
                    .any(|w| w.contains("read as windows-1252")),
                warned,
                "{name}: {:?}",
                imported.warnings
            );
        }
        // A declaration headroom cannot read, or bytes it cannot read as
        // the declared UTF-8: refused, never guessed.
        for (name, bytes, expected) in [
            ("ebcdic.jtl", &b"<?xml version='1.0' encoding='EBCDIC-CP-US'?><testResults/>"[..], "EBCDIC-CP-US"),
            ("utf8.jtl", &b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testResults>\n<httpSample lb=\"Caf\xE9\"/></testResults>"[..], "line 3: a byte that is not UTF-8"),
        ] {
            let jtl = dir.join(name);
            std::fs::write(&jtl, bytes).unwrap();
            let Err(e) = import(&jtl, &dir.join(format!("{name}.bundle")), &apdex, Vec::new()) else {
                panic!("{name} is refused");
            };
            let e = e.to_string();
            assert!(e.contains(expected), "{name}: {e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    const CSV: &str = "timeStamp,elapsed,label,responseCode,responseMessage,threadName,success,bytes,sentBytes,allThreads,URL,Latency,Connect\n\
        1700000000000,100,home,200,OK,TG 1-1,true,1000,100,2,http://pi.local/,40,5\n\
        1700000001200,2000,login,500,Error,TG 1-2,false,10,100,2,http://pi.local/login,40,0\n";
    const XML: &str = "<testResults version=\"1.2\"><sample t=\"300\" ts=\"1700000000000\" s=\"true\" lb=\"j\" rc=\"200\" rm=\"Number of samples in transaction : 1, number of failing samples : 0\" tn=\"TG 1-1\"><httpSample t=\"100\" lt=\"40\" ts=\"1700000000000\" s=\"true\" lb=\"home\" rc=\"200\" tn=\"TG 1-1\" by=\"4\" na=\"1\"/></sample></testResults>";

    /// A mutated JTL file, imported: an error or a bundle, never a panic.
    fn import_text(text: &str, case: &str) {
        let dir =
            std::env::temp_dir().join(format!("headroom-jtl-fuzz-{}-{case}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let jtl = dir.join("r.jtl");
        std::fs::write(&jtl, text).unwrap();
        let apdex = ApdexThresholds {
            satisfied: Duration::from_millis(500),
            tolerated: Duration::from_millis(1500),
        };
        let _ = import(&jtl, &dir.join("bundle"), &apdex, Vec::new());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_of_more_than_a_week_is_refused() {
        let dir = std::env::temp_dir().join(format!("headroom-jtl-span-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let jtl = dir.join("r.jtl");
        std::fs::write(
            &jtl,
            "timeStamp,elapsed,label\n1700000000000,5,x\n1800000000000,5,x\n",
        )
        .unwrap();
        let apdex = ApdexThresholds {
            satisfied: Duration::from_millis(500),
            tolerated: Duration::from_millis(1500),
        };
        let Err(e) = import(&jtl, &dir.join("bundle"), &apdex, Vec::new()) else {
            panic!("a span of three years is refused");
        };
        let e = e.to_string();
        assert!(
            e.contains("span 1157.4 days (2023-11-14T22:13:20Z to 2027-01-15T08:00:00Z)"),
            "{e}"
        );
        assert!(!dir.join("bundle").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(150))]
        #[test]
        fn no_mutated_jtl_panics(xml: bool, cut in 0usize..400, byte in 0u8..128, at in 0usize..400) {
            let base = if xml { XML } else { CSV };
            let mut bytes = base.as_bytes()[..cut.min(base.len())].to_vec();
            if at < bytes.len() {
                bytes[at] = byte;
            }
            import_text(&String::from_utf8_lossy(&bytes), "m");
        }

        #[test]
        fn no_extreme_number_panics(
            ts in proptest::prop_oneof![proptest::num::i64::ANY, 1_699_000_000_000i64..1_701_000_000_000],
            elapsed in proptest::prop_oneof![proptest::num::u64::ANY, 0u64..=86_400_000],
            latency in proptest::num::u64::ANY,
            threads in proptest::num::u64::ANY,
            by in proptest::num::u64::ANY,
        ) {
            let csv = format!("timeStamp,elapsed,label,success,Latency,allThreads,bytes\n{ts},{elapsed},x,true,{latency},{threads},{by}\n1700000000000,5,x,false,1,1,1\n");
            import_text(&csv, "n");
            let xml = format!("<testResults><httpSample ts=\"{ts}\" t=\"{elapsed}\" lt=\"{latency}\" na=\"{threads}\" by=\"{by}\" lb=\"x\" s=\"true\"/></testResults>");
            import_text(&xml, "x");
        }
    }
}
