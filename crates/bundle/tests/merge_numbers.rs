//! `headroom merge` reads numbers from every shard's manifest and files:
//! whatever they hold (a damaged clock offset, a second or a lag beyond
//! any run), the merge gives a figure or an error naming the file and the
//! field, never a panic.

use headroom_bundle::merge::{merge, MergeRequest};
use headroom_bundle::{INTERVALS, LATENCY, MANIFEST};
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

const INTERVALS_OK: &str = "second,start_epoch_ms,interval_s,label,count,errors,mean_ms,p50_ms,p90_ms,p95_ms,p99_ms,max_ms,active_vus,apdex_satisfied,apdex_tolerating,apdex_frustrated,generator_lag_ms\n0,1,1.000,TOTAL,10,1,5.5,5,9,9.5,9.9,12,4,8,1,1,0.5\n";

/// latency.hlog of second 0: 10 response times of 5 ms.
fn hlog() -> Vec<u8> {
    let mut h = headroom_analysis::new_histogram();
    h.record_n(5_000, 10).unwrap();
    let mut out = Vec::new();
    let start = std::time::UNIX_EPOCH + Duration::from_secs(1_795_000_000);
    let mut w = headroom_bundle::hlog::HlogWriter::new(&mut out, start).unwrap();
    w.write(&h, Duration::ZERO, Duration::from_secs(1), None)
        .unwrap();
    drop(w);
    out
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "headroom-merge-numbers-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Shard `index` of 2 (status running: its files need not match a
/// summary), its clock `offset_ms` from a reference both shards share.
fn shard(root: &Path, index: u32, offset_ms: f64, intervals: &str) -> PathBuf {
    let d = root.join(format!("shard-{index}"));
    std::fs::create_dir_all(&d).unwrap();
    let manifest = serde_json::json!({
        "schema_version": 1, "status": "running", "target": "http://x/",
        "apdex_t_ms": 500, "apdex_f_ms": 2000, "labels": ["a"],
        "started_at": "2026-11-26T05:00:00.000Z",
        "files": {"intervals": INTERVALS, "latency": LATENCY, "samples": null},
        "shard": {"index": index, "count": 2, "start_at": "2026-11-26T05:00:00.000Z",
                  "clock": {"reference": "agent 10.0.0.1:9464", "offset_ms": offset_ms,
                            "uncertainty_ms": 0.5}}
    });
    std::fs::write(d.join(MANIFEST), manifest.to_string()).unwrap();
    std::fs::write(d.join(INTERVALS), intervals).unwrap();
    std::fs::write(d.join(LATENCY), hlog()).unwrap();
    d
}

fn merged(root: &Path, shards: &[PathBuf]) -> Result<(), String> {
    merge(&MergeRequest {
        shards,
        out: &root.join("merged"),
        tolerance: Duration::from_secs(1),
        command_line: Vec::new(),
    })
    .map(|_| ())
    .map_err(|e| e.to_string())
}

#[test]
fn a_damaged_clock_offset_is_an_error_naming_the_manifest_and_the_field() {
    // The user's case: 1e300 ms in shard 1's manifest ended the merge
    // with a panic (exit 101).
    for (offset, shown) in [
        (1e300, "1e300"),
        (-1e300, "-1e300"),
        (f64::MAX, "1.7976931348623157e308"),
        (2.0 * 86_400_000.0, "172800000"),
    ] {
        let root = dir("offset");
        let shards = [
            shard(&root, 0, 0.0, INTERVALS_OK),
            shard(&root, 1, offset, INTERVALS_OK),
        ];
        let e = merged(&root, &shards).unwrap_err();
        let manifest = shards[1].join(MANIFEST).display().to_string();
        assert!(
            e.contains(&manifest)
                && e.contains(&format!("shard.clock.offset_ms is {}", shown))
                && e.contains("Run the shard again, or leave it out"),
            "{e}"
        );
    }
    // An hour off is a clock, not damage: the shard starts an hour late.
    let root = dir("hour");
    let shards = [
        shard(&root, 0, 0.0, INTERVALS_OK),
        shard(&root, 1, 3_600_000.0, INTERVALS_OK),
    ];
    merged(&root, &shards).unwrap();
}

/// A shard killed between a second's TOTAL line in latency.hlog and its
/// labels' lines (at a line boundary, so nothing is torn): TOTAL's count
/// matched, label a's response times of that second were missing, and the
/// merge was complete with a's percentiles from the other shards alone.
/// Each label's count is checked as TOTAL's is.
#[test]
fn a_label_whose_response_times_are_missing_is_said() {
    let root = dir("label-missing");
    let with_a = format!("{INTERVALS_OK}0,1,1.000,a,10,1,5.5,5,9,9.5,9.9,12,4,8,1,1,0.5\n");
    let shards = [
        shard(&root, 0, 0.0, INTERVALS_OK),
        shard(&root, 1, 0.0, &with_a),
    ];
    let manifest = merge(&MergeRequest {
        shards: &shards,
        out: &root.join("merged"),
        tolerance: Duration::from_secs(1),
        command_line: Vec::new(),
    })
    .unwrap();
    let partial = manifest.merged.expect("a merge record").partial;
    assert!(
        partial.iter().any(|p| p.contains("shard 1/2")
            && p.contains("holds 0 response times of a but intervals.csv counts 10 requests of a")),
        "{partial:?}"
    );
}

/// A clock offset that puts a shard before the planned start (an hour
/// early, within the day a clock may be off) made a day-long gap between
/// the shards and the merged run complete, its throughput over the
/// seconds the shards ran apart: a shard waits for the planned start, so
/// one that is before it beyond the tolerance is said, as a late one is.
#[test]
fn a_shard_before_the_planned_start_makes_the_merge_partial() {
    for (offset, said) in [
        (-3_600_000.0, "started 3600.0 s before the planned start"),
        (3_600_000.0, "started 3600.0 s after the planned start"),
    ] {
        let root = dir("early");
        let shards = [
            shard(&root, 0, 0.0, INTERVALS_OK),
            shard(&root, 1, offset, INTERVALS_OK),
        ];
        let manifest = merge(&MergeRequest {
            shards: &shards,
            out: &root.join("merged"),
            tolerance: Duration::from_secs(1),
            command_line: Vec::new(),
        })
        .unwrap();
        let partial = manifest.merged.expect("a merge record").partial;
        assert!(
            partial
                .iter()
                .any(|p| p.contains("shard 1/2") && p.contains(said)),
            "{offset}: {partial:?}"
        );
    }
}

#[test]
fn a_second_or_a_lag_beyond_a_year_is_an_error_naming_the_line() {
    let root = dir("lag");
    let lag = INTERVALS_OK.replace(",0.5\n", ",1e300\n");
    let shards = [
        shard(&root, 0, 0.0, INTERVALS_OK),
        shard(&root, 1, 0.0, &lag),
    ];
    let e = merged(&root, &shards).unwrap_err();
    assert!(
        e.contains("line 2: 1e300 in column generator_lag_ms is beyond a year"),
        "{e}"
    );
    let root = dir("second");
    let second = INTERVALS_OK.replace("\n0,1,", "\n18446744073709551615,1,");
    let shards = [
        shard(&root, 0, 0.0, INTERVALS_OK),
        shard(&root, 1, 0.0, &second),
    ];
    let e = merged(&root, &shards).unwrap_err();
    assert!(
        e.contains("line 2: second 18446744073709551615 is beyond a year"),
        "{e}"
    );
}

/// Any finite number (JSON holds no other).
fn finite() -> impl Strategy<Value = f64> {
    any::<f64>().prop_filter("JSON numbers are finite", |x| x.is_finite())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any clock offset and uncertainty a manifest may hold: a merge, or
    /// an error naming the field; never a panic.
    #[test]
    fn any_clock_numbers_merge_or_are_named(
        offset in prop_oneof![finite(), -1e9..1e9f64, Just(86_400_000.0), Just(86_400_000.5)],
        uncertainty in prop_oneof![finite(), 0.0..1e9f64],
        n in any::<u32>(),
    ) {
        let root = dir(&format!("prop-{n}"));
        let shards = [
            shard(&root, 0, 0.0, INTERVALS_OK),
            shard(&root, 1, offset, INTERVALS_OK),
        ];
        let path = shards[1].join(MANIFEST);
        let mut m: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        m["shard"]["clock"]["uncertainty_ms"] = serde_json::json!(uncertainty);
        std::fs::write(&path, m.to_string()).unwrap();
        let day = 86_400_000.0;
        let plausible = offset.is_finite() && offset.abs() <= day
            && uncertainty.is_finite() && (0.0..=day).contains(&uncertainty);
        match merged(&root, &shards) {
            Ok(()) => prop_assert!(plausible, "merged with offset {offset}, uncertainty {uncertainty}"),
            Err(e) => prop_assert!(!plausible && e.contains("shard.clock."), "{e}"),
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}
