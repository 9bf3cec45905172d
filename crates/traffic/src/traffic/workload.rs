//! A log's model written as a workload `run` and `capacity` take: one
//! journey whose every iteration is one page of the log, the next row of a
//! data file of the pages it asked for (a step per pattern, so each keeps
//! its label): the log's sessions as they walked, each a visit a user takes
//! whole as a new visitor, or, where the log cannot tell its users apart,
//! the pages in the log's proportions. The reading time is fitted to the
//! log's between pages, and users are as many as the log's peak minute had
//! reading at once (Little's law). What cannot be sent again is left out
//! and said: requests that change data (no body is logged), that carried
//! a secret, that were not answered 2xx or 304, and (when pages are loaded as a
//! browser does) what pages load themselves.

use super::learned::Learned;
use super::login::LoginJourney;
use super::model::{busiest, page_key, pattern_of, TrafficModel};
use super::pages::PagePattern;
use super::yaml_text::quote;
use headroom_journey::journey_mix::{exact_split, interleave};
use headroom_units::civil::utc_minute_text;
use std::collections::HashMap;
use std::fmt::Write as _;

/// Rows of the pages' data file: each pattern's share to 0.1 point.
pub const ROWS: usize = 1000;
/// The share of resource requests above which pages are loaded as a
/// browser does (`page_loads: true`).
const PAGE_LOADS_SHARE: f64 = 0.05;
/// The share of a pattern's requests within a second of the page before
/// that marks it as loaded by pages (with `page_loads`, the browser asks
/// for it), when the log's sessions are each one user's
/// ([`TrafficModel::sessions_apart`]).
const LOADED_BY_PAGES: f64 = 0.8;
/// Resources learned for one page pattern, at most (the most shared).
const MOST_ALSO_LOADS: usize = 100;

/// What a page view cost in the log and what of it a workload with page
/// loads does not send.
#[derive(Debug, Clone, PartialEq)]
pub struct PageViewCost {
    /// The log's requests, all, and its pages seen.
    pub requests: u64,
    pub views: u64,
    /// Resources learned, and for how many patterns; a page's own learned,
    /// and for how many pages.
    pub learned: usize,
    pub learned_patterns: usize,
    pub own: usize,
    pub own_pages: usize,
    /// Not learned (sent only where a page's HTML names them): each
    /// reason with its requests, largest first, none zero.
    pub not_learned: Vec<(&'static str, u64)>,
}

impl PageViewCost {
    pub fn per_view(&self, n: u64) -> f64 {
        n as f64 / self.views.max(1) as f64
    }

    /// "0.2 requests a page view: 40 sent by ..., 10 ..." (None: every
    /// request that named a page was learned).
    pub fn not_learned_text(&self) -> Option<String> {
        let all: u64 = self.not_learned.iter().map(|n| n.1).sum();
        (all > 0).then(|| {
            let parts: Vec<String> = self
                .not_learned
                .iter()
                .map(|(why, n)| format!("{n} {why}"))
                .collect();
            format!(
                "{:.2} requests a page view: {}",
                self.per_view(all),
                parts.join(", ")
            )
        })
    }
}

impl TrafficModel {
    /// What a page view cost in the log, and what a workload that loads
    /// pages leaves out of it.
    pub fn page_view_cost(&self) -> PageViewCost {
        let learned = &self.learned;
        let unlearned = learned.unlearned;
        let mut not_learned = vec![
            (
                "sent by a page's script with a method other than GET (the log holds no body)",
                unlearned.not_get,
            ),
            ("answered with an error or a redirect", unlearned.errors),
            ("carried a token or a session key", unlearned.secret),
            (
                "were a page's own fetched too seldom with it (with one page of a pattern of several, or once at a URL that holds a number or a query value)",
                unlearned.page_specific,
            ),
            (
                "fetched with their page by fewer than half of its sessions",
                unlearned.too_rare,
            ),
        ];
        not_learned.retain(|n| n.1 > 0);
        not_learned.sort_by_key(|n| std::cmp::Reverse(n.1));
        let counts: Vec<usize> = self
            .mix
            .iter()
            .map(|p| learned.for_pattern(&p.pattern).len())
            .filter(|n| *n > 0)
            .collect();
        PageViewCost {
            requests: self.requests,
            views: self.views_per_minute.iter().map(|n| u64::from(*n)).sum(),
            learned: counts.iter().sum(),
            learned_patterns: counts.len(),
            own: learned.own.values().map(Vec::len).sum(),
            own_pages: learned.own.len(),
            not_learned,
        }
    }
}

/// The busiest minute in pages, as users.
#[derive(Debug, Clone, PartialEq)]
pub struct Peak {
    /// "2026-11-20 10:01" (UTC).
    pub minute: String,
    pub pages: u32,
    /// The log-normal's mean reading time, s.
    pub think_s: f64,
    /// Users reading at once: pages a second × the mean reading time,
    /// rounded (at least 1); in a workload, of the pages it sends.
    pub users: u32,
    /// The share of the log's pages seen that the workload sends (1 for
    /// the log's own peak).
    pub sent_share: f64,
}

impl TrafficModel {
    /// The mean of the log-normal fitted to the reading times, s (None
    /// when no session read two pages).
    pub fn think_mean_s(&self) -> Option<f64> {
        (!self.think_ms.is_empty())
            .then(|| (self.think_log_mean + self.think_log_sd.powi(2) / 2.0).exp())
    }

