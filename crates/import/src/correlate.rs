//! Correlation: which values of a recorded journey must not be replayed.
//! A value the server sent (a hidden input, a token in a page or a JSON
//! answer, a cookie) that the browser sent back later becomes an
//! extractor on the step that received it and a `${var}` where it was
//! sent; the account the user typed into a login form (the form's
//! password field and the text field before it) becomes data columns.
//! Everything else is replayed as recorded, and tokens that could not be
//! traced are reported.

use crate::har::{form_pairs, Step};
use regex::Regex;
use scraper::{ElementRef, Html, Selector};

/// Where a step sends a value.
#[derive(Debug, Clone, PartialEq)]
pub enum Place {
    /// A query parameter (decoded value).
    Query(String),
    Form(String),
    /// A JSON body's string, by pointer.
    Json(String),
    Header(String),
    /// The credentials of an Authorization header after its scheme
    /// (`Bearer <token>`): (header, scheme).
    HeaderToken(String, String),
}

/// A step's request, its values made templates as correlation proceeds.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// The path as recorded, without the query.
    pub path: String,
    /// Decoded query pairs.
    pub query: Vec<(String, String)>,
    pub body: Body,
    /// Headers worth sending (X-*, Authorization); browsers' own are left out.
    pub headers: Vec<(String, String)>,
}

#[derive(Debug, Clone)]
pub enum Body {
    None,
    Form(Vec<(String, String)>),
    Json(serde_json::Value),
    Raw { content_type: String, text: String },
}

