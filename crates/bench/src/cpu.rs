//! CPU: sysbench's prime method (`sysbench cpu`), so figures sit beside
//! published sysbench results, and gzip of a web page at level 6 (what a
//! web server spends its CPU on for every compressed answer).

use crate::{check, measure, settings, BenchError, BenchResult};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct CpuOptions {
    /// sysbench's `--cpu-max-prime` (its default is 10,000).
    pub max_prime: u64,
    /// How long each figure is measured (sysbench's `--time`).
    pub seconds: f64,
    /// The "all cores" thread count.
    pub threads: usize,
    pub repetitions: u32,
}

/// One sysbench event: counts the primes below `max_prime` by trial
/// division, in 64-bit integers with the bound compared as a double, as
/// sysbench's `cpu_execute_event` does, and in the instructions its
/// compiler gives it on x86-64 (Debian's sysbench 1.0.20, read with
/// objdump): 2 is tried as the low bit, every other divisor by a 64-bit
/// `div`. Rust's compiler divides in 32 bits when both fit, which a CI
/// run's Intel cores did 4.5% faster than sysbench (1.045 and 1.046 on one
/// thread, where this AMD machine read 1.00).
#[inline(never)]
pub fn prime_event(max_prime: u64) -> u64 {
    let max_prime = std::hint::black_box(max_prime);
    let mut primes = 0u64;
    let mut c = 3u64;
    while c < max_prime {
        let t = (c as f64).sqrt();
        let mut l = 2u64;
        if 2.0 <= t && c & 1 == 1 {
            l = 3;
            while (l as f64) <= t {
                if remainder(c, l) == 0 {
                    break;
                }
                l += 1;
            }
        }
        if (l as f64) > t {
            primes += 1;
        }
        c += 1;
    }
    std::hint::black_box(primes)
}

/// `c % l` by one 64-bit `div`, the instruction sysbench's loop runs.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn remainder(c: u64, l: u64) -> u64 {
    assert!(l != 0, "a divisor of zero");
    let rem: u64;
    // SAFETY: `div` reads only registers; it faults on a zero divisor
    // (refused above) or a quotient wider than 64 bits, which rdx = 0
    // rules out.
    unsafe {
        std::arch::asm!(
            "div {l}",
            l = in(reg) l,
            inout("rax") c => _,
            inout("rdx") 0u64 => rem,
            options(pure, nomem, nostack),
        );
    }
    rem
}

/// `c % l`: elsewhere the compilers divide in 64 bits alike.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn remainder(c: u64, l: u64) -> u64 {
    c % l
}

/// Runs `event` on `threads` threads for `seconds`, as sysbench does: each
/// thread runs whole events until the time is up; the time runs until the
/// last thread has finished its last event. Returns (events, seconds).
pub fn timed_events(
    threads: usize,
    seconds: f64,
    stop: &AtomicBool,
    event: &(dyn Fn() + Sync),
) -> Result<(u64, f64), BenchError> {
    let done = AtomicBool::new(false);
    let started = Instant::now();
    let events: u64 = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut n = 0u64;
                    while !done.load(Ordering::Relaxed) {
                        event();
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        crate::sleep_unless(stop, Duration::from_secs_f64(seconds));
        done.store(true, Ordering::Relaxed);
        workers.into_iter().map(|w| w.join().unwrap_or(0)).sum()
    });
    check(stop)?;
    Ok((events, started.elapsed().as_secs_f64()))
}

/// A 64 KiB page of HTML: markup repeated as a template repeats it, with
/// words drawn from a fixed generator (compresses about 8:1, as template-made pages do).
pub fn web_page() -> Vec<u8> {
    const WORDS: [&str; 16] = [
        "course",
        "forum",
        "the",
        "student",
        "assignment",
        "and",
        "of",
        "grade",
        "week",
        "quiz",
        "discussion",
        "a",
        "resource",
        "to",
        "teacher",
        "section",
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut page = String::from("<!DOCTYPE html><html><head><title>Course</title></head><body>\n");
    let mut item = 0;
    while page.len() < 64 * 1024 {
        item += 1;
        page.push_str(&format!(
            "<div class=\"activity\" id=\"module-{item}\"><a href=\"/mod/page/view.php?id={item}\">"
        ));
        for _ in 0..12 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            page.push_str(WORDS[(state % 16) as usize]);
            page.push(' ');
        }
        page.push_str("</a></div>\n");
    }
    page.truncate(64 * 1024);
    page.into_bytes()
}

