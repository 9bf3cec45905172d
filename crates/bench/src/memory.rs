//! Memory: STREAM's four kernels with STREAM's rules — three arrays of
//! doubles, each at least four times the last-level cache (and at least
//! STREAM's default 10 million elements), every kernel timed
//! `iterations` times, the best time of all but the first giving the rate;
//! bytes counted as STREAM counts them (Copy and Scale move 2 words per
//! element, Add and Triad 3). One thread and all cores (the arrays split
//! in equal parts, the threads meeting at a barrier around each kernel).

use crate::{check, measure, settings, BenchError, BenchResult};
use std::sync::atomic::AtomicBool;
use std::sync::Barrier;
use std::time::Instant;

#[derive(Debug, Clone)]
pub struct MemoryOptions {
    /// Elements per array; `None` for STREAM's rule.
    pub elements: Option<usize>,
    /// Times each kernel runs (STREAM's NTIMES, 10); the first is not counted.
    pub iterations: usize,
    pub threads: usize,
    pub repetitions: u32,
}

pub const KERNELS: [(&str, &str, f64); 4] = [
    ("copy", "Copy", 2.0),
    ("scale", "Scale", 2.0),
    ("add", "Add", 3.0),
    ("triad", "Triad", 3.0),
];

/// The last-level caches of every CPU, in bytes, from /sys: their sum,
/// each shared cache counted once (STREAM sizes its arrays against all the
/// last-level caches a run uses: a two-CCX processor has two).
pub fn last_level_cache() -> Option<u64> {
    let mut caches = Vec::new();
    for cpu in std::fs::read_dir(CPU_DIR).ok()?.flatten() {
        let name = cpu.file_name().to_string_lossy().into_owned();
        if !name
            .strip_prefix("cpu")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        {
            continue;
        }
        let Ok(indexes) = std::fs::read_dir(cpu.path().join("cache")) else {
            continue;
        };
        for index in indexes.flatten() {
            let read = |file: &str| std::fs::read_to_string(index.path().join(file)).ok();
            if read("type").is_some_and(|t| t.trim() == "Instruction") {
                continue;
            }
            let level = read("level").and_then(|l| l.trim().parse::<u32>().ok());
            let size = read("size").and_then(|s| parse_cache_size(s.trim()));
            if let (Some(level), Some(size)) = (level, size) {
                let shared = read("shared_cpu_list").unwrap_or_else(|| name.clone());
                caches.push((level, shared.trim().to_string(), size));
            }
        }
    }
    sum_of_last_level(&caches)
}

/// The sum of the highest-level caches among `(level, shared CPU list,
/// bytes)`, a cache shared by several CPUs counted once.
pub fn sum_of_last_level(caches: &[(u32, String, u64)]) -> Option<u64> {
    let top = caches.iter().map(|c| c.0).max()?;
    let distinct: std::collections::BTreeMap<&str, u64> = caches
        .iter()
        .filter(|c| c.0 == top)
        .map(|c| (c.1.as_str(), c.2))
        .collect();
    Some(distinct.values().sum())
}

/// "32K", "1024K", "16M" → bytes.
pub fn parse_cache_size(text: &str) -> Option<u64> {
    let (digits, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit())?);
    let n: u64 = digits.parse().ok()?;
    match unit {
        "K" => Some(n << 10),
        "M" => Some(n << 20),
        "G" => Some(n << 30),
        _ => None,
    }
}

/// STREAM's rule: each array at least 4× the cache, and at least 10 M elements.
pub fn stream_elements(cache: Option<u64>) -> usize {
    let by_cache = cache.map_or(0, |c| (4 * c / 8) as usize);
    by_cache.max(10_000_000)
}

/// Why figures measured over arrays of `elements` doubles are outside
/// STREAM's conditions (each array at least 4× the last-level cache, or,
/// when the cache is unknown, STREAM's default 10 M elements), so that
/// they measure the cache rather than the memory; `None` when they are
/// inside. `cache` is in bytes, as read from sysfs.
pub fn outside_stream_rule(elements: usize, cache: Option<u64>) -> Option<String> {
    let mib = |bytes: f64| bytes / 1048576.0;
    let array = elements as f64 * 8.0;
    match cache {
        Some(cache) if array < 4.0 * cache as f64 => Some(format!(
            "each array is {:.1} MiB, less than 4× the last-level caches' {:.0} MiB read from \
             {CACHE_DIR}: it measured the cache, not the memory. Give --elements {} or more, or \
             leave --elements out for STREAM's rule",
            mib(array),
            mib(cache as f64),
            stream_elements(Some(cache)),
        )),
        None if elements < 10_000_000 => Some(format!(
            "each array is {:.1} MiB and the last-level cache could not be read from {CACHE_DIR}: \
             it may have measured the cache, not the memory. Give --elements 10000000 or more \
             (STREAM's default)",
            mib(array),
        )),
        _ => None,
    }
}

/// Where the cache sizes are read (each CPU's `cache/index*`).
const CPU_DIR: &str = "/sys/devices/system/cpu";
const CACHE_DIR: &str = "/sys/devices/system/cpu/cpu*/cache";

