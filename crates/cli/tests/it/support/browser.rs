//! Headless Chromium (Debian's package, installed by scripts/services) for
//! the tests of HTML pages: load a page, screenshot it, dump its DOM.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn chromium() -> PathBuf {
    for path in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(path).exists() {
            return PathBuf::from(path);
        }
    }
    panic!("chromium is not installed: run scripts/services (scripts/test does)");
}

/// Runs headless Chromium on the file with `extra` arguments; returns
/// (stdout, stderr).
pub fn headless(file: &Path, profile: &Path, extra: &[&str]) -> (String, String) {
    let output = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", file.display()))
        .output()
        .expect("chromium runs");
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Loads the page, takes a screenshot and returns the rendered DOM; the
/// console must stay silent.
pub fn open_in_chromium(file: &Path, dir: &Path) -> String {
    let profile = dir.join("chromium-profile");
    let screenshot = dir.join("screenshot.png");
    let (_, stderr) = headless(
        file,
        &profile,
        &[
            "--window-size=1200,3000",
            &format!("--screenshot={}", screenshot.display()),
        ],
    );
    let png =
        std::fs::read(&screenshot).unwrap_or_else(|e| panic!("no screenshot ({e}): {stderr}"));
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "{} bytes",
        png.len()
    );
    let (dom, stderr) = headless(file, &profile, &["--dump-dom"]);
    let console: Vec<&str> = stderr.lines().filter(|l| l.contains("CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");
    dom
}

pub fn self_contained(html: &str) {
    for forbidden in ["<script", "<link", "src=\"http", "url(http", "@import"] {
        assert!(
            !html.contains(forbidden),
            "the page loads something: {forbidden}"
        );
    }
}

/// Visits `paths` one after another in one headless Chromium.
pub fn chromium_visits(base: &str, paths: &[&str]) {
    chromium_reads(base, paths, 0.0);
}

/// Visits `paths` in one headless Chromium, reading each for `read_s`.
pub fn chromium_reads(base: &str, paths: &[&str], read_s: f64) {
    chromium_reads_as(base, paths, read_s, None);
}

/// [`chromium_reads`], the browser sending `agent` as its User-Agent.
pub fn chromium_reads_as(base: &str, paths: &[&str], read_s: f64, agent: Option<&str>) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/support/page_visits.py");
    let mut command = Command::new("python3");
    command.arg(&script).args(["--read", &read_s.to_string()]);
    if let Some(agent) = agent {
        command.args(["--agent", agent]);
    }
    let out = command
        .arg(base)
        .args(paths)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "Chromium (Playwright for Python, installed by scripts/test): {}",
        super::text(&out)
    );
}
