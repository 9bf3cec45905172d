//! The ladder: which user levels to run, in what order, and the
//! capacity they show. The plain ladder climbs in equal steps until the target is
//! broken at two consecutive levels (or the maximum is reached); then the
//! interval between the last good level and the first bad one above it is
//! bisected down to the resolution. The aimed ladder climbs by doubling
//! until it knows the throughput ceiling (throughput stops growing with the
//! users, or a resource's utilization tells it), aims at the users Little's
//! law gives for that ceiling, and bisects where the Apdex line crosses the
//! target. The capacity is the highest good level. Also Little's law
//! both ways ([`users_for`], [`rps_for`]) and what a repetition of the
//! deciding levels supports ([`repetition_capacity`]).

use headroom_analysis::spread;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ladder {
    pub start: u32,
    pub step: u32,
    pub max: u32,
    /// Bisection stops when good and bad levels are this close.
    pub resolution: u32,
}

/// What the aimed ladder needs to know of the system: think time per
/// request, the Apdex T and the target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aim {
    pub think: Duration,
    pub apdex_t: Duration,
    pub target_apdex: f64,
}

/// A level's figures, for the aimed ladder.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LevelFigures {
    pub rps: f64,
    pub mean_response: Duration,
    pub apdex: Option<f64>,
    /// The busiest monitored resource's utilization, 0..1 (CPU, a core,
    /// disk), when monitored.
    pub utilization: Option<f64>,
    /// The think its users took per request, when it was measured.
    pub think: Option<Duration>,
    /// The Apdex its verdict turned on, when not the level's: a lesson's
    /// worst phase's.
    pub judged_apdex: Option<f64>,
}

/// Throughput that grows by less than this share of the users' growth has
/// stopped growing: the level is past the knee.
const FLAT: f64 = 0.6;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    Climbing,
    Bisecting { good: u32, bad: u32 },
    Done,
}

#[derive(Debug, Clone)]
pub struct Search {
    ladder: Ladder,
    /// Levels run so far, in order, with whether they met the target.
    levels: Vec<(u32, bool)>,
    phase: Phase,
    /// Measurements of each deciding level (the last met, the first
    /// broken); a level is met when most of its measurements met.
    confirm: u32,
    /// A level meets the target only when every measurement of it did (a
    /// lesson start: each lesson must go well, not most).
    unanimous: bool,
    /// The Apdex asked for, when a level's measurements must also meet it
    /// evenly ([`Search::even`]).
    even: Option<f64>,
    /// The aimed ladder (`None`: the plain one).
    aim: Option<Aim>,
    figures: Vec<(u32, LevelFigures)>,
    /// The verdicts of the bisection's cuts, in order.
    cuts: Vec<bool>,
    /// Why each level run so far was chosen, in the order run.
    reasons: Vec<String>,
    /// The lesson model's answer and why: the first level of a modelled
    /// search ([`Search::modelled`]).
    modelled: Option<(u32, String)>,
}

impl Search {
    pub fn new(ladder: Ladder) -> Search {
        let ladder = Ladder {
            start: ladder.start.max(1),
            step: ladder.step.max(1),
            max: ladder.max.max(ladder.start.max(1)),
            resolution: ladder.resolution.max(1),
        };
        Search {
            ladder,
            levels: Vec::new(),
            phase: Phase::Climbing,
            confirm: 1,
            unanimous: false,
            even: None,
            aim: None,
            figures: Vec::new(),
            cuts: Vec::new(),
            reasons: Vec::new(),
            modelled: None,
        }
    }

    /// A search aimed by a model: its first level is the model's answer
    /// (`why` says it); after it met, a ninth above (where the model says
    /// the target breaks), then ×1.25, then ×2 while levels meet; after it
    /// broke, a tenth below twice, ×0.75, then halving while levels break;
    /// then it halves the gap between the last met and the first broken
    /// level until it is at most a tenth of the broken one (or
    /// `resolution`), down to one student.
    pub fn modelled(mut self, first: u32, why: String) -> Search {
        self.modelled = Some((first.clamp(1, self.ladder.max), why));
        self
    }

    /// How close the last met and the first broken level (`bad`) must
    /// come: `resolution`, or for a modelled search a tenth of `bad` (the
    /// answer is then within 10% of where the target broke).
    fn resolution_at(&self, bad: u32) -> u32 {
        match self.modelled {
            Some(_) => self.ladder.resolution.max(bad.div_ceil(10)),
            None => self.ladder.resolution,
        }
    }

    /// The aimed ladder: doubling, then Little's law, then the Apdex line.
    pub fn aimed(mut self, aim: Aim) -> Search {
        self.aim = Some(aim);
        self
    }

    /// The throughput ceiling, once known: the highest throughput when a
    /// later level's throughput stopped growing with its users, or the
    /// throughput a resource's utilization extrapolates to 100% (the
    /// utilization law, X = U / D), from the most loaded level at ≥ 30%.
    pub fn ceiling(&self) -> Option<f64> {
        let mut by_users = self.figures.clone();
        by_users.sort_by_key(|f| f.0);
        let highest = by_users.iter().map(|f| f.1.rps).fold(0.0, f64::max);
        let flattened = by_users.windows(2).any(|w| {
            let (a, b) = (&w[0], &w[1]);
            a.1.rps > 0.0
                && b.0 > a.0
                && (b.1.rps / a.1.rps - 1.0) < FLAT * (f64::from(b.0) / f64::from(a.0) - 1.0)
        });
        if flattened && highest > 0.0 {
            return Some(highest);
        }
        by_users.iter().rev().find_map(|(_, f)| {
            f.utilization
                .filter(|u| *u >= 0.3)
                .map(|u| f.rps / u.min(1.0))
        })
    }

    /// The users where the aimed ladder expects the target to break:
    /// Little's law at the ceiling, N = X_max × (R + Z), with R the response
    /// time at which the Apdex crosses its target (taken as T until levels
    /// tell better: the largest mean response of a met level, when above T).
    pub fn knee_estimate(&self) -> Option<f64> {
        let aim = self.aim?;
        let ceiling = self.ceiling()?;
        let met_response = self
            .figures
            .iter()
            .filter(|(u, _)| self.judged(*u) == Some(true))
            .map(|(_, f)| f.mean_response)
            .max()
            .unwrap_or_default();
        let response = aim.apdex_t.max(met_response);
        Some(users_for(ceiling, response, self.think(&aim)))
    }

