//! JMeter test plans (`.jmx`) as scenarios. The XML is read into a tree
//! ([`parse`]: `hashTree` pairs each element with its children, disabled
//! elements dropped, every property kind kept), then [`convert`]ed: the
//! load's thread group becomes the profile, HTTP Request Defaults the base
//! URL, managers, CSV data and timers their scenario keys, samplers steps,
//! extractors and assertions `extract:` and `check:`, controllers groups,
//! loops and `once:` blocks. JMeter functions with a meaning here are
//! rewritten (`__P`, `__property`, `__time`, `__threadNum`, `__Random`);
//! every element or function that cannot run is listed, never dropped in
//! silence.

use crate::ImportError;
use quick_xml::events::Event;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A property's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Prop {
    Text(String),
    /// `elementProp`: its own properties.
    Element(Vec<(String, Prop)>),
    /// `collectionProp`: its items (named or not).
    Collection(Vec<(String, Prop)>),
}

impl Prop {
    fn text(&self) -> Option<&str> {
        match self {
            Prop::Text(t) => Some(t),
            _ => None,
        }
    }
}

/// A test element and the elements under it.
#[derive(Debug, Clone, Default)]
pub struct JmxElement {
    /// The XML tag (`HTTPSamplerProxy`, `ThreadGroup`, ...).
    pub tag: String,
    pub name: String,
    pub props: Vec<(String, Prop)>,
    pub children: Vec<JmxElement>,
}

impl JmxElement {
    fn prop(&self, name: &str) -> Option<&Prop> {
        self.props.iter().find(|(n, _)| n == name).map(|(_, p)| p)
    }

    fn text(&self, name: &str) -> String {
        self.prop(name)
            .and_then(Prop::text)
            .unwrap_or("")
            .to_string()
    }

    fn flag(&self, name: &str) -> bool {
        self.text(name).trim() == "true"
    }
}

/// A generic XML element, before the hashTree pairing.
#[derive(Debug, Default)]
struct Xml {
    tag: String,
    attrs: Vec<(String, String)>,
    text: String,
    children: Vec<Xml>,
    line: usize,
}