/// [`outside_stream_rule`] for a memory result's settings (`elements`, and
/// `last_level_cache` as "N KiB" or "unknown"); `None` when the settings
/// do not say the array size (a bundle of another version).
pub fn outside_stream_rule_of(
    settings: &std::collections::BTreeMap<String, String>,
) -> Option<String> {
    let elements: usize = settings.get("elements")?.parse().ok()?;
    let cache = settings
        .get("last_level_cache")
        .and_then(|c| c.strip_suffix(" KiB"))
        .and_then(|kib| kib.parse::<u64>().ok())
        .map(|kib| kib << 10);
    outside_stream_rule(elements, cache)
}

const SCALAR: f64 = 3.0;

/// MemAvailable from /proc/meminfo, bytes.
fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// An array of `n` copies of `value`, or a refusal when memory cannot be had.
fn array(n: usize, value: f64) -> Result<Vec<f64>, BenchError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        BenchError::Refused(format!(
            "cannot allocate a STREAM array of {n} doubles: give a smaller --elements"
        ))
    })?;
    v.resize(n, value);
    Ok(v)
}

/// Best seconds per kernel (first iteration left out) over `threads`.
fn stream(
    a: &mut [f64],
    b: &mut [f64],
    c: &mut [f64],
    threads: usize,
    iterations: usize,
) -> [f64; 4] {
    let n = a.len();
    let part = n.div_ceil(threads).max(1);
    // Fewer parts than threads when the arrays are tiny: one party a part.
    let barrier = Barrier::new(n.div_ceil(part).max(1));
    let mut best = [f64::INFINITY; 4];
    let chunks = a
        .chunks_mut(part)
        .zip(b.chunks_mut(part))
        .zip(c.chunks_mut(part));
    std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .enumerate()
            .map(|(t, ((a, b), c))| {
                let barrier = &barrier;
                scope.spawn(move || {
                    let mut times = [f64::INFINITY; 4];
                    for iteration in 0..iterations {
                        for (k, time) in times.iter_mut().enumerate() {
                            barrier.wait();
                            let started = Instant::now();
                            match k {
                                0 => c.copy_from_slice(a),
                                1 => b
                                    .iter_mut()
                                    .zip(c.iter())
                                    .for_each(|(b, c)| *b = SCALAR * c),
                                2 => c
                                    .iter_mut()
                                    .zip(a.iter().zip(b.iter()))
                                    .for_each(|(c, (a, b))| *c = a + b),
                                _ => a
                                    .iter_mut()
                                    .zip(b.iter().zip(c.iter()))
                                    .for_each(|(a, (b, c))| *a = b + SCALAR * c),
                            }
                            barrier.wait();
                            let seconds = started.elapsed().as_secs_f64();
                            if iteration > 0 && t == 0 {
                                *time = time.min(seconds);
                            }
                        }
                    }
                    times
                })
            })
            .collect();
        for (t, handle) in handles.into_iter().enumerate() {
            if let (0, Ok(times)) = (t, handle.join()) {
                best = times;
            }
        }
    });
    best
}

/// STREAM's check: after `iterations` rounds every element of a, b and c
/// holds the value the kernels give from a = 1, b = 2, c = 0.
fn verify(a: &[f64], b: &[f64], c: &[f64], iterations: usize) -> bool {
    let (mut ea, mut eb, mut ec) = (1.0f64, 2.0f64, 0.0f64);
    for _ in 0..iterations {
        ec = ea;
        eb = SCALAR * ec;
        ec = ea + eb;
        ea = eb + SCALAR * ec;
    }
    let close = |x: &[f64], e: f64| x.iter().all(|v| ((v - e) / e).abs() < 1e-13);
    close(a, ea) && close(b, eb) && close(c, ec)
}

