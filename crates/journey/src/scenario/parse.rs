//! From YAML to a checked [`Scenario`]. Every error names file:line:column
//! and says how to fix it. Two passes: the first collects every variable
//! name (from `variables:`, data columns and `extract:` anywhere), the
//! second compiles templates against that table, so a step may use a value
//! that a later step extracts (from the previous iteration).

use super::extract::{Check, CheckKind, ExtractKind, Extractor, Field, Pattern, Pick};
use super::template::{RenderContext, Template, VarId, VarTable};
use super::{
    Body, Condition, DataSpec, LabelInfo, LabelKind, Node, NodeFlags, PageLoad, Phase, RequestStep,
    Scenario, ScenarioProfile, StageKind, Visits,
};
use crate::profile::Think;
use crate::yaml::{kind_of, read_text, Doc, LocatedError};
use headroom_http::target::Target;
use marked_yaml::types::MarkedMappingNode;
use marked_yaml::{Node as Yaml, Span};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A problem in a scenario file, with its location.
pub type ScenarioError = LocatedError;

type Res<T> = Result<T, ScenarioError>;

/// A data file read through the size limit.
type DataReader = csv::Reader<std::io::Take<std::fs::File>>;

/// Whether a step reads its response's body: an extractor or a check
/// that looks into it.
fn needs_body(extract: &[Extractor], checks: &[Check]) -> bool {
    extract.iter().any(|e: &Extractor| {
        matches!(
            e.kind,
            ExtractKind::Regex { .. } | ExtractKind::Css { .. } | ExtractKind::JsonPointer(_)
        )
    }) || checks.iter().any(|c: &Check| {
        matches!(
            c.kind,
            CheckKind::Contains(_) | CheckKind::NotContains(_) | CheckKind::Matches(_)
        )
    })
}

/// Reads and checks a scenario file. `target` replaces the file's base URL
/// (`--target`).
pub fn parse_file(path: &Path, target: Option<&Target>) -> Res<Scenario> {
    let text = read_text(
        path,
        MAX_SCENARIO_BYTES,
        "the scenario",
        "Keep large data in a data: CSV file",
    )?;
    parse_str(&text, path, target)
}

/// Largest scenario file read: journeys are a few kB; a file this large is
/// a mistake (or data that belongs in a CSV file), and YAML parsing of it
/// would take seconds and gigabytes.
pub const MAX_SCENARIO_BYTES: u64 = 4_000_000;

/// Largest data file read (held in memory: a million rows of user and
/// password take about 30 MB).
pub const MAX_DATA_BYTES: u64 = 100_000_000;

/// Checks scenario text; `path` names it in messages and anchors relative data files.
pub fn parse_str(text: &str, path: &Path, target: Option<&Target>) -> Res<Scenario> {
    parse_journey(text, path, target, None)
}

/// As [`parse_str`]; `default_base` is the base URL of a file without its
/// own (a mix's `defaults: base_url:`), where `target` replaces every one.
pub(super) fn parse_journey(
    text: &str,
    path: &Path,
    target: Option<&Target>,
    default_base: Option<&Target>,
) -> Res<Scenario> {
    let parser = Parser {
        doc: Doc {
            file: path.to_path_buf(),
        },
        file: path.to_path_buf(),
        dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        vars: VarTable::default(),
        labels: Vec::new(),
        checks: Vec::new(),
        requests: Vec::new(),
        origins: Vec::new(),
        has_base: false,
        page_loads: false,
        resource_hosts: Vec::new(),
        default_base: default_base.cloned(),
    };
    let root = parser.doc.parse(
        text,
        "the file must be a mapping of keys such as steps: and defaults:",
    )?;
    parser.scenario(&root, target)
}

/// A `profile:` mapping of the file at `path` (a mix's).
pub(super) fn parse_profile(path: &Path, node: &Yaml) -> Res<ScenarioProfile> {
    let parser = Parser {
        doc: Doc {
            file: path.to_path_buf(),
        },
        file: path.to_path_buf(),
        dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        vars: VarTable::default(),
        labels: Vec::new(),
        checks: Vec::new(),
        requests: Vec::new(),
        origins: Vec::new(),
        has_base: false,
        page_loads: false,
        resource_hosts: Vec::new(),
        default_base: None,
    };
    parser.profile(node)
}

const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "defaults",
    "variables",
    "data",
    "accounts",
    "think",
    "cookies",
    "profile",
    "before",
    "peak",
    "steps",
];
const BEFORE_KEYS: &[&str] = &["name", "users", "iterations", "steps"];
const DEFAULT_KEYS: &[&str] = &[
    "base_url",
    "headers",
    "timeout",
    "follow_redirects",
    "keep_alive",
    "http",
    "page_loads",
    "resource_hosts",
];
const DATA_KEYS: &[&str] = &["file", "columns", "header", "share", "on_end", "visits"];
/// `accounts:` has no cursor to set: user n takes row n.
const ACCOUNT_KEYS: &[&str] = &["file", "columns", "header"];
const PROFILE_KEYS: &[&str] = &[
    "model",
    "users",
    "ramp_up",
    "duration",
    "iterations",
    "rate",
    "max_vus",
    "throughput",
    "stages",
    "session",
    "students",
    "arrive_within",
];
const STAGE_KEYS: &[&str] = &["duration", "users", "rate"];
const REQUEST_KEYS: &[&str] = &[
    "label",
    "method",
    "path",
    "url",
    "query",
    "headers",
    "form",
    "body",
    "json",
    "extract",
    "check",
    "think",
    "follow_redirects",
    "keep_alive",
    "page_load",
    "also_loads",
    "once",
    "if",
];
const GROUP_KEYS: &[&str] = &["group", "steps", "include_think", "once", "if"];
const LOOP_KEYS: &[&str] = &["loop", "steps", "once", "if"];
const BLOCK_KEYS: &[&str] = &["steps", "once", "if"];
const EXTRACT_KEYS: &[&str] = &[
    "name", "regex", "group", "match", "decode", "css", "json", "header", "cookie", "default",
    "required",
];
const CHECK_KEYS: &[&str] = &[
    "name",
    "status",
    "contains",
    "not_contains",
    "matches",
    "not_matches",
    "max_time",
    "in",
];
const IF_KEYS: &[&str] = &["var", "set", "equals", "matches"];

/// `defaults:` as a scenario applies them.
struct Defaults {
    headers: Vec<(String, Template)>,
    timeout: Duration,
    http: Option<headroom_http::protocol::HttpChoice>,
    keep_alive: bool,
    new_connections_each_iteration: bool,
    follow_redirects: bool,
    /// The base URL's path, without a trailing `/`.
    base_path: String,
}

struct Parser {
    doc: Doc,
    file: PathBuf,
    dir: PathBuf,
    vars: VarTable,
    labels: Vec<LabelInfo>,
    checks: Vec<String>,
    requests: Vec<RequestStep>,
    origins: Vec<Target>,
    has_base: bool,
    /// `defaults: page_loads:`, for steps without their own `page_load:`.
    page_loads: bool,
    resource_hosts: Vec<String>,
    /// The base URL when the file has none (a mix's, for its journeys).
    default_base: Option<Target>,
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with("__")
}

impl Parser {
    /// Computed `variables:` are rendered in the file's order each
    /// iteration: one that uses itself would grow every iteration, and one
    /// that uses a computed variable below it would get that variable's
    /// previous iteration (empty in the first).
    fn computed_in_order(&self, computed: &[(VarId, Template)], nodes: &[&Yaml]) -> Res<()> {
        for (i, ((id, template), node)) in computed.iter().zip(nodes).enumerate() {
            let name = |v: VarId| self.vars.names()[v].clone();
            if template.vars().any(|v| v == *id) {
                return Err(self.doc.at(
                    node.span(),
                    format!(
                        "a variable's value: '{}' uses itself, so it would grow every iteration: give it a value without ${{{}}}",
                        name(*id),
                        name(*id)
                    ),
                ));
            }
            if let Some((later, _)) = computed[i + 1..]
                .iter()
                .find(|(later, _)| template.vars().any(|v| v == *later))
            {
                return Err(self.doc.at(
                    node.span(),
                    format!(
                        "a variable's value: '{}' uses '{}', which is computed below it (variables are rendered in the file's order each iteration, so it would get the previous iteration's, empty in the first): move '{}' above '{}'",
                        name(*id),
                        name(*later),
                        name(*later),
                        name(*id)
                    ),
                ));
            }
        }
        Ok(())
    }

    fn template(&self, node: &Yaml, what: &str) -> Res<Template> {
        let s = self.doc.scalar(node, what)?;
        Template::compile(s.as_str(), &self.vars)
            .map_err(|e| self.doc.at(s.span(), format!("{what}: {}", e.message)))
    }

    /// A regex that may hold `${var}`: checked now with every variable
    /// standing for a plain word, compiled again when it runs.
    fn pattern(&self, node: &Yaml, what: &str) -> Res<Pattern> {
        let template = self.template(node, what)?;
        if template.is_constant() {
            return Ok(Pattern::Fixed(self.regex(node, what)?));
        }
        let mut probe = String::new();
        let placeholders = vec!["x".to_string(); self.vars.len()];
        let mut rng = headroom_units::rng::Rng::new(1, 1);
        let mut ctx = RenderContext {
            vars: &placeholders,
            vu: 1,
            iteration: 1,
            rng: &mut rng,
        };
        template.render_into(&mut probe, &mut ctx, super::template::regex_escape);
        regex::Regex::new(&probe).map_err(|e| {
            let first = e.to_string().lines().last().unwrap_or_default().trim().to_string();
            self.doc.at(node.span(), format!("{what} is not a valid regular expression ({first}); in YAML, quote it with single quotes"))
        })?;
        Ok(Pattern::Templated(template))
    }

    /// A template whose literal text may not hold a line break or NUL: a
    /// header value or a request path, where it would start a new line of
    /// the request.
    fn one_line_template(&self, node: &Yaml, what: &str) -> Res<Template> {
        let template = self.template(node, what)?;
        if template
            .literals()
            .any(|text| text.contains(['\r', '\n', '\0']))
        {
            return Err(self.doc.at(
                node.span(),
                format!(
                    "{what} contains a line break or NUL, which would split the request: remove it"
                ),
            ));
        }
        Ok(template)
    }

