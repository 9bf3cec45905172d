//! Host resources during a run: a thread samples the host once per run
//! interval, on the run's timeline, appends a row to `resources.csv` (flushed
//! every second) and keeps the averages and peaks for the summary.

use headroom_bundle::resources::{
    header, throttled_now, write_detail, write_row, HostSummary, ProcessSummary, Spread,
};
use headroom_bundle::{RESOURCES, RESOURCES_DETAIL};
use headroom_monitor::{Resources, Sampler, SamplerConfig};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

#[derive(Debug, Default)]
struct Accumulator {
    sum: f64,
    peak: f64,
    count: u64,
}

impl Accumulator {
    fn add(&mut self, value: f64) {
        self.sum += value;
        self.peak = self.peak.max(value);
        self.count += 1;
    }

    fn spread(&self) -> Spread {
        if self.count == 0 {
            // No sample: unknown, not zero.
            return Spread {
                avg: f64::NAN,
                peak: f64::NAN,
            };
        }
        Spread {
            avg: self.sum / self.count as f64,
            peak: self.peak,
        }
    }
}

#[derive(Default)]
struct Totals {
    samples: u64,
    cpu: Accumulator,
    iowait: Accumulator,
    memory: Accumulator,
    swap: Accumulator,
    disk: Accumulator,
    network: Accumulator,
    link: Accumulator,
    temperature: Option<f64>,
    throttled: Option<bool>,
    available_least: Option<f64>,
    mhz: Accumulator,
    throttled_seconds: u64,
    interrupts: Accumulator,
    switches: Accumulator,
    interrupt_kinds: BTreeMap<String, f64>,
    link_down_seconds: u64,
    processes: BTreeMap<String, ProcessTotals>,
}

/// A watched name's CPU, its largest RSS and count, and the average
/// process's RSS over the seconds it ran.
#[derive(Default)]
struct ProcessTotals {
    cpu: Accumulator,
    rss_peak: f64,
    count_peak: u32,
    each: Accumulator,
}

impl Totals {
    fn add(&mut self, r: &Resources) {
        self.samples += 1;
        self.cpu.add(r.cpu_pct);
        self.iowait.add(r.iowait_pct);
        self.memory.add(r.memory_used_pct);
        self.swap.add(r.swap_used_mb);
        self.disk
            .add(r.disks.iter().map(|d| d.util_pct).fold(0.0, f64::max));
        self.network
            .add(r.networks.iter().map(|n| n.rx_mbit_s + n.tx_mbit_s).sum());
        if let Some(link) = r
            .networks
            .iter()
            .filter_map(|n| n.link_pct)
            .reduce(f64::max)
        {
            self.link.add(link);
        }
        if let Some(t) = r.temperatures_c.values().copied().reduce(f64::max) {
            self.temperature = Some(self.temperature.map_or(t, |m| m.max(t)));
        }
        if let Some(t) = r.throttling {
            self.throttled = Some(self.throttled.unwrap_or(false) || throttled_now(&t));
            self.throttled_seconds += u64::from(throttled_now(&t));
        }
        if !r.frequencies_mhz.is_empty() {
            self.mhz
                .add(r.frequencies_mhz.iter().sum::<f64>() / r.frequencies_mhz.len() as f64);
        }
        if let Some(a) = r.memory_available_mb {
            self.available_least = Some(self.available_least.map_or(a, |m| m.min(a)));
        }
        if let Some(n) = r.interrupts_per_s {
            self.interrupts.add(n);
        }
        if let Some(n) = r.context_switches_per_s {
            self.switches.add(n);
        }
        for (kind, n) in &r.interrupts_by_kind {
            *self.interrupt_kinds.entry(kind.clone()).or_default() += n;
        }
        if r.networks.iter().any(|n| n.up == Some(false)) {
            self.link_down_seconds += 1;
        }
        for p in &r.processes {
            let entry = self.processes.entry(p.name.clone()).or_default();
            entry.cpu.add(p.cpu_pct);
            entry.rss_peak = entry.rss_peak.max(p.rss_mb);
            entry.count_peak = entry.count_peak.max(p.count);
            if p.count > 0 {
                entry.each.add(p.rss_mb / p.count as f64);
            }
        }
    }

