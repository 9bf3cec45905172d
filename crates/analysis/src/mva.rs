//! Mean value analysis of a closed queueing network: users who think for
//! `think` seconds between requests, and stations (a CPU with its cores, a
//! disk) each request visits for a total service demand. Solved exactly:
//! a single-server station by Reiser and Lavenberg's recursion, a station
//! of several servers (a CPU's cores) as a load-dependent station through
//! its queue-length probabilities (exact, not Seidmann's or Schweitzer's
//! approximation). A pool of workers that bounds how many requests are in
//! the server at once (php-fpm's `pm.max_children`) is a flow-equivalent
//! server: the network solved for 1..pool requests inside gives its
//! throughput, and the users queue for it (exact for product-form
//! networks, as this one is).

/// A station a request visits.
#[derive(Debug, Clone, PartialEq)]
pub struct Station {
    pub name: String,
    /// Seconds of service a request needs here in all (its visits'
    /// demands summed).
    pub demand_s: f64,
    /// Servers working in parallel (a CPU's cores); at least 1.
    pub servers: u32,
}

/// The network at one population.
#[derive(Debug, Clone, PartialEq)]
pub struct OperatingPoint {
    pub users: u32,
    /// Requests a second.
    pub throughput: f64,
    /// Seconds from a request sent to its answer (think not counted).
    pub response_s: f64,
    /// Per station, as in the stations given: seconds a request spends
    /// there (waiting and served) and the busy share of its servers.
    pub residence_s: Vec<f64>,
    pub utilization: Vec<f64>,
}

/// Why a network cannot be solved.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MvaError {
    #[error("station {0}: its demand must be a number of seconds of at least 0, and its servers at least 1")]
    Station(String),
    #[error("the think time must be a number of seconds of at least 0")]
    Think,
    #[error("no station has any demand: the requests need no server, so nothing limits them")]
    NoDemand,
}

/// The network for 1..=`users` users thinking `think_s` between requests.
pub fn solve(
    stations: &[Station],
    think_s: f64,
    users: u32,
) -> Result<Vec<OperatingPoint>, MvaError> {
    let mut network = Network::new(stations, think_s, None)?;
    Ok((1..=users).map(|_| network.one_more()).collect())
}

/// The network for 1..=`users` users when at most `pool` requests are in
/// the server at once (the rest wait for a worker). A request's time is
/// not split between the pool's queue and the stations (`residence_s` is
/// empty); `utilization` is each station's at the throughput reached.
pub fn solve_with_pool(
    stations: &[Station],
    think_s: f64,
    users: u32,
    pool: u32,
) -> Result<Vec<OperatingPoint>, MvaError> {
    let mut network = Network::new(stations, think_s, Some(pool))?;
    Ok((1..=users).map(|_| network.one_more()).collect())
}

/// The recursion one population at a time ([`solve`] and
/// [`solve_with_pool`] run it), so that a station's demand can change
/// between populations ([`Network::set_demand`]: a demand that depends on
/// how busy the station was), and its queueing can be less variable than
/// exponential service gives ([`Network::set_variability`]). Exact with
/// constant demands and a variability of 1.
pub struct Network {
    stations: Vec<Station>,
    think_s: f64,
    /// Each station's share of exponential service's queueing.
    variability: Vec<f64>,
    users: u32,
    inside: Inside,
}

enum Inside {
    /// Each station's state.
    Open(Vec<StationState>),
    /// A pool of workers: the probability of each number of requests in
    /// the server, and its throughput with 1..=pool requests inside.
    Pool {
        pool: u32,
        probability: Vec<f64>,
        rates: Vec<f64>,
    },
}