    fn regex(&self, node: &Yaml, what: &str) -> Res<regex::Regex> {
        let s = self.doc.scalar(node, what)?;
        regex::Regex::new(s.as_str()).map_err(|e| {
            let first = e.to_string().lines().last().unwrap_or_default().trim().to_string();
            self.doc.at(s.span(), format!("{what} is not a valid regular expression ({first}); in YAML, quote it with single quotes"))
        })
    }

    fn think(&self, node: &Yaml, what: &str) -> Res<Think> {
        match node {
            Yaml::Mapping(map) => {
                self.doc.keys(map, &["mean", "deviation"], what)?;
                let mean = map.get_node("mean").ok_or_else(|| {
                    self.doc.at(
                        self.doc.map_at(map),
                        format!("{what}: a gaussian think time needs mean: and deviation:"),
                    )
                })?;
                let deviation = map.get_node("deviation").ok_or_else(|| {
                    self.doc.at(
                        self.doc.map_at(map),
                        format!("{what}: a gaussian think time needs deviation:"),
                    )
                })?;
                Ok(Think::Gaussian {
                    mean: self.doc.duration(mean, "mean")?,
                    deviation: self.doc.duration(deviation, "deviation")?,
                })
            }
            _ => {
                let s = self.doc.scalar(node, what)?;
                Think::parse(s.as_str()).map_err(|e| {
                    self.doc.at(
                        s.span(),
                        format!("{what}: {e}; write 2s, 1s..3s, exp:30s, lognormal:30s,20s, normal:30s,10s, or mean: and deviation:"),
                    )
                })
            }
        }
    }

    fn scenario(mut self, root: &Yaml, target: Option<&Target>) -> Res<Scenario> {
        let (top, steps_node) = self.top_and_steps(root)?;

        // Pass 1: every variable name.
        let initial_values = self.declare_variables(top)?;
        let data = match top.get_node("data") {
            Some(node) => Some(self.data(node)?),
            None => None,
        };
        let accounts = match top.get_node("accounts") {
            Some(node) => Some(self.accounts(node, data.as_ref())?),
            None => None,
        };
        self.declare_extracted(steps_node)?;
        let before_node = top.get_node("before");
        if let Some(node) = before_node {
            self.declare_before(node)?;
        }

        // Pass 2: everything else, the variables' values first. A value is a
        // template: constant text is the variable's initial value; one with
        // `${...}` is rendered each iteration.
        let (values, computed) = self.variable_values(initial_values)?;
        let Defaults {
            headers,
            timeout,
            http,
            keep_alive,
            new_connections_each_iteration,
            follow_redirects,
            mut base_path,
        } = self.defaults(top)?;
        let default_base = self.default_base.take();
        let target = target.or(default_base.as_ref().filter(|_| !self.has_base));
        if let Some(target) = target {
            base_path = self.take_target(target);
        }
        let think = match top.get_node("think") {
            Some(node) => self.think(node, "think")?,
            None => Think::None,
        };
        let clear_cookies_each_iteration = self.cookies(top)?;
        let peak = match top.get_node("peak") {
            Some(node) => Some(super::peak::parse_peak(&self.doc, node)?),
            None => None,
        };
        let profile = match top.get_node("profile") {
            Some(node) => self.profile(node)?,
            None => ScenarioProfile::default(),
        };
        self.check_steps(steps_node)?;
        let before = match before_node {
            Some(node) => Some(self.before(node, &profile, follow_redirects)?),
            None => None,
        };
        let flow = self.nodes(steps_node, follow_redirects)?;
        let mut initial = vec![String::new(); self.vars.len()];
        for (id, value) in values {
            initial[id] = value;
        }
        Ok(Scenario {
            source: self.file,
            name: top.get_scalar("name").map(|s| s.as_str().to_string()),
            vars: self.vars,
            initial,
            computed,
            origins: self.origins,
            base_path,
            headers,
            timeout,
            http,
            keep_alive,
            new_connections_each_iteration,
            data,
            accounts,
            think,
            clear_cookies_each_iteration,
            labels: self.labels,
            checks: self.checks,
            requests: self.requests,
            flow,
            profile,
            before,
            peak,
            resource_hosts: crate::page_load::resources::Hosts::new(self.resource_hosts),
        })
    }

