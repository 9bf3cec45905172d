//! Reading responses: extractors (regex, CSS selector, JSON pointer,
//! header, cookie) that set variables, and checks that pass or fail a
//! sample.

use super::cookies::CookieJar;
use super::template::{plain, regex_escape, RenderContext, Template, VarId};
use headroom_import::held::json_unescaped;
use headroom_units::rng::Rng;
use std::time::Duration;

/// Which match an extractor keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// 1-based.
    Nth(usize),
    Random,
    /// Every match, joined with commas.
    All,
}

#[derive(Debug, Clone)]
pub enum ExtractKind {
    Regex {
        pattern: regex::Regex,
        group: usize,
        pick: Pick,
        /// The match is the inside of a JSON string (a token in a page's
        /// script: `"csrfToken":"ab+\\"`): its escapes are decoded.
        json_string: bool,
    },
    Css {
        selector: scraper::Selector,
        attribute: Option<String>,
        pick: Pick,
    },
    JsonPointer(String),
    Header(String),
    Cookie(String),
}

#[derive(Debug, Clone)]
pub struct Extractor {
    pub into: VarId,
    /// The variable's name, for messages.
    pub name: String,
    pub kind: ExtractKind,
    /// Value when nothing matches (empty when not given); may hold `${var}`.
    pub default: Option<Template>,
    /// Fail the step when nothing matches.
    pub required: bool,
    /// For required extractors: the check that counts their failures.
    pub check: Option<u16>,
}

#[derive(Debug, Clone)]
pub enum CheckKind {
    /// Status in one of these inclusive ranges.
    Status(Vec<(u16, u16)>),
    Contains(Template),
    NotContains(Template),
    Matches(Pattern),
    NotMatches(Pattern),
    MaxTime(Duration),
}

/// What a text check reads (`in:`): JMeter's Response Assertion fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Field {
    /// The body, decoded (JMeter's "Text Response").
    #[default]
    Body,
    /// The response's status line and headers as received.
    Headers,
    /// The reason phrase of the status line ("OK", "Found").
    Message,
}

/// A regular expression whose text may hold `${var}`: the variable's value
/// stands for itself (its metacharacters are escaped), and the expression
/// is compiled when the check runs.
#[derive(Debug, Clone)]
pub enum Pattern {
    Fixed(regex::Regex),
    Templated(Template),
}

impl Pattern {
    pub fn is_match(&self, text: &str, ctx: &mut RenderContext<'_>, scratch: &mut String) -> bool {
        match self {
            Pattern::Fixed(pattern) => pattern.is_match(text),
            Pattern::Templated(template) => {
                scratch.clear();
                template.render_into(scratch, ctx, regex_escape);
                regex::Regex::new(scratch).is_ok_and(|pattern| pattern.is_match(text))
            }
        }
    }
}

#[derive(Debug, Clone)]
pub struct Check {
    /// Index in the scenario's check table (per-check counts).
    pub id: u16,
    pub name: String,
    pub kind: CheckKind,
    pub field: Field,
}

/// What extractors and checks read.
pub struct Response<'a> {
    pub status: u16,
    pub headers: &'a [(&'a str, &'a str)],
    /// The status line and headers as received.
    pub head: &'a [u8],
    pub body: &'a [u8],
    pub elapsed: Duration,
}

impl Response<'_> {
    /// The text a check on `field` reads.
    fn field(&self, field: Field) -> &[u8] {
        match field {
            Field::Body => self.body,
            Field::Headers => self.head,
            Field::Message => {
                let line = self.head.split(|&b| b == b'\n').next().unwrap_or(b"");
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                // "HTTP/1.1 200 OK": what follows the second space.
                let mut parts = line.splitn(3, |&b| b == b' ');
                parts.nth(2).unwrap_or(b"")
            }
        }
    }
}

