//! Scenario files: multi-step user journeys (YAML). [`parse`] turns a file
//! into a checked [`Scenario`] (every error names file:line:column);
//! [`runner`] executes it for one VU; [`template`], [`cookies`] and
//! [`extract`] are its parts. [`trial`] runs one user's one iteration
//! with every exchange shown ([`trial_view`]): `scenario try`. [`mix`]
//! reads a mix of journey files with weights.

pub mod cookies;
pub mod extract;
pub mod jmx;
pub mod mix;
pub mod observe;
pub mod page;
pub mod parse;
pub mod peak;
pub mod runner;
pub mod template;
pub mod trial;
pub mod trial_view;

use crate::profile::Think;
use extract::{Check, Extractor};
use headroom_bundle::wire::LabelRole;
use headroom_http::target::Target;
use headroom_units::quantity::Rate;
use std::path::PathBuf;
use std::time::Duration;
use template::{Template, VarId, VarTable};

pub use parse::{parse_file, parse_str, ScenarioError};

/// A checked scenario, ready to run.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub source: PathBuf,
    pub name: Option<String>,
    pub vars: VarTable,
    /// Initial value of every variable (empty unless set under `variables:`).
    pub initial: Vec<String>,
    /// The `variables:` whose value holds `${...}` (a built-in such as
    /// `${__random(1,10)}`, or another variable), in the file's order:
    /// each VU renders them again at the start of every iteration.
    pub computed: Vec<(VarId, Template)>,
    /// Hosts the steps talk to; index 0 is the base URL when there is one.
    pub origins: Vec<Target>,
    /// Path prefix of the base URL (e.g. `/moodle`), prepended to relative paths.
    pub base_path: String,
    pub headers: Vec<(String, Template)>,
    pub timeout: Duration,
    /// `defaults: http:` (None: not said; the run's `--http` or 1.1).
    pub http: Option<headroom_http::protocol::HttpChoice>,
    pub keep_alive: bool,
    /// `keep_alive: iteration`: each iteration opens its own connections
    /// (JMeter's default, which resets a thread's state every iteration).
    pub new_connections_each_iteration: bool,
    pub data: Option<DataSpec>,
    /// `accounts:`: user n (VU or arrival n, from 1) takes row n - 1 of
    /// this file at its first iteration (rows reused past the last).
    pub accounts: Option<DataSpec>,
    pub think: Think,
    pub clear_cookies_each_iteration: bool,
    pub labels: Vec<LabelInfo>,
    pub checks: Vec<String>,
    pub requests: Vec<RequestStep>,
    pub flow: Vec<Node>,
    pub profile: ScenarioProfile,
    /// Users that run their own steps to the end before the profile's
    /// users start (JMeter's serialized thread groups, e.g. a warm-up).
    pub before: Option<Phase>,
    /// `peak:`: the busiest minute of the log the workload was written
    /// from ([`peak`]).
    pub peak: Option<headroom_bundle::capacity::LogPeakRecord>,
    /// Hosts besides a page's own whose resources a page load fetches
    /// (`defaults: resource_hosts:`); each is also one of `origins`.
    pub resource_hosts: crate::page_load::resources::Hosts,
}

/// `before:`: a fixed number of users, each running its steps a fixed
/// number of times; the profile starts when the last of them ends.
#[derive(Debug, Clone)]
pub struct Phase {
    pub name: Option<String>,
    pub users: u32,
    pub iterations: u64,
    pub flow: Vec<Node>,
}

