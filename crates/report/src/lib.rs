//! Renderings of a run: the terminal summary (siege-style block and a
//! per-label table), the live progress line, the `--json` document and the
//! `--junit` XML.
//! Renderers take plain data and return text; printing is the caller's job.

pub mod bench;
pub mod bench_compare;
pub mod bench_html;
pub mod bench_page;
pub mod benches_html;
pub mod capacity;
pub mod capacity_html;
pub mod capacity_live;
pub mod charts;
pub mod checks;
pub mod compare;
pub mod compare_html;
pub mod compare_input;
pub mod compare_labels;
pub mod demo_text;
pub mod experiment_html;
pub mod first_sentence;
pub mod fleet;
pub mod html;
pub mod json;
pub mod junit;
pub mod live;
pub mod merge_text;
pub mod predict_html;
pub mod predict_page;
pub mod report_input;
pub mod run_data;
pub mod terminal;
pub mod traffic_html;

pub use json::{json_summary, ReportInput};
pub use junit::junit_xml;
pub use live::live_line;
pub use terminal::render_summary;
