//! Who the search's users are, in words for the answer: what one user
//! runs, how long it reads between requests, and whether it loads pages
//! as a browser does. The figure "N users" means nothing without it: a
//! loop that never reads asks a server for hundreds of times what a
//! student does.

use crate::think::PlannedThink;
use headroom_journey::scenario::mix::Mix;
use headroom_journey::scenario::{Node, Scenario};
use headroom_units::quantity::{count, round_figure};
use std::path::Path;
use std::time::Duration;

/// One user of a URL search: `METHOD path` again and again.
pub fn of_url(method: &str, url: &str, think: &PlannedThink) -> String {
    let path = url
        .split_once("://")
        .and_then(|(_, rest)| rest.find('/').map(|at| &rest[at..]))
        .unwrap_or("/");
    format!(
        "sends {method} {path} again and again, {}; one request, not a page with its style sheets, scripts and images",
        reading(think.mean, "requests")
    )
}

/// One user of a scenario search: its journey, its think and its pages.
pub fn of_scenario(scenario: &Scenario, file: &Path, think: &PlannedThink) -> String {
    let name = scenario.name.clone().unwrap_or_else(|| {
        file.file_stem()
            .map_or("journey".into(), |s| s.to_string_lossy().into_owned())
    });
    let requests = scenario.requests.len();
    let once = once_requests(&scenario.flow, false);
    let pages = scenario
        .requests
        .iter()
        .filter(|r| r.page.is_some())
        .count();
    let first = if once > 0 {
        format!(
            "; {} only on its first round, as a login",
            count(once, "request", "requests")
        )
    } else {
        String::new()
    };
    let browser = match pages {
        0 => "its pages requested alone, without their style sheets, scripts and images (no page_loads)".to_string(),
        p if p == requests => "each page loaded as a browser loads it (style sheets, scripts, images and fonts, 6 connections a host over HTTP/1.1 or streams on one over HTTP/2, its own cache)".to_string(),
        p => format!(
            "{} of them loaded as a browser loads a page (with its style sheets, scripts, images, its own cache)",
            p
        ),
    };
    if scenario.peak.is_some() {
        // Written from an access log: a round is one page of the log.
        return format!(
            "asks for one page of the log a round ('{name}': {} in the log's proportions{first}), {}; {browser}",
            count(requests - once, "kind of page", "kinds of page"),
            reading(think.mean, "pages")
        );
    }
    format!(
        "runs the journey '{name}' ({}{first}) in a loop, {}; {browser}",
        count(requests, "request", "requests"),
        reading(think.mean, "requests")
    )
}

/// One user of a mix: one of its journeys, by their shares.
pub fn of_mix(mix: &Mix, think: &PlannedThink) -> String {
    let total: f64 = mix.journeys.iter().map(|j| j.weight).sum();
    let shares: Vec<String> = mix
        .journeys
        .iter()
        .map(|j| {
            format!(
                "'{}' {}% ({})",
                j.name,
                round_figure(100.0 * j.weight / total),
                count(j.scenario.requests.len(), "request", "requests")
            )
        })
        .collect();
    let pages = mix
        .journeys
        .iter()
        .flat_map(|j| &j.scenario.requests)
        .filter(|r| r.page.is_some())
        .count();
    let browser = if pages == 0 {
        "pages requested alone, without their style sheets, scripts and images (no page_loads)"
    } else {
        "pages loaded as a browser loads them where the journeys say page_loads (style sheets, scripts, images and fonts, its own cache)"
    };
    format!(
        "runs one journey of the mix '{}' in a loop, the users split by weight: {}; {}; {browser}",
        mix.name.clone().unwrap_or_else(|| mix
            .source
            .file_stem()
            .map_or("mix".into(), |s| s.to_string_lossy().into_owned())),
        shares.join(", "),
        reading(think.mean, "requests")
    )
}