    /// The minute with the most pages read (not within a second of the
    /// page before), and the users that reading the log's mean time
    /// between pages ask for them at that rate.
    pub fn peak(&self) -> Option<Peak> {
        let think_s = self.think_mean_s()?;
        let (at, pages) = busiest(&self.reads_per_minute)?;
        let users = (f64::from(pages) / 60.0 * think_s).round().max(1.0);
        Some(Peak {
            minute: utc_minute_text(self.first_minute_ms + at as i64 * 60_000),
            pages,
            think_s,
            users: users.min(f64::from(u32::MAX)) as u32,
            sent_share: 1.0,
        })
    }
}

/// A pattern of the log in the workload, or why not.
#[derive(Debug, Clone, PartialEq)]
pub enum Fate {
    /// Sent: its rows of the data file.
    Sent { rows: usize },
    /// Not a GET answered 2xx or 304 in the log (a form sent, a redirect, an
    /// error): nothing to send again.
    NotReplayable,
    /// Every request that could be sent again carried a secret.
    Secret,
    /// Every request that could be sent again was longer than
    /// [`super::pages::MAX_TARGET`].
    TooLong,
    /// Loaded by pages (with `page_loads`, the browser asks for it).
    LoadedByPages,
    /// Too rare for a row in [`ROWS`].
    Rare,
    /// In none of the sessions drawn from the log (it walks them).
    Unsampled,
    /// Sent by the login's steps alone (each visit logs in first).
    ByLogin,
    /// The log's rarer patterns, folded together past
    /// [`super::pages::MAX_PATTERNS`] distinct ones.
    Folded,
}

impl Fate {
    /// Whether the workload sends its pages (as rows, or by the login).
    pub fn is_sent(&self) -> bool {
        matches!(self, Fate::Sent { .. } | Fate::ByLogin)
    }
}

/// The workload: its scenario's text, its data file's, and what each
/// pattern became.
#[derive(Debug, Clone)]
pub struct LogWorkload {
    pub scenario: String,
    pub pages_csv: String,
    /// With a login that has data: its accounts, a row a user (they hold
    /// passwords: the file is to be readable by its owner only).
    pub accounts_csv: Option<String>,
    pub page_loads: bool,
    pub peak: Option<Peak>,
    /// Every pattern of the log, most asked first, with its fate.
    pub fates: Vec<(String, u64, Fate)>,
    /// How each user's next page is chosen.
    pub walk: Walk,
}

/// How a workload's users choose their next page: the one asked for, and
/// what the log allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextPage {
    /// Walk the log's sessions where it tells its users apart, else draw
    /// from the mix.
    Auto,
    /// Walk the log's sessions, even where they look mixed.
    Sessions,
    /// Draw each page from the log's mix.
    Mix,
}

/// How the workload written chooses each next page.
#[derive(Debug, Clone, PartialEq)]
pub enum Walk {
    /// Users walk the log's sessions: `drawn` of the log's `of` sessions
    /// with a page to send, drawn evenly (those cut long: `cut`), of which
    /// `visits` have a page the workload sends; in them (with the login's
    /// pages), each pattern's share of the pages is within `gap` (a
    /// fraction) of the log's.
    Sessions {
        visits: usize,
        drawn: usize,
        of: u64,
        cut: usize,
        gap: f64,
        /// Pages of the visits the login sends (its GET steps' own,
        /// once a visit), not written as rows.
        login_pages: usize,
    },
    /// Each page drawn from the log's mix, and why.
    Mix(MixWhy),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MixWhy {
    /// `--next-page mix`.
    Asked,
    /// Its sessions could not be told apart: this share of their pages
    /// came within a second of the page before (several users behind one
    /// address and browser); whether the sessions were keyed by cookie.
    NotApart { quick: f64, cookie: bool },
    /// No session drawn had a page to send but the login's.
    NoVisits,
}

/// Where the log came from and where the workload is to be sent.
pub struct LogWorkloadInput<'a> {
    /// The log files' names as the user gave them.
    pub logs: &'a [String],
    /// The data file's name, beside the scenario.
    pub pages_file: &'a str,
    /// The login's accounts' file name, beside the scenario.
    pub accounts_file: &'a str,
    /// `--target`, written as the base URL (None: `run --target` says it).
    pub target: Option<&'a str>,
    /// `--login`: the steps that log a user in, run once a visit (once a
    /// user when drawing from the mix).
    pub login: Option<&'a LoginJourney>,
    /// `--next-page`.
    pub next_page: NextPage,
}

