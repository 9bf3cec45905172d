//! `scenario try`'s runner: one user, one iteration, every exchange shown
//! ([`trial_view`](super::trial_view)) with each extracted value and each
//! check, stopping at the first failed step, whose exchange is saved to
//! files (the loop a user lives in while writing a journey: JMeter's View
//! Results Tree, k6's --http-debug). [`plan`] compiles the scenario for
//! it, [`run`] runs it and returns the [`TrialOutcome`]; the caller prints
//! the outcome and chooses the exit code.

use super::observe::{Observe, StepView};
use super::page::ResourceFailure;
use super::runner::{Journey, JourneyHost, JourneyPlan};
use super::trial_view::{bytes, millis, quoted, write_request, write_response};
use super::{LabelKind, Scenario};
use headroom_bundle::failures::{describe, extension, slug, FailedExchange};
use headroom_bundle::sample::{ErrorKind, Sample};
use headroom_http::conn::Connector;
use std::cell::{Cell, RefCell};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How the trial shows and keeps what it sees.
#[derive(Debug, Clone)]
pub struct TrialOptions {
    /// Every header of each request and response.
    pub verbose: bool,
    /// Wait the think times (they are skipped otherwise).
    pub think: bool,
    /// Where a failed step's exchange is saved.
    pub save_dir: PathBuf,
}

/// How the trial ended.
#[derive(Debug)]
pub enum TrialOutcome {
    /// Every step ran and every check passed: its steps' requests, and of
    /// the pages they loaded the resource requests (none from the cache).
    Passed {
        requests: usize,
        resources: usize,
        took: Duration,
    },
    /// The data file has no row for the first user: no step ran.
    NoStepRan,
    /// A step failed: which, why, and the saved exchange and body (or why
    /// they could not be saved).
    Failed {
        label: String,
        why: String,
        saved: Result<(PathBuf, Option<PathBuf>), String>,
    },
}

/// The scenario compiled for one user's one iteration; its `before:` steps
/// run once, by that user, ahead of the journey.
pub fn plan(scenario: Scenario, connectors: Vec<Arc<Connector>>) -> Arc<JourneyPlan> {
    let think = scenario.think;
    let mut plan = JourneyPlan::new(scenario, connectors, Some(1), think);
    if let Some(before) = &mut plan.before {
        before.iterations = 1;
    }
    Arc::new(plan)
}

/// Runs the trial, writing what it sees to `out`.
pub async fn run<W: Write>(plan: Arc<JourneyPlan>, options: TrialOptions, out: W) -> TrialOutcome {
    let host = TrialHost {
        plan: plan.clone(),
        options,
        out: RefCell::new(out),
        checks: RefCell::new(Vec::new()),
        steps: Cell::new(0),
        resources: Cell::new(0),
        failed: RefCell::new(None),
    };
    host.say_data_row();
    let started = Instant::now();
    if let Some(phase) = &plan.scenario.before {
        host.line(format_args!(
            "before: {} (its steps once, ahead of the journey)",
            phase.name.as_deref().unwrap_or("the before: steps")
        ));
        Journey::before_phase(plan.clone(), 1, 1)
            .iterate(&host, None)
            .await;
        host.line(format_args!("journey:"));
    }
    let before_steps = host.steps.get();
    let before_failed = host.failed.borrow().is_some();
    let ran = !before_failed && Journey::new(plan.clone(), 1, 1).iterate(&host, None).await;
    let took = started.elapsed();
    if !ran && !before_failed && host.steps.get() == before_steps {
        return TrialOutcome::NoStepRan;
    }
    let requests = host.steps.get();
    match host.failed.into_inner() {
        None => TrialOutcome::Passed {
            requests,
            resources: host.resources.get(),
            took,
        },
        Some(outcome) => outcome,
    }
}