impl Check {
    /// Whether the response passes; `ctx` renders the check's `${var}`s and
    /// `scratch` is a reused buffer for them.
    pub fn passes(
        &self,
        response: &Response<'_>,
        ctx: &mut RenderContext<'_>,
        scratch: &mut String,
    ) -> bool {
        let field = response.field(self.field);
        let mut contains = |text: &Template| {
            scratch.clear();
            text.render_into(scratch, ctx, plain);
            memchr::memmem::find(field, scratch.as_bytes()).is_some()
        };
        match &self.kind {
            CheckKind::Status(ranges) => ranges
                .iter()
                .any(|(lo, hi)| (*lo..=*hi).contains(&response.status)),
            CheckKind::Contains(text) => contains(text),
            CheckKind::NotContains(text) => !contains(text),
            CheckKind::Matches(pattern) => {
                pattern.is_match(&String::from_utf8_lossy(field), ctx, scratch)
            }
            CheckKind::NotMatches(pattern) => {
                !pattern.is_match(&String::from_utf8_lossy(field), ctx, scratch)
            }
            CheckKind::MaxTime(limit) => response.elapsed <= *limit,
        }
    }
}

fn pick_from(matches: Vec<String>, pick: Pick, rng: &mut Rng) -> Option<String> {
    if matches.is_empty() {
        return None;
    }
    match pick {
        Pick::Nth(n) => matches.into_iter().nth(n.saturating_sub(1)),
        Pick::Random => {
            let i = rng.between(0, matches.len() as u64 - 1) as usize;
            matches.into_iter().nth(i)
        }
        Pick::All => Some(matches.join(",")),
    }
}

