//! What went over the wire when a run loaded pages as a browser does. The
//! run's total counts pages (their time is the one judged); the requests a
//! page is made of (its document, `L (html)`, and its resources,
//! `L (resources)`) are labels beside it. The manifest keeps each label's
//! role ([`LabelRole`]), so a saved bundle, a merged one and a recovered one
//! still say how many requests and bytes that was ([`WireCount`]).
//! Bundles written before (no roles) read as before: no count.
//!
//! Beside the samples, a run counts the requests no sample stands for
//! ([`Unrecorded`]: a step's redirects, requests abandoned or answered
//! after the end, probes), so that its count of requests is the server's.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a label stands for, when it is not a plain request (those are not
/// listed in the manifest's `label_roles`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelRole {
    /// A group of steps: its samples stand for others'.
    Group,
    /// A page load: its document and resources, until the last arrived.
    Page,
    /// A page load's document request (`L (html)`).
    PageDocument,
    /// A page load's resource requests (`L (resources)`).
    PageResources,
}

/// Every HTTP request of a run that loaded pages, and its bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WireCount {
    /// Requests that went over the wire: plain steps', and pages'
    /// documents and resources.
    pub requests: u64,
    /// Page loads (the total counts them, beside plain steps).
    pub pages: u64,
    /// Of `requests`: the pages' documents.
    pub documents: u64,
    /// Of `requests`: the pages' resources (what a user's cache answered
    /// is not a request).
    pub resources: u64,
    /// Plain steps' requests.
    pub plain: u64,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    /// Of `requests`: what no sample stands for.
    #[serde(flatten)]
    pub unrecorded: Unrecorded,
}

/// Requests that went over the wire but that no sample records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Unrecorded {
    /// Redirects the steps followed (a step's sample is one for all its
    /// requests: the POST, then the GET of its Location).
    pub redirects: u64,
    /// Sent and left unanswered when the run (or a capacity level) ended:
    /// the server still logs them (nginx with status 499).
    pub abandoned: u64,
    /// Answered after the run's end: sent and answered, left out of the
    /// figures (as wrk does).
    pub late: u64,
    /// Sent before the run to check the target (HTTP/2 without TLS).
    pub probes: u64,
}

impl Unrecorded {
    pub fn total(&self) -> u64 {
        self.redirects + self.abandoned + self.late + self.probes
    }

    pub fn add(&mut self, other: &Unrecorded) {
        self.redirects += other.redirects;
        self.abandoned += other.abandoned;
        self.late += other.late;
        self.probes += other.probes;
    }
}

/// What a label's figures say of the wire: its requests and their bytes
/// (the summary's `LabelFigures`).
pub trait Carried {
    fn count(&self) -> u64;
    fn bytes_received(&self) -> u64;
    fn bytes_sent(&self) -> u64;
}

impl WireCount {
    /// The count from the labels' figures and their roles, and the
    /// requests no sample stands for; `None` when no label is a page and
    /// every request has its sample (the total counts them then).
    pub fn of<F: Carried>(
        labels: &BTreeMap<String, F>,
        roles: &BTreeMap<String, LabelRole>,
        unrecorded: Unrecorded,
    ) -> Option<WireCount> {
        if !roles.values().any(|r| *r == LabelRole::Page) && unrecorded.total() == 0 {
            return None;
        }
        let mut count = WireCount::default();
        for (name, figures) in labels {
            let on_wire = match roles.get(name) {
                Some(LabelRole::Group) => false,
                Some(LabelRole::Page) => {
                    count.pages += figures.count();
                    false
                }
                Some(LabelRole::PageDocument) => {
                    count.documents += figures.count();
                    true
                }
                Some(LabelRole::PageResources) => {
                    count.resources += figures.count();
                    true
                }
                None => {
                    count.plain += figures.count();
                    true
                }
            };
            if on_wire {
                count.requests += figures.count();
                count.bytes_received += figures.bytes_received();
                count.bytes_sent += figures.bytes_sent();
            }
        }
        count.requests += unrecorded.total();
        count.unrecorded = unrecorded;
        Some(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Figures {
        count: u64,
        bytes_received: u64,
        bytes_sent: u64,
    }

    impl Carried for Figures {
        fn count(&self) -> u64 {
            self.count
        }
        fn bytes_received(&self) -> u64 {
            self.bytes_received
        }
        fn bytes_sent(&self) -> u64 {
            self.bytes_sent
        }
    }

    fn figures(count: u64, bytes: u64) -> Figures {
        Figures {
            count,
            bytes_received: bytes,
            bytes_sent: count * 100,
        }
    }

    #[test]
    fn pages_count_their_documents_and_resources_on_the_wire() {
        let labels: BTreeMap<String, Figures> = [
            ("login", figures(10, 1_000)),
            ("course", figures(20, 90_000)),
            ("course (html)", figures(20, 30_000)),
            ("course (resources)", figures(140, 60_000)),
            ("reading", figures(20, 91_000)),
        ]
        .into_iter()
        .map(|(n, f)| (n.to_string(), f))
        .collect();
        let roles: BTreeMap<String, LabelRole> = [
            ("course", LabelRole::Page),
            ("course (html)", LabelRole::PageDocument),
            ("course (resources)", LabelRole::PageResources),
            ("reading", LabelRole::Group),
        ]
        .into_iter()
        .map(|(n, r)| (n.to_string(), r))
        .collect();
        let count = WireCount::of(&labels, &roles, Unrecorded::default()).unwrap();
        assert_eq!(
            count,
            WireCount {
                requests: 170,
                pages: 20,
                documents: 20,
                resources: 140,
                plain: 10,
                bytes_received: 91_000,
                bytes_sent: 17_000,
                unrecorded: Unrecorded::default(),
            }
        );
        // Without pages (or without roles: an older bundle) the total says it.
        let none = Unrecorded::default();
        assert_eq!(WireCount::of(&labels, &BTreeMap::new(), none), None);
        // Unless requests went out that no sample stands for.
        let beside = Unrecorded {
            redirects: 30,
            abandoned: 4,
            late: 1,
            probes: 1,
        };
        let plain = WireCount::of(&labels, &BTreeMap::new(), beside).unwrap();
        // Every label is then a plain request: 10 + 20 + 20 + 140 + 20.
        assert_eq!(plain.plain, 210);
        assert_eq!(plain.requests, 210 + 36);
        let paged = WireCount::of(&labels, &roles, beside).unwrap();
        assert_eq!(paged.requests, 170 + 36);
        assert_eq!(paged.unrecorded, beside);
    }
}