impl Scenario {
    /// The labels that are not plain requests, by name, with what they
    /// stand for (the manifest keeps them: a saved run still tells its
    /// pages from the requests they are made of).
    pub fn label_roles(&self) -> std::collections::BTreeMap<String, LabelRole> {
        let mut roles = std::collections::BTreeMap::new();
        for label in &self.labels {
            let role = match label.kind {
                LabelKind::Request | LabelKind::PageRequests => continue,
                LabelKind::Group => LabelRole::Group,
                LabelKind::Page => LabelRole::Page,
            };
            roles.insert(label.name.clone(), role);
        }
        for page in self.requests.iter().filter_map(|step| step.page.as_ref()) {
            for (index, role) in [
                (page.html, LabelRole::PageDocument),
                (page.resources, LabelRole::PageResources),
            ] {
                if let Some(label) = self.labels.get(usize::from(index)) {
                    roles.insert(label.name.clone(), role);
                }
            }
        }
        roles
    }

    /// Per check (in the order of [`Scenario::checks`]): the labels of the
    /// steps that evaluate it, in the order of the steps, each once; a
    /// check several steps share names them all.
    pub fn check_labels(&self) -> Vec<Vec<String>> {
        let mut labels: Vec<Vec<String>> = vec![Vec::new(); self.checks.len()];
        for step in &self.requests {
            let Some(label) = self.labels.get(usize::from(step.label)) else {
                continue;
            };
            let ids = step
                .checks
                .iter()
                .map(|c| c.id)
                .chain(step.extract.iter().filter_map(|e| e.check));
            for id in ids {
                if let Some(names) = labels.get_mut(usize::from(id)) {
                    if !names.contains(&label.name) {
                        names.push(label.name.clone());
                    }
                }
            }
        }
        labels
    }

    /// The mean think time per request of a user's steady iteration,
    /// `default` standing for steps without their own: steps in loops count
    /// as often as they repeat, `once` steps (a user's first iteration only)
    /// not at all, conditional steps as taken. An estimate made before a run
    /// (to size a capacity level to its users' cycle); a run measures the
    /// think its users really took.
    pub fn think_per_request(&self, default: Think) -> Duration {
        let sums = self.think_sums(default);
        if sums.steady_requests > 0.0 {
            Duration::from_secs_f64(sums.steady_think / sums.steady_requests)
        } else {
            Duration::ZERO
        }
    }

    /// Requests of a user's steady iteration (loops counted as often as
    /// they repeat, `once` steps not at all, conditional steps as taken),
    /// and their think: a journey's share of a mix's cycle.
    pub fn steady_cycle(&self, default: Think) -> (f64, Duration) {
        let sums = self.think_sums(default);
        (
            sums.steady_requests,
            Duration::from_secs_f64(sums.steady_think.clamp(0.0, 1e12)),
        )
    }

    /// The think time a user's first iteration adds to a steady one: that
    /// of its `once` steps (a login and its think), counted as above. A user
    /// is in its steady cycle only after it.
    pub fn first_iteration_think(&self, default: Think) -> Duration {
        Duration::from_secs_f64(self.think_sums(default).once_think.clamp(0.0, 1e9))
    }

    /// One walk of the flow for both estimates above.
    fn think_sums(&self, default: Think) -> ThinkSums {
        fn walk(
            s: &Scenario,
            nodes: &[Node],
            default: Think,
            times: f64,
            once: bool,
            sums: &mut ThinkSums,
        ) {
            for node in nodes {
                let once = once || node.flags().once;
                match node {
                    Node::Request { step, .. } => {
                        let think = times
                            * s.requests[*step]
                                .think
                                .unwrap_or(default)
                                .mean()
                                .as_secs_f64();
                        if once {
                            sums.once_think += think;
                        } else {
                            sums.steady_requests += times;
                            sums.steady_think += think;
                        }
                    }
                    Node::Loop {
                        count, children, ..
                    } => walk(s, children, default, times * f64::from(*count), once, sums),
                    Node::Group { children, .. } | Node::Block { children, .. } => {
                        walk(s, children, default, times, once, sums)
                    }
                }
            }
        }
        let mut sums = ThinkSums::default();
        walk(self, &self.flow, default, 1.0, false, &mut sums);
        sums
    }
}

