//! The lesson start as a model: the students of a lesson arrive at the
//! times a lesson level draws (the same seed, the same times), each walks
//! the journey one student walked non-stop ([`crate::page_cost`]), thinking
//! between steps as the scenario says, and the server shares itself among
//! the requests in flight: a request alone takes what it took with the
//! server to itself, and the server does at most `parallel` such requests'
//! work at once (processor sharing, measured as the most it did non-stop).
//! The burst builds a queue and drains it; each step's time (a page: its
//! document and then its resources, all at once) is judged in the lesson's
//! two phases as a lesson level judges them. The model's answer is the
//! most students for whom every lesson of `--confirm`'s seeds meets the
//! target in both phases. It aims the search's first lesson; the lessons
//! decide.

use headroom_analysis::apdex::ApdexThresholds;
use headroom_analysis::capacity::{meets, ApdexGoal};
use headroom_journey::lesson::Lesson;
use headroom_journey::profile::Think;
use headroom_units::rng::Rng;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

pub use headroom_bundle::capacity::MOST_MODELLED;

/// The model's think draws apart from the users' own streams.
const MODEL_STREAM: u64 = 0x6d6f_6465_6c00;

/// One step of a student's journey as the server sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct StepCost {
    /// The step's first request (a page's document): the seconds it took
    /// with the server to itself.
    pub first_s: f64,
    /// What the step fetches once its first request came (a page's
    /// resources), all at once; each as `first_s`.
    pub then_s: Vec<f64>,
    /// The think after the step.
    pub think: Think,
}

/// A lesson start to simulate: the journey, the server, the lesson's times
/// and the target.
#[derive(Debug, Clone)]
pub struct LessonModel {
    /// One student's journey, in order.
    pub steps: Vec<StepCost>,
    /// Where a student who walked every step goes on (its steady part).
    pub repeat_from: usize,
    /// How many lone requests' work the server does at once.
    pub parallel: f64,
    /// How the server's speed falls with the requests in flight past its
    /// fullest (contention: locks, context switches, a CPU quota's
    /// throttling): `(in flight, speed)` points, the speed relative to the
    /// fullest level's, from `from` (the fullest level's in flight, speed
    /// 1) on, held past the last point.
    pub slowing: Slowing,
    pub within: Duration,
    /// The lesson level's whole length.
    pub length: Duration,
    /// The first second of the reading phase.
    pub reading_from: u64,
    pub apdex: ApdexThresholds,
    pub target: ApdexGoal,
}

/// The server's speed against the requests in flight, relative to its
/// fullest non-stop level: 1 up to that level's requests in flight, then
/// through the later levels' points, held past the last.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Slowing {
    pub from: f64,
    pub points: Vec<(f64, f64)>,
}

impl Slowing {
    /// The speed with `in_flight` requests.
    pub fn speed(&self, in_flight: f64) -> f64 {
        let mut before = (self.from, 1.0);
        for &(at, speed) in &self.points {
            if in_flight <= at {
                let span = at - before.0;
                if span <= 0.0 {
                    return speed;
                }
                let share = ((in_flight - before.0) / span).clamp(0.0, 1.0);
                return before.1 + share * (speed - before.1);
            }
            before = (at, speed);
        }
        before.1
    }
}

/// One phase of a simulated lesson.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelPhase {
    /// Steps (pages, and requests that are not a page's) that ended in it.
    pub pages: u64,
    pub apdex: Option<f64>,
    pub p95_s: Option<f64>,
    pub met: bool,
}

/// A simulated lesson: its arrival phase, then its reading phase.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelLesson {
    pub students: u32,
    pub phases: [ModelPhase; 2],
}

impl ModelLesson {
    pub fn met(&self) -> bool {
        self.phases.iter().all(|p| p.met)
    }

    /// The lower of the phases' Apdex (none: 0).
    fn worst_apdex(&self) -> f64 {
        self.phases
            .iter()
            .map(|p| p.apdex.unwrap_or(0.0))
            .fold(1.0, f64::min)
    }
}

/// What the model answers: the most students whose every lesson met, the
/// worst of those lessons, and the worst lesson just above.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelAnswer {
    /// 0: not even one student.
    pub students: u32,
    pub at: Option<ModelLesson>,
    pub above: Option<ModelLesson>,
    /// The target held at [`MOST_MODELLED`] (or the cap given).
    pub capped: bool,
}

/// A request in flight: when its work is done (in the server's attained
/// work per request) and whose it is.
type InFlight = Reverse<(u64, usize)>;

