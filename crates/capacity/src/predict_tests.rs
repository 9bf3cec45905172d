use super::*;

/// A level as capacity.json holds it: `users` who think 1 s, 10 ms a
/// request, the throughput Little's law gives them, the server's process
/// at 20% of the host.
fn level(users: u32) -> Level {
    let rps = f64::from(users) / 1.010;
    serde_json::from_value(serde_json::json!({
        "users": users, "good": true, "apdex": 1.0, "apdex_rating": "Excellent",
        "samples": (rps * 10.0) as u64, "error_rate": 0.0, "mean_ms": 10.0,
        "p50_ms": 9.0, "p90_ms": 12.0, "p95_ms": 14.0, "rps": rps, "measured_s": 10.0,
        "resources": [{
            "host": "local", "cpu_avg": 25.0, "cpu_peak": 30.0, "memory_avg": 40.0,
            "disk_avg": 1.0, "net_link_avg": null, "temperature_max": null,
            "throttled_seconds": 0, "busiest_core": null, "processes": [["php-fpm", 20.0]]
        }],
        "generator_limited": false, "bundle": "level", "think_s": 1.0
    }))
    .unwrap()
}

fn levels() -> Vec<Level> {
    [10, 20, 40, 80].into_iter().map(level).collect()
}

/// The refusal of `levels` with level 3 changed by `edit`.
fn refusal(edit: impl Fn(&mut Level)) -> String {
    let mut edited = levels();
    edit(&mut edited[2]);
    impossible_level(&edited, 1.0).unwrap_err()
}

#[test]
fn measured_levels_are_possible() {
    assert_eq!(impossible_level(&levels(), 1.0), Ok(()));
    // A level that measured nothing (the server answered no request).
    let mut silent = levels();
    silent[3].rps = 0.0;
    silent[3].samples = 0;
    silent[3].mean_ms = None;
    assert_eq!(impossible_level(&silent, 1.0), Ok(()));
}

#[test]
fn an_edited_level_is_refused_naming_its_field_and_why() {
    let said = refusal(|l| l.rps = -5.0);
    assert!(
        said.starts_with("level 3 (40 users): rps -5: a throughput cannot be negative; the bundle was edited or damaged"),
        "{said}"
    );
    let said = refusal(|l| l.rps = 0.0);
    assert!(said.contains("rps 0: 396 requests were measured"), "{said}");
    let said = refusal(|l| l.mean_ms = Some(-10.0));
    assert!(
        said.contains("level 3 (40 users): mean_ms -10: a mean response time is more than 0"),
        "{said}"
    );
    assert!(refusal(|l| l.mean_ms = Some(0.0)).contains("mean_ms 0:"));
    let said = refusal(|l| l.resources[0].processes[0].1 = -3.0);
    assert!(
        said.contains("php-fpm's CPU -3% on local: a process's CPU cannot be negative"),
        "{said}"
    );
    let said = refusal(|l| l.resources[0].disk_iops_avg = Some(-40.0));
    assert!(
        said.contains("level 3 (40 users): disk_iops_avg -40 on local: a disk's operations cannot be negative"),
        "{said}"
    );
}

#[test]
fn a_throughput_its_users_could_not_make_is_refused() {
    // 5 users who think 50 ms at 20 ms a request make at most 71.4 a
    // second: 233 is more than three times that.
    let said = refusal(|l| {
        l.users = 5;
        l.think_s = Some(0.05);
        l.mean_ms = Some(20.0);
        l.rps = 233.0;
    });
    assert!(
        said.contains("level 3 (5 users): rps 233: 5 users who think 0.050 s and wait 20.0 ms a request make at most 71.4 a second (Little's law"),
        "{said}"
    );
    // Within twice that (a window catching the users in step) it stands.
    let mut close = levels();
    close[2].rps *= 1.5;
    assert_eq!(impossible_level(&close, 1.0), Ok(()));
    // The search's think time where the level kept none: 40 users who
    // think 1 s make at most 39.6 a second, who think 0.5 s 78.4.
    let mut unknown = levels();
    unknown[2].think_s = None;
    unknown[2].rps *= 3.0;
    assert!(impossible_level(&unknown, 1.0).is_err());
    assert_eq!(impossible_level(&unknown, 0.5), Ok(()));
}