/// The workload of a model.
pub fn workload(model: &TrafficModel, source: &LogWorkloadInput<'_>) -> LogWorkload {
    let page_loads = model.static_share() >= PAGE_LOADS_SHARE;
    let PageFates {
        mut fates,
        sent,
        sent_at,
        quick_share,
    } = page_fates(model, page_loads);
    let weights: Vec<u64> = sent
        .iter()
        .map(|p| p.replayable - p.secret - p.long)
        .collect();
    let why = match source.next_page {
        NextPage::Mix => Some(MixWhy::Asked),
        NextPage::Auto if !model.sessions_apart() => Some(MixWhy::NotApart {
            quick: quick_share,
            cookie: matches!(model.key, super::model::SessionKey::Cookie(_)),
        }),
        _ => None,
    };
    let walked = match why {
        None => {
            let login = source.login.map(|l| &l.pages[..]).unwrap_or_default();
            visit_rows(model, &sent, &weights, login).ok_or(MixWhy::NoVisits)
        }
        Some(why) => Err(why),
    };
    let Walked {
        data,
        counts,
        by_login,
        walk,
    } = walked.unwrap_or_else(|why| {
        let (data, counts) = mix_rows(&sent, &weights);
        Walked {
            data,
            by_login: vec![0; counts.len()],
            counts,
            walk: Walk::Mix(why),
        }
    });
    let visits = matches!(walk, Walk::Sessions { .. });
    for ((at, n), login) in sent_at.iter().zip(&counts).zip(&by_login) {
        fates[*at].2 = match (*n, visits) {
            (0, true) if *login > 0 => Fate::ByLogin,
            (0, true) => Fate::Unsampled,
            (0, false) => Fate::Rare,
            (rows, _) => Fate::Sent { rows },
        };
    }
    let own = page_loads.then_some(&model.learned);
    let (pages_csv, own_column) = pages_csv(&data.pages, own);
    let accounts_csv = accounts_csv(source);
    // Users ask only for the pages sent: as many as ask for those at the
    // peak's rate.
    let viewed: u64 = model.views_per_minute.iter().map(|n| u64::from(*n)).sum();
    let sendable: u64 = weights.iter().sum();
    let share = if viewed == 0 {
        1.0
    } else {
        (sendable as f64 / viewed as f64).min(1.0)
    };
    let peak = model.peak().map(|peak| Peak {
        users: (f64::from(peak.users) * share).round().max(1.0) as u32,
        sent_share: share,
        ..peak
    });
    let shape = Shape {
        page_loads,
        own_column,
        rows: data.pages.len(),
        visits,
    };
    let scenario = scenario_text(
        model,
        source,
        shape,
        &walk,
        peak.as_ref(),
        &data.kept,
        &fates,
    );
    LogWorkload {
        scenario,
        pages_csv,
        accounts_csv,
        page_loads,
        peak,
        fates,
        walk,
    }
}

/// The patterns' fates by the model alone (the rows are shared out
/// later), and the patterns to send.
struct PageFates<'a> {
    fates: Vec<(String, u64, Fate)>,
    sent: Vec<&'a PagePattern>,
    /// Where each sent pattern's fate is.
    sent_at: Vec<usize>,
    /// The share of the log's pages asked within a second of the page
    /// before.
    quick_share: f64,
}

/// Each pattern's fate by the model alone, and the patterns to send.
fn page_fates(model: &TrafficModel, page_loads: bool) -> PageFates<'_> {
    let quick_share = model.quick_share();
    let sessions_apart = model.sessions_apart();
    let mut fates: Vec<(String, u64, Fate)> = Vec::new();
    let mut sent: Vec<&PagePattern> = Vec::new();
    let mut sent_at: Vec<usize> = Vec::new();
    for page in &model.mix {
        let fate = if page.folded > 0 {
            Fate::Folded
        } else if page.replayable == 0 {
            Fate::NotReplayable
        } else if page.examples.is_empty() && page.long > 0 && page.secret == 0 {
            Fate::TooLong
        } else if page.examples.is_empty() {
            Fate::Secret
        } else if page_loads && sessions_apart && page.quick_share() >= LOADED_BY_PAGES {
            Fate::LoadedByPages
        } else {
            sent.push(page);
            sent_at.push(fates.len());
            Fate::Sent { rows: 0 }
        };
        fates.push((page.pattern.clone(), page.count, fate));
    }
    PageFates {
        fates,
        sent,
        sent_at,
        quick_share,
    }
}

/// One row of the data file: the visit it is of (when users walk the log's
/// sessions), its pattern's number (from 1) and the page.
struct Row<'a> {
    visit: Option<usize>,
    pattern: usize,
    target: &'a str,
}

/// The data file's rows, and the patterns they hold with their rows.
struct DataRows<'a> {
    pages: Vec<Row<'a>>,
    kept: Vec<(usize, &'a PagePattern)>,
}

/// The data file's rows and how they were chosen: each sent pattern's
/// rows, and its pages the login sends (none from the mix).
struct Walked<'a> {
    data: DataRows<'a>,
    counts: Vec<usize>,
    by_login: Vec<usize>,
    walk: Walk,
}

/// The data file's rows as the log's sessions walked, a visit each (those
/// drawn into the model's sample, their pages of the patterns sent but the
/// login's own: the first of each target `login` sends, in each visit),
/// with each sent pattern's rows and its pages the login sends; None when
/// no session had a row.
fn visit_rows<'a>(
    model: &'a TrafficModel,
    sent: &[&'a PagePattern],
    weights: &[u64],
    login: &[String],
) -> Option<Walked<'a>> {
    let index: HashMap<&str, usize> = sent
        .iter()
        .enumerate()
        .map(|(i, p)| (p.pattern.as_str(), i))
        .collect();
    let mut counts = vec![0usize; sent.len()];
    let mut by_login = vec![0usize; sent.len()];
    let mut walked: Vec<Vec<(usize, &str)>> = Vec::new();
    for path in &model.paths.kept {
        let mut logged_in = vec![false; login.len()];
        let mut pages: Vec<(usize, &str)> = Vec::new();
        for target in path {
            let Some(&at) = index.get(pattern_of(target.as_bytes()).as_str()) else {
                continue;
            };
            let sent_by_login = login
                .iter()
                .position(|l| l == target)
                .filter(|i| !logged_in[*i]);
            match sent_by_login {
                Some(i) => {
                    logged_in[i] = true;
                    by_login[at] += 1;
                }
                None => pages.push((at, target.as_str())),
            }
        }
        if !pages.is_empty() {
            pages.iter().for_each(|(at, _)| counts[*at] += 1);
            walked.push(pages);
        }
    }
    if walked.is_empty() {
        return None;
    }
    let mut number = vec![0usize; sent.len()];
    let mut kept = Vec::new();
    for (at, n) in counts.iter().enumerate().filter(|(_, n)| **n > 0) {
        kept.push((*n, sent[at]));
        number[at] = kept.len();
    }
    let number = &number;
    let pages: Vec<Row<'a>> = walked
        .iter()
        .enumerate()
        .flat_map(|(visit, pages)| {
            pages.iter().map(move |(at, target)| Row {
                visit: Some(visit + 1),
                pattern: number[*at],
                target,
            })
        })
        .collect();
    // The pages the visits send, their login's among them.
    let sends: Vec<usize> = counts.iter().zip(&by_login).map(|(n, l)| n + l).collect();
    let rows = sends.iter().sum::<usize>().max(1) as f64;
    let all: u64 = weights.iter().sum();
    let gap = sends
        .iter()
        .zip(weights)
        .map(|(n, w)| (*n as f64 / rows - *w as f64 / all.max(1) as f64).abs())
        .fold(0.0, f64::max);
    let walk = Walk::Sessions {
        visits: walked.len(),
        drawn: model.paths.kept.len(),
        of: model.paths.sessions,
        cut: model.paths.cut,
        gap,
        login_pages: by_login.iter().sum(),
    };
    Some(Walked {
        data: DataRows { pages, kept },
        counts,
        by_login,
        walk,
    })
}