impl Extractor {
    /// Applies the extractor: `Ok(true)` when it matched, `Ok(false)` when
    /// the default (or nothing) was set; `Err` carries the failure message
    /// when a required value is missing. `vu` and `iteration` render the
    /// default.
    pub fn apply(
        &self,
        response: &Response<'_>,
        jar: &CookieJar,
        vars: &mut [String],
        rng: &mut Rng,
        vu: u32,
        iteration: u64,
    ) -> Result<bool, String> {
        let found: Option<String> = match &self.kind {
            ExtractKind::Regex {
                pattern,
                group,
                pick,
                json_string,
            } => {
                let body = String::from_utf8_lossy(response.body);
                let text = |m: regex::Match<'_>| {
                    if *json_string {
                        json_unescaped(m.as_str())
                    } else {
                        m.as_str().to_string()
                    }
                };
                let matches: Vec<String> = match pick {
                    Pick::Nth(1) => pattern
                        .captures(&body)
                        .and_then(|c| c.get(*group))
                        .map(text)
                        .into_iter()
                        .collect(),
                    _ => pattern
                        .captures_iter(&body)
                        .filter_map(|c| c.get(*group).map(text))
                        .collect(),
                };
                pick_from(matches, *pick, rng)
            }
            ExtractKind::Css {
                selector,
                attribute,
                pick,
            } => {
                let document =
                    scraper::Html::parse_document(&String::from_utf8_lossy(response.body));
                let matches: Vec<String> = document
                    .select(selector)
                    .filter_map(|element| match attribute {
                        Some(name) => element.value().attr(name).map(str::to_string),
                        None => Some(element.text().collect::<String>().trim().to_string()),
                    })
                    .collect();
                pick_from(matches, *pick, rng)
            }
            ExtractKind::JsonPointer(pointer) => {
                serde_json::from_slice::<serde_json::Value>(response.body)
                    .ok()
                    .and_then(|json| {
                        json.pointer(pointer).map(|v| match v {
                            serde_json::Value::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                    })
            }
            ExtractKind::Header(name) => response
                .headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.to_string()),
            ExtractKind::Cookie(name) => jar.value(name).map(str::to_string),
        };
        match found {
            Some(value) => {
                vars[self.into] = value;
                Ok(true)
            }
            None if self.required => Err(format!("extract {}: nothing matched", self.name)),
            None => {
                let mut value = String::new();
                if let Some(default) = &self.default {
                    let mut ctx = RenderContext {
                        vars,
                        vu,
                        iteration,
                        rng,
                    };
                    default.render_into(&mut value, &mut ctx, plain);
                }
                vars[self.into] = value;
                Ok(false)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response<'a>(body: &'a str, headers: &'a [(&'a str, &'a str)]) -> Response<'a> {
        Response {
            status: 200,
            headers,
            head: b"HTTP/1.1 200 Fine Thanks\r\nContent-Type: text/html\r\nX-Cache: HIT\r\n",
            body: body.as_bytes(),
            elapsed: Duration::from_millis(30),
        }
    }

    fn template(text: &str) -> Template {
        let mut vars = super::super::template::VarTable::default();
        vars.declare("v");
        vars.declare("who");
        Template::compile(text, &vars).unwrap()
    }

    fn run(kind: ExtractKind, body: &str) -> Result<String, String> {
        let extractor = Extractor {
            into: 0,
            name: "v".into(),
            kind,
            default: Some(template("none-${who}-${__vu}")),
            required: false,
            check: None,
        };
        let mut vars = vec![String::new(), "ann".to_string()];
        let headers = [("Location", "/next"), ("Set-Cookie", "a=b")];
        let mut jar = CookieJar::default();
        jar.store("MoodleSession=s1", "h", "/", std::time::SystemTime::now());
        extractor.apply(
            &response(body, &headers),
            &jar,
            &mut vars,
            &mut Rng::new(1, 1),
            4,
            1,
        )?;
        Ok(vars.remove(0))
    }

    #[test]
    fn extractors() {
        let html = r#"<form><input type="hidden" name="sesskey" value="K1"><input name="logintoken" value="T9"></form><a>x1</a><a>x2</a>"#;
        let re = |p: &str, pick| ExtractKind::Regex {
            pattern: regex::Regex::new(p).unwrap(),
            group: 1,
            pick,
            json_string: false,
        };
        assert_eq!(
            run(re(r#"name="logintoken" value="(\w+)""#, Pick::Nth(1)), html).unwrap(),
            "T9"
        );
        assert_eq!(run(re(r"<a>(\w+)</a>", Pick::Nth(2)), html).unwrap(), "x2");
        assert_eq!(run(re(r"<a>(\w+)</a>", Pick::All), html).unwrap(), "x1,x2");
        assert_eq!(
            run(re(r"nothing(\d)", Pick::Nth(1)), html).unwrap(),
            "none-ann-4"
        );
        // A token inside a script's JSON string, decoded: MediaWiki's
        // `+\\` ends in one backslash; PHP writes `/` as `\/`.
        let script = r#"<script>x={"csrfToken":"ab12cd+\\","u":"a\/b\u00e9"}</script>"#;
        let decoded = |p: &str| ExtractKind::Regex {
            pattern: regex::Regex::new(p).unwrap(),
            group: 1,
            pick: Pick::Nth(1),
            json_string: true,
        };
        assert_eq!(
            run(decoded(r#""csrfToken":"([^"]+)""#), script).unwrap(),
            r"ab12cd+\"
        );
        assert_eq!(
            run(decoded(r#""u":"([^"]+)""#), script).unwrap(),
            "a/b\u{e9}"
        );
        assert_eq!(
            run(re(r#""csrfToken":"([^"]+)""#, Pick::Nth(1)), script).unwrap(),
            r"ab12cd+\\"
        );
        // Text that is not a JSON string's inside is kept as it is.
        assert_eq!(json_unescaped(r"a\q"), r"a\q");
        let css = |s: &str, a: Option<&str>| ExtractKind::Css {
            selector: scraper::Selector::parse(s).unwrap(),
            attribute: a.map(str::to_string),
            pick: Pick::Nth(1),
        };
        assert_eq!(
            run(css("input[name=sesskey]", Some("value")), html).unwrap(),
            "K1"
        );
        assert_eq!(run(css("a", None), html).unwrap(), "x1");
        assert_eq!(
            run(
                ExtractKind::JsonPointer("/a/1/b".into()),
                r#"{"a":[0,{"b":"deep"}]}"#
            )
            .unwrap(),
            "deep"
        );
        assert_eq!(
            run(ExtractKind::JsonPointer("/n".into()), r#"{"n":42}"#).unwrap(),
            "42"
        );
        assert_eq!(
            run(ExtractKind::Header("location".into()), "").unwrap(),
            "/next"
        );
        assert_eq!(
            run(ExtractKind::Cookie("MoodleSession".into()), "").unwrap(),
            "s1"
        );
        let required = Extractor {
            into: 0,
            name: "sesskey".into(),
            kind: ExtractKind::Header("x-none".into()),
            default: None,
            required: true,
            check: Some(0),
        };
        let err = required
            .apply(
                &response("", &[]),
                &CookieJar::default(),
                &mut [String::new()],
                &mut Rng::new(1, 1),
                1,
                1,
            )
            .unwrap_err();
        assert_eq!(err, "extract sesskey: nothing matched");
    }

    #[test]
    fn checks() {
        let r = response("You are logged in as Ann (a.b)", &[]);
        let check_in = |kind, who: &str, field| {
            let vars = [String::new(), who.to_string()];
            let mut rng = Rng::new(1, 1);
            let mut ctx = RenderContext {
                vars: &vars,
                vu: 1,
                iteration: 1,
                rng: &mut rng,
            };
            Check {
                id: 0,
                name: "c".into(),
                kind,
                field,
            }
            .passes(&r, &mut ctx, &mut String::new())
        };
        let check = |kind, who: &str| check_in(kind, who, Field::Body);
        let check_fixed = |kind| check(kind, "");
        assert!(check_fixed(CheckKind::Status(vec![(200, 200), (302, 303)])));
        assert!(!check_fixed(CheckKind::Status(vec![(300, 399)])));
        assert!(check_fixed(CheckKind::Contains(template("logged in as"))));
        assert!(!check_fixed(CheckKind::NotContains(template(
            "logged in as"
        ))));
        assert!(check_fixed(CheckKind::Matches(Pattern::Fixed(
            regex::Regex::new(r"as \w+ ").unwrap()
        ))));
        // ${who} is rendered, in contains, not_contains and matches.
        let contains = || CheckKind::Contains(template("logged in as ${who}"));
        assert!(check(contains(), "Ann"));
        assert!(!check(contains(), "Bob"));
        assert!(check(CheckKind::NotContains(template("as ${who}")), "Bob"));
        let matches = || CheckKind::Matches(Pattern::Templated(template(r"as \w+ \(${who}\)$")));
        assert!(check(matches(), "a.b"));
        // The value stands for itself: '.' is not a wildcard.
        assert!(!check(matches(), "a_b"));
        assert!(check_fixed(CheckKind::NotMatches(Pattern::Fixed(
            regex::Regex::new(r"as \d").unwrap()
        ))));
        assert!(!check_fixed(CheckKind::NotMatches(Pattern::Fixed(
            regex::Regex::new(r"as \w").unwrap()
        ))));
        // in: headers reads the status line and headers; in: message the
        // reason phrase; neither reads the body.
        let contains = |t| CheckKind::Contains(template(t));
        assert!(check_in(contains("X-Cache: HIT"), "", Field::Headers));
        assert!(check_in(contains("HTTP/1.1 200"), "", Field::Headers));
        assert!(!check_in(contains("logged in"), "", Field::Headers));
        assert!(!check(contains("X-Cache"), ""));
        let equals = |t| CheckKind::Matches(Pattern::Fixed(regex::Regex::new(t).unwrap()));
        assert!(check_in(equals("^Fine Thanks$"), "", Field::Message));
        assert!(!check_in(equals("^200"), "", Field::Message));
        assert!(check_fixed(CheckKind::MaxTime(Duration::from_millis(30))));
        assert!(!check_fixed(CheckKind::MaxTime(Duration::from_millis(29))));
    }
}