/// gzip at level 6 (nginx's and Apache's usual level) of `page`.
pub fn gzip(page: &[u8]) -> usize {
    let mut encoder = flate2::write::GzEncoder::new(
        Vec::with_capacity(page.len() / 2),
        flate2::Compression::new(6),
    );
    let _ = encoder.write_all(page);
    encoder.finish().map_or(0, |v| v.len())
}

pub fn run(o: &CpuOptions, stop: &AtomicBool) -> Result<BenchResult, BenchError> {
    let threads = o.threads.max(1);
    let mut prime_1 = measure("prime_1t", "sysbench prime, 1 thread", "events/s", true);
    let mut prime_n = measure(
        "prime_all",
        format!(
            "sysbench prime, {}",
            headroom_units::quantity::count(threads, "thread", "threads")
        ),
        "events/s",
        true,
    );
    let mut gzip_1 = measure(
        "gzip_1t",
        "gzip -6 of a 64 KiB page, 1 thread",
        "MB/s",
        true,
    );
    let mut gzip_n = measure(
        "gzip_all",
        format!(
            "gzip -6 of a 64 KiB page, {}",
            headroom_units::quantity::count(threads, "thread", "threads")
        ),
        "MB/s",
        true,
    );
    let page = web_page();
    let ratio = page.len() as f64 / gzip(&page) as f64;
    let max_prime = o.max_prime;
    let prime = move || {
        prime_event(max_prime);
    };
    let compress = || {
        std::hint::black_box(gzip(std::hint::black_box(&page)));
    };
    for _ in 0..o.repetitions {
        for (m, n) in [(&mut prime_1, 1), (&mut prime_n, threads)] {
            let (events, secs) = timed_events(n, o.seconds, stop, &prime)?;
            m.values.push(events as f64 / secs);
        }
        for (m, n) in [(&mut gzip_1, 1), (&mut gzip_n, threads)] {
            let (events, secs) = timed_events(n, o.seconds, stop, &compress)?;
            m.values
                .push(events as f64 * page.len() as f64 / 1e6 / secs);
        }
    }
    Ok(BenchResult {
        benchmark: "cpu".into(),
        method: format!(
            "sysbench's prime method (each event counts the primes below {max_prime} by trial division, \
             64-bit), events per second over {} s on 1 and {threads} threads; gzip level 6 of a 64 KiB \
             HTML page (compresses {ratio:.1}:1), input MB/s",
            o.seconds
        ),
        settings: settings([
            ("max_prime", max_prime.to_string()),
            ("seconds", o.seconds.to_string()),
            ("threads", threads.to_string()),
            ("repetitions", o.repetitions.to_string()),
        ]),
        measures: vec![prime_1, prime_n, gzip_1, gzip_n],
        series: Vec::new(),
        notes: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prime_event_counts_the_odd_primes_below_the_limit() {
        // sysbench starts at 3: 2 is not counted. 1,228 primes below 10,000.
        assert_eq!(prime_event(10_000), 1_228);
        assert_eq!(prime_event(20), 7); // 3 5 7 11 13 17 19
        assert_eq!(prime_event(3), 0);
    }

    #[test]
    fn the_page_compresses_like_a_real_page() {
        let page = web_page();
        assert_eq!(page.len(), 64 * 1024);
        let ratio = page.len() as f64 / gzip(&page) as f64;
        assert!((3.0..12.0).contains(&ratio), "ratio {ratio}");
    }

    #[test]
    fn timed_events_runs_whole_events_for_the_time_given() {
        let stop = AtomicBool::new(false);
        let (events, secs) = timed_events(2, 0.2, &stop, &|| {
            std::thread::sleep(Duration::from_millis(10));
        })
        .unwrap();
        assert!(secs >= 0.2, "{secs}");
        assert!((20..=60).contains(&events), "{events}");
        stop.store(true, Ordering::Relaxed);
        assert!(matches!(
            timed_events(1, 5.0, &stop, &|| {}),
            Err(BenchError::Interrupted)
        ));
    }
}
