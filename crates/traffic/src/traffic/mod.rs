//! A server's traffic, from its access log, as a model of its users:
//! [`pattern`] folds a request into the page it asked for, [`model`] counts
//! sessions, their arrivals, pages, reading times and the pages' mix;
//! [`paths`] keeps a sample of the sessions as they walked from page to page.

pub mod learned;
pub mod login;
pub mod model;
pub mod pages;
pub mod paths;
pub mod pattern;
pub mod workload;
pub mod yaml_text;
