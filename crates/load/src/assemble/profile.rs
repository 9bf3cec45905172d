//! The run's profile from the spec (over a scenario file's own), and how it
//! is said in the line before the run.

use crate::spec::ProfileSpec;
use headroom_journey::lesson::{Lesson, UserSession};
use headroom_journey::profile::{Profile, Think};
use headroom_journey::scenario::{ScenarioProfile, StageKind};
use headroom_journey::shard::Shard;
use headroom_units::quantity::{count, Rate};
use std::time::Duration;

/// A run's length when nothing else says.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);
/// Most VUs of the open model when neither the file nor the spec says.
const DEFAULT_MAX_VUS: u32 = 1000;
/// Users of a URL's closed run when the spec does not say.
const DEFAULT_URL_USERS: u32 = 10;

/// A URL's profile: open with a rate, else closed.
pub(super) fn url_profile(spec: &ProfileSpec) -> Result<Profile, String> {
    if spec.session.is_some() || spec.students.is_some() || spec.arrive_within.is_some() {
        return Err("sessions and lessons are made of users who log in and keep cookies: they need a scenario (headroom run FILE --session ... / --students ...), not a URL".into());
    }
    Ok(match spec.rate {
        Some(rate) => Profile::Open {
            rate,
            max_vus: spec.max_vus.unwrap_or(DEFAULT_MAX_VUS),
            duration: spec.duration.unwrap_or(DEFAULT_DURATION),
            session: None,
        },
        None => {
            let duration = match (spec.duration, spec.requests) {
                (Some(d), _) => Some(d),
                (None, Some(_)) => None,
                (None, None) => Some(DEFAULT_DURATION),
            };
            let ramp_up = spec.ramp_up.unwrap_or_default();
            check_ramp_up(ramp_up, duration)?;
            Profile::Closed {
                users: spec.users.unwrap_or(DEFAULT_URL_USERS),
                ramp_up,
                duration,
                requests: spec.requests,
            }
        }
    })
}

/// A scenario's profile: the file's, with the spec's settings on top; and
/// the iterations per user of a closed run. A lesson's arrivals are drawn
/// from `seed`, once this shard (`None`: the whole run) may open a file
/// per student it runs.
pub(super) fn scenario_profile(
    spec: &ProfileSpec,
    file: &ScenarioProfile,
    seed: u64,
    shard: Option<Shard>,
) -> Result<(Profile, Option<u64>), String> {
    let closed_given = spec.users.is_some() || spec.iterations.is_some();
    if let Some(lesson) = lesson(spec, file, seed, shard)? {
        return Ok((Profile::Lesson(lesson), None));
    }
    // A closed model given on the command line replaces the file's open
    // one, its session with it.
    let session = spec
        .session
        .or(if closed_given { None } else { file.session });
    if session.is_some() && (closed_given || spec.rate.or(file.rate).is_none()) {
        return Err(format!(
            "session: {} is how long each arriving user of the open model stays; this run has no arrival rate (a closed model's users stay to the end): give --rate (or rate: in the profile), or leave the session out",
            session.unwrap_or(headroom_journey::lesson::UserSession::Once)
        ));
    }
    let profile_given =
        closed_given || spec.rate.is_some() || spec.duration.is_some() || spec.ramp_up.is_some();
    if let (Some((stages, kind)), false) = (&file.stages, profile_given) {
        let profile = match kind {
            StageKind::Users => Profile::RampingUsers {
                stages: stages.clone(),
            },
            StageKind::Rate => Profile::RampingRate {
                stages: stages.clone(),
                max_vus: spec.max_vus.or(file.max_vus).unwrap_or(DEFAULT_MAX_VUS),
            },
        };
        return Ok((profile, None));
    }
    let rate = spec.rate.or(if closed_given { None } else { file.rate });
    if let Some(rate) = rate {
        let max_vus = spec.max_vus.or(file.max_vus).unwrap_or(DEFAULT_MAX_VUS);
        let duration = spec.duration.or(file.duration).unwrap_or(DEFAULT_DURATION);
        return Ok((
            Profile::Open {
                rate,
                max_vus,
                duration,
                session,
            },
            None,
        ));
    }
    if spec.max_vus.is_some() {
        return Err("--max-vus bounds the open model's users (arrivals at --rate, or a scenario's rate: or stages: of rates); this run is closed (a fixed number of users), so it would not be used: leave it out, or give --rate".into());
    }
    let users = spec.users.or(file.users).unwrap_or(1);
    let ramp_up = spec.ramp_up.or(file.ramp_up).unwrap_or_default();
    let iterations = spec.iterations.or(if spec.duration.is_some() {
        None
    } else {
        file.iterations
    });
    let duration = spec.duration.or(file.duration).or(if iterations.is_some() {
        None
    } else {
        Some(DEFAULT_DURATION)
    });
    check_ramp_up(ramp_up, duration)?;
    Ok((
        Profile::Closed {
            users,
            ramp_up,
            duration,
            requests: None,
        },
        iterations,
    ))
}