pub fn run(o: &MemoryOptions, stop: &AtomicBool) -> Result<BenchResult, BenchError> {
    let cache = last_level_cache();
    let n = o
        .elements
        .unwrap_or_else(|| stream_elements(cache))
        .max(1000);
    let iterations = o.iterations.max(2);
    let threads = o.threads.max(1);
    let needed = 3 * 8 * n as u64;
    if let Some(available) = available_memory() {
        if needed > available / 10 * 9 {
            return Err(BenchError::Refused(format!(
                "STREAM's three arrays of {n} doubles need {} MB; this machine has {} MB available: \
                 give a smaller --elements (at least 4× the last-level cache for STREAM's rule)",
                needed / 1_000_000,
                available / 1_000_000
            )));
        }
    }
    let mut measures = Vec::new();
    for (t, label) in [
        (1, "1 thread".to_string()),
        (
            threads,
            headroom_units::quantity::count(threads, "thread", "threads"),
        ),
    ] {
        for (key, name, _) in KERNELS {
            let suffix = if t == 1 { "1t" } else { "all" };
            measures.push(measure(
                &format!("{key}_{suffix}"),
                format!("STREAM {name}, {label}"),
                "MB/s",
                true,
            ));
        }
    }
    for _ in 0..o.repetitions {
        for (round, t) in [1, threads].into_iter().enumerate() {
            check(stop)?;
            let (mut a, mut b, mut c) = (array(n, 1.0)?, array(n, 2.0)?, array(n, 0.0)?);
            let best = stream(&mut a, &mut b, &mut c, t, iterations);
            if !verify(&a, &b, &c, iterations) {
                return Err(BenchError::Refused(
                    "STREAM's check failed: the arrays do not hold the values the kernels give; \
                     the memory or the CPU is faulty"
                        .into(),
                ));
            }
            for (k, (_, _, words)) in KERNELS.iter().enumerate() {
                let bytes = words * 8.0 * n as f64;
                measures[round * 4 + k].values.push(bytes / 1e6 / best[k]);
            }
        }
    }
    let mib = n as f64 * 8.0 / 1048576.0;
    let notes = outside_stream_rule(n, cache)
        .map(|why| format!("not compared with published STREAM figures: {why}"))
        .into_iter()
        .collect();
    Ok(BenchResult {
        benchmark: "memory".into(),
        method: format!(
            "STREAM: Copy c=a, Scale b=3c, Add c=a+b, Triad a=b+3c over three arrays of {n} doubles \
             ({mib:.0} MiB each); best of {} timings after the first, MB/s (10^6 bytes) counting \
             2 words per element for Copy and Scale, 3 for Add and Triad",
            iterations - 1
        ),
        settings: settings([
            ("elements", n.to_string()),
            ("array_mib", format!("{mib:.1}")),
            (
                "last_level_cache",
                cache.map_or("unknown".into(), |c| format!("{} KiB", c >> 10)),
            ),
            ("iterations", iterations.to_string()),
            ("threads", threads.to_string()),
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
    fn cache_sizes_and_stream_rule() {
        assert_eq!(parse_cache_size("32K"), Some(32 << 10));
        assert_eq!(parse_cache_size("16M"), Some(16 << 20));
        assert_eq!(parse_cache_size("abc"), None);
        // 64 MiB cache: 4 × 64 MiB / 8 bytes = 32 M elements.
        assert_eq!(stream_elements(Some(64 << 20)), 32 << 20);
        assert_eq!(stream_elements(Some(1 << 20)), 10_000_000);
        assert_eq!(stream_elements(None), 10_000_000);
    }

    /// Two CCXs of 32 MiB, each shared by 8 CPUs (and their L1/L2 caches
    /// per core): 64 MiB, not CPU 0's 32 MiB.
    #[test]
    fn the_last_level_caches_are_summed_each_once() {
        let mut caches = Vec::new();
        for cpu in 0..16u32 {
            caches.push((1, cpu.to_string(), 32 << 10));
            caches.push((2, cpu.to_string(), 512 << 10));
            let ccx = if cpu < 8 { "0-7" } else { "8-15" };
            caches.push((3, ccx.to_string(), 32 << 20));
        }
        assert_eq!(sum_of_last_level(&caches), Some(64 << 20));
        assert_eq!(sum_of_last_level(&[]), None);
        // This machine: at least CPU 0's largest cache.
        if let Some(sum) = last_level_cache() {
            assert!(sum >= 1 << 20, "{sum}");
        }
    }

    #[test]
    fn arrays_below_four_times_the_cache_are_outside_the_rule() {
        // The user's case: 2 M elements (15.3 MiB) against a 32 MiB cache.
        let why = outside_stream_rule(2_000_000, Some(32 << 20)).unwrap();
        assert!(
            why.contains("15.3 MiB, less than 4× the last-level caches' 32 MiB")
                && why.contains("--elements 16777216 or more"),
            "{why}"
        );
        assert_eq!(outside_stream_rule(16_777_216, Some(32 << 20)), None);
        assert_eq!(outside_stream_rule(10_000_000, None), None);
        assert!(outside_stream_rule(1_000_000, None)
            .unwrap()
            .contains("could not be read"));
        let settings = |elements: &str, cache: &str| {
            std::collections::BTreeMap::from([
                ("elements".to_string(), elements.to_string()),
                ("last_level_cache".to_string(), cache.to_string()),
            ])
        };
        assert!(outside_stream_rule_of(&settings("2000000", "32768 KiB")).is_some());
        assert!(outside_stream_rule_of(&settings("16777216", "32768 KiB")).is_none());
        assert!(outside_stream_rule_of(&settings("2000000", "unknown")).is_some());
    }

    #[test]
    fn the_kernels_compute_what_stream_checks_on_any_thread_count() {
        for threads in [1, 3] {
            let n = 1001;
            let (mut a, mut b, mut c) = (vec![1.0; n], vec![2.0; n], vec![0.0; n]);
            let best = stream(&mut a, &mut b, &mut c, threads, 4);
            assert!(verify(&a, &b, &c, 4));
            assert!(best.iter().all(|t| t.is_finite() && *t >= 0.0));
            a[7] += 1.0;
            assert!(!verify(&a, &b, &c, 4));
        }
    }
}