    /// The think time per request the aims use: what the levels' users
    /// took (their mean), once measured, else the planned one (a scenario's
    /// `if:` steps may be taken far less often than planned).
    fn think(&self, aim: &Aim) -> Duration {
        let taken: Vec<Duration> = self.figures.iter().filter_map(|(_, f)| f.think).collect();
        if taken.is_empty() {
            aim.think
        } else {
            taken.iter().sum::<Duration>() / taken.len() as u32
        }
    }

    /// The next level of the aimed climb above `last` (all met so far),
    /// and why.
    fn aimed_climb(&self, last: u32) -> (u32, String) {
        let step = self.ladder.step;
        let lowest = last.saturating_add(step);
        let doubled = last.saturating_mul(2).max(lowest);
        // Doubling adds less than --step below it: the step is the least.
        let by_step = lowest > last.saturating_mul(2);
        let doubling = if by_step {
            format!("+{step} (--step, more than doubling)")
        } else {
            "×2".to_string()
        };
        let (next, why) = match self.knee_estimate() {
            // Aim just past the estimate, so that it brackets the answer.
            Some(knee) if knee.is_finite() && knee > f64::from(last) * 1.1 => {
                let aim = (knee * 1.1).ceil() as u32;
                let next = aim.clamp(lowest, doubled);
                let why = if aim > doubled {
                    if by_step {
                        format!("{doubling} toward the knee Little's law puts at {knee:.0}")
                    } else {
                        format!("×2: at most doubling toward the knee Little's law puts at {knee:.0}")
                    }
                } else if aim < lowest {
                    format!("+{step} (--step): just past the knee Little's law puts at {knee:.0}")
                } else {
                    format!("just past the knee Little's law puts at {knee:.0} (×1.1)")
                };
                (next, why)
            }
            // Met at (or beyond) the estimate: the response time grows
            // here, and the break is near.
            Some(knee) if knee.is_finite() => {
                let quarter = (f64::from(last) * 1.25).ceil() as u32;
                (
                    quarter.clamp(lowest, doubled),
                    format!(
                        "{}: met at or past the knee Little's law puts at {knee:.0}, so the break is near",
                        if quarter < lowest {
                            format!("+{step} (--step)")
                        } else {
                            "×1.25".to_string()
                        }
                    ),
                )
            }
            _ => (
                doubled,
                format!("{doubling}: climbing until the throughput stops growing or a resource nears 100%"),
            ),
        };
        if next > self.ladder.max {
            (self.ladder.max, "--max".to_string())
        } else {
            (next, why)
        }
    }

    /// Where to cut the bracket (good, bad): where the target is expected
    /// to break. First Little's law at the ceiling with the response time
    /// T (a server whose response time is steady breaks its Apdex there);
    /// then the response time where the line through the two levels'
    /// (response, Apdex) crosses the target, through Little's law (beyond
    /// the knee the users grow with the response time); else where the
    /// line through their (users, Apdex) crosses it. Three cuts in a row
    /// that all met (or all broke) are followed by the middle, so that a
    /// biased aim cannot creep; so is a bracket the Apdex says nothing of
    /// (errors or the p95 broke the level).
    fn aimed_cut(&self, good: u32, bad: u32) -> (u32, String) {
        let middle = good + (bad - good) / 2;
        let halfway = |why: &str| {
            (
                middle,
                format!(
                    "halfway between {good} met and {bad} {}{why}",
                    self.broken(bad)
                ),
            )
        };
        let (Some(aim), Some(a_good), Some(a_bad)) = (self.aim, self.apdex(good), self.apdex(bad))
        else {
            return halfway("");
        };
        if good == 0 || a_bad >= aim.target_apdex || a_good < aim.target_apdex {
            return halfway(" (the Apdex does not cross the target between them)");
        }
        if let [.., a, b, c] = self.cuts.as_slice() {
            if a == b && b == c {
                return halfway(" (three cuts in a row on one side)");
            }
        }
        let inside = |x: &f64| *x >= f64::from(good) + 0.5 && *x < f64::from(bad) - 0.5;
        let ceiling = self.ceiling();
        let think = self.think(&aim);
        let at_t = ceiling.map(|c| users_for(c, aim.apdex_t, think));
        let by_response = match (ceiling, self.response(good), self.response(bad)) {
            (Some(ceiling), Some(r_good), Some(r_bad)) if r_bad > r_good => {
                let share = (a_good - aim.target_apdex) / (a_good - a_bad);
                let response = r_good + share * (r_bad - r_good);
                Some(ceiling * (response + think.as_secs_f64()))
            }
            _ => None,
        };
        // A cut keeps the resolution from either end: a guess that lands
        // next to a broken level again and again (680, 679, 676 after 757
        // broke, at a resolution of 20) teaches nothing.
        let span = bad - good;
        let margin = self.ladder.resolution;
        if 2 * margin >= span {
            return halfway("");
        }
        let aimed = at_t
            .filter(inside)
            .map(|x| (x, "Little's law's knee at the Apdex T"))
            .or(by_response
                .filter(inside)
                .map(|x| (x, "Little's law where the response time crosses the target")))
            .or_else(|| {
                crossing(good, a_good, bad, a_bad, aim.target_apdex)
                    .map(|x| (x, "where the Apdex line crosses the target"))
            });
        match aimed {
            Some((x, how)) => {
                let cut = (x.round() as u32).clamp(good + margin, bad - margin);
                (
                    cut,
                    format!("between {good} met and {bad} {}: {how}", self.broken(bad)),
                )
            }
            None => halfway(""),
        }
    }

    /// The mean of `pick` over a level's measurements that have it.
    fn mean_of(&self, users: u32, pick: fn(&LevelFigures) -> Option<f64>) -> Option<f64> {
        let values: Vec<f64> = self
            .figures
            .iter()
            .filter(|f| f.0 == users)
            .filter_map(|f| pick(&f.1))
            .collect();
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    }

    fn apdex(&self, users: u32) -> Option<f64> {
        self.mean_of(users, |f| f.apdex)
    }

