//! Correlation: which values of a recorded journey must not be replayed.
//! A value the server sent (a hidden input, a token in a page or a JSON
//! answer, a cookie) that the browser sent back later becomes an
//! extractor on the step that received it and a `${var}` where it was
//! sent, in a query, a urlencoded or multipart form, a JSON body or a
//! header alike. A value the user typed or the recording held before any
//! response did (a page title in a typed URL) is a constant: it stays
//! literal everywhere. The account typed into a login form becomes data
//! columns, and so does every secret (a value first sent in a password
//! field or under a name such as `token` or `secret` that no response
//! held): the secret's `${column}` replaces it wherever it appears, so it
//! is in neither the scenario nor the report. Token-like values that could
//! not be traced are reported.
//!
//! The steps are read once, in order ([`crate::held`]): the work grows
//! with the recording's size, not with its square.

use crate::har::{form_pairs, Step};
use crate::held::{self, Held, Index};
pub use crate::held::{token_like, Extract};
use crate::multipart::{self, Multipart};
use std::collections::{HashMap, HashSet};

/// Where a step sends a value.
#[derive(Debug, Clone, PartialEq)]
pub enum Place {
    /// A query parameter (decoded value).
    Query(String),
    Form(String),
    /// A multipart body's part: (index, field name).
    Part(usize, String),
    /// A JSON body's string, by pointer.
    Json(String),
    Header(String),
    /// The credentials of an Authorization header after its scheme
    /// (`Bearer <token>`): (header, scheme).
    HeaderToken(String, String),
}

/// A step's request, its values made templates as correlation proceeds.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    /// The path as recorded, without the query.
    pub path: String,
    /// Decoded query pairs.
    pub query: Vec<(String, String)>,
    pub body: RecordedBody,
    /// Headers worth sending (X-*, Authorization); browsers' own are left out.
    pub headers: Vec<(String, String)>,
}

#[derive(Debug, Clone)]
pub enum RecordedBody {
    None,
    Form(Vec<(String, String)>),
    /// multipart/form-data: sent as the recorded body, its parts' values
    /// template text.
    Multipart {
        content_type: String,
        body: Multipart,
    },
    Json(serde_json::Value),
    Raw {
        content_type: String,
        text: String,
    },
}

#[derive(Debug, Clone)]
pub struct Variable {
    pub name: String,
    pub value: String,
    /// The field it was first sent in.
    pub field: Option<String>,
    /// The step whose response holds it (0-based).
    pub source: usize,
    pub extract: Extract,
    /// Steps that send it (0-based).
    pub used_by: Vec<usize>,
}

/// A value the user supplies, read from the data file: the account typed
/// into the login form, and secrets.
#[derive(Debug, Clone)]
pub struct DataColumn {
    pub name: String,
    /// The field it was first typed into.
    pub field: String,
    pub value: String,
    /// Never written in the scenario nor printed: replaced by `${name}`
    /// wherever it appears.
    pub secret: bool,
    /// The step that first sent it (0-based).
    pub step: usize,
}

#[derive(Debug, Default)]
pub struct Correlation {
    pub requests: Vec<RecordedRequest>,
    pub variables: Vec<Variable>,
    pub data: Vec<DataColumn>,
    /// Token-like values sent as recorded: (step, where, value, why).
    pub not_correlated: Vec<(usize, String, String, &'static str)>,
    /// Work done indexing and looking up values (see [`Index::work`]).
    pub work: u64,
}

/// Headers a browser adds by itself; the runner sends its own.
fn browser_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    !(n.starts_with("x-") && !n.starts_with("x-client-data") && !n.starts_with("x-chrome"))
        && n != "authorization"
}

/// A recorded value as template text: a literal `${` stays literal
/// (`$${`); only correlation writes `${var}`.
fn literal(text: &str) -> String {
    text.replace("${", "$${")
}