    /// The scenario's top mapping and its steps; refused when the file is
    /// a mix, has a key a scenario does not know, or has no steps.
    fn top_and_steps<'y>(&self, root: &'y Yaml) -> Res<(&'y MarkedMappingNode, &'y Yaml)> {
        let top = self.doc.mapping(root, "the scenario")?;
        if let Some((key, _)) = top.iter().find(|(k, _)| k.as_str() == "mix") {
            return Err(self.doc.at(
                key.span(),
                "this file is a mix of journeys (mix:), and a single scenario is needed here: \
                 name one of its journey files instead",
            ));
        }
        self.doc.keys(top, TOP_KEYS, "the scenario")?;
        let steps_node = top.get_node("steps").ok_or_else(|| {
            self.doc.at(
                self.doc.map_at(top),
                "the scenario has no steps: add a steps: list with at least one request",
            )
        })?;
        Ok((top, steps_node))
    }

    /// Pass 1 of `before:`: its keys checked, the names its steps extract
    /// declared.
    fn declare_before(&mut self, node: &Yaml) -> Res<()> {
        let map = self.doc.mapping(node, "before")?;
        self.doc.keys(map, BEFORE_KEYS, "before")?;
        if let Some(steps) = map.get_node("steps") {
            self.declare_extracted(steps)?;
        }
        Ok(())
    }

    /// Makes `target` the scenario's base URL, the first origin; returns
    /// its base path.
    fn take_target(&mut self, target: &Target) -> String {
        let base_path = target.path_and_query.trim_end_matches('/').to_string();
        if self.has_base {
            self.origins[0] = target.clone();
        } else {
            self.origins.insert(0, target.clone());
            self.has_base = true;
        }
        base_path
    }

    /// Pass 1 of `variables:`: each name declared; its value node, for
    /// pass 2.
    fn declare_variables<'y>(&mut self, top: &'y MarkedMappingNode) -> Res<Vec<(VarId, &'y Yaml)>> {
        let mut initial_values: Vec<(VarId, &Yaml)> = Vec::new();
        if let Some(node) = top.get_node("variables") {
            let map = self.doc.mapping(node, "variables")?;
            for (key, value) in map.iter() {
                if !valid_name(key.as_str()) {
                    return Err(self.doc.at(key.span(), format!("'{}' is not a valid variable name: use letters, digits and _, not starting with a digit or __", key.as_str())));
                }
                self.doc.scalar(value, "a variable's value")?;
                let id = self.vars.declare(key.as_str());
                initial_values.push((id, value));
            }
        }
        Ok(initial_values)
    }

    /// Pass 2 of `variables:`. A value is a template: constant text is the
    /// variable's initial value; one with `${...}` is rendered each
    /// iteration (in an order where each reads only earlier ones).
    #[allow(clippy::type_complexity)]
    fn variable_values(
        &self,
        initial_values: Vec<(VarId, &Yaml)>,
    ) -> Res<(Vec<(VarId, String)>, Vec<(VarId, Template)>)> {
        let mut values = Vec::new();
        let mut computed = Vec::new();
        let mut nodes = Vec::new();
        for (id, value) in initial_values {
            let template = self.template(value, "a variable's value")?;
            match template.literal_text() {
                Some(text) => values.push((id, text)),
                None => {
                    computed.push((id, template));
                    nodes.push(value);
                }
            }
        }
        self.computed_in_order(&computed, &nodes)?;
        Ok((values, computed))
    }

    /// `defaults:`: the base URL (its origin becomes the first), headers,
    /// timeout, connection reuse and redirects.
    fn defaults(&mut self, top: &MarkedMappingNode) -> Res<Defaults> {
        let mut d = Defaults {
            headers: Vec::new(),
            timeout: Duration::from_secs(30),
            http: None,
            keep_alive: true,
            new_connections_each_iteration: false,
            follow_redirects: true,
            base_path: String::new(),
        };
        let Some(node) = top.get_node("defaults") else {
            return Ok(d);
        };
        let map = self.doc.mapping(node, "defaults")?;
        self.doc.keys(map, DEFAULT_KEYS, "defaults")?;
        if let Some(base) = map.get_node("base_url") {
            let s = self.doc.scalar(base, "base_url")?;
            let parsed =
                Target::parse(s.as_str()).map_err(|e| self.doc.at(s.span(), e.to_string()))?;
            d.base_path = parsed.path_and_query.trim_end_matches('/').to_string();
            self.origins.push(parsed);
            self.has_base = true;
        }
        if let Some(h) = map.get_node("headers") {
            d.headers = self.headers(h)?;
        }
        if let Some(t) = map.get_node("timeout") {
            d.timeout = self.doc.duration(t, "timeout")?;
        }
        if let Some(k) = map.get_node("keep_alive") {
            let s = self.doc.scalar(k, "keep_alive")?;
            match s.as_str().trim() {
                "true" | "yes" | "on" => {}
                "false" | "no" | "off" => d.keep_alive = false,
                "iteration" => d.new_connections_each_iteration = true,
                other => return Err(self.doc.at(s.span(), format!("keep_alive must be true (connections kept), false (one per request) or iteration (new ones each iteration, as JMeter), not '{other}'"))),
            }
        }
        if let Some(h) = map.get_node("http") {
            let s = self.doc.scalar(h, "http")?;
            d.http = Some(
                headroom_http::protocol::HttpChoice::parse(s.as_str())
                    .map_err(|e| self.doc.at(s.span(), e))?,
            );
        }
        if let Some(f) = map.get_node("follow_redirects") {
            d.follow_redirects = self.doc.boolean(f, "follow_redirects")?;
        }
        if let Some(p) = map.get_node("page_loads") {
            self.page_loads = self.doc.boolean(p, "page_loads")?;
        }
        if let Some(hosts) = map.get_node("resource_hosts") {
            self.resource_hosts(hosts)?;
        }
        Ok(d)
    }

    /// `resource_hosts:`: URLs of other hosts a page's resources may come
    /// from (a CDN, a theme server); each becomes an origin of its own.
    fn resource_hosts(&mut self, node: &Yaml) -> Res<()> {
        let Yaml::Sequence(items) = node else {
            return Err(self.doc.at(
                node.span(),
                "resource_hosts is a list of URLs, e.g. [https://cdn.example.org]",
            ));
        };
        for item in items.iter() {
            let s = self.doc.scalar(item, "a resource host")?;
            let target = Target::parse(s.as_str()).map_err(|e| {
                self.doc.at(
                    s.span(),
                    format!("a resource host: {e}; write its URL, e.g. https://cdn.example.org"),
                )
            })?;
            self.resource_hosts.push(target.authority());
            self.origins.push(target);
        }
        Ok(())
    }

    /// `cookies:` keep (the default) or clear_each_iteration.
    fn cookies(&self, top: &MarkedMappingNode) -> Res<bool> {
        Ok(match top.get_node("cookies") {
            Some(node) => {
                let s = self.doc.scalar(node, "cookies")?;
                match s.as_str() {
                    "keep" => false,
                    "clear_each_iteration" => true,
                    other => {
                        return Err(self.doc.at(
                            s.span(),
                            format!("cookies must be keep or clear_each_iteration, not '{other}'"),
                        ))
                    }
                }
            }
            None => false,
        })
    }

    /// `steps:` is a list of at least one item.
    fn check_steps(&self, steps_node: &Yaml) -> Res<()> {
        let steps = steps_node.as_sequence().ok_or_else(|| {
            self.doc.at(
                steps_node.span(),
                format!(
                    "steps must be a list (- items), found {}",
                    kind_of(steps_node)
                ),
            )
        })?;
        if steps.is_empty() {
            return Err(self.doc.at(
                steps_node.span(),
                "steps is empty: add at least one request",
            ));
        }
        Ok(())
    }

    /// `before:` users, iterations and steps (keys already checked).
    fn before(
        &mut self,
        node: &Yaml,
        profile: &ScenarioProfile,
        follow_redirects: bool,
    ) -> Res<Phase> {
        let map = self.doc.mapping(node, "before")?;
        if profile.open || matches!(profile.stages, Some((_, StageKind::Rate))) {
            return Err(self.doc.at(
                node.span(),
                "before: runs only ahead of a closed profile (users:); the open model has no users to wait for",
            ));
        }
        let steps = map.get_node("steps").ok_or_else(|| {
            self.doc.at(
                self.doc.map_at(map),
                "before: has no steps: add a steps: list with at least one request",
            )
        })?;
        if steps.as_sequence().is_none_or(|s| s.is_empty()) {
            return Err(self.doc.at(
                steps.span(),
                "before: steps must be a list with at least one request",
            ));
        }
        let users = match map.get_node("users") {
            Some(n) => self.doc.whole(n, "users", 1)? as u32,
            None => 1,
        };
        let iterations = match map.get_node("iterations") {
            Some(n) => self.doc.whole(n, "iterations", 1)?,
            None => 1,
        };
        Ok(Phase {
            name: map.get_scalar("name").map(|s| s.as_str().to_string()),
            users,
            iterations,
            flow: self.nodes(steps, follow_redirects)?,
        })
    }

    fn headers(&self, node: &Yaml) -> Res<Vec<(String, Template)>> {
        let map = self.doc.mapping(node, "headers")?;
        let mut out = Vec::new();
        for (key, value) in map.iter() {
            let name = key.as_str();
            if name.is_empty()
                || !name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
            {
                return Err(self
                    .doc
                    .at(key.span(), format!("'{name}' is not a valid header name")));
            }
            out.push((
                name.to_string(),
                self.one_line_template(value, "a header value")?,
            ));
        }
        Ok(out)
    }

    fn declare_extracted(&mut self, node: &Yaml) -> Res<()> {
        let Some(items) = node.as_sequence() else {
            return Ok(());
        };
        for item in items.iter() {
            let Some(map) = item.as_mapping() else {
                continue;
            };
            if let Some(steps) = map.get_node("steps") {
                self.declare_extracted(steps)?;
            }
            let Some(extract) = map.get_node("extract") else {
                continue;
            };
            let Some(list) = extract.as_sequence() else {
                continue;
            };
            for entry in list.iter() {
                if let Some(name) = entry.as_mapping().and_then(|m| m.get_scalar("name")) {
                    if !valid_name(name.as_str()) {
                        return Err(self.doc.at(
                            name.span(),
                            format!(
                                "'{}' is not a valid variable name: use letters, digits and _",
                                name.as_str()
                            ),
                        ));
                    }
                    self.vars.declare(name.as_str());
                }
            }
        }
        Ok(())
    }

    fn data(&mut self, node: &Yaml) -> Res<DataSpec> {
        let map = self.doc.mapping(node, "data")?;
        self.doc.keys(map, DATA_KEYS, "data")?;
        let (shared, recycle) = self.data_cursor(map)?;
        let mut data = self.data_file(map, shared, recycle)?;
        if let Some(node) = map.get_node("visits") {
            let column = self.doc.scalar(node, "visits")?;
            let names = self.vars.names();
            let at = data
                .columns
                .iter()
                .position(|c| names[*c] == column.as_str())
                .ok_or_else(|| {
                    self.doc.at(
                        column.span(),
                        format!(
                            "visits names the column whose value tells one visit's rows from the next; '{}' is not one of the data's columns ({})",
                            column.as_str(),
                            data.columns.iter().map(|c| names[*c].as_str()).collect::<Vec<_>>().join(", ")
                        ),
                    )
                })?;
            data.visits = Some(Visits::of(column.as_str().to_string(), at, &data.rows));
        }
        Ok(data)
    }

    /// `accounts:`: a data file of which each user takes its own row, once
    /// (user n, the n-th VU or arrival, row n; past the last row, from the
    /// top again), whatever `data:` the iterations read.
    fn accounts(&mut self, node: &Yaml, data: Option<&DataSpec>) -> Res<DataSpec> {
        let map = self.doc.mapping(node, "accounts")?;
        self.doc.keys(map, ACCOUNT_KEYS, "accounts")?;
        let accounts = self.data_file(map, false, true)?;
        if let Some(data) = data {
            let names = self.vars.names();
            if let Some(clash) = accounts.columns.iter().find(|c| data.columns.contains(c)) {
                return Err(self.doc.at(
                    self.doc.map_at(map),
                    format!(
                        "the column '{}' is in both data: and accounts:: each variable comes from one file",
                        names[*clash]
                    ),
                ));
            }
        }
        Ok(accounts)
    }

    /// A data file's columns and rows (`data:` or `accounts:`).
    fn data_file(&mut self, map: &MarkedMappingNode, shared: bool, recycle: bool) -> Res<DataSpec> {
        let file_node = map.get_node("file").ok_or_else(|| {
            self.doc.at(
                self.doc.map_at(map),
                "data needs file: the CSV file's path (relative to this scenario)",
            )
        })?;
        let file_scalar = self.doc.scalar(file_node, "file")?;
        let file = self.dir.join(file_scalar.as_str());
        let header = match map.get_node("header") {
            Some(h) => self.doc.boolean(h, "header")?,
            None => false,
        };
        let at = file_scalar.span();
        // Through a limit, so a device or an endless pipe cannot fill memory.
        let opened = std::fs::File::open(&file).map_err(|e| {
            self.doc.at(
                at,
                format!("cannot read the data file {}: {e}", file.display()),
            )
        })?;
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(header)
            .flexible(true)
            .from_reader(std::io::Read::take(opened, MAX_DATA_BYTES + 1));
        let names = self.data_names(map, header, &mut reader, at, &file)?;
        let columns = self.data_columns(&names)?;
        let rows = self.data_rows(&mut reader, columns.len(), at, &file)?;
        Ok(DataSpec {
            file,
            columns,
            rows,
            shared,
            recycle,
            visits: None,
        })
    }

    /// `share:` (all: one cursor for every VU) and `on_end:` (recycle).
    fn data_cursor(&self, map: &MarkedMappingNode) -> Res<(bool, bool)> {
        let shared = match map.get_node("share") {
            Some(s) => match self.doc.scalar(s, "share")?.as_str() {
                "all" => true,
                "vu" => false,
                other => return Err(self.doc.at(s.span(), format!("share must be all (one cursor for every VU) or vu (one per VU), not '{other}'"))),
            },
            None => true,
        };
        let recycle = match map.get_node("on_end") {
            Some(s) => match self.doc.scalar(s, "on_end")?.as_str() {
                "recycle" => true,
                "stop" => false,
                other => {
                    return Err(self.doc.at(
                        s.span(),
                        format!("on_end must be recycle or stop, not '{other}'"),
                    ))
                }
            },
            None => true,
        };
        Ok((shared, recycle))
    }

    /// The columns' names: `columns:`, or the file's header row.
    fn data_names(
        &self,
        map: &MarkedMappingNode,
        header: bool,
        reader: &mut DataReader,
        at: &Span,
        file: &Path,
    ) -> Res<Vec<(String, Span)>> {
        let mut names: Vec<(String, Span)> = Vec::new();
        if let Some(columns) = map.get_node("columns") {
            let list = columns.as_sequence().ok_or_else(|| {
                self.doc.at(
                    columns.span(),
                    "columns must be a list of variable names, e.g. [username, password]",
                )
            })?;
            for column in list.iter() {
                let s = self.doc.scalar(column, "a column name")?;
                names.push((s.as_str().to_string(), *s.span()));
            }
        } else if header {
            let head = reader.headers().map_err(|e| {
                self.doc.at(
                    at,
                    format!("cannot read the header row of {}: {e}", file.display()),
                )
            })?;
            names = head.iter().map(|h| (h.trim().to_string(), *at)).collect();
        } else {
            return Err(self.doc.at(self.doc.map_at(map), "data needs columns: [name, ...] (or header: true when the file's first row names them)"));
        }
        Ok(names)
    }

    /// Each column's variable, declared.
    fn data_columns(&mut self, names: &[(String, Span)]) -> Res<Vec<VarId>> {
        let mut columns = Vec::new();
        for (i, (name, span)) in names.iter().enumerate() {
            if names[..i].iter().any(|(earlier, _)| earlier == name) {
                return Err(self.doc.at(
                    span,
                    format!("the data column '{name}' is named twice: each column needs its own variable"),
                ));
            }
            if !valid_name(name) {
                return Err(self.doc.at(
                    span,
                    format!("'{name}' is not a valid variable name for a data column"),
                ));
            }
            columns.push(self.vars.declare(name));
        }
        Ok(columns)
    }

    /// The rows, each cut to the named columns; the file's size limited.
    fn data_rows(
        &self,
        reader: &mut DataReader,
        columns: usize,
        at: &Span,
        file: &Path,
    ) -> Res<Vec<Vec<String>>> {
        let mut rows = Vec::new();
        for (i, record) in reader.records().enumerate() {
            let record = record.map_err(|e| self.doc.at(at, format!("{}: {e}", file.display())))?;
            if record.len() < columns {
                let line = record.position().map_or(i as u64 + 1, |p| p.line());
                return Err(self.doc.at(
                    at,
                    format!(
                        "{}:{line} has {} fields but {} columns are named",
                        file.display(),
                        record.len(),
                        columns
                    ),
                ));
            }
            rows.push(record.iter().take(columns).map(str::to_string).collect());
        }
        if reader.position().byte() > MAX_DATA_BYTES {
            return Err(self.doc.at(
                at,
                format!(
                    "the data file {} is larger than {} MB, the most headroom reads: use fewer rows (each VU needs only a few)",
                    file.display(),
                    MAX_DATA_BYTES / 1_000_000
                ),
            ));
        }
        if rows.is_empty() {
            return Err(self
                .doc
                .at(at, format!("the data file {} has no rows", file.display())));
        }
        Ok(rows)
    }

    fn profile(&self, node: &Yaml) -> Res<ScenarioProfile> {
        let map = self.doc.mapping(node, "profile")?;
        self.doc.keys(map, PROFILE_KEYS, "profile")?;
        let mut p = ScenarioProfile::default();
        let mut lesson = false;
        if let Some(m) = map.get_node("model") {
            let s = self.doc.scalar(m, "model")?;
            p.open = match s.as_str() {
                "closed" => false,
                "open" => true,
                "lesson" => {
                    lesson = true;
                    false
                }
                other => return Err(self.doc.at(s.span(), format!("model must be closed (a number of users), open (an arrival rate) or lesson (students arriving within a while), not '{other}'"))),
            };
        }
        if let Some(n) = map.get_node("users") {
            p.users = Some(self.doc.whole(n, "users", 1)? as u32);
        }
        if let Some(n) = map.get_node("ramp_up") {
            p.ramp_up = Some(self.doc.duration(n, "ramp_up")?);
        }
        if let Some(n) = map.get_node("duration") {
            p.duration = Some(self.doc.duration(n, "duration")?);
        }
        if let Some(n) = map.get_node("iterations") {
            p.iterations = Some(self.doc.whole(n, "iterations", 1)?);
        }
        if let Some(n) = map.get_node("rate") {
            p.rate = Some(self.doc.rate(n, "rate")?);
            p.open = true;
        }
        if let Some(n) = map.get_node("max_vus") {
            p.max_vus = Some(self.doc.whole(n, "max_vus", 1)? as u32);
        }
        if let Some(n) = map.get_node("throughput") {
            p.throughput = Some(self.doc.rate(n, "throughput")?);
        }
        if let Some(node) = map.get_node("stages") {
            let list = node
                .as_sequence()
                .ok_or_else(|| self.doc.at(node.span(), "stages must be a list of {duration: 1m, users: 10} or {duration: 1m, rate: 5/s}"))?;
            if list.is_empty() {
                return Err(self.doc.at(node.span(), "stages is empty"));
            }
            let mut stages = Vec::new();
            let mut kind = None;
            for item in list.iter() {
                let m = self.doc.mapping(item, "a stage")?;
                self.doc.keys(m, STAGE_KEYS, "a stage")?;
                let duration = m
                    .get_node("duration")
                    .ok_or_else(|| self.doc.at(self.doc.map_at(m), "a stage needs duration:"))?;
                let duration = self.doc.duration(duration, "duration")?;
                let (this, target) = match (m.get_node("users"), m.get_node("rate")) {
                    (Some(u), None) => (StageKind::Users, self.doc.whole(u, "users", 0)? as f64),
                    (None, Some(r)) => {
                        let s = self.doc.scalar(r, "rate")?;
                        let rate = if s.as_str().trim() == "0" {
                            0.0
                        } else {
                            self.doc.rate(r, "rate")?.per_second
                        };
                        (StageKind::Rate, rate)
                    }
                    _ => {
                        return Err(self
                            .doc
                            .at(self.doc.map_at(m), "a stage needs one of users: or rate:"))
                    }
                };
                if kind.is_some_and(|k| k != this) {
                    return Err(self.doc.at(
                        self.doc.map_at(m),
                        "all stages must ramp the same thing: users, or rate",
                    ));
                }
                kind = Some(this);
                stages.push(crate::stages::Stage { duration, target });
            }
            let stages = crate::stages::Stages(stages);
            if stages.peak() <= 0.0 || stages.total().is_zero() {
                return Err(self.doc.at(
                    node.span(),
                    "the stages never reach a target above zero, or last no time",
                ));
            }
            p.stages = kind.map(|k| (stages, k));
        }
        if p.open && p.rate.is_none() && !matches!(p.stages, Some((_, StageKind::Rate))) {
            return Err(self.doc.at(
                self.doc.map_at(map),
                "the open model needs rate: (arrivals per second or minute, e.g. 20/s)",
            ));
        }
        self.sessions_and_lessons(map, &mut p, lesson)?;
        Ok(p)
    }

    /// `session:` of the open model; `students:` and `arrive_within:` of
    /// `model: lesson`.
    fn sessions_and_lessons(
        &self,
        map: &MarkedMappingNode,
        p: &mut ScenarioProfile,
        lesson: bool,
    ) -> Res<()> {
        if let Some(n) = map.get_node("session") {
            let s = self.doc.scalar(n, "session")?;
            if !p.open {
                return Err(self.doc.at(s.span(), "session: is how long each arriving user of the open model stays (model: open, rate: ...); a closed or lesson profile's users stay to the end: leave it out, or give rate:"));
            }
            p.session = Some(
                crate::lesson::UserSession::parse(s.as_str())
                    .map_err(|e| self.doc.at(s.span(), e))?,
            );
        }
        if let Some(n) = map.get_node("students") {
            p.students = Some(self.doc.whole(n, "students", 1)? as u32);
        }
        if let Some(n) = map.get_node("arrive_within") {
            p.arrive_within = Some(self.doc.duration(n, "arrive_within")?);
        }
        let lesson_keys = p.students.is_some() || p.arrive_within.is_some();
        if lesson_keys && !lesson {
            return Err(self.doc.at(
                self.doc.map_at(map),
                "students: and arrive_within: describe a lesson start: add model: lesson",
            ));
        }
        if !lesson {
            return Ok(());
        }
        if p.users.is_some()
            || p.rate.is_some()
            || p.stages.is_some()
            || p.ramp_up.is_some()
            || p.iterations.is_some()
        {
            return Err(self.doc.at(self.doc.map_at(map), "model: lesson takes students:, arrive_within: and duration: (not users:, rate:, stages:, ramp_up: or iterations:)"));
        }
        let (Some(_), Some(within)) = (p.students, p.arrive_within) else {
            return Err(self.doc.at(self.doc.map_at(map), "model: lesson needs students: and arrive_within: (e.g. students: 30, arrive_within: 60s, duration: 10m)"));
        };
        if let Some(duration) = p.duration.filter(|d| within > *d) {
            return Err(self.doc.at(self.doc.map_at(map), format!("arrive_within ({} s) is longer than the lesson (duration {} s): some students would arrive after it ended. Shorten arrive_within or lengthen duration", within.as_secs_f64(), duration.as_secs_f64())));
        }
        Ok(())
    }

    fn label(&mut self, name: &str, kind: LabelKind, url: String, span: &Span) -> Res<u16> {
        if name.trim().is_empty() {
            return Err(self.doc.at(
                span,
                "an empty label names nothing in the reports: write a name (e.g. label: login page)",
            ));
        }
        if name == headroom_bundle::TOTAL_LABEL {
            return Err(self.doc.at(
                span,
                "TOTAL is reserved for the total over all labels: choose another label",
            ));
        }
        if let Some(i) = self.labels.iter().position(|l| l.name == name) {
            if self.labels[i].kind != kind {
                let what = |k: &LabelKind| match k {
                    LabelKind::Group => (0, "a group"),
                    LabelKind::Request => (1, "a request"),
                    LabelKind::Page => (2, "a page load"),
                    LabelKind::PageRequests => (3, "a page load's own requests"),
                };
                let (a, b) = (what(&self.labels[i].kind), what(&kind));
                let (first, second) = if a.0 < b.0 { (a.1, b.1) } else { (b.1, a.1) };
                return Err(self.doc.at(
                    span,
                    format!("'{name}' names both {first} and {second}: use different labels"),
                ));
            }
            return Ok(i as u16);
        }
        if self.labels.len() >= u16::MAX as usize {
            return Err(self.doc.at(span, "too many labels"));
        }
        self.labels.push(LabelInfo {
            name: name.to_string(),
            kind,
            url,
        });
        Ok((self.labels.len() - 1) as u16)
    }

    fn flags(&self, map: &MarkedMappingNode) -> Res<NodeFlags> {
        let once = match map.get_node("once") {
            Some(n) => self.doc.boolean(n, "once")?,
            None => false,
        };
        let condition = match map.get_node("if") {
            Some(node) => {
                let m = self.doc.mapping(node, "if")?;
                self.doc.keys(m, IF_KEYS, "if")?;
                let var_node = m.get_node("var").ok_or_else(|| {
                    self.doc
                        .at(self.doc.map_at(m), "if needs var: the variable to test")
                })?;
                let var_scalar = self.doc.scalar(var_node, "var")?;
                let var = self.vars.lookup(var_scalar.as_str()).ok_or_else(|| {
                    self.doc.at(
                        var_scalar.span(),
                        format!("unknown variable '{}' in if:", var_scalar.as_str()),
                    )
                })?;
                if let Some(set) = m.get_node("set") {
                    if self.doc.boolean(set, "set")? {
                        Some(Condition::Set(var))
                    } else {
                        Some(Condition::NotSet(var))
                    }
                } else if let Some(value) = m.get_node("equals") {
                    Some(Condition::Equals(var, self.template(value, "equals")?))
                } else if let Some(pattern) = m.get_node("matches") {
                    Some(Condition::Matches(var, self.pattern(pattern, "matches")?))
                } else {
                    return Err(self.doc.at(
                        self.doc.map_at(m),
                        "if needs one test: set: true|false, equals: VALUE or matches: REGEX",
                    ));
                }
            }
            None => None,
        };
        Ok(NodeFlags { once, condition })
    }

    fn nodes(&mut self, node: &Yaml, follow_redirects: bool) -> Res<Vec<Node>> {
        let list = node.as_sequence().ok_or_else(|| {
            self.doc.at(
                node.span(),
                format!("steps must be a list (- items), found {}", kind_of(node)),
            )
        })?;
        let mut nodes = Vec::new();
        for item in list.iter() {
            nodes.push(self.node(item, follow_redirects)?);
        }
        Ok(nodes)
    }

    fn children(
        &mut self,
        map: &MarkedMappingNode,
        what: &str,
        follow_redirects: bool,
    ) -> Res<Vec<Node>> {
        let steps = map.get_node("steps").ok_or_else(|| {
            self.doc.at(
                self.doc.map_at(map),
                format!("{what} needs steps: a list of steps"),
            )
        })?;
        let children = self.nodes(steps, follow_redirects)?;
        if children.is_empty() {
            return Err(self.doc.at(steps.span(), format!("{what} has no steps")));
        }
        Ok(children)
    }

    fn node(&mut self, item: &Yaml, follow_redirects: bool) -> Res<Node> {
        let map = self.doc.mapping(item, "a step")?;
        if let Some(group) = map.get_node("group") {
            self.doc.keys(map, GROUP_KEYS, "a group")?;
            let name = self.doc.scalar(group, "group")?;
            let label = self.label(
                name.as_str(),
                LabelKind::Group,
                format!("group:{}", name.as_str()),
                name.span(),
            )?;
            let include_think = match map.get_node("include_think") {
                Some(n) => self.doc.boolean(n, "include_think")?,
                None => false,
            };
            let flags = self.flags(map)?;
            let children = self.children(map, "a group", follow_redirects)?;
            return Ok(Node::Group {
                label,
                include_think,
                children,
                flags,
            });
        }
        if let Some(count) = map.get_node("loop") {
            self.doc.keys(map, LOOP_KEYS, "a loop")?;
            let count = self.doc.whole(count, "loop", 1)? as u32;
            let flags = self.flags(map)?;
            let children = self.children(map, "a loop", follow_redirects)?;
            return Ok(Node::Loop {
                count,
                children,
                flags,
            });
        }
        if map.get_node("steps").is_some() && map.get_node("label").is_none() {
            self.doc.keys(map, BLOCK_KEYS, "a block of steps")?;
            let flags = self.flags(map)?;
            let children = self.children(map, "a block", follow_redirects)?;
            return Ok(Node::Block { children, flags });
        }
        self.doc.keys(map, REQUEST_KEYS, "a request step")?;
        let flags = self.flags(map)?;
        let step = self.request(map, follow_redirects)?;
        self.requests.push(step);
        Ok(Node::Request {
            step: self.requests.len() - 1,
            flags,
        })
    }

    fn request(&mut self, map: &MarkedMappingNode, follow_redirects: bool) -> Res<RequestStep> {
        let label_node = map.get_node("label").ok_or_else(|| {
            self.doc.at(
                self.doc.map_at(map),
                "a request step needs label: a name for its figures (e.g. label: login page)",
            )
        })?;
        let label_scalar = self.doc.scalar(label_node, "label")?;
        let method = self.method(map)?;
        let (origin, path, url_text) = self.destination(map)?;
        let page_load = match map.get_node("page_load") {
            Some(p) => self.doc.boolean(p, "page_load")?,
            None => self.page_loads,
        };
        let kind = if page_load {
            LabelKind::Page
        } else {
            LabelKind::Request
        };
        let label = self.label(
            label_scalar.as_str(),
            kind,
            url_text.clone(),
            label_scalar.span(),
        )?;
        let query = self.query(map)?;
        let headers = match map.get_node("headers") {
            Some(h) => self.headers(h)?,
            None => Vec::new(),
        };
        let body = self.request_body(map)?;
        let extract = self.extractors(map)?;
        let checks = self.checks(map)?;
        let think = match map.get_node("think") {
            Some(t) => Some(self.think(t, "think")?),
            None => None,
        };
        let follow_redirects = match map.get_node("follow_redirects") {
            Some(f) => self.doc.boolean(f, "follow_redirects")?,
            None => follow_redirects,
        };
        // A step's own keep_alive can only close its connection (JMeter's
        // per-sampler "Use KeepAlive" unticked).
        let close_connection = match map.get_node("keep_alive") {
            Some(k) => !self.doc.boolean(k, "keep_alive")?,
            None => false,
        };
        let page = if page_load {
            let name = label_scalar.as_str();
            let span = label_scalar.span();
            let html = format!("{name} (html)");
            let resources = format!("{name} (resources)");
            Some(PageLoad {
                html: self.label(&html, LabelKind::PageRequests, url_text.clone(), span)?,
                resources: self.label(&resources, LabelKind::PageRequests, url_text, span)?,
                also_loads: self.also_loads(map)?,
            })
        } else {
            if let Some(also) = map.get_node("also_loads") {
                return Err(self.doc.at(
                    also.span(),
                    "also_loads: is what a page load fetches besides what its HTML names: give the step page_load: true (or defaults: page_loads: true)",
                ));
            }
            None
        };
        let needs_body = page.is_some() || needs_body(&extract, &checks);
        Ok(RequestStep {
            label,
            method,
            origin,
            path,
            query,
            headers,
            body,
            extract,
            checks,
            think,
            follow_redirects,
            close_connection,
            needs_body,
            page,
        })
    }

    /// `also_loads:`, a list of paths (from the page's origin) or URLs, or
    /// variables that hold such (several, apart by white space).
    fn also_loads(&self, map: &MarkedMappingNode) -> Res<Vec<Template>> {
        let Some(node) = map.get_node("also_loads") else {
            return Ok(Vec::new());
        };
        let list = node.as_sequence().ok_or_else(|| {
            self.doc.at(
                node.span(),
                "also_loads must be a list of paths or URLs, e.g. [/js/app.js, /api/news.json]",
            )
        })?;
        let mut also = Vec::new();
        for item in list.iter() {
            let s = self.doc.scalar(item, "a path or URL of also_loads")?;
            let text = s.as_str();
            let url = text.starts_with("http://") || text.starts_with("https://");
            if !text.starts_with('/') && !url && !text.starts_with("${") {
                return Err(self.doc.at(
                    s.span(),
                    format!("also_loads: '{text}' must be a path from the page's origin (starting with '/'), a full http(s) URL, or a ${{variable}} holding them"),
                ));
            }
            also.push(self.template(item, "also_loads")?);
        }
        Ok(also)
    }

    /// `method:`, upper case; GET without one.
    fn method(&self, map: &MarkedMappingNode) -> Res<String> {
        Ok(match map.get_node("method") {
            Some(m) => {
                let s = self.doc.scalar(m, "method")?;
                let upper = s.as_str().to_ascii_uppercase();
                if upper.is_empty() || !upper.bytes().all(|b| b.is_ascii_alphabetic()) {
                    return Err(self.doc.at(
                        s.span(),
                        format!(
                            "'{}' is not an HTTP method: use GET, POST, PUT, DELETE, ...",
                            s.as_str()
                        ),
                    ));
                }
                upper
            }
            None => "GET".to_string(),
        })
    }

    /// Where a step's request goes: its origin, its path (a template) and
    /// the URL as written, from `path:` or `url:`.
    fn destination(&mut self, map: &MarkedMappingNode) -> Res<(usize, Template, String)> {
        match (map.get_node("path"), map.get_node("url")) {
            (Some(_), Some(u)) => Err(self.doc.at(u.span(), "give either path: or url:, not both")),
            (None, None) => Err(self.doc.at(
                self.doc.map_at(map),
                "a request step needs path: (relative to the base URL) or url: (a full URL)",
            )),
            (Some(p), None) => self.path_destination(p),
            (None, Some(u)) => self.url_destination(u),
        }
    }

    /// `path:`, relative to the base URL.
    fn path_destination(&self, p: &Yaml) -> Res<(usize, Template, String)> {
        let s = self.doc.scalar(p, "path")?;
        if !s.as_str().starts_with('/') && !s.as_str().starts_with("${") {
            return Err(self.doc.at(
                s.span(),
                format!("path '{}' must start with '/'", s.as_str()),
            ));
        }
        if !self.has_base {
            return Err(self.doc.at(
                s.span(),
                "a path needs a base URL: set defaults: base_url: http://host, pass --target, or use url: with a full URL",
            ));
        }
        Ok((
            0,
            self.one_line_template(p, "path")?,
            format!(
                "{}{}",
                self.origins[0].url.trim_end_matches('/'),
                s.as_str()
            ),
        ))
    }

    /// `url:`, a full URL: its origin is added to the scenario's unless
    /// it is there already.
    fn url_destination(&mut self, u: &Yaml) -> Res<(usize, Template, String)> {
        let s = self.doc.scalar(u, "url")?;
        let text = s.as_str();
        let after_scheme = text.find("://").map(|i| i + 3).ok_or_else(|| {
            self.doc.at(
                s.span(),
                format!("url '{text}' must be a full URL such as http://host/path (or use path:)"),
            )
        })?;
        let path_at = text[after_scheme..]
            .find('/')
            .map_or(text.len(), |i| after_scheme + i);
        let origin_text = &text[..path_at];
        if origin_text.contains("${") {
            return Err(self.doc.at(s.span(), "the scheme, host and port of url: cannot contain variables (only its path and query can)"));
        }
        let target =
            Target::parse(origin_text).map_err(|e| self.doc.at(s.span(), e.to_string()))?;
        let origin = match self.origins.iter().position(|o| {
            o.scheme == target.scheme && o.host == target.host && o.port == target.port
        }) {
            Some(i) => i,
            None => {
                self.origins.push(target);
                self.origins.len() - 1
            }
        };
        let rest = if path_at == text.len() {
            "/"
        } else {
            &text[path_at..]
        };
        if rest.contains(['\r', '\n', '\0']) {
            return Err(self.doc.at(
                s.span(),
                "url contains a line break or NUL, which would split the request: remove it",
            ));
        }
        let path = Template::compile(rest, &self.vars)
            .map_err(|e| self.doc.at(s.span(), format!("url: {}", e.message)))?;
        Ok((origin, path, text.to_string()))
    }

    /// `query:`, a mapping of templates.
    fn query(&self, map: &MarkedMappingNode) -> Res<Vec<(Template, Template)>> {
        let mut query = Vec::new();
        if let Some(q) = map.get_node("query") {
            let m = self.doc.mapping(q, "query")?;
            for (key, value) in m.iter() {
                let name = Template::compile(key.as_str(), &self.vars)
                    .map_err(|e| self.doc.at(key.span(), e.message))?;
                query.push((name, self.template(value, "a query value")?));
            }
        }
        Ok(query)
    }

    /// One of `form:`, `body:` or `json:`, or none.
    fn request_body(&self, map: &MarkedMappingNode) -> Res<Body> {
        let bodies: Vec<&str> = ["form", "body", "json"]
            .into_iter()
            .filter(|k| map.get_node(k).is_some())
            .collect();
        if bodies.len() > 1 {
            return Err(self.doc.at(
                self.doc.map_at(map),
                format!(
                    "a step can have one of form:, body: or json:, not {}",
                    bodies.join(" and ")
                ),
            ));
        }
        Ok(if let Some(f) = map.get_node("form") {
            let m = self.doc.mapping(f, "form")?;
            let mut fields = Vec::new();
            for (key, value) in m.iter() {
                let name = Template::compile(key.as_str(), &self.vars)
                    .map_err(|e| self.doc.at(key.span(), e.message))?;
                fields.push((name, self.template(value, "a form value")?));
            }
            Body::Form(fields)
        } else if let Some(b) = map.get_node("body") {
            Body::Raw(self.template(b, "body")?)
        } else if let Some(j) = map.get_node("json") {
            let text = json_text(j);
            Body::Json(
                Template::compile(&text, &self.vars)
                    .map_err(|e| self.doc.at(j.span(), format!("json: {}", e.message)))?,
            )
        } else {
            Body::None
        })
    }

    fn extractors(&mut self, map: &MarkedMappingNode) -> Res<Vec<Extractor>> {
        let mut extract = Vec::new();
        if let Some(e) = map.get_node("extract") {
            let list = e.as_sequence().ok_or_else(|| {
                self.doc
                    .at(e.span(), "extract must be a list (- name: ...)")
            })?;
            for entry in list.iter() {
                extract.push(self.extractor(entry)?);
            }
        }
        Ok(extract)
    }

    fn checks(&mut self, map: &MarkedMappingNode) -> Res<Vec<Check>> {
        let mut checks = Vec::new();
        if let Some(c) = map.get_node("check") {
            let list = c.as_sequence().ok_or_else(|| {
                self.doc.at(
                    c.span(),
                    "check must be a list (- status: 200, - contains: text, ...)",
                )
            })?;
            for entry in list.iter() {
                checks.push(self.check(entry)?);
            }
        }
        Ok(checks)
    }

    fn check_id(&mut self, name: &str) -> u16 {
        match self.checks.iter().position(|c| c == name) {
            Some(i) => i as u16,
            None => {
                self.checks.push(name.to_string());
                (self.checks.len() - 1) as u16
            }
        }
    }

    fn extractor(&mut self, entry: &Yaml) -> Res<Extractor> {
        let m = self.doc.mapping(entry, "an extractor")?;
        self.doc.keys(m, EXTRACT_KEYS, "an extractor")?;
        let name_node = m.get_node("name").ok_or_else(|| {
            self.doc.at(
                self.doc.map_at(m),
                "an extractor needs name: the variable to set",
            )
        })?;
        let name = self.doc.text(name_node, "name")?;
        let into = self
            .vars
            .lookup(&name)
            .ok_or_else(|| self.doc.at(name_node.span(), "invalid variable name"))?;
        let pick = match m.get_node("match") {
            Some(p) => {
                let s = self.doc.scalar(p, "match")?;
                match s.as_str() {
                    "random" => Pick::Random,
                    "all" => Pick::All,
                    n => {
                        Pick::Nth(n.parse::<usize>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                            self.doc.at(
                                s.span(),
                                format!("match must be a number from 1, random or all, not '{n}'"),
                            )
                        })?)
                    }
                }
            }
            None => Pick::Nth(1),
        };
        let sources: Vec<&str> = ["regex", "css", "json", "header", "cookie"]
            .into_iter()
            .filter(|k| m.get_node(k).is_some())
            .collect();
        if sources.len() != 1 {
            return Err(self.doc.at(self.doc.map_at(m), format!(
                "an extractor needs exactly one of regex:, css:, json:, header:, cookie: (found {})",
                if sources.is_empty() { "none".to_string() } else { sources.join(", ") }
            )));
        }
        if let (Some(d), false) = (m.get_node("decode"), sources[0] == "regex") {
            return Err(self.doc.at(
                d.span(),
                format!(
                    "decode: applies to a regex: extractor only ({}: reads its value as it is)",
                    sources[0]
                ),
            ));
        }
        let kind = match sources[0] {
            "regex" => self.regex_extract(m, pick)?,
            "css" => self.css_extract(m, pick)?,
            "json" => {
                let s = self
                    .doc
                    .scalar(m.get_node("json").expect("checked above"), "json")?;
                if !s.as_str().is_empty() && !s.as_str().starts_with('/') {
                    return Err(self.doc.at(
                        s.span(),
                        format!(
                            "json: takes a JSON pointer such as /data/0/id, not '{}'",
                            s.as_str()
                        ),
                    ));
                }
                ExtractKind::JsonPointer(s.as_str().to_string())
            }
            "header" => ExtractKind::Header(
                self.doc
                    .text(m.get_node("header").expect("checked above"), "header")?,
            ),
            _ => ExtractKind::Cookie(
                self.doc
                    .text(m.get_node("cookie").expect("checked above"), "cookie")?,
            ),
        };
        let default = match m.get_node("default") {
            Some(d) => Some(self.template(d, "default")?),
            None => None,
        };
        let required = match m.get_node("required") {
            Some(r) => self.doc.boolean(r, "required")?,
            None => false,
        };
        let check = required.then(|| self.check_id(&format!("extract {name}")));
        Ok(Extractor {
            into,
            name,
            kind,
            default,
            required,
            check,
        })
    }

    /// A `regex:` extractor: its pattern, group and `decode: json`.
    fn regex_extract(&mut self, m: &MarkedMappingNode, pick: Pick) -> Res<ExtractKind> {
        let node = m.get_node("regex").expect("checked above");
        let pattern = self.regex(node, "regex")?;
        let group = match m.get_node("group") {
            Some(g) => self.doc.whole(g, "group", 0)? as usize,
            None => usize::from(pattern.captures_len() > 1),
        };
        if group >= pattern.captures_len() {
            return Err(self.doc.at(
                node.span(),
                format!(
                    "the regex has {} group(s); group {group} does not exist",
                    pattern.captures_len() - 1
                ),
            ));
        }
        let json_string = match m.get_node("decode") {
            None => false,
            Some(d) => {
                let s = self.doc.scalar(d, "decode")?;
                if s.as_str() != "json" {
                    return Err(self.doc.at(
                        s.span(),
                        format!(
                            "decode: takes json (the match is the inside of a JSON string, its escapes decoded), not '{}'",
                            s.as_str()
                        ),
                    ));
                }
                true
            }
        };
        Ok(ExtractKind::Regex {
            pattern,
            group,
            pick,
            json_string,
        })
    }

    /// A `css:` extractor: its selector and `@attribute`.
    fn css_extract(&mut self, m: &MarkedMappingNode, pick: Pick) -> Res<ExtractKind> {
        let s = self
            .doc
            .scalar(m.get_node("css").expect("checked above"), "css")?;
        let (selector_text, attribute) = match s.as_str().rsplit_once('@') {
            Some((sel, attr)) if !attr.contains([']', ' ']) => (sel, Some(attr.to_string())),
            _ => (s.as_str(), None),
        };
        let selector = scraper::Selector::parse(selector_text).map_err(|_| {
            self.doc.at(s.span(), format!("'{selector_text}' is not a valid CSS selector: write e.g. input[name=sesskey]@value"))
        })?;
        Ok(ExtractKind::Css {
            selector,
            attribute,
            pick,
        })
    }

    /// What the check of `kind` looks at: its `in:` (the body without
    /// one), only for text checks.
    fn check_field(&self, m: &MarkedMappingNode, kind: &str) -> Res<Field> {
        Ok(match m.get_node("in") {
            None => Field::Body,
            Some(node) => {
                let s = self.doc.scalar(node, "in")?;
                if matches!(kind, "status" | "max_time") {
                    return Err(self.doc.at(
                        s.span(),
                        format!("in: is for text checks (contains:, matches:, ...), not {kind}:"),
                    ));
                }
                match s.as_str() {
                    "body" => Field::Body,
                    "headers" => Field::Headers,
                    "message" => Field::Message,
                    other => {
                        return Err(self.doc.at(
                            s.span(),
                            format!("in: must be body, headers (the status line and headers) or message (the reason phrase), not '{other}'"),
                        ))
                    }
                }
            }
        })
    }

    /// A `status:` check: its statuses (one, a list, or classes such as
    /// 2xx) and its default name.
    fn status_check(&self, node: &Yaml) -> Res<(CheckKind, String)> {
        let items: Vec<&Yaml> = match node.as_sequence() {
            Some(list) => list.iter().collect(),
            None => vec![node],
        };
        let mut ranges = Vec::new();
        let mut names = Vec::new();
        for item in items {
            let s = self.doc.scalar(item, "a status")?;
            let text = s.as_str().trim();
            let range = if let Some(class) = text
                .strip_suffix("xx")
                .and_then(|c| c.parse::<u16>().ok())
                .filter(|c| (1..=5).contains(c))
            {
                (class * 100, class * 100 + 99)
            } else {
                let code = text
                    .parse::<u16>()
                    .ok()
                    .filter(|c| (100..=599).contains(c))
                    .ok_or_else(|| {
                        self.doc.at(
                            s.span(),
                            format!("'{text}' is not an HTTP status: write 200, [200, 303] or 2xx"),
                        )
                    })?;
                (code, code)
            };
            ranges.push(range);
            names.push(text.to_string());
        }
        Ok((
            CheckKind::Status(ranges),
            format!("status {}", names.join("|")),
        ))
    }

    fn check(&mut self, entry: &Yaml) -> Res<Check> {
        let m = self.doc.mapping(entry, "a check")?;
        self.doc.keys(m, CHECK_KEYS, "a check")?;
        // Every key but name: and in: is a kind of check.
        let kinds: Vec<&str> = CHECK_KEYS
            .iter()
            .copied()
            .filter(|k| !matches!(*k, "name" | "in") && m.get_node(k).is_some())
            .collect();
        if kinds.len() != 1 {
            return Err(self.doc.at(self.doc.map_at(m), "a check needs exactly one of status:, contains:, not_contains:, matches:, not_matches:, max_time:"));
        }
        let field = self.check_field(m, kinds[0])?;
        let node = m.get_node(kinds[0]).expect("checked above");
        let (kind, default_name) = match kinds[0] {
            "status" => self.status_check(node)?,
            "contains" => {
                let t = self.doc.text(node, "contains")?;
                (
                    CheckKind::Contains(self.template(node, "contains")?),
                    format!("contains \"{t}\""),
                )
            }
            "not_contains" => {
                let t = self.doc.text(node, "not_contains")?;
                (
                    CheckKind::NotContains(self.template(node, "not_contains")?),
                    format!("does not contain \"{t}\""),
                )
            }
            "matches" => {
                let t = self.doc.text(node, "matches")?;
                (
                    CheckKind::Matches(self.pattern(node, "matches")?),
                    format!("matches /{t}/"),
                )
            }
            "not_matches" => {
                let t = self.doc.text(node, "not_matches")?;
                (
                    CheckKind::NotMatches(self.pattern(node, "not_matches")?),
                    format!("does not match /{t}/"),
                )
            }
            _ => {
                let d = self.doc.duration(node, "max_time")?;
                (
                    CheckKind::MaxTime(d),
                    format!("time <= {}", self.doc.scalar(node, "max_time")?.as_str()),
                )
            }
        };
        let default_name = match field {
            Field::Body => default_name,
            Field::Headers => format!("headers {default_name}"),
            Field::Message => format!("message {default_name}"),
        };
        let name = match m.get_node("name") {
            Some(n) => self.doc.text(n, "name")?,
            None => default_name,
        };
        let id = self.check_id(&name);
        Ok(Check {
            id,
            name,
            kind,
            field,
        })
    }
}

