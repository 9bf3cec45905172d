//! The live line of a capacity search's level on the terminal.

use crate::live::live_line;
use headroom_capacity::search::LevelAt;
use headroom_load::run::Progress;

/// `level 3 (40 users, search ETA ~95 s): ...`, the level's second as the
/// live line shows a run's.
pub fn level_live_line(at: &LevelAt, users_are: &str, p: &Progress) -> String {
    format!(
        "level {} ({} {}, search ETA ~{:.0} s): {}",
        at.index,
        at.users,
        users_are,
        at.eta.as_secs_f64(),
        live_line(p)
    )
}