/// A flow's planned think: its steady requests and their think, and the
/// think of its `once` steps (s).
#[derive(Default)]
struct ThinkSums {
    steady_requests: f64,
    steady_think: f64,
    once_think: f64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelKind {
    Request,
    Group,
    /// A page load: its document and resources, until the last arrived.
    Page,
    /// A page load's own requests (`L (html)`, `L (resources)`): counted as
    /// requests, but the page's time is the one judged.
    PageRequests,
}

impl LabelKind {
    /// Whether the label's samples go into the run's total (its throughput,
    /// response times and Apdex): requests and pages do; groups and the
    /// requests a page is made of do not (the page stands for them).
    pub fn in_total(&self) -> bool {
        matches!(self, LabelKind::Request | LabelKind::Page)
    }
}

/// A step loaded as a browser loads a page: the labels its document and
/// its resources are recorded under (the step's own label is the page's).
#[derive(Debug, Clone)]
pub struct PageLoad {
    pub html: u16,
    pub resources: u16,
    /// `also_loads:`: fetched with the page besides what its HTML names
    /// (what its scripts ask for), each a path from the page's origin or
    /// a URL, or a variable holding several apart by white space.
    pub also_loads: Vec<Template>,
}

#[derive(Debug, Clone)]
pub struct LabelInfo {
    pub name: String,
    pub kind: LabelKind,
    /// A URL (or group name) for the JTL's URL column.
    pub url: String,
}

/// CSV data feeding variables.
#[derive(Debug, Clone)]
pub struct DataSpec {
    pub file: PathBuf,
    pub columns: Vec<VarId>,
    pub rows: Vec<Vec<String>>,
    /// One cursor for all VUs (JMeter's "All threads") or one per VU.
    pub shared: bool,
    /// At the end of the file: start over, or stop the VU.
    pub recycle: bool,
    /// `visits: COLUMN`: rows in a row with the same value in that column
    /// are one visit, which one user takes whole, as a new visitor.
    pub visits: Option<Visits>,
}

/// A data file's visits: where each starts among the rows, the rows'
/// count last.
#[derive(Debug, Clone, PartialEq)]
pub struct Visits {
    /// The column that tells visits apart, for messages.
    pub column: String,
    starts: Vec<usize>,
}

impl Visits {
    /// The visits of `rows`: a new one wherever `column`'s value changes.
    pub fn of(column: String, at: usize, rows: &[Vec<String>]) -> Visits {
        let mut starts = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            if i == 0 || row.get(at) != rows[i - 1].get(at) {
                starts.push(i);
            }
        }
        starts.push(rows.len());
        Visits { column, starts }
    }

    pub fn count(&self) -> usize {
        self.starts.len() - 1
    }

    /// The rows of visit `n` (from 0).
    pub fn rows(&self, n: usize) -> std::ops::Range<usize> {
        self.starts[n]..self.starts[n + 1]
    }
}

impl DataSpec {
    /// Keeps this shard's rows of a file shared by all VUs: row `n` goes to
    /// shard `n mod N`, so two shards never use the same row (two
    /// generators never log the same user in at once). A file read by each
    /// VU from its start (`share: vu`) is left whole.
    pub fn keep_shard_rows(&mut self, shard: crate::shard::Shard) -> Result<(), String> {
        if !self.shared || shard.is_whole() {
            return Ok(());
        }
        if let Some(visits) = &self.visits {
            return self.keep_shard_visits(visits.clone(), shard);
        }
        let total = self.rows.len();
        let mut n = 0u64;
        self.rows.retain(|_| {
            n += 1;
            shard.owns(n - 1)
        });
        if self.rows.is_empty() {
            return Err(format!(
                "{} has {total} data row(s) for {} shards: shard {shard} would have none. Each shard \
                 takes its own rows (row n goes to shard n mod {}); add rows or use fewer shards",
                self.file.display(),
                shard.count,
                shard.count
            ));
        }
        Ok(())
    }

