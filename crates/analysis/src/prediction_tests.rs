use super::*;

const SAME: HostScale = HostScale {
    cpu_speed: 1.0,
    cpus: 1.0,
    disk_speed: 1.0,
    disk_iops: None,
};

/// Demands known exactly: CPU, disk and delay, s.
fn known(cpu_s: f64, disk_s: f64, delay_s: f64) -> Demands {
    Demands {
        cpu_s,
        cpu_fit: CpuFit::Busy,
        busiest_share: 1.0,
        cpu_by_share: Vec::new(),
        cpu_range_s: [cpu_s, cpu_s],
        disk_s,
        disk_ops: 0.0,
        disk_ops_spread: None,
        delay_s,
        variability: 1.0,
        levels: 0,
        shape_users: 0,
    }
}

/// Levels of a known server (10 ms of CPU on one core, 5 ms of delay,
/// 1 s of think), as a search would measure them.
fn measured(users: &[u32]) -> Vec<LevelLoad> {
    measured_from(&known(0.010, 0.0, 0.005), users)
}

fn measured_from(truth: &Demands, users: &[u32]) -> Vec<LevelLoad> {
    let model = curve(truth, truth.cpu_s, &SAME, 1.0, None, 300).unwrap();
    users
        .iter()
        .map(|&n| {
            let p = &model.points[n as usize - 1];
            LevelLoad {
                users: n,
                throughput: p.throughput,
                response_s: p.response_s,
                think_s: 1.0,
                // The CPU's busy share, as the model holds it.
                cpu_busy: p.utilization[0],
                disk_busy: None,
                disk_iops: None,
                met: true,
            }
        })
        .collect()
}

#[test]
fn the_demands_of_a_known_server_are_found_and_its_levels_reproduced() {
    let levels = measured(&[5, 40, 80, 120]);
    let d = demands(&levels, 1.0).unwrap();
    assert!((d.cpu_s - 0.010).abs() < 1e-9, "{d:?}");
    // 80 and 120 users ran the CPU 70% full or more.
    assert_eq!(d.cpu_fit, CpuFit::Busy);
    assert!(
        d.cpu_by_share.iter().all(|p| (p.1 - 1.0).abs() < 1e-9),
        "{d:?}"
    );
    // The light levels' (5 and 40 users: the CPU 5% and 38% busy) time
    // beyond the model's CPU and its queue: the delay; their queueing
    // exponential service's.
    assert!((d.delay_s - 0.005).abs() < 0.0001, "{d:?}");
    assert_eq!(d.variability, 1.0);
    assert_eq!(d.shape_users, 40);
    let points = curve(&d, d.cpu_s, &SAME, 1.0, None, 120).unwrap();
    for level in &levels {
        let model = &points.points[level.users as usize - 1];
        let error = model.response_s / level.response_s - 1.0;
        assert!(error.abs() < 0.1, "{} users: {error}", level.users);
    }
}