    /// The mean response time, seconds.
    fn response(&self, users: u32) -> Option<f64> {
        self.mean_of(users, |f| Some(f.mean_response.as_secs_f64()))
    }

    /// Levels whose verdicts contradict each other: (broken, met) with the
    /// broken level below the met one. A noisy system, not a capacity.
    pub fn inversions(&self) -> Vec<(u32, u32)> {
        let tried = self.tried();
        let mut out = Vec::new();
        for &low in &tried {
            if self.judged(low) != Some(false) {
                continue;
            }
            if let Some(&high) = tried
                .iter()
                .filter(|&&u| u > low && self.judged(u) == Some(true))
                .max()
            {
                out.push((low, high));
            }
        }
        out
    }

    /// Measures the deciding levels `n` times in all before the search
    /// ends; a decision the repetitions overturn sends the search on.
    pub fn confirming(mut self, n: u32) -> Search {
        self.confirm = n.max(1);
        self
    }

    /// A level meets the target only when every measurement of it did;
    /// a broken level, broken once, stays broken and is not measured
    /// again.
    pub fn unanimous(mut self) -> Search {
        self.unanimous = true;
        self
    }

    /// Of a unanimous search measuring each deciding level at least three
    /// times: a level whose measurements all met is met only when one more
    /// would too, by their spread (their judged Apdex's floor,
    /// [`headroom_analysis::spread`], at least `target_apdex`). Before its
    /// last measurement, a level whose floor no measurement still to come
    /// could lift to the target is already judged.
    pub fn even(mut self, target_apdex: f64) -> Search {
        self.even = Some(target_apdex);
        self
    }

    /// The Apdex each measurement of `users` was judged by, in order.
    fn judged_apdexes(&self, users: u32) -> Vec<f64> {
        self.figures
            .iter()
            .filter(|(u, _)| *u == users)
            .filter_map(|(_, f)| f.judged_apdex.or(f.apdex))
            .collect()
    }

    /// The floor of one more measurement of `users`, when every one so far
    /// met but their spread says the next may not ([`Search::even`]).
    pub fn uneven(&self, users: u32) -> Option<f64> {
        let target = self.even?;
        let needed = self.confirm as usize;
        if needed < spread::SPREAD_FROM {
            return None;
        }
        let (met, total) = self.measurements(users);
        let values = self.judged_apdexes(users);
        if total == 0 || met != total || values.len() != total as usize {
            return None;
        }
        let floor = if values.len() >= needed {
            spread::floor_of_next(&values)
        } else {
            spread::best_floor(&values, needed, 1.0)
        }?;
        (floor + 1e-9 < target).then_some(floor)
    }

    /// The levels whose measurements all met, unevenly, with the floor of
    /// one more ([`Search::uneven`]).
    pub fn uneven_levels(&self) -> Vec<(u32, f64)> {
        self.tried()
            .into_iter()
            .filter_map(|users| Some((users, self.uneven(users)?)))
            .collect()
    }

    /// Whether most measurements of `users` met the target (all of them,
    /// [`Search::unanimous`], and evenly, [`Search::even`]); `None`: not
    /// run. A tie is not met.
    pub fn judged(&self, users: u32) -> Option<bool> {
        let (met, total) = self.measurements(users);
        (total > 0).then_some(if self.unanimous {
            met == total && self.uneven(users).is_none()
        } else {
            met * 2 > total
        })
    }

