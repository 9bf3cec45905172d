use super::*;
use headroom_import::access_log::format::LogFormat;
use headroom_import::access_log::read::{read_logs, LogSpan};
use headroom_units::rng::Rng;

/// 2027-01-04 from its minute `minute` to its end.
fn from(minute: i64) -> LogSpan {
    let day = 20_822 * 1440;
    LogSpan {
        first_minute: day + minute,
        last_minute: day + 1439,
    }
}

/// The truth a generated log is written from.
struct Truth {
    sessions: usize,
    /// Log-normal think: median (s) and sigma of its logarithm.
    think_median_s: f64,
    think_sigma: f64,
    /// Page patterns with their shares.
    mix: [(&'static str, f64); 3],
    /// Resources each page fetches.
    resources: usize,
}

const TRUTH: Truth = Truth {
    sessions: 2000,
    think_median_s: 30.0,
    think_sigma: 0.6,
    mix: [
        ("/course/view.php?id=*", 0.5),
        ("/mod/forum/view.php?id=*", 0.3),
        ("/", 0.2),
    ],
    resources: 3,
};

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut Rng) -> f64 {
    let u1 = rng.next_f64().max(1e-12);
    let u2 = rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// nginx's `$time_local` of a time in ms (UTC).
fn time_local(ms: i64) -> String {
    let seconds = ms / 1000;
    let days = seconds / 86_400;
    // 2027-01-04 is day 20,822; the log spans hours of that day.
    assert_eq!(days, 20_822);
    let s = seconds % 86_400;
    format!(
        "04/Jan/2027:{:02}:{:02}:{:02} +0000",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// Writes a combined log of `TRUTH`'s sessions over ten hours: each
/// arrives at a uniform time from its own address, reads a number of
/// pages (1 + geometric, mean 5) with log-normal thinks between them, each
/// page followed by its resources.
fn generated_log(path: &std::path::Path) -> usize {
    let mut rng = Rng::new(7, 0);
    let day = 20_822i64 * 86_400_000;
    let mut lines: Vec<(i64, String)> = Vec::new();
    let mut thinks = 0;
    for session in 0..TRUTH.sessions {
        let mut at = day + (rng.next_f64() * 10.0 * 3_600_000.0) as i64;
        let address = format!(
            "10.{}.{}.{}",
            session / 65_536,
            session / 256 % 256,
            session % 256
        );
        let mut first = true;
        loop {
            if !first {
                let think = TRUTH.think_median_s * (TRUTH.think_sigma * normal(&mut rng)).exp();
                at += (think * 1000.0) as i64;
                thinks += 1;
            }
            first = false;
            let draw = rng.next_f64();
            let page = if draw < 0.5 {
                format!("/course/view.php?id={}", rng.between(1, 400))
            } else if draw < 0.8 {
                format!("/mod/forum/view.php?id={}", rng.between(1, 90))
            } else {
                "/".to_string()
            };
            lines.push((at, request_line(&address, at, &page)));
            for r in 0..TRUTH.resources {
                let resource = format!("/theme/r{r}.css");
                lines.push((
                    at + 20 + r as i64,
                    request_line(&address, at + 20 + r as i64, &resource),
                ));
            }
            if rng.next_f64() < 0.2 {
                break;
            }
        }
    }
    lines.sort_by_key(|(t, _)| *t);
    let text: String = lines.into_iter().map(|(_, l)| l).collect();
    std::fs::write(path, text).unwrap();
    thinks
}

fn request_line(address: &str, ms: i64, target: &str) -> String {
    format!(
        "{address} - - [{}] \"GET {target} HTTP/1.1\" 200 512 \"-\" \"Mozilla/5.0 (test)\"\n",
        time_local(ms)
    )
}

/// A log written from a known model is read back to it: every session,
/// the think time's quantiles and its fitted log-normal, the pages' mix,
/// the resources' share, all within 5% (shares within 1 point).
#[test]
fn a_generated_logs_model_is_read_back() {
    let dir = std::env::temp_dir().join(format!("traffic-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("access.log");
    let thinks = generated_log(&log);
    let format = LogFormat::parse("combined").unwrap();
    let mut builder = TrafficBuilder::new(SessionKey::ClientAndAgent, IDLE_GAP_MS, from(0));
    let reading = read_logs(&[log], &format, |e| builder.add(e)).unwrap();
    assert_eq!(reading.bad, 0);
    let model = builder.finish();
    assert_eq!(model.sessions, TRUTH.sessions as u64);
    assert_eq!(model.think_ms.len() + model.quick, thinks as u64);
    assert!(model.quick < 5, "{} thinks under a second", model.quick);
    assert_eq!(
        model
            .arrivals_per_minute
            .iter()
            .map(|&n| u64::from(n))
            .sum::<u64>(),
        model.sessions
    );
    assert_eq!(model.pages_per_session.len(), model.sessions);
    let mean_pages = model.pages_per_session.mean();
    assert!(
        (mean_pages - 5.0).abs() < 0.25,
        "{mean_pages} pages a session"
    );
    // Think quantiles against the log-normal's: median × e^(σ z).
    for (quantile, z) in [
        (0.25, -0.674_49),
        (0.5, 0.0),
        (0.75, 0.674_49),
        (0.9, 1.281_55),
    ] {
        let truth = TRUTH.think_median_s * (TRUTH.think_sigma * z).exp();
        let read = model.think_s(quantile).unwrap();
        assert!(
            (read / truth - 1.0).abs() < 0.05,
            "think p{}: {read:.2} s against {truth:.2} s",
            quantile * 100.0
        );
    }
    assert!((model.think_log_mean.exp() / TRUTH.think_median_s - 1.0).abs() < 0.05);
    assert!((model.think_log_sd / TRUTH.think_sigma - 1.0).abs() < 0.05);
    // The pages' mix, ids folded.
    let pages = model.pages as f64;
    for (pattern, share) in TRUTH.mix {
        let count = model
            .mix
            .iter()
            .find(|p| p.pattern == pattern)
            .map_or(0, |p| p.count);
        assert!(
            (count as f64 / pages - share).abs() < 0.01,
            "{pattern}: {count} of {pages}"
        );
    }
    assert_eq!(model.mix.len(), 3, "{:?}", model.mix);
    assert_eq!(model.requests, model.pages * (1 + TRUTH.resources as u64));
    assert!((model.static_share() - 0.75).abs() < 1e-9);
    assert_eq!(model.statuses.get(&200), Some(&model.requests));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A session cookie tells users apart behind one address (a school's
/// NAT): two users sharing an address and browser are two sessions by
/// their cookie; without the cookie, one. A session idle for longer than
/// the gap is a new one.
#[test]
fn sessions_are_cookies_where_the_log_has_them_and_end_when_idle() {
    let format = LogFormat::parse(
        "$remote_addr [$time_local] \"$request\" $status \"$http_user_agent\" $cookie_sid",
    )
    .unwrap();
    let lines = [
        "10.0.0.1 [04/Jan/2027:08:00:00 +0000] \"GET /a HTTP/1.1\" 200 \"ua\" s1",
        "10.0.0.1 [04/Jan/2027:08:00:05 +0000] \"GET /a HTTP/1.1\" 200 \"ua\" s2",
        "10.0.0.1 [04/Jan/2027:08:00:20 +0000] \"GET /b HTTP/1.1\" 200 \"ua\" s1",
        "10.0.0.1 [04/Jan/2027:08:00:45 +0000] \"GET /b HTTP/1.1\" 200 \"ua\" s2",
        // A redirect's answer is no page seen; the page it points to is,
        // and one asked within the second is no reading.
        "10.0.0.1 [04/Jan/2027:08:01:45 +0000] \"POST /b HTTP/1.1\" 303 \"ua\" s2",
        "10.0.0.1 [04/Jan/2027:08:01:45 +0000] \"GET /a HTTP/1.1\" 200 \"ua\" s2",
        "10.0.0.1 [04/Jan/2027:08:01:45 +0000] \"GET /frame HTTP/1.1\" 200 \"ua\" s2",
        // s1 again after 31 minutes, the address after 30 min 15 s: new
        // sessions.
        "10.0.0.1 [04/Jan/2027:08:32:00 +0000] \"GET /c HTTP/1.1\" 200 \"ua\" s1",
    ];
    let by = |key: SessionKey| {
        let mut builder = TrafficBuilder::new(key, IDLE_GAP_MS, from(8 * 60));
        for line in lines {
            builder.add(&format.read(line.as_bytes()).unwrap());
        }
        builder.finish()
    };
    let cookie = by(SessionKey::Cookie("sid".into()));
    assert_eq!(cookie.sessions, 3);
    // s1 read 20 s, s2 40 s and 60 s (from /b to the redirect's /a).
    assert_eq!(cookie.think_ms.len(), 3);
    assert_eq!(cookie.quick, 1);
    // (to the histogram's three significant digits)
    let near = |read: Option<f64>, truth: f64| (read.unwrap() / truth - 1.0).abs() < 1e-3;
    assert!(near(cookie.think_s(0.0), 20.0) && near(cookie.think_s(1.0), 60.0));
    let address = by(SessionKey::ClientAndAgent);
    assert_eq!(address.sessions, 2);
    assert_eq!(address.think_ms.len(), 4);
    assert_eq!(address.arrivals_per_minute[0], 1);
    assert_eq!(address.arrivals_per_minute[32], 1);
    assert_eq!(address.peak_minute(), Some((0, 4)));
    assert_eq!(address.pages_per_session.max(), 6);
}

/// What the application serves for a page (no file extension) is the
/// page's when it names the page as referer within 2 s: for two users
/// behind one address and browser too (their pages interleaved); not a
/// link followed later, nor a request naming a page of another session.
#[test]
fn what_names_a_recent_page_as_referer_is_its_resource() {
    let format = LogFormat::parse("combined").unwrap();
    let line = |second: u32, client: &str, target: &str, referer: &str| {
        format!(
            "{client} - - [04/Jan/2027:08:00:{second:02} +0000] \"GET {target} HTTP/1.1\" 200 10 \"{referer}\" \"ua\""
        )
    };
    let site = "http://wiki.example";
    let lines = [
        line(0, "10.0.0.1", "/doku.php?id=a", "-"),
        line(0, "10.0.0.1", "/doku.php?id=b", "-"),
        line(
            1,
            "10.0.0.1",
            "/lib/exe/css.php?t=x",
            &format!("{site}/doku.php?id=a"),
        ),
        line(
            2,
            "10.0.0.1",
            "/lib/exe/taskrunner.php?id=b&17",
            &format!("{site}/doku.php?id=b"),
        ),
        // A link followed after reading: a page.
        line(
            9,
            "10.0.0.1",
            "/doku.php?id=c",
            &format!("{site}/doku.php?id=a"),
        ),
        // Another client's page named: a page of this session.
        line(
            9,
            "10.0.0.2",
            "/doku.php?id=d",
            &format!("{site}/doku.php?id=c"),
        ),
        // Files are resources by their extension, whatever they name.
        line(9, "10.0.0.1", "/pix/a.png", "-"),
    ];
    let mut builder = TrafficBuilder::new(SessionKey::ClientAndAgent, IDLE_GAP_MS, from(8 * 60));
    for l in &lines {
        builder.add(&format.read(l.as_bytes()).unwrap());
    }
    let model = builder.finish();
    assert_eq!((model.requests, model.pages), (7, 4));
    assert_eq!(
        model.loaded_by_pages,
        vec![
            ("/lib/exe/css.php?t=*".to_string(), 1),
            ("/lib/exe/taskrunner.php?id=*&*".to_string(), 1)
        ]
    );
    let patterns: Vec<&str> = model.mix.iter().map(|p| p.pattern.as_str()).collect();
    assert_eq!(patterns, ["/doku.php?id=*"]);
}

/// A page that sets the session cookie: its resources come with the new
/// cookie, a session with no page yet, and name the page of the session
/// without it.
#[test]
fn the_resources_of_the_page_that_set_the_cookie_are_its() {
    let format = LogFormat::parse(
        "$remote_addr [$time_local] \"$request\" $status \"$http_referer\" \"$http_user_agent\" $cookie_sid",
    )
    .unwrap();
    let lines = [
        "10.0.0.1 [04/Jan/2027:08:00:00 +0000] \"GET / HTTP/1.1\" 200 \"-\" \"ua\" -",
        "10.0.0.1 [04/Jan/2027:08:00:00 +0000] \"GET /theme/styles.php/boost/1/all HTTP/1.1\" 200 \"http://lms/\" \"ua\" s1",
        "10.0.0.1 [04/Jan/2027:08:00:09 +0000] \"GET /course/view.php?id=2 HTTP/1.1\" 200 \"http://lms/\" \"ua\" s1",
    ];
    let mut builder =
        TrafficBuilder::new(SessionKey::Cookie("sid".into()), IDLE_GAP_MS, from(8 * 60));
    for line in lines {
        builder.add(&format.read(line.as_bytes()).unwrap());
    }
    let model = builder.finish();
    assert_eq!(model.pages, 2);
    assert_eq!(
        model.loaded_by_pages,
        vec![("/theme/styles.php/boost/*/all".to_string(), 1)]
    );
}

/// A combined line of 2027-01-04 at `second` past 08:00 (a day's seconds).
fn at(second: u32, client: &str, method: &str, target: &str, status: u16, referer: &str) -> String {
    format!(
        "{client} - - [04/Jan/2027:{:02}:{:02}:{:02} +0000] \"{method} {target} HTTP/1.1\" {status} 10 \"{referer}\" \"ua\"\n",
        8 + second / 3600,
        second / 60 % 60,
        second % 60
    )
}

/// The model of `files`, each written from its lines, read as `scenario
/// from-log` reads them.
fn model_of(name: &str, files: &[&str], format: &str) -> (TrafficModel, LogReading) {
    let dir = std::env::temp_dir().join(format!("traffic-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let paths: Vec<PathBuf> = files
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let path = dir.join(format!("access.log.{i}"));
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect();
    let read = read_model(&paths, format, None, IDLE_GAP_MS).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    read
}

/// 20 users reading a page every 10 s for ten minutes from `start` s
/// past 08:00.
fn ten_minutes(start: u32) -> String {
    let mut lines: Vec<(u32, String)> = Vec::new();
    for user in 0..20 {
        for page in 0..60 {
            let second = start + page * 10 + user % 10;
            let target = format!("/course/view.php?id={}", page % 7);
            lines.push((
                second,
                at(second, &format!("10.0.0.{user}"), "GET", &target, 200, "-"),
            ));
        }
    }
    lines.sort();
    lines.into_iter().map(|(_, l)| l).collect()
}

/// `cat access.log*` puts the newer file first: each request still counts
/// in its own minute, and the model is the one of the two files read in
/// time order: the same minutes, peak and users, sessions ended at the
/// jump back (said, with its place).
#[test]
fn a_log_joined_newest_first_counts_each_request_in_its_own_minute() {
    let (older, newer) = (ten_minutes(0), ten_minutes(600));
    let joined = newer.clone() + &older;
    let (apart, _) = model_of("apart", &[&older, &newer], "combined");
    let (cat, reading) = model_of("joined", &[&joined], "combined");
    assert_eq!(cat.requests_per_minute, apart.requests_per_minute);
    assert_eq!(cat.requests_per_minute.len(), 20);
    assert_eq!(cat.first_ms, apart.first_ms);
    assert_eq!(cat.peak_minute(), apart.peak_minute());
    assert_eq!(cat.reads_per_minute, apart.reads_per_minute);
    assert_eq!(cat.peak().unwrap().users, apart.peak().unwrap().users);
    assert_eq!((apart.sessions, cat.sessions), (20, 40));
    assert_eq!(reading.jumps_back, 1);
    let warnings = reading.warnings().join("\n");
    assert!(
        warnings.contains("goes back in time by more than 5 minutes once (the first at ")
            && warnings.contains("access.log.0:1201:"),
        "{warnings}"
    );
    assert!(
        warnings.contains("each counts in its own minute"),
        "{warnings}"
    );
}

/// One line with a wrong year (or a clock reset to 1970) is set aside,
/// said with its place: the model spans the log's ten minutes, not years.
#[test]
fn a_line_years_away_is_set_aside() {
    let log = ten_minutes(0);
    let mut lines: Vec<&str> = log.lines().collect();
    let wrong = lines[5].replace("/2027:", "/2031:");
    let reset = lines[0].replace("04/Jan/2027", "01/Jan/1970");
    lines[5] = &wrong;
    lines.insert(0, &reset);
    let text = lines.join("\n") + "\n";
    let (model, reading) = model_of("wrong-year", &[&text], "combined");
    assert_eq!(model.requests_per_minute.len(), 10);
    assert_eq!(model.requests, 1199);
    assert_eq!(reading.set_aside, 2);
    let warnings = reading.warnings().join("\n");
    assert!(
        warnings.contains("2 requests set aside: more than 31 days from the rest of the log")
            && warnings.contains("access.log.0:1, timed 1970-01-01 08:00 UTC"),
        "{warnings}"
    );
    let described = model.describe().join("\n");
    assert!(described.contains("(0.2 h)"), "{described}");
}

/// nginx logs a request when it completes: a large script a page loads
/// is logged before the page, and is the page's resource still. A login
/// form's POST answered 302 and the browser's GET of its Location are one
/// page view, counted once in the mix (under the form); the Location's
/// page is no resource of the form's page.
#[test]
fn a_resource_logged_before_its_page_and_a_redirects_target_are_told_apart() {
    let site = "http://wp.example";
    let profile = format!("{site}/wp-admin/profile.php");
    let login = format!("{site}/wp-login.php");
    let mut log = String::new();
    log += &at(0, "10.0.0.1", "GET", "/wp-login.php", 200, "-");
    log += &at(1, "10.0.0.1", "POST", "/wp-login.php", 302, &login);
    log += &at(
        1,
        "10.0.0.1",
        "GET",
        "/wp-admin/load-scripts.php?c=1&load=a",
        200,
        &profile,
    );
    log += &at(2, "10.0.0.1", "GET", "/wp-admin/profile.php", 200, &login);
    log += &at(
        2,
        "10.0.0.1",
        "GET",
        "/wp-admin/load-styles.php?c=1",
        200,
        &profile,
    );
    log += &at(20, "10.0.0.1", "GET", "/", 200, &profile);
    // An image the application serves, revalidated (304: no redirect).
    let front = format!("{site}/");
    log += &at(20, "10.0.0.1", "GET", "/fetch.php?media=a.png", 304, &front);
    let (model, _) = model_of("completion-order", &[&log], "combined");
    assert_eq!(
        model.loaded_by_pages,
        vec![
            ("/fetch.php?media=*".to_string(), 1),
            ("/wp-admin/load-scripts.php?c=*&load=*".to_string(), 1),
            ("/wp-admin/load-styles.php?c=*".to_string(), 1)
        ]
    );
    let mix: Vec<(&str, u64)> = model
        .mix
        .iter()
        .map(|p| (p.pattern.as_str(), p.count))
        .collect();
    assert_eq!(mix, [("/wp-login.php", 2), ("/", 1)]);
    // Seen: the form, the profile (the login's page view), the front page.
    assert_eq!(model.views_per_minute.iter().sum::<u32>(), 3);
    assert_eq!(model.pages_per_session.max(), 3);
}

/// A log of resources only has sessions without pages: "pages a session"
/// does not count them as one page, and says so. Arrivals a minute are
/// over the log's whole span; the peak minute is a clock minute.
#[test]
fn figures_over_the_whole_log_and_its_clock_minutes() {
    let mut log = String::new();
    for user in 0..40 {
        log += &at(
            16 + user,
            &format!("10.0.1.{user}"),
            "GET",
            "/theme/a.css",
            200,
            "-",
        );
    }
    log += &at(599, "10.0.1.0", "GET", "/theme/b.css", 200, "-");
    let (model, _) = model_of("resources-only", &[&log], "combined");
    let described = model.describe().join("\n");
    assert!(model.pages_per_session.is_empty());
    assert_eq!(model.sessions_without_pages, 40);
    assert!(
        described.contains(
            "pages a session: no session asked for a page (40 with none, only resources or redirects, left out)"
        ),
        "{described}"
    );
    assert!(
        described.contains("arrivals: 4.0 sessions a minute on average (over the log's 10 minutes), 40 at the peak"),
        "{described}"
    );
    // 08:00:16 to 08:00:55 is the clock minute 08:00.
    assert!(
        described.contains("peak minute: 40 requests in the clock minute 2027-01-04 08:00 UTC"),
        "{described}"
    );
    // From 08:00:30 to 08:02:09: the clock minutes hold 30, 60 and 10.
    let mut log = String::new();
    for second in 0..100 {
        log += &at(30 + second, "10.0.1.1", "GET", "/a.css", 200, "-");
    }
    let (model, _) = model_of("clock-minute", &[&log], "combined");
    assert_eq!(model.peak_minute(), Some((1, 60)));
    assert_eq!(model.requests_per_minute, [30, 60, 10]);
}

/// A format without $status: said, and its pages taken as answered 2xx.
#[test]
fn a_log_without_statuses_says_so() {
    let text: String = (0..3)
        .map(|i| {
            format!(
                "10.0.0.1 [04/Jan/2027:08:00:{:02} +0000] \"GET /p{i} HTTP/1.1\"\n",
                i * 20
            )
        })
        .collect();
    let (model, _) = model_of(
        "no-status",
        &[&text],
        "$remote_addr [$time_local] \"$request\"",
    );
    let described = model.describe().join("\n");
    assert!(
        described.contains("no status logged (the format has no $status"),
        "{described}"
    );
    assert_eq!(model.mix.iter().map(|p| p.replayable).sum::<u64>(), 3);
}

/// A million distinct paths are not a million patterns: past a bound,
/// the rarer ones are folded together, their requests counted.
#[test]
fn distinct_patterns_are_bounded() {
    use super::super::pages::MAX_PATTERNS;
    let mut builder = TrafficBuilder::new(SessionKey::ClientAndAgent, IDLE_GAP_MS, from(8 * 60));
    let format = LogFormat::parse("combined").unwrap();
    let n = 5 * MAX_PATTERNS;
    for i in 0..n {
        let line = at(
            (i / 100) as u32,
            "10.0.0.1",
            "GET",
            &format!("/product/w{i}x-widget"),
            200,
            "-",
        );
        builder.add(&format.read(line.trim_end().as_bytes()).unwrap());
    }
    let model = builder.finish();
    assert!(
        model.mix.len() <= 2 * MAX_PATTERNS + 1,
        "{}",
        model.mix.len()
    );
    let other = model.mix.last().unwrap();
    assert!(
        other.folded > 0 && other.pattern.starts_with("(other: "),
        "{}",
        other.pattern
    );
    assert_eq!(model.mix.iter().map(|p| p.count).sum::<u64>(), n as u64);
}

/// A class behind one address and browser: its pages come within a second
/// of each other, and the model says it cannot tell the users apart; one
/// user reading every 10 s is told apart.
#[test]
fn a_class_behind_one_address_is_said_to_be_mixed() {
    let mut class = String::new();
    for n in 0..1800 {
        let target = format!("/course/view.php?id={}", n % 7);
        class.push_str(&at(n / 3, "10.0.0.1", "GET", &target, 200, "-"));
    }
    let (mixed, _) = model_of("mixed-class", &[&class], "combined");
    assert!(!mixed.sessions_apart());
    let said = mixed.describe().join("\n");
    assert!(
        said.contains("sessions mixed: 67% of the pages came within a second")
            && said.contains("--session-cookie NAME"),
        "{said}"
    );
    let (apart, _) = model_of("apart-class", &[&ten_minutes(0)], "combined");
    assert!(apart.sessions_apart());
    assert!(!apart.describe().join("\n").contains("sessions mixed"));
}
