//! A visitor's session: read and locked at the start of a request, written
//! (when changed) and unlocked at its end, as Moodle does. The lock makes
//! one user's parallel requests wait for each other.

use crate::store::{SessionStore, StoreError, LOCK_TTL_S};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

pub const COOKIE: &str = "MoodleSession";
/// Draft item ids a session remembers (reply forms opened, not yet posted).
const DRAFTS: usize = 20;

/// What the site keeps per visitor.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct SessionData {
    /// 0 for a guest.
    pub userid: i64,
    pub fullname: String,
    pub sesskey: String,
    pub logintoken: String,
    pub drafts: Vec<i64>,
    pub created: i64,
    /// Courses viewed, most recent first (Moodle keeps such navigation data).
    pub recent_courses: Vec<i64>,
}

impl SessionData {
    pub fn logged_in(&self) -> bool {
        self.userid > 0
    }

    pub fn remember_draft(&mut self, itemid: i64) {
        self.drafts.insert(0, itemid);
        self.drafts.truncate(DRAFTS);
    }

    /// Removes a draft id; false when the session never issued it.
    pub fn take_draft(&mut self, itemid: i64) -> bool {
        match self.drafts.iter().position(|&d| d == itemid) {
            Some(i) => {
                self.drafts.remove(i);
                true
            }
            None => false,
        }
    }

    pub fn visit_course(&mut self, course: i64) -> bool {
        if self.recent_courses.first() == Some(&course) {
            return false;
        }
        self.recent_courses.retain(|&c| c != course);
        self.recent_courses.insert(0, course);
        self.recent_courses.truncate(10);
        true
    }
}

/// The session of the request being served.
#[derive(Debug)]
pub struct Session {
    pub sid: String,
    pub data: SessionData,
    /// Changed: written back at the end of the request.
    pub dirty: bool,
    /// Created by this request: its cookie must be sent.
    pub fresh: bool,
    /// Locked by this request: must be unlocked at the end.
    pub locked: bool,
    /// Destroyed (logout): the cookie is cleared.
    pub destroyed: bool,
    /// The serialised size at the last write or read.
    pub bytes: usize,
}

/// Random characters from [a-z0-9].
pub fn random_token(len: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = vec![0u8; len];
    if getrandom::getrandom(&mut bytes).is_err() {
        // No OS randomness: fall back to the clock (ids only need to differ).
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (nanos >> ((i * 5) % 120)) as u8 ^ (i as u8).wrapping_mul(37);
        }
    }
    bytes
        .iter()
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect()
}

/// A positive random number for draft item ids.
pub fn random_id() -> i64 {
    let mut bytes = [0u8; 4];
    let _ = getrandom::getrandom(&mut bytes);
    1 + i64::from(u32::from_le_bytes(bytes) % 999_999_999)
}

fn valid_sid(sid: &str) -> bool {
    (16..=64).contains(&sid.len()) && sid.bytes().all(|b| b.is_ascii_alphanumeric())
}

impl Session {
    fn new_guest() -> Session {
        Session {
            sid: random_token(26),
            data: SessionData {
                sesskey: random_token(10),
                created: crate::store::now_s(),
                ..SessionData::default()
            },
            dirty: true,
            fresh: true,
            locked: false,
            destroyed: false,
            bytes: 0,
        }
    }

    /// Starts the request's session: the cookie's session, locked and read,
    /// or a new guest session.
    pub async fn start(
        store: &SessionStore,
        cookie: Option<&str>,
        lock_timeout: Duration,
    ) -> Result<Session, SessionError> {
        let Some(sid) = cookie.filter(|s| valid_sid(s)) else {
            return Ok(Session::new_guest());
        };
        let waited = Instant::now();
        let mut pause = Duration::from_millis(2);
        while !store.try_lock(sid).await? {
            if waited.elapsed() >= lock_timeout {
                return Err(SessionError::LockTimeout(lock_timeout));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(50));
        }
        let text = match store.load(sid).await {
            Ok(text) => text,
            Err(e) => {
                let _ = store.unlock(sid).await;
                return Err(e.into());
            }
        };
        let parsed = text
            .as_deref()
            .and_then(|t| serde_json::from_str::<SessionData>(t).ok());
        match parsed {
            Some(data) => Ok(Session {
                sid: sid.to_string(),
                data,
                dirty: false,
                fresh: false,
                locked: true,
                destroyed: false,
                bytes: text.map_or(0, |t| t.len()),
            }),
            None => {
                // Expired, lost (a store restarted) or unreadable: a new guest.
                let _ = store.unlock(sid).await;
                Ok(Session::new_guest())
            }
        }
    }

    /// A new session id after logging in (against session fixation),
    /// keeping nothing of the guest session.
    pub async fn regenerate(
        &mut self,
        store: &SessionStore,
        data: SessionData,
    ) -> Result<(), StoreError> {
        if !self.fresh {
            store.destroy(&self.sid).await?;
        }
        if self.locked {
            store.unlock(&self.sid).await?;
            self.locked = false;
        }
        self.sid = random_token(26);
        self.data = data;
        self.fresh = true;
        self.dirty = true;
        Ok(())
    }

    /// Ends the session (logout).
    pub async fn destroy(&mut self, store: &SessionStore) -> Result<(), StoreError> {
        if !self.fresh {
            store.destroy(&self.sid).await?;
        }
        self.destroyed = true;
        self.dirty = false;
        Ok(())
    }

    /// Writes the session when changed, and unlocks it.
    pub async fn finish(&mut self, store: &SessionStore) -> Result<(), StoreError> {
        let mut result = Ok(());
        if self.dirty && !self.destroyed {
            let text = serde_json::to_string(&self.data).unwrap_or_default();
            self.bytes = text.len();
            result = store.save(&self.sid, &text).await;
            self.dirty = false;
        }
        if self.locked {
            let unlocked = store.unlock(&self.sid).await;
            self.locked = false;
            result = result.and(unlocked);
        }
        result
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("session store unavailable ({0})")]
    Store(#[from] StoreError),
    #[error(
        "could not get the session lock within {0:?}: another request of this session holds it"
    )]
    LockTimeout(Duration),
}

/// The lock timeout the site uses: Moodle waits up to 120 s; a load test
/// is better served by a failure it can count, so the testbed waits less.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(LOCK_TTL_S as u64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drafts_and_recent_courses_are_bounded() {
        let mut data = SessionData::default();
        for i in 0..30 {
            data.remember_draft(i);
        }
        assert_eq!(data.drafts.len(), DRAFTS);
        assert!(data.take_draft(29));
        assert!(!data.take_draft(29));
        assert!(!data.take_draft(0), "the oldest drafts were forgotten");
        assert!(data.visit_course(2));
        assert!(!data.visit_course(2));
        assert!(data.visit_course(3));
        assert_eq!(data.recent_courses, vec![3, 2]);
        let t = random_token(26);
        assert!(valid_sid(&t) && t != random_token(26));
        assert!(!valid_sid("../../etc/passwd"));
    }
}