#[test]
fn a_cpu_demand_that_falls_as_the_cpu_gets_busy_and_a_calm_queue_are_found() {
    // 4 ms a request on a full CPU, 8 ms on an idle one (in a straight
    // line between), 1 ms of delay, a quarter of exponential service's
    // queueing.
    let truth = Demands {
        cpu_by_share: vec![(0.0, 2.0), (1.0, 1.0)],
        variability: 0.25,
        ..known(0.004, 0.0, 0.001)
    };
    let levels = measured_from(&truth, &[5, 40, 80, 120, 160, 200, 260]);
    let d = demands(&levels, 1.0).unwrap();
    // The busy share the levels carry is the one their demand came from
    // with one user fewer: the figures are close, not exact. A full CPU's
    // is fitted over the levels at 70% and more, whose demand is a little
    // more (4.4 ms at 78%).
    assert!((d.cpu_at(d.cpu_s, 1.0) - 0.004).abs() < 0.0004, "{d:?}");
    assert!((d.cpu_at(d.cpu_s, 0.0) - 0.008).abs() < 0.0005, "{d:?}");
    assert!((d.delay_s - 0.001).abs() < 0.0005, "{d:?}");
    assert!((d.variability - 0.25).abs() < 0.11, "{d:?}");
    // Below the knee the model is the levels.
    let model = curve(&d, d.cpu_s, &SAME, 1.0, None, 300).unwrap();
    for level in levels.iter().filter(|l| l.cpu_busy < CALM) {
        let p = &model.points[level.users as usize - 1];
        let error = p.response_s / level.response_s - 1.0;
        assert!(error.abs() < 0.05, "{} users: {error}", level.users);
    }
    // Light, a request takes the idle CPU's 8 ms and the delay; the most
    // the CPU serves is at the full CPU's 4 ms: 250 a second.
    assert!((model.points[0].response_s - 0.009).abs() < 0.0005);
    assert!((model.unqueued_s[0] - 0.009).abs() < 0.0005);
    let most = model.points.last().unwrap().throughput;
    assert!(most > 230.0 && most <= 252.0, "{most}");
    // One figure for the CPU and exponential queueing are further from
    // the levels.
    let plain = Demands {
        cpu_by_share: Vec::new(),
        variability: 1.0,
        ..d.clone()
    };
    let plain_model = curve(&plain, d.cpu_s, &SAME, 1.0, None, 300).unwrap();
    let worst = |m: &Curve| {
        levels
            .iter()
            .filter(|l| l.cpu_busy < CALM)
            .map(|l| (m.points[l.users as usize - 1].response_s / l.response_s - 1.0).abs())
            .fold(0.0, f64::max)
    };
    assert!(worst(&plain_model) > 2.0 * worst(&model));
}

#[test]
fn a_request_s_cpu_between_the_busy_shares_measured_is_on_the_line_between() {
    let d = Demands {
        cpu_by_share: vec![(0.1, 2.0), (0.5, 1.5), (0.9, 1.0)],
        ..known(0.002, 0.0, 0.0)
    };
    assert!((d.cpu_at(0.002, 0.0) - 0.004).abs() < 1e-12);
    assert!((d.cpu_at(0.002, 0.3) - 0.0035).abs() < 1e-12);
    assert!((d.cpu_at(0.002, 0.7) - 0.0025).abs() < 1e-12);
    assert!((d.cpu_at(0.002, 1.0) - 0.002).abs() < 1e-12);
    assert!((known(0.002, 0.0, 0.0).cpu_at(0.002, 0.5) - 0.002).abs() < 1e-12);
}

#[test]
fn too_few_levels_or_no_cpu_is_said() {
    let levels = measured(&[5]);
    assert_eq!(demands(&levels, 1.0), Err(PredictionError::TooFewLevels(1)));
    let mut idle = measured(&[5, 10]);
    for l in &mut idle {
        l.cpu_busy = 0.0;
    }
    assert_eq!(demands(&idle, 1.0), Err(PredictionError::NoCpu));
}

#[test]
fn a_cpu_demand_from_levels_below_the_busy_share_says_what_it_rests_on() {
    // 10 ms a request, the CPU at most 20% busy: no level ran it 70% full.
    let levels = measured(&[5, 10, 20]);
    let d = demands(&levels, 1.0).unwrap();
    assert_eq!(d.cpu_fit, CpuFit::Met, "{d:?}");
    assert!(
        (d.busiest_share - levels[2].cpu_busy).abs() < 1e-12,
        "{d:?}"
    );
    assert!(d.busiest_share < 0.25, "{d:?}");
    // Fewer than two met the target: every level.
    let mut broke = levels.clone();
    for l in &mut broke[1..] {
        l.met = false;
    }
    assert_eq!(demands(&broke, 1.0).unwrap().cpu_fit, CpuFit::All);
    // On a server of 4 CPUs the same levels are a twentieth busy at most.
    assert!(
        (demands(&levels, 4.0).unwrap().busiest_share - levels[2].cpu_busy / 4.0).abs() < 1e-12
    );
}

