//! A bench bundle's page with the published reference figures beside the
//! host's own, for `headroom bench` and `headroom report`; `headroom
//! bench`'s text.

use crate::bench_html::{render_bench_report, ReferenceRow};
use headroom_bundle::bench::BenchBundle;
use std::path::Path;

/// The published figures with the host's own where it measured the same.
pub fn reference_rows(b: &BenchBundle) -> Vec<ReferenceRow> {
    headroom_bench::reference::REFERENCES
        .iter()
        .map(|r| ReferenceRow {
            machine: r.machine.into(),
            what: r.what.into(),
            value: r.value,
            unit: r.unit.into(),
            method: r.method.into(),
            source: r.source.into(),
            host: headroom_bench::reference::host_value(b, r),
        })
        .collect()
}

/// The bundle's page: where the host stands and the reference figures.
pub fn bench_page(b: &BenchBundle) -> String {
    let position = headroom_bench::reference::position(b);
    render_bench_report(b, &position, &reference_rows(b))
}

/// `headroom bench`'s text: the table and where the host stands, then
/// where the bundle in `out` and its page are when both were written.
pub fn bench_text(b: &BenchBundle, out: &Path, saved: bool) -> String {
    let position = headroom_bench::reference::position(b);
    let mut text = crate::bench::render_text(b, &position);
    if saved {
        text.push_str(&format!(
            "\nbundle: {}  report: {}\n",
            out.join(headroom_bundle::bench::BENCH).display(),
            out.join("report.html").display()
        ));
    }
    text
}
