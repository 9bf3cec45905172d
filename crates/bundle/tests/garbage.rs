//! Every file a user hands to `report` and `compare` goes through these
//! readers: truncated, reordered or garbage files give errors, never panics.

use headroom_bundle::{capacity, intervals, manifest, reader, recovery, resources};
use headroom_bundle::{CAPACITY, INTERVALS, LATENCY, MANIFEST, RESOURCES, RESOURCES_DETAIL};
use proptest::prelude::*;
use std::path::PathBuf;

const INTERVALS_OK: &str = "second,start_epoch_ms,interval_s,label,count,errors,errors_refused,mean_ms,p50_ms,p90_ms,p95_ms,p99_ms,max_ms,active_vus,apdex_satisfied,apdex_tolerating,apdex_frustrated\n0,1,1.000,TOTAL,10,1,1,5.5,5,9,9.5,9.9,12,4,8,1,1\n1,2,0.500,TOTAL,3,0,0,1,1,1,1,1,1,2,3,0,0\n";
const MANIFEST_OK: &str = r#"{"schema_version": 1, "status": "running", "target": "http://x/", "apdex_t_ms": 500, "apdex_f_ms": 2000, "labels": ["a"]}"#;
const RESOURCES_OK: &str = "second,start_epoch_ms,host,cpu_pct,memory_used_pct,nginx_cpu_pct,nginx_rss_mb\n0,1,local,50.0,20.0,30.0,12.0\n";
const HLOG_OK: &str = "#[StartTime: 1.000 (seconds since epoch)]\n\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n0.000,1.000,1.000,HISTFAAAACl4nJNpmSzMwMDAxQABzFCaEUzOmNZg/wEi0NzIyMTU1NjI0MzE1MTcwNDYwMTEBAD4wQb3\n";

fn bundle(n: u64) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("headroom-garbage-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A file cut at `cut`, with `garbage` spliced in at `at` (both taken
/// modulo its length), and its lines maybe reversed.
fn damage(text: &str, cut: usize, at: usize, garbage: &[u8], reverse: bool) -> Vec<u8> {
    let mut bytes = if reverse {
        text.lines()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
            .into_bytes()
    } else {
        text.as_bytes().to_vec()
    };
    bytes.truncate(cut % (bytes.len() + 1));
    let at = at % (bytes.len() + 1);
    bytes.splice(at..at, garbage.iter().copied());
    bytes
}

fn read_everything(dir: &std::path::Path) {
    let _ = intervals::read_intervals(dir);
    let _ = resources::read_resources(dir);
    let _ = resources::read_core_loads(dir);
    let _ = reader::read_latency(dir);
    let _ = capacity::read(dir);
    if let Ok(m) = manifest::read_manifest(dir) {
        let _ = recovery::recover_summary(dir, &m);
        let _ = recovery::summary_of_window(
            dir,
            &m,
            std::time::Duration::from_millis(500)..std::time::Duration::from_secs(1),
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn damaged_bundles_are_errors_not_panics(
        file in 0usize..6,
        cut in any::<usize>(),
        at in any::<usize>(),
        garbage in proptest::collection::vec(any::<u8>(), 0..40),
        reverse in any::<bool>(),
        n in any::<u64>(),
    ) {
        let dir = bundle(n);
        let files = [
            (INTERVALS, INTERVALS_OK),
            (MANIFEST, MANIFEST_OK),
            (RESOURCES, RESOURCES_OK),
            (LATENCY, HLOG_OK),
            (RESOURCES_DETAIL, "{\"second\": 0, \"host\": \"local\", \"resources\": {\"per_core_pct\": [1.0, 2.0]}}\n"),
            (CAPACITY, "{\"schema_version\": 1, \"levels\": []}"),
        ];
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        let (name, text) = files[file];
        std::fs::write(dir.join(name), damage(text, cut, at, &garbage, reverse)).unwrap();
        read_everything(&dir);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn the_undamaged_files_read() {
    let dir = bundle(u64::MAX);
    std::fs::write(dir.join(INTERVALS), INTERVALS_OK).unwrap();
    std::fs::write(dir.join(RESOURCES), RESOURCES_OK).unwrap();
    std::fs::write(dir.join(MANIFEST), MANIFEST_OK).unwrap();
    let rows = intervals::read_intervals(&dir).unwrap();
    assert_eq!(rows[0].errors_by_kind[0], 1);
    let res = resources::read_resources(&dir).unwrap().unwrap();
    assert_eq!(res[0].processes, vec![("nginx".to_string(), 30.0)]);
    let m = manifest::read_manifest(&dir).unwrap();
    assert_eq!(m.apdex_f_ms, 2000.0);
}

#[test]
fn infinite_figures_and_impossible_times_are_refused() {
    let dir = bundle(u64::MAX - 1);
    std::fs::write(
        dir.join(INTERVALS),
        INTERVALS_OK.replace("5.5,5,9", "inf,5,9"),
    )
    .unwrap();
    let error = intervals::read_intervals(&dir).unwrap_err().to_string();
    assert!(
        error.contains("'inf' in column mean_ms is not a finite number"),
        "{error}"
    );
    std::fs::write(
        dir.join(INTERVALS),
        INTERVALS_OK.replace("\n0,1,", "\n99999999999,1,"),
    )
    .unwrap();
    let error = intervals::read_intervals(&dir).unwrap_err().to_string();
    assert!(error.contains("is not one of a run"), "{error}");
    let manifest = MANIFEST_OK.replace(
        "\"labels\"",
        "\"measurement\": {\"from_s\": 1e10, \"until_s\": 3, \"whole_run\": {}}, \"labels\"",
    );
    std::fs::write(dir.join(MANIFEST), manifest).unwrap();
    let error = manifest::read_manifest(&dir).unwrap_err().to_string();
    assert!(error.contains("measurement window"), "{error}");
    std::fs::write(
        dir.join(RESOURCES),
        RESOURCES_OK.replace("50.0,20.0", "inf,NaN"),
    )
    .unwrap();
    let rows = resources::read_resources(&dir).unwrap().unwrap();
    assert_eq!((rows[0].cpu_pct, rows[0].memory_used_pct), (None, None));
}
