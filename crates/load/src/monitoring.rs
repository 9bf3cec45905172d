//! Host resources during a run: a thread samples the host once per run
//! interval, on the run's timeline, appends a row to `resources.csv` (flushed
//! every second) and keeps the averages and peaks for the summary.

use headroom_monitor::{Resources, Sampler, SamplerConfig};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub const RESOURCES: &str = "resources.csv";

/// Average and peak of one figure over the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub avg: f64,
    pub peak: f64,
}

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
        Spread {
            avg: if self.count == 0 {
                0.0
            } else {
                self.sum / self.count as f64
            },
            peak: self.peak,
        }
    }
}

/// What a host's resources did over the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostSummary {
    pub host: String,
    pub samples: u64,
    pub cpu_pct: Spread,
    pub iowait_pct: Spread,
    pub memory_used_pct: Spread,
    pub swap_used_mb: Spread,
    /// The busiest disk each second.
    pub disk_util_pct: Spread,
    /// Received + sent over all interfaces.
    pub network_mbit_s: Spread,
    /// The busiest interface's share of its link, when a capacity is known.
    pub network_link_pct: Option<Spread>,
    pub temperature_max_c: Option<f64>,
    pub processes: BTreeMap<String, ProcessSummary>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessSummary {
    pub cpu_pct: Spread,
    pub rss_mb_peak: f64,
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
    processes: BTreeMap<String, (Accumulator, f64)>,
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
        for p in &r.processes {
            let entry = self.processes.entry(p.name.clone()).or_default();
            entry.0.add(p.cpu_pct);
            entry.1 = entry.1.max(p.rss_mb);
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
                .map(|(name, (cpu, rss))| {
                    (
                        name.clone(),
                        ProcessSummary {
                            cpu_pct: cpu.spread(),
                            rss_mb_peak: *rss,
                        },
                    )
                })
                .collect(),
        }
    }
}

/// A running sampler thread.
pub struct Monitoring {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<HostSummary>,
}

impl Monitoring {
    /// Starts sampling this host; rows go to `dir/resources.csv`.
    pub fn start(
        config: SamplerConfig,
        dir: &Path,
        run_start: Instant,
        wall_start: SystemTime,
    ) -> io::Result<Monitoring> {
        let mut out = BufWriter::new(File::create(dir.join(RESOURCES))?);
        let processes = config.processes.clone();
        let mut header = String::from(
            "second,start_epoch_ms,host,cpu_pct,user_pct,system_pct,iowait_pct,steal_pct,load1,memory_used_pct,swap_used_mb,\
             disk_util_pct,disk_read_mb_s,disk_write_mb_s,disk_iops,net_rx_mbit_s,net_tx_mbit_s,net_link_pct,temperature_max_c,cpu_mhz",
        );
        for name in &processes {
            header.push_str(&format!(",{name}_cpu_pct,{name}_rss_mb"));
        }
        writeln!(out, "{header}")?;
        out.flush()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let epoch_ms = wall_start
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis() as u64;
        let host = "local".to_string();
        let thread = std::thread::Builder::new()
            .name("headroom-monitor".into())
            .spawn(move || {
                let mut sampler = Sampler::new(config);
                let mut totals = Totals::default();
                sleep_until(run_start);
                sampler.sample();
                for second in 0u64.. {
                    sleep_until(run_start + Duration::from_secs(second + 1));
                    if stopped.load(Ordering::Relaxed) {
                        break;
                    }
                    let Some(r) = sampler.sample() else { continue };
                    totals.add(&r);
                    let _ = write_row(
                        &mut out,
                        second,
                        epoch_ms + second * 1000,
                        &host,
                        &r,
                        &processes,
                    );
                    let _ = out.flush();
                }
                totals.summary(host)
            })?;
        Ok(Monitoring { stop, thread })
    }

    /// Stops sampling and returns the host's summary.
    pub fn finish(self) -> Option<HostSummary> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().ok()
    }
}

fn sleep_until(at: Instant) {
    let now = Instant::now();
    if at > now {
        std::thread::sleep(at - now);
    }
}

fn write_row(
    out: &mut impl Write,
    second: u64,
    epoch_ms: u64,
    host: &str,
    r: &Resources,
    processes: &[String],
) -> io::Result<()> {
    let sum =
        |f: fn(&headroom_monitor::sampler::DiskFigures) -> f64| r.disks.iter().map(f).sum::<f64>();
    let link = r
        .networks
        .iter()
        .filter_map(|n| n.link_pct)
        .reduce(f64::max);
    let temperature = r.temperatures_c.values().copied().reduce(f64::max);
    let mhz = if r.frequencies_mhz.is_empty() {
        None
    } else {
        Some(r.frequencies_mhz.iter().sum::<f64>() / r.frequencies_mhz.len() as f64)
    };
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.1}"));
    write!(
        out,
        "{second},{epoch_ms},{host},{:.1},{:.1},{:.1},{:.1},{:.1},{:.2},{:.1},{:.1},{:.1},{:.3},{:.3},{:.1},{:.3},{:.3},{},{},{}",
        r.cpu_pct,
        r.user_pct,
        r.system_pct,
        r.iowait_pct,
        r.steal_pct,
        r.load[0],
        r.memory_used_pct,
        r.swap_used_mb,
        r.disks.iter().map(|d| d.util_pct).fold(0.0, f64::max),
        sum(|d| d.read_mb_s),
        sum(|d| d.write_mb_s),
        sum(|d| d.iops),
        r.networks.iter().map(|n| n.rx_mbit_s).sum::<f64>(),
        r.networks.iter().map(|n| n.tx_mbit_s).sum::<f64>(),
        opt(link),
        opt(temperature),
        opt(mhz),
    )?;
    for name in processes {
        match r.processes.iter().find(|p| &p.name == name) {
            Some(p) => write!(out, ",{:.1},{:.1}", p.cpu_pct, p.rss_mb)?,
            None => write!(out, ",0.0,0.0")?,
        }
    }
    writeln!(out)
}