    fn summary(&self, host: String) -> HostSummary {
        HostSummary {
            host,
            samples: self.samples,
            cpu_pct: self.cpu.spread(),
            iowait_pct: self.iowait.spread(),
            memory_used_pct: self.memory.spread(),
            swap_used_mb: self.swap.spread(),
            disk_util_pct: self.disk.spread(),
            network_mbit_s: self.network.spread(),
            network_link_pct: (self.link.count > 0).then(|| self.link.spread()),
            temperature_max_c: self.temperature,
            processes: self
                .processes
                .iter()
                .map(|(name, p)| {
                    (
                        name.clone(),
                        ProcessSummary {
                            cpu_pct: p.cpu.spread(),
                            rss_mb_peak: p.rss_peak,
                            count_peak: p.count_peak,
                            rss_mb_each: (p.each.count > 0).then(|| p.each.spread().avg),
                        },
                    )
                })
                .collect(),
            memory_available_mb_least: self.available_least,
            interrupts_s: (self.interrupts.count > 0).then(|| self.interrupts.spread()),
            context_switches_s: (self.switches.count > 0).then(|| self.switches.spread()),
            // Each second's rate is over about a second: their sum is the count.
            interrupts_by_kind: self
                .interrupt_kinds
                .iter()
                .map(|(k, n)| (k.clone(), n.round() as u64))
                .collect(),
            link_down_seconds: self.link_down_seconds,
            cpu_mhz: (self.mhz.count > 0).then(|| self.mhz.spread()),
            throttled_seconds: self.throttled_seconds,
            throttled: self.throttled,
            gap_seconds: 0,
            clock_offset_ms: None,
            problem: None,
            limits: Vec::new(),
        }
    }
}

/// Where resources come from.
#[derive(Debug, Clone)]
pub enum MonitorSource {
    /// This machine.
    Local(SamplerConfig),
    /// A `headroom agent` at `authority` (host:port).
    Agent {
        authority: String,
        token: Option<String>,
    },
}

/// The two files every monitor thread appends to.
struct Outputs {
    csv: BufWriter<File>,
    jsonl: BufWriter<File>,
    processes: Vec<String>,
}

impl Outputs {
    /// Appends one host's second to resources.csv (aggregates) and
    /// resources.jsonl (everything: per core, device, interface, sensor).
    fn write(&mut self, second: u64, epoch_ms: u64, host: &str, r: &Resources) {
        let _ = write_row(&mut self.csv, second, epoch_ms, host, r, &self.processes);
        let _ = write_detail(&mut self.jsonl, second, epoch_ms, host, r);
        let _ = self.csv.flush();
        let _ = self.jsonl.flush();
    }
}

type SharedOut = Arc<Mutex<Outputs>>;

/// The sampler threads of a run, one per monitored host.
pub struct Monitoring {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<HostSummary>>,
}

