//! `headroom predict SEARCH --for HOST...`: the flags as a
//! [`PredictAsk`]; the prediction, its words and its JSON are
//! [`headroom_capacity::predict_text`]'s, the page
//! [`headroom_report::predict_page`]'s; this module prints them.

use crate::args::PredictArgs;
use headroom_capacity::predict_text::{predict_hosts, HostPredictions, PredictAsk};
use headroom_report::predict_page::prediction_page;
use std::process::ExitCode;

pub fn run(args: PredictArgs) -> ExitCode {
    match predict(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("headroom predict: {e}");
            ExitCode::FAILURE
        }
    }
}

fn predict(args: &PredictArgs) -> Result<(), String> {
    let predicted = predict_hosts(&PredictAsk {
        search: &args.search,
        hosts: &args.hosts,
        bench_here: args.bench_here.as_deref(),
        server_cpus: args.server_cpus,
        pool: args.pool,
    })?;
    if let Some(path) = &args.html {
        write_html(path, &predicted)?;
    }
    if args.json {
        println!("{}", predicted.json());
    } else {
        for line in predicted.describe() {
            println!("{line}");
        }
    }
    Ok(())
}

/// The page of the prediction, written to `path`.
fn write_html(path: &std::path::Path, predicted: &HostPredictions) -> Result<(), String> {
    std::fs::write(path, prediction_page(predicted)).map_err(|e| {
        format!(
            "cannot write the page to {}: {e} (is its directory there and writable?)",
            path.display()
        )
    })?;
    eprintln!("the page: {}", path.display());
    Ok(())
}
