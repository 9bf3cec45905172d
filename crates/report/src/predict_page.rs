//! `headroom predict --html`'s page from the prediction
//! ([`headroom_capacity::predict_text`]): its findings, cautions and each
//! host's answer and curve, drawn by [`crate::predict_html`].

use crate::predict_html::{render_prediction_report, HostCurve};
use headroom_capacity::predict_text::HostPredictions;

/// The page of the prediction.
pub fn prediction_page(predicted: &HostPredictions) -> String {
    let answers = predicted.answers();
    let hosts: Vec<HostCurve<'_>> = predicted
        .predictions
        .iter()
        .zip(&answers)
        .map(|((host, p), answer)| HostCurve {
            name: &host.name,
            answer,
            notes: &host.notes,
            prediction: p,
        })
        .collect();
    render_prediction_report(
        &predicted.server,
        &predicted.fits,
        &predicted.itself,
        &predicted.cautions(),
        &predicted.findings(),
        &hosts,
    )
}
