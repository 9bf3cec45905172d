//! Requests that went over the wire but that no sample records, so that a
//! run's count of requests equals the server's access log: the redirects a
//! step followed (its sample is the step's, one for all its hops), the
//! requests abandoned when the run ended (the server logs them, nginx with
//! 499), and the probes sent before the run (HTTP/2 without TLS). Those
//! answered after the run's end are counted by the recorder, by label
//! (`EngineEvent::Late`), since a page's or a group's sample is no request.
//!
//! Each is counted where it happens, rarely (never once per plain request),
//! in process-wide counters a run takes when it starts and when it ends;
//! runs in one process follow one another (a capacity search's levels).

use std::sync::atomic::{AtomicU64, Ordering};

/// The counters; [`SENT`] is the process's.
#[derive(Debug, Default)]
pub struct Counters {
    redirects: AtomicU64,
    abandoned: AtomicU64,
    probes: AtomicU64,
}

/// The process's counters.
pub static SENT: Counters = Counters::new();

pub use headroom_bundle::wire::Unrecorded;

impl Counters {
    pub const fn new() -> Counters {
        Counters {
            redirects: AtomicU64::new(0),
            abandoned: AtomicU64::new(0),
            probes: AtomicU64::new(0),
        }
    }

    /// The counts since the last call, which start again from zero.
    pub fn take(&self) -> Unrecorded {
        Unrecorded {
            redirects: self.redirects.swap(0, Ordering::Relaxed),
            abandoned: self.abandoned.swap(0, Ordering::Relaxed),
            late: 0,
            probes: self.probes.swap(0, Ordering::Relaxed),
        }
    }

    /// A request on its way: dropped before [`InFlight::done`] (its user
    /// was stopped at the run's end while it waited for the answer), it
    /// counts as abandoned. Costs nothing when the answer comes.
    pub fn in_flight(&'static self) -> InFlight {
        InFlight {
            counters: self,
            done: false,
        }
    }
}

/// A step followed a redirect: one more request for its one sample.
pub fn redirect_followed() {
    SENT.redirects.fetch_add(1, Ordering::Relaxed);
}

/// A request sent to check the target before the run (HTTP/2 without TLS).
pub fn probe_sent() {
    SENT.probes.fetch_add(1, Ordering::Relaxed);
}

/// The process's counts since the last call.
pub fn take() -> Unrecorded {
    SENT.take()
}

/// A request on its way ([`Counters::in_flight`]).
pub struct InFlight {
    counters: &'static Counters,
    done: bool,
}

impl InFlight {
    /// The answer came (or the request failed): not abandoned.
    pub fn done(mut self) {
        self.done = true;
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if !self.done {
            self.counters.abandoned.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_dropped_on_its_way_is_abandoned_and_taking_starts_again() {
        static COUNTERS: Counters = Counters::new();
        COUNTERS.in_flight().done();
        drop(COUNTERS.in_flight());
        drop(COUNTERS.in_flight());
        COUNTERS.redirects.fetch_add(2, Ordering::Relaxed);
        COUNTERS.probes.fetch_add(1, Ordering::Relaxed);
        let counted = COUNTERS.take();
        assert_eq!(
            counted,
            Unrecorded {
                redirects: 2,
                abandoned: 2,
                late: 0,
                probes: 1
            }
        );
        assert_eq!(counted.total(), 5);
        assert_eq!(COUNTERS.take(), Unrecorded::default());
    }
}