fn literal_json(v: &serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::String(s) => serde_json::Value::String(literal(s)),
        serde_json::Value::Array(list) => list.iter().map(literal_json).collect(),
        serde_json::Value::Object(map) => map
            .iter()
            .map(|(k, v)| (literal(k), literal_json(v)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
        other => other.clone(),
    }
}

fn literal_pairs(pairs: Vec<(String, String)>) -> Vec<(String, String)> {
    pairs
        .into_iter()
        .map(|(n, v)| (literal(&n), literal(&v)))
        .collect()
}

fn body_of(mime: &str, text: &str) -> RecordedBody {
    let pairs = form_pairs(text);
    let mut names: Vec<&str> = pairs.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    let unique = names.windows(2).all(|w| w[0] != w[1]);
    if mime.starts_with("application/x-www-form-urlencoded") && unique {
        return RecordedBody::Form(literal_pairs(pairs));
    }
    if let Some(mut body) = multipart::parse(mime, text) {
        for p in &mut body.parts {
            p.head = literal(&p.head);
            p.value = literal(&p.value);
        }
        return RecordedBody::Multipart {
            content_type: mime.to_string(),
            body,
        };
    }
    if mime.contains("json") {
        if let Ok(v) = serde_json::from_str(text) {
            return RecordedBody::Json(literal_json(&v));
        }
    }
    RecordedBody::Raw {
        content_type: mime.to_string(),
        text: literal(text),
    }
}

/// The request of each step, as recorded, its text already template text
/// (see [`literal`]).
pub fn requests(steps: &[Step]) -> Vec<RecordedRequest> {
    steps
        .iter()
        .map(|step| {
            let e = step.first();
            let query = literal_pairs(e.url.query().map(form_pairs).unwrap_or_default());
            let content_type = e.request_header("content-type").unwrap_or("");
            let body = match &e.post {
                None => RecordedBody::None,
                Some((mime, text)) if text.is_empty() && mime.is_empty() => RecordedBody::None,
                Some((mime, text)) => {
                    // The header has the boundary when the HAR's mimeType lacks it.
                    let mime = if mime.is_empty()
                        || (mime.starts_with("multipart/") && !mime.contains("boundary"))
                    {
                        content_type
                    } else {
                        mime
                    };
                    body_of(mime, text)
                }
            };
            RecordedRequest {
                method: e.method.clone(),
                // A recorded `${` stays literal; correlation adds `${var}`s.
                path: literal(e.url.path()),
                query,
                body,
                headers: e
                    .request_headers
                    .iter()
                    .filter(|(n, _)| !n.starts_with(':') && !browser_header(n))
                    .map(|(n, v)| (n.clone(), literal(v)))
                    .collect(),
            }
        })
        .collect()
}

/// A field whose value is a password.
fn password_name(field: &str) -> bool {
    let f = field.to_ascii_lowercase();
    ["pass", "pwd", "pw", "passwd", "passphrase"].contains(&f.as_str())
        || f.contains("password")
        || f.contains("passwd")
        || f.contains("pass_")
        || f.ends_with("pass")
        || f.ends_with("pwd")
        || f.contains("[pass")
}

/// A field whose typed (untraced) value is a secret.
fn secret_name(field: &str) -> bool {
    let f = field.to_ascii_lowercase();
    password_name(field)
        || [
            "secret",
            "token",
            "credential",
            "apikey",
            "api_key",
            "api-key",
            "authorization",
            "auth_",
            "passcode",
        ]
        .iter()
        .any(|w| f.contains(w))
}

/// Variable names given so far, and the next number of each base name
/// (so that naming the 3,000th `token` does not try 2,999 numbers).
#[derive(Default)]
struct Names {
    taken: HashSet<String>,
    next: HashMap<String, usize>,
}

impl Names {
    /// A new variable name from a field name: `message[itemid]` → `message_itemid`.
    fn new_name(&mut self, field: &str) -> String {
        let mut base: String = field
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        while base.contains("__") {
            base = base.replace("__", "_");
        }
        let mut base = base.trim_matches('_').to_string();
        if base.is_empty() {
            base = "value".into();
        }
        if base.starts_with(|c: char| c.is_ascii_digit()) {
            base = format!("v_{base}");
        }
        let mut name = base.clone();
        let n = self.next.entry(base.clone()).or_insert(2);
        while self.taken.contains(&name) {
            name = format!("{base}_{n}");
            *n += 1;
        }
        self.taken.insert(name.clone());
        name
    }
}

#[cfg(test)]
fn var_name(field: &str, taken: &[String]) -> String {
    let mut names = Names::default();
    names.taken.extend(taken.iter().cloned());
    names.new_name(field)
}

/// The login form's fields: (user field, password field) of the first
/// form with a password input whose fields the request sent.
fn login_fields(
    forms: &[Vec<(String, String)>],
    sent: &[(String, String)],
) -> Option<(Option<String>, String)> {
    let was_sent = |n: &str| sent.iter().any(|(s, _)| s == n);
    for fields in forms {
        let Some(password) = fields
            .iter()
            .position(|(n, t)| t == "password" && was_sent(n))
        else {
            continue;
        };
        let user = fields[..password]
            .iter()
            .rev()
            .find(|(n, t)| matches!(t.as_str(), "text" | "email" | "tel") && was_sent(n))
            .map(|(n, _)| n.clone());
        return Some((user, fields[password].0.clone()));
    }
    None
}

/// Guesses the login fields by name when no page shows the form.
fn login_fields_by_name(sent: &[(String, String)]) -> Option<(Option<String>, String)> {
    let password = sent.iter().find(|(n, _)| password_name(n))?.0.clone();
    let user = sent
        .iter()
        .find(|(n, _)| {
            let n = n.to_ascii_lowercase();
            n.contains("user") || n.contains("login") || n.contains("email") || n == "log"
        })
        .map(|(n, _)| n.clone());
    Some((user, password))
}

/// The (field, value) pairs a request's body sends, for finding a login.
fn body_fields(r: &RecordedRequest) -> Vec<(String, String)> {
    match &r.body {
        RecordedBody::Form(pairs) => pairs.clone(),
        RecordedBody::Multipart { body, .. } => body
            .parts
            .iter()
            .filter(|p| !p.file)
            .filter_map(|p| Some((p.name.clone()?, p.value.clone())))
            .collect(),
        RecordedBody::Json(json) => {
            let mut leaves = Vec::new();
            held::json_leaves(json, String::new(), &mut leaves);
            leaves
                .into_iter()
                .map(|(p, v)| (p.rsplit('/').next().unwrap_or("").to_string(), v))
                .collect()
        }
        RecordedBody::None | RecordedBody::Raw { .. } => Vec::new(),
    }
}

/// The state of one pass over the steps.
struct Pass<'a> {
    steps: &'a [Step],
    c: Correlation,
    held: Vec<Held>,
    index: Index,
    /// Steps whose page has a form with a password input.
    login_pages: Vec<usize>,
    login_found: bool,
    /// Names of the password inputs of the pages seen so far.
    password_inputs: HashSet<String>,
    /// Values the recording held before any response did.
    constants: HashSet<String>,
    /// Variables by value.
    by_value: HashMap<String, Vec<usize>>,
    names: Names,
    /// Each variable's name before a number was added (`token` of `token_7`).
    bases: Vec<String>,
}

