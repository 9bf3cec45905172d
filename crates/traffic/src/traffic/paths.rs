//! The log's sessions as their users walked them: each session's pages
//! that a workload can send again, in order, for a sample of the sessions
//! drawn evenly from the whole log (a reservoir) in bounded memory.

/// Sessions kept at most (drawn evenly from all that had a page to send).
pub const MOST_PATHS: usize = 1000;
/// Pages kept of one session, and their bytes; past either, the rest of
/// the session is cut (and counted). 1,000 sessions hold 16 MB at most.
pub const MOST_PATH_PAGES: usize = 100;
pub const MOST_PATH_BYTES: usize = 16 << 10;

/// Where an open session's path is kept.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum PathSlot {
    /// No page to send yet.
    #[default]
    Unbegun,
    /// Not drawn into the sample (or drawn, then replaced).
    Left,
    /// In slot `at` while that slot's generation is still `generation`.
    Kept { at: u32, generation: u32 },
}

#[derive(Debug, Default)]
struct Slot {
    generation: u32,
    pages: Vec<Box<str>>,
    bytes: usize,
    cut: bool,
}

/// The sample as it is drawn.
#[derive(Debug)]
pub struct PathsBuilder {
    slots: Vec<Slot>,
    /// Sessions that had a page to send.
    begun: u64,
    /// A fixed seed: the same log gives the same sample.
    state: u64,
}

impl Default for PathsBuilder {
    fn default() -> Self {
        PathsBuilder {
            slots: Vec::new(),
            begun: 0,
            state: 0x9e37_79b9_7f4a_7c15,
        }
    }
}

/// The sessions drawn, each its pages in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Paths {
    /// In the order they were drawn into their slots.
    pub kept: Vec<Vec<String>>,
    /// Sessions that had a page to send, all.
    pub sessions: u64,
    /// Kept sessions cut at [`MOST_PATH_PAGES`] (or [`MOST_PATH_BYTES`]).
    pub cut: usize,
}

impl PathsBuilder {
    /// A page the session `slot` asked for that a workload can send.
    pub fn walk(&mut self, slot: &mut PathSlot, target: &str) {
        if *slot == PathSlot::Unbegun {
            *slot = self.begin();
        }
        let PathSlot::Kept { at, generation } = *slot else {
            return;
        };
        let kept = &mut self.slots[at as usize];
        if kept.generation != generation {
            *slot = PathSlot::Left;
            return;
        }
        if kept.pages.len() >= MOST_PATH_PAGES || kept.bytes + target.len() > MOST_PATH_BYTES {
            kept.cut = true;
            return;
        }
        kept.bytes += target.len();
        kept.pages.push(target.into());
    }

    /// A session's first page to send: whether it is drawn (Algorithm R:
    /// the n-th is kept with chance MOST_PATHS / n, in the place of one
    /// drawn before).
    fn begin(&mut self) -> PathSlot {
        self.begun += 1;
        let at = if self.slots.len() < MOST_PATHS {
            self.slots.push(Slot::default());
            self.slots.len() - 1
        } else {
            let drawn = self.next() % self.begun;
            if drawn >= MOST_PATHS as u64 {
                return PathSlot::Left;
            }
            drawn as usize
        };
        let slot = &mut self.slots[at];
        slot.generation = slot.generation.wrapping_add(1);
        slot.pages.clear();
        slot.bytes = 0;
        slot.cut = false;
        PathSlot::Kept {
            at: at as u32,
            generation: slot.generation,
        }
    }

    /// splitmix64.
    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn finish(self) -> Paths {
        let cut = self.slots.iter().filter(|s| s.cut).count();
        Paths {
            kept: self
                .slots
                .into_iter()
                .map(|s| s.pages.into_iter().map(String::from).collect())
                .collect(),
            sessions: self.begun,
            cut,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_session_is_kept_whole_while_they_fit() {
        let mut paths = PathsBuilder::default();
        let mut a = PathSlot::default();
        let mut b = PathSlot::default();
        paths.walk(&mut a, "/course");
        paths.walk(&mut b, "/");
        paths.walk(&mut a, "/lesson/1");
        paths.walk(&mut b, "/lesson/2");
        paths.walk(&mut a, "/lesson/2");
        let done = paths.finish();
        assert_eq!(done.sessions, 2);
        assert_eq!(
            done.kept,
            vec![
                vec!["/course", "/lesson/1", "/lesson/2"],
                vec!["/", "/lesson/2"]
            ]
        );
        assert_eq!(done.cut, 0);
    }

    /// 20,000 sessions, the first half of one page, the second of two:
    /// the sample holds MOST_PATHS, about half of each kind (drawn from
    /// the whole log, not its start), none mixed up with another.
    #[test]
    fn a_sample_is_drawn_evenly_from_the_whole_log() {
        let mut paths = PathsBuilder::default();
        for n in 0..20_000 {
            let mut slot = PathSlot::default();
            if n < 10_000 {
                paths.walk(&mut slot, "/one");
            } else {
                paths.walk(&mut slot, &format!("/two/{n}"));
                paths.walk(&mut slot, &format!("/two/{n}/next"));
            }
        }
        let done = paths.finish();
        assert_eq!(done.sessions, 20_000);
        assert_eq!(done.kept.len(), MOST_PATHS);
        let two = done.kept.iter().filter(|p| p.len() == 2).count();
        // Binomial(1000, 0.5): sd 16; within 4 sd.
        assert!((436..=564).contains(&two), "{two}");
        for path in done.kept.iter().filter(|p| p.len() == 2) {
            assert_eq!(format!("{}/next", path[0]), path[1]);
        }
    }

    /// A session replaced in its slot while still open writes no more to it.
    #[test]
    fn a_replaced_session_stops_writing() {
        let mut paths = PathsBuilder::default();
        let mut first = PathSlot::default();
        paths.walk(&mut first, "/first");
        for _ in 1..MOST_PATHS {
            paths.walk(&mut PathSlot::default(), "/filler");
        }
        // Sessions until one takes the first one's slot.
        let mut n = 0;
        while paths.slots[0].generation == 1 {
            paths.walk(&mut PathSlot::default(), "/new");
            n += 1;
            assert!(n < 1_000_000);
        }
        paths.walk(&mut first, "/first/again");
        assert_eq!(first, PathSlot::Left);
        let done = paths.finish();
        assert_eq!(done.kept[0], vec!["/new"]);
    }

    #[test]
    fn a_long_session_is_cut_and_counted() {
        let mut paths = PathsBuilder::default();
        let mut slot = PathSlot::default();
        for n in 0..150 {
            paths.walk(&mut slot, &format!("/p/{n}"));
        }
        let done = paths.finish();
        assert_eq!(done.kept[0].len(), MOST_PATH_PAGES);
        assert_eq!(done.cut, 1);
    }
}