/// The data file's rows in the log's shares ([`ROWS`], each pattern's by
/// its weight), with each sent pattern's rows.
fn mix_rows<'a>(sent: &[&'a PagePattern], weights: &[u64]) -> (DataRows<'a>, Vec<usize>) {
    let shares: Vec<f64> = weights.iter().map(|w| *w as f64).collect();
    let rows: Vec<usize> = exact_split(&shares, ROWS as u64)
        .into_iter()
        .map(|n| n as usize)
        .collect();
    (interleaved_pages(sent, &rows), rows)
}

/// The data file's rows: each pattern's rows split among its requests
/// by their counts, then every row list interleaved so that any stretch
/// of the file holds the patterns in their shares.
fn interleaved_pages<'a>(sent: &[&'a PagePattern], rows: &[usize]) -> DataRows<'a> {
    let mut lists: Vec<Vec<&str>> = Vec::new();
    let mut kept: Vec<(usize, &PagePattern)> = Vec::new();
    for (page, n) in sent.iter().zip(rows).filter(|(_, n)| **n > 0) {
        let examples = page.examples_by_count();
        let counts: Vec<f64> = examples.iter().map(|e| e.1 as f64).collect();
        let split = exact_split(&counts, *n as u64);
        let order = interleave(&split);
        lists.push(
            order
                .into_iter()
                .map(|i| examples[usize::from(i)].0)
                .collect(),
        );
        kept.push((*n, page));
    }
    let order = interleave(&kept.iter().map(|k| k.0 as u64).collect::<Vec<_>>());
    let mut cursor = vec![0usize; lists.len()];
    let pages: Vec<Row> = order
        .into_iter()
        .map(usize::from)
        .map(|pattern| {
            cursor[pattern] += 1;
            Row {
                visit: None,
                pattern: pattern + 1,
                target: lists[pattern][cursor[pattern] - 1],
            }
        })
        .collect();
    DataRows { pages, kept }
}

