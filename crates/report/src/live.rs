//! The live line shown once a second on a terminal.

use headroom_load::run::Progress;
use headroom_units::quantity::Readable;
use std::time::Duration;

fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}", s / 60, s % 60)
}

pub fn live_line(p: &Progress) -> String {
    let elapsed = match p.planned {
        Some(total) => format!("{}/{}", clock(p.elapsed), clock(total)),
        None => clock(p.elapsed),
    };
    let apdex = p.apdex.map_or("-".to_string(), |a| format!("{a:.3}"));
    format!(
        "{elapsed}  users {}  {:.0} req/s  errors {}  p50 {}  p95 {}  Apdex {apdex}",
        p.active_vus,
        p.interval_rps,
        p.errors,
        Readable(p.p50),
        Readable(p.p95),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_the_essentials() {
        let line = live_line(&Progress {
            elapsed: Duration::from_secs(12),
            planned: Some(Duration::from_secs(60)),
            active_vus: 50,
            interval_rps: 1234.4,
            count: 10_000,
            errors: 3,
            p50: Duration::from_micros(1500),
            p95: Duration::from_millis(12),
            apdex: Some(0.9876),
            ..Progress::default()
        });
        assert_eq!(
            line,
            "0:12/1:00  users 50  1234 req/s  errors 3  p50 1.50ms  p95 12.0ms  Apdex 0.988"
        );
    }
}