/// Correlates the steps' values.
pub fn correlate(steps: &[Step]) -> Correlation {
    let mut pass = Pass {
        steps,
        c: Correlation {
            requests: requests(steps),
            ..Correlation::default()
        },
        held: Vec::with_capacity(steps.len()),
        index: Index::default(),
        login_pages: Vec::new(),
        login_found: false,
        password_inputs: HashSet::new(),
        constants: HashSet::new(),
        by_value: HashMap::new(),
        names: Names::default(),
        bases: Vec::new(),
    };
    for (s, step) in steps.iter().enumerate() {
        pass.step(s);
        let h = Held::of(step);
        pass.index.add(s, step, &h);
        if !h.password_forms.is_empty() {
            pass.login_pages.push(s);
            for form in &h.password_forms {
                pass.password_inputs.extend(
                    form.iter()
                        .filter(|(_, t)| t == "password")
                        .map(|(n, _)| n.clone()),
                );
            }
        }
        pass.held.push(h);
    }
    let mut c = pass.c;
    c.work = pass.index.work;
    share_names(&mut c, &pass.bases);
    hide_secrets(&mut c);
    c
}

/// One name for the successive values of a token (each page's new
/// `token`): a variable takes the name of an earlier one of the same base
/// when every use of that one comes no later than its own extraction (the
/// step that extracts still sends the old value). A recording of 5,000
/// edits then has one `token`, as a person would write it, not 5,000.
fn share_names(c: &mut Correlation, bases: &[String]) {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut order: Vec<usize> = (0..c.variables.len()).collect();
    order.sort_by_key(|&i| c.variables[i].source);
    let mut names = Names::default();
    names.taken.extend(c.data.iter().map(|d| d.name.clone()));
    // Per base: the names in use, by the step of their last use (earliest first).
    let mut free: HashMap<&str, BinaryHeap<Reverse<(usize, String)>>> = HashMap::new();
    let mut renamed: HashMap<String, String> = HashMap::new();
    for i in order {
        let v = &c.variables[i];
        let last_use = v.used_by.iter().copied().max().unwrap_or(v.source);
        let slots = free.entry(bases[i].as_str()).or_default();
        let name = match slots.peek() {
            Some(Reverse((until, _))) if *until <= v.source => {
                let Reverse((_, name)) = slots.pop().expect("peeked");
                name
            }
            _ => names.new_name(&bases[i]),
        };
        slots.push(Reverse((last_use, name.clone())));
        if name != v.name {
            renamed.insert(v.name.clone(), name.clone());
        }
        c.variables[i].name = name;
    }
    if renamed.is_empty() {
        return;
    }
    let rename = |text: &mut String| {
        if text.contains("${") {
            *text = rename_templates(text, &renamed);
        }
    };
    for r in &mut c.requests {
        rename(&mut r.path);
        for (_, v) in r.query.iter_mut().chain(r.headers.iter_mut()) {
            rename(v);
        }
        match &mut r.body {
            RecordedBody::None | RecordedBody::Raw { .. } => {}
            RecordedBody::Form(pairs) => pairs.iter_mut().for_each(|(_, v)| rename(v)),
            RecordedBody::Multipart { body, .. } => {
                body.parts.iter_mut().for_each(|p| rename(&mut p.value))
            }
            RecordedBody::Json(json) => hide_json(json, &rename),
        }
    }
}

