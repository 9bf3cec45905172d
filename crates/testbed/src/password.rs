//! Password hashes: salted, iterated SHA-256 (`sha256$ROUNDS$SALT$HEX`).
//! Logging in costs real CPU, as it does in Moodle (bcrypt there), at a
//! cost low enough that generating 10,000 users takes seconds.

use sha2::{Digest, Sha256};

pub const ROUNDS: u32 = 1000;

fn digest(password: &str, salt: &str, rounds: u32) -> [u8; 32] {
    let mut hash: [u8; 32] = Sha256::new()
        .chain_update(salt.as_bytes())
        .chain_update(password.as_bytes())
        .finalize()
        .into();
    for _ in 1..rounds {
        hash = Sha256::new()
            .chain_update(hash)
            .chain_update(password.as_bytes())
            .finalize()
            .into();
    }
    hash
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn hash(password: &str, salt: &str) -> String {
    format!(
        "sha256${ROUNDS}${salt}${}",
        hex(&digest(password, salt, ROUNDS))
    )
}

/// Whether `password` matches `stored`; compares in constant time.
pub fn verify(password: &str, stored: &str) -> bool {
    let mut parts = stored.split('$');
    let (Some("sha256"), Some(rounds), Some(salt), Some(expected), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return false;
    };
    let Ok(rounds) = rounds.parse::<u32>() else {
        return false;
    };
    if rounds == 0 || rounds > 1_000_000 {
        return false;
    }
    let actual = hex(&digest(password, salt, rounds));
    actual.len() == expected.len()
        && actual
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verifies_only_the_right_password() {
        let stored = hash("pw-1", "abcd");
        assert!(stored.starts_with("sha256$1000$abcd$"));
        assert!(verify("pw-1", &stored));
        assert!(!verify("pw-2", &stored));
        assert!(!verify("pw-1", &stored.replace("abcd", "abce")));
        assert!(!verify("pw-1", "plain"));
        assert!(!verify("pw-1", "sha256$0$abcd$00"));
    }
}
