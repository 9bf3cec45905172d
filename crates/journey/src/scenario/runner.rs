//! Runs a scenario for one VU. The flow tree is flattened once into a
//! program of [`Op`]s with jumps, so an iteration is a loop over a slice
//! with reused stacks: no recursion, no allocation per step beyond what
//! extraction itself needs. Requests are rendered into reused buffers.

use super::cookies::CookieJar;
use super::extract::Response;
use super::observe::{Extracted, HopRecord, Observe, StepView};
use super::page::{self, Page, PageState};
use super::template::{form_encode, json_escape, plain, url_encode_invalid, RenderContext};
use super::{Body, Condition, DataSpec, Node, NodeFlags, PageLoad, RequestStep, Scenario};
use headroom_bundle::failures::BODY_LIMIT;
use headroom_bundle::sample::{status_error, ErrorKind, Sample, TlsHandshake};
use headroom_bundle::server_timing::ServerTiming;
use headroom_http::client::{Exchange, HttpClient, Outgoing};
use headroom_http::conn::Connector;
use headroom_http::http1::{with_response, STACK_HEADERS};
use headroom_http::target::{HostHeader, OriginUrl, Scheme, Target, USER_AGENT};
use headroom_units::rng::Rng;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Most redirects followed for one step (as browsers do); one more fails
/// the step with the error kind `redirects`.
const MAX_REDIRECTS: usize = 10;

const LINE_BREAK_IN_HEADER: &str =
    "a header value held a line break or NUL once its variables were filled in";
const TOO_MANY_REDIRECTS: &str = "more than 10 redirects (a loop?)";
/// The detail of a page whose resources failed, by how its first failed
/// resource failed.
fn resource_failed(first: Option<ErrorKind>) -> &'static str {
    match first {
        Some(ErrorKind::Http4xx) => "a resource of the page answered 4xx",
        Some(ErrorKind::Http5xx) => "a resource of the page answered 5xx",
        Some(ErrorKind::Timeout) => "a resource of the page timed out",
        Some(ErrorKind::Redirects) => {
            "a resource of the page was redirected in a loop or more than 20 times"
        }
        _ => "a resource of the page failed to load",
    }
}

#[derive(Debug, Clone)]
pub enum Op {
    /// Skip to `skip_to` unless the flags allow this node now.
    Guard {
        once: bool,
        condition: Option<Condition>,
        skip_to: usize,
    },
    Request {
        step: usize,
    },
    GroupBegin {
        label: u16,
        include_think: bool,
    },
    GroupEnd,
    LoopBegin {
        count: u32,
    },
    LoopEnd {
        begin: usize,
    },
}

/// Flattens the flow tree.
pub fn compile(flow: &[Node]) -> Vec<Op> {
    fn emit(nodes: &[Node], ops: &mut Vec<Op>) {
        for node in nodes {
            let flags: &NodeFlags = match node {
                Node::Request { flags, .. }
                | Node::Group { flags, .. }
                | Node::Loop { flags, .. }
                | Node::Block { flags, .. } => flags,
            };
            let guard = (flags.once || flags.condition.is_some()).then(|| {
                ops.push(Op::Guard {
                    once: flags.once,
                    condition: flags.condition.clone(),
                    skip_to: 0,
                });
                ops.len() - 1
            });
            match node {
                Node::Request { step, .. } => ops.push(Op::Request { step: *step }),
                Node::Group {
                    label,
                    include_think,
                    children,
                    ..
                } => {
                    ops.push(Op::GroupBegin {
                        label: *label,
                        include_think: *include_think,
                    });
                    emit(children, ops);
                    ops.push(Op::GroupEnd);
                }
                Node::Loop {
                    count, children, ..
                } => {
                    let begin = ops.len();
                    ops.push(Op::LoopBegin { count: *count });
                    emit(children, ops);
                    ops.push(Op::LoopEnd { begin });
                }
                Node::Block { children, .. } => emit(children, ops),
            }
            if let Some(at) = guard {
                let end = ops.len();
                if let Op::Guard { skip_to, .. } = &mut ops[at] {
                    *skip_to = end;
                }
            }
        }
    }
    let mut ops = Vec::new();
    emit(flow, &mut ops);
    ops
}

/// Everything VUs share to run a scenario.
pub struct JourneyPlan {
    pub scenario: Scenario,
    pub program: Vec<Op>,
    /// One per origin of the scenario.
    pub connectors: Vec<Arc<Connector>>,
    /// The next data row when the cursor is shared by all VUs.
    pub shared_cursor: AtomicUsize,
    /// Closed model: iterations per VU.
    pub iterations: Option<u64>,
    /// Think time for steps without their own (the file's, or --think).
    pub think: crate::profile::Think,
    /// The scenario's `before:` users, compiled.
    pub before: Option<BeforePlan>,
}

/// The `before:` phase: its program and how much of it each user runs.
pub struct BeforePlan {
    pub program: Vec<Op>,
    pub users: u32,
    pub iterations: u64,
}

impl JourneyPlan {
    /// Compiles the scenario's flows; `iterations` per main-phase VU.
    pub fn new(
        scenario: Scenario,
        connectors: Vec<Arc<Connector>>,
        iterations: Option<u64>,
        think: crate::profile::Think,
    ) -> JourneyPlan {
        let before = scenario.before.as_ref().map(|phase| BeforePlan {
            program: compile(&phase.flow),
            users: phase.users,
            iterations: phase.iterations,
        });
        JourneyPlan {
            program: compile(&scenario.flow),
            scenario,
            connectors,
            shared_cursor: AtomicUsize::new(0),
            iterations,
            think,
            before,
        }
    }
}

