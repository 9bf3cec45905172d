//! Cryptography as 002 measured it: `openssl speed`'s RSA signs and
//! verifies a second (002: 4096-bit keys) on one thread and on every core
//! (`-multi N`), and AES-128-GCM's throughput on 16 KiB blocks (what TLS
//! costs a server per byte).
//!
//! The figures are OpenSSL's own: the speed of its code on this CPU, which
//! is what a web server's TLS runs. This runs the `openssl` installed and
//! records its version beside them.

use crate::external::{self, line_after, numbers};
use crate::{measure, settings, BenchError, BenchResult, Measure};
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// OpenSSL's command.
pub const OPENSSL: external::Program = external::Program {
    names: &["openssl"],
    package: "openssl",
    why: "these are its own figures",
};

/// The RSA key sizes `openssl speed` knows.
pub const RSA_BITS: [u32; 7] = [512, 1024, 2048, 3072, 4096, 7680, 15360];

#[derive(Debug, Clone)]
pub struct CryptoOptions {
    /// Processes for the "all cores" figures (1: one-thread figures only).
    pub threads: usize,
    /// RSA key size (002: 4096).
    pub rsa_bits: u32,
    /// `openssl speed -seconds` (openssl's own: 10 for RSA, 3 per block size).
    pub seconds: u32,
    pub repetitions: u32,
}

/// Signs and verifies a second from the "rsa BITS bits ..." line.
pub fn parse_rsa(output: &str, bits: u32) -> Option<(f64, f64)> {
    // "rsa 4096 bits 0.003012s 0.000046s 332.0 21957.5": the times end in
    // "s" and are left out.
    let n = numbers(line_after(output, &format!("rsa {bits} bits"))?);
    (n.len() >= 2).then(|| (n[n.len() - 2], n[n.len() - 1]))
}

/// MB/s (10^6 bytes) from the "AES-128-GCM ...k" line's last column
/// (openssl prints thousands of bytes a second).
pub fn parse_aes(output: &str) -> Option<f64> {
    let line = line_after(output, "AES-128-GCM").or_else(|| line_after(output, "aes-128-gcm"))?;
    numbers(line).last().map(|k| k / 1000.0)
}

fn rsa_args(o: &CryptoOptions, threads: usize) -> Vec<String> {
    let mut a = vec!["speed".into(), "-seconds".into(), o.seconds.to_string()];
    if threads > 1 {
        a.extend(["-multi".into(), threads.to_string()]);
    }
    a.push(format!("rsa{}", o.rsa_bits));
    a
}

fn aes_args(o: &CryptoOptions) -> Vec<String> {
    [
        "speed",
        "-seconds",
        &o.seconds.to_string(),
        "-bytes",
        "16384",
        "-evp",
        "aes-128-gcm",
    ]
    .map(String::from)
    .to_vec()
}

fn unread(program: &Path, args: &[String], text: &str) -> BenchError {
    BenchError::Refused(format!(
        "{} {} printed no figures: {}",
        program.display(),
        args.join(" "),
        external::last_lines(text)
    ))
}

fn rsa(
    program: &Path,
    o: &CryptoOptions,
    threads: usize,
    stop: &AtomicBool,
) -> Result<(f64, f64), BenchError> {
    let a = rsa_args(o, threads);
    let text = external::output(program, &a, stop)?;
    parse_rsa(&text, o.rsa_bits).ok_or_else(|| unread(program, &a, &text))
}

fn pair(bits: u32, suffix: &str, threads: &str) -> [Measure; 2] {
    [
        measure(
            &format!("rsa_sign_{suffix}"),
            format!("RSA-{bits} signs, {threads}"),
            "signs/s",
            true,
        ),
        measure(
            &format!("rsa_verify_{suffix}"),
            format!("RSA-{bits} verifies, {threads}"),
            "verifies/s",
            true,
        ),
    ]
}