impl Monitoring {
    /// Starts one thread per source; rows go to `dir/resources.csv`, with
    /// a column pair per name in `processes`.
    pub fn start(
        sources: Vec<MonitorSource>,
        processes: Vec<String>,
        dir: &Path,
        run_start: Instant,
        wall_start: SystemTime,
    ) -> io::Result<Monitoring> {
        let mut out = BufWriter::new(File::create(dir.join(RESOURCES))?);
        let header = header(&processes);
        writeln!(out, "{header}")?;
        out.flush()?;
        let jsonl = BufWriter::new(File::create(dir.join(RESOURCES_DETAIL))?);
        let out: SharedOut = Arc::new(Mutex::new(Outputs {
            csv: out,
            jsonl,
            processes: processes.clone(),
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let epoch_ms = wall_start
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis() as u64;
        let mut threads = Vec::new();
        for source in sources {
            let (out, stop) = (out.clone(), stop.clone());
            let thread = std::thread::Builder::new()
                .name("headroom-monitor".into())
                .spawn(move || match source {
                    MonitorSource::Local(config) => {
                        sample_local(config, out, stop, run_start, epoch_ms)
                    }
                    MonitorSource::Agent { authority, token } => {
                        pull_agent(&authority, token.as_deref(), out, stop, run_start, epoch_ms)
                    }
                })?;
            threads.push(thread);
        }
        Ok(Monitoring { stop, threads })
    }

    /// Stops sampling and returns each host's summary.
    pub fn finish(self) -> Vec<HostSummary> {
        self.stop.store(true, Ordering::Relaxed);
        // A local sampler waiting for its next second wakes now (a run
        // ends on a second's boundary, so it would wait almost a second).
        for thread in &self.threads {
            thread.thread().unpark();
        }
        self.threads
            .into_iter()
            .filter_map(|t| t.join().ok())
            .collect()
    }
}

fn sample_local(
    config: SamplerConfig,
    out: SharedOut,
    stop: Arc<AtomicBool>,
    run_start: Instant,
    epoch_ms: u64,
) -> HostSummary {
    let mut sampler = Sampler::new(config);
    let mut totals = Totals::default();
    sleep_until(run_start);
    sampler.sample();
    for second in 0u64.. {
        if !wait_until(run_start + Duration::from_secs(second + 1), &stop) {
            break;
        }
        let Some(r) = sampler.sample() else { continue };
        totals.add(&r);
        out.lock().unwrap_or_else(|p| p.into_inner()).write(
            second,
            epoch_ms + second * 1000,
            "local",
            &r,
        );
    }
    totals.summary("local".into())
}

fn pull_agent(
    authority: &str,
    token: Option<&str>,
    out: SharedOut,
    stop: Arc<AtomicBool>,
    run_start: Instant,
    epoch_ms: u64,
) -> HostSummary {
    let mut totals = Totals::default();
    let (offset, mut problem) = match crate::clock::agent_reading(authority, token) {
        Ok(reading) => (Some(reading.offset_ms()), None),
        Err(why) => (None, Some(why)),
    };
    let mut host = authority.to_string();
    let mut last_seq = 0u64;
    let mut gaps = 0u64;
    for second in 0u64.. {
        // Poll a little after each second ends, when the agent has sampled it.
        sleep_until(run_start + Duration::from_millis(second * 1000 + 1300));
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let path = format!("/samples?since={last_seq}");
        let reply = match crate::agent_samples::read_samples(authority, &path, token) {
            Ok(reply) => reply,
            Err(why) => {
                gaps += 1;
                problem = Some(why);
                continue;
            }
        };
        host = format!("{} ({authority})", reply.host);
        for sample in reply.samples {
            last_seq = last_seq.max(sample.seq);
            let local_end = sample.time_ms as f64 - offset.unwrap_or(0.0);
            let index = ((local_end - epoch_ms as f64) / 1000.0).round() - 1.0;
            if index < 0.0 {
                continue; // samples from before the run
            }
            let index = index as u64;
            totals.add(&sample.resources);
            out.lock().unwrap_or_else(|p| p.into_inner()).write(
                index,
                epoch_ms + index * 1000,
                &host,
                &sample.resources,
            );
        }
    }
    let mut summary = totals.summary(host);
    summary.gap_seconds = gaps;
    summary.clock_offset_ms = offset;
    summary.problem = problem;
    summary
}

/// Waits until `at` unless stopped first (the stopper unparks the
/// thread); returns whether the wait ran to `at` without a stop.
fn wait_until(at: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= at {
            return true;
        }
        std::thread::park_timeout(at - now);
    }
}

fn sleep_until(at: Instant) {
    let now = Instant::now();
    if at > now {
        std::thread::sleep(at - now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_monitor::fingerprint::Throttling;
    use headroom_monitor::procfs::Snapshot;

    fn idle() -> Resources {
        let empty = Snapshot::default();
        Sampler::new(SamplerConfig::default()).figures(&empty, &empty, Duration::from_secs(1))
    }

    #[test]
    fn a_host_without_samples_has_unknown_figures_not_zeros() {
        let summary = Totals::default().summary("h".into());
        assert!(summary.no_data());
        let json = serde_json::to_value(&summary).unwrap();
        assert!(
            json["cpu_pct"]["avg"].is_null() && json["cpu_pct"]["peak"].is_null(),
            "{json}"
        );
        assert!(json["memory_used_pct"]["avg"].is_null());
        let back: HostSummary = serde_json::from_value(json).unwrap();
        assert!(back.cpu_pct.avg.is_nan());
        let mut one = Totals::default();
        one.add(&idle());
        let json = serde_json::to_value(one.summary("h".into())).unwrap();
        assert_eq!(json["cpu_pct"]["avg"], 0.0);
    }

    #[test]
    fn process_counts_interrupts_and_links_reach_the_summary_and_the_csv() {
        use headroom_monitor::sampler::{NetFigures, ProcessFigures};
        let second = |count: u32, rss: f64, available: f64, down: bool| {
            let mut r = idle();
            r.processes = vec![ProcessFigures {
                name: "php-fpm".into(),
                cpu_pct: 50.0,
                rss_mb: rss,
                count,
                ..Default::default()
            }];
            r.memory_available_mb = Some(available);
            r.interrupts_per_s = Some(1000.0);
            r.context_switches_per_s = Some(3000.0);
            r.interrupts_by_kind = [("Local timer interrupts".to_string(), 250.0)].into();
            r.networks = vec![NetFigures {
                name: "eth0".into(),
                rx_mbit_s: 1.0,
                tx_mbit_s: 1.0,
                link_pct: None,
                up: Some(!down),
            }];
            r
        };
        let rows = [second(4, 40.0, 900.0, false), second(5, 60.0, 850.0, true)];
        let mut totals = Totals::default();
        rows.iter().for_each(|r| totals.add(r));
        let h = totals.summary("pi".into());
        let p = &h.processes["php-fpm"];
        // 10 MB a process, then 12: 11 on average; 5 at most.
        assert_eq!((p.count_peak, p.rss_mb_each), (5, Some(11.0)));
        assert_eq!(h.memory_available_mb_least, Some(850.0));
        // 001's rule: 850 MB spare over 11 MB a process.
        assert_eq!(p.more_that_fit(850.0), Some(77));
        assert_eq!(h.interrupts_by_kind["Local timer interrupts"], 500);
        assert_eq!(h.interrupts_s.unwrap().avg, 1000.0);
        assert_eq!(h.context_switches_s.unwrap().peak, 3000.0);
        assert_eq!(h.link_down_seconds, 1);
        // resources.csv keeps them, and reads them back.
        let dir = std::env::temp_dir().join(format!("headroom-res-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let names = vec!["php-fpm".to_string()];
        let mut csv = header(&names) + "\n";
        let mut bytes = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            write_row(&mut bytes, i as u64, 0, "pi", r, &names).unwrap();
        }
        csv.push_str(&String::from_utf8(bytes).unwrap());
        assert!(csv
            .lines()
            .next()
            .unwrap()
            .ends_with("php-fpm_cpu_pct,php-fpm_rss_mb,php-fpm_count"));
        std::fs::write(dir.join(RESOURCES), csv).unwrap();
        let back = headroom_bundle::resources::read_resources(&dir)
            .unwrap()
            .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(back[1].memory_available_mb, Some(850.0));
        assert_eq!(back[1].interrupts_s, Some(1000.0));
        assert_eq!(back[1].context_switches_s, Some(3000.0));
        assert_eq!((back[0].links_down, back[1].links_down), (Some(0), Some(1)));
        assert_eq!(back[1].processes, vec![("php-fpm".to_string(), 50.0)]);
    }

    #[test]
    fn a_stop_ends_the_wait_for_the_next_second() {
        let stop = Arc::new(AtomicBool::new(false));
        let waiting = {
            let stop = stop.clone();
            std::thread::spawn(move || wait_until(Instant::now() + Duration::from_secs(60), &stop))
        };
        std::thread::sleep(Duration::from_millis(50));
        stop.store(true, Ordering::Relaxed);
        waiting.thread().unpark();
        // Without the stop it would wait a minute (the test would hang).
        assert!(!waiting.join().unwrap());
        let unstopped = AtomicBool::new(false);
        assert!(wait_until(
            Instant::now() + Duration::from_millis(20),
            &unstopped
        ));
    }

    #[test]
    fn throttling_in_any_second_marks_the_host() {
        let mut totals = Totals::default();
        totals.add(&idle());
        assert_eq!(
            totals.summary("h".into()).throttled,
            None,
            "unknown off a Pi"
        );
        let mut calm = idle();
        calm.throttling = Throttling::parse("throttled=0x0");
        totals.add(&calm);
        assert_eq!(totals.summary("h".into()).throttled, Some(false));
        let mut hot = idle();
        hot.throttling = Throttling::parse("throttled=0x4");
        totals.add(&hot);
        totals.add(&calm);
        assert_eq!(totals.summary("h".into()).throttled, Some(true));
        let mut row = Vec::new();
        write_row(&mut row, 3, 0, "h", &hot, &[]).unwrap();
        let at = header(&[])
            .split(',')
            .position(|c| c == "throttled")
            .unwrap();
        let row = String::from_utf8(row).unwrap();
        assert_eq!(row.trim_end().split(',').nth(at), Some("1"), "{row}");
    }
}