/// What the runner needs from the worker it runs on.
pub trait JourneyHost {
    fn record(&self, sample: &Sample);
    fn record_check(&self, check: u16, passed: bool);
    /// The think time that follows a request of `label` (for Little's law).
    fn record_think(&self, _label: u16, _think: Duration) {}
    /// Throughput cap: waits for the next slot and returns it, or `None` without a cap.
    fn pace(&self) -> impl std::future::Future<Output = Option<Instant>>;
    /// How much of the next exchange of `label` the host wants to see.
    fn observe(&self, _label: u16) -> Observe {
        Observe::Nothing
    }
    /// A step finished that the host observes: every one under
    /// `Everything`, failed ones under `Failures`.
    fn exchange(&self, _view: &StepView<'_>) {}
    /// The VU stops after the current step (`scenario try` stops at the
    /// first failure).
    fn halted(&self) -> bool {
        false
    }
    /// Think times are not waited (`scenario try`).
    fn skips_think(&self) -> bool {
        false
    }
}

struct GroupAccount {
    label: u16,
    include_think: bool,
    started: Instant,
    elapsed: Duration,
    failed: bool,
    bytes_received: u64,
    bytes_sent: u64,
}

/// One VU's state for a scenario.
pub struct Journey {
    plan: Arc<JourneyPlan>,
    clients: Vec<Option<HttpClient>>,
    vars: Vec<String>,
    jar: CookieJar,
    rng: Rng,
    vu: u32,
    iteration: u64,
    own_cursor: usize,
    /// With data `visits:`: the rows of the visit under way not yet taken,
    /// and the iteration it began with (`once:` steps run in it).
    visit: std::ops::Range<usize>,
    visit_began: u64,
    request: Vec<u8>,
    /// The current step's path and query (reused).
    path: String,
    /// Rendered header values and bodies (reused).
    text: String,
    head: Vec<u8>,
    body: Vec<u8>,
    /// The body without its Content-Encoding (gzip, deflate, br), reused.
    decoded: Vec<u8>,
    /// Checks' rendered text (reused).
    scratch: String,
    loops: Vec<(usize, u32)>,
    groups: Vec<GroupAccount>,
    /// An observed body stopped at its limit.
    body_truncated: bool,
    /// `Observe::Everything`: the current step's hops and extractions.
    hops: Vec<HopRecord>,
    extracted: Vec<Extracted>,
    /// Runs the `before:` program instead of the main one.
    in_before: bool,
    /// The last response's body was decoded into `decoded`.
    body_decoded: bool,
    /// The browser's cache and connections, made at the first page load.
    page_state: Option<PageState>,
    /// The current step's page load, for the host that observes it.
    last_page: Option<page::PageOutcome>,
}

/// A redirect's next hop.
struct Hop {
    origin: usize,
    path: String,
    method_get: bool,
}

impl Journey {
    pub fn new(plan: Arc<JourneyPlan>, vu: u32, seed: u64) -> Journey {
        let vars = plan.scenario.initial.clone();
        let clients = plan.connectors.iter().map(|_| None).collect();
        Journey {
            clients,
            vars,
            jar: CookieJar::default(),
            rng: Rng::new(seed, vu as u64),
            vu,
            iteration: 0,
            own_cursor: 0,
            visit: 0..0,
            visit_began: 1,
            request: Vec::with_capacity(1024),
            path: String::with_capacity(256),
            text: String::with_capacity(256),
            head: Vec::with_capacity(1024),
            body: Vec::new(),
            decoded: Vec::new(),
            scratch: String::new(),
            loops: Vec::new(),
            groups: Vec::new(),
            body_truncated: false,
            hops: Vec::new(),
            extracted: Vec::new(),
            in_before: false,
            body_decoded: false,
            page_state: None,
            last_page: None,
            plan,
        }
    }

    /// A new user whose own data rows start at `row` (an arriving user of
    /// an open-model session takes the row of its arrival's number).
    pub fn from_row(mut self, row: usize) -> Journey {
        self.own_cursor = row;
        self
    }

    /// A user of the `before:` phase (the plan must have one).
    pub fn before_phase(plan: Arc<JourneyPlan>, vu: u32, seed: u64) -> Journey {
        let mut journey = Journey::new(plan, vu, seed);
        journey.in_before = true;
        journey
    }

    /// Takes the next data row into the variables; false when the data ran
    /// out and the VU must stop.
    fn next_row(&mut self) -> bool {
        let plan = self.plan.clone();
        let Some(data) = &plan.scenario.data else {
            return true;
        };
        let row = if let Some(visits) = &data.visits {
            match self.visit.next() {
                Some(at) => &data.rows[at],
                None => {
                    let n = self.next_cursor(data.shared);
                    let Some(n) = at_cycle(n, visits.count(), data.recycle) else {
                        return false;
                    };
                    self.visit = visits.rows(n);
                    self.new_visitor();
                    match self.visit.next() {
                        Some(at) => &data.rows[at],
                        None => return false,
                    }
                }
            }
        } else {
            let n = self.next_cursor(data.shared);
            let Some(row) = row_at(data, n) else {
                return false;
            };
            row
        };
        for (var, value) in data.columns.iter().zip(row) {
            self.vars[*var].clear();
            self.vars[*var].push_str(value);
        }
        true
    }

    /// Whether the visit under way (data `visits:`) has rows left.
    pub fn in_visit(&self) -> bool {
        !self.visit.is_empty()
    }

    /// The next place of the data's cursor: all VUs' or this one's.
    fn next_cursor(&mut self, shared: bool) -> usize {
        if shared {
            self.plan.shared_cursor.fetch_add(1, Ordering::Relaxed)
        } else {
            self.own_cursor += 1;
            self.own_cursor - 1
        }
    }

    /// A visit begins: the user comes as a new visitor, with no cookies, an
    /// empty cache and new connections, and runs the `once:` steps again.
    fn new_visitor(&mut self) {
        self.jar.clear();
        self.page_state = None;
        self.clients.iter_mut().for_each(|c| *c = None);
        self.visit_began = self.iteration;
    }