    /// How a level judged broken is called: "broken", or "met unevenly".
    fn broken(&self, users: u32) -> &'static str {
        if self.uneven(users).is_some() {
            "met unevenly"
        } else {
            "broken"
        }
    }

    /// (met, measured) for the level `users`.
    pub fn measurements(&self, users: u32) -> (u32, u32) {
        self.levels
            .iter()
            .filter(|l| l.0 == users)
            .fold((0, 0), |(m, t), l| (m + u32::from(l.1), t + 1))
    }

    /// Distinct levels tried, ascending.
    fn tried(&self) -> Vec<u32> {
        let mut users: Vec<u32> = self.levels.iter().map(|l| l.0).collect();
        users.sort_unstable();
        users.dedup();
        users
    }

    pub fn levels(&self) -> &[(u32, bool)] {
        &self.levels
    }

    /// The next level to run, or `None` when the search is over.
    pub fn next(&self) -> Option<u32> {
        self.next_and_why().map(|(users, _)| users)
    }

    /// The next level to run and why it was chosen ("×2", "halfway between
    /// 40 met and 80 broken", ...), or `None` when the search is over.
    pub fn next_and_why(&self) -> Option<(u32, String)> {
        match self.phase {
            Phase::Done => {
                let good = self.highest_good();
                let bad = self.lowest_bad_above(good.unwrap_or(0));
                // Unanimous, the first broken level cannot be overturned.
                let bad = bad.filter(|_| !self.unanimous);
                good.into_iter()
                    .chain(bad)
                    .find(|&users| self.measurements(users).1 < self.confirm)
                    .map(|users| {
                        let n = self.measurements(users).1 + 1;
                        (
                            users,
                            format!(
                                "measurement {n} of {} (--confirm) of the {} level",
                                self.confirm,
                                if Some(users) == good {
                                    "last met"
                                } else {
                                    "first broken"
                                }
                            ),
                        )
                    })
            }
            Phase::Bisecting { good: 0, bad } if self.modelled.is_some() => {
                // A tenth below, twice; then longer steps (the model was
                // far too high).
                let broken = self.levels.iter().filter(|l| !l.1).count();
                let (below, why) = match broken {
                    0..=2 => (
                        bad.saturating_sub(self.resolution_at(bad).max(1)),
                        format!("a tenth below {bad} {}", self.broken(bad)),
                    ),
                    3 => (
                        (u64::from(bad) * 3 / 4) as u32,
                        format!("×0.75 below {bad} broken: the model's answer was high"),
                    ),
                    _ => (
                        bad / 2,
                        format!("half of {bad} broken: the model's answer was far too high"),
                    ),
                };
                Some((below.clamp(1, bad.saturating_sub(1).max(1)), why))
            }
            Phase::Bisecting { good, bad } => Some(if self.aim.is_some() {
                self.aimed_cut(good, bad)
            } else {
                (
                    good + (bad - good) / 2,
                    format!("halfway between {good} met and {bad} {}", self.broken(bad)),
                )
            }),
            Phase::Climbing => {
                Some(match (self.tried().last(), &self.modelled) {
                    (None, Some((first, why))) => (*first, why.clone()),
                    (Some(&users), Some(_)) => {
                        // Just above the model's answer first (a break there
                        // ends the search); past it, longer steps.
                        let (up, why) = match self.tried().len() {
                        1 => (
                            (u64::from(users) * 10 / 9) as u32,
                            format!("a ninth above {users} met, where the model's answer should break"),
                        ),
                        2 => (
                            (f64::from(users) * 1.25).ceil() as u32,
                            format!("×1.25 above {users} met: the model's answer was low"),
                        ),
                        _ => (
                            users.saturating_mul(2),
                            format!("×2 above {users} met: the model's answer was far too low"),
                        ),
                    };
                        (up.max(users + 1).min(self.ladder.max), why)
                    }
                    (None, None) => (self.ladder.start, "--start".to_string()),
                    (Some(&users), None) => self.plain_climb(users),
                })
            }
        }
    }

    /// The next level up after `users` met, the ladder aimed or plain.
    fn plain_climb(&self, users: u32) -> (u32, String) {
        match users {
            users if self.aim.is_some() => self.aimed_climb(users),
            users if users + self.ladder.step > self.ladder.max => {
                (self.ladder.max, "--max".to_string())
            }
            users => (
                users + self.ladder.step,
                format!("+{} (--step)", self.ladder.step),
            ),
        }
    }

    /// Why each level run so far was chosen, in the order run (as
    /// [`Search::drive`] ran them).
    pub fn reasons(&self) -> &[String] {
        &self.reasons
    }

    fn highest_good(&self) -> Option<u32> {
        self.tried()
            .into_iter()
            .filter(|&u| self.judged(u) == Some(true))
            .max()
    }

    /// The lowest bad level above `floor`.
    fn lowest_bad_above(&self, floor: u32) -> Option<u32> {
        self.tried()
            .into_iter()
            .filter(|&u| u > floor && self.judged(u) == Some(false))
            .min()
    }

    fn bisect_or_finish(&mut self) {
        let good = self.highest_good().unwrap_or(0);
        match self.lowest_bad_above(good) {
            Some(bad) if bad - good > self.resolution_at(bad) => {
                self.phase = Phase::Bisecting { good, bad };
            }
            // A modelled search with no met lesson goes down to one student.
            Some(bad) if self.modelled.is_some() && good == 0 && bad > 1 => {
                self.phase = Phase::Bisecting { good, bad };
            }
            // Repetitions overturned the last broken level: climb on.
            None if good > 0 && good < self.ladder.max && !self.levels.is_empty() => {
                self.phase = Phase::Climbing;
            }
            _ => self.phase = Phase::Done,
        }
    }

    /// Records the outcome of the level `next()` returned, with its
    /// figures (which the aimed ladder aims by).
    pub fn record_figures(&mut self, users: u32, good: bool, figures: LevelFigures) {
        self.figures.push((users, figures));
        self.record(users, good);
    }

    /// Records the outcome of the level `next()` returned.
    pub fn record(&mut self, users: u32, good: bool) {
        self.levels.push((users, good));
        match self.phase.clone() {
            // A repetition: its level's judgment may have turned.
            Phase::Done => self.bisect_or_finish(),
            Phase::Climbing => {
                let tried = self.tried();
                // The aimed ladder's steps are long: one broken level
                // above a met one is a bracket.
                let needed = if self.aim.is_some() || self.modelled.is_some() {
                    1
                } else {
                    2
                };
                let two_bad = tried.len() >= needed
                    && tried[tried.len() - needed..]
                        .iter()
                        .all(|&u| self.judged(u) == Some(false));
                if two_bad || users >= self.ladder.max {
                    self.bisect_or_finish();
                }
            }
            Phase::Bisecting { .. } => {
                self.cuts.push(good);
                self.bisect_or_finish()
            }
        }
    }

    /// The highest level that met the target (`None`: not even the lowest
    /// level tried).
    pub fn capacity(&self) -> Option<u32> {
        self.highest_good()
    }

    /// Whether the search ended at the ladder's maximum without breaking
    /// the target there (the capacity is at least the maximum).
    pub fn reached_max(&self) -> bool {
        self.tried()
            .into_iter()
            .any(|users| users >= self.ladder.max && self.judged(users) == Some(true))
    }

    /// Runs the search to its end: `measure(users, remaining)` measures one
    /// level (`remaining`: levels still to come at most, for an ETA) and
    /// says whether it met the target with its figures, or `None` to stop
    /// there (the user interrupted). `said` is told when a level's
    /// measurements turn out met unevenly ([`Search::even`]). Returns
    /// false when stopped.
    pub async fn drive<E, F, Fut>(&mut self, mut measure: F, said: impl Fn(&str)) -> Result<bool, E>
    where
        F: FnMut(u32, u32) -> Fut,
        Fut: std::future::Future<Output = Result<Option<(bool, LevelFigures)>, E>>,
    {
        while let Some((users, why)) = self.next_and_why() {
            match measure(users, self.remaining_estimate()).await? {
                Some((good, figures)) => {
                    self.reasons.push(why);
                    self.record_figures(users, good, figures);
                    if let Some(line) = self.said_unevenly(users) {
                        said(&line);
                    }
                }
                None => return Ok(false),
            }
        }
        Ok(true)
    }

    /// What a level whose measurements all met, unevenly, is told as.
    fn said_unevenly(&self, users: u32) -> Option<String> {
        let floor = self.uneven(users)?;
        let values = self.judged_apdexes(users);
        let (low, high) = spread::lowest_highest(&values);
        let target = self.even.unwrap_or(0.0);
        let n = values.len();
        Some(if n >= spread::SPREAD_FROM {
            format!(
                "{users}: its {n} measurements met (Apdex {low:.3} to {high:.3}), but by their spread one more may come to {:.3} (19 in 20 come to more), short of the {target:.2} asked; judged broken",
                floor.max(0.0),
            )
        } else {
            format!(
                "{users}: its {n} measurements met (Apdex {low:.3} to {high:.3}), but no more could show that 19 in 20 reach the {target:.2} asked; judged broken"
            )
        })
    }

    /// Levels still to come at most (for an ETA): the rest of the ladder
    /// plus a bisection of one step.
    pub fn remaining_estimate(&self) -> u32 {
        let bisection = (self.ladder.step as f64 / self.ladder.resolution as f64)
            .log2()
            .ceil()
            .max(0.0) as u32;
        match self.phase {
            Phase::Done => 0,
            Phase::Bisecting { good, bad } => ((bad - good) as f64 / self.ladder.resolution as f64)
                .log2()
                .ceil()
                .max(1.0) as u32,
            Phase::Climbing => {
                let at = self.levels.last().map_or(0, |l| l.0);
                let left = self.ladder.max.saturating_sub(at) / self.ladder.step;
                left.min(2) + bisection
            }
        }
    }
}

