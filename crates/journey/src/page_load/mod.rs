//! Page loads: a step fetched as a browser does. [`nesting`] parses the
//! page with its nesting bounded; [`resources`] reads which
//! resources a page and its style sheets name ([`css`] reads a style
//! sheet, [`sheets`] shares what it read among a worker thread's users);
//! [`cache`] is a user's browser cache that decides which of them are asked
//! for again. The journey runner's `scenario::page` fetches them.

pub mod cache;
pub mod css;
pub mod layout;
pub mod nesting;
pub mod resources;
pub mod sheets;
