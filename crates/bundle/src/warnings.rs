//! Warnings about a run's trustworthiness. Each says what happened, how it
//! distorts the figures, and what to do (hyperfine's warnings are the model).

use headroom_units::quantity::Readable;
use serde::{Serialize, Serializer};
use std::fmt;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub enum RunWarning {
    /// A worker thread of the generator was busy most of the run.
    GeneratorSaturated { busy_percent: f64 },
    /// The generator waited for a CPU (other processes took it) or its
    /// event loop ran late.
    GeneratorStalled {
        waited_percent: f64,
        worst_lag: Duration,
    },
    /// Requests started later than their schedule (open model, throughput cap).
    BehindSchedule {
        late: u64,
        total: u64,
        worst_lag: Duration,
        max_vus: Option<u32>,
    },
    /// Every request failed.
    AllFailed { main_error: String },
    /// A target of the run was reached by no request at all.
    NoSamples,
    /// Many requests were sent twice: the server closed kept-alive
    /// connections before answering them.
    ManyResent { resent: u64, total: u64 },
    /// A monitored host gave no figures for some seconds, or none at all.
    MissingResources {
        host: String,
        seconds: u64,
        none_at_all: bool,
        problem: String,
    },
}

impl RunWarning {
    pub fn kind(&self) -> &'static str {
        match self {
            RunWarning::GeneratorSaturated { .. } => "generator_saturated",
            RunWarning::GeneratorStalled { .. } => "generator_stalled",
            RunWarning::BehindSchedule { .. } => "behind_schedule",
            RunWarning::AllFailed { .. } => "all_failed",
            RunWarning::NoSamples => "no_samples",
            RunWarning::MissingResources { .. } => "missing_resources",
            RunWarning::ManyResent { .. } => "many_resent",
        }
    }
}

impl fmt::Display for RunWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunWarning::GeneratorSaturated { busy_percent } => write!(
                f,
                "headroom's own CPU was saturated (a worker thread was {busy_percent:.0}% busy): response \
                 times include time spent inside the generator and the throughput understates the target. \
                 Run headroom on another machine, or with more cores (--threads)."
            ),
            RunWarning::GeneratorStalled { waited_percent, worst_lag } => {
                write!(
                    f,
                    "headroom was starved of CPU: its worker threads waited for a processor \
                     {waited_percent:.0}% of the time"
                )?;
                if *worst_lag >= Duration::from_millis(1) {
                    write!(f, " and its event loop ran up to {} late", Readable(*worst_lag))?;
                }
                write!(
                    f,
                    ", so it sent less than planned and its timings include that wait; the results \
                     understate the target. Stop other busy processes on this machine (or the server \
                     under test, if it runs here) or run headroom elsewhere."
                )
            }
            RunWarning::BehindSchedule { late, total, worst_lag, max_vus } => {
                let percent = 100.0 * *late as f64 / (*total).max(1) as f64;
                write!(
                    f,
                    "{late} of {total} requests ({percent:.1}%) started more than 10ms after their scheduled \
                     time (worst {}): the target received less load than planned. Their response times count \
                     from the scheduled time (coordinated omission corrected).",
                    Readable(*worst_lag)
                )?;
                match max_vus {
                    Some(max) => write!(
                        f,
                        " All {max} VUs were busy (--max-vus reached): raise --max-vus if the target should take the full rate."
                    ),
                    None => write!(f, " The generator fell behind: give it more CPU or lower the rate."),
                }
            }
            RunWarning::AllFailed { main_error } => write!(
                f,
                "every request failed (mostly: {main_error}): the figures describe failures, not the target's \
                 speed. Check the URL and that the server is up."
            ),
            RunWarning::NoSamples => write!(
                f,
                "no request completed: the run was too short or every request was still in flight when it \
                 ended. Run longer (-d) or raise --timeout."
            ),
            RunWarning::ManyResent { resent, total } => write!(
                f,
                "{resent} of {total} requests ({:.0}%) were sent again on a new connection: the server \
                 closed kept-alive connections before answering them. A server that does so only when \
                 idle is fine; one that took those requests and then dropped the connection ran them \
                 twice, and its failures are hidden here. Run with --no-keepalive to count every \
                 dropped request as a failure.",
                100.0 * *resent as f64 / (*total).max(1) as f64
            ),
            RunWarning::MissingResources { host, seconds, none_at_all: true, problem } => write!(
                f,
                "no data from {host} ({problem}): its resources are unknown, not idle, and nothing \
                 can be concluded about them. Check that `headroom agent` runs there and answers{}.",
                match seconds {
                    0 => String::new(),
                    1 => " (1 poll failed)".to_string(),
                    n => format!(" ({n} polls failed)"),
                }
            ),
            RunWarning::MissingResources { host, seconds, problem, .. } => write!(
                f,
                "no data from {host} for {seconds} s of the run ({problem}): its averages and peaks \
                 cover only the seconds it answered."
            ),
        }
    }
}

impl Serialize for RunWarning {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("RunWarning", 2)?;
        st.serialize_field("kind", self.kind())?;
        st.serialize_field("message", &self.to_string())?;
        st.end()
    }
}