    /// `accounts:`: user n (this VU's number, from 1) takes row n - 1,
    /// from the top again past the last row.
    fn take_account_row(&mut self) {
        let plan = self.plan.clone();
        let Some(accounts) = &plan.scenario.accounts else {
            return;
        };
        let n = (self.vu as usize).saturating_sub(1) % accounts.rows.len().max(1);
        for (var, value) in accounts.columns.iter().zip(&accounts.rows[n]) {
            self.vars[*var].clear();
            self.vars[*var].push_str(value);
        }
    }

    /// Renders the `variables:` whose value holds `${...}`, in the file's
    /// order (a value sees those above it as this iteration has them).
    fn compute_variables(&mut self) {
        let plan = self.plan.clone();
        for (id, template) in &plan.scenario.computed {
            let mut value = std::mem::take(&mut self.scratch);
            value.clear();
            let mut ctx = RenderContext {
                vars: &self.vars,
                vu: self.vu,
                iteration: self.iteration,
                rng: &mut self.rng,
            };
            template.render_into(&mut value, &mut ctx, plain);
            self.scratch = std::mem::replace(&mut self.vars[*id], value);
        }
    }

    /// Starts the next iteration: counts it, takes its data row (and the
    /// VU's account row on the first), renders the computed variables and
    /// clears the cookies or connections when the scenario asks. Returns
    /// false when the iterations or the data rows have run out.
    #[inline]
    fn begin_iteration(&mut self) -> bool {
        let limit = match (&self.plan.before, self.in_before) {
            (Some(before), true) => Some(before.iterations),
            _ => self.plan.iterations,
        };
        if limit.is_some_and(|n| self.iteration >= n) {
            return false;
        }
        self.iteration += 1;
        if !self.next_row() {
            return false;
        }
        if self.iteration == 1 {
            self.take_account_row();
        }
        self.compute_variables();
        if self.plan.scenario.clear_cookies_each_iteration {
            self.jar.clear();
        }
        if self.plan.scenario.new_connections_each_iteration {
            // Dropping a client closes its connection.
            self.clients.iter_mut().for_each(|c| *c = None);
        }
        true
    }

    /// Opens a group of steps, nested in the one open.
    #[inline]
    fn begin_group(&mut self, label: u16, include_think: bool) {
        self.groups.push(GroupAccount {
            label,
            include_think,
            started: Instant::now(),
            elapsed: Duration::ZERO,
            failed: false,
            bytes_received: 0,
            bytes_sent: 0,
        });
    }

    /// Closes the innermost group: records it as a sample whose response
    /// time is the group's total, and adds it to the group around it.
    #[inline]
    fn end_group(&mut self, host: &impl JourneyHost) {
        if let Some(group) = self.groups.pop() {
            let end = Instant::now();
            // Intended start is set so that response time = the group's total.
            let start = end.checked_sub(group.elapsed).unwrap_or(group.started);
            host.record(&Sample {
                label: group.label,
                vu: self.vu,
                intended_start: start,
                actual_start: start,
                connect: Duration::ZERO,
                tls: None,
                first_byte: None,
                end,
                status: 0,
                bytes_received: group.bytes_received,
                bytes_sent: group.bytes_sent,
                error: group.failed.then_some(ErrorKind::Check),
                failed_check: None,
                detail: None,
                resent: false,
                server_timing: Default::default(),
            });
            if let Some(outer) = self.groups.last_mut() {
                outer.elapsed += group.elapsed;
                outer.failed |= group.failed;
            }
        }
    }

    /// At the end of the innermost loop: whether it runs again (counting
    /// the run down), else it is closed.
    #[inline]
    fn loop_again(&mut self) -> bool {
        match self.loops.last_mut() {
            Some((_, remaining)) if *remaining > 1 => {
                *remaining -= 1;
                true
            }
            _ => {
                self.loops.pop();
                false
            }
        }
    }

    /// Runs one iteration; `first_intended` is the scheduled start of its
    /// first request (open model). Returns false when the VU must stop.
    pub async fn iterate(
        &mut self,
        host: &impl JourneyHost,
        mut first_intended: Option<Instant>,
    ) -> bool {
        if !self.begin_iteration() {
            return false;
        }
        let plan = self.plan.clone();
        let program = match (&plan.before, self.in_before) {
            (Some(before), true) => &before.program,
            _ => &plan.program,
        };
        self.loops.clear();
        self.groups.clear();
        let mut ip = 0;
        while ip < program.len() {
            match &program[ip] {
                Op::Guard {
                    once,
                    condition,
                    skip_to,
                } => {
                    let allowed = !(*once && self.iteration > self.visit_began)
                        && condition.as_ref().is_none_or(|c| self.holds(c));
                    ip = if allowed { ip + 1 } else { *skip_to };
                }
                Op::Request { step } => {
                    let intended = match first_intended.take() {
                        Some(t) => Some(t),
                        None => host.pace().await,
                    };
                    self.step(host, &plan.scenario.requests[*step], intended)
                        .await;
                    if host.halted() {
                        return false;
                    }
                    ip += 1;
                }
                Op::GroupBegin {
                    label,
                    include_think,
                } => {
                    self.begin_group(*label, *include_think);
                    ip += 1;
                }
                Op::GroupEnd => {
                    self.end_group(host);
                    ip += 1;
                }
                Op::LoopBegin { count } => {
                    self.loops.push((ip, *count));
                    ip += 1;
                }
                Op::LoopEnd { begin } => {
                    ip = if self.loop_again() { begin + 1 } else { ip + 1 };
                }
            }
        }
        true
    }

