//! What the dataset's texts are made of, drawn from headroom's
//! deterministic generator: the same seed gives the same dataset.

pub use headroom_units::rng::Rng;

/// What the dataset generator draws.
pub trait Draw {
    fn next(&mut self) -> u64;

    /// A number in 0..n (n > 0).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }

    fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let bytes = self.next().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }

    /// `count` words separated by spaces, the first capitalised.
    fn sentence(&mut self, count: usize) -> String {
        let mut out = String::new();
        for i in 0..count {
            let word = self.pick(WORDS);
            if i == 0 {
                let mut chars = word.chars();
                if let Some(first) = chars.next() {
                    out.extend(first.to_uppercase());
                    out.push_str(chars.as_str());
                }
            } else {
                out.push(' ');
                out.push_str(word);
            }
        }
        out
    }

    /// Paragraphs of about `words` words in all, as HTML.
    fn paragraphs(&mut self, words: usize) -> String {
        let mut out = String::new();
        let mut left = words;
        while left > 0 {
            let n = left.min(40 + self.below(40) as usize);
            out.push_str("<p>");
            out.push_str(&self.sentence(n));
            out.push_str(".</p>");
            left -= n;
        }
        out
    }
}

impl Draw for Rng {
    fn next(&mut self) -> u64 {
        self.next_u64()
    }
}

pub const WORDS: &[&str] = &[
    "learning",
    "course",
    "module",
    "student",
    "teacher",
    "lesson",
    "quiz",
    "forum",
    "assignment",
    "grade",
    "feedback",
    "reading",
    "chapter",
    "exercise",
    "topic",
    "week",
    "project",
    "review",
    "practice",
    "example",
    "theory",
    "method",
    "result",
    "analysis",
    "question",
    "answer",
    "group",
    "discussion",
    "resource",
    "summary",
    "outline",
    "notes",
    "the",
    "a",
    "of",
    "and",
    "to",
    "in",
    "for",
    "with",
    "on",
    "about",
    "from",
    "by",
    "each",
    "every",
    "new",
    "first",
    "next",
    "final",
    "short",
    "long",
    "simple",
    "careful",
    "open",
    "shared",
    "weekly",
    "online",
    "local",
    "server",
    "network",
    "memory",
    "storage",
];

pub const FIRST_NAMES: &[&str] = &[
    "Ada", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Kira",
    "Liam", "Maya", "Noor", "Omar", "Paula", "Quinn", "Rosa", "Sami", "Tara", "Umar", "Vera",
    "Wen", "Xavi", "Yara", "Zoe",
];

pub const LAST_NAMES: &[&str] = &[
    "Alvarez", "Brown", "Chen", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito",
    "Jensen", "Kowalski", "Lopez", "Meyer", "Nakamura", "Okafor", "Petrov", "Quispe", "Rossi",
    "Silva", "Tanaka", "Usman", "Varga", "Weber", "Xu", "Yilmaz", "Zhang",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence() {
        let mut a = Rng::new(7, 0);
        let mut b = Rng::new(7, 0);
        let mut c = Rng::new(8, 0);
        let xs: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        assert_eq!(xs, (0..4).map(|_| b.next_u64()).collect::<Vec<_>>());
        assert_ne!(xs, (0..4).map(|_| c.next_u64()).collect::<Vec<_>>());
        let mut buf = [0u8; 13];
        a.fill(&mut buf);
        assert!(buf.iter().any(|&x| x != 0));
        let s = Rng::new(1, 0).sentence(5);
        assert_eq!(s.split(' ').count(), 5);
        assert!(s.chars().next().unwrap().is_uppercase());
    }
}