/// `text` with each `${old}` written `${new}` (a literal `$${` is left).
fn rename_templates(text: &str, renamed: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("${") {
        if i > 0 && rest.as_bytes()[i - 1] == b'$' {
            out.push_str(&rest[..i + 2]);
            rest = &rest[i + 2..];
            continue;
        }
        out.push_str(&rest[..i]);
        let Some(end) = rest[i..].find('}') else {
            break;
        };
        let name = &rest[i + 2..i + end];
        out.push_str("${");
        out.push_str(renamed.get(name).map_or(name, String::as_str));
        out.push('}');
        rest = &rest[i + end + 1..];
    }
    out.push_str(rest);
    out
}

impl Pass<'_> {
    /// The account of the first login form (a form with a password input,
    /// or fields named so) becomes data columns.
    fn find_login(&mut self, s: usize) {
        let sent = body_fields(&self.c.requests[s]);
        if sent.is_empty() {
            return;
        }
        let fields = self
            .login_pages
            .iter()
            .rev()
            .find_map(|&t| login_fields(&self.held[t].password_forms, &sent))
            .or_else(|| login_fields_by_name(&sent));
        let Some((user, password)) = fields else {
            return;
        };
        let value_of = |field: &str| {
            sent.iter()
                .find(|(n, _)| n == field)
                .map(|(_, v)| v.clone())
        };
        if let Some(value) = user.as_deref().and_then(value_of) {
            self.c.data.push(DataColumn {
                name: self.names.new_name("username"),
                field: user.unwrap_or_default(),
                value,
                secret: false,
                step: s,
            });
        }
        if let Some(value) = value_of(&password) {
            self.c.data.push(DataColumn {
                name: self.names.new_name("password"),
                field: password,
                value,
                secret: true,
                step: s,
            });
        }
        self.login_found = true;
    }

    fn step(&mut self, s: usize) {
        if let RecordedBody::Raw { content_type, .. } = &self.c.requests[s].body {
            // A form whose fields repeat a name cannot be a YAML mapping: it
            // goes as a recorded body, and says so (without its text, which
            // may hold a secret).
            if content_type.starts_with("application/x-www-form-urlencoded") {
                self.c.not_correlated.push((
                    s,
                    "form body".into(),
                    String::new(),
                    "its fields repeat a name, so it is sent as the recorded body and none of its values is correlated",
                ));
            }
        }
        if !self.login_found {
            self.find_login(s);
        }
        for (place, value) in sent_values(&self.c.requests[s]) {
            if value.is_empty() {
                continue;
            }
            self.value(s, place, value);
        }
        // Tokens inside the path (e.g. /edit/8f3a.../): the variables' values.
        let path = self.c.requests[s].path.clone();
        let mut segments: Vec<String> = Vec::new();
        for segment in path.split('/') {
            let var = (segment.len() >= 8)
                .then(|| self.by_value.get(segment))
                .flatten()
                .and_then(|ids| ids.last().copied());
            match var {
                Some(i) => {
                    let v = &mut self.c.variables[i];
                    if !v.used_by.contains(&s) {
                        v.used_by.push(s);
                    }
                    segments.push(format!("${{{}}}", v.name));
                }
                None => segments.push(segment.to_string()),
            }
        }
        self.c.requests[s].path = segments.join("/");
    }

    fn value(&mut self, s: usize, place: Place, value: String) {
        let field = match &place {
            Place::Form(name) | Place::Query(name) | Place::Part(_, name) => Some(name.as_str()),
            Place::Json(pointer) => pointer.rsplit('/').next(),
            Place::Header(name) => Some(name.as_str()),
            Place::HeaderToken(..) => Some("authorization"),
        };
        // A value the user supplies: typed into the login form's field, or
        // a secret sent anywhere.
        if let Some(col) = self
            .c
            .data
            .iter()
            .find(|d| d.value == value && (d.secret || field == Some(d.field.as_str())))
        {
            let template = format!("${{{}}}", col.name);
            set(&mut self.c.requests[s], &place, &template);
            return;
        }
        let is_header = matches!(place, Place::Header(_) | Place::HeaderToken(..));
        // A password: a secret whatever the responses held. (A field of
        // the name of a page's password input counts in a form or body
        // only: `p=2` in a query is a page number.)
        let in_body = matches!(place, Place::Form(_) | Place::Part(..) | Place::Json(_));
        let password = !is_header
            && field
                .is_some_and(|f| password_name(f) || (in_body && self.password_inputs.contains(f)));
        if password {
            self.secret(s, &place, field.unwrap_or("password"), value);
            return;
        }
        if self.constants.contains(&value) {
            return;
        }
        // The same value again: the same variable, when it is a token or
        // goes into a field of the same name (a short value such as "1" in
        // another field is a coincidence).
        let again = self.by_value.get(&value).and_then(|ids| {
            ids.iter()
                .rev()
                .copied()
                .find(|&i| token_like(&value) || self.c.variables[i].field.as_deref() == field)
        });
        if let Some(i) = again {
            let var = &mut self.c.variables[i];
            if !var.used_by.contains(&s) {
                var.used_by.push(s);
            }
            let template = format!("${{{}}}", var.name);
            set(&mut self.c.requests[s], &place, &template);
            return;
        }
        let named_field = if is_header { None } else { field };
        // The latest response holding it whose extractor yields it exactly.
        let found = self
            .index
            .latest(named_field, &value)
            .into_iter()
            .find_map(|t| {
                held::extractor(&self.steps[t], &self.held[t], named_field, &value).map(|x| (t, x))
            });
        match found {
            Some((t, extract)) => {
                // Named after the field it goes into, else after where it came from.
                let hint = match (named_field, &extract) {
                    (Some(f), _) => f.to_string(),
                    (None, Extract::Json(pointer)) => {
                        pointer.rsplit('/').next().unwrap_or("token").to_string()
                    }
                    (None, Extract::Cookie(name)) => name.clone(),
                    (None, _) => "token".to_string(),
                };
                let name = self.names.new_name(&hint);
                self.bases.push(hint);
                let template = format!("${{{name}}}");
                set(&mut self.c.requests[s], &place, &template);
                self.by_value
                    .entry(value.clone())
                    .or_default()
                    .push(self.c.variables.len());
                self.c.variables.push(Variable {
                    name,
                    value,
                    field: named_field.map(str::to_string),
                    source: t,
                    extract,
                    used_by: vec![s],
                });
            }
            None if field.is_some_and(secret_name) => {
                // Typed, not sent by the server: the user's to supply.
                self.secret(s, &place, field.unwrap_or("secret"), value);
            }
            None => {
                // Sent before any response held it (typed, or in the URL
                // the user opened): a constant, literal wherever it is sent.
                if token_like(&value) {
                    // A redirect's Location is not a response an extractor
                    // reads (the step follows it): say so rather than guess.
                    let why = if self.index.in_location(&value) {
                        "only a redirect's Location held it, which no extractor reads"
                    } else {
                        "no earlier response holds it (typed, or made by the page's script?), so it is a constant"
                    };
                    self.c
                        .not_correlated
                        .push((s, describe_place(&place), value.clone(), why));
                }
                self.constants.insert(value);
            }
        }
    }

    /// A secret: a data column the user fills in, `${column}` where it is sent.
    fn secret(&mut self, s: usize, place: &Place, field: &str, value: String) {
        let hint = if password_name(field) || self.password_inputs.contains(field) {
            if self.c.data.iter().any(|d| d.name == "password") {
                field.to_string()
            } else {
                "password".to_string()
            }
        } else {
            field.to_string()
        };
        let name = self.names.new_name(&hint);
        set(&mut self.c.requests[s], place, &format!("${{{name}}}"));
        self.c.data.push(DataColumn {
            name,
            field: field.to_string(),
            value,
            secret: true,
            step: s,
        });
    }
}

