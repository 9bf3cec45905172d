//! `headroom replay LOG... --target URL`: an access log's requests sent
//! again at their logged times. Flags → spec ([`crate::settings`]) → run
//! ([`headroom_load::assemble`]) → report, then how the replayed statuses
//! compare with the logged ones.

use crate::args::ReplayArgs;
use crate::execute::{execute, Failure};
use headroom_load::engine::Workload;
use headroom_traffic::replay::ReplayPlan;
use std::cell::RefCell;
use std::process::ExitCode;
use std::sync::Arc;

pub fn run(args: ReplayArgs) -> ExitCode {
    let kept: RefCell<Option<Arc<ReplayPlan>>> = RefCell::new(None);
    let code = execute(&args.common, async {
        let spec = crate::settings::replay_spec(&args)?;
        let run = headroom_load::assemble::assemble(&spec)
            .await
            .map_err(Failure::assembly)?;
        if let Workload::Replay { plan, .. } = &run.plan.workload {
            *kept.borrow_mut() = Some(plan.clone());
        }
        Ok(run)
    });
    if let Some(plan) = kept.borrow().as_ref() {
        let statuses = plan.statuses();
        let sent = statuses.same + statuses.changed.values().sum::<u64>();
        if !args.common.quiet && !args.common.json && sent > 0 {
            eprintln!(
                "headroom: replayed statuses: {} (replay.csv in the bundle has each request's)",
                statuses.describe()
            );
        }
    }
    code
}