/// Where the Apdex line from (`low`, `apdex_low`) to (`high`, `apdex_high`)
/// crosses `target`; `None` when the line is flat.
pub fn crossing(low: u32, apdex_low: f64, high: u32, apdex_high: f64, target: f64) -> Option<f64> {
    let drop = apdex_low - apdex_high;
    (drop.abs() > 1e-9)
        .then(|| f64::from(low) + (apdex_low - target) / drop * f64::from(high - low))
}

/// One repetition of the deciding levels: the capacity `c` (last met) and
/// the knee `k` (first broken), whether each met the target this time and
/// its Apdex. Returns the capacity this repetition supports: between c and
/// k where the Apdex crosses the target when c met and k broke, k when
/// both met, below c (along the same line) when both broke, c otherwise.
pub fn repetition_capacity(
    c: u32,
    k: u32,
    met: (bool, bool),
    apdex: (Option<f64>, Option<f64>),
    target: f64,
) -> u32 {
    let line = match apdex {
        (Some(a_c), Some(a_k)) => crossing(c, a_c, k, a_k, target),
        _ => None,
    };
    match met {
        (true, false) => line
            .filter(|_| apdex.0.unwrap_or(0.0) + 1e-9 >= target && apdex.1.unwrap_or(1.0) < target)
            .map_or(c, |x| {
                (x.floor() as u32).clamp(c, k.saturating_sub(1).max(c))
            }),
        (true, true) => k,
        (false, false) => line
            .filter(|x| *x < f64::from(c))
            .map_or(c.saturating_sub(1), |x| x.max(0.0).floor() as u32),
        (false, true) => c,
    }
}

/// Little's law for a closed system: users = throughput × (response time +
/// think time). Returns the users that `rps` requests per second at that
/// response and think time correspond to.
pub fn users_for(rps: f64, response: Duration, think: Duration) -> f64 {
    rps * (response + think).as_secs_f64()
}