/// Replaces each secret wherever it is still written (inside a longer
/// value, a path, a header, a body sent as recorded), as typed and
/// urlencoded, by its `${column}`.
fn hide_secrets(c: &mut Correlation) {
    let secrets: Vec<(String, String)> = c
        .data
        .iter()
        .filter(|d| d.secret && !d.value.is_empty())
        .flat_map(|d| {
            let template = format!("${{{}}}", d.name);
            let mut forms = vec![(d.value.clone(), template.clone())];
            let encoded = crate::har::form_encode(&d.value.replace("$${", "${"));
            if encoded != d.value {
                forms.push((encoded, template));
            }
            forms
        })
        .collect();
    if secrets.is_empty() {
        return;
    }
    // Inside longer text only a secret long enough not to be a
    // coincidence; a value equal to it was replaced where it was sent.
    let hide = |text: &mut String| {
        for (secret, template) in &secrets {
            if secret.chars().count() >= 6 && text.contains(secret.as_str()) {
                *text = replace_outside_templates(text, secret, template);
            }
        }
    };
    for r in &mut c.requests {
        hide(&mut r.path);
        for (_, v) in r.query.iter_mut().chain(r.headers.iter_mut()) {
            hide(v);
        }
        match &mut r.body {
            RecordedBody::None => {}
            RecordedBody::Form(pairs) => pairs.iter_mut().for_each(|(_, v)| hide(v)),
            RecordedBody::Multipart { body, .. } => {
                body.parts.iter_mut().for_each(|p| hide(&mut p.value))
            }
            RecordedBody::Json(json) => hide_json(json, &hide),
            RecordedBody::Raw { text, .. } => hide(text),
        }
    }
    for (_, _, value, _) in &mut c.not_correlated {
        hide(value);
    }
}

