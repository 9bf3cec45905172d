//! `${name}` templates: compiled once when the scenario is checked (an
//! unknown variable is an error then, not at run time) and rendered per
//! request into a reused buffer.
//!
//! Built-ins: `${__time}` (epoch ms), `${__random(1,100)}` (integer in the
//! range), `${__random_string(8)}` (letters and digits), `${__vu}` (VU
//! number), `${__iteration}` (1-based iteration of the VU). `$${` writes a
//! literal `${`.

use headroom_units::rng::Rng;
use std::fmt::Write as _;

/// Index of a variable in a VU's variable table.
pub type VarId = usize;

/// Variable names, in the order they were declared.
#[derive(Debug, Default, Clone)]
pub struct VarTable {
    names: Vec<String>,
}

impl VarTable {
    /// The id of `name`, declaring it when new.
    pub fn declare(&mut self, name: &str) -> VarId {
        match self.lookup(name) {
            Some(id) => id,
            None => {
                self.names.push(name.to_string());
                self.names.len() - 1
            }
        }
    }

    pub fn lookup(&self, name: &str) -> Option<VarId> {
        self.names.iter().position(|n| n == name)
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Literal(String),
    Var(VarId),
    Time,
    Random(i64, i64),
    RandomString(usize),
    Vu,
    Iteration,
}

/// A compiled template.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Template {
    segments: Vec<Segment>,
}

/// Why a template does not compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    /// Byte offset of the problem in the template text.
    pub offset: usize,
    pub message: String,
}

/// What rendering needs from the VU.
pub struct RenderContext<'a> {
    pub vars: &'a [String],
    pub vu: u32,
    pub iteration: u64,
    pub rng: &'a mut Rng,
}

impl Template {
    /// Compiles `text`; variables must already be declared in `vars`.
    pub fn compile(text: &str, vars: &VarTable) -> Result<Template, TemplateError> {
        let mut segments = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        let mut offset = 0;
        while let Some(at) = rest.find('$') {
            literal.push_str(&rest[..at]);
            let after = &rest[at..];
            if let Some(after_escape) = after.strip_prefix("$${") {
                literal.push_str("${");
                rest = after_escape;
                offset += at + 3;
                continue;
            }
            if !after.starts_with("${") {
                literal.push('$');
                rest = &after[1..];
                offset += at + 1;
                continue;
            }
            let close = after.find('}').ok_or_else(|| TemplateError {
                offset: offset + at,
                message: "'${' without a closing '}'".into(),
            })?;
            let name = after[2..close].trim();
            let segment = parse_reference(name, vars).map_err(|message| TemplateError {
                offset: offset + at,
                message,
            })?;
            if !literal.is_empty() {
                segments.push(Segment::Literal(std::mem::take(&mut literal)));
            }
            segments.push(segment);
            rest = &after[close + 1..];
            offset += at + close + 1;
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            segments.push(Segment::Literal(literal));
        }
        Ok(Template { segments })
    }

    /// True when the template has no variable part.
    pub fn is_constant(&self) -> bool {
        self.segments
            .iter()
            .all(|s| matches!(s, Segment::Literal(_)))
    }

    /// The literal text, when the template has no variable part.
    pub fn literal_text(&self) -> Option<String> {
        self.is_constant().then(|| {
            self.segments
                .iter()
                .map(|s| match s {
                    Segment::Literal(text) => text.as_str(),
                    _ => "",
                })
                .collect()
        })
    }

    /// True when the template starts with a variable: as a path, it is a
    /// link (a URL or a path taken from a response).
    pub fn starts_with_var(&self) -> bool {
        matches!(self.segments.first(), Some(Segment::Var(_)))
    }

