//! `headroom scenario try FILE`: one user, one iteration, every exchange
//! printed — each request (method, URL, form fields) and response (status,
//! time, size, cookies set, redirect hops), each extracted value and each
//! check — stopping at the first failed step, whose response is saved to
//! files whose paths are printed. The loop a user lives in while writing a
//! journey (JMeter's View Results Tree, k6's --http-debug).

use crate::args::TryArgs;
use crate::execute::{connect_checked, Failure, EXIT_CANNOT_RUN, EXIT_USAGE};
use headroom_bundle::failures::{describe, extension, slug, FailedExchange};
use headroom_load::scenario::observe::{Observe, StepView};
use headroom_load::scenario::runner::{Journey, JourneyHost, JourneyPlan};
use headroom_load::scenario::LabelKind;
use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A request's body or a response's header value is cut to this many
/// characters on screen (the saved files keep everything).
const SHOWN: usize = 200;

pub fn run(args: TryArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("headroom: cannot start: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    runtime.block_on(try_file(args))
}

async fn try_file(args: TryArgs) -> ExitCode {
    let properties = match crate::jmx_input::properties(&args.jmeter_property) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("headroom: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let scenario =
        match crate::jmx_input::scenario(&args.file, args.target.as_ref(), &properties, false) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("headroom: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        };
    let mut connectors = Vec::new();
    for origin in &scenario.origins {
        match connect_checked(origin, args.insecure).await {
            Ok(c) => connectors.push(Arc::new(c)),
            Err(Failure::Usage(e)) => {
                eprintln!("headroom: {e:#}");
                return ExitCode::from(EXIT_USAGE);
            }
            Err(Failure::CannotRun(e)) => {
                eprintln!("headroom: {e:#}");
                return ExitCode::from(EXIT_CANNOT_RUN);
            }
        }
    }
    let target = scenario
        .origins
        .first()
        .map(|o| o.url.clone())
        .unwrap_or_default();
    println!(
        "headroom: trying {} against {target}: 1 user, 1 iteration{}",
        args.file.display(),
        if args.think {
            ""
        } else {
            ", think times skipped"
        }
    );
    let save_dir = args.save_dir.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("headroom-try-{}", std::process::id()))
    });
    let think = scenario.think;
    let mut plan = JourneyPlan::new(scenario, connectors, Some(1), think);
    // The before: steps run once, by one user, ahead of the journey.
    if let Some(before) = &mut plan.before {
        before.iterations = 1;
    }
    let plan = Arc::new(plan);
    // A shared data cursor gives the before: user the first row.
    let row_index = match &plan.scenario.data {
        Some(data) if data.shared && plan.before.is_some() => 1,
        _ => 0,
    };
    if let Some(data) = &plan.scenario.data {
        if let Some(row) = data.rows.get(row_index) {
            let names = plan.scenario.vars.names();
            let shown: Vec<String> = data
                .columns
                .iter()
                .zip(row)
                .map(|(v, value)| format!("{}={value}", names[*v]))
                .collect();
            println!(
                "data: row {} of {} ({})",
                row_index + 1,
                data.file.display(),
                shown.join(" ")
            );
        }
    }
    let host = TryHost {
        plan: plan.clone(),
        verbose: args.verbose,
        think: args.think,
        checks: RefCell::new(Vec::new()),
        failed: Cell::new(false),
        steps: Cell::new(0),
        save_dir,
        outcome: RefCell::new(None),
    };
    let started = Instant::now();
    if let Some(phase) = &plan.scenario.before {
        println!(
            "before: {} (its steps once, ahead of the journey)",
            phase.name.as_deref().unwrap_or("the before: steps")
        );
        Journey::before_phase(plan.clone(), 1, 1)
            .iterate(&host, None)
            .await;
        println!("journey:");
    }
    let before_steps = host.steps.get();
    let before_failed = host.outcome.borrow().is_some();
    let ran = !before_failed && Journey::new(plan.clone(), 1, 1).iterate(&host, None).await;
    let took = started.elapsed();
    if !ran && !before_failed && host.steps.get() == before_steps {
        eprintln!(
            "headroom: no step ran: the data file has no rows for the first user (see data: in {})",
            args.file.display()
        );
        return ExitCode::FAILURE;
    }
    match host.outcome.into_inner() {
        None => {
            println!(
                "\nOK: {} requests, every check passed, in {}.",
                host.steps.get(),
                millis(took)
            );
            ExitCode::SUCCESS
        }
        Some(outcome) => {
            println!("\nFAILED at {}: {}", outcome.label, outcome.why);
            match outcome.saved {
                Ok((exchange, body)) => {
                    println!("  request and response headers: {}", exchange.display());
                    if let Some(body) = body {
                        println!("  response body:                {}", body.display());
                    }
                }
                Err(e) => println!("  (the response could not be saved: {e})"),
            }
            ExitCode::FAILURE
        }
    }
}