fn hide_json(json: &mut serde_json::Value, hide: &dyn Fn(&mut String)) {
    match json {
        serde_json::Value::String(s) => hide(s),
        serde_json::Value::Array(list) => list.iter_mut().for_each(|v| hide_json(v, hide)),
        serde_json::Value::Object(map) => map.values_mut().for_each(|v| hide_json(v, hide)),
        _ => {}
    }
}

/// `text` with `from` replaced by `to` outside the `${...}` it already holds.
fn replace_outside_templates(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        // A template starts at `${` not preceded by `$` (`$${` is literal).
        let start = rest
            .match_indices("${")
            .find(|(i, _)| *i == 0 || rest.as_bytes()[i - 1] != b'$')
            .map(|(i, _)| i);
        let (plain, template) = match start {
            Some(i) => {
                let end = rest[i..].find('}').map_or(rest.len(), |e| i + e + 1);
                (&rest[..i], &rest[i..end])
            }
            None => (rest, ""),
        };
        out.push_str(&plain.replace(from, to));
        out.push_str(template);
        rest = &rest[plain.len() + template.len()..];
    }
    out
}

fn describe_place(place: &Place) -> String {
    match place {
        Place::Query(n) => format!("query parameter {n}"),
        Place::Form(n) => format!("form field {n}"),
        Place::Part(_, n) => format!("multipart field {n}"),
        Place::Json(p) => format!("JSON {p}"),
        Place::Header(h) | Place::HeaderToken(h, _) => format!("header {h}"),
    }
}