    /// The variables the template uses.
    pub fn vars(&self) -> impl Iterator<Item = VarId> + '_ {
        self.segments.iter().filter_map(|s| match s {
            Segment::Var(id) => Some(*id),
            _ => None,
        })
    }

    /// The literal parts, for checks made once when the scenario is read.
    pub fn literals(&self) -> impl Iterator<Item = &str> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Literal(text) => Some(text.as_str()),
            _ => None,
        })
    }

    /// Appends the rendered text to `out`, passing each variable part
    /// through `escape` (identity, or URL encoding for queries and forms).
    pub fn render_into(
        &self,
        out: &mut String,
        ctx: &mut RenderContext<'_>,
        escape: fn(&mut String, &str),
    ) {
        self.render(out, ctx, plain, escape);
    }

    /// Appends the rendered text with every part, literal or variable,
    /// passed through `encode`: a `query:` or `form:` name or value, which
    /// the file gives as plain text.
    pub fn render_encoded(
        &self,
        out: &mut String,
        ctx: &mut RenderContext<'_>,
        encode: fn(&mut String, &str),
    ) {
        self.render(out, ctx, encode, encode);
    }

    /// Appends a request path. Literal text is kept as written, with only
    /// the characters a URL cannot hold (space, non-ASCII, controls)
    /// percent-encoded. A variable that starts the path is a URL (an
    /// extracted link) and is treated the same; any other variable is a
    /// value, percent-encoded whole as a path segment, or as a query
    /// component once the path has a '?'.
    pub fn render_path(&self, out: &mut String, ctx: &mut RenderContext<'_>) {
        let start = out.len();
        for (i, segment) in self.segments.iter().enumerate() {
            let in_query = out[start..].contains('?');
            match segment {
                Segment::Var(id) if i == 0 => {
                    let link = &ctx.vars[*id];
                    // The fragment stays in the browser: it is never sent.
                    match link.split_once('#') {
                        Some((before, _)) => {
                            url_encode_invalid(out, before);
                            return;
                        }
                        None => url_encode_invalid(out, link),
                    }
                }
                Segment::Var(id) if in_query => form_encode(out, &ctx.vars[*id]),
                Segment::Var(id) => segment_encode(out, &ctx.vars[*id]),
                Segment::Literal(text) => match text.split_once('#') {
                    // The fragment stays in the browser: it is never sent.
                    Some((before, _)) => {
                        url_encode_invalid(out, before);
                        return;
                    }
                    None => url_encode_invalid(out, text),
                },
                other => self.render_one(other, out, ctx, plain, plain),
            }
        }
    }

    fn render(
        &self,
        out: &mut String,
        ctx: &mut RenderContext<'_>,
        literal: fn(&mut String, &str),
        escape: fn(&mut String, &str),
    ) {
        for segment in &self.segments {
            self.render_one(segment, out, ctx, literal, escape);
        }
    }

    fn render_one(
        &self,
        segment: &Segment,
        out: &mut String,
        ctx: &mut RenderContext<'_>,
        literal: fn(&mut String, &str),
        escape: fn(&mut String, &str),
    ) {
        match segment {
            Segment::Literal(text) => literal(out, text),
            Segment::Var(id) => escape(out, &ctx.vars[*id]),
            Segment::Time => {
                let ms = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_millis();
                let _ = write!(out, "{ms}");
            }
            Segment::Random(low, high) => {
                let span = (high - low) as u64;
                let value = *low + ctx.rng.between(0, span) as i64;
                let _ = write!(out, "{value}");
            }
            Segment::RandomString(length) => {
                const ALPHABET: &[u8] =
                    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
                for _ in 0..*length {
                    let i = ctx.rng.between(0, ALPHABET.len() as u64 - 1) as usize;
                    out.push(ALPHABET[i] as char);
                }
            }
            Segment::Vu => {
                let _ = write!(out, "{}", ctx.vu);
            }
            Segment::Iteration => {
                let _ = write!(out, "{}", ctx.iteration);
            }
        }
    }
}

fn parse_reference(name: &str, vars: &VarTable) -> Result<Segment, String> {
    let call = |prefix: &str| -> Option<Vec<&str>> {
        let inner = name
            .strip_prefix(prefix)?
            .strip_prefix('(')?
            .strip_suffix(')')?;
        Some(inner.split(',').map(str::trim).collect())
    };
    match name {
        "" => return Err("empty variable name in '${}'".into()),
        "__time" => return Ok(Segment::Time),
        "__vu" => return Ok(Segment::Vu),
        "__iteration" => return Ok(Segment::Iteration),
        _ => {}
    }
    if let Some(args) = call("__random_string") {
        let length = args
            .first()
            .and_then(|a| a.parse::<usize>().ok())
            .filter(|n| (1..=4096).contains(n))
            .ok_or("write ${__random_string(LENGTH)} with a length from 1 to 4096")?;
        return Ok(Segment::RandomString(length));
    }
    if let Some(args) = call("__random") {
        let bounds: Vec<i64> = args.iter().filter_map(|a| a.parse().ok()).collect();
        return match bounds[..] {
            [low, high] if low <= high && args.len() == 2 => Ok(Segment::Random(low, high)),
            _ => Err("write ${__random(LOW,HIGH)} with whole numbers, LOW <= HIGH".into()),
        };
    }
    if name.starts_with("__") {
        return Err(format!(
            "unknown built-in '{name}': use __time, __random(LOW,HIGH), __random_string(LENGTH), __vu or __iteration"
        ));
    }
    match vars.lookup(name) {
        Some(id) => Ok(Segment::Var(id)),
        None => {
            let known = if vars.is_empty() {
                "no variables are defined".to_string()
            } else {
                format!("defined: {}", vars.names().join(", "))
            };
            Err(format!(
                "unknown variable '{name}' ({known}); define it under variables:, as a data column, or with extract:"
            ))
        }
    }
}