    /// Keeps this shard's visits: visit `n` goes to shard `n mod N`.
    fn keep_shard_visits(
        &mut self,
        visits: Visits,
        shard: crate::shard::Shard,
    ) -> Result<(), String> {
        let mut rows = Vec::new();
        let mut starts = Vec::new();
        for n in (0..visits.count()).filter(|n| shard.owns(*n as u64)) {
            starts.push(rows.len());
            rows.extend(visits.rows(n).map(|i| std::mem::take(&mut self.rows[i])));
        }
        if rows.is_empty() {
            return Err(format!(
                "{} has {} visit(s) for {} shards: shard {shard} would have none. Each shard \
                 takes its own visits (visit n goes to shard n mod {}); add visits or use fewer shards",
                self.file.display(),
                visits.count(),
                shard.count,
                shard.count
            ));
        }
        starts.push(rows.len());
        self.rows = rows;
        self.visits = Some(Visits {
            column: visits.column,
            starts,
        });
        Ok(())
    }
}

#[derive(Debug, Clone)]
pub enum Body {
    None,
    Raw(Template),
    /// application/x-www-form-urlencoded
    Form(Vec<(Template, Template)>),
    /// application/json, from the YAML value
    Json(Template),
}

#[derive(Debug, Clone)]
pub struct RequestStep {
    pub label: u16,
    pub method: String,
    pub origin: usize,
    /// Path and query as written (templated), before `query:` pairs.
    pub path: Template,
    pub query: Vec<(Template, Template)>,
    pub headers: Vec<(String, Template)>,
    pub body: Body,
    pub extract: Vec<Extractor>,
    pub checks: Vec<Check>,
    pub think: Option<Think>,
    pub follow_redirects: bool,
    /// `keep_alive: false` on the step: its connection closes after it.
    pub close_connection: bool,
    /// Keep the response body (extraction or checks read it, or a page
    /// load finds its resources in it).
    pub needs_body: bool,
    /// Loaded as a browser does (`page_load: true`, or `defaults:
    /// page_loads: true`).
    pub page: Option<PageLoad>,
}

/// A condition on a variable (`if:`).
#[derive(Debug, Clone)]
pub enum Condition {
    Set(VarId),
    NotSet(VarId),
    /// The value may hold `${var}`.
    Equals(VarId, Template),
    Matches(VarId, extract::Pattern),
}

#[derive(Debug, Clone, Default)]
pub struct NodeFlags {
    /// Only in a VU's first iteration.
    pub once: bool,
    pub condition: Option<Condition>,
}

impl Node {
    pub fn flags(&self) -> &NodeFlags {
        match self {
            Node::Request { flags, .. }
            | Node::Group { flags, .. }
            | Node::Loop { flags, .. }
            | Node::Block { flags, .. } => flags,
        }
    }
}

#[derive(Debug, Clone)]
pub enum Node {
    Request {
        step: usize,
        flags: NodeFlags,
    },
    /// Reported as one label with the total time of its steps.
    Group {
        label: u16,
        include_think: bool,
        children: Vec<Node>,
        flags: NodeFlags,
    },
    Loop {
        count: u32,
        children: Vec<Node>,
        flags: NodeFlags,
    },
    Block {
        children: Vec<Node>,
        flags: NodeFlags,
    },
}

/// The profile a file asks for; command-line flags override its fields.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScenarioProfile {
    pub open: bool,
    pub users: Option<u32>,
    pub ramp_up: Option<Duration>,
    pub duration: Option<Duration>,
    /// Closed model: iterations per VU.
    pub iterations: Option<u64>,
    pub rate: Option<Rate>,
    pub max_vus: Option<u32>,
    pub throughput: Option<Rate>,
    /// `stages:` with users (closed) or a rate per second (open).
    pub stages: Option<(crate::stages::Stages, StageKind)>,
    /// Open model: each arrival is a new user who stays this long.
    pub session: Option<crate::lesson::UserSession>,
    /// `model: lesson`: students arriving within `arrive_within`.
    pub students: Option<u32>,
    pub arrive_within: Option<Duration>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageKind {
    Users,
    Rate,
}
