//! Which tests may run beside which. A test holds one guard for its whole
//! length: `light()` (it mostly waits; any number together), `searching()`
//! (a light test that runs a capacity search: at most two at once),
//! `paced()` (quiet, but what it needs quiet is its timers, not the
//! cores: a few together, beside no other kind) or `serial()` (quiet: it
//! needs both cores to itself). A quiet test is also `#[ignore = "quiet:
//! ..."]`, so that scripts/test runs the others side by side and then the
//! quiet ones (`--ignored --test-threads 3`: paced ones together, serial
//! ones alone); the guards keep them apart when everything runs in one go
//! (`--include-ignored`). The structure test holds the marks and the
//! guards together (`quiet_tests_take_a_quiet_guard`).

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// How many capacity searches may run at once beside the light tests: a
/// search checks that its generator kept up, and four of them at once
/// beside Chromium on two cores starved theirs ("the load generator was
/// the limit at a deciding level").
const SEARCHES_AT_ONCE: usize = 2;

/// How many paced tests may run at once: their servers sleep, their
/// generators send a few hundred requests a second at most, and together
/// they keep both cores mostly idle.
pub const PACED_AT_ONCE: usize = 3;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Light,
    Searching,
    Paced,
    Serial,
}

/// Who holds the tests' lock now, and who waits for it.
struct Holders {
    light: usize,
    searching: usize,
    paced: usize,
    serial: bool,
    paced_waiting: usize,
    serial_waiting: usize,
}

const NOBODY: Holders = Holders {
    light: 0,
    searching: 0,
    paced: 0,
    serial: false,
    paced_waiting: 0,
    serial_waiting: 0,
};

static HOLDERS: Mutex<Holders> = Mutex::new(NOBODY);
static CHANGED: Condvar = Condvar::new();

fn holders() -> MutexGuard<'static, Holders> {
    HOLDERS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Holders {
    /// Whether a test of `kind` may start now. A waiting serial test goes
    /// before new paced and light ones, a waiting paced one before new
    /// light ones, so neither waits for ever behind a stream of others.
    fn admits(&self, kind: Kind) -> bool {
        let quiet_ahead = self.serial || self.serial_waiting > 0;
        match kind {
            Kind::Light => !quiet_ahead && self.paced == 0 && self.paced_waiting == 0,
            Kind::Searching => {
                !quiet_ahead
                    && self.paced == 0
                    && self.paced_waiting == 0
                    && self.searching < SEARCHES_AT_ONCE
            }
            Kind::Paced => {
                !quiet_ahead && self.light == 0 && self.searching == 0 && self.paced < PACED_AT_ONCE
            }
            Kind::Serial => {
                !self.serial && self.light == 0 && self.searching == 0 && self.paced == 0
            }
        }
    }

    fn waiting(&mut self, kind: Kind) -> Option<&mut usize> {
        match kind {
            Kind::Paced => Some(&mut self.paced_waiting),
            Kind::Serial => Some(&mut self.serial_waiting),
            Kind::Light | Kind::Searching => None,
        }
    }

    fn enter(&mut self, kind: Kind) {
        match kind {
            Kind::Light => self.light += 1,
            Kind::Searching => self.searching += 1,
            Kind::Paced => self.paced += 1,
            Kind::Serial => self.serial = true,
        }
    }

    fn leave(&mut self, kind: Kind) {
        match kind {
            Kind::Light => self.light -= 1,
            Kind::Searching => self.searching -= 1,
            Kind::Paced => self.paced -= 1,
            Kind::Serial => self.serial = false,
        }
    }
}

/// A test's place beside the others, given back when the test ends (or
/// panics).
#[must_use = "hold the guard for the whole test: `let _guard = ...;`"]
pub struct Guard {
    kind: Kind,
}

impl Drop for Guard {
    fn drop(&mut self) {
        holders().leave(self.kind);
        CHANGED.notify_all();
    }
}