impl Network {
    pub fn new(stations: &[Station], think_s: f64, pool: Option<u32>) -> Result<Network, MvaError> {
        check(stations, think_s)?;
        let inside = match pool {
            None => Inside::Open(stations.iter().map(StationState::new).collect()),
            Some(pool) => Inside::Pool {
                pool: pool.max(1),
                probability: vec![1.0],
                rates: Vec::new(),
            },
        };
        let mut network = Network {
            stations: stations.to_vec(),
            think_s,
            variability: vec![1.0; stations.len()],
            users: 0,
            inside,
        };
        network.pool_rates();
        Ok(network)
    }

    /// The share of exponential service's queueing a request meets
    /// (Allen and Cunneen's approximation: (ca² + cs²) / 2 of the wait;
    /// 1, the default, is exact MVA).
    pub fn set_variability(&mut self, share: f64) {
        self.variability.fill(share.clamp(0.0, 1.0));
        self.pool_rates();
    }

    /// Station `index`'s own share of exponential service's queueing
    /// (one whose service is less variable than the others').
    pub fn set_station_variability(&mut self, index: usize, share: f64) {
        if let Some(v) = self.variability.get_mut(index) {
            *v = share.clamp(0.0, 1.0);
            self.pool_rates();
        }
    }

    /// Station `index`'s demand from the next population on (the queues
    /// as the populations before left them).
    pub fn set_demand(&mut self, index: usize, demand_s: f64) {
        let Some(station) = self.stations.get_mut(index) else {
            return;
        };
        station.demand_s = demand_s.max(0.0);
        let demand = station.demand_s;
        match &mut self.inside {
            Inside::Open(states) => states[index].set_demand(demand),
            Inside::Pool { .. } => self.pool_rates(),
        }
    }

    /// The server alone, its requests never thinking: its throughput with
    /// 1..=pool requests inside (the pool's flow-equivalent rates).
    fn pool_rates(&mut self) {
        if let Inside::Pool { pool, rates, .. } = &mut self.inside {
            let mut inner = Network {
                stations: self.stations.clone(),
                think_s: 0.0,
                variability: self.variability.clone(),
                users: 0,
                inside: Inside::Open(self.stations.iter().map(StationState::new).collect()),
            };
            *rates = (0..*pool).map(|_| inner.one_more().throughput).collect();
        }
    }

    /// The network with one user more.
    pub fn one_more(&mut self) -> OperatingPoint {
        self.users += 1;
        let n = self.users;
        let (throughput, response, residence) = match &mut self.inside {
            Inside::Open(states) => {
                let mut residence: Vec<f64> = states
                    .iter()
                    .zip(&self.variability)
                    .map(|(s, share)| {
                        let served = s.demand();
                        served + share * (s.residence(n) - served)
                    })
                    .collect();
                let mut response: f64 = residence.iter().sum();
                let mut throughput = f64::from(n) / (self.think_s + response);
                // Less queueing than exponential service's must not let a
                // station serve more than its servers can: at that bound
                // the rest of the users queue at the busiest station.
                let (busiest, bound) = self
                    .stations
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.demand_s > 0.0)
                    .map(|(i, s)| (i, f64::from(s.servers) / s.demand_s))
                    .fold((0, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a });
                if throughput > bound {
                    throughput = bound;
                    let longer = (f64::from(n) / bound - self.think_s - response).max(0.0);
                    residence[busiest] += longer;
                    response += longer;
                }
                for (state, r) in states.iter_mut().zip(&residence) {
                    state.advance(n, throughput, *r);
                }
                (throughput, response, residence)
            }
            Inside::Pool {
                pool,
                probability,
                rates,
            } => {
                // The users and one load-dependent station whose rate with
                // k requests is the server's with min(k, pool) inside.
                let rate = |k: u32| rates[(k.min(*pool) - 1) as usize];
                let response: f64 = (1..=n)
                    .map(|j| f64::from(j) / rate(j) * probability[j as usize - 1])
                    .sum();
                let throughput = f64::from(n) / (self.think_s + response);
                let mut next = vec![0.0f64; n as usize + 1];
                for j in 1..=n as usize {
                    next[j] = throughput / rate(j as u32) * probability[j - 1];
                }
                next[0] = (1.0 - next[1..].iter().sum::<f64>()).max(0.0);
                *probability = next;
                (throughput, response, Vec::new())
            }
        };
        OperatingPoint {
            users: n,
            throughput,
            response_s: response,
            utilization: self
                .stations
                .iter()
                .map(|s| (throughput * s.demand_s / f64::from(s.servers)).min(1.0))
                .collect(),
            residence_s: residence,
        }
    }
}

