//! Writing the imported journey as a scenario file: every string quoted
//! (YAML's double-quoted scalars, which JSON strings are). The requests'
//! text is already template text (a recorded `${` became `$${` when it
//! was read, correlated values are `${var}`), and is written as it is.

use crate::correlate::{Correlation, Extract, RecordedBody, RecordedRequest};
use crate::har::{form_encode, LeftOut, Step};
use std::fmt::Write as _;

/// The data file the scenario reads, as it will name it.
pub struct DataFile {
    /// Relative to the scenario's directory.
    pub file: String,
    /// Every column's variable name, in the file's order.
    pub columns: Vec<String>,
    pub header: bool,
}

pub struct Meta<'a> {
    pub name: &'a str,
    pub source: &'a str,
    pub base: &'a str,
    pub requests: usize,
    pub left_out: &'a LeftOut,
    pub data: Option<&'a DataFile>,
}

/// A YAML double-quoted scalar.
fn q(text: &str) -> String {
    serde_json::to_string(text).expect("a string serialises")
}

fn is_template(text: &str) -> bool {
    text.starts_with("${") && text.ends_with('}') && !text[2..].contains('$')
}

fn title(step: &Step) -> Option<String> {
    let last = step.last();
    if !last.is_html() {
        return None;
    }
    let lower = last.body.to_ascii_lowercase();
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')? + 1;
    let close = open_end + lower[open_end..].find("</title")?;
    let text = last.body.get(open_end..close)?;
    let text = text
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'");
    let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then_some(text)
}

/// Each step's label: its number, then the page's title without the site's
/// name that every title ends with; the method and path instead for a form
/// sent, a step that was redirected (its title is another page's), or a
/// response without a title.
pub fn labels(steps: &[Step]) -> Vec<String> {
    let titles: Vec<Option<String>> = steps
        .iter()
        .map(|s| {
            (s.first().method == "GET" && s.hops.len() == 1)
                .then(|| title(s))
                .flatten()
        })
        .collect();
    let suffix = common_suffix(titles.iter().flatten().map(String::as_str).collect());
    steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let e = step.first();
            let what = match &titles[i] {
                Some(t) => {
                    let t = t.strip_suffix(suffix.as_str()).unwrap_or(t).trim();
                    if t.is_empty() {
                        format!("{} {}", e.method, e.url.path())
                    } else {
                        t.chars().take(60).collect()
                    }
                }
                None => format!("{} {}", e.method, e.url.path()),
            };
            format!("{:02} {what}", i + 1)
        })
        .collect()
}

/// The site's name at the end of every title (" | Moodle", " - DokuWiki"):
/// the longest common ending that starts at a separator; empty when the
/// titles are fewer than two or share none.
fn common_suffix(titles: Vec<&str>) -> String {
    if titles.len() < 2 {
        return String::new();
    }
    let first = titles[0];
    for separator in [" | ", " - ", " – ", " — ", " :: ", " · "] {
        let mut at = 0;
        while let Some(i) = first[at..].find(separator) {
            let candidate = &first[at + i..];
            if titles
                .iter()
                .all(|t| t.ends_with(candidate) && t.len() > candidate.len())
            {
                return candidate.to_string();
            }
            at += i + separator.len();
        }
    }
    String::new()
}

pub fn scenario(steps: &[Step], c: &Correlation, meta: &Meta<'_>) -> String {
    let mut y = String::new();
    header_comments(&mut y, steps, c, meta);
    top_level(&mut y, meta);
    let labels = labels(steps);
    // Each step's extractors, grouped once (not searched for each step).
    let mut extracts_of: Vec<Vec<&crate::correlate::Variable>> = vec![Vec::new(); steps.len()];
    for v in &c.variables {
        extracts_of[v.source].push(v);
    }
    for (s, step) in steps.iter().enumerate() {
        let r = &c.requests[s];
        let _ = writeln!(y, "  - label: {}", q(&labels[s]));
        if r.method != "GET" {
            let _ = writeln!(y, "    method: {}", r.method);
        }
        path_and_query(&mut y, r);
        headers_and_body(&mut y, r);
        if step.unfollowed_redirect {
            let _ = writeln!(y, "    follow_redirects: false");
        }
        let extracts = &extracts_of[s];
        if !extracts.is_empty() {
            extract_lines(&mut y, extracts);
        }
        // The pause the user took before the next step.
        if let Some(next) = steps.get(s + 1) {
            let gap = next.first().started - step.last().ended();
            if gap >= 0.1 {
                let _ = writeln!(y, "    think: {:.1}s", (gap * 10.0).round() / 10.0);
            }
        }
    }
    y
}