/// Writes `text` unchanged.
pub fn plain(out: &mut String, text: &str) {
    out.push_str(text);
}

/// Writes `text` with the bytes a URL cannot hold percent-encoded (space,
/// controls, non-ASCII, `"<>\^`{|}`); '%' and the URL's delimiters stay.
pub fn url_encode_invalid(out: &mut String, text: &str) {
    for (i, byte) in text.bytes().enumerate() {
        match byte {
            0x21..=0x7e if !b"\"<>\\^`{|}".contains(&byte) => {
                out.push_str(&text[i..i + 1]);
            }
            _ => {
                let _ = write!(out, "%{byte:02X}");
            }
        }
    }
}

/// Writes `text` percent-encoded as one path segment: everything but
/// letters, digits and `-._~` (so '/', '?', '#', '%' and '+' in a value
/// cannot change the URL's structure).
pub fn segment_encode(out: &mut String, text: &str) {
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(byte as char)
            }
            _ => {
                let _ = write!(out, "%{byte:02X}");
            }
        }
    }
}

/// Writes `text` escaped for the inside of a JSON string (every variable
/// of a `json:` body stands inside one): a value cannot end the string,
/// add keys or break the document.
pub fn json_escape(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
}

/// Writes `text` with regex metacharacters escaped: a variable's value in a
/// `matches:` pattern stands for itself.
pub fn regex_escape(out: &mut String, text: &str) {
    out.push_str(&regex::escape(text));
}

