//! `headroom report` and `compare -o`: self-contained HTML that headless
//! Chromium (Debian's package, installed by scripts/services) opens with
//! every chart and without console errors.

use crate::support;

use crate::support::browser::{headless, open_in_chromium, self_contained};
use crate::support::{light, program, requires, run, temp_dir, Reply, TestServer};
use headroom_report::charts::{line_chart, spectrum_chart, ChartSeries, LineChart};
use std::time::Duration;

#[test]
fn the_report_opens_in_chromium_with_every_chart() {
    requires!(program("chromium", "chromium"));
    let _guard = light();
    let server = TestServer::start(|r| Reply {
        // The slow page far slower than a busy machine's hiccups: a
        // suite once measured the 5 ms page's p95 at 78.6 ms.
        delay: Duration::from_millis(if r.path.starts_with("/slow") { 200 } else { 5 }),
        status: if r.path.starts_with("/missing") {
            404
        } else {
            200
        },
        ..Reply::default()
    });
    let dir = temp_dir("report");
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = dir.join("two.yaml");
    std::fs::write(
        &scenario,
        format!(
            "defaults:\n  base_url: {}\nsteps:\n  - label: fast page\n    path: /fast\n  - label: slow page\n    path: /slow\n",
            server.url("").trim_end_matches('/')
        ),
    )
    .unwrap();
    let bundle = dir.join("bundle");
    let output = run(&[
        "run",
        scenario.to_str().unwrap(),
        "-c",
        "3",
        "-d",
        "4s",
        "--monitor",
        "local",
        "--quiet",
        "--out",
        bundle.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    let file = dir.join("report.html");
    let output = run(&[
        "report",
        bundle.to_str().unwrap(),
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        file.to_str().unwrap()
    );
    let html = std::fs::read_to_string(&file).unwrap();
    self_contained(&html);
    for title in [
        "Response time percentiles",
        "Throughput and errors",
        "Active users",
        "Apdex",
        "Latency percentile spectrum",
        "Resource usage",
        "Response time per label",
        "p95 per label over time",
    ] {
        assert!(
            html.contains(&format!(">\n{title}\n</text>")),
            "no chart '{title}'"
        );
    }
    // The statistics table has JMeter's columns and both labels.
    for column in [
        "Samples",
        "Errors %",
        "Median",
        "90th pct",
        "99th pct",
        "Recv KB/s",
        "Sent KB/s",
        "Apdex",
    ] {
        assert!(
            html.contains(&format!("<th>{column}</th>")),
            "no column {column}"
        );
    }
    assert!(html.contains("<td>fast page</td>") && html.contains("<td>slow page</td>"));
    assert!(
        html.contains("worst label: <b>slow page</b>"),
        "the verdict names the slowest label"
    );
    assert!(
        html.contains("<h2>Environment</h2>") && html.contains("<td title=\"kernel\">Kernel</td>")
    );

    // The profile line reads as a person would say it.
    assert!(
        html.contains("profile: closed model: 3 users for 4 s"),
        "{}",
        &html[html.find("profile:").unwrap_or(0)..][..120]
    );
    // No chart ends in a false drop: the last second keeps its users.
    let intervals = std::fs::read_to_string(bundle.join("intervals.csv")).unwrap();
    let header: Vec<&str> = intervals.lines().next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let last = intervals
        .lines()
        .rfind(|l| l.split(',').nth(at("label")) == Some("TOTAL"))
        .unwrap();
    let field = |name: &str| last.split(',').nth(at(name)).unwrap().to_string();
    assert_eq!(field("active_vus"), "3", "{last}");
    assert_ne!(field("count"), "0", "{last}");
    // The Apdex column is in view at a laptop's 1366 px, without scrolling.
    let probe = dir.join("probe.html");
    std::fs::write(
        &probe,
        html.replace(
            "</body>",
            "<script>window.addEventListener('load',()=>{const th=[...document.querySelectorAll('table.stats th')].find(t=>t.textContent==='Apdex');const p=document.createElement('p');p.id='probe';p.textContent='RIGHT='+Math.ceil(th.getBoundingClientRect().right)+' WIDTH='+window.innerWidth;document.body.appendChild(p);});</script></body>",
        ),
    )
    .unwrap();
    let (dom, _) = headless(
        &probe,
        &dir.join("chromium-probe"),
        &["--window-size=1366,900", "--dump-dom"],
    );
    let probe_text = dom
        .split("id=\"probe\">")
        .nth(1)
        .and_then(|rest| rest.split('<').next())
        .unwrap_or_else(|| panic!("no probe in {}", &dom[dom.len().saturating_sub(300)..]))
        .to_string();
    let numbers: Vec<f64> = probe_text
        .split(' ')
        .filter_map(|p| p.split('=').nth(1)?.parse().ok())
        .collect();
    assert!(
        numbers[0] <= numbers[1],
        "Apdex column ends off-screen: {probe_text}"
    );

    let dom = open_in_chromium(&file, &dir);
    assert!(
        dom.matches("<svg").count() >= 9,
        "{} charts rendered",
        dom.matches("<svg").count()
    );
    assert!(dom.contains("Latency percentile spectrum"));

    // A run with errors: a table of them by kind and status, with the reason.
    let failing = dir.join("failing");
    let output = run(&[
        "load",
        &server.url("/missing"),
        "-c",
        "2",
        "-d",
        "2s",
        "--quiet",
        "--out",
        failing.to_str().unwrap(),
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let output = run(&["report", failing.to_str().unwrap()]);
    assert!(output.status.success());
    let html = std::fs::read_to_string(failing.join("report.html")).unwrap();
    assert!(html.contains("<h3>Errors</h3>"), "no error table");
    assert!(
        html.contains("<td>http_4xx</td><td>404</td>"),
        "{}",
        &html[html.find("<h3>Errors</h3>").unwrap()..][..400]
    );

    // Without -o the report goes into the bundle.
    let output = run(&["report", bundle.to_str().unwrap()]);
    assert!(output.status.success());
    assert!(bundle.join("report.html").exists());

    // compare -o: the same run twice, as a page that Chromium opens too.
    let page = dir.join("compare.html");
    let output = run(&[
        "compare",
        bundle.to_str().unwrap(),
        bundle.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    self_contained(&html);
    assert!(html.contains("No significant regression beyond 5.0%."));
    assert!(html.contains("<h3>95th percentile (ms)</h3>") && html.contains("<th>slow page</th>"));
    let dom = open_in_chromium(&page, &dir);
    assert_eq!(
        dom.matches("<svg").count(),
        3,
        "Apdex, response time and throughput bars"
    );
}

#[test]
fn unreadable_bundles_are_clear_errors() {
    let dir = temp_dir("report-bad");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("manifest.json"), r#"{"schema_version": 7}"#).unwrap();
    let output = run(&["report", dir.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(3));
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(
        text.contains("schema version 7; this headroom reads version 1"),
        "{text}"
    );
    std::fs::write(dir.join("manifest.json"), r#"{"schema_version": 1, "summ"#).unwrap();
    let output = run(&["report", dir.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&output.stderr).contains("truncated"));
    let output = run(&["report"]);
    assert_eq!(output.status.code(), Some(2));
}

/// Texts of the page's charts that overlap, or that stand past the
/// chart's edge (cut), as Chromium lays them out at `width` px (from a
/// copy of the page with a measuring script).
fn overlapping_chart_texts(page: &std::path::Path, dir: &std::path::Path, width: u32) -> String {
    const MEASURE: &str = "<script>(function(){var found=[];\
        document.querySelectorAll('svg').forEach(function(svg){\
          var boxes=[],edge=svg.getBoundingClientRect();svg.querySelectorAll('text').forEach(function(t){\
            var r=t.getBoundingClientRect();\
            if(t.textContent.trim()){boxes.push([t.textContent.trim(),r]);\
              if(r.left<edge.left-1||r.right>edge.right+1||r.top<edge.top-1||r.bottom>edge.bottom+1){\
                found.push(t.textContent.trim()+' cut at the edge')}}});\
          for(var i=0;i<boxes.length;i++){for(var j=i+1;j<boxes.length;j++){\
            var a=boxes[i][1],b=boxes[j][1];\
            if(a.left<b.right-1&&b.left<a.right-1&&a.top<b.bottom-1&&b.top<a.bottom-1){\
              found.push(boxes[0][0]+': '+boxes[i][0]+' / '+boxes[j][0])}}}});\
        document.body.setAttribute('data-overlaps',found.join('; '));})()</script>";
    let html = std::fs::read_to_string(page).unwrap();
    let copy = dir.join(format!("overlaps-{width}.html"));
    std::fs::write(&copy, html.replace("</body>", &format!("{MEASURE}</body>"))).unwrap();
    let (dom, stderr) = headless(
        &copy,
        &dir.join("chromium-profile"),
        &[&format!("--window-size={width},2000"), "--dump-dom"],
    );
    let start = dom
        .find("data-overlaps=\"")
        .unwrap_or_else(|| panic!("not measured: {stderr}"))
        + 15;
    dom[start..][..dom[start..].find('"').unwrap()].to_string()
}

/// No chart's axis title overlaps its tick labels, nor any text another,
/// and none is cut at the chart's edge, on the run report and the compare
/// page.
#[test]
fn chart_texts_never_overlap() {
    requires!(program("chromium", "chromium"));
    let _light = support::light();
    let dir = temp_dir("report-chart-texts");
    let (_, report, compare) = school_pages(&dir);
    // Charts of wide figures: ticks of 5 to 7 characters ("1,400" ms,
    // "120,000" requests) beside their axis titles.
    let rising = |top: f64| ChartSeries {
        name: "p95".into(),
        points: (0..60)
            .map(|s| (s as f64 + 0.5, top * s as f64 / 59.0))
            .collect(),
    };
    let chart = |y_label, top| {
        line_chart(&LineChart {
            title: "Wide figures",
            x_label: "seconds",
            y_label,
            x_max: 60.0,
            y_max: None,
            series: vec![rising(top)],
            spans: vec![],
            bands: vec![],
        })
    };
    let charts = dir.join("charts.html");
    std::fs::write(
        &charts,
        format!(
            "<!DOCTYPE html><html><body style=\"width:1300px\">{}{}{}{}</body></html>",
            chart("ms", 1234.5),
            chart("virtual users", 100.0),
            chart("requests", 110_000.0),
            spectrum_chart(
                "Spectrum",
                &[(0.5, 900.0), (0.9, 1200.0), (0.99, 1400.0), (0.999, 1500.0)]
            ),
        ),
    )
    .unwrap();
    for page in [&report, &compare, &charts] {
        assert_eq!(
            overlapping_chart_texts(page, &dir, 1366),
            "",
            "{}",
            page.display()
        );
    }
}

/// A copy of the report crate's fixture bundle (a run against the testbed
/// with five labels, failing checks and long reasons) in `dir`.
fn school_bundle(dir: &std::path::Path) -> std::path::PathBuf {
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/data/school");
    let bundle = dir.join("school");
    std::fs::create_dir_all(bundle.join("failures")).unwrap();
    for file in ["manifest.json", "intervals.csv", "failures/index.jsonl"] {
        std::fs::copy(fixture.join(file), bundle.join(file)).unwrap();
    }
    bundle
}

/// The school bundle in `dir`, its run report and its compare page (the
/// bundle against itself).
fn school_pages(
    dir: &std::path::Path,
) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let bundle = school_bundle(dir);
    let report = dir.join("report.html");
    let output = run(&[
        "report",
        bundle.to_str().unwrap(),
        "-o",
        report.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", support::text(&output));
    let compare = dir.join("compare.html");
    let output = run(&[
        "compare",
        bundle.to_str().unwrap(),
        bundle.to_str().unwrap(),
        "-o",
        compare.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", support::text(&output));
    (bundle, report, compare)
}

/// Measures a page's layout in Chromium at `width` px: a copy of the page
/// with a script that lists each table wider than its box (and whether
/// that box scrolls) and anything that makes the page itself scroll
/// sideways. The report itself stays script-free; only the copy measures.
fn layout_at(page: &std::path::Path, dir: &std::path::Path, width: u32) -> (String, String) {
    const MEASURE: &str = "<script>(function(){\
        var vw=document.documentElement.clientWidth,cut=[],wide=[];\
        if(document.documentElement.scrollWidth>vw){cut.push('page '+document.documentElement.scrollWidth+'>'+vw)}\
        document.querySelectorAll('table').forEach(function(t,i){\
          var b=t.parentElement,o=getComputedStyle(b).overflowX;\
          var name=(b.previousElementSibling&&b.previousElementSibling.textContent||'').slice(0,40);\
          if(t.scrollWidth>b.clientWidth+1){\
            if(o==='auto'||o==='scroll'){wide.push(name+' '+t.scrollWidth+'>'+b.clientWidth)}\
            else{cut.push(name+' cut '+t.scrollWidth+'>'+b.clientWidth)}}\
          if(b.getBoundingClientRect().right>vw+1){cut.push(name+' box past the edge')}});\
        document.querySelectorAll('figure svg').forEach(function(s){\
          var drawn=s.viewBox.baseVal.width,shown=s.getBoundingClientRect().width;\
          var title=(s.textContent||'').trim().slice(0,30);\
          if(drawn>0&&shown>drawn*1.25){cut.push('chart '+title+' blown up '+(shown/drawn).toFixed(2)+'x')}});\
        document.body.setAttribute('data-cut',cut.join('; '));\
        document.body.setAttribute('data-wide',wide.join('; '));})()</script>";
    let html = std::fs::read_to_string(page).unwrap();
    let copy = dir.join(format!("measure-{width}.html"));
    std::fs::write(&copy, html.replace("</body>", &format!("{MEASURE}</body>"))).unwrap();
    let (dom, stderr) = headless(
        &copy,
        &dir.join("chromium-profile"),
        &[&format!("--window-size={width},2000"), "--dump-dom"],
    );
    let attribute = |name: &str| -> String {
        let start = dom
            .find(&format!("{name}=\""))
            .unwrap_or_else(|| panic!("no {name} in the measured page: {stderr}"))
            + name.len()
            + 2;
        dom[start..][..dom[start..].find('"').unwrap()].to_string()
    };
    (attribute("data-cut"), attribute("data-wide"))
}

/// Tables never run past the page's edge: at 1366 px every table of the
/// run report (five labels, long check names and reasons) and of the
/// compare page fits its box; at 390 px a wider table scrolls inside its
/// own box and the page itself never scrolls sideways. No chart is shown
/// much larger than it was drawn (a chart alone in its row took the
/// page's width, its text twice the size of the others').
#[test]
fn tables_fit_or_scroll_in_their_box_at_1366_and_390_px() {
    requires!(program("chromium", "chromium"));
    let _light = support::light();
    let dir = temp_dir("report-layout");
    let (bundle, report, compare) = school_pages(&dir);
    // The same run with its per-second rows of the whole run only: the
    // per-label bar chart stands alone in its row.
    let lone = dir.join("lone");
    std::fs::create_dir_all(&lone).unwrap();
    std::fs::copy(bundle.join("manifest.json"), lone.join("manifest.json")).unwrap();
    let intervals = std::fs::read_to_string(bundle.join("intervals.csv")).unwrap();
    let totals: Vec<&str> = intervals
        .lines()
        .enumerate()
        .filter(|(n, line)| *n == 0 || line.split(',').nth(3) == Some("TOTAL"))
        .map(|(_, line)| line)
        .collect();
    std::fs::write(lone.join("intervals.csv"), totals.join("\n") + "\n").unwrap();
    let lone_report = dir.join("lone.html");
    let output = run(&[
        "report",
        lone.to_str().unwrap(),
        "-o",
        lone_report.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", support::text(&output));
    for page in [&report, &compare, &lone_report] {
        let (cut, wide) = layout_at(page, &dir, 1366);
        assert_eq!(
            (cut.as_str(), wide.as_str()),
            ("", ""),
            "{} at 1366 px",
            page.display()
        );
        let (cut, _) = layout_at(page, &dir, 390);
        assert_eq!(cut, "", "{} at 390 px", page.display());
    }
}
