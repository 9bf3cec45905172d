//! Page loads: a step fetched as a browser does. [`resources`] reads which
//! resources a page and its style sheets name; [`cache`] is a user's
//! browser cache that decides which of them are asked for again.

pub mod cache;
pub mod resources;
