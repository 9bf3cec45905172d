//! Why a search stopped with no answer: its own module, since both the
//! search's driver and the look before a lesson search's first lesson
//! ([`crate::lesson_aim`]) run levels.

use headroom_load::run::RunError;

/// Why a search stopped with no answer.
#[derive(Debug, thiserror::Error)]
pub enum CapacityError {
    /// A level's run could not run.
    #[error(transparent)]
    Run(#[from] RunError),
    /// A level's bundle could not be written or read back.
    #[error("{0}")]
    Level(String),
}