/// What a level's throughput counts, by the journey's steps and how many
/// of them load pages: "req/s" (requests), "pages/s" (page loads, each a
/// page with its resources) or "steps/s" (some of each).
pub fn rate_unit(steps: usize, pages: usize) -> &'static str {
    match pages {
        0 => "req/s",
        p if p == steps => "pages/s",
        _ => "steps/s",
    }
}

fn reading(mean: Duration, between: &str) -> String {
    if mean.is_zero() {
        format!("with no time to read between {between}")
    } else if mean < Duration::from_secs(1) {
        // Under a second in ms: 50 ms is not "0.1 s".
        format!(
            "reading {} ms between {between} on average",
            round_figure(mean.as_secs_f64() * 1000.0)
        )
    } else {
        format!(
            "reading {} s between {between} on average",
            round_figure(mean.as_secs_f64())
        )
    }
}

/// Requests a user makes only in its first round (`once:`), counted once
/// however often a loop around them repeats.
fn once_requests(nodes: &[Node], once: bool) -> usize {
    nodes
        .iter()
        .map(|node| {
            let once = once || node.flags().once;
            match node {
                Node::Request { .. } => usize::from(once),
                Node::Loop { children, .. }
                | Node::Group { children, .. }
                | Node::Block { children, .. } => once_requests(children, once),
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_http::target::Target;
    use headroom_journey::profile::Think;
    use headroom_journey::scenario::parse_str;

    fn planned(seconds: u64) -> PlannedThink {
        PlannedThink::of_flag(Some(Think::Constant {
            time: Duration::from_secs(seconds),
        }))
    }

    #[test]
    fn a_think_under_a_second_is_said_in_milliseconds() {
        assert_eq!(
            reading(Duration::from_millis(50), "requests"),
            "reading 50 ms between requests on average"
        );
        assert_eq!(
            reading(Duration::from_millis(1500), "pages"),
            "reading 1.5 s between pages on average"
        );
    }

    #[test]
    fn a_url_user_is_one_request_and_its_think() {
        assert_eq!(
            of_url("GET", "http://127.0.0.1:8080/course/view.php?id=3", &planned(0)),
            "sends GET /course/view.php?id=3 again and again, with no time to read between requests; one request, not a page with its style sheets, scripts and images"
        );
        assert!(of_url("POST", "http://h", &planned(30))
            .starts_with("sends POST / again and again, reading 30 s between requests on average"));
    }

    #[test]
    fn a_journey_user_says_its_login_and_its_pages() {
        let yaml = "name: Student\ndefaults:\n  page_loads: true\nsteps:\n  - label: login\n    path: /login\n    once: true\n  - label: course\n    path: /course\n  - label: forum\n    path: /forum\n    think: 20s\n";
        let target = Target::parse("http://127.0.0.1:1/").unwrap();
        let scenario = parse_str(yaml, Path::new("s.yaml"), Some(&target)).unwrap();
        let think = PlannedThink::of_scenario(
            &scenario,
            Some(Think::Constant {
                time: Duration::from_secs(10),
            }),
        );
        assert_eq!(
            of_scenario(&scenario, Path::new("s.yaml"), &think),
            "runs the journey 'Student' (3 requests; 1 request only on its first round, as a login) in a loop, reading 15 s between requests on average; each page loaded as a browser loads it (style sheets, scripts, images and fonts, 6 connections a host over HTTP/1.1 or streams on one over HTTP/2, its own cache)"
        );
        let plain = parse_str(
            "steps:\n  - label: home\n    path: /\n",
            Path::new("plain.yaml"),
            Some(&target),
        )
        .unwrap();
        let text = of_scenario(
            &plain,
            Path::new("dir/plain.yaml"),
            &PlannedThink::of_flag(None),
        );
        assert!(
            text.starts_with(
                "runs the journey 'plain' (1 request) in a loop, with no time to read"
            ),
            "{text}"
        );
        assert!(text.ends_with("(no page_loads)"), "{text}");
    }
}