    fn holds(&mut self, condition: &Condition) -> bool {
        let mut ctx = RenderContext {
            vars: &self.vars,
            vu: self.vu,
            iteration: self.iteration,
            rng: &mut self.rng,
        };
        match condition {
            Condition::Set(v) => !self.vars[*v].is_empty(),
            Condition::NotSet(v) => self.vars[*v].is_empty(),
            Condition::Equals(v, value) => {
                self.scratch.clear();
                value.render_into(&mut self.scratch, &mut ctx, plain);
                self.vars[*v] == self.scratch
            }
            Condition::Matches(v, pattern) => {
                pattern.is_match(&self.vars[*v], &mut ctx, &mut self.scratch)
            }
        }
    }

    /// Renders the step's path and query into `self.text`.
    fn render_path(&mut self, step: &RequestStep, out: &mut String) {
        out.clear();
        if step.origin == 0 {
            out.push_str(&self.plan.scenario.base_path);
        }
        let mut ctx = RenderContext {
            vars: &self.vars,
            vu: self.vu,
            iteration: self.iteration,
            rng: &mut self.rng,
        };
        step.path.render_path(out, &mut ctx);
        for (i, (name, value)) in step.query.iter().enumerate() {
            out.push(if i == 0 && !out.contains('?') {
                '?'
            } else {
                '&'
            });
            name.render_encoded(out, &mut ctx, form_encode);
            out.push('=');
            value.render_encoded(out, &mut ctx, form_encode);
        }
    }

    /// Writes the request line, headers and body into `self.request`,
    /// reusing `self.text` for rendered values. Fails, sending nothing, when
    /// a header value rendered from a variable holds a line break or NUL
    /// (it would add header lines of the server's choosing).
    fn build_request(
        &mut self,
        step: &RequestStep,
        origin: &Target,
        path: &str,
        method_get: bool,
    ) -> Result<(), &'static str> {
        use std::io::Write as _;
        let plan = self.plan.clone();
        let scenario = &plan.scenario;
        let method = if method_get {
            "GET"
        } else {
            step.method.as_str()
        };
        let out = &mut self.request;
        out.clear();
        // Host, User-Agent and Accept unless the scenario gives its own
        // (a header manager's Accept, a virtual host's Host): never twice.
        let given = |header: &str| {
            scenario
                .headers
                .iter()
                .chain(&step.headers)
                .any(|(n, _)| n.eq_ignore_ascii_case(header))
        };
        let _ = write!(out, "{method} {path} HTTP/1.1\r\n");
        if !given("host") {
            let _ = write!(out, "Host: {}\r\n", HostHeader(origin));
        }
        if !given("user-agent") {
            let _ = write!(out, "User-Agent: {USER_AGENT}\r\n");
        }
        if !given("accept") {
            out.extend_from_slice(b"Accept: */*\r\n");
        }
        let mut ctx = RenderContext {
            vars: &self.vars,
            vu: self.vu,
            iteration: self.iteration,
            rng: &mut self.rng,
        };
        let mut has_authorization = false;
        for (name, value) in scenario.headers.iter().chain(&step.headers) {
            self.text.clear();
            value.render_into(&mut self.text, &mut ctx, plain);
            if self.text.contains(['\r', '\n', '\0']) {
                return Err(LINE_BREAK_IN_HEADER);
            }
            has_authorization |= name.eq_ignore_ascii_case("authorization");
            let _ = write!(out, "{name}: {}\r\n", self.text);
        }
        if let (Some(credentials), false) = (&origin.authorization, has_authorization) {
            let _ = write!(out, "Authorization: {credentials}\r\n");
        }
        self.text.clear();
        if self.jar.header_value(
            &origin.host,
            path,
            origin.scheme == Scheme::Https,
            SystemTime::now(),
            &mut self.text,
        ) {
            let _ = write!(out, "Cookie: {}\r\n", self.text);
        }
        if !scenario.keep_alive || step.close_connection {
            out.extend_from_slice(b"Connection: close\r\n");
        }
        let has_content_type = scenario
            .headers
            .iter()
            .chain(&step.headers)
            .any(|(n, _)| n.eq_ignore_ascii_case("content-type"));
        self.text.clear();
        let content_type = match (&step.body, method_get) {
            (_, true) | (Body::None, _) => None,
            (Body::Raw(t), _) => {
                t.render_into(&mut self.text, &mut ctx, plain);
                None
            }
            (Body::Form(fields), _) => {
                for (i, (name, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        self.text.push('&');
                    }
                    name.render_encoded(&mut self.text, &mut ctx, form_encode);
                    self.text.push('=');
                    value.render_encoded(&mut self.text, &mut ctx, form_encode);
                }
                Some("application/x-www-form-urlencoded")
            }
            (Body::Json(t), _) => {
                t.render_into(&mut self.text, &mut ctx, json_escape);
                Some("application/json")
            }
        };
        if let (Some(ct), false) = (content_type, has_content_type) {
            let _ = write!(out, "Content-Type: {ct}\r\n");
        }
        if !self.text.is_empty() || matches!(method, "POST" | "PUT" | "PATCH") {
            let _ = write!(out, "Content-Length: {}\r\n", self.text.len());
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(self.text.as_bytes());
        Ok(())
    }

