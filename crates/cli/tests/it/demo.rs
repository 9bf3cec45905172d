//! `headroom demo`, the README's first command, runs end to end: the
//! testbed, a capacity search against it and the report with the curve.

use crate::support::*;
use crate::support::{minutes, requires};

#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn demo_searches_the_testbeds_capacity_and_writes_the_report() {
    requires!(minutes());
    let _serial = serial();
    let testbeds = || -> Vec<String> {
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("headroom-demo-"))
            .collect()
    };
    let before = testbeds();
    let out = temp_dir("demo");
    let started = std::time::Instant::now();
    let output = run(&["demo", "-d", "3s", "--out", out.to_str().unwrap()]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The answer says what one of its users is: a student of the class
    // (readers and posters, pages loaded as a browser does) who does not
    // read between pages.
    let stdout = String::from_utf8_lossy(&output.stdout);
    let answer = stdout
        .lines()
        .position(|l| l.starts_with("headroom demo: "))
        .unwrap_or_else(|| panic!("no answer line in {stdout}"));
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[answer].starts_with("headroom demo: ")
            && lines[answer].contains(" non-stop students at Apdex"),
        "{stdout}"
    );
    assert!(
        lines[answer + 1].starts_with("A non-stop student: runs one journey of the mix 'class' in a loop, the users split by weight: 'reader' 90%")
            && lines[answer + 1].contains("'poster' 10%")
            && lines[answer + 1].contains("no time to read between requests")
            && lines[answer + 1].contains("pages loaded as a browser loads them"),
        "{stdout}"
    );
    // The answer in students is a model from Little's law, said as one.
    assert!(
        lines[answer + 2]
            .starts_with("In students (a model): a student reads a page for about 30 s")
            && lines[answer + 2].contains("a class arriving together is far fewer"),
        "{stdout}"
    );
    assert!(lines[answer + 3].starts_with("Report: "), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("capacity.json")).unwrap()).unwrap();
    let users = json["capacity"]["users"].as_u64().expect("a capacity");
    assert!(users >= 10, "{users}");
    // The testbed's knee lies inside the demo's levels: a search that ends
    // at --max has found no capacity to show.
    assert_eq!(json["capacity"]["at_least"], false, "{}", json["verdict"]);
    assert!(json["capacity"]["apdex"].as_f64().unwrap() >= 0.70);
    let levels = json["levels"].as_array().unwrap();
    assert!(levels.len() >= 3, "{levels:?}");
    // The journey passed its checks at every level: no errors.
    for level in levels {
        assert_eq!(level["error_rate"], 0.0, "{level}");
        assert!(
            level["resources"][0]["cpu_avg"].is_number(),
            "local monitoring"
        );
    }
    assert!(json["verdict"]
        .as_str()
        .unwrap()
        .contains("non-stop students at Apdex ≥ 0.70"));
    // The demo names its own limit, from the testbed's own count: SQLite
    // writes one transaction at a time, and every page writes its session's
    // lock, its log row and its session; at the knee the writer was busy
    // and requests queued for it.
    let limit = &json["limit"];
    assert_eq!(
        limit["resource"], "the testbed's SQLite writer",
        "{}",
        json["levels"]
    );
    assert!(
        limit["utilization_pct"].as_f64().unwrap() >= 50.0,
        "{limit}"
    );
    assert!(limit["waiting"].as_f64().unwrap() >= 1.0, "{limit}");
    assert!(limit["change"]
        .as_str()
        .unwrap()
        .contains("SQLite writes one transaction at a time"));
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    for title in [
        "Apdex against users",
        "Response time against users",
        "Throughput against users",
    ] {
        assert!(
            report.contains(&format!(">\n{title}\n</text>")),
            "no curve '{title}'"
        );
    }
    assert!(out.join("capacity.json").exists());
    // The temporary testbed is gone.
    assert_eq!(testbeds(), before);
    assert!(
        started.elapsed().as_secs() < 180,
        "the demo took {:?}",
        started.elapsed()
    );
}

/// The repository's Markdown: README.md and docs/*.md.
fn manual_pages() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut pages = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    pages
}

/// The lines of a Markdown page outside its fenced code blocks.
fn prose(page: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (n, line) in page.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            lines.push((n + 1, line));
        }
    }
    lines
}

/// The anchors GitHub gives a page's headings: lower case, punctuation
/// dropped, spaces as hyphens, a repeated heading numbered.
fn anchors(page: &str) -> std::collections::HashSet<String> {
    let mut seen = std::collections::HashSet::new();
    for (_, line) in prose(page) {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let slug: String = heading
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut anchor = slug.clone();
        let mut n = 1;
        while seen.contains(&anchor) {
            anchor = format!("{slug}-{n}");
            n += 1;
        }
        seen.insert(anchor);
    }
    seen
}

/// Every relative link of the README and the manual leads to a file that
/// exists, and to a heading that exists in it: the README is a start page
/// whose links are the way into docs/.
#[test]
fn the_readme_and_the_manual_link_to_what_exists() {
    let mut broken = Vec::new();
    let mut links = 0;
    for page in manual_pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (n, line) in prose(&text) {
            for (at, _) in line.match_indices("](") {
                let rest = &line[at + 2..];
                let Some(end) = rest.find(')') else { continue };
                let link = &rest[..end];
                if link.starts_with("http://") || link.starts_with("https://") {
                    continue;
                }
                links += 1;
                let (file, anchor) = link.split_once('#').unwrap_or((link, ""));
                let target = if file.is_empty() {
                    page.clone()
                } else {
                    page.parent().unwrap().join(file)
                };
                if !target.exists() {
                    broken.push(format!("{}:{n}: {link}: no such file", page.display()));
                } else if !anchor.is_empty()
                    && !anchors(&std::fs::read_to_string(&target).unwrap()).contains(anchor)
                {
                    broken.push(format!("{}:{n}: {link}: no such heading", page.display()));
                }
            }
        }
    }
    assert!(links > 20, "only {links} links found: the reader is wrong");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// The README's "your own site in ten lines" journey, pasted as it is,
/// runs against the demo site with every check passed.
#[test]
fn the_readmes_own_site_journey_runs_as_printed() {
    requires!(minutes());
    let _light = light();
    let readme = std::fs::read_to_string(&manual_pages()[0]).unwrap();
    let section = readme
        .split("## Your own site in ten lines")
        .nth(1)
        .expect("the README has its own-site section");
    let journey: String = section
        .split("```yaml")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("a yaml block")
        .lines()
        .map(|l| l.trim_start())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(journey.lines().count() <= 10, "{journey}");
    let port = free_port();
    let mut site = headroom()
        .args(["demo", "--serve", &format!("127.0.0.1:{port}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for_port(port, &mut site, "the demo site");
    let site = KillOnDrop(site);
    let dir = temp_dir("own-site");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mysite.yaml");
    std::fs::write(
        &file,
        journey.replace("127.0.0.1:8080", &format!("127.0.0.1:{port}")),
    )
    .unwrap();
    let output = run(&["scenario", "try", file.to_str().unwrap()]);
    drop(site);
    assert!(output.status.success(), "{}", text(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("every check passed"), "{stdout}");
}

/// A child process stopped when the test ends, passed or failed.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