/// The JSON text of a YAML value: unquoted numbers, booleans and null keep
/// their JSON type, everything else is a string.
fn json_text(node: &Yaml) -> String {
    match node {
        Yaml::Scalar(s) => {
            let text = s.as_str();
            if s.may_coerce()
                && (matches!(text, "true" | "false" | "null")
                    || text.parse::<f64>().is_ok_and(f64::is_finite))
            {
                text.to_string()
            } else {
                serde_json::to_string(text).unwrap_or_default()
            }
        }
        Yaml::Sequence(list) => format!(
            "[{}]",
            list.iter().map(json_text).collect::<Vec<_>>().join(",")
        ),
        Yaml::Mapping(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!(
                    "{}:{}",
                    serde_json::to_string(k.as_str()).unwrap_or_default(),
                    json_text(v)
                ))
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory with the data files the cases name, written once:
    /// tests run in parallel and must not rewrite a file another reads.
    fn fixtures() -> &'static std::path::Path {
        static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
        DIR.get_or_init(|| {
            let dir = std::env::temp_dir().join(format!("headroom-parse-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("users.csv"), "ann,pw1\nbob,pw2\n").unwrap();
            std::fs::write(dir.join("empty.csv"), "").unwrap();
            dir
        })
    }

    fn check(text: &str) -> Res<Scenario> {
        parse_str(text, &fixtures().join("journey.yaml"), None)
    }

    const BASE: &str = "defaults:\n  base_url: http://127.0.0.1:8080\n";

    #[test]
    fn also_loads_is_a_page_loads_list_of_paths_or_urls() {
        let page = |rest: &str| {
            format!("{BASE}  page_loads: true\nsteps:\n  - label: p\n    path: /\n{rest}")
        };
        let scenario = check(&page(
            "    also_loads:\n      - /api/news.json\n      - \"https://cdn.example/e.png\"\n",
        ))
        .unwrap();
        let also = &scenario.requests[0].page.as_ref().unwrap().also_loads;
        let texts: Vec<String> = also.iter().map(|t| t.literal_text().unwrap()).collect();
        assert_eq!(texts, ["/api/news.json", "https://cdn.example/e.png"]);
        let err = |text: &str| check(text).unwrap_err().to_string();
        assert!(err(&page("    also_loads: [news.json]\n"))
            .contains("must be a path from the page's origin"),);
        assert!(err(&page("    also_loads: /a.js\n")).contains("must be a list"));
        // A variable (a data column) may hold a page's own, several.
        let with_variable = format!(
            "{BASE}  page_loads: true\nvariables:\n  also: \"/a.js /b.js\"\nsteps:\n  - label: p\n    path: /\n    also_loads: [\"${{also}}\"]\n"
        );
        let scenario = check(&with_variable).unwrap();
        let also = &scenario.requests[0].page.as_ref().unwrap().also_loads;
        assert!(!also[0].is_constant());
        let plain = format!("{BASE}steps:\n  - label: p\n    path: /\n    also_loads: [/a.js]\n");
        assert!(err(&plain).contains("give the step page_load: true"));
    }

    /// A computed variable that uses itself grew every iteration ("x",
    /// "xx", ...), and one that uses a computed variable below it sent
    /// that variable's previous iteration ("-y", "1-y" in iteration 2):
    /// both are refused at the value; one that uses a variable above it
    /// (or a constant one below it) is accepted.
    #[test]
    fn computed_variables_use_only_those_above_them() {
        let steps = "steps:\n  - label: r\n    path: /${a}\n";
        let refused = [
            ("variables:\n  a: \"${a}x\"\n", 2, 6, "'a' uses itself"),
            (
                "variables:\n  a: \"${b}-y\"\n  b: \"${__iteration}\"\n",
                2,
                6,
                "'a' uses 'b', which is computed below it",
            ),
        ];
        for (vars, line, column, words) in refused {
            let err = check(&format!("{BASE}{vars}{steps}"))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(&format!("journey.yaml:{}:{column}:", line + 2))
                    && err.contains(words),
                "{vars}: {err}"
            );
        }
        for vars in [
            "variables:\n  b: \"${__iteration}\"\n  a: \"${b}-y\"\n",
            "variables:\n  a: \"${b}-y\"\n  b: constant\n",
        ] {
            check(&format!("{BASE}{vars}{steps}")).unwrap_or_else(|e| panic!("{vars}: {e}"));
        }
    }

    #[test]
    fn malformed_files_name_the_line_and_a_fix() {
        // (file, line, column, words the message must contain)
        let cases: &[(&str, usize, usize, &str)] = &[
            ("steps: [\n  - label: a\n", 2, 3, "invalid YAML"),
            ("steps:\n  - label: a\n    path: /\n\tthink: 1s\n", 3, 11, "found a tab"),
            ("- a\n- b\n", 1, 1, "must be a mapping"),
            ("stepz:\n  - label: a\n", 1, 1, "did you mean 'steps'"),
            ("name: x\n", 1, 1, "has no steps"),
            ("steps: []\n", 1, 8, "steps is empty"),
            ("steps:\n  - lable: home\n    path: /\n", 2, 5, "did you mean 'label'"),
            ("steps:\n  - label: home\n    path: /\n", 3, 11, "needs a base URL"),
            (&format!("{BASE}steps:\n  - label: home\n    path: /u/${{who}}\n"), 5, 11, "unknown variable 'who'"),
            (&format!("{BASE}steps:\n  - label: home\n    path: home\n"), 5, 11, "must start with '/'"),
            (&format!("{BASE}steps:\n  - label: home\n    path: /\n    think: 5 parsecs\n"), 6, 12, "unknown unit"),
            (&format!("{BASE}think: [1s]\nsteps:\n  - label: home\n    path: /\n"), 3, 8, "must be a single value"),
            (&format!("{BASE}steps:\n  - label: home\n    path: /\n    extract:\n      - name: t\n        regex: '(unclosed'\n"), 8, 16, "not a valid regular expression"),
            (&format!("{BASE}steps:\n  - label: home\n    path: /\n    extract:\n      - name: t\n        css: 'input[[name'\n"), 8, 14, "not a valid CSS selector"),
            (&format!("{BASE}steps:\n  - label: home\n    path: /\n    extract:\n      - name: t\n"), 7, 9, "exactly one of regex:"),
            (&format!("{BASE}steps:\n  - label: home\n    path: /\n    extract:\n      - name: t\n        regex: 'a(b)'\n        decode: html\n"), 9, 17, "decode: takes json"),
            (&format!("{BASE}steps:\n  - label: home\n    path: /\n    extract:\n      - name: t\n        css: a\n        decode: json\n"), 9, 17, "a regex: extractor only"),
            (&format!("{BASE}steps:\n  - label: home\n    path: /\n    check:\n      - status: 700\n"), 7, 17, "not an HTTP status"),
            (&format!("{BASE}data:\n  file: missing.csv\n  columns: [u]\nsteps:\n  - label: home\n    path: /\n"), 4, 9, "cannot read the data file"),
            (&format!("{BASE}data:\n  file: empty.csv\n  columns: [u]\nsteps:\n  - label: home\n    path: /\n"), 4, 9, "has no rows"),
            (&format!("{BASE}data:\n  file: users.csv\n  columns: [a, b, c]\nsteps:\n  - label: home\n    path: /\n"), 4, 9, "3 columns are named"),
            (&format!("{BASE}data:\n  file: users.csv\nsteps:\n  - label: home\n    path: /\n"), 4, 3, "data needs columns"),
            (&format!("{BASE}profile:\n  users: many\nsteps:\n  - label: home\n    path: /\n"), 4, 10, "whole number"),
            (&format!("{BASE}profile:\n  model: open\nsteps:\n  - label: home\n    path: /\n"), 4, 3, "needs rate"),
            (&format!("{BASE}steps:\n  - label: home\n    path: /\n    form: {{a: 1}}\n    body: x\n"), 4, 5, "one of form:, body: or json:"),
            (&format!("{BASE}steps:\n  - label: home\n    path: /\n    once: maybe\n"), 6, 11, "true or false"),
            (&format!("{BASE}steps:\n  - label: home\n    path: /\n    if: {{var: ghost, set: true}}\n"), 6, 15, "unknown variable 'ghost'"),
            (&format!("{BASE}steps:\n  - loop: 0\n    steps:\n      - label: a\n        path: /\n"), 4, 11, "at least 1"),
            (&format!("{BASE}steps:\n  - label: TOTAL\n    path: /\n"), 4, 12, "reserved"),
            (&format!("{BASE}steps:\n  - label: a\n    path: /\n  - label: a\n    path: /\n    label: b\n"), 8, 5, "given twice"),
            (&format!("{BASE}steps:\n  - label: a\n    url: ftp://x/\n"), 5, 10, "http:// and https://"),
            (&format!("{BASE}steps:\n  - label: a\n    path: /${{__random(9,1)}}\n"), 5, 11, "__random(LOW,HIGH)"),
            (&format!("{BASE}profile:\n  rate: 5/s\nbefore:\n  steps:\n    - label: w\n      path: /\nsteps:\n  - label: a\n    path: /\n"), 6, 8, "only ahead of a closed profile"),
            (&format!("{BASE}steps:\n  - label: a\n    path: /\n    check:\n      - status: 200\n        in: headers\n"), 8, 13, "in: is for text checks"),
            (&format!("{BASE}steps:\n  - label: a\n    path: /\n    check:\n      - contains: x\n        in: cookies\n"), 8, 13, "must be body, headers"),
            (&format!("{BASE}before:\n  users: 2\nsteps:\n  - label: a\n    path: /\n"), 4, 3, "before: has no steps"),
            (&format!("{BASE}before:\n  user: 2\n  steps:\n    - label: w\n      path: /\nsteps:\n  - label: a\n    path: /\n"), 4, 3, "did you mean 'users'"),
            (&format!("{BASE}before:\n  users: 0\n  steps:\n    - label: w\n      path: /\nsteps:\n  - label: a\n    path: /\n"), 4, 10, "at least 1"),
        ];
        assert!(cases.len() >= 15);
        for (text, line, column, words) in cases {
            let error = check(text).expect_err(text);
            let rendered = error.to_string();
            assert!(
                rendered.contains(words),
                "{text}\n=> {rendered}\n(expected '{words}')"
            );
            assert_eq!(
                (error.line, error.column),
                (*line, *column),
                "{text}\n=> {rendered}"
            );
            assert!(
                rendered.contains("journey.yaml:"),
                "names the file: {rendered}"
            );
        }
    }

    #[test]
    fn think_times_from_named_distributions() {
        let steps = "steps:\n  - label: r\n    path: /\n";
        let s = check(&format!("{BASE}think: lognormal:30s,20s\n{steps}")).unwrap();
        assert_eq!(
            s.think,
            Think::LogNormal {
                mean: Duration::from_secs(30),
                deviation: Duration::from_secs(20)
            }
        );
        let err = check(&format!("{BASE}think: lognormal:30s\n{steps}"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("journey.yaml:3:8:") && err.contains("a mean and a standard deviation"),
            "{err}"
        );
    }

    #[test]
    fn a_valid_scenario_compiles_everything() {
        let s = check(&format!(
            "{BASE}variables:\n  course: \"2\"\ndata:\n  file: users.csv\n  columns: [user, pw]\nthink: {{mean: 1s, deviation: 200ms}}\ncookies: clear_each_iteration\nprofile:\n  users: 3\n  iterations: 2\n  throughput: 60/min\nsteps:\n  - group: g\n    steps:\n      - label: login\n        method: post\n        path: /login\n        form: {{u: \"${{user}}\", p: \"${{pw}}\"}}\n        check:\n          - status: [200, 3xx]\n          - contains: welcome\n            name: welcome page\n        extract:\n          - name: token\n            css: 'input[name=t]@value'\n            required: true\n  - loop: 2\n    steps:\n      - label: json\n        method: PUT\n        url: http://other:9000/api/${{token}}\n        json: {{n: 1, ok: true, name: \"${{user}}\", list: [a, 2]}}\n"
        ))
        .unwrap();
        assert_eq!(s.requests.len(), 2);
        assert_eq!(s.origins.len(), 2);
        assert_eq!(s.labels.len(), 3);
        // Extractors are read before checks.
        assert_eq!(
            s.checks,
            vec!["extract token", "status 200|3xx", "welcome page"]
        );
        assert_eq!(s.data.as_ref().unwrap().rows.len(), 2);
        assert_eq!(s.profile.users, Some(3));
        assert!(s.clear_cookies_each_iteration);
        assert_eq!(s.requests[0].method, "POST");
        match &s.requests[1].body {
            Body::Json(t) => assert!(!t.is_constant()),
            other => panic!("{other:?}"),
        }
    }

    /// `accounts:` is a data file of its own beside `data:` (user n takes
    /// its row n): no cursor to set, and no column shared with `data:`.
    #[test]
    fn accounts_are_a_data_file_of_their_own() {
        let steps = "steps:\n  - label: login\n    path: /login?u=${user}\n";
        let s = check(&format!(
            "{BASE}data:\n  file: users.csv\n  columns: [page, path]\naccounts:\n  file: users.csv\n  columns: [user, pw]\n{steps}"
        ))
        .unwrap();
        let accounts = s.accounts.unwrap();
        assert_eq!(accounts.rows.len(), 2);
        assert!(!accounts.shared && accounts.recycle);
        let refused = check(&format!(
            "{BASE}accounts:\n  file: users.csv\n  columns: [user, pw]\n  share: all\n{steps}"
        ))
        .unwrap_err();
        assert!(refused.to_string().contains("share"), "{refused}");
        let refused = check(&format!(
            "{BASE}data:\n  file: users.csv\n  columns: [user, path]\naccounts:\n  file: users.csv\n  columns: [user, pw]\n{steps}"
        ))
        .unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("the column 'user' is in both data: and accounts:"),
            "{refused}"
        );
    }

    /// Each check knows the steps that evaluate it (a name two steps
    /// share is one check with both labels), so reports can say where a
    /// check failed.
    #[test]
    fn checks_know_the_labels_of_their_steps() {
        let s = check(&format!(
            "{BASE}steps:\n  - label: home\n    path: /\n    check:\n      - status: 200\n  - label: login\n    path: /login\n    check:\n      - status: 200\n      - contains: Welcome\n    extract:\n      - name: t\n        regex: 't=(\\w+)'\n        required: true\n"
        ))
        .unwrap();
        let named: Vec<(String, Vec<String>)> =
            s.checks.iter().cloned().zip(s.check_labels()).collect();
        let names = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            named,
            vec![
                ("status 200".to_string(), names(&["home", "login"])),
                ("extract t".to_string(), names(&["login"])),
                ("contains \"Welcome\"".to_string(), names(&["login"])),
            ]
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]

        /// No input makes the parser panic: arbitrary text, and a valid
        /// scenario with bytes cut out or inserted anywhere.
        #[test]
        fn parser_never_panics(text in "\\PC{0,80}",
                               cut in 0usize..400, len in 0usize..12, insert in "[ \\-:\\[\\]{}$'\"\\n\\t#a-z0-9]{0,4}") {
            let _ = check(&text);
            let valid = format!("{BASE}think: 1s..2s\nsteps:\n  - group: g\n    steps:\n      - label: a\n        path: /${{__vu}}\n        extract:\n          - name: v\n            regex: 'x(\\d)'\n        check:\n          - status: 200\n");
            let at = cut.min(valid.len());
            let end = (at + len).min(valid.len());
            if valid.is_char_boundary(at) && valid.is_char_boundary(end) {
                let mutated = format!("{}{}{}", &valid[..at], insert, &valid[end..]);
                let _ = check(&mutated);
            }
        }
    }

    /// Little's law's think per request is that of a user's steady
    /// iteration: a `once` login (60 s think) does not count, and a default
    /// given on the command line stands only for steps without their own.
    #[test]
    fn think_per_request_counts_a_steady_iteration() {
        let text = format!(
            "{BASE}think: 2s\nsteps:\n  - label: login\n    path: /login\n    once: true\n    think: 60s\n  - label: read\n    path: /r\n    think: 10s\n  - label: list\n    path: /l\n"
        );
        let scenario = check(&text).unwrap();
        assert_eq!(
            scenario.think_per_request(scenario.think),
            Duration::from_secs(6)
        );
        let zero = crate::profile::Think::None;
        assert_eq!(scenario.think_per_request(zero), Duration::from_secs(5));
        // The first iteration adds its once login's 60 s.
        assert_eq!(
            scenario.first_iteration_think(scenario.think),
            Duration::from_secs(60)
        );
    }
}