    /// Runs a step's checks and extractors on its response. Returns the
    /// sample's error kind after them (a status check that passes clears an
    /// expected 4xx/5xx), the reason for a body that could not be decoded,
    /// and the first check that failed.
    #[allow(clippy::too_many_arguments)]
    fn read_response(
        &mut self,
        host: &impl JourneyHost,
        observe: Observe,
        step: &RequestStep,
        status: u16,
        (head, headers): (&[u8], &[(&str, &str)]),
        elapsed: Duration,
        mut error: Option<ErrorKind>,
    ) -> (Option<ErrorKind>, Option<&'static str>, Option<u16>) {
        self.body_decoded = false;
        let body: &[u8] = if step.needs_body {
            match headroom_http::content_encoding::decode(headers, &self.body, &mut self.decoded) {
                Ok(true) => {
                    self.body_decoded = true;
                    &self.decoded
                }
                Ok(false) => &self.body,
                Err(why) => return (Some(ErrorKind::Protocol), Some(why), None),
            }
        } else {
            &self.body
        };
        let response = Response {
            status,
            headers,
            head,
            body,
            elapsed,
        };
        let mut failed_check = None;
        let mut ctx = RenderContext {
            vars: &self.vars,
            vu: self.vu,
            iteration: self.iteration,
            rng: &mut self.rng,
        };
        for check in &step.checks {
            let passed = check.passes(&response, &mut ctx, &mut self.scratch);
            host.record_check(check.id, passed);
            if !passed && failed_check.is_none() {
                failed_check = Some(check.id);
            }
            // A status the step expects (e.g. `status: 404`) is not an error.
            if passed && matches!(check.kind, super::extract::CheckKind::Status(_)) {
                error = None;
            }
        }
        for extractor in &step.extract {
            let outcome = extractor.apply(
                &response,
                &self.jar,
                &mut self.vars,
                &mut self.rng,
                self.vu,
                self.iteration,
            );
            if observe == Observe::Everything {
                self.extracted.push(Extracted {
                    name: extractor.name.clone(),
                    value: self.vars[extractor.into].clone(),
                    matched: outcome == Ok(true),
                });
            }
            if let Some(check) = extractor.check {
                host.record_check(check, outcome.is_ok());
                if outcome.is_err() && failed_check.is_none() {
                    failed_check = Some(check);
                }
            }
        }
        if failed_check.is_some() && error.is_none() {
            error = Some(ErrorKind::Check);
        }
        (error, None, failed_check)
    }

    async fn step(
        &mut self,
        host: &impl JourneyHost,
        step: &RequestStep,
        intended: Option<Instant>,
    ) {
        let plan = self.plan.clone();
        let observe = host.observe(step.label);
        if observe == Observe::Everything {
            self.hops.clear();
            self.extracted.clear();
        }
        let started = Instant::now();
        let intended_start = intended.unwrap_or(started);
        // The path buffer is lent to the hop and given back below, so its
        // capacity is reused from step to step.
        let mut path = std::mem::take(&mut self.path);
        self.render_path(step, &mut path);
        let link = if step.path.starts_with_var() {
            follow_link(&plan.scenario, step.origin, &mut path)
        } else {
            Ok(step.origin)
        };
        let mut hop = Hop {
            origin: *link.as_ref().unwrap_or(&step.origin),
            path,
            method_get: false,
        };
        self.body.clear();
        self.body_truncated = false;
        let mut outcome = Outcome::default();
        match link {
            Ok(_) => {
                self.follow_hops(&plan, step, observe, &mut hop, &mut outcome)
                    .await
            }
            Err(why) => {
                outcome.error = Some(ErrorKind::Request);
                outcome.detail = Some(why);
            }
        }
        let end = Instant::now();
        let failed_check = self.judge(host, observe, step, end - intended_start, &mut outcome);
        let sample = Sample {
            label: step.page.as_ref().map_or(step.label, |page| page.html),
            vu: self.vu,
            intended_start,
            actual_start: started,
            connect: outcome.connect,
            tls: outcome.tls,
            first_byte: outcome.first_byte,
            end,
            status: outcome.status,
            bytes_received: outcome.received,
            bytes_sent: outcome.sent,
            error: outcome.error,
            failed_check,
            detail: outcome.detail,
            resent: outcome.resent,
            server_timing: outcome.server_timing,
        };
        host.record(&sample);
        let sample = match &step.page {
            Some(page) => {
                self.load_page(host, &plan, (step.label, page), &hop, sample)
                    .await
            }
            None => sample,
        };
        if observe == Observe::Everything
            || (observe == Observe::Failures && sample.error.is_some())
        {
            self.show(host, step, &sample);
        }
        hop.path.clear();
        self.path = hop.path;
        self.account_and_think(host, step, &plan, &sample).await;
    }

    /// A page load after its document came: the resources the HTML names,
    /// fetched through the user's cache; records and returns the page's
    /// sample (the document's status, error and check; its time until the
    /// last resource ended; the bytes of all).
    async fn load_page(
        &mut self,
        host: &impl JourneyHost,
        plan: &JourneyPlan,
        (label, page): (u16, &PageLoad),
        hop: &Hop,
        document: Sample,
    ) -> Sample {
        let mut sample = Sample { label, ..document };
        let came = matches!(document.error, None | Some(ErrorKind::Check))
            && (200..300).contains(&document.status);
        let url = url::Url::parse(&format!(
            "{}{}",
            OriginUrl(&plan.scenario.origins[hop.origin]),
            hop.path
        ));
        if let (true, Ok(url)) = (came && self.is_html(), url) {
            let body = if self.body_decoded {
                &self.decoded
            } else {
                &self.body
            };
            let html = String::from_utf8_lossy(body).into_owned();
            let headers = self.rendered_headers(plan);
            let also_loads = self.rendered_also_loads(page);
            let mut state = self
                .page_state
                .take()
                .unwrap_or_else(|| PageState::new(plan.scenario.origins.len()));
            let page = Page {
                url,
                html: &html,
                label: page.resources,
                vu: self.vu,
                also_loads: &also_loads,
            };
            let record = |sample: &Sample| host.record(sample);
            let ctx = page::Context {
                scenario: &plan.scenario,
                connectors: &plan.connectors,
                record: &record,
            };
            let outcome = page::load(
                &ctx,
                &page,
                &headers,
                &mut state,
                &mut self.clients,
                &mut self.jar,
            )
            .await;
            self.page_state = Some(state);
            if let Some(end) = outcome.end {
                sample.end = sample.end.max(end);
            }
            sample.bytes_received += outcome.bytes_received;
            sample.bytes_sent += outcome.bytes_sent;
            // A page whose resource failed failed (JMeter's default): the
            // document's own error or failed check, if any, comes first.
            if outcome.failed > 0 && sample.error.is_none() {
                sample.error = Some(ErrorKind::Resource);
                sample.detail = Some(resource_failed(outcome.failures.first().map(|f| f.error)));
            }
            self.last_page = Some(outcome);
        }
        host.record(&sample);
        sample
    }