/// Where the scenario came from, what was left out, correlated and kept
/// secret, as comments.
fn header_comments(y: &mut String, steps: &[Step], c: &Correlation, meta: &Meta<'_>) {
    let left = meta.left_out;
    let _ = writeln!(
        y,
        "# Imported by `headroom scenario from-har` from {}: {} steps from {} recorded requests.",
        meta.source,
        steps.len(),
        meta.requests
    );
    let mut out = Vec::new();
    if left.static_files > 0 {
        out.push(format!("{} static files", left.static_files));
    }
    if !left.other_hosts.is_empty() {
        let n: usize = left.other_hosts.iter().map(|(_, n)| n).sum();
        out.push(format!("{n} requests to other hosts"));
    }
    if left.no_response > 0 {
        out.push(format!("{} without a response", left.no_response));
    }
    if !out.is_empty() {
        let _ = writeln!(y, "# Left out: {}.", out.join(", "));
    }
    if !c.variables.is_empty() {
        let _ = writeln!(
            y,
            "# Correlated (read from a response, sent back later): {}.",
            names_listed(c.variables.iter().map(|v| v.name.as_str()))
        );
    }
    let secrets: Vec<&str> = c
        .data
        .iter()
        .filter(|d| d.secret)
        .map(|d| d.name.as_str())
        .collect();
    if !secrets.is_empty() {
        let _ = writeln!(
            y,
            "# Secrets (data columns, never written here): {}.",
            secrets.join(", ")
        );
    }
}

/// The scenario's name, defaults, data file, cookies and profile, up to
/// its steps.
fn top_level(y: &mut String, meta: &Meta<'_>) {
    let _ = writeln!(y, "name: {}", q(meta.name));
    let _ = writeln!(
        y,
        "defaults:\n  base_url: {}\n  follow_redirects: true",
        q(meta.base)
    );
    if let Some(data) = meta.data {
        let _ = writeln!(
            y,
            "data:\n  file: {}\n  columns: [{}]\n  header: {}\n  share: all\n  on_end: recycle",
            q(&data.file),
            data.columns.join(", "),
            data.header
        );
    }
    let _ = writeln!(y, "cookies: clear_each_iteration");
    let _ = writeln!(y, "profile:\n  users: 1\n  iterations: 1");
    let _ = writeln!(y, "steps:");
}

/// The step's path, and its query as a mapping unless a name repeats.
fn path_and_query(y: &mut String, r: &RecordedRequest) {
    let mut names: Vec<&str> = r.query.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    let repeated = names.windows(2).any(|w| w[0] == w[1]);
    if repeated {
        // A name given twice (a[]=1&a[]=2) cannot be a YAML mapping.
        let query: Vec<String> = r
            .query
            .iter()
            .map(|(n, v)| {
                format!(
                    "{}={}",
                    form_encode(&n.replace("$${", "${")),
                    encode_unless_template(v)
                )
            })
            .collect();
        let _ = writeln!(
            y,
            "    path: {}",
            q(&format!("{}?{}", r.path, query.join("&")))
        );
    } else {
        let _ = writeln!(y, "    path: {}", q(&r.path));
    }
    if !r.query.is_empty() && !repeated {
        let _ = writeln!(y, "    query:");
        for (name, v) in &r.query {
            let _ = writeln!(y, "      {}: {}", q(name), q(v));
        }
    }
}

