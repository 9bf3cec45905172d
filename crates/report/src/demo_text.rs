//! The demo's answer in the words of its students: a model of how many
//! who read between pages the same server holds.

use headroom_bundle::capacity::CapacityResult;

/// A student's think time: tens of seconds reading a page.
const STUDENT_THINK: std::time::Duration = std::time::Duration::from_secs(30);

/// The demo's answer in students, as a model: its students do not read
/// between pages (so that the search takes seconds), real ones read about
/// 30 s; Little's law with the capacity's throughput (pages a second) and
/// response time says how many such students the same server holds.
pub fn in_students(result: &CapacityResult) -> String {
    let Some(little) = result
        .little
        .as_ref()
        .filter(|_| result.capacity.users.is_some())
    else {
        return "In students: no capacity was found, so none can be modelled.".into();
    };
    let students = two_figures(little.users_at_think(STUDENT_THINK).floor() as usize);
    format!(
        "In students (a model): a student reads a page for about {} s before the next click, so the same {:.0} pages a second at {:.2} s each keep about {} reading at once, once all are logged in (Little's law: {:.0} × ({:.2} + {}), to two figures); a class arriving together is far fewer, as the logins come in a burst: `headroom capacity --scenario class.yaml URL --arrive-within 60s` measures that (README, \"My class of 30\").",
        STUDENT_THINK.as_secs(),
        little.rps,
        little.mean_response_s,
        headroom_units::quantity::count(students, "student", "students"),
        little.rps,
        little.mean_response_s,
        STUDENT_THINK.as_secs(),
    )
}

/// Rounded down to two significant figures: a model's 18,005 is "about
/// 18,000", not a count to the student.
fn two_figures(n: usize) -> usize {
    let mut scale = 1;
    while n / scale >= 100 {
        scale *= 10;
    }
    n / scale * scale
}

#[cfg(test)]
mod tests {
    use super::two_figures;

    #[test]
    fn a_model_is_rounded_to_two_figures() {
        assert_eq!(two_figures(18_005), 18_000);
        assert_eq!(two_figures(99), 99);
        assert_eq!(two_figures(101), 100);
        assert_eq!(two_figures(1_999), 1_900);
        assert_eq!(two_figures(7), 7);
    }
}