/// Where each student is.
#[derive(Clone)]
struct Walker {
    step: usize,
    started: f64,
    /// Requests of the current step still in flight.
    outstanding: usize,
    /// The step's first request came (its resources are out).
    opened: bool,
    rng: Rng,
}

impl LessonModel {
    /// `students` arriving at the times a lesson with `seed` draws.
    pub fn simulate(&self, students: u32, seed: u64) -> ModelLesson {
        let empty = ModelPhase {
            pages: 0,
            apdex: None,
            p95_s: None,
            met: false,
        };
        let Ok(lesson) = Lesson::new(students, self.within, self.length, seed) else {
            return ModelLesson {
                students,
                phases: [empty, empty],
            };
        };
        let length = self.length.as_secs_f64();
        let split = self.reading_from as f64;
        let mut times: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        if self.steps.is_empty() {
            return self.judged(students, times);
        }
        let mut walkers: Vec<Walker> = (0..students as usize)
            .map(|i| Walker {
                step: 0,
                started: 0.0,
                outstanding: 0,
                opened: false,
                rng: Rng::new(seed ^ MODEL_STREAM, i as u64),
            })
            .collect();
        // Steps to begin, by time: (time bits, student). Times are never
        // negative, so their bits order as they do.
        let mut begins: BinaryHeap<Reverse<(u64, usize)>> = lesson
            .arrivals
            .iter()
            .enumerate()
            .map(|(i, at)| Reverse((at.as_secs_f64().to_bits(), i)))
            .collect();
        let mut in_flight: BinaryHeap<InFlight> = BinaryHeap::new();
        let (mut now, mut attained) = (0.0_f64, 0.0_f64);
        let parallel = self.parallel.max(1e-9);
        loop {
            let active = in_flight.len();
            let rate = if active == 0 {
                0.0
            } else {
                (parallel * self.slowing.speed(active as f64) / active as f64).min(1.0)
            };
            let finish = in_flight
                .peek()
                .map(|Reverse((done, _))| now + (f64::from_bits(*done) - attained).max(0.0) / rate);
            let begin = begins.peek().map(|Reverse((at, _))| f64::from_bits(*at));
            let (at, is_finish) = match (finish, begin) {
                (Some(f), Some(b)) if f <= b => (f, true),
                (Some(f), None) => (f, true),
                (_, Some(b)) => (b, false),
                (None, None) => break,
            };
            if at > length {
                break;
            }
            attained += rate * (at - now);
            now = at;
            if is_finish {
                let Some(Reverse((_, student))) = in_flight.pop() else {
                    break;
                };
                let walker = &mut walkers[student];
                walker.outstanding -= 1;
                if walker.outstanding > 0 {
                    continue;
                }
                let step = &self.steps[walker.step];
                if !walker.opened && !step.then_s.is_empty() {
                    walker.opened = true;
                    walker.outstanding = step.then_s.len();
                    for work in &step.then_s {
                        in_flight.push(Reverse(((attained + work).to_bits(), student)));
                    }
                    continue;
                }
                let phase = usize::from(now.floor() >= split);
                times[phase].push(now - walker.started);
                let think = step.think.pick(&mut walker.rng).as_secs_f64();
                walker.step += 1;
                if walker.step >= self.steps.len() {
                    walker.step = self.repeat_from.min(self.steps.len() - 1);
                }
                begins.push(Reverse(((now + think).to_bits(), student)));
            } else {
                let Some(Reverse((_, student))) = begins.pop() else {
                    break;
                };
                let walker = &mut walkers[student];
                walker.started = now;
                walker.opened = false;
                walker.outstanding = 1;
                let work = self.steps[walker.step].first_s;
                in_flight.push(Reverse(((attained + work).to_bits(), student)));
            }
        }
        self.judged(students, times)
    }

    /// The phases' figures from their steps' times, judged.
    fn judged(&self, students: u32, mut times: [Vec<f64>; 2]) -> ModelLesson {
        let t = self.apdex.satisfied.as_secs_f64();
        let f = self.apdex.tolerated.as_secs_f64();
        let phases = std::array::from_fn(|i| {
            let times = &mut times[i];
            let pages = times.len() as u64;
            if pages == 0 {
                return ModelPhase {
                    pages,
                    apdex: None,
                    p95_s: None,
                    met: false,
                };
            }
            let satisfied = times.iter().filter(|&&r| r <= t).count() as f64;
            let tolerating = times.iter().filter(|&&r| r > t && r <= f).count() as f64;
            let apdex = (satisfied + tolerating / 2.0) / pages as f64;
            times.sort_by(f64::total_cmp);
            let rank = ((0.95 * pages as f64).ceil() as usize).clamp(1, times.len());
            let p95 = times[rank - 1];
            ModelPhase {
                pages,
                apdex: Some(apdex),
                p95_s: Some(p95),
                met: meets(
                    &self.target,
                    Some(apdex),
                    0.0,
                    Some(Duration::from_secs_f64(p95)),
                    pages,
                ),
            }
        });
        ModelLesson { students, phases }
    }

