//! Compression as 002 measured it: 7-Zip's own benchmark, `7z b`, on one
//! thread (`-mmt1`) and on every core (`-mmtN`), read from its closing
//! lines: the total rating ("Tot:") and the compression and
//! decompression ratings ("Avr:"), in 7-Zip's MIPS.
//!
//! A rating is 7-Zip's own arithmetic over its LZMA coder's speed, so only
//! 7-Zip gives it: this runs the 7-Zip installed (`7zz` from Debian's
//! `7zip` package, or p7zip's `7z`, `7za`, `7zr`) and records its version
//! beside the figures, since versions rate differently.

use crate::external::{self, line_after, numbers};
use crate::{measure, settings, BenchError, BenchResult, Measure};
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// 7-Zip: Debian's 7zip package's `7zz`, or p7zip's programs.
pub const SEVEN_ZIP: external::Program = external::Program {
    names: &["7zz", "7z", "7za", "7zr"],
    package: "7zip",
    why: "its rating is 7-Zip's own; p7zip-full's 7z does too",
};

#[derive(Debug, Clone)]
pub struct CompressionOptions {
    /// Threads for the "all cores" rating (1: only the one-thread rating).
    pub threads: usize,
    /// 7-Zip's `-md`, the dictionary as a power of two (22 = 4 MiB);
    /// None: 7-Zip's own choice (22 to 25, as memory allows), as published.
    pub dictionary: Option<u32>,
    /// `7z b N`: passes; None: 7-Zip's own count.
    pub passes: Option<u32>,
    pub repetitions: u32,
}

/// One `7z b` run's ratings, MIPS.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SevenZipRating {
    pub total: f64,
    pub compress: f64,
    pub decompress: f64,
}

/// The ratings from `7z b`'s output: "Avr:" (compressing | decompressing:
/// speed, usage, R/U, rating each) and "Tot:" (usage, R/U, rating).
pub fn parse(output: &str) -> Option<SevenZipRating> {
    let (left, right) = line_after(output, "Avr:")?.split_once('|')?;
    let (left, right) = (numbers(left), numbers(right));
    let total = numbers(line_after(output, "Tot:")?);
    Some(SevenZipRating {
        compress: *left.get(3)?,
        decompress: *right.get(3)?,
        total: *total.get(2)?,
    })
}

/// "7-Zip (z) 26.02 (x64)" from the first line that names 7-Zip.
pub fn version(output: &str) -> Option<String> {
    output
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("7-Zip") || l.starts_with("p7zip"))
        .map(|l| l.split(" : ").next().unwrap_or(l).trim().to_string())
}

fn args(o: &CompressionOptions, threads: usize) -> Vec<String> {
    let mut a = vec!["b".to_string()];
    if let Some(p) = o.passes {
        a.push(p.to_string());
    }
    a.push(format!("-mmt{threads}"));
    if let Some(d) = o.dictionary {
        a.push(format!("-md{d}"));
    }
    a
}

/// One `7z b` at `threads`: its ratings and its version line.
fn rate(
    program: &Path,
    o: &CompressionOptions,
    threads: usize,
    stop: &AtomicBool,
) -> Result<(SevenZipRating, Option<String>), BenchError> {
    let a = args(o, threads);
    let text = external::output(program, &a, stop)?;
    // 7-Zip ends with status 0 after some errors ("System ERROR: ..."):
    // no closing ratings is the failure.
    let rating = parse(&text).ok_or_else(|| {
        BenchError::Refused(format!(
            "{} {} printed no ratings: {}",
            program.display(),
            a.join(" "),
            external::last_lines(&text)
        ))
    })?;
    Ok((rating, version(&text)))
}

fn three(suffix: &str, threads: &str) -> [Measure; 3] {
    [
        measure(
            &format!("rating_{suffix}"),
            format!("7-Zip total rating, {threads}"),
            "MIPS",
            true,
        ),
        measure(
            &format!("compress_{suffix}"),
            format!("7-Zip compression rating, {threads}"),
            "MIPS",
            true,
        ),
        measure(
            &format!("decompress_{suffix}"),
            format!("7-Zip decompression rating, {threads}"),
            "MIPS",
            true,
        ),
    ]
}

fn push(m: &mut [Measure], r: SevenZipRating) {
    for (m, v) in m.iter_mut().zip([r.total, r.compress, r.decompress]) {
        m.values.push(v);
    }
}