    /// Whether the last response is HTML (or says nothing of its type).
    fn is_html(&self) -> bool {
        with_response(&self.head, |parsed, _| {
            parsed
                .headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case("content-type"))
                .is_none_or(|h| {
                    let value = String::from_utf8_lossy(h.value).to_ascii_lowercase();
                    value.contains("html")
                })
        })
        .ok()
        .flatten()
        .unwrap_or(false)
    }

    /// The step's `also_loads:`, rendered, each value split at white space
    /// (a data column may hold a page's several).
    fn rendered_also_loads(&mut self, page: &PageLoad) -> Vec<String> {
        let mut ctx = RenderContext {
            vars: &self.vars,
            vu: self.vu,
            iteration: self.iteration,
            rng: &mut self.rng,
        };
        let mut out = Vec::new();
        for template in &page.also_loads {
            let mut text = String::new();
            template.render_into(&mut text, &mut ctx, plain);
            out.extend(text.split_whitespace().map(str::to_string));
        }
        out
    }

    /// The scenario's `defaults: headers:` as a resource request sends
    /// them, rendered once for the page.
    fn rendered_headers(&mut self, plan: &JourneyPlan) -> String {
        let mut out = String::new();
        let mut ctx = RenderContext {
            vars: &self.vars,
            vu: self.vu,
            iteration: self.iteration,
            rng: &mut self.rng,
        };
        for (name, value) in &plan.scenario.headers {
            let mut text = String::new();
            value.render_into(&mut text, &mut ctx, plain);
            if !text.contains(['\r', '\n', '\0']) {
                out.push_str(&format!("{name}: {text}\r\n"));
            }
        }
        out
    }

    /// Sends the step's request and follows its redirects (when the step
    /// does), hop by hop, adding each exchange to `outcome`. Ends with the
    /// last hop's response head in `self.head` and its body in `self.body`.
    async fn follow_hops(
        &mut self,
        plan: &JourneyPlan,
        step: &RequestStep,
        observe: Observe,
        hop: &mut Hop,
        outcome: &mut Outcome,
    ) {
        let mut redirects = 0;
        loop {
            let origin = &plan.scenario.origins[hop.origin];
            if let Err(why) = self.build_request(step, origin, &hop.path, hop.method_get) {
                outcome.status = 0;
                outcome.error = Some(ErrorKind::Request);
                outcome.detail = Some(why);
                return;
            }
            if redirects > 0 {
                headroom_http::sent::redirect_followed();
            }
            let result = self.send_hop(plan, step, observe, hop).await;
            outcome.add(&result);
            if result.error.is_some() {
                outcome.error = result.error;
                outcome.detail = result.detail;
                return;
            }
            let location = self.store_cookies(origin, &hop.path);
            let redirect =
                step.follow_redirects && matches!(outcome.status, 301 | 302 | 303 | 307 | 308);
            let Some(location) = location.filter(|_| redirect) else {
                return;
            };
            if redirects == MAX_REDIRECTS {
                outcome.error = Some(ErrorKind::Redirects);
                outcome.detail = Some(TOO_MANY_REDIRECTS);
                return;
            }
            redirects += 1;
            match resolve(
                &plan.scenario.origins,
                origin,
                hop.origin,
                &hop.path,
                &location,
            ) {
                Some((origin, path)) => {
                    *hop = Hop {
                        origin,
                        path,
                        method_get: hop.method_get || matches!(outcome.status, 301..=303),
                    };
                    self.body.clear();
                    self.body_truncated = false;
                }
                // A host the scenario does not name: the step ends with the 3xx.
                None => return,
            }
        }
    }

    /// Sends the request built in `self.request` on the hop's origin's
    /// client; keeps the head in `self.head` and as much of the body in
    /// `self.body` as the step reads or the host observes.
    async fn send_hop(
        &mut self,
        plan: &JourneyPlan,
        step: &RequestStep,
        observe: Observe,
        hop: &Hop,
    ) -> Exchange {
        let origin = &plan.scenario.origins[hop.origin];
        let client = self.clients[hop.origin].get_or_insert_with(|| {
            HttpClient::new(plan.connectors[hop.origin].clone(), plan.scenario.timeout)
        });
        let method = if hop.method_get {
            "GET"
        } else {
            step.method.as_str()
        };
        let outgoing = Outgoing {
            bytes: &self.request,
            is_head: method == "HEAD",
            keep_alive: plan.scenario.keep_alive && !step.close_connection,
        };
        let body = &mut self.body;
        let keep_body = step.needs_body;
        // Beyond what the step reads, an observed body is kept up to its limit.
        let limit = match observe {
            Observe::Nothing => 0,
            Observe::Failures => BODY_LIMIT,
            Observe::Everything => usize::MAX,
        };
        let truncated = &mut self.body_truncated;
        self.head.clear();
        let sent_at = Instant::now();
        let result = client
            .send(
                outgoing,
                sent_at,
                &mut |_, chunk| {
                    if keep_body {
                        body.extend_from_slice(chunk)
                    } else if limit > 0 {
                        let room = limit.saturating_sub(body.len()).min(chunk.len());
                        *truncated |= room < chunk.len();
                        body.extend_from_slice(&chunk[..room]);
                    }
                },
                Some(&mut self.head),
            )
            .await;
        if observe == Observe::Everything {
            self.hops.push(HopRecord {
                url: format!("{}{}", OriginUrl(origin), hop.path),
                request: self.request.clone(),
                // A head that came before the exchange failed is shown.
                status: if self.head.is_empty() {
                    0
                } else {
                    result.status
                },
                head: self.head.clone(),
                elapsed: sent_at.elapsed(),
            });
        }
        result
    }

