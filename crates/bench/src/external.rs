//! The benchmarks whose published figures are another program's own
//! (7-Zip's rating, `openssl speed`) run that program: found on PATH, run
//! to its end (killed on a stop), its output read.

use crate::BenchError;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A program a benchmark runs: its names (the first found on PATH is
/// run), Debian's package that brings it, and why the benchmark needs it.
#[derive(Debug)]
pub struct Program {
    pub names: &'static [&'static str],
    pub package: &'static str,
    pub why: &'static str,
}

impl Program {
    /// The program's path, or why the benchmark cannot run without it.
    pub fn find(&self) -> Result<PathBuf, BenchError> {
        find(self.names).ok_or_else(|| {
            BenchError::Refused(format!(
                "{} is not installed ({}): apt-get install {}, then run it again",
                self.names[0], self.why, self.package
            ))
        })
    }
}

/// The first of `names` on PATH.
pub fn find(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| is_executable(p))
    })
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `program args...` run to its end: its standard output, or why not (its
/// exit and standard error). A stop kills it.
pub fn output(program: &Path, args: &[String], stop: &AtomicBool) -> Result<String, BenchError> {
    let shown = || {
        format!(
            "{} {}",
            program.file_name().unwrap_or_default().to_string_lossy(),
            args.join(" ")
        )
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| BenchError::Io {
            what: format!("cannot run {}", shown()),
            source: e,
        })?;
    // Read both pipes on threads so that a full pipe cannot stall it.
    let pipe = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut r) = r {
                let _ = r.read_to_string(&mut text);
            }
            text
        })
    };
    let out = pipe(
        child
            .stdout
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let err = pipe(
        child
            .stderr
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let status = loop {
        if stop.load(Ordering::Relaxed) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(BenchError::Interrupted);
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => {
                return Err(BenchError::Io {
                    what: format!("waiting for {}", shown()),
                    source: e,
                })
            }
        }
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    if !status.success() {
        return Err(BenchError::Refused(format!(
            "{} ended with {status}: {}",
            shown(),
            last_lines(&format!("{stdout}\n{stderr}"))
        )));
    }
    Ok(stdout)
}

/// What follows `prefix` on the first line of `output` that begins with it
/// (leading spaces ignored).
pub fn line_after<'a>(output: &'a str, prefix: &str) -> Option<&'a str> {
    output
        .lines()
        .find_map(|l| l.trim_start().strip_prefix(prefix))
}

/// The numbers among `text`'s words, a trailing "k" dropped (openssl's
/// "5506546.55k", thousands of bytes); "0.003s" and words are left out.
pub fn numbers(text: &str) -> Vec<f64> {
    text.split_whitespace()
        .filter_map(|w| w.trim_end_matches('k').parse().ok())
        .collect()
}

/// The last few non-empty lines of a program's output, for an error.
pub fn last_lines(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(3)..].join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_found_run_and_its_failure_said() {
        let sh = find(&["no-such-program-here", "sh"]).expect("sh is on PATH");
        assert!(sh.ends_with("sh"));
        assert!(find(&["no-such-program-here"]).is_none());
        let stop = AtomicBool::new(false);
        let args = |s: &str| vec!["-c".to_string(), s.to_string()];
        assert_eq!(output(&sh, &args("echo hi"), &stop).unwrap(), "hi\n");
        let e = output(&sh, &args("echo partial; echo broken >&2; exit 3"), &stop)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("exit status: 3") && e.contains("partial / broken"),
            "{e}"
        );
        stop.store(true, Ordering::Relaxed);
        assert!(matches!(
            output(&sh, &args("sleep 5"), &stop),
            Err(BenchError::Interrupted)
        ));
    }
}