/// The lesson the spec's `--students` or the file's `model: lesson` asks
/// for, if any (the spec's closed or open settings replace the file's lesson).
/// The students this shard runs must be able to open their connections
/// before their arrivals are drawn (16 bytes a student, on every shard).
fn lesson(
    spec: &ProfileSpec,
    file: &ScenarioProfile,
    seed: u64,
    shard: Option<Shard>,
) -> Result<Option<Lesson>, String> {
    let other_model = spec.users.is_some() || spec.iterations.is_some() || spec.rate.is_some();
    let flags = spec.students.is_some() || spec.arrive_within.is_some();
    if !flags && (file.students.is_none() || other_model) {
        return Ok(None);
    }
    if other_model || spec.ramp_up.is_some() || spec.max_vus.is_some() || spec.session.is_some() {
        return Err("--students and --arrive-within make a lesson start (each student loops the journey from its arrival to the end); they do not go with --users, --iterations, --rate, --ramp-up, --max-vus or --session".into());
    }
    let students = spec.students.or(file.students).ok_or(
        "--arrive-within needs --students N: how many students arrive (e.g. --students 30 --arrive-within 60s -d 10m)",
    )?;
    let within = spec.arrive_within.or(file.arrive_within).ok_or(
        "--students needs --arrive-within: the time within which they all arrive (e.g. --arrive-within 60s)",
    )?;
    let duration = spec.duration.or(file.duration).unwrap_or(DEFAULT_DURATION);
    let here = shard.map_or(u64::from(students), |s| s.share(u64::from(students)));
    super::parts::ensure_file_limit(here + 64).map_err(|e| e.to_string())?;
    Lesson::new(students, within, duration, seed).map(Some)
}

/// A ramp-up longer than the run would leave users that never start.
pub fn check_ramp_up(ramp_up: Duration, duration: Option<Duration>) -> Result<(), String> {
    if let Some(d) = duration {
        if ramp_up > d {
            return Err(format!(
                "--ramp-up ({} s) is longer than the run (-d {} s): some users would never start. The duration includes the ramp-up",
                ramp_up.as_secs_f64(),
                d.as_secs_f64()
            ));
        }
    }
    Ok(())
}

/// "20 users, ramp-up 2s, 10s, ..." for the line printed before a run.
pub fn describe_profile(profile: &Profile, think: &Think, cap: Option<Rate>) -> String {
    match profile {
        Profile::Closed {
            users,
            ramp_up,
            duration,
            requests,
        } => {
            let mut text = count(*users as usize, "user", "users");
            if !ramp_up.is_zero() {
                text += &format!(", ramp-up {}s", ramp_up.as_secs_f64());
            }
            if let Some(n) = requests {
                text += &format!(", {}", count(*n as usize, "request", "requests"));
            }
            if let Some(d) = duration {
                text += &format!(", {}s", d.as_secs_f64());
            }
            if let Some(cap) = cap {
                text += &format!(", capped at {cap}");
            }
            if *think != Think::None {
                text += &format!(", think time {:.2}s on average", think.mean().as_secs_f64());
            }
            text
        }
        Profile::Open {
            rate,
            max_vus,
            duration,
            session,
        } => {
            let users = match session {
                None => String::new(),
                Some(UserSession::Once) => {
                    ", each arrival a new user who runs the journey once".into()
                }
                Some(UserSession::For(length)) => {
                    let at_once = rate.per_second * length.as_secs_f64();
                    let mut text = format!(
                        ", each arrival a new user for {} (about {at_once:.0} users at once",
                        humantime::format_duration(*length),
                    );
                    if at_once > f64::from(*max_vus) {
                        text += &format!(
                            ", more than the {max_vus} VUs allowed: arrivals will wait for a VU; raise --max-vus"
                        );
                    }
                    text + ")"
                }
            };
            format!(
                "open model: {rate} for {}s (up to {max_vus} VUs){users}",
                duration.as_secs_f64()
            )
        }
        Profile::Lesson(lesson) => describe_lesson(lesson, think),
        Profile::RampingUsers { stages } => format!(
            "{} over {}s, up to {}{}",
            count(stages.0.len(), "stage", "stages"),
            stages.total().as_secs_f64(),
            count(profile.population() as usize, "user", "users"),
            cap.map(|c| format!(", capped at {c}")).unwrap_or_default()
        ),
        Profile::RampingRate { stages, max_vus } => format!(
            "open model in {} over {}s, up to {}/s (up to {max_vus} VUs)",
            count(stages.0.len(), "stage", "stages"),
            stages.total().as_secs_f64(),
            stages.peak()
        ),
    }
}

