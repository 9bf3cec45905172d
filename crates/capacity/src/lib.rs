//! The capacity search, whole: which levels to run, how long each warms up
//! and measures, when a level is measured enough, and the answer.
//!
//! Where each job lives:
//! - [`spec`]: a search as data ([`spec::CapacitySpec`]): each level's run
//!   spec and the search's settings as given; what the search derives from
//!   it (the target, the think it plans with) and each level's run.
//! - [`search`]: the driver. [`search::SearchPlan`] turns the search's
//!   [`search::Settings`] into level timings and capacity.json's setup;
//!   [`search::SearchPlan::run`] climbs the ladder, running each level through
//!   the caller's [`search::LevelRunner`] (the CLI assembles the run), and
//!   returns the answer.
//! - [`ladder`]: the next level and why (plain and aimed ladders,
//!   bisection, `--confirm`), and Little's law both ways.
//! - [`timing`]: a level's warm-up and measurement times, raised to fit
//!   the users' think time.
//! - [`watch`]: one level second by second: the end of its warm-up and of
//!   its measurement; [`sequential`] holds the statistics of each look
//!   (steady, settled, near the target).
//! - [`level_run`]: one level's run to its end or the user's stop.
//! - [`level`]: a level's figures read back from its bundle.
//! - [`answer`]: the answer from the levels: capacity, knee, bottleneck,
//!   validity, `--confirm`'s range, `--fail-if`.
//! - [`lesson`]: a lesson level's two phases (arrival, reading), judged each.
//! - [`page_cost`]: what a page view costs the server, from short non-stop
//!   levels before a lesson search's first lesson; [`lesson_model`]: a
//!   lesson start simulated from it, whose answer aims the first lesson.
//! - [`think`]: the think per request a search plans with, and its words.
//! - [`who`]: what one of the search's users is, in words for the answer.
//!
//! capacity.json's types and their reading and writing are
//! `headroom_bundle::capacity`'s; the words, tables and page are
//! `headroom_report`'s; the flags and the terminal are the CLI's.

pub mod answer;
pub mod error;
pub mod ladder;
pub mod lesson;
pub mod lesson_aim;
pub mod lesson_model;
pub mod level;
pub mod level_run;
pub mod level_setup;
pub mod page_cost;
pub mod predict;
pub mod predict_text;
pub mod rest;
pub mod search;
pub mod sequential;
pub mod spec;
pub mod think;
pub mod timing;
pub mod watch;
pub mod who;
