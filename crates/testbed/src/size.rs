//! Dataset sizes: what one generated course holds, after Moodle's course
//! generator (admin/tool/generator) and the table of the study this project
//! grew from. L is ten times M.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Size {
    Xs,
    S,
    M,
    L,
}

/// The counts and file sizes of one dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Dataset {
    pub sections: u32,
    pub assignments: u32,
    pub pages: u32,
    pub small_files: u32,
    pub small_file_bytes: u64,
    pub big_files: u32,
    pub big_file_bytes: u64,
    pub users: u32,
    pub discussions: u32,
    /// Posts per discussion, the first post included.
    pub posts_per_discussion: u32,
}

impl Dataset {
    pub fn forum_posts(&self) -> u32 {
        self.discussions * self.posts_per_discussion
    }
}

/// What Moodle's JMeter plan generator uses for a course of this size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PlanDefaults {
    pub users: u32,
    pub loops: u32,
    pub ramp_up_s: u32,
}

impl Size {
    pub const ALL: [Size; 4] = [Size::Xs, Size::S, Size::M, Size::L];

    pub fn dataset(self) -> Dataset {
        const KIB: u64 = 1024;
        const MIB: u64 = 1024 * 1024;
        match self {
            Size::Xs => Dataset {
                sections: 1,
                assignments: 1,
                pages: 1,
                small_files: 1,
                small_file_bytes: KIB,
                big_files: 1,
                big_file_bytes: 8 * KIB,
                users: 1,
                discussions: 1,
                posts_per_discussion: 2,
            },
            Size::S => Dataset {
                sections: 10,
                assignments: 10,
                pages: 50,
                small_files: 64,
                small_file_bytes: 16 * KIB,
                big_files: 2,
                big_file_bytes: 4 * MIB,
                users: 100,
                discussions: 10,
                posts_per_discussion: 2,
            },
            Size::M => Dataset {
                sections: 100,
                assignments: 100,
                pages: 200,
                small_files: 128,
                small_file_bytes: 80 * KIB,
                big_files: 5,
                big_file_bytes: 16 * MIB,
                users: 1000,
                discussions: 100,
                posts_per_discussion: 5,
            },
            Size::L => {
                let m = Size::M.dataset();
                Dataset {
                    sections: m.sections * 10,
                    assignments: m.assignments * 10,
                    pages: m.pages * 10,
                    small_files: m.small_files * 10,
                    big_files: m.big_files * 10,
                    users: m.users * 10,
                    discussions: m.discussions * 10,
                    ..m
                }
            }
        }
    }

    pub fn plan_defaults(self) -> PlanDefaults {
        let (users, loops, ramp_up_s) = match self {
            Size::Xs => (1, 5, 1),
            Size::S => (30, 5, 6),
            Size::M => (100, 5, 40),
            Size::L => (1000, 6, 100),
        };
        PlanDefaults {
            users,
            loops,
            ramp_up_s,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Size::Xs => "xs",
            Size::S => "s",
            Size::M => "m",
            Size::L => "l",
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name().to_uppercase())
    }
}

impl FromStr for Size {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.to_ascii_lowercase().as_str() {
            "xs" => Ok(Size::Xs),
            "s" => Ok(Size::S),
            "m" => Ok(Size::M),
            "l" => Ok(Size::L),
            _ => Err(format!("unknown size '{text}': use xs, s, m or l")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_reference_table() {
        let s = Size::S.dataset();
        assert_eq!(
            (s.assignments, s.pages, s.small_files, s.big_files, s.users),
            (10, 50, 64, 2, 100)
        );
        assert_eq!(s.forum_posts(), 20);
        assert_eq!(Size::Xs.dataset().forum_posts(), 2);
        assert_eq!(Size::M.dataset().forum_posts(), 500);
        let l = Size::L.dataset();
        assert_eq!((l.pages, l.users, l.forum_posts()), (2000, 10_000, 5000));
        assert_eq!(l.big_file_bytes, Size::M.dataset().big_file_bytes);
        assert_eq!("M".parse::<Size>(), Ok(Size::M));
        assert!("xl".parse::<Size>().unwrap_err().contains("xs, s, m or l"));
    }
}