struct TrialHost<W: Write> {
    plan: Arc<JourneyPlan>,
    options: TrialOptions,
    out: RefCell<W>,
    /// The current step's checks, as they ran.
    checks: RefCell<Vec<(u16, bool)>>,
    steps: Cell<usize>,
    /// The resource requests of the pages the steps loaded.
    resources: Cell<usize>,
    /// The failed step's outcome: the user stops there.
    failed: RefCell<Option<TrialOutcome>>,
}

impl<W: Write> TrialHost<W> {
    fn line(&self, text: std::fmt::Arguments<'_>) {
        let _ = writeln!(self.out.borrow_mut(), "{text}");
    }

    /// The data row the user reads: a shared cursor gives the `before:`
    /// user the first row, so the journey's user reads the second.
    fn say_data_row(&self) {
        let scenario = &self.plan.scenario;
        let Some(data) = &scenario.data else {
            return;
        };
        let row_index = usize::from(data.shared && self.plan.before.is_some());
        let Some(row) = data.rows.get(row_index) else {
            return;
        };
        let names = scenario.vars.names();
        let shown: Vec<String> = data
            .columns
            .iter()
            .zip(row)
            .map(|(v, value)| {
                // A password column is not shown: the file is the user's.
                if super::trial_view::password_name(&names[*v]) {
                    format!("{}=***", names[*v])
                } else {
                    format!("{}={value}", names[*v])
                }
            })
            .collect();
        self.line(format_args!(
            "data: row {} of {} ({})",
            row_index + 1,
            data.file.display(),
            shown.join(" ")
        ));
    }

    /// Each extractor's outcome and each check of the step.
    fn say_extracted_and_checks(&self, view: &StepView<'_>) {
        for x in view.extracted {
            if x.matched {
                self.line(format_args!("  extract {} = {}", x.name, quoted(&x.value)));
            } else if x.value.is_empty() {
                self.line(format_args!("  extract {}: nothing matched", x.name));
            } else {
                self.line(format_args!(
                    "  extract {}: nothing matched, default {}",
                    x.name,
                    quoted(&x.value)
                ));
            }
        }
        for (id, passed) in self.checks.borrow_mut().drain(..) {
            self.line(format_args!(
                "  check {}: {}",
                self.plan.scenario.checks[id as usize],
                if passed { "ok" } else { "FAILED" }
            ));
        }
    }