/// And back: the request rate `users` produce.
pub fn rps_for(users: f64, response: Duration, think: Duration) -> f64 {
    let cycle = (response + think).as_secs_f64();
    if cycle > 0.0 {
        users / cycle
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the search against a system whose true capacity is `capacity`.
    fn search(ladder: Ladder, capacity: u32) -> (Option<u32>, Vec<u32>) {
        let mut s = Search::new(ladder);
        let mut run = Vec::new();
        while let Some(users) = s.next() {
            run.push(users);
            s.record(users, users <= capacity);
            assert!(run.len() < 100, "{run:?}");
        }
        (s.capacity(), run)
    }

    const LADDER: Ladder = Ladder {
        start: 10,
        step: 10,
        max: 500,
        resolution: 2,
    };

    /// Runs the search against a noisy system: 43's measurements go as
    /// `at_43` says, then as the rest: every level up to 44 meets.
    fn noisy(mut s: Search, at_43: &[bool]) -> (Search, Vec<u32>) {
        let mut at_43 = at_43.to_vec();
        let mut run = Vec::new();
        while let Some(users) = s.next() {
            let good = if users == 43 && !at_43.is_empty() {
                at_43.remove(0)
            } else {
                users <= 44
            };
            run.push(users);
            s.record(users, good);
            assert!(run.len() < 100, "{run:?}");
        }
        (s, run)
    }

    #[test]
    fn confirmation_repeats_the_deciding_levels_and_can_overturn_them() {
        // 43 meets once, then fails twice; 42 always meets.
        let (s, run) = noisy(Search::new(LADDER).confirming(3), &[true, false, false]);
        // 43 was the capacity, until its repetitions broke it; then 42
        // (the last met) is repeated too.
        assert_eq!(s.capacity(), Some(42), "{run:?}");
        assert_eq!(s.measurements(42), (3, 3));
        assert_eq!(s.measurements(43), (1, 3));
        assert_eq!(s.judged(43), Some(false));
    }

    /// A lesson's levels are unanimous: 43 met once and broke once, so it
    /// is broken, and 42 (met three times of three) is the capacity; the
    /// first broken level is not measured again.
    /// A modelled lesson search: the first lesson at the model's answer,
    /// then a ninth above it (a break there ends the search), ×1.25, then
    /// doubling while the model was low; a tenth down twice, ×0.75, then
    /// halving while it was high; the answer lands within a tenth of where
    /// the target broke, and its level is measured three times.
    #[test]
    fn a_modelled_search_brackets_the_models_answer() {
        let ladder = Ladder {
            start: 10,
            step: 10,
            max: 100_000,
            resolution: 2,
        };
        let drive = |model: u32, capacity: u32| {
            let mut s = Search::new(ladder)
                .confirming(3)
                .unanimous()
                .modelled(model, "the model".into());
            let mut run = Vec::new();
            while let Some((users, why)) = s.next_and_why() {
                run.push((users, why));
                s.record(users, users <= capacity);
                assert!(run.len() < 30, "{run:?}");
            }
            let users: Vec<u32> = run.iter().map(|r| r.0).collect();
            (s.capacity(), users, run)
        };
        // The model right: 190 met, 211 broke, 190 twice more.
        let (answer, users, run) = drive(190, 200);
        assert_eq!(answer, Some(190));
        assert_eq!(users, [190, 211, 190, 190]);
        assert_eq!(run[0].1, "the model");
        assert!(run[1].1.starts_with("a ninth above 190 met"), "{run:?}");
        // The model high: a tenth down at a time.
        let (answer, users, _) = drive(250, 200);
        assert_eq!(answer, Some(189));
        assert_eq!(users, [250, 225, 202, 151, 176, 189, 189, 189]);
        // Far too low: the steps grow to doubling.
        let (answer, users, run) = drive(20, 200);
        assert_eq!(answer, Some(196), "{run:?}");
        assert_eq!(&users[..6], [20, 22, 28, 56, 112, 224]);
        // Far too high: down a tenth twice, then a quarter, then halving.
        let (answer, users, _) = drive(2000, 200);
        let answer = answer.unwrap();
        assert!((180..=200).contains(&answer), "{users:?}");
        assert_eq!(&users[..6], [2000, 1800, 1620, 1215, 607, 303]);
        // The model low: longer steps, then halving.
        let (answer, users, _) = drive(150, 200);
        let answer = answer.unwrap();
        assert!((180..=200).contains(&answer), "{users:?}");
        assert_eq!(users, [150, 166, 208, 187, 187, 187]);
        assert_eq!(users.iter().filter(|&&u| u == answer).count(), 3);
        // Not one student: the search goes down to one and stops.
        let (answer, users, _) = drive(3, 0);
        assert_eq!(answer, None, "{users:?}");
    }

    #[test]
    fn an_even_search_goes_below_lessons_that_met_unevenly() {
        let ladder = Ladder {
            start: 10,
            step: 10,
            max: 100_000,
            resolution: 2,
        };
        // The testbed at 4% of a core: the model said 388, which broke; 349
        // met at 0.781 and 0.954, which no third lesson lifts to a floor of
        // 0.70; 314 met evenly.
        let apdex = |users: u32, k: usize| match users {
            388.. => 0.49,
            349..=387 => [0.781, 0.954, 0.976][k],
            _ => [0.93, 0.95, 0.91][k],
        };
        let mut s = Search::new(ladder)
            .confirming(3)
            .unanimous()
            .even(0.70)
            .modelled(388, "the model".into());
        let mut run = Vec::new();
        while let Some((users, why)) = s.next_and_why() {
            let k = run.iter().filter(|r: &&(u32, String)| r.0 == users).count();
            let a = apdex(users, k);
            let figures = LevelFigures {
                apdex: Some(0.99),
                judged_apdex: Some(a),
                ..LevelFigures::default()
            };
            run.push((users, why));
            s.record_figures(users, a >= 0.70, figures);
            assert!(run.len() < 20, "{run:?}");
        }
        let users: Vec<u32> = run.iter().map(|r| r.0).collect();
        assert_eq!(users, [388, 349, 349, 314, 314, 314], "{run:?}");
        assert_eq!(run[3].1, "a tenth below 349 met unevenly");
        assert_eq!(s.capacity(), Some(314));
        assert_eq!(s.measurements(349), (2, 2));
        let uneven = s.uneven_levels();
        assert_eq!(uneven.len(), 1);
        assert_eq!(uneven[0].0, 349);
        assert!(uneven[0].1 < 0.70, "{uneven:?}");
        let said = s.said_unevenly(349).unwrap();
        assert!(
            said == "349: its 2 measurements met (Apdex 0.781 to 0.954), but no more could show that 19 in 20 reach the 0.70 asked; judged broken",
            "{said}"
        );
        assert_eq!(s.said_unevenly(314), None);
        // Without the rule, 349 met three times is the answer.
        let mut plain = Search::new(ladder)
            .confirming(3)
            .unanimous()
            .modelled(388, "the model".into());
        let mut ran = Vec::new();
        while let Some(users) = plain.next() {
            let k = ran.iter().filter(|&&u| u == users).count();
            ran.push(users);
            plain.record(users, apdex(users, k) >= 0.70);
        }
        assert_eq!(ran, [388, 349, 349, 349]);
        assert_eq!(plain.capacity(), Some(349));
        // Fewer than three measurements a level: the spread is not read.
        let mut twice = Search::new(ladder).confirming(2).unanimous().even(0.70);
        for a in [0.781, 0.954] {
            twice.record_figures(
                30,
                true,
                LevelFigures {
                    judged_apdex: Some(a),
                    ..LevelFigures::default()
                },
            );
        }
        assert_eq!(twice.uneven(30), None);
        assert_eq!(twice.judged(30), Some(true));
    }

    #[test]
    fn a_unanimous_search_needs_every_measurement_to_meet() {
        let (s, run) = noisy(
            Search::new(LADDER).confirming(3).unanimous(),
            &[true, true, false],
        );
        assert_eq!(s.capacity(), Some(42), "{run:?}");
        assert_eq!(s.measurements(42), (3, 3));
        assert_eq!(s.measurements(43), (2, 3));
        assert_eq!(s.judged(43), Some(false));
        assert_eq!(s.lowest_bad_above(42), Some(43));
        // Broken levels above were measured once each.
        let above: Vec<u32> = run.iter().copied().filter(|&u| u > 43).collect();
        for users in above {
            assert_eq!(s.measurements(users).1, 1, "{users} in {run:?}");
        }
    }

    #[test]
    fn a_repetition_estimates_the_crossing() {
        // 40 met at 0.95, 50 broke at 0.75: 0.85 is crossed at 45.
        assert_eq!(
            repetition_capacity(40, 50, (true, false), (Some(0.95), Some(0.75)), 0.85),
            45
        );
        assert_eq!(
            repetition_capacity(40, 50, (true, true), (Some(0.95), Some(0.9)), 0.85),
            50
        );
        // Both broke at 0.80 and 0.70: the line crosses 0.85 at 35.
        assert_eq!(
            repetition_capacity(40, 50, (false, false), (Some(0.80), Some(0.70)), 0.85),
            35
        );
        assert_eq!(
            repetition_capacity(40, 50, (false, true), (Some(0.80), Some(0.90)), 0.85),
            40
        );
        // Errors broke the knee while its Apdex met: no line to follow.
        assert_eq!(
            repetition_capacity(40, 50, (true, false), (Some(0.95), Some(0.9)), 0.85),
            40
        );
    }

    #[test]
    fn climbs_until_two_bad_levels_then_bisects() {
        let (capacity, run) = search(LADDER, 44);
        assert_eq!(run[..6], [10, 20, 30, 40, 50, 60]);
        // Between 40 (good) and 50 (bad): 45 bad, 42 good, 43 good; 43 and
        // 45 are within the resolution of 2.
        assert_eq!(run[6..], [45, 42, 43]);
        assert_eq!(capacity, Some(43));
    }

    #[test]
    fn a_single_bad_level_does_not_stop_the_climb() {
        let mut s = Search::new(LADDER);
        for (users, good) in [(10, true), (20, false), (30, true), (40, false)] {
            assert_eq!(s.next(), Some(users));
            s.record(users, good);
        }
        assert_eq!(s.next(), Some(50));
        s.record(50, false);
        // Two bad in a row (40, 50): bisect between 30 and 40.
        assert_eq!(s.next(), Some(35));
    }

    #[test]
    fn below_the_first_level_and_at_the_maximum() {
        let (capacity, run) = search(LADDER, 3);
        assert_eq!(capacity, Some(3), "{run:?}");
        assert_eq!(run[..2], [10, 20]);
        let (capacity, _) = search(LADDER, 0);
        assert_eq!(capacity, None);
        let small = Ladder {
            start: 10,
            step: 10,
            max: 30,
            resolution: 2,
        };
        let mut s = Search::new(small);
        while let Some(u) = s.next() {
            s.record(u, true);
        }
        assert_eq!(s.capacity(), Some(30));
        assert!(s.reached_max());
        assert_eq!(s.levels().len(), 3);
    }

    /// A closed system of `x_max` requests/s, 100 ms service, 1 s think:
    /// below the knee R = 0.1 s, beyond R = N / x_max − 1; the Apdex falls
    /// linearly from T = 150 ms to 0.5 at 4T.
    fn closed_system(users: u32, x_max: f64) -> (bool, LevelFigures) {
        let n = f64::from(users);
        let rps = (n / 1.1).min(x_max);
        let response = (n / x_max - 1.0).max(0.1);
        let apdex = if response <= 0.15 {
            1.0
        } else {
            (1.0 - 0.5 * (response - 0.15) / 0.45).max(0.0)
        };
        let figures = LevelFigures {
            rps,
            mean_response: Duration::from_secs_f64(response),
            apdex: Some(apdex),
            utilization: None,
            think: None,
            judged_apdex: None,
        };
        (apdex >= 0.85, figures)
    }

    const AIM: Aim = Aim {
        think: Duration::from_secs(1),
        apdex_t: Duration::from_millis(150),
        target_apdex: 0.85,
    };

    fn drive(mut s: Search, x_max: f64) -> (Option<u32>, Vec<u32>) {
        let mut run = Vec::new();
        while let Some(users) = s.next() {
            run.push(users);
            let (good, figures) = closed_system(users, x_max);
            s.record_figures(users, good, figures);
            assert!(run.len() < 100, "{run:?}");
        }
        (s.capacity(), run)
    }

    #[test]
    fn the_aimed_ladder_finds_the_plain_answer_in_fewer_levels() {
        let mut levels = (0, 0);
        for x_max in [20.0, 40.0, 90.0, 300.0] {
            // The Apdex crosses 0.85 at R = 0.285 s: N = x_max × 1.285.
            let truth = (x_max * 1.285_f64).floor() as u32;
            let (plain, plain_run) = drive(Search::new(LADDER), x_max);
            let (aimed, aimed_run) = drive(Search::new(LADDER).aimed(AIM), x_max);
            let (plain, aimed) = (plain.unwrap(), aimed.unwrap());
            assert!(plain.abs_diff(truth) <= 2, "{x_max}: {plain} {plain_run:?}");
            assert!(aimed.abs_diff(truth) <= 2, "{x_max}: {aimed} {aimed_run:?}");
            assert!(
                aimed_run.len() <= plain_run.len(),
                "{x_max}: aimed {aimed_run:?}, plain {plain_run:?}"
            );
            eprintln!("{x_max}: aimed {aimed_run:?}, plain {plain_run:?}");
            levels.0 += aimed_run.len();
            levels.1 += plain_run.len();
        }
        assert!(levels.0 * 2 < levels.1, "{levels:?}");
    }

    #[test]
    fn the_ceiling_comes_from_flat_throughput_or_utilization() {
        let mut s = Search::new(LADDER).aimed(AIM);
        let at = |rps: f64, utilization: Option<f64>| LevelFigures {
            rps,
            mean_response: Duration::from_millis(100),
            apdex: Some(1.0),
            utilization,
            think: None,
            judged_apdex: None,
        };
        s.record_figures(10, true, at(9.0, Some(0.1)));
        assert_eq!(s.ceiling(), None, "10% busy says little");
        s.record_figures(20, true, at(18.0, Some(0.45)));
        // 18 req/s at 45%: 40 req/s at 100%; Little's law at T: 46 users.
        assert_eq!(s.ceiling(), Some(40.0));
        assert!((s.knee_estimate().unwrap() - 46.0).abs() < 1e-9);
        assert_eq!(s.next(), Some(40), "at most doubling");
        s.record_figures(40, true, at(24.0, Some(0.6)));
        // 24 req/s for twice the users: flat; the ceiling is what was seen.
        assert_eq!(s.ceiling(), Some(24.0));
    }

    /// A scenario whose `if:` steps think 30 s but are seldom taken plans
    /// 7 s per request while its users take 1 s: once a level has measured
    /// that, the aims use it (at the ceiling of 40 req/s and T: 46 users,
    /// not 286).
    #[test]
    fn the_aims_use_the_think_the_users_took() {
        let planned = Aim {
            think: Duration::from_secs(7),
            ..AIM
        };
        let mut s = Search::new(LADDER).aimed(planned);
        let at = |rps: f64, utilization: f64| LevelFigures {
            rps,
            mean_response: Duration::from_millis(100),
            apdex: Some(1.0),
            utilization: Some(utilization),
            think: None,
            judged_apdex: None,
        };
        s.record_figures(10, true, at(9.0, 0.1));
        s.record_figures(20, true, at(18.0, 0.45));
        assert!((s.knee_estimate().unwrap() - 286.0).abs() < 1e-9);
        let mut s = Search::new(LADDER).aimed(planned);
        let taken = |f: LevelFigures| LevelFigures {
            think: Some(Duration::from_secs(1)),
            ..f
        };
        s.record_figures(10, true, taken(at(9.0, 0.1)));
        s.record_figures(20, true, taken(at(18.0, 0.45)));
        assert!((s.knee_estimate().unwrap() - 46.0).abs() < 1e-9);
    }

    #[test]
    fn edges_end_and_say_so() {
        // Met at --max: the answer is "at least" the maximum.
        let (capacity, run) = drive(Search::new(LADDER).aimed(AIM), 1000.0);
        assert_eq!(capacity, Some(500), "{run:?}");
        // Broken at --start: the search bisects below it and ends.
        let (capacity, run) = drive(Search::new(LADDER).aimed(AIM), 2.0);
        assert!(capacity.is_some_and(|c| c <= 3), "{capacity:?} {run:?}");
        assert_eq!(run[0], 10);
        // Alternating verdicts: either ladder ends; the plain one, which
        // climbs past a single broken level, names the inversions.
        for aimed in [false, true] {
            let mut s = Search::new(LADDER);
            if aimed {
                s = s.aimed(AIM);
            }
            let mut n = 0;
            while let Some(users) = s.next() {
                n += 1;
                assert!(n < 60, "{:?}", s.levels());
                let good = users != 20 && (aimed || users % 7 != 0);
                s.record_figures(users, good, closed_system(users, 40.0).1);
            }
            if !aimed {
                // 20, 70, 140, ... broke below 500, which met.
                let inversions = s.inversions();
                assert_eq!((inversions.len(), inversions[0]), (8, (20, 500)));
            }
        }
    }

    #[test]
    fn an_aimed_cut_keeps_the_resolution_from_either_end() {
        let at = |rps: f64, ms: u64, apdex: f64| LevelFigures {
            rps,
            mean_response: Duration::from_millis(ms),
            apdex: Some(apdex),
            utilization: None,
            think: None,
            judged_apdex: None,
        };
        let ladder = Ladder {
            resolution: 20,
            ..LADDER
        };
        // 605 met just above the target, 757 broke far below: the
        // crossing of the Apdex line is at 620, within 20 of 605.
        let mut s = Search::new(ladder).aimed(AIM);
        s.record_figures(320, true, at(1000.0, 300, 0.99));
        s.record_figures(605, true, at(1080.0, 560, 0.851));
        s.record_figures(757, false, at(1100.0, 700, 0.50));
        let cut = s.next().unwrap();
        assert!((625..=737).contains(&cut), "{cut}");
        // Within twice the resolution, the middle.
        let mut s = Search::new(ladder).aimed(AIM);
        s.record_figures(40, true, at(40.0, 100, 0.9));
        s.record_figures(75, false, at(40.0, 300, 0.5));
        assert_eq!(s.next(), Some(57));
    }

    #[test]
    fn littles_law_both_ways() {
        // 40 users, 0.5 s response, 1.5 s think: 20 requests/s.
        let (half, think) = (Duration::from_millis(500), Duration::from_millis(1500));
        assert_eq!(rps_for(40.0, half, think), 20.0);
        assert_eq!(users_for(20.0, half, think), 40.0);
        assert_eq!(rps_for(1.0, Duration::ZERO, Duration::ZERO), 0.0);
    }

    /// Levels grew ×1.25 a step where the docs said ×2, and nothing said
    /// why: every level carries the rule that chose it.
    #[test]
    fn every_level_says_why_it_was_chosen() {
        let ladder = Ladder {
            start: 10,
            step: 10,
            max: 100,
            resolution: 2,
        };
        let mut s = Search::new(ladder);
        let mut said = Vec::new();
        while let Some((users, why)) = s.next_and_why() {
            said.push(format!("{users}: {why}"));
            s.record(users, users <= 34);
        }
        assert_eq!(
            said[..6],
            [
                "10: --start",
                "20: +10 (--step)",
                "30: +10 (--step)",
                "40: +10 (--step)",
                "50: +10 (--step)",
                "35: halfway between 30 met and 40 broken",
            ],
            "{said:?}"
        );
        // The aimed ladder: doubling, then Little's law, then cuts.
        let mut s = Search::new(LADDER).aimed(AIM);
        let mut said = Vec::new();
        while let Some((users, why)) = s.next_and_why() {
            said.push(format!("{users}: {why}"));
            let (good, figures) = closed_system(users, 90.0);
            s.record_figures(users, good, figures);
        }
        eprintln!("{said:#?}");
        assert_eq!(said[0], "10: --start");
        assert!(
            said[1].starts_with("20: ×2: climbing until the throughput stops growing"),
            "{said:?}"
        );
        assert!(said.iter().any(|w| w.contains("Little's law")), "{said:?}");
        assert!(
            said.iter()
                .any(|w| w.contains(" met and ") && w.contains(" broken")),
            "{said:?}"
        );
        // Met at the knee estimate: ×1.25 steps, and why.
        let mut s = Search::new(LADDER).aimed(AIM);
        let at = |rps: f64| LevelFigures {
            rps,
            mean_response: Duration::from_millis(100),
            apdex: Some(1.0),
            utilization: None,
            think: None,
            judged_apdex: None,
        };
        s.record_figures(10, true, at(9.0));
        s.record_figures(20, true, at(18.0));
        s.record_figures(40, true, at(20.0));
        // Flat at 20 req/s: the knee at 20 × 1.15 s = 23 users, met at 40.
        let (users, why) = s.next_and_why().unwrap();
        assert_eq!(users, 50);
        assert_eq!(
            why,
            "×1.25: met at or past the knee Little's law puts at 23, so the break is near"
        );
        // A --step larger than the level: it says so.
        let mut s = Search::new(Ladder {
            start: 10,
            step: 30,
            max: 1000,
            resolution: 6,
        })
        .aimed(AIM);
        s.record_figures(10, true, at(9.0));
        assert_eq!(
            s.next_and_why().unwrap(),
            (
                40,
                "+30 (--step, more than doubling): climbing until the throughput stops growing or a resource nears 100%".to_string()
            )
        );
        // With --confirm, the repetitions say so.
        let mut s = Search::new(ladder).confirming(2);
        let mut said = Vec::new();
        while let Some((users, why)) = s.next_and_why() {
            said.push(format!("{users}: {why}"));
            s.record(users, users <= 34);
        }
        assert!(
            said.contains(&"33: measurement 2 of 2 (--confirm) of the last met level".to_string()),
            "{said:?}"
        );
    }
}