/// The values a request sends, in order: query, form or JSON, headers.
fn sent_values(r: &RecordedRequest) -> Vec<(Place, String)> {
    let mut out: Vec<(Place, String)> = r
        .query
        .iter()
        .map(|(n, v)| (Place::Query(n.clone()), v.clone()))
        .collect();
    match &r.body {
        RecordedBody::Form(pairs) => out.extend(
            pairs
                .iter()
                .map(|(n, v)| (Place::Form(n.clone()), v.clone())),
        ),
        RecordedBody::Multipart { body, .. } => out.extend(
            body.parts
                .iter()
                .enumerate()
                .filter(|(_, p)| !p.file)
                .filter_map(|(i, p)| Some((Place::Part(i, p.name.clone()?), p.value.clone()))),
        ),
        RecordedBody::Json(json) => {
            let mut leaves = Vec::new();
            held::json_leaves(json, String::new(), &mut leaves);
            out.extend(leaves.into_iter().map(|(p, v)| (Place::Json(p), v)));
        }
        RecordedBody::None | RecordedBody::Raw { .. } => {}
    }
    for (name, value) in &r.headers {
        if name.eq_ignore_ascii_case("authorization") {
            // `Bearer <token>`: the token is what the server sent.
            if let Some((scheme, token)) = value.split_once(' ') {
                out.push((
                    Place::HeaderToken(name.clone(), scheme.to_string()),
                    token.trim().to_string(),
                ));
            }
        } else {
            out.push((Place::Header(name.clone()), value.clone()));
        }
    }
    out
}

/// Puts `template` where `place` was.
fn set(r: &mut RecordedRequest, place: &Place, template: &str) {
    match place {
        Place::Query(name) => {
            if let Some(pair) = r
                .query
                .iter_mut()
                .find(|(n, v)| n == name && !v.starts_with("${"))
            {
                pair.1 = template.to_string();
            }
        }
        Place::Form(name) => {
            if let RecordedBody::Form(pairs) = &mut r.body {
                if let Some(pair) = pairs.iter_mut().find(|(n, _)| n == name) {
                    pair.1 = template.to_string();
                }
            }
        }
        Place::Part(i, _) => {
            if let RecordedBody::Multipart { body, .. } = &mut r.body {
                if let Some(part) = body.parts.get_mut(*i) {
                    part.value = template.to_string();
                }
            }
        }
        Place::Json(pointer) => {
            if let RecordedBody::Json(json) = &mut r.body {
                if let Some(v) = json.pointer_mut(pointer) {
                    *v = serde_json::Value::String(template.to_string());
                }
            }
        }
        Place::Header(name) => {
            if let Some(pair) = r.headers.iter_mut().find(|(n, _)| n == name) {
                pair.1 = template.to_string();
            }
        }
        Place::HeaderToken(name, scheme) => {
            if let Some(pair) = r.headers.iter_mut().find(|(n, _)| n == name) {
                pair.1 = format!("{scheme} {template}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_tokens() {
        assert_eq!(var_name("message[itemid]", &[]), "message_itemid");
        assert_eq!(var_name("2fa", &[]), "v_2fa");
        assert_eq!(var_name("__x", &[]), "x");
        assert_eq!(var_name("sesskey", &["sesskey".into()]), "sesskey_2");
        assert!(token_like("Ab12Cd34Ef"));
        assert!(!token_like("Post to forum"));
        assert!(!token_like("12"));
        assert!(token_like("aaaaaaaaaaaaaaaaaaaa"));
        assert!(password_name("wpPassword") && !password_name("p"));
        assert!(password_name("pwd") && password_name("user_pass"));
        assert!(secret_name("api_key") && secret_name("X-Auth-Token"));
        assert!(!secret_name("title") && !secret_name("wpTextbox1"));
        assert_eq!(
            replace_outside_templates("a${password}b password $${password}", "password", "${p}"),
            "a${password}b ${p} $${${p}}"
        );
    }
}