struct Outcome {
    label: String,
    why: String,
    saved: Result<(PathBuf, Option<PathBuf>), String>,
}

struct TryHost {
    plan: Arc<JourneyPlan>,
    verbose: bool,
    think: bool,
    /// The current step's checks, as they ran.
    checks: RefCell<Vec<(u16, bool)>>,
    failed: Cell<bool>,
    steps: Cell<usize>,
    save_dir: PathBuf,
    outcome: RefCell<Option<Outcome>>,
}

impl JourneyHost for TryHost {
    fn record(&self, sample: &headroom_bundle::sample::Sample) {
        let scenario = &self.plan.scenario;
        let label = &scenario.labels[sample.label as usize];
        if label.kind == LabelKind::Group {
            println!(
                "group {}: {}{}",
                label.name,
                millis(sample.response_time()),
                if sample.error.is_some() {
                    ", a step in it failed"
                } else {
                    ""
                }
            );
        }
    }

    fn record_check(&self, check: u16, passed: bool) {
        self.checks.borrow_mut().push((check, passed));
    }

    async fn pace(&self) -> Option<Instant> {
        None
    }

    fn observe(&self, _label: u16) -> Observe {
        Observe::Everything
    }

    fn exchange(&self, view: &StepView<'_>) {
        self.steps.set(self.steps.get() + 1);
        let scenario = &self.plan.scenario;
        let label = &scenario.labels[view.sample.label as usize].name;
        println!("\n[{}] {label}", self.steps.get());
        for hop in view.hops {
            print_request(&hop.request, &hop.url, self.verbose);
            print_response(hop.status, &hop.head, hop.elapsed, self.verbose);
        }
        let sample = view.sample;
        println!(
            "  = {} in {}, {} received",
            if sample.status > 0 {
                sample.status.to_string()
            } else {
                "no response".to_string()
            },
            millis(sample.response_time()),
            bytes(sample.bytes_received)
        );
        for x in view.extracted {
            if x.matched {
                println!("  extract {} = {}", x.name, quoted(&x.value));
            } else if x.value.is_empty() {
                println!("  extract {}: nothing matched", x.name);
            } else {
                println!(
                    "  extract {}: nothing matched, default {}",
                    x.name,
                    quoted(&x.value)
                );
            }
        }
        for (id, passed) in self.checks.borrow_mut().drain(..) {
            println!(
                "  check {}: {}",
                scenario.checks[id as usize],
                if passed { "ok" } else { "FAILED" }
            );
        }
        if let Some(error) = sample.error {
            let why = match (view.check, sample.detail) {
                (Some(check), _) => format!("check '{check}' failed"),
                (None, Some(detail)) => format!("{}: {detail}", error.describe()),
                (None, None) => error.describe().to_string(),
            };
            let failure = FailedExchange {
                label: label.clone(),
                vu: sample.vu,
                iteration: view.iteration,
                at_s: 0.0,
                error: Some(error),
                check: view.check.map(str::to_string),
                detail: sample.detail.map(str::to_string),
                status: sample.status,
                request: view.request.to_vec(),
                response_head: view.head.to_vec(),
                body: view.body.to_vec(),
                body_truncated: view.body_truncated,
                body_encoding: view.body_encoding.map(str::to_string),
            };
            let saved = save(&self.save_dir, self.steps.get(), &failure);
            self.failed.set(true);
            *self.outcome.borrow_mut() = Some(Outcome {
                label: format!("step {} ({label})", self.steps.get()),
                why,
                saved,
            });
        }
        if !self.think {
            return;
        }
        let think = view.step.think.unwrap_or(self.plan.think).mean();
        if think > Duration::ZERO {
            println!("  (think {} on average)", millis(think));
        }
    }

    fn halted(&self) -> bool {
        self.failed.get()
    }

    fn skips_think(&self) -> bool {
        !self.think
    }
}