    /// Stores the cookies the head in `self.head` sets and returns its
    /// `Location`, if any.
    #[inline]
    fn store_cookies(&mut self, origin: &Target, hop_path: &str) -> Option<String> {
        let mut location: Option<String> = None;
        let jar = &mut self.jar;
        let _ = with_response(&self.head, |response, _| {
            for h in response.headers.iter() {
                if h.name.eq_ignore_ascii_case("set-cookie") {
                    if let Ok(value) = std::str::from_utf8(h.value) {
                        jar.store(value, &origin.host, hop_path, SystemTime::now());
                    }
                } else if h.name.eq_ignore_ascii_case("location") {
                    location = std::str::from_utf8(h.value).ok().map(str::to_string);
                }
            }
        });
        location
    }

    /// The step's verdict on its last response: an error from its status,
    /// then (for a response that came, errors 4xx/5xx included) the body
    /// read, checks and extractions. Returns the first failed check.
    fn judge(
        &mut self,
        host: &impl JourneyHost,
        observe: Observe,
        step: &RequestStep,
        elapsed: Duration,
        outcome: &mut Outcome,
    ) -> Option<u16> {
        if outcome.error.is_none() {
            outcome.error = status_error(outcome.status);
        }
        if !(outcome.error.is_none()
            || matches!(outcome.error, Some(ErrorKind::Http4xx | ErrorKind::Http5xx)))
        {
            return None;
        }
        let (status, error) = (outcome.status, outcome.error);
        let head = std::mem::take(&mut self.head);
        let read = with_response(&head, |parsed, _| {
            let mut stack = [("", ""); STACK_HEADERS];
            let mut heap = Vec::new();
            let pairs = header_pairs(parsed.headers, &mut stack, &mut heap);
            self.read_response(host, observe, step, status, (&head, pairs), elapsed, error)
        });
        self.head = head;
        // The client parsed this head already, so it reads again.
        let Ok(Some((read_error, read_detail, check))) = read else {
            return None;
        };
        outcome.error = read_error;
        outcome.detail = read_detail.or(outcome.detail);
        check
    }

    /// Adds the finished step to its enclosing groups, then thinks: the
    /// step's think time, or the scenario's.
    async fn account_and_think(
        &mut self,
        host: &impl JourneyHost,
        step: &RequestStep,
        plan: &JourneyPlan,
        sample: &Sample,
    ) {
        let think = if host.skips_think() {
            Duration::ZERO
        } else {
            step.think.unwrap_or(plan.think).pick(&mut self.rng)
        };
        for group in &mut self.groups {
            group.elapsed += sample.response_time();
            group.failed |= sample.error.is_some();
            group.bytes_received += sample.bytes_received;
            group.bytes_sent += sample.bytes_sent;
        }
        if !think.is_zero() {
            host.record_think(step.label, think);
            tokio::time::sleep(think).await;
            for group in self.groups.iter_mut().filter(|g| g.include_think) {
                group.elapsed += think;
            }
        }
    }
}

/// What a step's exchanges (its request and the redirects it followed)
/// add up to.
#[derive(Default)]
struct Outcome {
    connect: Duration,
    /// The first TLS handshake of its hops.
    tls: Option<TlsHandshake>,
    first_byte: Option<Instant>,
    received: u64,
    sent: u64,
    status: u16,
    error: Option<ErrorKind>,
    detail: Option<&'static str>,
    resent: bool,
    /// The last hop's Server-Timing (the page's own, after redirects).
    server_timing: ServerTiming,
}

impl Outcome {
    /// Adds one hop's exchange: its times and bytes; its status replaces
    /// the previous hop's.
    #[inline]
    fn add(&mut self, exchange: &Exchange) {
        self.connect += exchange.connect;
        self.tls = self.tls.or(exchange.tls);
        self.first_byte = self.first_byte.or(exchange.first_byte);
        self.received += exchange.bytes_received;
        self.sent += exchange.bytes_sent;
        self.status = exchange.status;
        self.resent |= exchange.resent;
        self.server_timing = exchange.server_timing;
    }
}

impl Journey {
    /// Hands a finished step to the host: its last request and response,
    /// the body decoded when it came compressed and whole.
    fn show(&mut self, host: &impl JourneyHost, step: &RequestStep, sample: &Sample) {
        let head = std::mem::take(&mut self.head);
        let (decoded, encoding) = with_response(&head, |parsed, _| {
            let mut stack = [("", ""); STACK_HEADERS];
            let mut heap = Vec::new();
            let pairs = header_pairs(parsed.headers, &mut stack, &mut heap);
            let encoding = pairs
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("content-encoding"))
                .map(|(_, v)| v.trim().to_string());
            if self.body_truncated {
                return (false, encoding);
            }
            match headroom_http::content_encoding::decode(pairs, &self.body, &mut self.decoded) {
                Ok(decoded) => (decoded, None),
                Err(_) => (false, encoding),
            }
        })
        .ok()
        .flatten()
        .unwrap_or((false, None));
        let plan = self.plan.clone();
        let check = sample
            .failed_check
            .and_then(|c| plan.scenario.checks.get(c as usize))
            .map(String::as_str);
        let page = self.last_page.take();
        host.exchange(&StepView {
            step,
            sample,
            iteration: self.iteration,
            check,
            request: &self.request,
            head: &head,
            body: if decoded { &self.decoded } else { &self.body },
            body_truncated: self.body_truncated,
            body_encoding: encoding.as_deref(),
            hops: &self.hops,
            extracted: &self.extracted,
            page: page.as_ref(),
        });
        self.head = head;
    }
}

