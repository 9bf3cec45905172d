//! What a session or cache store says when it cannot be reached or
//! answers nonsense (the testbed's error holds it).

/// The error a store gives when it cannot be reached or answers nonsense.
#[derive(Debug, thiserror::Error)]
#[error("{store}: {message}")]
pub struct StoreError {
    pub store: &'static str,
    pub message: String,
}

pub(crate) fn failed(store: &'static str, error: impl std::fmt::Display) -> StoreError {
    StoreError {
        store,
        message: error.to_string(),
    }
}