fn check(stations: &[Station], think_s: f64) -> Result<(), MvaError> {
    if !(think_s.is_finite() && think_s >= 0.0) {
        return Err(MvaError::Think);
    }
    for s in stations {
        if !(s.demand_s.is_finite() && s.demand_s >= 0.0) || s.servers == 0 {
            return Err(MvaError::Station(s.name.clone()));
        }
    }
    if stations.iter().all(|s| s.demand_s == 0.0) {
        return Err(MvaError::NoDemand);
    }
    Ok(())
}

/// What the recursion keeps of a station between populations.
enum StationState {
    /// One server: its mean queue length.
    Single { demand: f64, queue: f64 },
    /// Several: the probability of each number of requests there.
    Multi {
        demand: f64,
        servers: u32,
        probability: Vec<f64>,
    },
}

impl StationState {
    fn demand(&self) -> f64 {
        match self {
            StationState::Single { demand, .. } | StationState::Multi { demand, .. } => *demand,
        }
    }

    fn set_demand(&mut self, demand_s: f64) {
        match self {
            StationState::Single { demand, .. } | StationState::Multi { demand, .. } => {
                *demand = demand_s
            }
        }
    }

    fn new(station: &Station) -> StationState {
        if station.servers == 1 {
            StationState::Single {
                demand: station.demand_s,
                queue: 0.0,
            }
        } else {
            StationState::Multi {
                demand: station.demand_s,
                servers: station.servers,
                probability: vec![1.0],
            }
        }
    }

    /// A request's residence here with `n` users in the network (the
    /// arrival theorem: it finds the network as it is with n − 1).
    fn residence(&self, n: u32) -> f64 {
        match self {
            StationState::Single { demand, queue } => demand * (1.0 + queue),
            StationState::Multi {
                demand,
                servers,
                probability,
            } => (1..=n)
                .map(|j| {
                    f64::from(j) * demand / f64::from(j.min(*servers)) * probability[j as usize - 1]
                })
                .sum(),
        }
    }