    /// A failed step: its exchange saved, the user halted.
    fn fail(&self, view: &StepView<'_>, label: &str) {
        let sample = view.sample;
        let Some(error) = sample.error else {
            return;
        };
        let why = match (view.check, sample.detail) {
            (Some(check), _) => format!("check '{check}' failed"),
            (None, _) if error == ErrorKind::Resource => match view.page {
                Some(page) => format!(
                    "{} of its {} failed: {}",
                    page.failed,
                    headroom_units::quantity::count(
                        page.requests as usize,
                        "resource request",
                        "resource requests"
                    ),
                    page.failures
                        .iter()
                        .map(|f| format!("{} ({})", f.url, resource_failure(f)))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => error.describe().to_string(),
            },
            (None, Some(detail)) => format!("{}: {detail}", error.describe()),
            (None, None) => error.describe().to_string(),
        };
        let failure = FailedExchange {
            label: label.to_string(),
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
        let saved = save(&self.options.save_dir, self.steps.get(), &failure);
        *self.failed.borrow_mut() = Some(TrialOutcome::Failed {
            label: format!("step {} ({label})", self.steps.get()),
            why,
            saved,
        });
    }
}

impl<W: Write> JourneyHost for TrialHost<W> {
    fn record(&self, sample: &Sample) {
        let label = &self.plan.scenario.labels[sample.label as usize];
        if label.kind == LabelKind::Group {
            self.line(format_args!(
                "group {}: {}{}",
                label.name,
                millis(sample.response_time()),
                if sample.error.is_some() {
                    ", a step in it failed"
                } else {
                    ""
                }
            ));
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
        let label = &self.plan.scenario.labels[view.sample.label as usize].name;
        self.line(format_args!("\n[{}] {label}", self.steps.get()));
        for hop in view.hops {
            let mut out = self.out.borrow_mut();
            write_request(&mut *out, &hop.request, &hop.url, self.options.verbose);
            write_response(
                &mut *out,
                hop.status,
                &hop.head,
                hop.elapsed,
                self.options.verbose,
            );
        }
        let sample = view.sample;
        self.line(format_args!(
            "  = {} in {}, {} received",
            if sample.status > 0 {
                sample.status.to_string()
            } else {
                "no response".to_string()
            },
            millis(sample.response_time()),
            bytes(sample.bytes_received)
        ));
        if let Some(page) = view.page {
            self.resources
                .set(self.resources.get() + page.requests as usize);
            self.line(format_args!(
                "  page: {} ({} from the cache{}); the last ended {} after the request",
                headroom_units::quantity::count(
                    page.requests as usize,
                    "resource request",
                    "resource requests"
                ),
                page.from_cache,
                if page.left_out > 0 {
                    format!(", {} left out: other hosts or beyond 2,000", page.left_out)
                } else {
                    String::new()
                },
                millis(sample.response_time()),
            ));
            for failure in &page.failures {
                self.line(format_args!(
                    "  failed resource: {} ({})",
                    failure.url,
                    resource_failure(failure)
                ));
            }
            let unnamed = page.failed as usize - page.failures.len();
            if unnamed > 0 {
                self.line(format_args!("  ... and {unnamed} more failed resources"));
            }
        }
        self.say_extracted_and_checks(view);
        self.fail(view, label);
        if !self.options.think {
            return;
        }
        let think = view.step.think.unwrap_or(self.plan.think).mean();
        if think > Duration::ZERO {
            self.line(format_args!("  (think {} on average)", millis(think)));
        }
    }

    fn halted(&self) -> bool {
        self.failed.borrow().is_some()
    }

    fn skips_think(&self) -> bool {
        !self.options.think
    }
}

/// What went wrong with a page's resource, in a few words.
fn resource_failure(failure: &ResourceFailure) -> String {
    let what = match (failure.error, failure.status) {
        (ErrorKind::Http4xx | ErrorKind::Http5xx, status) => format!("answered {status}"),
        (error, _) => error.describe().to_string(),
    };
    match failure.detail {
        Some(detail) => format!("{what}: {detail}"),
        None => what,
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
    // The exchange holds the user's cookies and form fields: a directory
    // made here is the user's alone, and so are the files.
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?;
    }
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
    write_private(&exchange, &describe(failure))?;
    if failure.body.is_empty() {
        return Ok((exchange, None));
    }
    let body = dir.join(format!(
        "{stem}.body.{}",
        extension(&failure.response_head, failure.body_encoding.as_deref())
    ));
    write_private(&body, &failure.body)?;
    Ok((exchange, Some(body)))
}

/// [`headroom_units::secret::write_private`], its error said with the path.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), String> {
    headroom_units::secret::write_private(path, bytes)
        .map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Read};
    use std::net::TcpListener;

    /// Answers every request `200 ok`, except paths with `missing`: 404.
    fn server() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut writer = stream;
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let mut length = 0;
                        loop {
                            let mut header = String::new();
                            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                                return;
                            }
                            if let Some(v) =
                                header.to_ascii_lowercase().strip_prefix("content-length:")
                            {
                                length = v.trim().parse().unwrap_or(0);
                            }
                            if header == "\r\n" {
                                break;
                            }
                        }
                        let mut body = vec![0; length];
                        let _ = reader.read_exact(&mut body);
                        let status = if line.contains("missing") {
                            "404 Not Found"
                        } else {
                            "200 OK"
                        };
                        let reply = format!("HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok");
                        if writer.write_all(reply.as_bytes()).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        port
    }

    fn trial(name: &str, steps: &str) -> (TrialOutcome, String, PathBuf) {
        let port = server();
        let dir =
            std::env::temp_dir().join(format!("headroom-trial-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("users.csv"), "ann\nbob\n").unwrap();
        let file = dir.join("journey.yaml");
        std::fs::write(
            &file,
            format!(
                "defaults:\n  base_url: http://127.0.0.1:{port}\ndata:\n  file: users.csv\n  columns: [user]\n\
                 before:\n  name: Warm-up\n  steps:\n    - label: warm\n      path: /warm\n{steps}"
            ),
        )
        .unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut out = Vec::new();
        let outcome = runtime.block_on(async {
            let scenario = super::super::parse_file(&file, None).unwrap();
            let mut connectors = Vec::new();
            for origin in &scenario.origins {
                connectors.push(Arc::new(
                    headroom_http::preflight::connect(
                        origin,
                        false,
                        Default::default(),
                        std::time::Duration::from_secs(5),
                    )
                    .await
                    .unwrap(),
                ));
            }
            let options = TrialOptions {
                verbose: false,
                think: false,
                save_dir: dir.join("saved"),
            };
            run(plan(scenario, connectors), options, &mut out).await
        });
        (outcome, String::from_utf8(out).unwrap(), dir)
    }

    #[test]
    fn the_before_steps_run_first_and_the_journey_reads_the_second_row() {
        let (outcome, out, _) = trial(
            "pass",
            "steps:\n  - label: home\n    path: /home?u=${user}\n",
        );
        assert!(
            matches!(outcome, TrialOutcome::Passed { requests: 2, .. }),
            "{outcome:?}\n{out}"
        );
        assert!(out.contains("data: row 2 of "), "{out}");
        assert!(out.contains("(user=bob)"), "{out}");
        let before = out
            .find("before: Warm-up (its steps once, ahead of the journey)")
            .unwrap();
        let journey = out.find("journey:").unwrap();
        assert!(before < journey, "{out}");
        assert!(out.contains("\n[1] warm\n  GET http://127.0.0.1:"), "{out}");
        assert!(out.contains("/home?u=bob\n  <- 200 OK in "), "{out}");
        assert!(out.contains("  = 200 in "), "{out}");
    }

    #[test]
    fn a_failed_step_stops_the_user_and_its_exchange_is_saved() {
        let (outcome, out, dir) = trial(
            "fail",
            "steps:\n  - label: gone\n    path: /missing\n  - label: after\n    path: /after\n",
        );
        let TrialOutcome::Failed { label, why, saved } = outcome else {
            panic!("{outcome:?}\n{out}");
        };
        assert_eq!(label, "step 2 (gone)");
        assert_eq!(why, "HTTP 4xx");
        let (exchange, body) = saved.unwrap();
        assert!(
            exchange.starts_with(dir.join("saved")),
            "{}",
            exchange.display()
        );
        assert!(std::fs::read_to_string(&exchange)
            .unwrap()
            .contains("GET /missing"));
        assert_eq!(std::fs::read(body.unwrap()).unwrap(), b"ok");
        assert!(
            !out.contains("after"),
            "the user stops at the failure: {out}"
        );
    }

    /// A failed step's exchange holds cookies and form fields: its files
    /// and the directory made for them are the user's alone.
    #[test]
    fn a_saved_exchange_is_readable_by_its_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir()
            .join(format!("headroom-try-perms-{}", std::process::id()))
            .join("saved");
        let failure = FailedExchange {
            label: "login".into(),
            vu: 1,
            iteration: 1,
            at_s: 0.0,
            error: None,
            check: Some("logged in".into()),
            detail: None,
            status: 200,
            request: b"POST /wp-login.php HTTP/1.1\r\n\r\n".to_vec(),
            response_head: b"HTTP/1.1 200 OK\r\nSet-Cookie: wordpress_x=student01|abc\r\n\r\n"
                .to_vec(),
            body: b"<html>".to_vec(),
            body_truncated: false,
            body_encoding: None,
        };
        let (exchange, body) = save(&dir, 2, &failure).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&exchange), 0o600);
        assert_eq!(mode(&body.unwrap()), 0o600);
        std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }
}