impl Xml {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// How deep the plan's XML may nest. A controller is two levels (itself
/// and its hashTree); real plans nest a few dozen. The tree is read,
/// converted and dropped by recursion, which this bounds.
const MAX_XML_DEPTH: usize = 200;

fn read_xml(text: &str) -> Result<Xml, ImportError> {
    let mut reader = quick_xml::Reader::from_str(text);
    let mut stack: Vec<Xml> = vec![Xml::default()];
    // Line numbers for messages, counted as the reader moves (not from the
    // start each time: that made large plans quadratic).
    let (mut counted_to, mut line) = (0usize, 1usize);
    loop {
        let position = (reader.buffer_position() as usize).min(text.len());
        line += text.as_bytes()[counted_to.min(position)..position]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        counted_to = counted_to.max(position);
        let event = reader
            .read_event()
            .map_err(|e| ImportError::Invalid(format!("line {line}: not well-formed XML ({e})")))?;
        match event {
            Event::Start(e) => {
                if stack.len() > MAX_XML_DEPTH {
                    return Err(ImportError::Invalid(format!(
                        "line {line}: elements nested more than {MAX_XML_DEPTH} deep (controllers inside controllers): \
                         headroom reads plans nested at most {MAX_XML_DEPTH} levels; flatten the controllers"
                    )));
                }
                stack.push(element(&e, line)?)
            }
            Event::Empty(e) => {
                let el = element(&e, line)?;
                stack.last_mut().expect("root").children.push(el);
            }
            Event::End(_) => {
                let done = stack.pop().expect("balanced");
                match stack.last_mut() {
                    Some(parent) => parent.children.push(done),
                    None => {
                        return Err(ImportError::Invalid(format!(
                            "line {line}: a closing tag without its opening one"
                        )))
                    }
                }
            }
            // Entities come apart from the text, as GeneralRef events.
            Event::Text(t) => stack.last_mut().expect("root").text.push_str(&t),
            Event::CData(t) => stack.last_mut().expect("root").text.push_str(&t),
            Event::GeneralRef(r) => {
                let name: &str = &r;
                let name = name.to_string();
                let s = match name.as_str() {
                    "amp" => "&".to_string(),
                    "lt" => "<".to_string(),
                    "gt" => ">".to_string(),
                    "quot" => "\"".to_string(),
                    "apos" => "'".to_string(),
                    n if n.starts_with("#x") => u32::from_str_radix(&n[2..], 16)
                        .ok()
                        .and_then(char::from_u32)
                        .map(String::from)
                        .unwrap_or_default(),
                    n if n.starts_with('#') => n[1..]
                        .parse::<u32>()
                        .ok()
                        .and_then(char::from_u32)
                        .map(String::from)
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                stack.last_mut().expect("root").text.push_str(&s);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if stack.len() != 1 {
        return Err(ImportError::Invalid(format!(
            "the file ends inside <{}>: it is cut short",
            stack.last().map(|x| x.tag.as_str()).unwrap_or("?")
        )));
    }
    let root = stack.pop().expect("root");
    root.children
        .into_iter()
        .next()
        .ok_or_else(|| ImportError::Invalid("the file has no XML element".into()))
}

fn element(e: &quick_xml::events::BytesStart, line: usize) -> Result<Xml, ImportError> {
    let qname = e.name();
    let tag: &str = qname.into_inner();
    let mut attrs = Vec::new();
    for a in e.attributes() {
        let a =
            a.map_err(|err| ImportError::Invalid(format!("line {line}: bad attribute ({err})")))?;
        let key: &str = a.key.into_inner();
        let value = a
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map_err(|err| {
                ImportError::Invalid(format!("line {line}: bad attribute value ({err})"))
            })?;
        attrs.push((key.to_string(), value.to_string()));
    }
    Ok(Xml {
        tag: tag.to_string(),
        attrs,
        line,
        ..Xml::default()
    })
}

const PROP_TAGS: [&str; 8] = [
    "stringProp",
    "boolProp",
    "intProp",
    "longProp",
    "doubleProp",
    "elementProp",
    "collectionProp",
    "objProp",
];

/// The property elements under `x`.
fn props_of(x: &Xml) -> Vec<(String, Prop)> {
    x.children
        .iter()
        .filter(|c| PROP_TAGS.contains(&c.tag.as_str()))
        .map(prop_of)
        .collect()
}

fn prop_of(x: &Xml) -> (String, Prop) {
    // Older plans write <doubleProp><name>..</name><value>..</value>.
    let child = |tag: &str| {
        x.children
            .iter()
            .find(|c| c.tag == tag)
            .map(|c| c.text.clone())
    };
    if x.attr("name").is_none() {
        if let (Some(name), Some(value)) = (child("name"), child("value")) {
            return (name, Prop::Text(value));
        }
    }
    let name = x.attr("name").unwrap_or("").to_string();
    let value = match x.tag.as_str() {
        "elementProp" => Prop::Element(props_of(x)),
        "collectionProp" => Prop::Collection(props_of(x)),
        // objProp: its <value> text, if any.
        "objProp" => Prop::Text(
            x.children
                .iter()
                .find(|c| c.tag == "value")
                .map(|c| c.text.clone())
                .unwrap_or_default(),
        ),
        _ => Prop::Text(x.text.clone()),
    };
    (name, value)
}

/// Pairs each element of a `hashTree` with the `hashTree` after it.
fn nodes(tree: &Xml) -> Result<Vec<JmxElement>, ImportError> {
    let mut out = Vec::new();
    let mut items = tree.children.iter().peekable();
    while let Some(x) = items.next() {
        if x.tag == "hashTree" {
            return Err(ImportError::Invalid(format!(
                "line {}: a hashTree with no element before it (the plan's nesting is broken)",
                x.line
            )));
        }
        let children = match items.peek() {
            Some(next) if next.tag == "hashTree" => nodes(items.next().expect("peeked"))?,
            _ => Vec::new(),
        };
        if x.attr("enabled") == Some("false") {
            continue;
        }
        out.push(JmxElement {
            tag: x.tag.clone(),
            name: x.attr("testname").unwrap_or(&x.tag).to_string(),
            props: props_of(x),
            children,
        });
    }
    Ok(out)
}

/// The plan's elements: the TestPlan node with everything under it.
pub fn parse(text: &str) -> Result<JmxElement, ImportError> {
    let root = read_xml(text)?;
    if root.tag != "jmeterTestPlan" {
        return Err(ImportError::Invalid(format!(
            "the root element is <{}>, not <jmeterTestPlan>: not a JMeter test plan",
            root.tag
        )));
    }
    let tree = root
        .children
        .iter()
        .find(|c| c.tag == "hashTree")
        .ok_or_else(|| ImportError::Invalid("the plan has no hashTree".into()))?;
    let mut top = nodes(tree)?;
    let plan = top
        .drain(..)
        .find(|n| n.tag == "TestPlan")
        .ok_or_else(|| ImportError::Invalid("the plan has no TestPlan element".into()))?;
    Ok(plan)
}

/// The prefix of the comment line that names the plan's element a
/// top-level key of the converted scenario came from.
pub const SOURCE_COMMENT: &str = "# from the plan's ";

/// `# from the plan's CSVDataSet 'Users', ...`, on one line.
fn source_comment(element: &str) -> String {
    let one_line: String = element
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    format!("{SOURCE_COMMENT}{one_line}\n")
}

/// The plan's element the top-level key around `line` (from 1) of the
/// converted scenario came from, when a comment above the key names it.
pub fn source_of(yaml: &str, line: usize) -> Option<&str> {
    let lines: Vec<&str> = yaml.lines().take(line).collect();
    let key = lines
        .iter()
        .rposition(|l| !l.is_empty() && !l.starts_with([' ', '#', '-', '\t']))?;
    lines.get(key.checked_sub(1)?)?.strip_prefix(SOURCE_COMMENT)
}

/// What the conversion made, and what it could not.
#[derive(Debug, Default)]
pub struct Converted {
    pub yaml: String,
    /// Lines for the user: what became what.
    pub converted: Vec<String>,
    /// Elements and functions that were not converted, with their path.
    pub not_converted: Vec<String>,
}

/// The plan's variables in the order JMeter defines them (a value may use
/// those above it): the scenario renders its `variables:` in the file's
/// order, so they are written in this one.
#[derive(Default)]
struct Variables {
    values: BTreeMap<String, String>,
    order: Vec<String>,
}

impl Variables {
    fn insert(&mut self, name: String, value: String) {
        if !self.values.contains_key(&name) {
            self.order.push(name.clone());
        }
        self.values.insert(name, value);
    }

    #[cfg(test)]
    fn get(&self, name: &str) -> Option<&String> {
        self.values.get(name)
    }

    fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// In the order they were defined.
    fn iter(&self) -> impl Iterator<Item = (&String, &String)> {
        self.order.iter().map(|k| (k, &self.values[k]))
    }
}

struct Ctx<'a> {
    properties: &'a BTreeMap<String, String>,
    variables: Variables,
    notes: Vec<String>,
    done: Vec<String>,
    /// The timers in scope, outermost first: JMeter runs every one of
    /// them before each sampler under them.
    timers: Vec<Timer>,
    /// `--target` replaces every host of the plan.
    on_target: bool,
    /// Each sampler's timeout, made the scenario's once every sampler is
    /// read.
    connections: Vec<Connection>,
}

/// A sampler's timeout.
#[derive(Debug, Clone)]
struct Connection {
    at: String,
    /// JMeter's response timeout plus its connect timeout (ms), if set.
    timeout_ms: Option<u64>,
}

/// A timer's delay: a constant part and at most one random part.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Timer {
    constant_ms: f64,
    random: Random,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
enum Random {
    #[default]
    None,
    Uniform(f64),
    Gaussian(f64),
}

impl Timer {
    /// The think time of all timers in scope together.
    fn sum(timers: &[Timer], notes: &mut Vec<String>, at: &str) -> Option<Timer> {
        let mut total: Option<Timer> = None;
        for t in timers {
            let sum = total.get_or_insert_with(Timer::default);
            sum.constant_ms += t.constant_ms;
            match (sum.random, t.random) {
                (_, Random::None) => {}
                (Random::None, r) => sum.random = r,
                _ => notes.push(format!(
                    "{at}: more than one random timer applies: the delays add up, only the first's random part is kept"
                )),
            }
        }
        total
    }

    fn think(&self) -> String {
        let c = self.constant_ms;
        match self.random {
            Random::None => format!("{c}ms"),
            Random::Uniform(range) => format!("{c}ms..{}ms", c + range),
            Random::Gaussian(deviation) => format!("{{mean: {c}ms, deviation: {deviation}ms}}"),
        }
    }
}

impl Ctx<'_> {
    /// JMeter's `${...}` text as headroom's: functions with a meaning
    /// here rewritten or evaluated, variables kept.
    fn text(&mut self, input: &str, at: &str) -> String {
        self.text_nested(input, at, 0)
    }

    /// [`Ctx::text`] for a function's argument `nesting` calls deep: the
    /// inner functions are evaluated first, as JMeter does.
    fn text_nested(&mut self, input: &str, at: &str, nesting: usize) -> String {
        let mut out = String::new();
        let mut rest = input;
        while let Some(i) = rest.find("${") {
            out.push_str(&rest[..i]);
            let after = &rest[i + 2..];
            let Some(end) = closing(after) else {
                out.push_str("$${");
                rest = after;
                continue;
            };
            let inner = &after[..end];
            rest = &after[end + 1..];
            if !inner.starts_with("__") {
                out.push_str(&format!("${{{inner}}}"));
                continue;
            }
            let (name, args) = match inner.find('(') {
                Some(p) if inner.ends_with(')') => {
                    (&inner[..p], split_args(&inner[p + 1..inner.len() - 1]))
                }
                _ => (inner, Some(Vec::new())),
            };
            let Some(args) = args else {
                self.notes.push(format!(
                    "{at}: the function ${{{inner}}} has unbalanced parentheses or braces in its arguments: sent as the literal text"
                ));
                out.push_str(&literal(inner));
                continue;
            };
            if nesting == 0 && nesting_depth(inner) > MAX_FUNCTION_NESTING {
                self.notes.push(format!(
                    "{at}: the function ${{{inner}}} nests functions more than {MAX_FUNCTION_NESTING} deep: sent as the literal text"
                ));
                out.push_str(&literal(inner));
                continue;
            }
            // Inner functions first: `${__P(${__P(a,b)},c)}` reads the
            // property the inner call names.
            let args: Vec<String> = args
                .iter()
                .map(|a| {
                    if a.contains("${") {
                        self.text_nested(a, at, nesting + 1)
                    } else {
                        a.clone()
                    }
                })
                .collect();
            match name {
                "__P" | "__property" => {
                    let key = args.first().cloned().unwrap_or_default();
                    // JMeter: __P's default is "1"; __property's is empty.
                    let default = if name == "__P" {
                        args.get(1).cloned().unwrap_or_else(|| "1".into())
                    } else {
                        args.get(2).cloned().unwrap_or_default()
                    };
                    // A property's value is literal text; the default is
                    // already headroom's (its variables and functions kept).
                    let value = match self.properties.get(&key) {
                        Some(v) => v.replace("${", "$${"),
                        None => default,
                    };
                    if name == "__property" {
                        if let Some(var) = args.get(1).filter(|v| !v.is_empty()) {
                            self.variables.insert(var.clone(), value.clone());
                        }
                    }
                    out.push_str(&value);
                }
                "__time" if args.iter().all(String::is_empty) => out.push_str("${__time}"),
                "__threadNum" => out.push_str("${__vu}"),
                "__Random" if args.len() == 2 => out.push_str(&format!(
                    "${{__random({},{})}}",
                    args[0].trim(),
                    args[1].trim()
                )),
                _ => {
                    self.notes.push(format!(
                        "{at}: the function ${{{inner}}} is not run by headroom: sent as the literal text"
                    ));
                    out.push_str(&literal(inner));
                }
            }
        }
        out.push_str(rest);
        out
    }
}

impl Ctx<'_> {
    /// Text whose `${var}`s the plan's variables define, filled in: what
    /// must be literal in a scenario (a base URL, a host, a port).
    fn resolved(&mut self, input: &str, at: &str) -> String {
        let mut text = self.text(input, at);
        for _ in 0..4 {
            let mut changed = false;
            for (k, v) in self.variables.iter() {
                let needle = format!("${{{k}}}");
                if text.contains(&needle) {
                    text = text.replace(&needle, v);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        text
    }
}

/// A function headroom does not run, as the literal text JMeter's plan
/// holds: every `${` in it escaped, nested ones included (an inner `${`
/// left as it was would be read as a variable or a built-in).
fn literal(inner: &str) -> String {
    format!("$${{{}}}", inner.replace("${", "$${"))
}

/// The index of the `}` that closes a `${`, nested braces counted.
fn closing(text: &str) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return Some(i),
            '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// How deep functions may nest in one another's arguments.
const MAX_FUNCTION_NESTING: usize = 16;

/// How deep `${` nest in `text`.
fn nesting_depth(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '$' if chars.peek() == Some(&'{') => {
                chars.next();
                depth += 1;
                deepest = deepest.max(depth);
            }
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// A function's arguments: commas split them, `\,` does not, nor do the
/// commas of a nested `${...}` or inside parentheses. `None` when the
/// braces or parentheses do not balance.
fn split_args(text: &str) -> Option<Vec<String>> {
    let mut out = vec![String::new()];
    let (mut braces, mut parens) = (0usize, 0usize);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let arg = out.last_mut().expect("one");
        match c {
            '\\' if chars.peek() == Some(&',') => {
                arg.push(',');
                chars.next();
            }
            ',' if braces == 0 && parens == 0 => out.push(String::new()),
            '$' if chars.peek() == Some(&'{') => {
                arg.push_str("${");
                chars.next();
                braces += 1;
            }
            '}' if braces > 0 => {
                arg.push(c);
                braces -= 1;
            }
            '(' => {
                arg.push(c);
                parens += 1;
            }
            ')' => {
                arg.push(c);
                parens = parens.checked_sub(1)?;
            }
            _ => arg.push(c),
        }
    }
    (braces == 0 && parens == 0).then_some(out)
}

fn q(text: &str) -> String {
    serde_json::to_string(text).expect("a string serialises")
}

/// An element property's text property `name` ("" when absent).
fn field(fields: &[(String, Prop)], name: &str) -> String {
    fields
        .iter()
        .find(|(n, _)| n == name)
        .and_then(|(_, p)| p.text())
        .unwrap_or("")
        .to_string()
}

/// The properties of an `Arguments` element prop (name, value) pairs.
fn arguments(prop: Option<&Prop>) -> Vec<(String, String, bool)> {
    let Some(Prop::Element(inner)) = prop else {
        return Vec::new();
    };
    let Some((_, Prop::Collection(items))) = inner.iter().find(|(n, _)| n == "Arguments.arguments")
    else {
        return Vec::new();
    };
    elements(items)
        .map(|fields| {
            let get = |k: &str| field(fields, k);
            let encode = get("HTTPArgument.always_encode") == "true";
            (get("Argument.name"), get("Argument.value"), encode)
        })
        .collect()
}

/// The element items of a collection property (arguments, headers).
fn elements(items: &[(String, Prop)]) -> impl Iterator<Item = &[(String, Prop)]> {
    items.iter().filter_map(|(_, item)| match item {
        Prop::Element(fields) => Some(fields.as_slice()),
        _ => None,
    })
}

/// HTTP Request Defaults: (protocol, domain, port, path).
#[derive(Debug, Clone, Default)]
struct Defaults {
    protocol: String,
    domain: String,
    port: String,
    path: String,
    /// Timeouts (ms) for samplers without their own.
    connect_timeout: String,
    response_timeout: String,
    /// "Retrieve All Embedded Resources".
    embedded: bool,
}

impl Defaults {
    fn base_url(&self) -> Option<String> {
        if self.domain.is_empty() {
            return None;
        }
        let protocol = if self.protocol.is_empty() {
            "http"
        } else {
            &self.protocol
        };
        let port = if self.port.is_empty() {
            String::new()
        } else {
            format!(":{}", self.port)
        };
        Some(format!(
            "{protocol}://{}{port}{}",
            self.domain,
            self.path.trim_end_matches('/')
        ))
    }
}

/// Converts a parsed plan; `properties` are the `-J` values.
pub fn convert(plan: &JmxElement, name: &str, properties: &BTreeMap<String, String>) -> Converted {
    convert_for(plan, name, properties, false)
}

/// As [`convert`]; with `on_target`, every sampler goes to the base URL
/// the user gives (`--target`), whatever host the plan names.
pub fn convert_for(
    plan: &JmxElement,
    name: &str,
    properties: &BTreeMap<String, String>,
    on_target: bool,
) -> Converted {
    let mut ctx = Ctx {
        on_target,
        properties,
        variables: Variables::default(),
        notes: Vec::new(),
        done: Vec::new(),
        timers: Vec::new(),
        connections: Vec::new(),
    };
    // Test plan variables.
    for (n, v, _) in arguments(plan.prop("TestPlan.user_defined_variables")) {
        let v = ctx.text(&v, "Test Plan variables");
        ctx.variables.insert(n, v);
    }
    let groups = ThreadGroups::of(plan, &mut ctx);
    let mut y = String::new();
    let _ = writeln!(
        y,
        "# Converted by `headroom scenario from-jmx` from the JMeter plan '{}'.",
        plan.name
    );
    let Some(main) = groups.main() else {
        ctx.notes
            .push("the plan has no thread group: nothing to run".into());
        return Converted {
            yaml: y,
            converted: ctx.done,
            not_converted: ctx.notes,
        };
    };
    let config = PlanConfig::read(plan, main, &mut ctx);
    let connection_at = write_defaults(&mut y, name, &config);
    let on_error = main.text("ThreadGroup.on_sample_error");
    if !on_error.is_empty() && on_error != "continue" {
        ctx.notes.push(format!(
            "thread group '{}': on a sampler error JMeter would '{on_error}'; headroom goes on (continue)",
            main.name
        ));
    }
    let users = groups.main_users();
    write_profile(main, users, config.throughput.as_deref(), &mut ctx, &mut y);
    if let Some(i) = groups.before {
        before_group(
            groups.all[i],
            groups.counts[i],
            &mut ctx,
            &config.defaults,
            &mut y,
        );
    }
    ctx.done.push(format!(
        "thread group '{}' → profile ({users} users)",
        main.name
    ));
    let mut steps = String::new();
    emit_steps(
        &main.children,
        &mut ctx,
        &config.defaults,
        1,
        &mut steps,
        &main.name,
    );
    // Variables last: __property() calls in steps may set some.
    if !ctx.variables.is_empty() {
        let _ = writeln!(y, "variables:");
        for (k, v) in ctx.variables.iter() {
            let _ = writeln!(y, "  {k}: {}", q(v));
        }
    }
    // JMeter resets each thread's connections every iteration unless this
    // property says otherwise.
    let per_iteration = properties
        .get("httpclient.reset_state_on_thread_group_iteration")
        .is_none_or(|v| v.trim() != "false");
    let connection = connection_defaults(&mut ctx, per_iteration);
    y.insert_str(connection_at, &connection);
    write_steps(&mut y, &mut ctx, &main.name, &steps);
    Converted {
        yaml: y,
        converted: ctx.done,
        not_converted: ctx.notes,
    }
}

/// The scenario's name and its defaults: base URL, headers, data and
/// cookies. Returns where in `y` the timeout and keep-alive go, written
/// once every sampler is read.
fn write_defaults(y: &mut String, name: &str, config: &PlanConfig) -> usize {
    let _ = writeln!(y, "name: {}", q(name));
    let _ = writeln!(y, "defaults:");
    if let Some(base) = &config.defaults.base_url() {
        let _ = writeln!(y, "  base_url: {}", q(base));
    }
    let _ = writeln!(y, "  follow_redirects: true");
    let connection_at = y.len();
    if !config.headers.is_empty() {
        let _ = writeln!(y, "  headers:");
        for (k, v) in &config.headers {
            let _ = writeln!(y, "    {}: {}", q(k), q(v));
        }
    }
    if let Some(data) = &config.data {
        y.push_str(data);
    }
    if config.clear_cookies {
        let _ = writeln!(y, "cookies: clear_each_iteration");
    }
    connection_at
}

/// The scenario's steps, or an empty list (and a note) when the thread
/// group `group` holds none headroom runs.
fn write_steps(y: &mut String, ctx: &mut Ctx, group: &str, steps: &str) {
    if steps.is_empty() {
        ctx.notes.push(format!(
            "thread group '{group}' holds no step headroom runs: the scenario has nothing to run"
        ));
        // An empty list: the scenario's check then says "steps is empty".
        let _ = writeln!(y, "steps: []");
    } else {
        let _ = writeln!(y, "steps:");
        y.push_str(steps);
    }
}

/// A plan's thread groups: the one run as the load, the one run ahead of
/// it, and why the others are not run.
struct ThreadGroups<'p> {
    all: Vec<&'p JmxElement>,
    /// Each group's threads.
    counts: Vec<u64>,
    /// The load: the (last) thread group with the most threads.
    main: Option<usize>,
    /// Ahead of the main group: the setUp group, or (groups run one after
    /// another) the group just before it, as Moodle's "Warm-up site".
    before: Option<usize>,
}

impl<'p> ThreadGroups<'p> {
    fn of(plan: &'p JmxElement, ctx: &mut Ctx) -> ThreadGroups<'p> {
        let all: Vec<&JmxElement> = plan
            .children
            .iter()
            .filter(|n| {
                matches!(
                    n.tag.as_str(),
                    "ThreadGroup" | "SetupThreadGroup" | "PostThreadGroup"
                )
            })
            .collect();
        let counts: Vec<u64> = all
            .iter()
            .map(|g| {
                let n = ctx.text(&g.text("ThreadGroup.num_threads"), "thread group");
                n.trim().parse::<u64>().unwrap_or(0)
            })
            .collect();
        let main = (0..all.len())
            .filter(|&i| all[i].tag == "ThreadGroup")
            .max_by_key(|&i| (counts[i], i));
        let serialized = plan.flag("TestPlan.serialize_threadgroups");
        let before = all
            .iter()
            .position(|g| g.tag == "SetupThreadGroup")
            .or_else(|| {
                let m = main.filter(|_| serialized)?;
                (0..m).rev().find(|&i| all[i].tag == "ThreadGroup")
            });
        for (i, g) in all.iter().enumerate() {
            if Some(i) != main && Some(i) != before {
                let why = match (g.tag.as_str(), serialized) {
                    ("PostThreadGroup", _) => "headroom has no tearDown phase",
                    (_, true) => "headroom runs one group ahead of the main one",
                    (_, false) => {
                        "headroom runs one group at a time (these run in parallel in JMeter)"
                    }
                };
                ctx.notes.push(format!(
                    "thread group '{}' ({} threads) is not run: {why}; the main group is '{}'",
                    g.name,
                    counts[i],
                    main.map(|m| all[m].name.as_str()).unwrap_or("")
                ));
            }
        }
        ThreadGroups {
            all,
            counts,
            main,
            before,
        }
    }

    fn main(&self) -> Option<&'p JmxElement> {
        self.main.map(|i| self.all[i])
    }

    /// The main group's users (at least one).
    fn main_users(&self) -> u64 {
        self.main.map(|i| self.counts[i]).unwrap_or(1).max(1)
    }
}

/// What the plan and the main group configure (the group's wins).
#[derive(Default)]
struct PlanConfig {
    defaults: Defaults,
    headers: Vec<(String, String)>,
    clear_cookies: bool,
    /// The scenario's `data:` block.
    data: Option<String>,
    /// `profile.throughput`, per minute.
    throughput: Option<String>,
}

impl PlanConfig {
    fn read(plan: &JmxElement, main: &JmxElement, ctx: &mut Ctx) -> PlanConfig {
        let mut config = PlanConfig::default();
        let scopes: Vec<&JmxElement> = plan.children.iter().chain(main.children.iter()).collect();
        for n in &scopes {
            let at = format!("{} '{}'", n.tag, n.name);
            match n.tag.as_str() {
                "ConfigTestElement" if n.prop("HTTPSampler.domain").is_some() => {
                    let t = |k: &str, c: &mut Ctx| c.resolved(&n.text(k), &at);
                    config.defaults = Defaults {
                        protocol: t("HTTPSampler.protocol", ctx),
                        domain: t("HTTPSampler.domain", ctx),
                        port: t("HTTPSampler.port", ctx),
                        path: t("HTTPSampler.path", ctx),
                        connect_timeout: t("HTTPSampler.connect_timeout", ctx),
                        response_timeout: t("HTTPSampler.response_timeout", ctx),
                        embedded: n.flag("HTTPSampler.image_parser"),
                    };
                    ctx.done.push(format!("{at} → defaults.base_url"));
                }
                "HeaderManager" => {
                    // JMeter merges the levels; the inner one's value wins.
                    for (k, v) in header_list(n, ctx, &at) {
                        config
                            .headers
                            .retain(|(name, _): &(String, String)| !name.eq_ignore_ascii_case(&k));
                        config.headers.push((k, v));
                    }
                    ctx.done.push(format!("{at} → defaults.headers"));
                }
                "CookieManager" => {
                    config.clear_cookies = n.flag("CookieManager.clearEachIteration");
                    ctx.done.push(format!("{at} → the cookie jar"));
                }
                "CSVDataSet" => {
                    config.data = Some(data_block(n, ctx, &at));
                    ctx.done.push(format!("{at} → data"));
                }
                "Arguments" => {
                    for (k, v, _) in arguments(Some(&Prop::Element(n.props.clone()))) {
                        let v = ctx.text(&v, &at);
                        ctx.variables.insert(k, v);
                    }
                    ctx.done.push(format!("{at} → variables"));
                }
                "ConstantThroughputTimer" => {
                    config.throughput = Some(throughput(n, ctx, &at));
                    ctx.done.push(format!("{at} → profile.throughput"));
                }
                "ConstantTimer" | "UniformRandomTimer" | "GaussianRandomTimer" => {
                    // The plan's; the group's are read with its steps.
                    if plan.children.iter().any(|c| std::ptr::eq(c, *n)) {
                        if let Some(t) = timer(n, ctx, &at) {
                            ctx.timers.push(t);
                        }
                    }
                }
                "ThreadGroup" | "SetupThreadGroup" | "PostThreadGroup" | "ResultCollector"
                | "BackendListener" | "Summariser" => {}
                _ if is_sampler_or_controller(&n.tag) => {}
                _ => ctx
                    .notes
                    .push(format!("{at}: not converted (no headroom equivalent)")),
            }
        }
        config
    }
}

/// A CSV Data Set as the scenario's `data:` block.
fn data_block(n: &JmxElement, ctx: &mut Ctx, at: &str) -> String {
    let file = ctx.text(&n.text("filename"), at);
    let names = n.text("variableNames");
    // All threads, or the thread group (headroom runs one): one cursor for
    // every user; the current thread: one per user (share: vu); any other
    // mode (a named group of files) is said.
    let mode = n.text("shareMode");
    let shared = match mode.as_str() {
        "shareMode.all" | "shareMode.group" | "" => true,
        "shareMode.thread" => false,
        other => {
            ctx.notes.push(format!(
                "{at}: share mode '{other}' is read as all threads sharing one cursor"
            ));
            true
        }
    };
    let recycle = n.text("recycle") != "false";
    let columns: Vec<String> = names.split(',').map(|c| c.trim().to_string()).collect();
    // The element named above the key, so that an error in the block (a
    // file that cannot be read) can name it.
    let raw = n.text("filename");
    format!(
        "{}data:\n  file: {}\n  columns: [{}]\n  header: {}\n  share: {}\n  on_end: {}\n",
        source_comment(&format!("{at}, filename {raw}")),
        q(&file),
        columns.join(", "),
        n.flag("ignoreFirstLine"),
        if shared { "all" } else { "vu" },
        if recycle { "recycle" } else { "stop" }
    )
}

/// A Constant Throughput Timer as `profile.throughput` ("30/min").
fn throughput(n: &JmxElement, ctx: &mut Ctx, at: &str) -> String {
    let per_minute = ctx.text(&n.text("throughput"), at);
    let mode = n.text("calcMode");
    // calcMode: 0 this thread only, 1 all active threads, 2 in this group,
    // 3 all active threads (shared), 4 in this group (shared).
    let shared = matches!(mode.trim(), "3" | "4") || mode.contains("(shared)");
    if !shared {
        ctx.notes.push(format!(
            "{at}: calcMode '{mode}' is applied as one cap shared by all users"
        ));
    }
    format!("{}/min", per_minute.trim())
}

/// The main group's `profile:`: its threads, ramp-up, loops or duration,
/// and the throughput cap.
fn write_profile(
    main: &JmxElement,
    users: u64,
    throughput: Option<&str>,
    ctx: &mut Ctx,
    y: &mut String,
) {
    let threads = ctx.text(&main.text("ThreadGroup.num_threads"), "thread group");
    if threads.trim().parse::<u64>().is_err() {
        ctx.notes.push(format!(
            "thread group '{}': threads '{threads}' is not a whole number: {users} user(s) run",
            main.name
        ));
    }
    let ramp = ctx.text(&main.text("ThreadGroup.ramp_time"), "thread group");
    if !ramp.trim().is_empty() && ramp.trim().parse::<u64>().is_err() {
        ctx.notes.push(format!(
            "thread group '{}': ramp-up '{ramp}' is not a whole number of seconds: users start at once",
            main.name
        ));
    }
    let mut loops = String::new();
    if let Some(Prop::Element(lc)) = main.prop("ThreadGroup.main_controller") {
        let get = |k: &str| {
            lc.iter()
                .find(|(n, _)| n == k)
                .and_then(|(_, p)| p.text())
                .unwrap_or("")
                .to_string()
        };
        loops = ctx.text(&get("LoopController.loops"), "thread group loops");
        if get("LoopController.continue_forever") == "true" && loops.trim() == "-1" {
            loops.clear();
        }
    }
    let duration = if main.flag("ThreadGroup.scheduler") {
        ctx.text(&main.text("ThreadGroup.duration"), "thread group duration")
    } else {
        String::new()
    };
    let _ = writeln!(y, "profile:\n  model: closed\n  users: {users}");
    if let Ok(r) = ramp.trim().parse::<u64>() {
        let _ = writeln!(y, "  ramp_up: {r}s");
    }
    match (loops.trim().parse::<i64>(), duration.trim().parse::<u64>()) {
        (_, Ok(d)) if d > 0 => {
            let _ = writeln!(y, "  duration: {d}s");
        }
        (Ok(n), _) if n > 0 => {
            let _ = writeln!(y, "  iterations: {n}");
        }
        _ => {
            let _ = writeln!(y, "  duration: 60s");
            ctx.notes.push("the thread group loops forever without a duration: the profile runs 60 s (give -d)".into());
        }
    }
    if let Some(t) = throughput {
        let _ = writeln!(y, "  throughput: {t}");
    }
}

/// The scenario's `timeout:` and `keep_alive:` lines: a scenario has one
/// timeout, JMeter one per sampler, so where they differ the difference is
/// said.
fn connection_defaults(ctx: &mut Ctx, per_iteration: bool) -> String {
    let mut lines = String::new();
    let connections = std::mem::take(&mut ctx.connections);
    let longest = connections.iter().filter_map(|c| c.timeout_ms).max();
    if let Some(t) = longest {
        let _ = writeln!(lines, "  timeout: {t}ms");
        ctx.done.push(format!(
            "the samplers' response (+ connect) timeouts → defaults.timeout {t}ms (it bounds the whole request)"
        ));
        for c in &connections {
            match c.timeout_ms {
                Some(own) if own != t => ctx.notes.push(format!(
                    "{}: its timeout of {own} ms is not kept: a scenario has one timeout, {t} ms (the plan's longest)",
                    c.at
                )),
                None => ctx.notes.push(format!(
                    "{}: it has no timeout in JMeter; here it times out after {t} ms (the scenario's one timeout)",
                    c.at
                )),
                _ => {}
            }
        }
    }
    if per_iteration {
        let _ = writeln!(lines, "  keep_alive: iteration");
    }
    lines
}

/// The group run ahead of the main one, as `before:` (its users, each
/// running its steps as many times as it loops).
fn before_group(g: &JmxElement, users: u64, ctx: &mut Ctx, defaults: &Defaults, y: &mut String) {
    let at = format!("thread group '{}'", g.name);
    let mut iterations = 1;
    let loops = match g.prop("ThreadGroup.main_controller") {
        Some(Prop::Element(lc)) => lc
            .iter()
            .find(|(n, _)| n == "LoopController.loops")
            .and_then(|(_, p)| p.text())
            .unwrap_or("1")
            .to_string(),
        _ => "1".to_string(),
    };
    match ctx.text(&loops, &at).trim().parse::<i64>() {
        Ok(n) if n > 0 => iterations = n,
        _ => ctx.notes.push(format!(
            "{at}: loops '{loops}' (forever or unknown) ahead of the main group: its steps run once"
        )),
    }
    if g.flag("ThreadGroup.scheduler") {
        ctx.notes.push(format!(
            "{at}: its duration is not kept ahead of the main group: it runs {iterations} iteration(s)"
        ));
    }
    // Its own configuration would apply to it alone: said, not merged.
    let (config, steps): (Vec<&JmxElement>, Vec<&JmxElement>) = g.children.iter().partition(|n| {
        matches!(
            n.tag.as_str(),
            "ConfigTestElement" | "HeaderManager" | "CookieManager" | "CSVDataSet" | "Arguments"
        )
    });
    for n in config {
        ctx.notes.push(format!(
            "{at} > {} '{}': not converted (headroom reads configuration at the plan or main group level)",
            n.tag, n.name
        ));
    }
    let steps: Vec<JmxElement> = steps.into_iter().cloned().collect();
    let mut out = String::new();
    emit_steps(&steps, ctx, defaults, 2, &mut out, &g.name);
    if out.is_empty() {
        ctx.notes.push(format!(
            "{at}: holds no step headroom runs, so nothing runs ahead of the main group"
        ));
        return;
    }
    let users = users.max(1);
    let _ = writeln!(
        y,
        "before:\n  name: {}\n  users: {users}\n  iterations: {iterations}\n  steps:",
        q(&g.name)
    );
    y.push_str(&out);
    ctx.done.push(format!(
        "{at} → before: ({users} users × {iterations} iterations, ahead of the main group)"
    ));
}

fn is_sampler_or_controller(tag: &str) -> bool {
    tag.ends_with("Sampler")
        || tag.ends_with("SamplerProxy")
        || tag.ends_with("Controller")
        || matches!(tag, "HTTPSampler" | "TestAction")
}

fn header_list(n: &JmxElement, ctx: &mut Ctx, at: &str) -> Vec<(String, String)> {
    let Some(Prop::Collection(items)) = n.prop("HeaderManager.headers") else {
        return Vec::new();
    };
    elements(items)
        .map(|fields| (field(fields, "Header.name"), field(fields, "Header.value")))
        .map(|(k, v)| (k, ctx.text(&v, at)))
        .collect()
}

fn timer(n: &JmxElement, ctx: &mut Ctx, at: &str) -> Option<Timer> {
    let ms = |k: &str, c: &mut Ctx| c.text(&n.text(k), at).trim().parse::<f64>().ok();
    let delay = ms("ConstantTimer.delay", ctx);
    let t = match n.tag.as_str() {
        "ConstantTimer" => delay.map(|d| Timer {
            constant_ms: d,
            random: Random::None,
        }),
        "UniformRandomTimer" => Some(Timer {
            constant_ms: delay.unwrap_or(0.0),
            random: Random::Uniform(ms("RandomTimer.range", ctx).unwrap_or(0.0)),
        }),
        _ => Some(Timer {
            constant_ms: delay.unwrap_or(0.0),
            random: Random::Gaussian(ms("RandomTimer.range", ctx).unwrap_or(0.0)),
        }),
    };
    match &t {
        Some(_) => ctx
            .done
            .push(format!("{at} → think (with the other timers in its scope)")),
        None => ctx
            .notes
            .push(format!("{at}: its delay is not a number: not converted")),
    }
    t
}

const TIMERS: [&str; 3] = ["ConstantTimer", "UniformRandomTimer", "GaussianRandomTimer"];

fn indent(depth: usize) -> String {
    "  ".repeat(depth)
}

/// Samplers and controllers under `nodes` as steps at `depth`.
fn emit_steps(
    nodes: &[JmxElement],
    ctx: &mut Ctx,
    defaults: &Defaults,
    depth: usize,
    out: &mut String,
    path: &str,
) {
    // The timers among these elements apply to every sampler under them.
    let scoped = ctx.timers.len();
    for n in nodes.iter().filter(|n| TIMERS.contains(&n.tag.as_str())) {
        let at = format!("{path} > {} '{}'", n.tag, n.name);
        if let Some(t) = timer(n, ctx, &at) {
            ctx.timers.push(t);
        }
    }
    for n in nodes {
        let at = format!("{path} > {} '{}'", n.tag, n.name);
        let pad = indent(depth);
        match n.tag.as_str() {
            "HTTPSamplerProxy" | "HTTPSampler" => sampler(n, ctx, defaults, depth, out, &at),
            "TransactionController" => {
                let mut head = format!("{pad}- group: {}\n", q(&n.name));
                if n.flag("TransactionController.includeTimers") {
                    let _ = writeln!(head, "{pad}  include_think: true");
                }
                if block(n, ctx, defaults, depth, &head, out, &at) {
                    ctx.done.push(format!("{at} → group"));
                }
            }
            "LoopController" => {
                let loops = ctx.text(&n.text("LoopController.loops"), &at);
                match loops.trim().parse::<u32>() {
                    Ok(count) if count > 0 => {
                        let head = format!("{pad}- loop: {count}\n");
                        if block(n, ctx, defaults, depth, &head, out, &at) {
                            ctx.done.push(format!("{at} → loop"));
                        }
                    }
                    _ => {
                        let head = format!("{pad}- loop: 1\n");
                        if block(n, ctx, defaults, depth, &head, out, &at) {
                            ctx.notes
                                .push(format!("{at}: a loop of '{loops}' is run once"));
                        }
                    }
                }
            }
            "OnceOnlyController" => {
                let head = format!("{pad}- once: true\n");
                if block(n, ctx, defaults, depth, &head, out, &at) {
                    ctx.done.push(format!("{at} → once"));
                }
            }
            "GenericController" => {
                let head = format!("{pad}- once: false\n");
                block(n, ctx, defaults, depth, &head, out, &at);
            }
            "IfController" => {
                let condition = n.text("IfController.condition");
                let condition = simple_condition(&condition).ok_or(condition);
                let head = match &condition {
                    Ok((var, value)) => {
                        format!("{pad}- if: {{var: {var}, equals: {}}}\n", q(value))
                    }
                    Err(_) => format!("{pad}- once: false\n"),
                };
                if block(n, ctx, defaults, depth, &head, out, &at) {
                    match condition {
                        Ok(_) => ctx.done.push(format!("{at} → if")),
                        Err(condition) => ctx.notes.push(format!("{at}: the condition {condition} is not converted: its steps always run")),
                    }
                }
            }
            // Timers: read above, for the samplers in their scope.
            "ConstantTimer"
            | "UniformRandomTimer"
            | "GaussianRandomTimer"
            | "ResultCollector"
            | "Summariser" => {}
            // The thread group's own configuration is read with the plan's;
            // inside a controller it would apply to that controller only.
            "ConfigTestElement"
            | "HeaderManager"
            | "CookieManager"
            | "CSVDataSet"
            | "Arguments"
            | "ConstantThroughputTimer" => {
                if depth > 1 {
                    ctx.notes.push(format!(
                        "{at}: inside a controller, it is not converted (headroom reads it at the plan or thread group level)"
                    ));
                }
            }
            _ => ctx
                .notes
                .push(format!("{at}: not run (headroom has no equivalent)")),
        }
    }
    ctx.timers.truncate(scoped);
}

/// Whether a sampler sends files (`HTTPsampler.Files` with an entry).
fn has_files(n: &JmxElement) -> bool {
    match n.prop("HTTPsampler.Files") {
        Some(Prop::Element(inner)) => inner
            .iter()
            .any(|(_, p)| matches!(p, Prop::Collection(items) if !items.is_empty())),
        _ => false,
    }
}

/// `"${var}" == "value"` (either order); JMeter's plain conditions.
fn simple_condition(text: &str) -> Option<(String, String)> {
    let (a, b) = text.split_once("==")?;
    let unquote = |s: &str| s.trim().trim_matches('"').to_string();
    let (a, b) = (unquote(a), unquote(b));
    let var = |s: &str| {
        s.strip_prefix("${")
            .and_then(|s| s.strip_suffix('}'))
            .filter(|v| !v.starts_with("__"))
            .map(str::to_string)
    };
    match (var(&a), var(&b)) {
        (Some(v), None) => Some((v, b)),
        (None, Some(v)) => Some((v, a)),
        _ => None,
    }
}

/// A controller: its `head` line(s), then its children as `steps:`.
/// One that holds no step headroom runs contributes nothing (JMeter runs
/// nothing for it either): false, and nothing is written.
fn block(
    n: &JmxElement,
    ctx: &mut Ctx,
    defaults: &Defaults,
    depth: usize,
    head: &str,
    out: &mut String,
    at: &str,
) -> bool {
    let pad = indent(depth);
    let mut inner = String::new();
    emit_steps(&n.children, ctx, defaults, depth + 2, &mut inner, at);
    if inner.is_empty() {
        ctx.done
            .push(format!("{at} → nothing (it holds no step headroom runs)"));
        return false;
    }
    out.push_str(head);
    let _ = writeln!(out, "{pad}  steps:");
    out.push_str(&inner);
    true
}

/// Where a sampler sends its request: a path under the scenario's base
/// URL, a URL of another host, or (with `--target`) its path only.
fn destination(
    (protocol, domain, port): (String, String, String),
    path: String,
    ctx: &mut Ctx,
    defaults: &Defaults,
    pad: &str,
    out: &mut String,
    at: &str,
) {
    let other_host = !domain.is_empty() && domain != defaults.domain
        || !port.is_empty() && port != defaults.port
        || !protocol.is_empty() && protocol != defaults.protocol && !defaults.domain.is_empty();
    if ctx.on_target {
        // --target: the sampler's host is replaced, its path kept.
        let rel = match path.split_once("://") {
            Some((_, rest)) => format!("/{}", rest.split_once('/').map_or("", |(_, p)| p)),
            None => path.clone(),
        };
        if other_host || path.contains("://") {
            ctx.notes.push(format!(
                "{at}: sent to --target instead of the host it names"
            ));
        }
        let rel = if rel.starts_with('/') {
            rel
        } else {
            format!("/{rel}")
        };
        let _ = writeln!(out, "{pad}  path: {}", q(&rel));
    } else if path.starts_with("http://") || path.starts_with("https://") {
        let _ = writeln!(out, "{pad}  url: {}", q(&path));
    } else if other_host || defaults.domain.is_empty() {
        let protocol = if protocol.is_empty() {
            if defaults.protocol.is_empty() {
                "http".into()
            } else {
                defaults.protocol.clone()
            }
        } else {
            protocol
        };
        let domain = if domain.is_empty() {
            defaults.domain.clone()
        } else {
            domain
        };
        let port = if port.is_empty() {
            defaults.port.clone()
        } else {
            port
        };
        let port = if port.is_empty() {
            String::new()
        } else {
            format!(":{port}")
        };
        let slash = if path.starts_with('/') { "" } else { "/" };
        let _ = writeln!(
            out,
            "{pad}  url: {}",
            q(&format!("{protocol}://{domain}{port}{slash}{path}"))
        );
    } else {
        // Under the defaults' path, as base_url already holds it.
        let rel = path
            .strip_prefix(defaults.path.trim_end_matches('/'))
            .filter(|p| p.starts_with('/'))
            .unwrap_or(&path);
        let _ = writeln!(out, "{pad}  path: {}", q(rel));
    }
}

/// A Regular Expression Extractor as an `extract:` entry.
fn regex_extractor(c: &JmxElement, ctx: &mut Ctx, pad: &str, extracts: &mut String, cat: &str) {
    let refname = c.text("RegexExtractor.refname");
    let regex = ctx.text(&c.text("RegexExtractor.regex"), cat);
    let template = c.text("RegexExtractor.template");
    let group = template.trim().trim_matches('$').parse::<usize>().ok();
    if group.is_none() {
        ctx.notes.push(format!(
            "{cat}: the template '{template}' is not one group ($N$): group 1 is used"
        ));
    }
    let number = c.text("RegexExtractor.match_number");
    let _ = writeln!(extracts, "{pad}    - name: {refname}");
    let _ = writeln!(extracts, "{pad}      regex: {}", q(&regex));
    let _ = writeln!(extracts, "{pad}      group: {}", group.unwrap_or(1));
    let chosen = pick(number.trim(), &refname, ctx, cat);
    let _ = writeln!(extracts, "{pad}      match: {chosen}");
    let default = c.text("RegexExtractor.default");
    if !default.is_empty() {
        let _ = writeln!(
            extracts,
            "{pad}      default: {}",
            q(&ctx.text(&default, cat))
        );
    }
    ctx.done.push(format!("{cat} → extract {refname}"));
}

/// A CSS Selector Extractor as an `extract:` entry.
fn html_extractor(c: &JmxElement, ctx: &mut Ctx, pad: &str, extracts: &mut String, cat: &str) {
    let refname = c.text("HtmlExtractor.refname");
    let expr = ctx.text(&c.text("HtmlExtractor.expr"), cat);
    let attribute = c.text("HtmlExtractor.attribute");
    let selector = if attribute.is_empty() {
        expr
    } else {
        format!("{expr}@{attribute}")
    };
    let _ = writeln!(extracts, "{pad}    - name: {refname}");
    let _ = writeln!(extracts, "{pad}      css: {}", q(&selector));
    let number = c.text("HtmlExtractor.match_number");
    let chosen = pick(number.trim(), &refname, ctx, cat);
    let _ = writeln!(extracts, "{pad}      match: {chosen}");
    let default = c.text("HtmlExtractor.default");
    if !default.is_empty() {
        let default = ctx.text(&default, cat);
        let _ = writeln!(extracts, "{pad}      default: {}", q(&default));
    }
    ctx.done.push(format!("{cat} → extract {refname}"));
}

fn sampler(
    n: &JmxElement,
    ctx: &mut Ctx,
    defaults: &Defaults,
    depth: usize,
    out: &mut String,
    at: &str,
) {
    let pad = indent(depth);
    let t = |k: &str, c: &mut Ctx| c.text(&n.text(k), at);
    let method = t("HTTPSampler.method", ctx).to_ascii_uppercase();
    let method = if method.is_empty() {
        "GET".to_string()
    } else {
        method
    };
    let domain = ctx.resolved(&n.text("HTTPSampler.domain"), at);
    let protocol = ctx.resolved(&n.text("HTTPSampler.protocol"), at);
    let port = ctx.resolved(&n.text("HTTPSampler.port"), at);
    let mut path = t("HTTPSampler.path", ctx);
    if path.is_empty() {
        path = "/".into();
    }
    let _ = writeln!(out, "{pad}- label: {}", q(&n.name));
    if method != "GET" {
        let _ = writeln!(out, "{pad}  method: {method}");
    }
    destination((protocol, domain, port), path, ctx, defaults, &pad, out, at);
    write_parameters(n, ctx, &method, &pad, out, at);
    if !connection(n, ctx, defaults, at) {
        let _ = writeln!(out, "{pad}  keep_alive: false");
    }
    let follow = n.flag("HTTPSampler.follow_redirects") || n.flag("HTTPSampler.auto_redirects");
    if !follow {
        let _ = writeln!(out, "{pad}  follow_redirects: false");
    }
    let SamplerChildren {
        headers,
        extracts,
        checks,
        own,
    } = sampler_children(n, ctx, &pad, at);
    if !headers.is_empty() {
        let _ = writeln!(out, "{pad}  headers:");
        for (k, v) in &headers {
            let _ = writeln!(out, "{pad}    {}: {}", q(k), q(v));
        }
    }
    if !extracts.is_empty() {
        let _ = writeln!(out, "{pad}  extract:");
        out.push_str(&extracts);
    }
    if !checks.is_empty() {
        let _ = writeln!(out, "{pad}  check:");
        out.push_str(&checks);
    }
    // Every timer in scope and the sampler's own, added up (JMeter runs
    // them before the sampler; headroom waits after the step before).
    let all: Vec<Timer> = ctx.timers.iter().chain(&own).copied().collect();
    if let Some(t) = Timer::sum(&all, &mut ctx.notes, at) {
        let _ = writeln!(out, "{pad}  think: {}", t.think());
    }
    if n.flag("HTTPSampler.DO_MULTIPART_POST") || has_files(n) {
        ctx.notes.push(format!(
            "{at}: a file upload (multipart/form-data) is not converted: the request goes without its files"
        ));
    }
}

/// A sampler's parameters: its raw body, else its query (GET, HEAD,
/// DELETE) or its form.
fn write_parameters(
    n: &JmxElement,
    ctx: &mut Ctx,
    method: &str,
    pad: &str,
    out: &mut String,
    at: &str,
) {
    let args: Vec<(String, String, bool)> = arguments(n.prop("HTTPsampler.Arguments"))
        .into_iter()
        .map(|(k, v, e)| (ctx.text(&k, at), ctx.text(&v, at), e))
        .collect();
    if n.flag("HTTPSampler.postBodyRaw") {
        let body: String = args.iter().map(|(_, v, _)| v.as_str()).collect();
        let _ = writeln!(out, "{pad}  body: {}", q(&body));
    } else if !args.is_empty() {
        let key = if method == "GET" || method == "HEAD" || method == "DELETE" {
            "query"
        } else {
            "form"
        };
        let mut names: Vec<&str> = args.iter().map(|(k, _, _)| k.as_str()).collect();
        names.sort_unstable();
        if names.windows(2).any(|w| w[0] == w[1]) {
            ctx.notes.push(format!(
                "{at}: parameters repeat a name; only the last of each is sent"
            ));
        }
        let _ = writeln!(out, "{pad}  {key}:");
        for (k, v, _) in &args {
            let _ = writeln!(out, "{pad}    {}: {}", q(k), q(v));
        }
    }
}

/// What a sampler's children add to its step.
struct SamplerChildren {
    headers: Vec<(String, String)>,
    /// The step's `extract:` entries, as YAML.
    extracts: String,
    /// The step's `check:` entries, as YAML.
    checks: String,
    /// The sampler's own timers.
    own: Vec<Timer>,
}

/// Reads a sampler's children: header managers, extractors, assertions
/// and timers; the rest noted as not converted.
fn sampler_children(n: &JmxElement, ctx: &mut Ctx, pad: &str, at: &str) -> SamplerChildren {
    let mut headers = Vec::new();
    let mut extracts = String::new();
    let mut checks = String::new();
    let mut own: Vec<Timer> = Vec::new();
    for c in &n.children {
        let cat = format!("{at} > {} '{}'", c.tag, c.name);
        match c.tag.as_str() {
            "HeaderManager" => headers.extend(header_list(c, ctx, &cat)),
            "RegexExtractor" => regex_extractor(c, ctx, pad, &mut extracts, &cat),
            "HtmlExtractor" => html_extractor(c, ctx, pad, &mut extracts, &cat),
            "JSONPostProcessor" => json_extractors(c, ctx, pad, &mut extracts, &cat),
            "ResponseAssertion" => assertion(c, ctx, pad, &mut checks, &cat),
            "DurationAssertion" => {
                let ms = c.text("DurationAssertion.duration");
                let _ = writeln!(checks, "{pad}    - max_time: {}ms", ms.trim());
                let _ = writeln!(checks, "{pad}      name: {}", q(&c.name));
                ctx.done.push(format!("{cat} → check max_time"));
            }
            "ConstantTimer" | "UniformRandomTimer" | "GaussianRandomTimer" => {
                if let Some(t) = timer(c, ctx, &cat) {
                    own.push(t);
                }
            }
            _ => ctx
                .notes
                .push(format!("{cat}: not converted (no headroom equivalent)")),
        }
    }
    SamplerChildren {
        headers,
        extracts,
        checks,
        own,
    }
}

/// A sampler's timeouts, keep-alive and embedded resources: the timeout
/// kept for [`connection_defaults`], embedded resources said (not
/// converted); false when its keep-alive is off (the step then closes its
/// connection).
fn connection(n: &JmxElement, ctx: &mut Ctx, defaults: &Defaults, at: &str) -> bool {
    // JMeter: empty (or 0) is no timeout; a sampler's own beats the defaults'.
    let mut ms = |key: &str, fallback: &str| -> Option<u64> {
        let own = ctx.resolved(&n.text(key), at);
        let text = if own.trim().is_empty() {
            fallback
        } else {
            &own
        };
        match text.trim().parse::<u64>() {
            Ok(0) => None,
            Ok(ms) => Some(ms),
            Err(_) if text.trim().is_empty() => None,
            Err(_) => {
                ctx.notes.push(format!(
                    "{at}: the timeout '{text}' is not a whole number of milliseconds: not converted"
                ));
                None
            }
        }
    };
    let connect = ms("HTTPSampler.connect_timeout", &defaults.connect_timeout);
    let response = ms("HTTPSampler.response_timeout", &defaults.response_timeout);
    // headroom's timeout bounds the whole request; JMeter's the connect and
    // each wait for data. Their sum is the closest: a request JMeter lets
    // through in one read passes, one it cuts off at the first byte fails.
    let timeout_ms = match (connect, response) {
        (c, Some(r)) => Some(r.saturating_add(c.unwrap_or(0))),
        (Some(c), None) => {
            ctx.notes.push(format!(
                "{at}: a connect timeout alone ({c} ms) is not converted: headroom's timeout bounds the whole request, so a slow response would fail where JMeter waits"
            ));
            None
        }
        (None, None) => None,
    };
    let keep_alive = n.text("HTTPSampler.use_keepalive").trim() != "false";
    if n.flag("HTTPSampler.image_parser") || defaults.embedded {
        ctx.notes.push(format!(
            "{at}: \"Retrieve All Embedded Resources\" is not converted: headroom requests the page alone, not its images, scripts and styles (JMeter's counts and times include them)"
        ));
    }
    ctx.connections.push(Connection {
        at: at.to_string(),
        timeout_ms,
    });
    if !keep_alive {
        ctx.done.push(format!(
            "{at}: keep-alive off → keep_alive: false (its connection closes after it)"
        ));
    }
    keep_alive
}

/// JMeter's match number as an extractor's `match:` (0 random, negative
/// all, n the n-th; empty the first).
fn pick(number: &str, refname: &str, ctx: &mut Ctx, at: &str) -> String {
    match number.parse::<i64>().unwrap_or(1) {
        0 => "random".to_string(),
        n if n < 0 => {
            ctx.notes.push(format!(
                "{at}: match number {n} (every match as {refname}_1, _2, ...) is read as all matches joined with commas in {refname}"
            ));
            "all".to_string()
        }
        n => n.to_string(),
    }
}

/// A JSON Extractor: its names and paths, `;`-separated, each a `json:`
/// extractor when the path is a plain one.
fn json_extractors(c: &JmxElement, ctx: &mut Ctx, pad: &str, extracts: &mut String, at: &str) {
    let list =
        |k: &str| -> Vec<String> { c.text(k).split(';').map(|n| n.trim().to_string()).collect() };
    let (names, paths) = (
        list("JSONPostProcessor.referenceNames"),
        list("JSONPostProcessor.jsonPathExprs"),
    );
    let (numbers, defaults) = (
        list("JSONPostProcessor.match_numbers"),
        list("JSONPostProcessor.defaultValues"),
    );
    for (i, name) in names.iter().enumerate().filter(|(_, n)| !n.is_empty()) {
        let path = paths.get(i).cloned().unwrap_or_default();
        let Some(pointer) = json_pointer(&path) else {
            ctx.notes.push(format!(
                "{at}: the JSON path {path} of {name} is not a plain path ($.a.b[0]): not converted"
            ));
            continue;
        };
        let number = numbers.get(i).map(String::as_str).unwrap_or("1");
        if !matches!(number, "" | "1") {
            ctx.notes.push(format!(
                "{at}: match number {number} of {name} is read as the first match"
            ));
        }
        let _ = writeln!(extracts, "{pad}    - name: {name}");
        let _ = writeln!(extracts, "{pad}      json: {}", q(&pointer));
        if let Some(default) = defaults.get(i).filter(|d| !d.is_empty()) {
            let default = ctx.text(default, at);
            let _ = writeln!(extracts, "{pad}      default: {}", q(&default));
        }
        ctx.done.push(format!("{at} → extract {name}"));
    }
}

/// A plain JSON path (`$.a.b[0].c`, `$['a']`) as a JSON pointer; `None`
/// for filters, wildcards and recursive descent.
fn json_pointer(path: &str) -> Option<String> {
    let rest = path.trim().strip_prefix('$')?;
    if rest.contains("..") || rest.contains('*') || rest.contains('?') || rest.contains('@') {
        return None;
    }
    let escape = |key: &str| key.replace('~', "~0").replace('/', "~1");
    let mut pointer = String::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        let key = match c {
            '.' => {
                let mut key = String::new();
                while let Some(&n) = chars.peek() {
                    if n == '.' || n == '[' {
                        break;
                    }
                    key.push(n);
                    chars.next();
                }
                key
            }
            '[' => {
                let inside: String = chars.by_ref().take_while(|&n| n != ']').collect();
                inside
                    .trim()
                    .trim_matches('\'')
                    .trim_matches('"')
                    .to_string()
            }
            _ => return None,
        };
        if key.is_empty() {
            return None;
        }
        pointer.push('/');
        pointer.push_str(&escape(&key));
    }
    Some(if pointer.is_empty() {
        "/".into()
    } else {
        pointer
    })
}

/// A Response Assertion: its test-type bitmask (MATCH 1, CONTAINS 2 — a
/// regex search, NOT 4, EQUALS 8, SUBSTRING 16, OR 32) on the body, the
/// headers, the reason phrase or the response code.
fn assertion(c: &JmxElement, ctx: &mut Ctx, pad: &str, checks: &mut String, at: &str) {
    let kind = c
        .text("Assertion.test_type")
        .trim()
        .parse::<u32>()
        .unwrap_or(2);
    let strings: Vec<String> = match c
        .prop("Asserion.test_strings")
        .or(c.prop("Assertion.test_strings"))
    {
        Some(Prop::Collection(items)) => items
            .iter()
            .filter_map(|(_, p)| p.text().map(|t| ctx.text(t, at)))
            .collect(),
        _ => Vec::new(),
    };
    if strings.is_empty() {
        ctx.notes
            .push(format!("{at}: no pattern to test: nothing checked"));
        return;
    }
    let (not, or) = (kind & 4 != 0, kind & 32 != 0 && strings.len() > 1);
    let field = c.text("Assertion.test_field");
    let within = match field.as_str() {
        "" | "Assertion.response_data" => "",
        "Assertion.response_headers" => "headers",
        "Assertion.response_message" => "message",
        "Assertion.response_code" => "code",
        other => {
            ctx.notes.push(format!(
                "{at}: the field {other} is not among headroom's (body, headers, message, code): not checked"
            ));
            return;
        }
    };
    if c.flag("Assertion.assume_success") && within != "code" {
        ctx.notes.push(format!(
            "{at}: \"ignore status\" is not converted: a 4xx/5xx still fails the step unless a status check expects it"
        ));
    }
    let assertion = ResponseAssertion {
        c,
        kind,
        strings,
        not,
        or,
        within,
    };
    if within == "code" {
        assertion.status_check(ctx, pad, checks, at);
    } else {
        assertion.pattern_checks(ctx, pad, checks, at);
    }
}

/// A Response Assertion as read, its patterns' texts resolved.
struct ResponseAssertion<'a> {
    c: &'a JmxElement,
    /// The test-type bitmask.
    kind: u32,
    strings: Vec<String>,
    not: bool,
    /// Any pattern passes (OR, of several).
    or: bool,
    /// The field tested: "" (the body), headers, message or code.
    within: &'static str,
}

impl ResponseAssertion<'_> {
    /// The response code: its patterns as a list of statuses.
    fn status_check(&self, ctx: &mut Ctx, pad: &str, checks: &mut String, at: &str) {
        let (kind, strings) = (self.kind, &self.strings);
        let codes: Vec<u16> = strings
            .iter()
            .filter_map(|s| s.trim().parse().ok())
            .collect();
        if self.not
            || codes.len() != strings.len()
            || (strings.len() > 1 && !self.or)
            || kind & (1 | 2 | 8 | 16) == 0
        {
            ctx.notes.push(format!(
                "{at}: a response-code test other than \"equals one of these codes\" is not converted"
            ));
            return;
        }
        let list: Vec<String> = codes.iter().map(u16::to_string).collect();
        let _ = writeln!(checks, "{pad}    - status: [{}]", list.join(", "));
        let _ = writeln!(checks, "{pad}      name: {}", q(&self.c.name));
        ctx.done.push(format!("{at} → check"));
    }

    /// The body, headers or message: one check matching any pattern (OR),
    /// else a check per pattern.
    fn pattern_checks(&self, ctx: &mut Ctx, pad: &str, checks: &mut String, at: &str) {
        let (kind, strings, c) = (self.kind, &self.strings, self.c);
        if kind & (1 | 2 | 8 | 16) == 0 {
            ctx.notes
                .push(format!("{at}: test type {kind} is not converted"));
            return;
        }
        if self.or {
            if self.not {
                ctx.notes.push(format!(
                    "{at}: NOT with OR (some pattern absent) is not converted"
                ));
                return;
            }
            let any: Vec<String> = strings
                .iter()
                .map(|s| format!("(?:{})", self.regex_of(s)))
                .collect();
            let _ = writeln!(checks, "{pad}    - matches: {}", q(&any.join("|")));
            self.in_line(pad, checks);
            let _ = writeln!(checks, "{pad}      name: {}", q(&c.name));
            ctx.done
                .push(format!("{at} → check (any of {} patterns)", strings.len()));
            return;
        }
        // AND: every pattern its own check.
        for (i, s) in strings.iter().enumerate() {
            let plain = kind & 16 != 0
                || (kind & 2 != 0 && !s.chars().any(|ch| "\\^$.|?*+()[]{}".contains(ch)));
            let line = match (plain, self.not) {
                (true, false) => format!("contains: {}", q(s)),
                (true, true) => format!("not_contains: {}", q(s)),
                (false, false) => format!("matches: {}", q(&self.regex_of(s))),
                (false, true) => format!("not_matches: {}", q(&self.regex_of(s))),
            };
            let _ = writeln!(checks, "{pad}    - {line}");
            self.in_line(pad, checks);
            let name = if strings.len() > 1 {
                format!("{} {}", c.name, i + 1)
            } else {
                c.name.clone()
            };
            let _ = writeln!(checks, "{pad}      name: {}", q(&name));
        }
        ctx.done.push(format!("{at} → check"));
    }

    /// One regular expression per pattern, anchored as the test type says.
    fn regex_of(&self, s: &str) -> String {
        let kind = self.kind;
        if kind & 8 != 0 {
            format!("^{}$", regex::escape(s))
        } else if kind & 16 != 0 {
            regex::escape(s)
        } else if kind & 1 != 0 {
            format!("^(?:{s})$")
        } else {
            s.to_string()
        }
    }

    /// The check's `in:` line, for the headers or the message.
    fn in_line(&self, pad: &str, checks: &mut String) {
        if !self.within.is_empty() && self.within != "code" {
            let _ = writeln!(checks, "{pad}      in: {}", self.within);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAN: &str = include_str!("../../../scenarios/moodle-testplan.jmx");

    fn props() -> BTreeMap<String, String> {
        BTreeMap::from([("port".to_string(), "8080".to_string())])
    }

    #[test]
    fn the_shipped_plan_converts_with_jmeters_semantics() {
        let plan = parse(PLAN).unwrap();
        let c = convert(&plan, "moodle", &props());
        let y = &c.yaml;
        assert!(y.contains("base_url: \"http://127.0.0.1:8080\""), "{y}");
        assert!(y.contains("cookies: clear_each_iteration"), "{y}");
        assert!(
            y.contains("  users: 5\n  ramp_up: 1s\n  iterations: 2\n"),
            "__P defaults: {y}"
        );
        assert!(y.contains("throughput: 120.0/min"), "{y}");
        assert!(
            y.contains("  throughput: \"120.0\""),
            "__property sets its variable: {y}"
        );
        assert!(y.contains("\"message[itemid]\": \"${itemid}\""), "{y}");
        assert!(
            y.contains("- contains: \"<div class=\\\"logininfo\\\">You are logged in as\""),
            "{y}"
        );
        // The serialized warm-up group runs ahead of the main one.
        assert!(
            y.contains("before:\n  name: \"Warm-up site\"\n  users: 1\n  iterations: 1\n  steps:\n    - label: \"Warm-up front page\"\n      path: \"/\"\n"),
            "{y}"
        );
        assert!(c.not_converted.is_empty(), "{:?}", c.not_converted);
        let many = BTreeMap::from([
            ("users".to_string(), "40".to_string()),
            ("loops".to_string(), "-1".to_string()),
        ]);
        let c = convert(&plan, "moodle", &many);
        assert!(c.yaml.contains("  users: 40\n"), "{}", c.yaml);
        assert!(
            c.not_converted.iter().any(|n| n.contains("loops forever")),
            "{:?}",
            c.not_converted
        );
    }

    /// A plan with the given thread groups (tag, name, threads, loops),
    /// one sampler each, groups serialized or not.
    fn plan_with_groups(serialized: bool, groups: &[(&str, &str, &str, &str)]) -> String {
        let mut xml = format!("<jmeterTestPlan><hashTree><TestPlan testname=\"p\"><boolProp name=\"TestPlan.serialize_threadgroups\">{serialized}</boolProp></TestPlan><hashTree>");
        for (tag, name, threads, loops) in groups {
            xml.push_str(&format!("<{tag} testname=\"{name}\"><stringProp name=\"ThreadGroup.num_threads\">{threads}</stringProp><elementProp name=\"ThreadGroup.main_controller\" elementType=\"LoopController\"><stringProp name=\"LoopController.loops\">{loops}</stringProp></elementProp></{tag}><hashTree><HTTPSamplerProxy testname=\"{name} page\"><stringProp name=\"HTTPSampler.path\">/{name}</stringProp></HTTPSamplerProxy><hashTree/></hashTree>"));
        }
        xml.push_str("</hashTree></hashTree></jmeterTestPlan>");
        xml
    }

    #[test]
    fn groups_ahead_of_the_main_one_become_before() {
        let convert_groups = |serialized, groups: &[(&str, &str, &str, &str)]| {
            convert(
                &parse(&plan_with_groups(serialized, groups)).unwrap(),
                "g",
                &props(),
            )
        };
        // Serialized: the group just before the main one; the others said.
        let c = convert_groups(
            true,
            &[
                ("ThreadGroup", "first", "1", "1"),
                ("ThreadGroup", "warm", "2", "3"),
                ("ThreadGroup", "main", "10", "1"),
                ("PostThreadGroup", "down", "1", "1"),
            ],
        );
        assert!(
            c.yaml.contains("before:\n  name: \"warm\"\n  users: 2\n  iterations: 3\n  steps:\n    - label: \"warm page\"\n"),
            "{}",
            c.yaml
        );
        assert!(c.yaml.contains("  users: 10\n"), "{}", c.yaml);
        let said = c.not_converted.join("\n");
        assert!(
            said.contains("'first' (1 threads) is not run: headroom runs one group ahead"),
            "{said}"
        );
        assert!(
            said.contains("'down' (1 threads) is not run: headroom has no tearDown"),
            "{said}"
        );
        // In parallel: one group runs, the other is said; a setUp group
        // runs ahead whatever the setting.
        let c = convert_groups(
            false,
            &[
                ("SetupThreadGroup", "setup", "1", "1"),
                ("ThreadGroup", "a", "3", "1"),
                ("ThreadGroup", "b", "4", "1"),
            ],
        );
        assert!(c.yaml.contains("name: \"setup\""), "{}", c.yaml);
        assert!(c.yaml.contains("  users: 4\n"), "{}", c.yaml);
        assert!(
            c.not_converted
                .join("\n")
                .contains("'a' (3 threads) is not run: headroom runs one group at a time"),
            "{:?}",
            c.not_converted
        );
        // A group that loops forever ahead of the main one runs once, said.
        let c = convert_groups(
            true,
            &[
                ("ThreadGroup", "w", "1", "-1"),
                ("ThreadGroup", "m", "2", "1"),
            ],
        );
        assert!(c.yaml.contains("  iterations: 1\n  steps:"), "{}", c.yaml);
        assert!(
            c.not_converted.join("\n").contains("its steps run once"),
            "{:?}",
            c.not_converted
        );
        // Bad numbers are said, not silently replaced.
        let c = convert_groups(true, &[("ThreadGroup", "m", "many", "1")]);
        assert!(
            c.not_converted
                .join("\n")
                .contains("threads 'many' is not a whole number"),
            "{:?}",
            c.not_converted
        );
    }

    #[test]
    fn response_assertions_keep_jmeters_semantics() {
        let convert_assertion = |test_type: u32, field: &str, strings: &[&str]| {
            let items: String = strings
                .iter()
                .map(|s| format!("<stringProp name=\"{}\">{s}</stringProp>", s.len()))
                .collect();
            let xml = format!(
                "<jmeterTestPlan><hashTree><TestPlan testname=\"p\"/><hashTree><ThreadGroup testname=\"g\"><stringProp name=\"ThreadGroup.num_threads\">1</stringProp><elementProp name=\"ThreadGroup.main_controller\" elementType=\"LoopController\"><stringProp name=\"LoopController.loops\">1</stringProp></elementProp></ThreadGroup><hashTree><HTTPSamplerProxy testname=\"s\"><stringProp name=\"HTTPSampler.path\">/</stringProp></HTTPSamplerProxy><hashTree><ResponseAssertion testname=\"a\"><collectionProp name=\"Asserion.test_strings\">{items}</collectionProp><stringProp name=\"Assertion.test_field\">{field}</stringProp><intProp name=\"Assertion.test_type\">{test_type}</intProp></ResponseAssertion><hashTree/></hashTree></hashTree></hashTree></hashTree></jmeterTestPlan>"
            );
            let c = convert(&parse(&xml).unwrap(), "a", &props());
            let checks = c.yaml.split("check:\n").nth(1).unwrap_or("").to_string();
            (checks, c.not_converted.join("\n"))
        };
        let body = "Assertion.response_data";
        let cases: [(u32, &str, &[&str], &str); 11] = [
            // contains (a regex search), plain text or not; substring.
            (2, body, &["logged in"], "- contains: \"logged in\"\n        name: \"a\""),
            (2, body, &["id=\\d+"], "- matches: \"id=\\\\d+\""),
            (16, body, &["a.b"], "- contains: \"a.b\""),
            // NOT, each pattern its own check (AND).
            (2 | 4, body, &["error", "x+"], "- not_contains: \"error\"\n        name: \"a 1\"\n      - not_matches: \"x+\"\n        name: \"a 2\""),
            // equals and matches are anchored.
            (8, body, &["a.b"], "- matches: \"^a\\\\.b$\""),
            (1, body, &["a|b"], "- matches: \"^(?:a|b)$\""),
            // OR: one check, any pattern.
            (16 | 32, body, &["a.b", "c"], "- matches: \"(?:a\\\\.b)|(?:c)\""),
            // Other fields.
            (2, "Assertion.response_headers", &["text/html"], "- contains: \"text/html\"\n        in: headers"),
            (8, "Assertion.response_message", &["OK"], "- matches: \"^OK$\"\n        in: message"),
            (8, "Assertion.response_code", &["200"], "- status: [200]"),
            (8 | 32, "Assertion.response_code", &["200", "302"], "- status: [200, 302]"),
        ];
        for (test_type, field, strings, expected) in cases {
            let (checks, notes) = convert_assertion(test_type, field, strings);
            assert!(
                checks.contains(expected),
                "{test_type} {field} {strings:?}:\n{checks}\n(expected {expected})"
            );
            assert!(notes.is_empty(), "{test_type} {field}: {notes}");
        }
        // What cannot be converted is said, and nothing wrong is checked.
        let said: [(u32, &str, &[&str], &str); 4] = [
            (2 | 4 | 32, body, &["a", "b"], "NOT with OR"),
            (
                4 | 8,
                "Assertion.response_code",
                &["500"],
                "response-code test",
            ),
            (
                2,
                "Assertion.request_headers",
                &["x"],
                "not among headroom's",
            ),
            (2, "Assertion.sample_label", &["x"], "not among headroom's"),
        ];
        for (test_type, field, strings, expected) in said {
            let (checks, notes) = convert_assertion(test_type, field, strings);
            assert!(notes.contains(expected), "{test_type} {field}: {notes}");
            assert!(!checks.contains("- "), "{test_type} {field}: {checks}");
        }
    }

    #[test]
    fn functions_and_conditions() {
        let p = BTreeMap::from([("a".to_string(), "x".to_string())]);
        let mut ctx = Ctx {
            properties: &p,
            variables: Variables::default(),
            notes: Vec::new(),
            done: Vec::new(),
            timers: Vec::new(),
            on_target: false,
            connections: Vec::new(),
        };
        assert_eq!(ctx.text("${__P(a,1)}/${__P(b,2)}", "t"), "x/2");
        assert_eq!(
            ctx.text("${__time()}-${__threadNum}-${__Random(1,9)}", "t"),
            "${__time}-${__vu}-${__random(1,9)}"
        );
        assert_eq!(ctx.text("${__property(a,va,0)}", "t"), "x");
        assert_eq!(ctx.variables.get("va").map(String::as_str), Some("x"));
        assert_eq!(ctx.text("${__groovy(1+1)}", "t"), "$${__groovy(1+1)}");
        assert!(ctx.notes[0].contains("__groovy"), "{:?}", ctx.notes);
        assert_eq!(ctx.text("${user} and ${", "t"), "${user} and $${");
        assert_eq!(
            split_args("a\\,b,c"),
            Some(vec!["a,b".to_string(), "c".to_string()])
        );
        assert_eq!(
            json_pointer("$.data.items[0].id").as_deref(),
            Some("/data/items/0/id")
        );
        assert_eq!(json_pointer("$['a/b']").as_deref(), Some("/a~1b"));
        assert_eq!(json_pointer("$..id"), None);
        assert_eq!(json_pointer("$.items[*].id"), None);
        assert_eq!(
            simple_condition("\"${role}\" == \"teacher\""),
            Some(("role".into(), "teacher".into()))
        );
        assert_eq!(simple_condition("${__groovy(true)}"), None);
    }

    #[test]
    fn nested_functions_are_evaluated_inner_first() {
        let p = BTreeMap::from([
            ("a".to_string(), "x".to_string()),
            ("x".to_string(), "from x".to_string()),
        ]);
        let mut ctx = Ctx {
            properties: &p,
            variables: Variables::default(),
            notes: Vec::new(),
            done: Vec::new(),
            timers: Vec::new(),
            on_target: false,
            connections: Vec::new(),
        };
        // The inner __P gives its default y, the outer one z (no property y).
        assert_eq!(ctx.text("${__P(${__P(x,y)},z)}", "t"), "z");
        // The inner one names a property that exists: the outer reads it.
        assert_eq!(ctx.text("${__P(${__P(b,a)},z)}", "t"), "x");
        assert_eq!(ctx.text("${__P(${__P(${__P(q,a)},b)},c)}", "t"), "from x");
        assert_eq!(
            ctx.text("${__Random(1,${__P(max,10)})}", "t"),
            "${__random(1,10)}"
        );
        // A default that names a variable keeps it a variable (it was sent
        // as the literal "${v}"); a property's value stays literal text.
        assert_eq!(ctx.text("${__P(u,${v})}", "t"), "${v}");
        let with_dollar = BTreeMap::from([("d".to_string(), "${not}".to_string())]);
        ctx.properties = &with_dollar;
        assert_eq!(ctx.text("${__P(d,z)}", "t"), "$${not}");
        ctx.properties = &p;
        assert!(ctx.notes.is_empty(), "{:?}", ctx.notes);
        // A function headroom does not run is literal text, its nested
        // `${` too (the inner one was left to be read as a built-in).
        assert_eq!(
            ctx.text("${__urlencode(${__P(a,b)})}", "t"),
            "$${__urlencode($${__P(a,b)})}"
        );
        assert!(ctx.notes.pop().unwrap().contains("not run by headroom"));
        // Parentheses that do not balance: refused, and said.
        assert_eq!(ctx.text("${__P(a(,z)}", "t"), "$${__P(a(,z)}");
        assert!(ctx.notes[0].contains("unbalanced"), "{:?}", ctx.notes);
        // Nesting beyond the limit is said, never a stack overflow.
        let deep = format!("{}q{}", "${__P(".repeat(10_000), ",1)}".repeat(10_000));
        let text = ctx.text(&deep, "t");
        assert!(text.starts_with("$${"), "{}", &text[..40]);
        assert!(
            ctx.notes.iter().any(|n| n.contains("more than 16 deep")),
            "{:?}",
            ctx.notes
        );
    }

    #[test]
    fn malformed_plans_are_located_errors() {
        let cases = [
            ("", "no XML element"),
            ("<jmeterTestPlan><hashTree>", "cut short"),
            ("<html/>", "not <jmeterTestPlan>"),
            (
                "<jmeterTestPlan version=\"1.2\"></jmeterTestPlan>",
                "no hashTree",
            ),
            (
                "<jmeterTestPlan><hashTree><hashTree/></hashTree></jmeterTestPlan>",
                "a hashTree with no element before it",
            ),
            (
                "<jmeterTestPlan><hashTree><ThreadGroup/><hashTree/></hashTree></jmeterTestPlan>",
                "no TestPlan",
            ),
            (
                "<jmeterTestPlan><hashTree></jmeterTestPlan>",
                "not well-formed",
            ),
            (
                "<jmeterTestPlan><hashTree><TestPlan a=\"1></TestPlan></hashTree></jmeterTestPlan>",
                "line 1",
            ),
        ];
        for (text, expected) in cases {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(expected), "{text:?}: {e}");
        }
        // Elements headroom cannot run are listed with their path.
        let first = "<HTTPSamplerProxy guiclass=\"HttpTestSampleGui\" testclass=\"HTTPSamplerProxy\" testname=\"01 front page\">";
        assert!(PLAN.contains(first));
        let with_script = PLAN.replacen(
            first,
            &format!("<JSR223Sampler testname=\"groovy step\"><stringProp name=\"script\">x</stringProp></JSR223Sampler><hashTree/>{first}"),
            1,
        );
        let c = convert(&parse(&with_script).unwrap(), "m", &props());
        assert!(
            c.not_converted
                .iter()
                .any(|n| n.contains("JSR223Sampler 'groovy step'") && n.contains("not run")),
            "{:?}",
            c.not_converted
        );
        // A plan without a thread group says so.
        let empty = "<jmeterTestPlan><hashTree><TestPlan testname=\"t\"/><hashTree/></hashTree></jmeterTestPlan>";
        let c = convert(&parse(empty).unwrap(), "m", &props());
        assert!(
            c.not_converted
                .iter()
                .any(|n| n.contains("no thread group")),
            "{:?}",
            c.not_converted
        );
    }

    #[test]
    fn timers_add_up_headers_merge_and_what_differs_is_said() {
        let timer = |ms: u32| {
            format!("<ConstantTimer testname=\"t{ms}\"><stringProp name=\"ConstantTimer.delay\">{ms}</stringProp></ConstantTimer><hashTree/>")
        };
        let header = |v: &str| {
            format!("<HeaderManager testname=\"h\"><collectionProp name=\"HeaderManager.headers\"><elementProp name=\"\" elementType=\"Header\"><stringProp name=\"Header.name\">X-Level</stringProp><stringProp name=\"Header.value\">{v}</stringProp></elementProp></collectionProp></HeaderManager><hashTree/>")
        };
        let sampler = |name: &str, inner: &str, extra: &str| {
            format!("<HTTPSamplerProxy testname=\"{name}\"><stringProp name=\"HTTPSampler.domain\">a.test</stringProp><stringProp name=\"HTTPSampler.path\">/{name}/${{__P(noprop)}}</stringProp>{extra}</HTTPSamplerProxy><hashTree>{inner}</hashTree>")
        };
        let plan = format!(
            "<jmeterTestPlan><hashTree><TestPlan testname=\"p\"/><hashTree>{}{}\
             <ThreadGroup testname=\"g\"><stringProp name=\"ThreadGroup.num_threads\">2</stringProp><stringProp name=\"ThreadGroup.on_sample_error\">stopthread</stringProp></ThreadGroup>\
             <hashTree>{}{}{}{}<TransactionController testname=\"tx\"/><hashTree>{}{}</hashTree></hashTree></hashTree></hashTree></jmeterTestPlan>",
            timer(5),
            header("plan"),
            timer(10),
            header("group"),
            sampler("a", "", ""),
            sampler("b", &timer(20), "<boolProp name=\"HTTPSampler.DO_MULTIPART_POST\">true</boolProp>"),
            timer(200),
            header("tx") + &sampler("c", "", ""),
        );
        let c = convert(&parse(&plan).unwrap(), "t", &BTreeMap::new());
        let y = &c.yaml;
        assert!(
            y.contains("\"X-Level\": \"group\""),
            "the inner level wins: {y}"
        );
        assert!(!y.contains("\"plan\""), "{y}");
        assert!(
            y.contains("/a/1\"") && y.contains("think: 15ms"),
            "plan + group timers, and __P's default 1: {y}"
        );
        assert!(y.contains("think: 35ms"), "and the sampler's own: {y}");
        assert!(y.contains("think: 215ms"), "and the controller's: {y}");
        let notes = c.not_converted.join("\n");
        for expected in ["would 'stopthread'", "file upload", "inside a controller"] {
            assert!(notes.contains(expected), "{expected}: {notes}");
        }
        let on_target = convert_for(&parse(&plan).unwrap(), "t", &BTreeMap::new(), true);
        assert!(!on_target.yaml.contains("url:"), "{}", on_target.yaml);
        assert!(
            on_target
                .not_converted
                .iter()
                .any(|n| n.contains("sent to --target")),
            "{:?}",
            on_target.not_converted
        );
    }

    /// A plan whose one thread group holds `body` (elements and hashTrees).
    /// User Defined Variables were written in alphabetical order, so
    /// `aa: p-${zz}` came above `zz: ${__Random(1,9)}`, and the scenario
    /// (which renders its variables in the file's order) refused the
    /// converted plan ('aa' uses 'zz', which is computed below it). They
    /// are written in the plan's order.
    #[test]
    fn variables_are_written_in_the_plans_order() {
        let arg = |name: &str, value: &str| {
            format!("<elementProp name=\"{name}\" elementType=\"Argument\"><stringProp name=\"Argument.name\">{name}</stringProp><stringProp name=\"Argument.value\">{value}</stringProp></elementProp>")
        };
        let udv = format!(
            "<Arguments testname=\"v\"><collectionProp name=\"Arguments.arguments\">{}{}</collectionProp></Arguments><hashTree/>",
            arg("zz", "${__Random(1,9)}"),
            arg("aa", "p-${zz}")
        );
        let plan = plan_of(&(udv + &http("d", "")));
        let c = convert(&parse(&plan).unwrap(), "t", &BTreeMap::new());
        assert!(
            c.yaml
                .contains("variables:\n  zz: \"${__random(1,9)}\"\n  aa: \"p-${zz}\"\n"),
            "{}",
            c.yaml
        );
    }

    fn plan_of(body: &str) -> String {
        format!(
            "<jmeterTestPlan><hashTree><TestPlan testname=\"p\"/><hashTree>\
             <ThreadGroup testname=\"g\"><stringProp name=\"ThreadGroup.num_threads\">1</stringProp><elementProp name=\"ThreadGroup.main_controller\" elementType=\"LoopController\"><stringProp name=\"LoopController.loops\">1</stringProp></elementProp></ThreadGroup>\
             <hashTree>{body}</hashTree></hashTree></hashTree></jmeterTestPlan>"
        )
    }

    fn http(name: &str, props: &str) -> String {
        format!("<HTTPSamplerProxy testname=\"{name}\"><stringProp name=\"HTTPSampler.domain\">127.0.0.1</stringProp><stringProp name=\"HTTPSampler.path\">/{name}</stringProp>{props}</HTTPSamplerProxy><hashTree/>")
    }

    fn prop(name: &str, value: &str) -> String {
        format!("<stringProp name=\"HTTPSampler.{name}\">{value}</stringProp>")
    }

    #[test]
    fn timeouts_keep_alive_and_embedded_resources_are_converted_or_said() {
        // Every sampler with a 200 ms response timeout: the scenario's.
        let timed = prop("response_timeout", "200");
        let plan = plan_of(&(http("a", &timed) + &http("b", &timed)));
        let c = convert(&parse(&plan).unwrap(), "t", &BTreeMap::new());
        assert!(c.yaml.contains("  timeout: 200ms\n"), "{}", c.yaml);
        assert!(c.yaml.contains("  keep_alive: iteration\n"), "{}", c.yaml);
        assert!(c.not_converted.is_empty(), "{:?}", c.not_converted);
        // Connect and response add up (headroom's bounds the whole request).
        let both = prop("response_timeout", "200") + &prop("connect_timeout", "50");
        let c = convert(
            &parse(&plan_of(&http("a", &both))).unwrap(),
            "t",
            &BTreeMap::new(),
        );
        assert!(c.yaml.contains("  timeout: 250ms\n"), "{}", c.yaml);
        // From HTTP Request Defaults, and -J properties.
        let defaults = format!(
            "<ConfigTestElement testname=\"d\">{}{}</ConfigTestElement><hashTree/>",
            prop("domain", "127.0.0.1"),
            prop("response_timeout", "${__P(timeout,300)}")
        );
        let c = convert(
            &parse(&plan_of(&(defaults + &http("a", "")))).unwrap(),
            "t",
            &BTreeMap::new(),
        );
        assert!(c.yaml.contains("  timeout: 300ms\n"), "{}", c.yaml);
        // Different timeouts: the longest, the others said.
        let plan = plan_of(
            &(http("a", &timed) + &http("b", &prop("response_timeout", "900")) + &http("c", "")),
        );
        let c = convert(&parse(&plan).unwrap(), "t", &BTreeMap::new());
        assert!(c.yaml.contains("  timeout: 900ms\n"), "{}", c.yaml);
        let notes = c.not_converted.join("\n");
        assert!(
            notes.contains("'a': its timeout of 200 ms is not kept"),
            "{notes}"
        );
        assert!(
            notes.contains("'c': it has no timeout in JMeter"),
            "{notes}"
        );
        // Keep-alive off: that step closes its connection, the others keep
        // theirs (for the iteration, as JMeter).
        let off = "<boolProp name=\"HTTPSampler.use_keepalive\">false</boolProp>";
        let plan = plan_of(&(http("a", off) + &http("b", "")));
        let c = convert(&parse(&plan).unwrap(), "t", &BTreeMap::new());
        assert!(c.yaml.contains("keep_alive: iteration"), "{}", c.yaml);
        let at = |text: &str| c.yaml.find(text).unwrap_or(usize::MAX);
        assert!(
            at("label: \"a\"") < at("    keep_alive: false\n")
                && at("    keep_alive: false\n") < at("label: \"b\""),
            "on step a: {}",
            c.yaml
        );
        assert_eq!(c.yaml.matches("keep_alive: false").count(), 1, "{}", c.yaml);
        assert!(c.not_converted.is_empty(), "{:?}", c.not_converted);
        // Embedded resources: said, on the sampler or from the defaults.
        let embedded = "<boolProp name=\"HTTPSampler.image_parser\">true</boolProp>";
        let c = convert(
            &parse(&plan_of(&http("a", embedded))).unwrap(),
            "t",
            &BTreeMap::new(),
        );
        assert!(
            c.not_converted
                .iter()
                .any(|n| n.contains("'a': \"Retrieve All Embedded Resources\" is not converted")),
            "{:?}",
            c.not_converted
        );
        // A connect timeout alone: said.
        let c = convert(
            &parse(&plan_of(&http("a", &prop("connect_timeout", "50")))).unwrap(),
            "t",
            &BTreeMap::new(),
        );
        assert!(!c.yaml.contains("timeout:"), "{}", c.yaml);
        assert!(
            c.not_converted
                .iter()
                .any(|n| n.contains("connect timeout alone")),
            "{:?}",
            c.not_converted
        );
    }

    #[test]
    fn empty_controllers_contribute_nothing() {
        for tag in [
            "GenericController",
            "TransactionController",
            "LoopController",
            "OnceOnlyController",
            "IfController",
        ] {
            let body = format!(
                "<{tag} testname=\"empty\"/><hashTree/>{}<{tag} testname=\"bare\"/>",
                http("a", "")
            );
            let c = convert(&parse(&plan_of(&body)).unwrap(), "t", &BTreeMap::new());
            assert!(!c.yaml.contains("steps: []"), "{tag}: {}", c.yaml);
            assert!(
                c.yaml.contains("steps:\n  - label: \"a\""),
                "{tag}: {}",
                c.yaml
            );
            assert!(c.not_converted.is_empty(), "{tag}: {:?}", c.not_converted);
            assert!(
                c.converted.iter().any(|d| d.contains("'empty' → nothing")),
                "{tag}: {:?}",
                c.converted
            );
        }
        // A plan of empty controllers only: an empty list of steps (which
        // the scenario check names), not a `steps:` with nothing under it.
        let body = "<GenericController testname=\"empty\"/><hashTree/>";
        let c = convert(&parse(&plan_of(body)).unwrap(), "t", &BTreeMap::new());
        assert!(c.yaml.ends_with("steps: []\n"), "{}", c.yaml);
    }

    #[test]
    fn deep_nesting_is_refused_clearly() {
        let nested = |depth: usize| {
            let mut body = http("a", "");
            for i in 0..depth {
                body = format!("<GenericController testname=\"c{i}\"/><hashTree>{body}</hashTree>");
            }
            plan_of(&body)
        };
        // 5,000 controllers, one in the other: an error, not a stack overflow.
        let e = parse(&nested(5000)).unwrap_err().to_string();
        assert!(e.contains("nested more than 200 deep"), "{e}");
        assert!(e.contains("line 1"), "{e}");
        // Within the limit, converted.
        let c = convert(&parse(&nested(190)).unwrap(), "t", &BTreeMap::new());
        assert!(c.yaml.contains("- label: \"a\""), "{}", c.yaml);
    }

    #[test]
    fn csv_share_modes_are_jmeters() {
        for (mode, share, said) in [
            ("shareMode.all", "share: all", false),
            ("shareMode.group", "share: all", false),
            ("shareMode.thread", "share: vu", false),
            ("users-a", "share: all", true),
        ] {
            let plan = PLAN.replace("shareMode.all", mode);
            let c = convert(&parse(&plan).unwrap(), "m", &props());
            assert!(c.yaml.contains(share), "{mode}: {}", c.yaml);
            assert_eq!(
                c.not_converted.iter().any(|n| n.contains("share mode")),
                said,
                "{mode}"
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        #[test]
        fn no_mutation_of_a_plan_panics(cut in 0usize..PLAN.len(), byte in 0u8..128, at in 0usize..PLAN.len()) {
            let mut bytes = PLAN.as_bytes()[..cut.max(1)].to_vec();
            if at < bytes.len() {
                bytes[at] = byte;
            }
            let text = String::from_utf8_lossy(&bytes);
            if let Ok(plan) = parse(&text) {
                let _ = convert(&plan, "fuzz", &props());
            }
        }
    }
}
