//! The teacher's class (`testbed plan --class DIR`): the files the testbed
//! writes parse, and one short lesson of them against the testbed passes
//! every check, each student logged in with an account of its own.

use crate::support::site::{serve, sqlite_dataset, stats};
use crate::support::{light, manifest, run, temp_dir, text};

/// 10 students (9 readers, 1 poster) within 2 s, reading a page a second
/// for 15 s: every check runs and passes, 10 logins of 10 accounts, and
/// the poster's replies reach the forum.
#[test]
fn a_short_lesson_of_the_class_passes_every_check() {
    let _guard = light();
    let (dir, db) = sqlite_dataset("class", "s");
    let site = serve(&db, &[]);
    let base = format!("http://127.0.0.1:{}", site.port);
    let class = dir.join("class");
    let output = run(&[
        "testbed",
        "plan",
        "--db",
        &db,
        "--base-url",
        &base,
        "--class",
        class.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        text(&output).contains("(90 reader and 10 poster accounts)"),
        "{}",
        text(&output)
    );
    let file = class.join("class.yaml");
    let yaml = std::fs::read_to_string(&file).unwrap();
    assert!(yaml.contains("model: lesson") && yaml.contains("arrive_within: 60s"));
    let output = run(&["scenario", "check", file.to_str().unwrap()]);
    assert!(output.status.success(), "{}", text(&output));
    let said = text(&output);
    assert!(
        said.contains("a mix of 2 journeys (weights 9/1)")
            && said.contains("readers.csv (90 rows)")
            && said.contains("posters.csv (10 rows)"),
        "{said}"
    );

    let out = temp_dir("class-lesson");
    let output = run(&[
        "run",
        file.to_str().unwrap(),
        "--students",
        "10",
        "--arrive-within",
        "2s",
        "-d",
        "15s",
        "--think",
        "1s",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", text(&output));
    let said = text(&output);
    assert!(said.contains("mix: reader 9 users, poster 1"), "{said}");
    // The answer first, in words.
    assert!(
        said.contains(
            "stdout:\n\n  A class of 10 arriving within 2 s: fine. 95 in 100 pages took under"
        ),
        "{said}"
    );
    let summary = &manifest(&out)["summary"];
    assert_eq!(summary["total"]["errors"], 0, "{said}");
    let checks = summary["checks"].as_object().unwrap();
    assert!(checks.len() >= 13, "{checks:?}");
    for (name, check) in checks {
        assert!(
            check["passes"].as_u64().unwrap() > 0 && check["failures"] == 0,
            "{name}: {check} ({said})"
        );
    }
    // The first page came with its resources (the theme's assets); the
    // pages after it found them in the student's cache.
    assert!(
        summary["labels"]["reader / login page (resources)"]["count"]
            .as_u64()
            .unwrap()
            > 0,
        "{said}"
    );
    // The mix's pages know their roles: every request over the wire is
    // counted beside the pages (a mix recorded no roles before, so its
    // summary had no such count).
    let wire = &summary["requests"];
    let pages = summary["total"]["count"].as_u64().unwrap();
    assert_eq!(wire["pages"].as_u64(), Some(pages), "{wire}");
    let resources: u64 = summary["labels"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(name, _)| name.ends_with(" (resources)"))
        .map(|(_, l)| l["count"].as_u64().unwrap())
        .sum();
    assert_eq!(wire["resources"].as_u64(), Some(resources), "{wire}");
    // Beside them, what no sample stands for: each login's redirect, the
    // requests abandoned or answered after the end.
    let beside = |key: &str| wire[key].as_u64().unwrap_or(0);
    let unrecorded = beside("redirects") + beside("abandoned") + beside("late");
    assert!(beside("redirects") >= 10, "every login redirects: {wire}");
    let requests = wire["requests"].as_u64().unwrap();
    assert_eq!(requests, pages + resources + unrecorded, "{wire}");
    assert!(said.contains(" over the wire ("), "{said}");
    let counted = stats(site.port);
    // The testbed served each of them (an abandoned one may not have
    // reached it before the run ended).
    let served = counted["served"].as_u64().unwrap();
    assert!(
        (requests - beside("abandoned")..=requests).contains(&served),
        "served {served}, counted {wire}"
    );
    assert_eq!(
        (&counted["logins"], &counted["login_users"]),
        (&10.into(), &10.into()),
        "{counted}"
    );
    assert!(counted["posts"].as_u64().unwrap() >= 1, "{counted}");
    assert_eq!(counted["post_users"], 1, "{counted}");
}

/// A dataset with fewer than ten accounts has no poster: a clear error.
#[test]
fn a_class_needs_ten_accounts() {
    let _guard = light();
    let (dir, db) = sqlite_dataset("class-xs", "xs");
    let output = run(&[
        "testbed",
        "plan",
        "--db",
        &db,
        "--class",
        dir.join("class").to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    assert!(
        text(&output).contains("has 1 account(s): a class needs at least 10"),
        "{}",
        text(&output)
    );
}