/// How a variable is read from a response.
#[derive(Debug, Clone, PartialEq)]
pub enum Extract {
    /// `input[name="..."]` and the attribute, the n-th match (1-based).
    Css {
        selector: String,
        attribute: String,
        nth: usize,
    },
    Json(String),
    Regex(String),
    Cookie(String),
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

/// A value the user typed, read from the data file.
#[derive(Debug, Clone)]
pub struct DataColumn {
    pub name: String,
    /// The form field it was typed into.
    pub field: String,
    pub value: String,
}

#[derive(Debug, Default)]
pub struct Correlation {
    pub requests: Vec<Request>,
    pub variables: Vec<Variable>,
    pub data: Vec<DataColumn>,
    /// Token-like values sent as recorded: (step, where, value, why).
    pub not_correlated: Vec<(usize, String, String, &'static str)>,
}

/// Headers a browser adds by itself; the runner sends its own.
fn browser_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    !(n.starts_with("x-") && !n.starts_with("x-client-data") && !n.starts_with("x-chrome"))
        && n != "authorization"
}

/// The request of each step, as recorded.
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

/// The request of each step, as recorded, its text already template text
/// (see [`literal`]).
pub fn requests(steps: &[Step]) -> Vec<Request> {
    steps
        .iter()
        .map(|step| {
            let e = step.first();
            let query = literal_pairs(e.url.query().map(form_pairs).unwrap_or_default());
            let content_type = e.request_header("content-type").unwrap_or("");
            let body = match &e.post {
                None => Body::None,
                Some((mime, text)) if text.is_empty() && mime.is_empty() => Body::None,
                Some((mime, text)) => {
                    let mime = if mime.is_empty() { content_type } else { mime };
                    let pairs = form_pairs(text);
                    let mut names: Vec<&str> = pairs.iter().map(|(n, _)| n.as_str()).collect();
                    names.sort_unstable();
                    let unique = names.windows(2).all(|w| w[0] != w[1]);
                    if mime.starts_with("application/x-www-form-urlencoded") && unique {
                        Body::Form(literal_pairs(pairs))
                    } else if mime.contains("json") {
                        match serde_json::from_str(text) {
                            Ok(v) => Body::Json(literal_json(&v)),
                            Err(_) => Body::Raw {
                                content_type: mime.to_string(),
                                text: literal(text),
                            },
                        }
                    } else {
                        Body::Raw {
                            content_type: mime.to_string(),
                            text: literal(text),
                        }
                    }
                }
            };
            Request {
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

/// How many steps back a sent value's source is looked for.
const SEARCHED: usize = 100;

/// A value worth tracing when it is not a named input: long enough, no
/// spaces, and looking generated (letters and digits, or long).
fn token_like(value: &str) -> bool {
    if value.chars().any(char::is_whitespace) {
        return false;
    }
    let letters = value.chars().any(|c| c.is_ascii_alphabetic());
    let digits = value.chars().any(|c| c.is_ascii_digit());
    (value.len() >= 6 && letters && digits) || value.len() >= 16
}

/// A variable name from a field name: `message[itemid]` → `message_itemid`.
fn var_name(field: &str, taken: &[String]) -> String {
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
    let mut n = 2;
    while taken.contains(&name) {
        name = format!("{base}_{n}");
        n += 1;
    }
    name
}

struct Pages {
    docs: Vec<Option<Html>>,
}

impl Pages {
    fn new(steps: &[Step]) -> Pages {
        Pages {
            docs: steps
                .iter()
                .map(|s| {
                    let last = s.last();
                    last.is_html().then(|| Html::parse_document(&last.body))
                })
                .collect(),
        }
    }
}

fn selector(text: &str) -> Option<Selector> {
    Selector::parse(text).ok()
}

fn css_string(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The login form's fields: (user field, password field) of the form that
/// has a password input, in the page before the step that posts it.
fn login_fields(doc: &Html, sent: &[(String, String)]) -> Option<(Option<String>, String)> {
    let forms = selector("form")?;
    let inputs = selector("input, textarea")?;
    for form in doc.select(&forms) {
        let fields: Vec<ElementRef> = form.select(&inputs).collect();
        let Some(password) = fields.iter().position(|f| {
            f.value()
                .attr("type")
                .is_some_and(|t| t.eq_ignore_ascii_case("password"))
                && f.value()
                    .attr("name")
                    .is_some_and(|n| sent.iter().any(|(s, _)| s == n))
        }) else {
            continue;
        };
        let password_name = fields[password].value().attr("name")?.to_string();
        let user = fields[..password]
            .iter()
            .rev()
            .find(|f| {
                let t = f
                    .value()
                    .attr("type")
                    .unwrap_or("text")
                    .to_ascii_lowercase();
                matches!(t.as_str(), "text" | "email" | "tel")
                    && f.value()
                        .attr("name")
                        .is_some_and(|n| sent.iter().any(|(s, _)| s == n))
            })
            .and_then(|f| f.value().attr("name"))
            .map(str::to_string);
        return Some((user, password_name));
    }
    None
}

/// Guesses the login fields by name when no page shows the form.
fn login_fields_by_name(sent: &[(String, String)]) -> Option<(Option<String>, String)> {
    let password = sent
        .iter()
        .find(|(n, _)| n.to_ascii_lowercase().contains("pass"))?
        .0
        .clone();
    let user = sent
        .iter()
        .find(|(n, _)| {
            let n = n.to_ascii_lowercase();
            n.contains("user") || n.contains("login") || n.contains("email") || n == "log"
        })
        .map(|(n, _)| n.clone());
    Some((user, password))
}

/// Where in `steps[t]`'s responses the server sent `value`: as a named
/// input (any length), else (for token-like values) as a cookie, a JSON
/// field, or text a regular expression finds.
fn find_source(
    steps: &[Step],
    pages: &Pages,
    t: usize,
    field: Option<&str>,
    value: &str,
) -> Option<Extract> {
    if let (Some(doc), Some(field)) = (&pages.docs[t], field) {
        if let Some(sel) = selector(&format!("input[name=\"{}\"]", css_string(field))) {
            let values: Vec<&str> = doc
                .select(&sel)
                .map(|e| e.value().attr("value").unwrap_or(""))
                .collect();
            if let Some(i) = values.iter().position(|v| *v == value) {
                return Some(Extract::Css {
                    selector: format!("input[name=\"{}\"]", css_string(field)),
                    attribute: "value".into(),
                    nth: i + 1,
                });
            }
        }
    }
    if !token_like(value) {
        return None;
    }
    for hop in &steps[t].hops {
        for (name, header) in &hop.response_headers {
            if !name.eq_ignore_ascii_case("set-cookie") {
                continue;
            }
            let pair = header.split(';').next().unwrap_or("");
            if let Some((cookie, v)) = pair.split_once('=') {
                if v.trim() == value {
                    return Some(Extract::Cookie(cookie.trim().to_string()));
                }
            }
        }
    }
    let last = steps[t].last();
    if last.mime.contains("json") {
        if let Ok(json) = serde_json::from_str::<serde_json::Value>(&last.body) {
            if let Some(pointer) = json_pointer_of(&json, value, String::new()) {
                return Some(Extract::Json(pointer));
            }
        }
    }
    if let Some(doc) = &pages.docs[t] {
        // Another input holding it (named differently from the field).
        if let Some(sel) = selector("input[name][value]") {
            let inputs: Vec<ElementRef> = doc.select(&sel).collect();
            if let Some(input) = inputs
                .iter()
                .find(|e| e.value().attr("value") == Some(value))
            {
                let name = input.value().attr("name").unwrap_or("");
                let css = format!("input[name=\"{}\"]", css_string(name));
                if let Some(named) = selector(&css) {
                    let nth = doc
                        .select(&named)
                        .position(|e| e.value().attr("value") == Some(value))
                        .map_or(1, |i| i + 1);
                    return Some(Extract::Css {
                        selector: css,
                        attribute: "value".into(),
                        nth,
                    });
                }
            }
        }
    }
    regex_for(&last.body, value).map(Extract::Regex)
}

fn json_pointer_of(json: &serde_json::Value, value: &str, at: String) -> Option<String> {
    match json {
        serde_json::Value::String(s) if s == value => {
            Some(if at.is_empty() { "/".into() } else { at })
        }
        serde_json::Value::Object(map) => map.iter().find_map(|(k, v)| {
            let key = k.replace('~', "~0").replace('/', "~1");
            json_pointer_of(v, value, format!("{at}/{key}"))
        }),
        serde_json::Value::Array(list) => list
            .iter()
            .enumerate()
            .find_map(|(i, v)| json_pointer_of(v, value, format!("{at}/{i}"))),
        _ => None,
    }
}

/// A regular expression whose first match's group 1 is `value` in `body`:
/// the text before its first occurrence, the value, and what follows.
fn regex_for(body: &str, value: &str) -> Option<String> {
    let at = body.find(value)?;
    let after = at + value.len();
    for before in [8usize, 16, 32, 64] {
        let mut start = at.saturating_sub(before);
        while !body.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (after + 1).min(body.len());
        while !body.is_char_boundary(end) {
            end += 1;
        }
        let prefix = &body[start..at];
        let suffix = &body[after..end];
        let middle = if value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.~+/=%".contains(c))
        {
            "([A-Za-z0-9_.~+/=%-]+)".to_string()
        } else {
            "(.+?)".to_string()
        };
        let pattern = format!("{}{middle}{}", regex::escape(prefix), regex::escape(suffix));
        let Ok(re) = Regex::new(&pattern) else {
            continue;
        };
        if re
            .captures(body)
            .and_then(|c| c.get(1))
            .is_some_and(|m| m.as_str() == value)
        {
            return Some(pattern);
        }
    }
    None
}

/// Correlates the steps' values.
pub fn correlate(steps: &[Step]) -> Correlation {
    let pages = Pages::new(steps);
    let mut c = Correlation {
        requests: requests(steps),
        ..Correlation::default()
    };
    // The account typed into the first login form (or sent as JSON).
    for (s, request) in c.requests.iter().enumerate() {
        let json_fields;
        let sent: &Vec<(String, String)> = match &request.body {
            Body::Form(sent) => sent,
            Body::Json(json) => {
                let mut leaves = Vec::new();
                json_strings(json, String::new(), &mut leaves);
                json_fields = leaves
                    .into_iter()
                    .filter_map(|(place, v)| match place {
                        Place::Json(p) => Some((p.rsplit('/').next().unwrap_or("").to_string(), v)),
                        _ => None,
                    })
                    .collect::<Vec<_>>();
                &json_fields
            }
            _ => continue,
        };
        let fields = (0..s)
            .rev()
            .find_map(|t| pages.docs[t].as_ref().and_then(|d| login_fields(d, sent)))
            .or_else(|| login_fields_by_name(sent));
        let Some((user, password)) = fields else {
            continue;
        };
        let value_of = |field: &str| {
            sent.iter()
                .find(|(n, _)| n == field)
                .map(|(_, v)| v.clone())
        };
        if let Some(user) = user {
            if let Some(value) = value_of(&user) {
                c.data.push(DataColumn {
                    name: "username".into(),
                    field: user,
                    value,
                });
            }
        }
        if let Some(value) = value_of(&password) {
            c.data.push(DataColumn {
                name: "password".into(),
                field: password,
                value,
            });
        }
        break;
    }
    // A form whose fields repeat a name cannot be a YAML mapping: it goes
    // as a recorded body, and says so.
    for (s, r) in c.requests.iter().enumerate() {
        if let Body::Raw { content_type, text } = &r.body {
            if content_type.starts_with("application/x-www-form-urlencoded") {
                c.not_correlated.push((
                    s,
                    "form body".into(),
                    text.chars().take(80).collect(),
                    "its fields repeat a name, so it is sent as the recorded body and none of its values is correlated",
                ));
            }
        }
    }
    let n = c.requests.len();
    for s in 0..n {
        let sent = sent_values(&c.requests[s]);
        for (place, value) in sent {
            if value.is_empty() {
                continue;
            }
            let field = match &place {
                Place::Form(name) | Place::Query(name) => Some(name.as_str()),
                Place::Json(pointer) => pointer.rsplit('/').next(),
                Place::Header(_) | Place::HeaderToken(..) => None,
            };
            // Typed into a form field of the data columns.
            if let Some(col) = c
                .data
                .iter()
                .find(|d| d.value == value && field == Some(d.field.as_str()))
            {
                let template = format!("${{{}}}", col.name);
                set(&mut c.requests[s], &place, &template);
                continue;
            }
            // The same value again: the same variable, when it is a token
            // or goes into a field of the same name (a short value such as
            // "1" in another field is a coincidence).
            if let Some(var) = c.variables.iter_mut().find(|v| {
                v.value == value
                    && v.source < s
                    && (token_like(&value) || v.field.as_deref() == field)
            }) {
                var.used_by.push(s);
                let template = format!("${{{}}}", var.name);
                set(&mut c.requests[s], &place, &template);
                continue;
            }
            // The source is near (a page's form, the last answer): the last
            // SEARCHED steps are searched, so long recordings stay fast.
            let found = (s.saturating_sub(SEARCHED)..s)
                .rev()
                .find_map(|t| find_source(steps, &pages, t, field, &value).map(|x| (t, x)));
            match found {
                Some((t, extract)) => {
                    let taken: Vec<String> = c
                        .variables
                        .iter()
                        .map(|v| v.name.clone())
                        .chain(c.data.iter().map(|d| d.name.clone()))
                        .collect();
                    // Named after the field it goes into, else after where it came from.
                    let hint = match (field, &extract) {
                        (Some(f), _) => f.to_string(),
                        (None, Extract::Json(pointer)) => {
                            pointer.rsplit('/').next().unwrap_or("token").to_string()
                        }
                        (None, Extract::Cookie(name)) => name.clone(),
                        (None, _) => "token".to_string(),
                    };
                    let name = var_name(&hint, &taken);
                    let template = format!("${{{name}}}");
                    set(&mut c.requests[s], &place, &template);
                    c.variables.push(Variable {
                        name,
                        value,
                        field: field.map(str::to_string),
                        source: t,
                        extract,
                        used_by: vec![s],
                    });
                }
                None if token_like(&value) => {
                    // A redirect's Location is not a response an extractor
                    // reads (the step follows it): say so rather than guess.
                    let in_location = steps[..s].iter().any(|step| {
                        step.hops.iter().any(|h| {
                            h.response_header("location")
                                .is_some_and(|l| l.contains(value.as_str()))
                        })
                    });
                    let why = if in_location {
                        "only a redirect's Location held it, which no extractor reads"
                    } else {
                        "no earlier response holds it (made by the page's script, or typed?)"
                    };
                    c.not_correlated
                        .push((s, describe_place(&place), value, why));
                }
                None => {}
            }
        }
        // Tokens inside the path (e.g. /edit/8f3a.../): the variables' values.
        let path = c.requests[s].path.clone();
        let mut templated = path.clone();
        for var in c.variables.iter_mut().filter(|v| v.source < s) {
            if var.value.len() >= 8 && templated.contains(&var.value) {
                templated = templated.replace(&var.value, &format!("${{{}}}", var.name));
                if !var.used_by.contains(&s) {
                    var.used_by.push(s);
                }
            }
        }
        c.requests[s].path = templated;
    }
    c
}

fn describe_place(place: &Place) -> String {
    match place {
        Place::Query(n) => format!("query parameter {n}"),
        Place::Form(n) => format!("form field {n}"),
        Place::Json(p) => format!("JSON {p}"),
        Place::Header(h) | Place::HeaderToken(h, _) => format!("header {h}"),
    }
}

/// The values a request sends, in order: query, form or JSON, headers.
fn sent_values(r: &Request) -> Vec<(Place, String)> {
    let mut out: Vec<(Place, String)> = r
        .query
        .iter()
        .map(|(n, v)| (Place::Query(n.clone()), v.clone()))
        .collect();
    match &r.body {
        Body::Form(pairs) => out.extend(
            pairs
                .iter()
                .map(|(n, v)| (Place::Form(n.clone()), v.clone())),
        ),
        Body::Json(json) => json_strings(json, String::new(), &mut out),
        Body::None | Body::Raw { .. } => {}
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

fn json_strings(json: &serde_json::Value, at: String, out: &mut Vec<(Place, String)>) {
    match json {
        serde_json::Value::String(s) => out.push((Place::Json(at), s.clone())),
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                let key = k.replace('~', "~0").replace('/', "~1");
                json_strings(v, format!("{at}/{key}"), out);
            }
        }
        serde_json::Value::Array(list) => {
            for (i, v) in list.iter().enumerate() {
                json_strings(v, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// Puts `template` where `place` was.
fn set(r: &mut Request, place: &Place, template: &str) {
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
            if let Body::Form(pairs) = &mut r.body {
                if let Some(pair) = pairs.iter_mut().find(|(n, _)| n == name) {
                    pair.1 = template.to_string();
                }
            }
        }
        Place::Json(pointer) => {
            if let Body::Json(json) = &mut r.body {
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
    fn regexes_find_the_value_first() {
        let body = r#"<a href="/x?id=7&amp;sesskey=Ab12Cd34Ef">x</a> sesskey=zz"#;
        let pattern = regex_for(body, "Ab12Cd34Ef").unwrap();
        let re = Regex::new(&pattern).unwrap();
        assert_eq!(&re.captures(body).unwrap()[1], "Ab12Cd34Ef");
        let other = body.replace("Ab12Cd34Ef", "Qq99Rr88Ss");
        assert_eq!(&re.captures(&other).unwrap()[1], "Qq99Rr88Ss", "{pattern}");
        assert_eq!(regex_for(body, "missing"), None);
    }

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
        let json = serde_json::json!({"a": {"b/c": ["x", "tok123456"]}});
        assert_eq!(
            json_pointer_of(&json, "tok123456", String::new()).as_deref(),
            Some("/a/b~1c/1")
        );
    }
}