    fn advance(&mut self, n: u32, throughput: f64, residence: f64) {
        match self {
            StationState::Single { queue, .. } => *queue = throughput * residence,
            StationState::Multi {
                demand,
                servers,
                probability,
            } => {
                let mut next = vec![0.0f64; n as usize + 1];
                for j in 1..=n as usize {
                    let rate = (j as u32).min(*servers) as f64 / *demand;
                    next[j] = if *demand == 0.0 {
                        0.0
                    } else {
                        throughput / rate * probability[j - 1]
                    };
                }
                next[0] = (1.0 - next[1..].iter().sum::<f64>()).max(0.0);
                *probability = next;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn station(name: &str, demand_s: f64, servers: u32) -> Station {
        Station {
            name: name.into(),
            demand_s,
            servers,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    /// One server, no think: the queue grows by one request a user.
    /// n = 1: R = 1, X = 1; n = 2: R = 1 × (1 + 1) = 2, X = 1.
    #[test]
    fn one_server_by_hand() {
        let points = solve(&[station("cpu", 1.0, 1)], 0.0, 3).unwrap();
        let got: Vec<(f64, f64)> = points
            .iter()
            .map(|p| (p.response_s, p.throughput))
            .collect();
        assert_eq!(got, vec![(1.0, 1.0), (2.0, 1.0), (3.0, 1.0)]);
    }

    /// Two stations (D = 0.4 s and 0.2 s) and Z = 1 s, by hand:
    /// n = 1: R = 0.6, X = 1/1.6 = 0.625, Q1 = 0.25, Q2 = 0.125;
    /// n = 2: R1 = 0.4 × 1.25 = 0.5, R2 = 0.2 × 1.125 = 0.225, R = 0.725,
    /// X = 2/1.725 = 1.15942; Q1 = 0.57971, Q2 = 0.26087;
    /// n = 3: R1 = 0.4 × 1.57971 = 0.631884, R2 = 0.2 × 1.26087 = 0.252174,
    /// R = 0.884058, X = 3/1.884058 = 1.592308.
    #[test]
    fn two_stations_with_think_by_hand() {
        let points = solve(&[station("cpu", 0.4, 1), station("disk", 0.2, 1)], 1.0, 3).unwrap();
        assert!(close(points[0].throughput, 0.625));
        assert!(close(points[1].response_s, 0.725));
        assert!(close(points[1].throughput, 2.0 / 1.725));
        assert!((points[2].response_s - 0.884_058).abs() < 1e-6);
        assert!((points[2].throughput - 1.592_308).abs() < 1e-6);
        // Utilization = X × D.
        assert!((points[2].utilization[0] - 1.592_308 * 0.4).abs() < 1e-6);
    }

    /// Two cores and no think: with three users two are served at once, so
    /// X = 2 / D and R = N / X = 1.5 D.
    #[test]
    fn two_cores_without_think() {
        let points = solve(&[station("cpu", 1.0, 2)], 0.0, 3).unwrap();
        assert!(close(points[0].response_s, 1.0));
        assert!(close(points[1].response_s, 1.0));
        assert!(close(points[2].throughput, 2.0));
        assert!(close(points[2].response_s, 1.5));
    }

    /// The machine-repair model (N = 3 users thinking Z = 2 s, c = 2
    /// servers of D = 1 s), from its closed form: with r = D / Z = 0.5,
    /// p(j) ∝ N!/(N−j)! r^j / (j! for j ≤ c, else c! c^(j−c)):
    /// 1, 1.5, 0.75, 0.1875 → sum 3.4375; mean busy servers
    /// = (1.5 + 2 × 0.75 + 2 × 0.1875) / 3.4375 = 0.981818, X = that / D.
    #[test]
    fn the_machine_repair_model() {
        let points = solve(&[station("cpu", 1.0, 2)], 2.0, 3).unwrap();
        let expected = (1.5 + 2.0 * 0.75 + 2.0 * 0.1875) / 3.4375;
        assert!((points[2].throughput - expected).abs() < 1e-9, "{points:?}");
        // Little's law over the whole loop.
        assert!(close(
            points[2].throughput * (2.0 + points[2].response_s),
            3.0
        ));
    }

    /// A pool as large as the users changes nothing; a pool of one makes a
    /// two-core CPU serve one request at a time.
    #[test]
    fn a_pool_bounds_the_requests_inside() {
        let cpu = [station("cpu", 1.0, 2)];
        let free = solve(&cpu, 2.0, 6).unwrap();
        let pooled = solve_with_pool(&cpu, 2.0, 6, 6).unwrap();
        for (a, b) in free.iter().zip(&pooled) {
            assert!((a.throughput - b.throughput).abs() < 1e-9, "{a:?} {b:?}");
        }
        let one = solve_with_pool(&cpu, 0.0, 4, 1).unwrap();
        assert!(close(one[3].throughput, 1.0));
        assert!(close(one[3].response_s, 4.0));
    }

    #[test]
    fn a_calmer_queue_waits_less_and_still_serves_no_more_than_its_servers() {
        // 10 ms on one server, users thinking 1 s.
        let cpu = [station("cpu", 0.010, 1)];
        let exact = solve(&cpu, 1.0, 300).unwrap();
        let stepped = |variability: f64, demand: Option<f64>| {
            let mut network = Network::new(&cpu, 1.0, None).unwrap();
            network.set_variability(variability);
            if let Some(d) = demand {
                network.set_demand(0, d);
            }
            (0..300).map(|_| network.one_more()).collect::<Vec<_>>()
        };
        // A variability of 1 is exact MVA.
        for (a, b) in exact.iter().zip(&stepped(1.0, None)) {
            assert!(close(a.response_s, b.response_s), "{a:?} {b:?}");
        }
        // No queueing at all: each request takes its 10 ms until the
        // server is full (101 users: 100 a second), then the users queue
        // (200 users at 100 a second: R = 200 / 100 − 1 s).
        let none = stepped(0.0, None);
        assert!(close(none[99].response_s, 0.010));
        assert!(close(none[99].throughput, 100.0 / 1.010));
        assert!(close(none[199].throughput, 100.0));
        assert!(close(none[199].response_s, 1.0));
        // Half the queueing: between the two below the bound.
        let half = stepped(0.5, None);
        assert!(half[90].response_s > none[90].response_s);
        assert!(half[90].response_s < exact[90].response_s);
        assert!(half[299].throughput <= 100.0 + 1e-9);
        // A demand set before the first user is the network's.
        let doubled = stepped(1.0, Some(0.020));
        assert!(close(doubled[0].response_s, 0.020));
        assert!(close(doubled[299].throughput, 50.0));
    }

    #[test]
    fn one_station_may_queue_less_than_the_others() {
        // A CPU of 2 ms and a disk of 8 ms, users thinking 1 s.
        let both = [station("cpu", 0.002, 1), station("disk", 0.008, 1)];
        let run = |shares: [f64; 2]| {
            let mut network = Network::new(&both, 1.0, None).unwrap();
            network.set_station_variability(0, shares[0]);
            network.set_station_variability(1, shares[1]);
            // Beyond the stations: nothing changes.
            network.set_station_variability(2, 0.0);
            (0..200).map(|_| network.one_more()).collect::<Vec<_>>()
        };
        let exact = solve(&both, 1.0, 200).unwrap();
        for (a, b) in exact.iter().zip(&run([1.0, 1.0])) {
            assert!(close(a.response_s, b.response_s), "{a:?} {b:?}");
        }
        // The disk queueing half: its residence below exact MVA's near its
        // knee (110 users: 88% busy), the CPU's as exact; the disk's bound
        // (125 a second) still holds.
        let calm_disk = run([1.0, 0.5]);
        let (e, c) = (&exact[109], &calm_disk[109]);
        assert!(c.residence_s[1] < e.residence_s[1], "{e:?} {c:?}");
        assert!(c.residence_s[1] > 0.008, "{c:?}");
        assert!(c.throughput > e.throughput);
        assert!(calm_disk[199].throughput <= 125.0 + 1e-9);
        // The same as every station's at 0.5 when the CPU's is 0.5 too.
        let all = {
            let mut network = Network::new(&both, 1.0, None).unwrap();
            network.set_variability(0.5);
            (0..200).map(|_| network.one_more()).collect::<Vec<_>>()
        };
        for (a, b) in all.iter().zip(&run([0.5, 0.5])) {
            assert!(close(a.response_s, b.response_s), "{a:?} {b:?}");
        }
    }

    #[test]
    fn bad_networks_are_refused() {
        assert_eq!(
            solve(&[station("cpu", 1.0, 0)], 1.0, 2),
            Err(MvaError::Station("cpu".into()))
        );
        assert_eq!(
            solve(&[station("cpu", 0.0, 1)], 1.0, 2),
            Err(MvaError::NoDemand)
        );
        assert_eq!(
            solve(&[station("cpu", 1.0, 1)], f64::NAN, 2),
            Err(MvaError::Think)
        );
    }
}
