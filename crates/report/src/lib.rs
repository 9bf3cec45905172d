//! Renderings of a run: the terminal summary (siege-style block and a
//! per-label table), the live progress line, and the `--json` document.
//! Renderers take plain data and return text; printing is the caller's job.

pub mod json;
pub mod live;
pub mod terminal;

pub use json::{json_summary, ReportInput};
pub use live::live_line;
pub use terminal::render_summary;