/// The data file, a row each: the visit (when users walk the log's
/// sessions), the pattern's number and the target, and (when `learned`
/// holds pages' own resources, for some page of the file) those of the
/// row's page, apart by spaces. Whether it has that column.
fn pages_csv(pages: &[Row<'_>], learned: Option<&Learned>) -> (String, bool) {
    let own = |target: &str| -> String {
        learned
            .map(|l| l.for_page(page_key(target.as_bytes())))
            .unwrap_or_default()
            .iter()
            .take(MOST_ALSO_LOADS)
            .map(|r| r.target.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let column = pages.iter().any(|row| !own(row.target).is_empty());
    let mut csv = csv::Writer::from_writer(Vec::new());
    for row in pages {
        let visit = row.visit.map(|v| v.to_string());
        let number = row.pattern.to_string();
        let also = column.then(|| own(row.target));
        let fields = visit
            .as_deref()
            .into_iter()
            .chain([number.as_str(), row.target])
            .chain(also.as_deref());
        let _ = csv.write_record(fields);
    }
    let text = String::from_utf8(csv.into_inner().unwrap_or_default()).unwrap_or_default();
    (text, column)
}

/// The login's accounts file, when the login has accounts.
fn accounts_csv(source: &LogWorkloadInput<'_>) -> Option<String> {
    source
        .login
        .filter(|login| !login.rows.is_empty())
        .map(|login| {
            let mut csv = csv::Writer::from_writer(Vec::new());
            for row in &login.rows {
                let _ = csv.write_record(row);
            }
            String::from_utf8(csv.into_inner().unwrap_or_default()).unwrap_or_default()
        })
}

/// Whether the workload loads pages, and whether its data file has each
/// page's own resources.
#[derive(Clone, Copy)]
struct Shape {
    page_loads: bool,
    own_column: bool,
    /// The data file's rows.
    rows: usize,
    /// Its rows are the log's sessions, each a visit.
    visits: bool,
}

/// The scenario file.
fn scenario_text(
    model: &TrafficModel,
    source: &LogWorkloadInput<'_>,
    shape: Shape,
    walk: &Walk,
    peak: Option<&Peak>,
    kept: &[(usize, &PagePattern)],
    fates: &[(String, u64, Fate)],
) -> String {
    let logs = source.logs.join(", ");
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# The users of {} ({} to {} UTC), written by `headroom scenario from-log`.",
        comment(&logs),
        utc_minute_text(model.first_ms),
        utc_minute_text(model.last_ms)
    );
    walk_comments(walk, &mut out);
    left_out_comments(model, shape.page_loads, walk, fates, &mut out);
    settings_text(model, source, shape, peak, &logs, &mut out);
    let learned = shape.page_loads.then_some(&model.learned);
    steps_text(source, kept, learned, shape, &mut out);
    out
}

impl Walk {
    /// The sample the visits are, and how close to the log's mix: "240 of
    /// the log's 240 sessions, drawn evenly from the whole log; each page
    /// pattern's share of their pages within 0.4 points of the log's".
    /// Empty for the mix.
    pub fn sample_words(&self) -> String {
        let Walk::Sessions {
            visits,
            drawn,
            of,
            cut,
            gap,
            login_pages,
        } = self
        else {
            return String::new();
        };
        use headroom_units::quantity::group_thousands;
        let cut = if *cut > 0 {
            format!(
                " ({cut} cut at their first {} pages or {} KB of addresses)",
                super::paths::MOST_PATH_PAGES,
                super::paths::MOST_PATH_BYTES / 1024
            )
        } else {
            String::new()
        };
        let empty = if visits < drawn {
            format!(
                "; {} of them held no page to send but the login's",
                group_thousands((drawn - visits) as i64)
            )
        } else {
            String::new()
        };
        format!(
            "{} of the log's {} sessions, drawn evenly from the whole log{cut}{empty}; each page pattern's share of their pages{} within {:.1} points of the log's",
            group_thousands(*drawn as i64),
            group_thousands(*of as i64),
            if *login_pages > 0 {
                " (the login's among them)"
            } else {
                ""
            },
            100.0 * gap
        )
    }
}

impl MixWhy {
    /// Why the pages are drawn from the mix.
    pub fn words(&self) -> String {
        match self {
            MixWhy::Asked => "as asked (--next-page mix)".into(),
            MixWhy::NotApart { quick, cookie } => format!(
                "the log could not tell its users apart: {:.0}% of its pages came within a second of their session's page before (several users behind one {}); --next-page sessions walks them anyway{}",
                100.0 * quick,
                if *cookie { "session cookie" } else { "address and browser" },
                if *cookie {
                    ""
                } else {
                    ", and with the session cookie in the log's format, --session-cookie NAME tells them apart"
                }
            ),
            MixWhy::NoVisits => {
                "no session of the log had a page to send but the login's".into()
            }
        }
    }
}

/// How a user chooses its next page, as the file's header says it.
fn walk_comments(walk: &Walk, out: &mut String) {
    let text = match walk {
        Walk::Sessions { login_pages, .. } => format!(
            "Every user walks the log's sessions: it takes the next visit of the data file (a session of the log, its pages in the order they were read) as a new visitor (no cookies, an empty cache), one page an iteration, then the next visit. Between pages it reads for a time drawn from the log-normal fitted to the log's reading times. The visits are {}.{}",
            walk.sample_words(),
            if *login_pages > 0 {
                format!(" Each visit logs in first; the login's own pages ({login_pages} of the visits' pages, the first of each in a visit) are sent by its steps, not as rows.")
            } else {
                String::new()
            }
        ),
        Walk::Mix(why) => format!(
            "Every iteration of a user is one page of the log: the next row of the data file, whose rows hold the pages in the log's proportions; the user then reads for a time drawn from the log-normal fitted to the log's reading times. The log's sessions are not walked: {}.",
            why.words()
        ),
    };
    for line in wrapped(&text, 88) {
        let _ = writeln!(out, "# {line}");
    }
}

/// `text` in lines of at most `width` characters, broken at spaces.
fn wrapped(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// The comments on what the workload leaves out: patterns not sent and
/// why, requests of sent patterns that are not sent, pages' resources.
fn left_out_comments(
    model: &TrafficModel,
    page_loads: bool,
    walk: &Walk,
    fates: &[(String, u64, Fate)],
    out: &mut String,
) {
    let left: Vec<&(String, u64, Fate)> = fates.iter().filter(|f| !f.2.is_sent()).collect();
    if !left.is_empty() {
        let share = |n: u64| 100.0 * n as f64 / model.mix_requests().max(1) as f64;
        let _ = writeln!(
            out,
            "# Left out ({:.1}% of the log's page requests):",
            share(left.iter().map(|f| f.1).sum())
        );
        let unsampled = match walk {
            Walk::Sessions { drawn, of, .. } => {
                format!("in none of the {drawn} sessions drawn from the log's {of}")
            }
            Walk::Mix(_) => String::new(),
        };
        for (pattern, n, fate) in left.iter().take(20) {
            let why = match fate {
                Fate::Unsampled => unsampled.as_str(),
                Fate::ByLogin => "",
                Fate::NotReplayable => {
                    "no GET answered 2xx or 304 (a form sent, a redirect, an error)"
                }
                Fate::Secret => {
                    "every request carried a token, a session key or bytes outside ASCII"
                }
                Fate::TooLong => "every request was longer than 8 KB",
                Fate::LoadedByPages => "loaded by pages (page_loads fetches it)",
                Fate::Rare => "too rare for one row in 1000",
                Fate::Folded => {
                    "the log's rarer patterns, folded together past 2,000 distinct ones"
                }
                Fate::Sent { .. } => "",
            };
            let _ = writeln!(out, "#   {:>5.1}%  {}: {why}", share(*n), comment(pattern));
        }
        if left.len() > 20 {
            let _ = writeln!(out, "#   and {} more", left.len() - 20);
        }
    }
    // Requests of sent patterns that are not sent (a login's POST shares
    // its page's pattern).
    let unsent: Vec<&PagePattern> = model
        .mix
        .iter()
        .filter(|p| p.count > p.replayable && p.replayable > 0)
        .filter(|p| {
            fates
                .iter()
                .any(|f| f.0 == p.pattern && matches!(f.2, Fate::Sent { .. }))
        })
        .collect();
    if !unsent.is_empty() {
        let _ = writeln!(
            out,
            "# Not sent, though their pattern is: requests that were no GET answered 2xx or 304\n\
             # (a form sent, a redirect, an error):"
        );
        for page in unsent.iter().take(5) {
            let _ = writeln!(
                out,
                "#   {:>7}  {}",
                page.count - page.replayable,
                comment(&page.pattern)
            );
        }
    }
    if page_loads {
        if let Some(text) = model.page_view_cost().not_learned_text() {
            let _ = writeln!(
                out,
                "# Not learned from the log (sent only where a page's HTML names them): {}.",
                comment(&text)
            );
        }
    }
    if !model.loaded_by_pages.is_empty() {
        let loaded: u64 = model.loaded_by_pages.iter().map(|l| l.1).sum();
        let _ = writeln!(
            out,
            "# Not pages: {loaded} requests of {} patterns named their session's page as\n\
             # referer within 2 s of it: its resources. {} Most asked:",
            model.loaded_by_pages.len(),
            if page_loads {
                "Pages load what their HTML\n# names, and what the log's browsers fetched with them (also_loads)."
            } else {
                "They are not sent."
            }
        );
        for (pattern, n) in model.loaded_by_pages.iter().take(5) {
            let _ = writeln!(out, "#   {n:>7}  {}", comment(pattern));
        }
    }
}

/// The scenario's settings: its name, defaults, data and accounts, the
/// reading time, the peak and the profile at it.
fn settings_text(
    model: &TrafficModel,
    source: &LogWorkloadInput<'_>,
    shape: Shape,
    peak: Option<&Peak>,
    logs: &str,
    out: &mut String,
) {
    let _ = writeln!(out, "name: {}", quote(&format!("users of {logs}")));
    let mut defaults = String::new();
    if let Some(target) = source.target {
        let _ = writeln!(defaults, "  base_url: {}", quote(target));
    }
    if shape.page_loads {
        let _ = writeln!(
            defaults,
            "  page_loads: true   # {:.1}% of the log's requests were pages' style sheets, scripts and images",
            100.0 * model.static_share()
        );
    }
    if source.target.is_none() {
        out.push_str(
            "# base_url: the server (run with --target URL, or write it under defaults:)\n",
        );
    }
    if !defaults.is_empty() {
        out.push_str("defaults:\n");
        out.push_str(&defaults);
    }
    let visits = shape.visits;
    let _ = writeln!(
        out,
        "data:\n  file: {}\n  columns: [{}page, path{}\n  share: all\n  on_end: recycle{}",
        quote(source.pages_file),
        if visits { "visit, " } else { "" },
        if shape.own_column {
            ", also]   # also: each page's own resources, learned from the log"
        } else {
            "]"
        },
        if visits {
            "\n  visits: visit   # a visit's rows are taken whole by one user, as a new visitor"
        } else {
            ""
        }
    );
    if let Some(login) = source.login.filter(|l| !l.rows.is_empty()) {
        let columns: Vec<String> = login.columns.iter().map(|c| quote(c)).collect();
        let _ = writeln!(
            out,
            "accounts:             # {} accounts of {}, with their passwords (readable by you only): user n logs in with row n\n  file: {}\n  columns: [{}]",
            login.rows.len(),
            comment(&login.file),
            quote(source.accounts_file),
            columns.join(", ")
        );
    }
    if let Some(mean) = model.think_mean_s() {
        let sd = mean * (model.think_log_sd.powi(2).exp() - 1.0).sqrt();
        let _ = writeln!(
            out,
            "think: lognormal:{}ms,{}ms   # the log's reading time: median {:.1} s, σ {:.2} of its logarithm",
            (mean * 1000.0).round() as u64,
            (sd * 1000.0).round() as u64,
            model.think_log_mean.exp(),
            model.think_log_sd
        );
    }
    if let Some(peak) = peak {
        let _ = writeln!(
            out,
            "peak:                # the log's busiest minute, as users: its pages read a second × the mean reading time{}\n  minute: {}\n  pages: {}\n  users: {}",
            if peak.sent_share < 1.0 {
                format!(
                    ", × {:.1}% (the share of its pages this workload sends)",
                    100.0 * peak.sent_share
                )
            } else {
                String::new()
            },
            quote(&peak.minute),
            peak.pages,
            peak.users
        );
        let _ = writeln!(
            out,
            "profile:\n  model: closed\n  users: {}\n  ramp_up: 1m\n  duration: 10m",
            peak.users
        );
    }
}

/// The steps: the login once (with `--login`), then one step per page
/// pattern, each taken when its row of the data file names it; with page
/// loads, each also loads what the log's browsers fetched with it.
fn steps_text(
    source: &LogWorkloadInput<'_>,
    kept: &[(usize, &PagePattern)],
    learned: Option<&Learned>,
    shape: Shape,
    out: &mut String,
) {
    let own_column = shape.own_column;
    out.push_str("steps:\n");
    if let Some(login) = source.login {
        let _ = writeln!(
            out,
            "  - once: true   # {}: {}\n    steps:",
            comment(&login.file),
            if shape.visits {
                "each visit logs in once, before its first page (a new visitor)"
            } else {
                "each user logs in once, before its first page"
            }
        );
        let also = |pattern: &str| -> Vec<String> {
            learned
                .map(|l| l.for_pattern(pattern))
                .unwrap_or_default()
                .iter()
                .take(MOST_ALSO_LOADS)
                .map(|r| r.target.clone())
                .collect()
        };
        for line in &login.steps_with(also) {
            if line.trim().is_empty() {
                out.push('\n');
            } else {
                let _ = writeln!(out, "      {line}");
            }
        }
    }
    for (i, (rows, page)) in kept.iter().enumerate() {
        let _ = writeln!(
            out,
            "  - label: {}   # {} rows of {}\n    path: \"${{path}}\"\n    if: {{var: page, equals: \"{}\"}}",
            quote(&page.pattern),
            rows,
            shape.rows,
            i + 1
        );
        let also = learned
            .map(|l| l.for_pattern(&page.pattern))
            .unwrap_or_default();
        if also.is_empty() && !own_column {
            continue;
        }
        let _ = writeln!(
            out,
            "    also_loads:   # fetched with it in the log (named it as referer) by at least half its sessions that could: what its scripts ask for, and what its HTML names"
        );
        if own_column {
            let _ = writeln!(
                out,
                "      - \"${{also}}\"   # the page's own (the data file's column also)"
            );
        }
        for resource in also.iter().take(MOST_ALSO_LOADS) {
            let _ = writeln!(
                out,
                "      - {}   # {:.0}% of its sessions",
                quote(&resource.target),
                100.0 * resource.share
            );
        }
    }
}

/// Text for a comment: on one line, control characters shown as `?`.
fn comment(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 300 sessions a minute apart, each reading 5 pages 10 s apart (the
    /// course 2 of 5, the front page 2, a forum 1), then logging out with
    /// its sesskey, sending a form and sending a form to the forum.
    fn model() -> TrafficModel {
        use super::super::model::{SessionKey, IDLE_GAP_MS};
        use headroom_import::access_log::format::LogEntry;
        let mut entries: Vec<(i64, String, String, &str, u16)> = Vec::new();
        for session in 0..300i64 {
            let start = session * 60_000;
            let address = format!("10.0.{}.{}", session / 256, session % 256);
            let pages = [
                format!("/course/view.php?id={}", session % 7),
                "/".to_string(),
                format!("/course/view.php?id={}", session % 3),
                "/".to_string(),
                format!("/mod/forum/view.php?id={}", session % 5),
            ];
            for (i, page) in pages.into_iter().enumerate() {
                entries.push((start + i as i64 * 10_000, address.clone(), page, "GET", 200));
            }
            let end = start + 50_000;
            entries.push((
                end,
                address.clone(),
                "/login/logout.php?sesskey=Zx81".into(),
                "GET",
                200,
            ));
            // (A GET after it, with its referer, would be its redirect's.)
            entries.push((
                end + 1,
                address.clone(),
                "/mod/forum/post.php".into(),
                "POST",
                303,
            ));
            // A form sent to a page that is sent: said, not sent.
            entries.push((
                end + 2,
                address,
                "/mod/forum/view.php?id=1".into(),
                "POST",
                303,
            ));
        }
        entries.sort_by_key(|e| e.0);
        let span = headroom_import::access_log::read::LogSpan {
            first_minute: entries[0].0.div_euclid(60_000),
            last_minute: entries[entries.len() - 1].0.div_euclid(60_000),
        };
        let mut builder =
            super::super::model::TrafficBuilder::new(SessionKey::ClientAndAgent, IDLE_GAP_MS, span);
        for (time, address, target, method, status) in &entries {
            builder.add(&LogEntry {
                time_ms: *time,
                client: Some(address.as_bytes()),
                method: method.as_bytes(),
                target: target.as_bytes(),
                status: *status,
                bytes: 100,
                referer: None,
                user_agent: Some(b"Firefox"),
                request_time_ms: None,
                cookie: None,
            });
        }
        builder.finish()
    }

    /// The model's workload, as from-log writes it for the log
    /// `access.log` (`--target http://127.0.0.1:8080`).
    fn written(model: &TrafficModel, next_page: NextPage) -> LogWorkload {
        workload(
            model,
            &LogWorkloadInput {
                logs: &["access.log".to_string()],
                pages_file: "pages.csv",
                accounts_file: "accounts.csv",
                target: Some("http://127.0.0.1:8080"),
                login: None,
                next_page,
            },
        )
    }

    #[test]
    fn a_logs_pages_become_rows_in_their_shares_and_the_rest_is_said() {
        let model = model();
        let written = written(&model, NextPage::Mix);
        let fate = |pattern: &str| {
            written
                .fates
                .iter()
                .find(|f| f.0 == pattern)
                .map(|f| f.2.clone())
                .unwrap()
        };
        assert_eq!(fate("/course/view.php?id=*"), Fate::Sent { rows: 400 });
        assert_eq!(fate("/"), Fate::Sent { rows: 400 });
        assert_eq!(fate("/mod/forum/view.php?id=*"), Fate::Sent { rows: 200 });
        assert_eq!(fate("/mod/forum/post.php"), Fate::NotReplayable);
        assert_eq!(fate("/login/logout.php?sesskey=*"), Fate::Secret);
        // Rows in the log's shares (the front page first: ties go by
        // text), the course's ids in theirs: id 0 is 143 of its 600 views.
        let rows: Vec<&str> = written.pages_csv.lines().collect();
        assert_eq!(rows.len(), 1000);
        let share = |prefix: &str| rows.iter().filter(|r| r.starts_with(prefix)).count();
        assert_eq!(rows.iter().filter(|r| **r == "1,/").count(), 400);
        assert_eq!(share("2,/course/view.php?id="), 400);
        let id0 = share("2,/course/view.php?id=0") as f64;
        assert!((id0 - 400.0 * 143.0 / 600.0).abs() <= 1.0, "{id0}");
        assert!(!written.pages_csv.contains("sesskey") && !written.scenario.contains("10.0."));
        assert!(
            written.scenario.contains(
                "# (a form sent, a redirect, an error):\n#       300  /mod/forum/view.php?id=*\n"
            ),
            "{}",
            written.scenario
        );
        // Any 100 rows in a row hold each page within a row of its share.
        for start in 0..900 {
            let window = &rows[start..start + 100];
            let n = window.iter().filter(|r| r.starts_with("3,")).count();
            assert!((19..=21).contains(&n), "{start}: {n}");
        }
        // The peak: a minute holds one session's 5 pages and its logout's
        // answer; 10 s between pages: 6 pages a minute is one user reading.
        let peak = written.peak.clone().unwrap();
        assert_eq!(peak.pages, 6);
        assert!((peak.think_s - 10.0).abs() < 0.01, "{peak:?}");
        assert_eq!(peak.users, 1);
        // It reads back as a scenario.
        let dir = std::env::temp_dir().join(format!("headroom-workload-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("pages.csv"), &written.pages_csv).unwrap();
        std::fs::write(dir.join("workload.yaml"), &written.scenario).unwrap();
        let scenario =
            headroom_journey::scenario::parse_file(&dir.join("workload.yaml"), None).unwrap();
        assert_eq!(scenario.requests.len(), 3);
        assert_eq!(scenario.peak.unwrap().users, 1);
        assert_eq!(scenario.data.unwrap().rows.len(), 1000);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Walking the log's sessions: a visit each, its pages in the order the
    /// log's user read them, the secret and the forms left out.
    #[test]
    fn users_walk_the_logs_sessions_page_by_page() {
        let model = model();
        let written = written(&model, NextPage::Sessions);
        assert_eq!(
            written.walk,
            Walk::Sessions {
                visits: 300,
                drawn: 300,
                of: 300,
                cut: 0,
                gap: 0.0,
                login_pages: 0
            }
        );
        let rows: Vec<&str> = written.pages_csv.lines().collect();
        assert_eq!(rows.len(), 1500);
        // Patterns numbered in the mix's order: the front page, the course,
        // the forum. Session 8 read course 1, /, course 2, /, forum 3.
        assert_eq!(
            rows[40..45],
            [
                "9,2,/course/view.php?id=1",
                "9,1,/",
                "9,2,/course/view.php?id=2",
                "9,1,/",
                "9,3,/mod/forum/view.php?id=3"
            ]
        );
        assert!(
            written.scenario.contains(
                "  columns: [visit, page, path]\n  share: all\n  on_end: recycle\n  visits: visit"
            ),
            "{}",
            written.scenario
        );
        assert!(!written.pages_csv.contains("sesskey"));
        let dir =
            std::env::temp_dir().join(format!("headroom-workload-visits-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("pages.csv"), &written.pages_csv).unwrap();
        std::fs::write(dir.join("workload.yaml"), &written.scenario).unwrap();
        let scenario =
            headroom_journey::scenario::parse_file(&dir.join("workload.yaml"), None).unwrap();
        assert_eq!(scenario.data.unwrap().visits.unwrap().count(), 300);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// With a login that GETs the front page, each visit's first front
    /// page is the login's: not a row, but counted as sent (a fate of its
    /// own when the login sends all of a pattern's).
    #[test]
    fn a_visits_login_sends_its_own_page_once() {
        let model = model();
        let login = LoginJourney {
            file: "login.yaml".into(),
            steps: vec!["  - label: front\n    path: /".into()],
            columns: Vec::new(),
            rows: Vec::new(),
            pages: vec!["/".into(), "/mod/forum/view.php?id=3".into()],
        };
        let written = workload(
            &model,
            &LogWorkloadInput {
                logs: &["access.log".to_string()],
                pages_file: "pages.csv",
                accounts_file: "accounts.csv",
                target: None,
                login: Some(&login),
                next_page: NextPage::Auto,
            },
        );
        let Walk::Sessions {
            visits,
            gap,
            login_pages,
            ..
        } = written.walk
        else {
            panic!("{:?}", written.walk);
        };
        // 300 front pages, and the forum of 60 sessions.
        assert_eq!((visits, login_pages), (300, 360));
        assert!(gap < 1e-9, "{gap}");
        let rows: Vec<&str> = written.pages_csv.lines().collect();
        assert_eq!(rows.len(), 1500 - 360);
        // Session 8: course 1, course 2, the front page (its second); its
        // forum (id 3) the login's, as session 3's was.
        assert_eq!(
            rows[31..35],
            [
                "9,2,/course/view.php?id=1",
                "9,2,/course/view.php?id=2",
                "9,1,/",
                "10,2,/course/view.php?id=2"
            ]
        );
        assert!(written
            .fates
            .iter()
            .all(|f| !matches!(f.2, Fate::ByLogin | Fate::Unsampled)));
        assert!(
            written
                .scenario
                .contains("the login's own pages (360 of the visits' pages"),
            "{}",
            written.scenario
        );
    }
}
