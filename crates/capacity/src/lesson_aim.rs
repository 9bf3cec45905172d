//! Before a modelled lesson search's first lesson (`--ladder model`): what
//! a page view costs the server at short non-stop levels
//! ([`crate::page_cost`]), the lesson start modelled from it
//! ([`crate::lesson_model`]), and the model's answer, which aims the first
//! lesson. Also what the model says of each lesson the search ran, for
//! capacity.json.

use crate::error::CapacityError;
use crate::lesson_model::{LessonModel, ModelAnswer, ModelLesson, Slowing};
use crate::level_run::{run_level, Ran};
use crate::page_cost::{self, NonStop, Role, Work, CROWDED, LONE, MOST_LEVELS};
use headroom_analysis::apdex::ApdexThresholds;
use headroom_analysis::capacity::ApdexGoal;
use headroom_bundle::capacity::{LessonModelRecord, ModelledLesson, NonStopRecord};
use headroom_bundle::jtl_read::JtlSample;
use headroom_bundle::manifest::read_manifest;
use headroom_bundle::summary::RunSummary;
use headroom_load::engine::EnginePlan;
use headroom_load::run::RunSetup;
use headroom_units::quantity::round_figure;
use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// The lesson a search's levels are, and its target.
#[derive(Debug, Clone)]
pub struct LessonShape {
    pub within: Duration,
    /// A lesson level's whole length.
    pub length: Duration,
    pub apdex: ApdexThresholds,
    pub target: ApdexGoal,
    /// The levels' seed: a lesson's repetition k draws with it plus k.
    pub seed: u64,
    /// How many lessons at the answer must all meet (`--confirm`).
    pub repetitions: u32,
    /// The most students the model may answer.
    pub most: u32,
}

/// The model and its answer, and capacity.json's record of them.
pub struct Aimed {
    pub model: LessonModel,
    pub answer: ModelAnswer,
    pub record: LessonModelRecord,
}

impl Aimed {
    /// Why the first lesson has the students it has.
    pub fn why(&self) -> String {
        if self.answer.capped {
            format!(
                "the lesson model held the target at the most it tried ({} students)",
                self.answer.students
            )
        } else {
            "the lesson model's answer, from what a page view cost non-stop".to_string()
        }
    }

    /// What the model says of a lesson of each of `students` (the seed's
    /// lesson), for capacity.json.
    pub fn say_of(&mut self, students: &[u32], seed: u64) {
        let mut seen: Vec<u32> = students.to_vec();
        seen.sort_unstable();
        seen.dedup();
        self.record.levels = seen
            .into_iter()
            .map(|n| modelled(&self.model.simulate(n, seed)))
            .collect();
    }
}

fn modelled(lesson: &ModelLesson) -> ModelledLesson {
    ModelledLesson {
        students: lesson.students,
        apdex: lesson.phases.map(|p| p.apdex),
        p95_ms: lesson.phases.map(|p| p.p95_s.map(|s| s * 1000.0)),
        met: lesson.met(),
    }
}

/// What the look before the first lesson found.
pub enum Looked {
    /// The model and its answer.
    Aimed(Box<Aimed>),
    /// No model could be made, and why (the search climbs as the aimed
    /// ladder does instead).
    NoModel(String),
    /// The user interrupted it.
    Interrupted,
}