/// "30 students arrive within 60 s (seed 1), then read until 10m".
fn describe_lesson(lesson: &Lesson, think: &Think) -> String {
    let mut text = format!(
        "lesson: {} arrive within {} s (seed {}), then read until {}",
        count(lesson.students as usize, "student", "students"),
        lesson.arrive_within.as_secs_f64(),
        lesson.seed,
        humantime::format_duration(lesson.duration)
    );
    if *think != Think::None {
        text += &format!(", think time {:.2}s on average", think.mean().as_secs_f64());
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_journey::scenario::parse::parse_str;
    use headroom_journey::scenario::ScenarioProfile;
    use std::path::Path;

    fn file(profile: &str) -> ScenarioProfile {
        let text = format!(
            "name: t\ndefaults:\n  base_url: http://127.0.0.1:9\nprofile:\n{profile}\nsteps:\n  - label: a\n    path: /\n"
        );
        parse_str(&text, Path::new("t.yaml"), None).unwrap().profile
    }

    #[test]
    fn a_lesson_comes_from_the_file_or_the_flags() {
        let lesson = file("  model: lesson\n  students: 30\n  arrive_within: 60s\n  duration: 10m");
        let (profile, _) = scenario_profile(&ProfileSpec::default(), &lesson, 1, None).unwrap();
        let Profile::Lesson(l) = &profile else {
            panic!("{profile:?}")
        };
        assert_eq!(
            (l.students, l.arrive_within.as_secs(), l.duration.as_secs()),
            (30, 60, 600)
        );
        assert_eq!(
            describe_profile(&profile, &Think::None, None),
            "lesson: 30 students arrive within 60 s (seed 1), then read until 10m"
        );
        // -c replaces the file's lesson; --ramp-up does not go with it.
        let users = ProfileSpec {
            users: Some(3),
            ..Default::default()
        };
        let (profile, _) = scenario_profile(&users, &lesson, 1, None).unwrap();
        assert!(
            matches!(profile, Profile::Closed { users: 3, .. }),
            "{profile:?}"
        );
        let ramp = ProfileSpec {
            ramp_up: Some(Duration::from_secs(5)),
            ..Default::default()
        };
        let e = scenario_profile(&ramp, &lesson, 1, None).unwrap_err();
        assert!(e.contains("--ramp-up"), "{e}");
        // Flags on a closed file.
        let closed = file("  users: 2");
        let flags = ProfileSpec {
            students: Some(5),
            arrive_within: Some(Duration::from_secs(10)),
            duration: Some(Duration::from_secs(20)),
            ..Default::default()
        };
        let (profile, _) = scenario_profile(&flags, &closed, 7, None).unwrap();
        assert_eq!(profile.population(), 5);
        let e = scenario_profile(
            &ProfileSpec {
                arrive_within: Some(Duration::from_secs(10)),
                ..Default::default()
            },
            &closed,
            1,
            None,
        )
        .unwrap_err();
        assert!(e.contains("--arrive-within needs --students"), "{e}");
    }

    #[test]
    fn a_session_needs_arrivals() {
        let open = file("  rate: 2/s\n  session: once");
        let (profile, _) = scenario_profile(&ProfileSpec::default(), &open, 1, None).unwrap();
        assert_eq!(profile.session(), Some(UserSession::Once));
        // -c replaces the open model, its session with it.
        let users = ProfileSpec {
            users: Some(3),
            ..Default::default()
        };
        let (profile, _) = scenario_profile(&users, &open, 1, None).unwrap();
        assert_eq!(profile.session(), None);
        // --session on a closed file is refused, naming the rate it lacks.
        let closed = file("  users: 2");
        let session = ProfileSpec {
            session: Some(UserSession::For(Duration::from_secs(60))),
            ..Default::default()
        };
        let e = scenario_profile(&session, &closed, 1, None).unwrap_err();
        assert!(
            e.contains("session: 1m is how long") && e.contains("--rate"),
            "{e}"
        );
        assert!(url_profile(&session)
            .unwrap_err()
            .contains("need a scenario"));
        // Users at once beyond max_vus: the line before the run says so.
        let busy = file("  rate: 2/s\n  session: 10m\n  max_vus: 100");
        let (profile, _) = scenario_profile(&ProfileSpec::default(), &busy, 1, None).unwrap();
        let said = describe_profile(&profile, &Think::None, None);
        assert!(
            said.ends_with("each arrival a new user for 10m (about 1200 users at once, more than the 100 VUs allowed: arrivals will wait for a VU; raise --max-vus)"),
            "{said}"
        );
    }
}
