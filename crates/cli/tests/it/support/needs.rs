//! What a test needs from outside its own binary, and what happens when
//! that is missing (cargo's `requires_*` pattern): a test starts with
//! `requires!(program("nginx", "nginx"), root())` and
//!
//! - under `scripts/test --fast` (`HEADROOM_TEST_TIER=fast`) it is skipped,
//!   whatever is installed: the fast tier starts no outside program and
//!   runs nothing that takes minutes (`minutes()`);
//! - when something is missing and the run is the whole suite (`CI` or
//!   `HEADROOM_TEST_TIER=all` set, as `scripts/test` does) it fails, naming
//!   what to install: CI never passes a test it did not run;
//! - when something is missing otherwise (a developer's `cargo test`) it is
//!   skipped, said on standard error (past the test harness's capture) and
//!   listed in `$TMPDIR/headroom-skipped.txt`, never a silent pass.

use std::io::Write;
use std::path::Path;

/// One thing a test needs.
pub enum Need {
    /// A program on PATH (or in /usr/sbin, /sbin), with what to install.
    Program {
        name: &'static str,
        install: &'static str,
    },
    /// A variable `scripts/services` sets (a database's URL), and what it is.
    Service {
        variable: &'static str,
        what: &'static str,
    },
    /// A Python module, with what to install.
    Python {
        module: &'static str,
        install: &'static str,
    },
    /// Root (network namespaces, cgroups, loop devices, mounts).
    Root,
    /// Nothing from outside, but a minute or more of the machine (a
    /// capacity search, a run of its own length): the whole suite runs it,
    /// the fast tier does not.
    Minutes,
}

/// A program from a Debian package: `program("fio", "fio")`.
pub const fn program(name: &'static str, package: &'static str) -> Need {
    Need::Program {
        name,
        install: package,
    }
}

/// A database or service started by `scripts/services`.
pub const fn service(variable: &'static str, what: &'static str) -> Need {
    Need::Service { variable, what }
}

/// A Python module from PyPI.
pub const fn python(module: &'static str, install: &'static str) -> Need {
    Need::Python { module, install }
}

/// Root.
pub const fn root() -> Need {
    Need::Root
}

/// A test that takes a minute or more (left to the whole suite).
pub const fn minutes() -> Need {
    Need::Minutes
}

/// Headless Chromium driven by Playwright (Debian's chromium, PyPI's
/// playwright).
pub fn browser() -> [Need; 2] {
    [
        program("chromium", "chromium"),
        python("playwright", "pip install playwright"),
    ]
}

impl Need {
    fn describe(&self) -> String {
        match self {
            Need::Program { name, install } => format!("{name} (install {install})"),
            Need::Service { variable, what } => {
                format!("{what} (${variable}: run scripts/services and export what it prints)")
            }
            Need::Python { module, install } => format!("Python's {module} ({install})"),
            Need::Root => "root".to_string(),
            Need::Minutes => "a minute or more".to_string(),
        }
    }

    fn present(&self) -> bool {
        match self {
            Need::Program { name, .. } => on_path(name),
            Need::Service { variable, .. } => {
                std::env::var_os(variable).is_some_and(|v| !v.is_empty())
            }
            Need::Python { module, .. } => std::process::Command::new("python3")
                .args(["-c", &format!("import {module}")])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success()),
            Need::Root => is_root(),
            Need::Minutes => true,
        }
    }
}

fn on_path(name: &str) -> bool {
    if name.contains('/') {
        return Path::new(name).exists();
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(Into::into))
        .any(|dir| dir.join(name).is_file())
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|uid| uid == "0"))
        })
        .unwrap_or(false)
}

/// Which tier of the suite runs: `fast`, `all` (the whole suite, where a
/// missing need fails) or a developer's run (empty).
fn tier() -> String {
    std::env::var("HEADROOM_TEST_TIER").unwrap_or_default()
}

fn whole_suite() -> bool {
    tier() == "all" || std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// The running test's name (libtest names each test's thread after it).
fn test_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string()
}

fn say_skipped(why: &str) {
    let line = format!("{}: skipped, {why}\n", test_name());
    let _ = std::io::stderr().write_all(line.as_bytes());
    let list = std::env::temp_dir().join("headroom-skipped.txt");
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(list)
    {
        let _ = file.write_all(line.as_bytes());
    }
}

/// True when the test must stop here: it is skipped (the fast tier, or a
/// need missing outside the whole suite). Panics when a need is missing in
/// the whole suite.
pub fn skip(needs: &[Need]) -> bool {
    if tier() == "fast" {
        let what: Vec<String> = needs.iter().map(Need::describe).collect();
        say_skipped(&format!(
            "the fast tier starts no outside program and runs nothing long (it needs {})",
            what.join(", ")
        ));
        return true;
    }
    let missing: Vec<String> = needs
        .iter()
        .filter(|n| !n.present())
        .map(Need::describe)
        .collect();
    if missing.is_empty() {
        return false;
    }
    let why = format!("it needs {}", missing.join(", "));
    if whole_suite() {
        panic!("{}: {why}; scripts/test installs them", test_name());
    }
    say_skipped(&why);
    true
}

/// Starts a test with what it needs from outside: `requires!(program("fio",
/// "fio"), root());` returns from the test when it is skipped.
macro_rules! requires {
    ($($need:expr),+ $(,)?) => {
        if $crate::support::needs::skip(&{
            let mut all: Vec<$crate::support::needs::Need> = Vec::new();
            $( $crate::support::needs::Extend::extend_into($need, &mut all); )+
            all
        }) {
            return;
        }
    };
}
pub(crate) use requires;

/// One need or several (`browser()`), gathered by [`requires!`].
pub trait Extend {
    fn extend_into(self, all: &mut Vec<Need>);
}

impl Extend for Need {
    fn extend_into(self, all: &mut Vec<Need>) {
        all.push(self);
    }
}

impl<const N: usize> Extend for [Need; N] {
    fn extend_into(self, all: &mut Vec<Need>) {
        all.extend(self);
    }
}