pub fn run(o: &CryptoOptions, stop: &AtomicBool) -> Result<BenchResult, BenchError> {
    let program = OPENSSL.find()?;
    // "OpenSSL 3.0.19 27 Jan 2026 (Library: OpenSSL 3.0.19 27 Jan 2026)"
    let version = external::output(&program, &["version".into()], stop)?;
    let version = version
        .split(" (Library")
        .next()
        .unwrap_or_default()
        .trim()
        .to_string();
    let mut one = pair(o.rsa_bits, "1t", "1 thread");
    let mut all = pair(o.rsa_bits, "all", &format!("{} processes", o.threads));
    let mut aes = measure(
        "aes_128_gcm",
        "AES-128-GCM, 16 KiB blocks, 1 thread",
        "MB/s",
        true,
    );
    for _ in 0..o.repetitions.max(1) {
        let (sign, verify) = rsa(&program, o, 1, stop)?;
        one[0].values.push(sign);
        one[1].values.push(verify);
        if o.threads > 1 {
            let (sign, verify) = rsa(&program, o, o.threads, stop)?;
            all[0].values.push(sign);
            all[1].values.push(verify);
        }
        let a = aes_args(o);
        let text = external::output(&program, &a, stop)?;
        aes.values
            .push(parse_aes(&text).ok_or_else(|| unread(&program, &a, &text))?);
    }
    let mut measures = one.to_vec();
    if o.threads > 1 {
        measures.extend(all);
    }
    measures.push(aes);
    let mut notes = Vec::new();
    if o.rsa_bits != 4096 {
        notes.push(format!(
            "RSA-{} rather than 002's RSA-4096: compare only with figures of the same key size",
            o.rsa_bits
        ));
    }
    let shown = |a: Vec<String>| format!("openssl {}", a.join(" "));
    Ok(BenchResult {
        benchmark: "crypto".into(),
        method: format!(
            "OpenSSL's own speed test run by headroom: `{}`{} (signs and verifies a second), and \
             `{}` (MB/s, 10^6 bytes) ({version})",
            shown(rsa_args(o, 1)),
            if o.threads > 1 {
                format!(" and `{}`", shown(rsa_args(o, o.threads)))
            } else {
                String::new()
            },
            shown(aes_args(o))
        ),
        settings: settings([
            ("program", program.display().to_string()),
            ("version", version),
            ("rsa_bits", o.rsa_bits.to_string()),
            ("seconds", o.seconds.to_string()),
            ("threads", o.threads.to_string()),
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

    #[test]
    fn figures_are_read_from_openssls_tables() {
        let rsa = "\
version: 3.0.19
                  sign    verify    sign/s verify/s
rsa 4096 bits 0.003012s 0.000046s    332.0  21957.5
";
        assert_eq!(parse_rsa(rsa, 4096), Some((332.0, 21957.5)));
        assert_eq!(parse_rsa(rsa, 2048), None);
        let aes = "\
The 'numbers' are in 1000s of bytes per second processed.
type          16384 bytes
AES-128-GCM    5506546.55k
";
        let mb = parse_aes(aes).unwrap();
        assert!((mb - 5506.54655).abs() < 1e-6, "{mb}");
        // "speed: Unknown algorithm rsa9999" ends with status 0: no figure.
        assert_eq!(parse_rsa("speed: Unknown algorithm rsa9999\n", 9999), None);
        assert_eq!(parse_aes("speed: Unknown algorithm\n"), None);
    }

    #[test]
    fn its_arguments_are_openssls() {
        let o = CryptoOptions {
            threads: 4,
            rsa_bits: 4096,
            seconds: 2,
            repetitions: 1,
        };
        assert_eq!(rsa_args(&o, 1), ["speed", "-seconds", "2", "rsa4096"]);
        assert_eq!(
            rsa_args(&o, 4),
            ["speed", "-seconds", "2", "-multi", "4", "rsa4096"]
        );
        assert_eq!(
            aes_args(&o)[3..],
            ["-bytes", "16384", "-evp", "aes-128-gcm"]
        );
    }
}
