//! Importers: what users already have, as headroom scenario files.
//! [`har`] turns a browser's recording (HAR) into a journey: [`har::read`]
//! reads the entries, [`har::steps`] keeps the page requests and merges
//! redirect hops, [`correlate`] finds the values the server sent that the
//! browser sent back (where [`held`] indexes what each response holds, and
//! [`multipart`] reads multipart bodies) and the values the user typed,
//! its secrets among them, and [`emit`] writes
//! the scenario's YAML. [`recording`] runs that pipeline on a HAR file
//! (with [`accounts`] for the data file of the typed account) and
//! [`har_summary`] words what it did. [`jmx`] converts a JMeter test plan.
//! [`access_log`] reads a web server's access log.

pub mod access_log;
pub mod accounts;
pub mod correlate;
pub mod emit;
pub mod har;
pub mod har_summary;
pub mod held;
pub mod jmx;
pub mod multipart;
pub mod recording;

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{0}")]
    Invalid(String),
}
