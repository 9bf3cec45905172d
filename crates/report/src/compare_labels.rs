//! Which labels runs share: a comparison of runs that share none compares
//! only TOTAL, a TOTAL over different journeys, and says so.

use crate::run_data::RunData;

/// The warning when two or more runs have labels but share none.
pub fn unshared_labels(runs: &[RunData]) -> Option<String> {
    let named: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            let mut labels = r.labels();
            labels.retain(|l| l != headroom_bundle::TOTAL_LABEL);
            labels
        })
        .collect();
    let shared = named.iter().skip(1).fold(
        named.first().cloned().unwrap_or_default(),
        |mut common, labels| {
            common.retain(|l| labels.contains(l));
            common
        },
    );
    if !shared.is_empty() || named.iter().filter(|l| !l.is_empty()).count() < 2 {
        return None;
    }
    let lists: Vec<String> = runs
        .iter()
        .zip(&named)
        .map(|(r, labels)| {
            format!(
                "{}: {}",
                r.name,
                if labels.is_empty() {
                    "TOTAL only".into()
                } else {
                    labels.join(", ")
                }
            )
        })
        .collect();
    Some(format!(
        "the runs share no label ({}): only TOTAL is compared, and a TOTAL over \
         different journeys compares different work",
        lists.join("; ")
    ))
}