/// A path that starts with a variable is a link taken from a response
/// (`path: ${next}`): an absolute URL goes to the origin it names, a
/// relative one is relative to the base URL's path, and one to a host the
/// scenario does not name, or an empty one, is not sent. `path` holds the
/// rendered path (after the base path, for the base origin) and becomes
/// the request target; returns the origin.
fn follow_link(
    scenario: &Scenario,
    origin: usize,
    path: &mut String,
) -> Result<usize, &'static str> {
    let prefix = if origin == 0 {
        scenario.base_path.len()
    } else {
        0
    };
    let link = &path[prefix.min(path.len())..];
    if link.is_empty() {
        return Err(
            "the path is empty: the variable that starts it has no value (or only a #fragment)",
        );
    }
    // A scheme: letters (and + - .) before a ':' that comes before any '/'.
    let scheme = link.split_once(':').map(|(scheme, _)| scheme).filter(|s| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    });
    if let Some(scheme) = scheme {
        if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
            return Err("the link is not an http:// or https:// URL (mailto:, javascript:, ...)");
        }
    }
    let absolute = link.starts_with("//") || scheme.is_some();
    if absolute {
        let current = &scenario.origins[origin];
        let (to, target) = resolve(&scenario.origins, current, origin, "/", link)
            .ok_or("the link leads to a host the scenario does not name: add a step with url: on that host")?;
        *path = target;
        return Ok(to);
    }
    if !link.starts_with('/') {
        // Relative to the base URL's directory, as a browser on that page.
        let relative = link.to_string();
        path.truncate(prefix);
        path.push('/');
        path.push_str(&relative);
    }
    Ok(origin)
}

/// Where a `Location` points: one of the scenario's origins and a path,
/// or `None` for a host the scenario does not name.
fn resolve(
    origins: &[Target],
    origin: &Target,
    origin_index: usize,
    current: &str,
    location: &str,
) -> Option<(usize, String)> {
    // The fragment stays in the browser: it is never sent.
    let location = location.split('#').next().unwrap_or_default();
    if location.is_empty() {
        return Some((origin_index, current.to_string()));
    }
    let absolute = if let Some(rest) = location.strip_prefix("//") {
        Some(format!(
            "{}//{rest}",
            if origin.scheme == Scheme::Https {
                "https:"
            } else {
                "http:"
            }
        ))
    } else if has_http_scheme(location) {
        Some(location.to_string())
    } else {
        None
    };
    if let Some(url) = absolute {
        let target = Target::parse(&url).ok()?;
        let index = origins.iter().position(|o| {
            o.scheme == target.scheme && o.host == target.host && o.port == target.port
        })?;
        return Some((index, target.path_and_query));
    }
    if location.starts_with('/') {
        let mut path = String::with_capacity(location.len());
        url_encode_invalid(&mut path, location);
        return Some((origin_index, path));
    }
    // Relative to the current path's directory.
    let base = current.split('?').next().unwrap_or("/");
    let dir = &base[..base.rfind('/').map_or(0, |i| i + 1)];
    let mut path = dir.to_string();
    url_encode_invalid(&mut path, location);
    Some((origin_index, path))
}

/// A parsed head's headers as text pairs: in `stack` when they fit, else in
/// `heap`. Values that are not UTF-8 are left out.
fn header_pairs<'h, 'p>(
    headers: &'h [httparse::Header<'h>],
    stack: &'p mut [(&'h str, &'h str); STACK_HEADERS],
    heap: &'p mut Vec<(&'h str, &'h str)>,
) -> &'p [(&'h str, &'h str)] {
    let text = headers
        .iter()
        .filter_map(|h| Some((h.name, std::str::from_utf8(h.value).ok()?)));
    if headers.len() <= STACK_HEADERS {
        let mut n = 0;
        for pair in text {
            stack[n] = pair;
            n += 1;
        }
        &stack[..n]
    } else {
        heap.extend(text);
        heap
    }
}

/// `http://` or `https://` at the start, in any case (schemes are
/// case-insensitive).
fn has_http_scheme(url: &str) -> bool {
    let starts = |prefix: &str| {
        url.get(..prefix.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(prefix))
    };
    starts("http://") || starts("https://")
}

fn row_at(data: &DataSpec, n: usize) -> Option<&Vec<String>> {
    at_cycle(n, data.rows.len(), data.recycle).and_then(|n| data.rows.get(n))
}

/// The `n`-th of `count` things taken in turn: past the last, from the
/// first again when they recycle, else none.
fn at_cycle(n: usize, count: usize, recycle: bool) -> Option<usize> {
    if n < count {
        Some(n)
    } else if recycle && count > 0 {
        Some(n % count)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirects_drop_the_fragment() {
        let origin = Target::parse("http://127.0.0.1:8080/").unwrap();
        let origins = vec![origin.clone()];
        let hop = |location: &str| resolve(&origins, &origin, 0, "/mod/forum/post.php", location);
        assert_eq!(
            hop("/mod/forum/discuss.php?d=3#p21"),
            Some((0, "/mod/forum/discuss.php?d=3".to_string()))
        );
        assert_eq!(
            hop("http://127.0.0.1:8080/a?b=1#c"),
            Some((0, "/a?b=1".to_string()))
        );
        assert_eq!(
            hop("view.php#top"),
            Some((0, "/mod/forum/view.php".to_string()))
        );
        assert_eq!(hop("#top"), Some((0, "/mod/forum/post.php".to_string())));
        assert_eq!(hop("http://elsewhere/"), None);
        assert_eq!(
            hop("HTTP://127.0.0.1:8080/up"),
            Some((0, "/up".to_string()))
        );
    }
}