#[test]
fn disk_operations_that_vary_many_fold_between_levels_are_not_the_server_s() {
    let truth = known(0.001, 0.0001, 0.0);
    let with_iops = |iops: &dyn Fn(&LevelLoad) -> f64| -> Vec<LevelLoad> {
        measured_from(&truth, &[5, 20, 40, 80])
            .into_iter()
            .map(|l| LevelLoad {
                disk_busy: Some(l.throughput * 0.0001),
                disk_iops: Some(iops(&l)),
                ..l
            })
            .collect()
    };
    // 8 a request and the machine's own 3 a second: steady enough.
    let own = demands(&with_iops(&|l| l.throughput * 8.0 + 3.0), 1.0).unwrap();
    let [(_, least), (_, most)] = own.disk_ops_spread.unwrap();
    assert!(least > 8.0 && most < 8.7, "{own:?}");
    assert!(!own.disk_ops_unsteady(), "{own:?}");
    // Another program's 4,000 a second during the 20 users' level (a
    // backup, a package update): 200 a request there, 8 elsewhere.
    let polluted = demands(
        &with_iops(&|l| l.throughput * 8.0 + if l.users == 20 { 4000.0 } else { 0.0 }),
        1.0,
    )
    .unwrap();
    let [(few, least), (many, most)] = polluted.disk_ops_spread.unwrap();
    assert_eq!(many, 20, "{polluted:?}");
    assert_ne!(few, 20, "{polluted:?}");
    assert!((least - 8.0).abs() < 1e-9 && most > 100.0, "{polluted:?}");
    assert!(polluted.disk_ops_unsteady(), "{polluted:?}");
    // Under an operation a request, a spread moves nothing worth saying.
    let cached = demands(&with_iops(&|l| if l.users == 5 { 0.0 } else { 1.0 }), 1.0).unwrap();
    assert!(!cached.disk_ops_unsteady(), "{cached:?}");
    // Levels that kept no disk operations have no spread.
    assert_eq!(
        demands(&measured(&[5, 20]), 1.0).unwrap().disk_ops_spread,
        None
    );
}

#[test]
fn a_slower_or_smaller_host_scales_the_cpu_demand() {
    let d = known(0.01, 0.002, 0.0);
    let quarter = stations(&d, 0.01, &HostScale { cpus: 0.25, ..SAME });
    assert_eq!((quarter[0].demand_s, quarter[0].servers), (0.04, 1));
    let pi = stations(
        &d,
        0.01,
        &HostScale {
            cpu_speed: 0.5,
            cpus: 4.0,
            disk_speed: 0.1,
            disk_iops: None,
        },
    );
    assert_eq!((pi[0].demand_s, pi[0].servers), (0.02, 4));
    assert!((pi[1].demand_s - 0.02).abs() < 1e-15);
    let one_and_half = stations(&d, 0.01, &HostScale { cpus: 1.5, ..SAME });
    assert_eq!(one_and_half[0].servers, 2);
    assert!((one_and_half[0].demand_s - 0.01 * 2.0 / 1.5).abs() < 1e-15);
}