/// Runs the non-stop levels (1 user with its samples, then twice as many
/// a level up to 32, or until requests fail), models the lesson from them
/// and finds the model's answer. `prepare(users, duration, samples, dir)`
/// assembles a non-stop level; `said` is told a line per level and one
/// for the model.
pub async fn look<E, P, Fut>(
    prepare: P,
    stop: &watch::Receiver<bool>,
    base: &Path,
    shape: &LessonShape,
    said: impl Fn(&str),
) -> Result<Looked, E>
where
    P: Fn(u32, Duration, bool, PathBuf) -> Fut,
    Fut: Future<Output = Result<(EnginePlan, RunSetup), E>>,
    E: From<CapacityError>,
{
    let started = Instant::now();
    let mut levels: Vec<(NonStop, RunSummary)> = Vec::new();
    let mut records: Vec<NonStopRecord> = Vec::new();
    let mut lone: Option<(Vec<JtlSample>, HashMap<String, Role>)> = None;
    let mut reading_from = 0;
    let mut users = 1;
    while levels.len() < MOST_LEVELS {
        let is_lone = users == 1;
        let dir = base.join(format!("non-stop-{users:03}"));
        let duration = if is_lone { LONE } else { CROWDED };
        let (plan, setup) = prepare(users, duration, is_lone, dir).await?;
        let roles = page_cost::roles(&plan, &setup.manifest.labels);
        if is_lone {
            reading_from = headroom_bundle::phases::reading_from(shape.within, plan.think.mean());
        }
        let outcome = match run_level(plan, setup, stop, |_| {}).await? {
            Ran::Done(outcome) => outcome,
            Ran::Interrupted(_) => return Ok(Looked::Interrupted),
        };
        let summary = read_manifest(&outcome.bundle)
            .map_err(|e| CapacityError::Level(e.to_string()))?
            .summary
            .ok_or_else(|| {
                CapacityError::Level(format!(
                    "the non-stop level of {users} in {} has no summary",
                    outcome.bundle.display()
                ))
            })?;
        let level = NonStop::of(users, &summary, &roles);
        said(&format!(
            "what a page view costs: {} without thinking{}: {} requests/s, {} ms each on average{}",
            headroom_units::quantity::count(users as usize, "user", "users"),
            if is_lone {
                " (one student's walk)"
            } else {
                ", each iteration a new student"
            },
            round_figure(level.requests_per_s),
            round_figure(level.mean_s * 1000.0),
            if level.failed > 0.0 {
                format!(", {:.1}% failed", level.failed * 100.0)
            } else {
                String::new()
            }
        ));
        records.push(NonStopRecord {
            users,
            requests_per_s: level.requests_per_s,
            mean_ms: level.mean_s * 1000.0,
            failed: level.failed,
            bundle: outcome.bundle.clone(),
        });
        if is_lone {
            let path = outcome.bundle.join(headroom_bundle::SAMPLES);
            let samples = match headroom_bundle::jtl_read::read(&path) {
                Ok(samples) => samples,
                Err(e) => {
                    return Ok(Looked::NoModel(format!(
                        "no lesson model: the lone user's samples ({}) cannot be read ({e}); the search climbs as --ladder aimed does",
                        path.display()
                    )))
                }
            };
            lone = Some((samples.samples, roles));
            levels.push((level, summary));
            users = 2;
            continue;
        }
        // A crowd whose requests failed: the server gave up; no more.
        let failing = level.failed > page_cost::FAILING;
        levels.push((level, summary));
        if failing {
            break;
        }
        users *= 2;
    }
    // The fullest crowd that did not fail prices the work.
    let fullest = levels
        .iter()
        .filter(|(l, _)| l.users > 1 && l.failed <= page_cost::FAILING)
        .max_by(|a, b| a.0.requests_per_s.total_cmp(&b.0.requests_per_s))
        .or_else(|| levels.first());
    let (Some((fullest, priced)), Some((samples, roles))) = (fullest, &lone) else {
        return Err(CapacityError::Level("no non-stop level was measured".into()).into());
    };
    let work = Work::of(priced, roles);
    let steps = page_cost::journey(samples, roles, &work);
    if steps.is_empty() {
        return Ok(Looked::NoModel(format!(
            "no lesson model: the lone user finished no step in {} s (the server did not answer it in time); the search climbs as --ladder aimed does",
            LONE.as_secs()
        )));
    }
    // Past the fullest crowd, how the server slowed: the work each larger
    // crowd did a second, priced as the fullest's (a crowd never speeds
    // the server up).
    let slowing = Slowing {
        from: work.in_flight,
        points: levels
            .iter()
            .filter(|(l, _)| l.users > fullest.users && l.failed <= page_cost::FAILING)
            .map(|(_, s)| (page_cost::in_flight(s, roles), work.rate(s, roles).min(1.0)))
            .collect(),
    };
    let model = LessonModel {
        repeat_from: steps.len() / 2,
        steps,
        // The work is priced in seconds of the whole server (a label's
        // time in the fullest crowd over the requests it shared the
        // server with), so the server does one such second a second.
        parallel: 1.0,
        slowing,
        within: shape.within,
        length: shape.length,
        reading_from,
        apdex: shape.apdex,
        target: shape.target,
    };
    // The simulation's lessons take their time (up to seconds for
    // thousands of students): off the run's thread, and Ctrl-C ends it.
    let answering = {
        let model = model.clone();
        let (seed, repetitions, most) = (shape.seed, shape.repetitions, shape.most);
        tokio::task::spawn_blocking(move || model.answer(seed, repetitions, most))
    };
    let mut halt = stop.clone();
    let answer = tokio::select! {
        answer = answering => answer.map_err(|e| {
            CapacityError::Level(format!("the lesson model stopped before its answer: {e}"))
        })?,
        // (A stop that can no longer come does not end it.)
        Ok(_) = halt.wait_for(|v| *v) => return Ok(Looked::Interrupted),
    };
    let requests = model.steps.iter().map(|s| 1 + s.then_s.len()).sum();
    said(&format!(
        "the lesson model: the lone user walked {} ({} requests); {} new students at a time kept {} requests in flight at {} requests/s; the model takes {}{} students arriving within {} s{}",
        headroom_units::quantity::count(model.steps.len(), "step", "steps"),
        requests,
        fullest.users,
        round_figure(work.in_flight),
        round_figure(fullest.requests_per_s),
        if answer.capped { "at least " } else { "" },
        answer.students,
        round_figure(shape.within.as_secs_f64()),
        answer.above.as_ref().map_or(String::new(), |a| format!(
            " (with {} its worst lesson's arrival Apdex {}, reading {})",
            a.students,
            a.phases[0].apdex.map_or("-".into(), |x| format!("{x:.3}")),
            a.phases[1].apdex.map_or("-".into(), |x| format!("{x:.3}"))
        ))
    ));
    let record = LessonModelRecord {
        non_stop: records,
        in_flight: work.in_flight,
        fullest: fullest.users,
        slowing: model.slowing.points.iter().map(|&(k, s)| [k, s]).collect(),
        steps: model.steps.len(),
        requests,
        students: answer.students,
        capped: answer.capped,
        at: answer.at.as_ref().map(modelled),
        above: answer.above.as_ref().map(modelled),
        levels: Vec::new(),
        seconds: started.elapsed().as_secs_f64(),
    };
    if answer.students == 0 {
        return Ok(Looked::NoModel(
            "no lesson model: in the model not even one student met the target (a request alone takes longer than the Apdex allows); the search climbs as --ladder aimed does"
                .into(),
        ));
    }
    Ok(Looked::Aimed(Box::new(Aimed {
        model,
        answer,
        record,
    })))
}
