//! Keeping failed exchanges (`--save-failures N`): the first N of each
//! label. Before an exchange a worker asks [`FailureKeeper::wants`] (one
//! relaxed atomic load) whether to keep the response's head and body; after
//! a failure it hands them to [`FailureKeeper::keep`], which claims one of
//! the label's N places, copies the exchange and sends it to the collector,
//! which writes it into the bundle away from the workers' threads.

use crate::recorder::EngineEvent;
use headroom_bundle::failures::{FailedExchange, BODY_LIMIT};
use headroom_bundle::sample::ErrorKind;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;
use tokio::sync::mpsc::UnboundedSender;

/// A failure as the worker sees it, borrowed from its buffers.
pub struct Capture<'a> {
    pub label: u16,
    pub vu: u32,
    pub iteration: u64,
    pub end: Instant,
    pub error: Option<ErrorKind>,
    pub check: Option<&'a str>,
    pub detail: Option<&'a str>,
    pub status: u16,
    pub request: &'a [u8],
    pub head: &'a [u8],
    pub body: &'a [u8],
    pub body_truncated: bool,
    pub body_encoding: Option<&'a str>,
}

pub struct FailureKeeper {
    limit: u32,
    kept: Vec<AtomicU32>,
    labels: Vec<String>,
    run_start: Instant,
    events: UnboundedSender<EngineEvent>,
}

impl FailureKeeper {
    pub fn new(
        limit: u32,
        labels: Vec<String>,
        run_start: Instant,
        events: UnboundedSender<EngineEvent>,
    ) -> FailureKeeper {
        FailureKeeper {
            limit,
            kept: labels.iter().map(|_| AtomicU32::new(0)).collect(),
            labels,
            run_start,
            events,
        }
    }

    /// Whether a failure of `label` would still be kept.
    #[inline]
    pub fn wants(&self, label: u16) -> bool {
        self.kept
            .get(label as usize)
            .is_some_and(|k| k.load(Ordering::Relaxed) < self.limit)
    }

    /// Keeps the failure if the label has a place left; true when kept.
    pub fn keep(&self, c: &Capture<'_>) -> bool {
        let Some(kept) = self.kept.get(c.label as usize) else {
            return false;
        };
        let claimed = kept
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < self.limit).then_some(n + 1)
            })
            .is_ok();
        if !claimed {
            return false;
        }
        let body = &c.body[..c.body.len().min(BODY_LIMIT)];
        let failure = FailedExchange {
            label: self.labels[c.label as usize].clone(),
            vu: c.vu,
            iteration: c.iteration,
            at_s: c
                .end
                .saturating_duration_since(self.run_start)
                .as_secs_f64(),
            error: c.error,
            check: c.check.map(str::to_string),
            detail: c.detail.map(str::to_string),
            status: c.status,
            request: c.request.to_vec(),
            response_head: c.head.to_vec(),
            body: body.to_vec(),
            body_truncated: c.body_truncated || body.len() < c.body.len(),
            body_encoding: c.body_encoding.map(str::to_string),
        };
        let _ = self.events.send(EngineEvent::Failure(Box::new(failure)));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_first_n_of_each_label() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let start = Instant::now();
        let keeper = FailureKeeper::new(2, vec!["a".into(), "b".into()], start, tx);
        let big = vec![b'x'; BODY_LIMIT + 10];
        let capture = |label| Capture {
            label,
            vu: 1,
            iteration: 1,
            end: start,
            error: Some(ErrorKind::Http5xx),
            check: None,
            detail: None,
            status: 500,
            request: b"GET / HTTP/1.1\r\n\r\n",
            head: b"HTTP/1.1 500 x\r\n\r\n",
            body: &big,
            body_truncated: false,
            body_encoding: None,
        };
        assert!(keeper.wants(0));
        assert!(keeper.keep(&capture(0)));
        assert!(keeper.keep(&capture(0)));
        assert!(!keeper.wants(0));
        assert!(!keeper.keep(&capture(0)), "a third is not kept");
        assert!(keeper.wants(1), "each label has its own places");
        assert!(keeper.keep(&capture(1)));
        assert!(
            !keeper.wants(7) && !keeper.keep(&capture(7)),
            "no such label"
        );
        let mut got = Vec::new();
        while let Ok(EngineEvent::Failure(f)) = rx.try_recv() {
            got.push(f);
        }
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].body.len(), BODY_LIMIT);
        assert!(got[0].body_truncated);
        assert_eq!(got[2].label, "b");
    }
}