/// The step's headers (its content type among them) and body.
fn headers_and_body(y: &mut String, r: &RecordedRequest) {
    let content_type = match &r.body {
        RecordedBody::Raw { content_type, .. } | RecordedBody::Multipart { content_type, .. } => {
            Some(content_type)
        }
        _ => None,
    };
    if !r.headers.is_empty() || content_type.is_some() {
        let _ = writeln!(y, "    headers:");
        for (name, v) in &r.headers {
            let _ = writeln!(y, "      {}: {}", q(name), q(v));
        }
        if let Some(content_type) = content_type {
            let _ = writeln!(y, "      \"Content-Type\": {}", q(content_type));
        }
    }
    match &r.body {
        RecordedBody::None => {}
        RecordedBody::Form(pairs) => {
            let _ = writeln!(y, "    form:");
            for (name, v) in pairs {
                let _ = writeln!(y, "      {}: {}", q(name), q(v));
            }
        }
        RecordedBody::Json(json) => {
            let _ = writeln!(y, "    json: {}", json_text(json));
        }
        RecordedBody::Raw { text, .. } => {
            let _ = writeln!(y, "    body: {}", q(text));
        }
        RecordedBody::Multipart { body, .. } => {
            let _ = writeln!(y, "    body: {}", q(&body.render()));
        }
    }
}

/// The step's extractors, each required.
fn extract_lines(y: &mut String, extracts: &[&crate::correlate::Variable]) {
    let _ = writeln!(y, "    extract:");
    for v in extracts {
        let _ = writeln!(y, "      - name: {}", v.name);
        match &v.extract {
            Extract::Css {
                selector,
                attribute,
                nth,
            } => {
                let _ = writeln!(y, "        css: {}", q(&format!("{selector}@{attribute}")));
                if *nth > 1 {
                    let _ = writeln!(y, "        match: {nth}");
                }
            }
            Extract::Json(pointer) => {
                let _ = writeln!(y, "        json: {}", q(pointer));
            }
            Extract::Regex {
                pattern,
                json_string,
            } => {
                let _ = writeln!(y, "        regex: {}", q(pattern));
                if *json_string {
                    let _ = writeln!(y, "        decode: json");
                }
            }
            Extract::Cookie(name) => {
                let _ = writeln!(y, "        cookie: {}", q(name));
            }
        }
        let _ = writeln!(y, "        required: true");
    }
}

/// Names for a comment line, each once: the first 20, then how many more.
fn names_listed<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let mut seen = std::collections::HashSet::new();
    let names: Vec<&str> = names.filter(|n| seen.insert(*n)).collect();
    let mut text = names
        .iter()
        .take(20)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > 20 {
        text.push_str(&format!(" and {} more", names.len() - 20));
    }
    text
}

/// A query value for a path: a template as it is, recorded text encoded
/// (its `$` and braces then need no escape).
fn encode_unless_template(v: &str) -> String {
    if is_template(v) {
        v.to_string()
    } else {
        form_encode(&v.replace("$${", "${"))
    }
}

/// A JSON body as a YAML flow value (a space after each ':' and ',', as
/// YAML's flow style wants), its recorded strings' `${` escaped.
fn json_text(json: &serde_json::Value) -> String {
    match json {
        serde_json::Value::String(s) => q(s),
        serde_json::Value::Array(list) => {
            let items: Vec<String> = list.iter().map(json_text).collect();
            format!("[{}]", items.join(", "))
        }
        serde_json::Value::Object(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", q(k), json_text(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sites_name_is_cut_from_titles() {
        assert_eq!(common_suffix(vec!["Home | LMS", "Log in | LMS"]), " | LMS");
        assert_eq!(common_suffix(vec!["a - b - Wiki", "c - Wiki"]), " - Wiki");
        assert_eq!(common_suffix(vec!["Home | LMS"]), "");
        assert_eq!(common_suffix(vec!["Home", "Other"]), "");
    }

    #[test]
    fn values_are_quoted_and_queries_encoded() {
        assert_eq!(q("${sesskey}"), "\"${sesskey}\"");
        assert_eq!(q("a\nb"), "\"a\\nb\"");
        assert_eq!(
            json_text(&serde_json::json!({"a": "${t}", "b": "$${u", "n": 3})),
            r#"{"a": "${t}", "b": "$${u", "n": 3}"#
        );
        assert_eq!(encode_unless_template("$${x} y"), "%24%7Bx%7D+y");
        assert_eq!(encode_unless_template("${x}"), "${x}");
    }
}