    /// The worst of `repetitions` lessons of `students` (the seeds a
    /// search's repetitions draw: `seed`, `seed + 1`, ...), and whether
    /// all of them met.
    pub fn lessons(&self, students: u32, seed: u64, repetitions: u32) -> (bool, ModelLesson) {
        let runs: Vec<ModelLesson> = (0..u64::from(repetitions.max(1)))
            .map(|k| self.simulate(students, seed.wrapping_add(k)))
            .collect();
        let all = runs.iter().all(ModelLesson::met);
        let worst = runs
            .into_iter()
            .min_by(|a, b| a.worst_apdex().total_cmp(&b.worst_apdex()))
            .unwrap_or(ModelLesson {
                students,
                phases: [ModelPhase {
                    pages: 0,
                    apdex: None,
                    p95_s: None,
                    met: false,
                }; 2],
            });
        (all, worst)
    }

    /// The most students (up to `most`) whose every lesson of
    /// `repetitions` seeds met the target: doubling from one until a
    /// lesson breaks, then halving the gap down to 1% of the answer.
    pub fn answer(&self, seed: u64, repetitions: u32, most: u32) -> ModelAnswer {
        let most = most.clamp(1, MOST_MODELLED);
        let (one, first) = self.lessons(1, seed, repetitions);
        if !one {
            return ModelAnswer {
                students: 0,
                at: None,
                above: Some(first),
                capped: false,
            };
        }
        let (mut good, mut at) = (1, first);
        let mut bad: Option<(u32, ModelLesson)> = None;
        while bad.is_none() && good < most {
            let next = good.saturating_mul(2).min(most);
            match self.lessons(next, seed, repetitions) {
                (true, lesson) => (good, at) = (next, lesson),
                (false, lesson) => bad = Some((next, lesson)),
            }
        }
        let Some((mut high, mut above)) = bad else {
            return ModelAnswer {
                students: good,
                at: Some(at),
                above: None,
                capped: true,
            };
        };
        while high - good > (good / 100).max(1) {
            let cut = good + (high - good) / 2;
            match self.lessons(cut, seed, repetitions) {
                (true, lesson) => (good, at) = (cut, lesson),
                (false, lesson) => (high, above) = (cut, lesson),
            }
        }
        ModelAnswer {
            students: good,
            at: Some(at),
            above: Some(above),
            capped: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(parallel: f64, document_s: f64, think: Think) -> LessonModel {
        LessonModel {
            steps: vec![StepCost {
                first_s: document_s,
                then_s: Vec::new(),
                think,
            }],
            repeat_from: 0,
            parallel,
            slowing: Slowing::default(),
            within: Duration::from_secs(60),
            length: Duration::from_secs(152),
            reading_from: 90,
            apdex: ApdexThresholds {
                satisfied: Duration::from_millis(500),
                tolerated: Duration::from_secs(2),
            },
            target: ApdexGoal {
                apdex: 0.7,
                max_error: 0.01,
                p95_max: None,
            },
        }
    }

    fn constant(s: u64) -> Think {
        Think::Constant {
            time: Duration::from_secs(s),
        }
    }

    /// One student alone: each step takes its own time, every phase
    /// satisfied; the steps end where their times and thinks put them.
    #[test]
    fn a_lone_student_takes_what_a_request_took_alone() {
        let m = model(1.0, 0.2, constant(30));
        let lesson = m.simulate(1, 7);
        let arrival = Lesson::new(1, m.within, m.length, 7).unwrap().arrivals[0];
        let a = arrival.as_secs_f64();
        // Steps end at a + 0.2, a + 30.4, a + 60.6, ... within 152 s.
        let ends: Vec<f64> = (0..6)
            .map(|k| a + 0.2 * f64::from(k + 1) + 30.0 * f64::from(k))
            .filter(|&e| e <= 152.0)
            .collect();
        let arrival_pages = ends.iter().filter(|&&e| e < 90.0).count() as u64;
        assert_eq!(lesson.phases[0].pages, arrival_pages);
        assert_eq!(lesson.phases[1].pages, ends.len() as u64 - arrival_pages);
        assert_eq!(lesson.phases[0].apdex, Some(1.0));
        assert!((lesson.phases[0].p95_s.unwrap() - 0.2).abs() < 1e-9);
        assert!(lesson.met());
    }

    /// A server that does one request's work at a time: n requests that
    /// come together end one after another, the last at n times the work.
    #[test]
    fn requests_together_share_the_server() {
        let mut m = model(1.0, 0.1, constant(1000));
        m.within = Duration::from_nanos(1);
        m.length = Duration::from_secs(10);
        m.reading_from = 5;
        let lesson = m.simulate(10, 1);
        // Ten requests of 0.1 s shared: all end at 1.0 s (processor
        // sharing), each took 1.0 s.
        assert_eq!(lesson.phases[0].pages, 10);
        assert!((lesson.phases[0].p95_s.unwrap() - 1.0).abs() < 1e-6);
        // Twice the parallelism: half the time.
        m.parallel = 2.0;
        let lesson = m.simulate(10, 1);
        assert!((lesson.phases[0].p95_s.unwrap() - 0.5).abs() < 1e-6);
    }

    /// A page's resources go out once its document came, and the page
    /// ends with the last of them.
    #[test]
    fn a_page_ends_with_its_last_resource() {
        let mut m = model(4.0, 0.1, constant(1000));
        m.steps[0].then_s = vec![0.05, 0.3];
        let lesson = m.simulate(1, 3);
        assert!((lesson.phases[0].p95_s.unwrap() - 0.4).abs() < 1e-9);
    }

    /// The answer is where the burst's queue breaks the target: the
    /// server does 10 steps a second (0.1 s each, one at a time); students
    /// arriving within 60 s take a step, then one every 40 s, so from 40 s
    /// to 60 s each second brings 2/60 of a step a student: near 300
    /// students the server is full. The answer lies below, and twice it
    /// breaks.
    #[test]
    fn the_answer_is_below_the_servers_rate_and_more_break_it() {
        let m = model(1.0, 0.1, constant(40));
        let answer = m.answer(1, 3, MOST_MODELLED);
        assert!(answer.students > 100 && answer.students < 300, "{answer:?}");
        assert!(answer.at.unwrap().met());
        assert!(!answer.above.unwrap().met());
        assert!(!answer.capped);
        assert!(!m.lessons(answer.students * 2, 1, 3).0);
        // A server twice as fast takes about twice the students.
        let faster = model(2.0, 0.1, constant(40)).answer(1, 3, MOST_MODELLED);
        let ratio = f64::from(faster.students) / f64::from(answer.students);
        assert!((1.6..2.4).contains(&ratio), "{ratio}");
    }

    /// A server that slows as requests pile up: full speed up to its
    /// fullest level, then along the points; a lesson on it takes fewer
    /// students.
    #[test]
    fn a_server_that_slows_in_a_crowd_takes_fewer() {
        let slowing = Slowing {
            from: 2.0,
            points: vec![(4.0, 0.9), (32.0, 0.6)],
        };
        assert_eq!(slowing.speed(1.0), 1.0);
        assert_eq!(slowing.speed(2.0), 1.0);
        assert!((slowing.speed(3.0) - 0.95).abs() < 1e-12);
        assert!((slowing.speed(18.0) - 0.75).abs() < 1e-12);
        assert_eq!(slowing.speed(500.0), 0.6);
        assert_eq!(Slowing::default().speed(100.0), 1.0);
        let m = model(1.0, 0.1, constant(40));
        let mut slow = m.clone();
        slow.slowing = slowing;
        let (fast, slowed) = (m.answer(1, 3, 2000), slow.answer(1, 3, 2000));
        assert!(slowed.students < fast.students, "{slowed:?} {fast:?}");
    }

    /// A cap the target holds at says so; a server too slow for one
    /// student answers none.
    #[test]
    fn edges_say_so() {
        let m = model(1.0, 0.001, constant(30));
        let capped = m.answer(1, 1, 50);
        assert_eq!((capped.students, capped.capped), (50, true));
        let slow = model(1.0, 5.0, constant(30)).answer(1, 1, 50);
        assert_eq!(slow.students, 0);
        assert!(slow.at.is_none());
    }
}