#[test]
fn a_disk_given_by_its_operations_a_second_serves_a_request_in_its_operations_over_them() {
    // 40 users, 1 s of think, 1 ms of CPU; 8 disk operations a request
    // measured on a disk that made them in 0.1 ms together.
    let truth = known(0.001, 0.0001, 0.0);
    let levels: Vec<LevelLoad> = measured_from(&truth, &[5, 20, 40, 80])
        .into_iter()
        .map(|l| LevelLoad {
            disk_busy: Some(l.throughput * 0.0001),
            // and 3 a second of the machine's own, whatever the load
            disk_iops: Some(l.throughput * 8.0 + 3.0),
            ..l
        })
        .collect();
    let d = demands(&levels, 1.0).unwrap();
    assert!((d.disk_s - 0.0001).abs() < 1e-9, "{d:?}");
    assert!((d.disk_ops - 8.0).abs() < 0.1, "{d:?}");
    // An SD card of 400 operations a second: 20 ms a request, a bound of
    // 50 requests a second whatever the users.
    let sd = HostScale {
        disk_iops: Some(400.0),
        ..SAME
    };
    let disk = &stations(&d, d.cpu_s, &sd)[1];
    assert!((disk.demand_s - d.disk_ops / 400.0).abs() < 1e-12);
    let points = curve(&d, d.cpu_s, &sd, 1.0, None, 200).unwrap().points;
    let most = points.last().unwrap();
    assert!(most.throughput <= 400.0 / d.disk_ops + 1e-9, "{most:?}");
    assert!(most.throughput > 0.95 * 400.0 / d.disk_ops, "{most:?}");
    assert!(most.utilization[1] > most.utilization[0]);
    // 8 operations one after another queue (1 + 1/8) / 2 of one
    // exponential operation's; under one, or unmeasured, as exponential.
    assert!((disk_variability(d.disk_ops) - (1.0 + 1.0 / d.disk_ops) / 2.0).abs() < 1e-12);
    assert_eq!(disk_variability(8.0), 0.5625);
    assert_eq!(disk_variability(0.0), 1.0);
    // Without the disk's operations the measured disk's time is scaled.
    let scaled = HostScale {
        disk_speed: 0.5,
        ..SAME
    };
    assert!((stations(&d, d.cpu_s, &scaled)[1].demand_s - 0.0002).abs() < 1e-12);
}

#[test]
fn apdex_and_the_95th_percentile_of_a_shape_with_an_exponential_wait() {
    let one = Shape::new(&[0.2]).unwrap();
    // No wait: every request takes its shape's time.
    assert_eq!(one.apdex(0.5, 2.0, 0.1, 0.0), 1.0);
    assert_eq!(one.apdex(0.5, 2.0, 1.0, 0.0), 0.5);
    assert_eq!(one.apdex(0.5, 2.0, 3.0, 0.0), 0.0);
    // All wait, exponential with mean T: 1 − e⁻¹ + (e⁻¹ − e⁻⁴)/2.
    let apdex = one.apdex(0.5, 2.0, 0.0, 0.5);
    assert!((apdex - 0.806_903).abs() < 1e-6, "{apdex}");
    // Its 95th percentile: −ln 0.05 × the mean.
    let p95 = one.quantile(0.95, 0.0, 0.5);
    assert!((p95 - 2.995_732 * 0.5).abs() < 1e-6, "{p95}");
    // A shape of two times, 1/3 and 5/3 of their mean, at a base of 0.3 s:
    // 0.1 s and 0.5 s, one satisfied and one tolerating at T = 0.3 s.
    let two = Shape::new(&[1.0, 5.0]).unwrap();
    assert!((two.apdex(0.3, 1.2, 0.3, 0.0) - 0.75).abs() < 1e-12);
    assert!(Shape::new(&[]).is_none());
}

#[test]
fn the_capacity_is_the_last_population_before_the_first_that_breaks() {
    let point = |users, apdex, p95_s| Predicted {
        users,
        throughput: 1.0,
        response_s: 0.1,
        apdex,
        p95_s,
        utilization: vec![],
    };
    let points = [
        point(1, 0.99, 0.1),
        point(2, 0.95, 0.4),
        point(3, 0.80, 0.9),
        point(4, 0.95, 0.1),
    ];
    assert_eq!(capacity(&points, 0.9, None), Some(2));
    assert_eq!(capacity(&points, 0.9, Some(0.2)), Some(1));
    assert_eq!(capacity(&points, 0.999, None), None);
}