/// Writes the exchange and its body; returns their paths.
fn save(
    dir: &Path,
    step: usize,
    failure: &FailedExchange,
) -> Result<(PathBuf, Option<PathBuf>), String> {
    if dir.exists() && !dir.is_dir() {
        return Err(format!("{} is a file, not a directory", dir.display()));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let stem = format!("{step:02}-{}", slug(&failure.label));
    // An earlier try's files of this step would sit beside these: gone.
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if name == format!("{stem}.txt") || name.starts_with(&format!("{stem}.body.")) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    let exchange = dir.join(format!("{stem}.txt"));
    std::fs::write(&exchange, describe(failure))
        .map_err(|e| format!("{}: {e}", exchange.display()))?;
    if failure.body.is_empty() {
        return Ok((exchange, None));
    }
    let body = dir.join(format!(
        "{stem}.body.{}",
        extension(&failure.response_head, failure.body_encoding.as_deref())
    ));
    std::fs::write(&body, &failure.body).map_err(|e| format!("{}: {e}", body.display()))?;
    Ok((exchange, Some(body)))
}

/// `  POST http://host/path` and the form's fields (or the body), and with
/// -v every header.
fn print_request(request: &[u8], url: &str, verbose: bool) {
    let (head, body) = split_head(request);
    let head = String::from_utf8_lossy(head);
    let mut lines = head.lines();
    let method = lines
        .next()
        .and_then(|l| l.split(' ').next())
        .unwrap_or("?");
    println!("  {method} {url}");
    let headers: Vec<&str> = lines.filter(|l| !l.is_empty()).collect();
    if verbose {
        for h in &headers {
            println!("    > {}", cut(&hide_authorization(h)));
        }
    }
    if body.is_empty() {
        return;
    }
    let form = headers.iter().any(|h| {
        h.to_ascii_lowercase()
            .starts_with("content-type: application/x-www-form-urlencoded")
    });
    if form {
        let fields: Vec<String> = String::from_utf8_lossy(body)
            .split('&')
            .map(|pair| {
                let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
                format!("{}={}", form_decode(name), quoted(&form_decode(value)))
            })
            .collect();
        println!("    form: {}", fields.join(" "));
    } else {
        println!("    body: {}", cut(&String::from_utf8_lossy(body)));
    }
}

/// `  303 See Other in 2.1 ms` with cookies set and where it redirects;
/// with -v every header.
fn print_response(status: u16, head: &[u8], elapsed: Duration, verbose: bool) {
    if status == 0 {
        println!("  <- no response after {}", millis(elapsed));
        return;
    }
    let text = String::from_utf8_lossy(head);
    let mut lines = text.lines();
    let status_line = lines.next().unwrap_or_default();
    let reason = status_line.splitn(3, ' ').nth(2).unwrap_or("");
    println!("  <- {status} {reason} in {}", millis(elapsed));
    for line in lines.filter(|l| !l.is_empty()) {
        let lower = line.to_ascii_lowercase();
        if verbose {
            println!("    < {}", cut(line));
        } else if lower.starts_with("set-cookie:") || lower.starts_with("location:") {
            println!("    {}", cut(line));
        }
    }
}

/// `0.84 ms`, `12.3 ms`, `1.24 s`.
fn millis(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else if ms >= 10.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.2} ms")
    }
}

/// `812 B`, `5.1 KB`, `2.3 MB` (powers of 1000).
fn bytes(n: u64) -> String {
    match n {
        0..1_000 => format!("{n} B"),
        1_000..1_000_000 => format!("{:.1} KB", n as f64 / 1e3),
        _ => format!("{:.1} MB", n as f64 / 1e6),
    }
}

fn split_head(bytes: &[u8]) -> (&[u8], &[u8]) {
    match bytes.windows(4).position(|w| w == b"\r\n\r\n") {
        Some(i) => (&bytes[..i], &bytes[i + 4..]),
        None => (bytes, &[]),
    }
}

fn hide_authorization(line: &str) -> String {
    let lower = line.to_ascii_lowercase();
    if lower.starts_with("authorization:") || lower.starts_with("proxy-authorization:") {
        let name = line.split(':').next().unwrap_or("");
        format!("{name}: [hidden]")
    } else {
        line.to_string()
    }
}

fn cut(text: &str) -> String {
    if text.chars().count() <= SHOWN {
        return text.to_string();
    }
    let kept: String = text.chars().take(SHOWN).collect();
    format!("{kept}… ({} characters)", text.chars().count())
}

fn quoted(value: &str) -> String {
    format!("\"{}\"", cut(value))
}

/// application/x-www-form-urlencoded decoding: '+' is a space, %XX a byte.
fn form_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = |b: u8| (b as char).to_digit(16);
                match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    (Some(high), Some(low)) => {
                        out.push((high * 16 + low) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_fields_are_decoded_for_display() {
        assert_eq!(form_decode("a+b%21%zz%4"), "a b!%zz%4");
        assert_eq!(form_decode("%é%"), "%é%");
        assert_eq!(form_decode("message%5Btext%5D"), "message[text]");
        assert_eq!(form_decode("%C3%A9"), "é");
    }

    #[test]
    fn long_values_are_cut_on_screen() {
        let long = "x".repeat(SHOWN + 5);
        assert!(cut(&long).ends_with(&format!("… ({} characters)", SHOWN + 5)));
        assert_eq!(cut("short"), "short");
        assert_eq!(
            hide_authorization("Authorization: Basic c2VjcmV0"),
            "Authorization: [hidden]"
        );
    }
}