/// Writes `text` percent-encoded for a query or urlencoded form
/// (application/x-www-form-urlencoded: space as '+').
pub fn form_encode(out: &mut String, text: &str) {
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(byte as char)
            }
            b' ' => out.push('+'),
            _ => {
                let _ = write!(out, "%{byte:02X}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(t: &Template, vars: &[String]) -> String {
        let mut rng = Rng::new(1, 1);
        let mut ctx = RenderContext {
            vars,
            vu: 7,
            iteration: 3,
            rng: &mut rng,
        };
        let mut out = String::new();
        t.render_into(&mut out, &mut ctx, plain);
        out
    }

    #[test]
    fn renders_variables_and_builtins() {
        let mut vars = VarTable::default();
        vars.declare("user");
        let t = Template::compile(
            "/u/${user}?vu=${__vu}&i=${ __iteration }&cost=$5&lit=$${x}",
            &vars,
        )
        .unwrap();
        assert_eq!(
            render(&t, &["ann".into()]),
            "/u/ann?vu=7&i=3&cost=$5&lit=${x}"
        );
        let r = Template::compile("${__random(5,5)}-${__random_string(6)}", &vars).unwrap();
        let text = render(&r, &["x".into()]);
        assert!(text.starts_with("5-") && text.len() == 8, "{text}");
        assert!(Template::compile("plain", &vars).unwrap().is_constant());
    }

    #[test]
    fn errors_say_where_and_what() {
        let vars = VarTable::default();
        let e = Template::compile("/x/${nope}", &vars).unwrap_err();
        assert_eq!(e.offset, 3);
        assert!(e.message.contains("unknown variable 'nope'"));
        assert!(Template::compile("${open", &vars)
            .unwrap_err()
            .message
            .contains("closing"));
        assert!(Template::compile("${__random(9,1)}", &vars).is_err());
        assert!(Template::compile("${__nothing}", &vars).is_err());
    }

    /// What a server decodes from each rendered request part must be the
    /// value given, whatever characters it holds.
    #[test]
    fn values_survive_encoding_in_every_place() {
        let mut vars = VarTable::default();
        vars.declare("v");
        let values = [
            "Main Page",
            "a b+c\\&d=é#",
            "100%",
            "a/b?c",
            "x\r\nInjected: 1",
            "日本",
        ];
        let decode = |text: &str| {
            let bytes = text.as_bytes();
            let mut out = Vec::new();
            let mut i = 0;
            while i < bytes.len() {
                match bytes[i] {
                    b'+' => out.push(b' '),
                    b'%' => {
                        out.push(u8::from_str_radix(&text[i + 1..i + 3], 16).unwrap());
                        i += 2;
                    }
                    b => out.push(b),
                }
                i += 1;
            }
            String::from_utf8(out).unwrap()
        };
        let is_clean = |text: &str| {
            text.bytes()
                .all(|b| (0x21..=0x7e).contains(&b) && b != b'#')
        };
        for value in values {
            let vars_now = [value.to_string()];
            let mut rng = Rng::new(1, 1);
            let mut ctx = RenderContext {
                vars: &vars_now,
                vu: 1,
                iteration: 1,
                rng: &mut rng,
            };
            // A query or form value written in the file, and one from a variable.
            for template in [
                Template::compile(value, &vars).unwrap(),
                Template::compile("${v}", &vars).unwrap(),
            ] {
                let mut out = String::new();
                template.render_encoded(&mut out, &mut ctx, form_encode);
                assert!(
                    is_clean(&out) && !out.contains(['&', '=']),
                    "{value:?} -> {out}"
                );
                assert_eq!(decode(&out), value);
            }
            // A path segment and a query value inside a path.
            let path = Template::compile("/wiki/${v}/x?q=${v}&n=1", &vars).unwrap();
            let mut out = String::new();
            path.render_path(&mut out, &mut ctx);
            assert!(is_clean(&out), "{value:?} -> {out}");
            let (segments, query) = out.split_once('?').unwrap();
            let parts: Vec<&str> = segments.split('/').collect();
            assert_eq!(parts.len(), 4, "{out}");
            assert_eq!(decode(parts[2]), value);
            let pairs: Vec<&str> = query.split('&').collect();
            assert_eq!(pairs.len(), 2, "{out}");
            assert_eq!(decode(pairs[0].strip_prefix("q=").unwrap()), value);
        }
    }

    #[test]
    fn a_path_that_starts_with_a_variable_is_a_link() {
        let mut vars = VarTable::default();
        vars.declare("next");
        let vars_now = ["/mod/forum/view.php?id=3&x=%41 b".to_string()];
        let mut rng = Rng::new(1, 1);
        let mut ctx = RenderContext {
            vars: &vars_now,
            vu: 1,
            iteration: 1,
            rng: &mut rng,
        };
        let mut out = String::new();
        Template::compile("${next}", &vars)
            .unwrap()
            .render_path(&mut out, &mut ctx);
        assert_eq!(out, "/mod/forum/view.php?id=3&x=%41%20b");
        let mut out = String::new();
        Template::compile("/a b/é", &vars)
            .unwrap()
            .render_path(&mut out, &mut ctx);
        assert_eq!(out, "/a%20b/%C3%A9");
        let mut out = String::new();
        Template::compile("/page#top?x=${next}", &vars)
            .unwrap()
            .render_path(&mut out, &mut ctx);
        assert_eq!(out, "/page", "the fragment is not sent");
    }

    #[test]
    fn json_values_stay_inside_their_string() {
        for value in ["x\",\"admin\":true,\"y\":\"", "a\"b\\c\nd\u{1}", "日本"] {
            let mut out = String::from("{\"name\":\"");
            json_escape(&mut out, value);
            out.push_str("\"}");
            let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(parsed["name"], value, "{out}");
            assert_eq!(parsed.as_object().unwrap().len(), 1);
        }
    }

    #[test]
    fn form_encoding() {
        let mut out = String::new();
        form_encode(&mut out, "a b&c=d/é");
        assert_eq!(out, "a+b%26c%3Dd%2F%C3%A9");
    }

    proptest::proptest! {
        #[test]
        fn compile_never_panics(text in "\\PC{0,40}") {
            let mut vars = VarTable::default();
            vars.declare("a");
            if let Ok(t) = Template::compile(&text, &vars) {
                let _ = render(&t, &["v".into()]);
            }
        }
    }
}
