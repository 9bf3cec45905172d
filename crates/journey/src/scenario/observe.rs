//! What a journey's host may see of its exchanges besides the samples:
//! nothing (a load run), the failed ones in full (`--save-failures`), or
//! every one with its redirects, checks and extracted values (`scenario
//! try`). Only the last two cost anything: the runner keeps bodies and
//! copies requests for them.

use super::RequestStep;
use headroom_bundle::sample::Sample;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Observe {
    Nothing,
    /// Failed exchanges: their request, response head and body (the
    /// body's first 64 KiB).
    Failures,
    /// Every exchange, with each redirect hop, check and extracted value.
    Everything,
}

/// One request as sent and the head of its response (a step that follows
/// redirects has one per hop).
#[derive(Debug, Clone)]
pub struct HopRecord {
    pub url: String,
    pub request: Vec<u8>,
    /// 0 when no response came.
    pub status: u16,
    pub head: Vec<u8>,
    pub elapsed: Duration,
}

/// An extractor's outcome.
#[derive(Debug, Clone)]
pub struct Extracted {
    pub name: String,
    pub value: String,
    /// False when nothing matched (the value is the default, or empty).
    pub matched: bool,
}

/// A finished step as the host sees it.
pub struct StepView<'a> {
    pub step: &'a RequestStep,
    pub sample: &'a Sample,
    pub iteration: u64,
    /// The failed check's name.
    pub check: Option<&'a str>,
    /// The last request as sent.
    pub request: &'a [u8],
    /// The last response's head (empty when none came).
    pub head: &'a [u8],
    /// The body: decoded when it was compressed and kept whole.
    pub body: &'a [u8],
    pub body_truncated: bool,
    /// The Content-Encoding of a body kept as received.
    pub body_encoding: Option<&'a str>,
    /// `Everything` only: each hop, and each extractor's outcome.
    pub hops: &'a [HopRecord],
    pub extracted: &'a [Extracted],
    /// A page load's resources (the sample is then the page's).
    pub page: Option<&'a super::page::PageOutcome>,
}