pub fn run(o: &CompressionOptions, stop: &AtomicBool) -> Result<BenchResult, BenchError> {
    let program = SEVEN_ZIP.find()?;
    let mut one = three("1t", "1 thread");
    let all_name = format!("{} threads", o.threads);
    let mut all = three("all", &all_name);
    let mut version = None;
    for _ in 0..o.repetitions.max(1) {
        let (r, v) = rate(&program, o, 1, stop)?;
        push(&mut one, r);
        version = version.or(v);
        if o.threads > 1 {
            push(&mut all, rate(&program, o, o.threads, stop)?.0);
        }
    }
    let mut measures = one.to_vec();
    if o.threads > 1 {
        measures.extend(all);
    }
    let version = version.unwrap_or_else(|| "7-Zip (version not printed)".into());
    let shown = |threads| {
        format!(
            "{} {}",
            program.file_name().unwrap_or_default().to_string_lossy(),
            args(o, threads).join(" ")
        )
    };
    let mut notes = Vec::new();
    if o.dictionary.is_some() || o.passes.is_some() {
        notes.push(
            "the dictionary or passes differ from `7z b`'s own (published ratings use them): \
             compare these ratings only with ratings measured the same way"
                .into(),
        );
    }
    Ok(BenchResult {
        benchmark: "compression".into(),
        method: format!(
            "7-Zip's own benchmark run by headroom: `{}`{}; the total, compression and \
             decompression ratings of its closing lines, MIPS ({version})",
            shown(1),
            if o.threads > 1 {
                format!(" and `{}`", shown(o.threads))
            } else {
                String::new()
            }
        ),
        settings: settings([
            ("program", program.display().to_string()),
            ("version", version.clone()),
            ("threads", o.threads.to_string()),
            (
                "dictionary",
                o.dictionary
                    .map_or("7-Zip's own".into(), |d| format!("2^{d} bytes")),
            ),
            (
                "passes",
                o.passes.map_or("7-Zip's own".into(), |p| p.to_string()),
            ),
            ("repetitions", o.repetitions.to_string()),
        ]),
        measures,
        series: Vec::new(),
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEVEN_ZIP: &str = "
7-Zip (z) 26.02 (x64) : Copyright (c) 1999-2026 Igor Pavlov : 2026-06-25
 64-bit locale=C.UTF-8 Threads:2 OPEN_MAX:20000

 mt2 d20
                       Compressing  |                  Decompressing
Dict     Speed Usage    R/U SevenZipRating  |      Speed Usage    R/U SevenZipRating
         KiB/s     %   MIPS   MIPS  |      KiB/s     %   MIPS   MIPS

20:      20690   155  12142  18856  |     116297   195   4936   9637
----------------------------------  | ------------------------------
Avr:     20457   148  12430  18402  |     116940   196   4878   9574
Tot:             172   8654  13988
";

    #[test]
    fn ratings_and_version_are_read_from_7_zips_closing_lines() {
        assert_eq!(
            parse(SEVEN_ZIP),
            Some(SevenZipRating {
                total: 13988.0,
                compress: 18402.0,
                decompress: 9574.0
            })
        );
        assert_eq!(version(SEVEN_ZIP).as_deref(), Some("7-Zip (z) 26.02 (x64)"));
        // p7zip 16.02's header.
        assert_eq!(
            version("\n7-Zip [64] 16.02 : Copyright (c) 1999-2016 Igor Pavlov : 2016-05-21\n")
                .as_deref(),
            Some("7-Zip [64] 16.02")
        );
        // An error after the header: no ratings.
        assert_eq!(
            parse("7-Zip (z) 26.02\n\nSystem ERROR:\nE_INVALIDARG : One or more arguments are invalid\n"),
            None
        );
        assert_eq!(parse("Avr: 1 2 3 4\nTot: 1 2 3\n"), None);
    }

    #[test]
    fn its_arguments_are_7_zips() {
        let o = CompressionOptions {
            threads: 4,
            dictionary: Some(22),
            passes: Some(1),
            repetitions: 1,
        };
        assert_eq!(args(&o, 1), ["b", "1", "-mmt1", "-md22"]);
        let plain = CompressionOptions {
            dictionary: None,
            passes: None,
            ..o
        };
        assert_eq!(args(&plain, 4), ["b", "-mmt4"]);
    }
}