fn hold(kind: Kind) -> Guard {
    let asked = Instant::now();
    let mut h = holders();
    if let Some(n) = h.waiting(kind) {
        *n += 1;
    }
    while !h.admits(kind) {
        h = CHANGED
            .wait(h)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
    }
    if let Some(n) = h.waiting(kind) {
        *n -= 1;
    }
    h.enter(kind);
    drop(h);
    // Others that waited behind this one's turn may go now.
    CHANGED.notify_all();
    note_wait(asked);
    Guard { kind }
}

/// For tests that need the cores to themselves: they measure throughput
/// or CPU on a machine with few cores, and a test that floods a dead
/// server with reconnects would skew another's figures.
pub fn serial() -> Guard {
    hold(Kind::Serial)
}

/// For quiet tests whose figures are their timers' (a run paced at a fixed
/// rate, a log replayed at its pace, a merge of shards' clocks), not the
/// cores': they idle most of the time, and up to [`PACED_AT_ONCE`] of them
/// run together, never beside a busy test.
pub fn paced() -> Guard {
    hold(Kind::Paced)
}

/// For tests that mostly wait (a few requests a second against a server
/// that sleeps its service time, no monitoring): they may run beside one
/// another, never beside a quiet test.
pub fn light() -> Guard {
    hold(Kind::Light)
}

/// A light test that runs a capacity search: one of at most
/// [`SEARCHES_AT_ONCE`], beside other light tests.
pub fn searching() -> Guard {
    hold(Kind::Searching)
}

/// With `HEADROOM_TEST_WAITS` set, how long each test waited for its
/// guard, appended to `$TMPDIR/headroom-waits.txt` (a test's own time is
/// `--report-time`'s less this: docs/development.md).
fn note_wait(asked: Instant) {
    if std::env::var_os("HEADROOM_TEST_WAITS").is_none() {
        return;
    }
    use std::io::Write;
    let name = std::thread::current().name().unwrap_or("?").to_string();
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(std::env::temp_dir().join("headroom-waits.txt"))
    {
        let _ = writeln!(file, "{name} {:.3}", asked.elapsed().as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(setup: impl Fn(&mut Holders)) -> Holders {
        let mut h = NOBODY;
        setup(&mut h);
        h
    }

    #[test]
    fn each_kind_runs_beside_its_own_and_nothing_beside_a_serial_test() {
        let idle = with(|_| {});
        for kind in [Kind::Light, Kind::Searching, Kind::Paced, Kind::Serial] {
            assert!(idle.admits(kind), "{kind:?}");
        }
        let lights = with(|h| h.light = 5);
        assert!(lights.admits(Kind::Light) && lights.admits(Kind::Searching));
        assert!(!lights.admits(Kind::Paced) && !lights.admits(Kind::Serial));
        let searches = with(|h| h.searching = SEARCHES_AT_ONCE);
        assert!(searches.admits(Kind::Light) && !searches.admits(Kind::Searching));
        let paced = with(|h| h.paced = PACED_AT_ONCE - 1);
        assert!(paced.admits(Kind::Paced));
        assert!(!paced.admits(Kind::Light) && !paced.admits(Kind::Serial));
        let full = with(|h| h.paced = PACED_AT_ONCE);
        assert!(!full.admits(Kind::Paced));
        let serial = with(|h| h.serial = true);
        for kind in [Kind::Light, Kind::Searching, Kind::Paced, Kind::Serial] {
            assert!(!serial.admits(kind), "{kind:?}");
        }
    }

    #[test]
    fn a_waiting_quiet_test_goes_before_new_busier_ones() {
        let serial_waits = with(|h| {
            h.light = 1;
            h.serial_waiting = 1;
        });
        assert!(!serial_waits.admits(Kind::Light));
        assert!(!serial_waits.admits(Kind::Paced));
        let paced_waits = with(|h| {
            h.light = 1;
            h.paced_waiting = 1;
        });
        assert!(!paced_waits.admits(Kind::Light) && !paced_waits.admits(Kind::Searching));
    }
}
