//! A bench bundle's page with the published reference figures beside the
//! host's own, for `headroom bench` and `headroom report`.

use crate::bench_html::{render_bench_report, ReferenceRow};
use headroom_bundle::bench::BenchBundle;

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
