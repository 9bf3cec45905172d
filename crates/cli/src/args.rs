//! Command-line arguments. Values are parsed into typed quantities here, so
//! a bad value is a usage error (exit 2) that names the flag.

use clap::{Args, Parser, Subcommand};
use headroom_analysis::Criterion;
use headroom_experiment::regression::RegressionLimit;
use headroom_http::protocol::HttpChoice;
use headroom_http::target::{parse_header, Target};
use headroom_journey::lesson::UserSession;
use headroom_journey::profile::Think;
use headroom_load::start::parse_start_time;
use headroom_units::quantity::{
    parse_duration, parse_link_mbit, parse_rate, parse_threshold_pct, Rate,
};
use std::path::PathBuf;
use std::time::Duration;

mod examples;
#[cfg(test)]
mod help_tests;

#[derive(Parser, Debug)]
#[command(
    name = "headroom",
    version,
    about = "How many users does this server really serve, what limits it, and can the number be trusted?",
    after_help = examples::HEADROOM
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Put load on one URL and report response times, errors, throughput and Apdex.
    #[command(after_help = examples::LOAD)]
    Load(Box<LoadArgs>),
    /// Run a scenario file: multi-step user journeys with sessions, data, extraction and checks.
    #[command(after_help = examples::RUN)]
    Run(Box<RunArgs>),
    /// Check or start scenario files.
    #[command(subcommand, after_help = examples::SCENARIO)]
    Scenario(ScenarioCommand),
    /// Check this machine for noise before a run (governor, throttling, swap, load, VM, ...).
    #[command(after_help = examples::DOCTOR)]
    Doctor(DoctorArgs),
    /// Serve this machine's resources to `--monitor http://HOST:9464` (run it on the server under test).
    #[command(after_help = examples::AGENT)]
    Agent(AgentArgs),
    /// Everything on this machine: the testbed, a short capacity search against it, the report.
    #[command(after_help = examples::DEMO)]
    Demo(DemoArgs),
    /// How many users does the server sustain at a target Apdex, and what limits it? Raises the
    /// load level by level, then bisects.
    #[command(
        after_help = examples::CAPACITY,
        // Each level sets these itself: they are refused, so not listed.
        mut_arg("users", |a| a.hide(true)),
        mut_arg("duration", |a| a.hide(true)),
        mut_arg("requests", |a| a.hide(true)),
        mut_arg("rate", |a| a.hide(true)),
        mut_arg("max_vus", |a| a.hide(true).requires(clap::builder::Resettable::Reset)),
        mut_arg("ramp_up", |a| a.hide(true)),
        mut_arg("jtl", |a| a.hide(true)),
        mut_arg("shard", |a| a.hide(true)),
        mut_arg("shards", |a| a.hide(true)),
        mut_arg("start_at", |a| a.hide(true)),
        mut_arg("start_in", |a| a.hide(true)),
        mut_arg("barrier", |a| a.hide(true)),
        mut_arg("fail_if", |a| a.help("Exit 1 when the search's answer meets this, e.g. 'users<40', 'rps<25', 'apdex<0.85', 'p95>2s' (figures at the capacity; repeatable)")),
        mut_arg("json", |a| a.help("Print capacity.json (the search: setup, answer, bottleneck, every level) as one JSON document on stdout (shape: docs/json.md#capacity-and-demo)")),
        mut_arg("junit", |a| a.help("Write the search as JUnit XML (a test case for the search and one per --fail-if criterion) to FILE, for CI"))
    )]
    Capacity(Box<CapacityArgs>),
    /// Write a self-contained HTML report (tables and charts) of runs and JMeter results (JTL),
    /// or of one capacity search, experiment or bench, or of several benches side by side.
    #[command(after_help = examples::REPORT)]
    Report(ReportArgs),
    /// Compare runs (bundles or JMeter JTL files) with a baseline: Apdex, response times,
    /// errors, throughput and resources per label, with the significance of each change and
    /// the environment differences; or bench bundles, figure by figure.
    #[command(after_help = examples::COMPARE)]
    Compare(CompareArgs),
    /// Merge the bundles of a run split with --shard into one: exact percentiles and Apdex,
    /// seconds aligned on the wall clock, partial when a shard is missing, late or starved.
    #[command(after_help = examples::MERGE)]
    Merge(MergeArgs),
    /// The reference LMS site: create a dataset, serve it, write its journey, run a cluster.
    #[command(subcommand, after_help = examples::TESTBED)]
    Testbed(TestbedCommand),
    /// Run a study from an experiment file: factors × levels → cells, each repeated, with
    /// hooks, services, faults and confidence intervals; resumable.
    #[command(after_help = examples::EXPERIMENT)]
    Experiment(ExperimentArgs),
    /// What this machine can do: CPU, memory, storage score, file I/O, network, heat and the web stack,
    /// each by a published method, with where the host stands among known machines.
    #[command(after_help = examples::BENCH)]
    Bench(Box<BenchArgs>),
    /// Send a server's access log again: each request at its logged time (or --speed times
    /// faster), whatever the server does; the replayed status beside the logged one.
    #[command(
        after_help = examples::REPLAY,
        mut_arg("json", |a| a.help("Print the run's summary as one JSON document on stdout (shape: docs/json.md#replay)")),
        mut_arg("jtl", |a| a.hide(true))
    )]
    Replay(Box<ReplayArgs>),
    /// How many users would another host serve? A capacity search's levels read as a queueing
    /// model of the server (its CPU and disk per request), checked against the levels, then
    /// scaled to a Raspberry Pi, a benched host, or fewer CPUs.
    #[command(after_help = examples::PREDICT)]
    Predict(PredictArgs),
    /// Run a command (the server under test) on a smaller host emulated here: its CPUs, disk
    /// IOPS and memory limited by the kernel's control groups.
    #[command(after_help = examples::EMULATE)]
    Emulate(EmulateArgs),
}

#[derive(Args, Debug)]
pub struct PredictArgs {
    /// The capacity search's directory (searched with --monitor and --process).
    pub search: PathBuf,

    /// The host to predict for: pi4, pi5, cpus=N (this host, the server limited to N CPUs), or
    /// a `headroom bench` directory of the host (repeatable); `,iops=N` after it gives its
    /// disk's operations a second (an SD card's: pi4,iops=1500).
    #[arg(long = "for", value_name = "HOST", required = true)]
    pub hosts: Vec<String>,

    /// A `headroom bench cpu` directory of the measured host: its CPU speed, for pi4, pi5 and
    /// benched hosts.
    #[arg(long, value_name = "DIR")]
    pub bench_here: Option<PathBuf>,

    /// The CPUs the server could use when measured (its control group's limit, e.g. from
    /// `headroom emulate --cpus 1`) [default: the host's cores].
    #[arg(long, value_name = "N", value_parser = positive_number)]
    pub server_cpus: Option<f64>,

    /// The server's workers: at most this many requests inside it at once (php-fpm's
    /// pm.max_children) [default: unbounded].
    #[arg(long, value_name = "N", value_parser = at_least_one)]
    pub pool: Option<u32>,

    /// Print the model and the predictions as one JSON document on stdout (shape:
    /// docs/json.md#predict).
    #[arg(long)]
    pub json: bool,

    /// Also write the page of the prediction (the model against the levels measured, each
    /// host's predicted Apdex and throughput against users) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct EmulateArgs {
    /// CPUs the command may use, e.g. 0.5 (half of one) or 2.
    #[arg(long, value_parser = positive_number, conflicts_with = "like")]
    pub cpus: Option<f64>,

    /// Instead of --cpus: the CPUs that do a pi4's or pi5's all-cores work (sysbench prime),
    /// from --bench-here; the command's threads keep this host's speed, their total is the Pi's.
    #[arg(long, value_name = "HOST", requires = "bench_here")]
    pub like: Option<String>,

    /// A `headroom bench cpu` directory of this host (for --like).
    #[arg(long, value_name = "DIR")]
    pub bench_here: Option<PathBuf>,

    /// Random I/O operations a second the disk holding --disk-dir allows, reads and writes each.
    #[arg(long, value_parser = at_least_one)]
    pub iops: Option<u32>,

    /// The directory whose disk --iops limits (default: the current directory).
    #[arg(long, value_name = "DIR", requires = "iops")]
    pub disk_dir: Option<PathBuf>,

    /// Memory the command may use, e.g. 512M or 2G (beyond it the kernel reclaims, then kills).
    #[arg(long, value_parser = bytes_size)]
    pub memory: Option<u64>,

    /// The command and its arguments, after --.
    #[arg(last = true, required = true)]
    pub command: Vec<std::ffi::OsString>,
}

/// A number above 0: "0.5", "2".
fn positive_number(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("'{text}' is not a number above 0")),
    }
}

/// A size in bytes: "512M", "2G", "1048576".
fn bytes_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (number, unit) = t
        .find(|c: char| c.is_ascii_alphabetic())
        .map_or((t, ""), |at| t.split_at(at));
    let scale: u64 = match unit
        .to_ascii_uppercase()
        .trim_end_matches("IB")
        .trim_end_matches('B')
    {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return Err(format!("'{text}' is not a size: write e.g. 512M or 2G")),
    };
    match number.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v * (scale as f64) < 1e18 => {
            Ok((v * scale as f64) as u64)
        }
        _ => Err(format!("'{text}' is not a size: write e.g. 512M or 2G")),
    }
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The access log files (plain or gzip; rotated ones are read oldest first).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,

    /// The server to send the requests to, e.g. http://127.0.0.1:8080 (the log's paths go after it).
    #[arg(long, value_parser = target, required = true)]
    pub target: Option<Target>,

    /// The lines' format: combined (nginx's and Apache's default), common, or the server's
    /// nginx log_format string (with $msec, requests keep their milliseconds).
    #[arg(long, default_value = "combined")]
    pub format: String,

    /// How much faster than logged: 2x halves every gap between requests (default 1x).
    #[arg(long, value_parser = times, conflicts_with = "rate")]
    pub speed: Option<f64>,

    /// Instead of --speed: as fast as gives this mean rate, e.g. 200/s.
    #[arg(long, value_parser = rate)]
    pub rate: Option<Rate>,

    /// The methods sent, e.g. GET,HEAD,POST (others change data and the log has no bodies:
    /// they are counted and left out).
    #[arg(long, default_value = "GET,HEAD", value_delimiter = ',')]
    pub methods: Vec<String>,

    /// Most VUs at once (requests in flight) when responses are slow.
    #[arg(long, value_parser = at_least_one, default_value_t = DEFAULT_MAX_VUS)]
    pub max_vus: u32,

    /// Extra request header 'Name: value' (repeatable), e.g. a Cookie the pages need.
    #[arg(short = 'H', long = "header", value_parser = header)]
    pub headers: Vec<(String, String)>,

    /// Most time one request may take before it counts as a timeout.
    #[arg(long, value_parser = positive_duration, default_value = "30s")]
    pub timeout: Duration,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// A positive multiple: "3", "1.5", "3x".
fn times(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches(['x', 'X']);
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1_000_000.0 => Ok(v),
        _ => Err(format!(
            "'{text}' is not a multiple above 0: write e.g. 3 or 1.5"
        )),
    }
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Which: cpu, compression, crypto, memory, storage, reads, fileio, network, thermal, stack (default: all).
    #[arg(value_parser = ["cpu", "compression", "crypto", "memory", "storage", "reads", "fileio", "network", "thermal", "stack", "all"])]
    pub benchmarks: Vec<String>,

    /// Times each benchmark repeats (thermal runs once).
    #[arg(long, default_value = "3", value_parser = at_least_one)]
    pub repetitions: u32,

    /// Bundle directory (default runs/<UTC time>-bench).
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// Print the bundle's JSON instead of the table (shape: docs/json.md#bench).
    #[arg(long)]
    pub json: bool,

    /// Threads for the "all cores" figures (default: the cores this process may use).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,

    /// Seconds each figure is measured (sysbench's --time).
    #[arg(long, default_value = "5s", value_parser = positive_duration, help_heading = "cpu")]
    pub cpu_time: Duration,

    /// Also for thermal: sysbench's --cpu-max-prime (published figures use 10000).
    #[arg(long, default_value = "10000", value_parser = clap::value_parser!(u64).range(3..=10_000_000), help_heading = "cpu")]
    pub max_prime: u64,

    /// 7-Zip's -md, the dictionary as a power of two, e.g. 22 = 4 MiB (default: 7-Zip's own).
    #[arg(long, value_parser = clap::value_parser!(u32).range(16..=30), help_heading = "compression")]
    pub compression_dictionary: Option<u32>,

    /// Passes of `7z b N` (default: 7-Zip's own).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100), help_heading = "compression")]
    pub compression_passes: Option<u32>,

    /// RSA key size for openssl speed (002: 4096).
    #[arg(long, default_value = "4096", value_parser = ["512", "1024", "2048", "3072", "4096", "7680", "15360"], help_heading = "crypto")]
    pub rsa_bits: String,

    /// Whole seconds per openssl speed figure, e.g. 3s (openssl's own: 10s for RSA).
    #[arg(long, default_value = "3s", value_parser = crypto_seconds, help_heading = "crypto")]
    pub crypto_time: u32,

    /// Elements per STREAM array (default: STREAM's rule, ≥ 4× the last-level cache).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1000..), help_heading = "memory")]
    pub elements: Option<u64>,

    /// A directory on the device to measure (also where the stack writes its files).
    #[arg(long, default_value = ".", help_heading = "storage")]
    pub path: PathBuf,

    /// The fio and iozone file size in MiB (PiBenchmarks: 80).
    #[arg(long, default_value = "80", value_parser = clap::value_parser!(u64).range(1..=65536), help_heading = "storage")]
    pub file_size: u64,

    /// The dd test's count of 4 KiB blocks (PiBenchmarks: 133120, "130k").
    #[arg(long, default_value = "133120", value_parser = clap::value_parser!(u64).range(1..), help_heading = "storage")]
    pub dd_blocks: u64,

    /// Commits (4 KiB write + fdatasync) timed.
    #[arg(long, default_value = "1000", value_parser = at_least_one, help_heading = "storage")]
    pub commits: u32,

    /// Random requests in flight (PiBenchmarks: 64).
    #[arg(long, default_value = "64", value_parser = clap::value_parser!(u32).range(1..=1024), help_heading = "storage")]
    pub queue_depth: u32,

    /// A block device to read as hdparm -tT does, e.g. /dev/mmcblk0 (read only; needs root).
    #[arg(long, help_heading = "reads")]
    pub device: Option<PathBuf>,

    /// Without --device: the size in MiB of the file read under --path.
    #[arg(long, default_value = "512", value_parser = clap::value_parser!(u64).range(2..=1_048_576), help_heading = "reads")]
    pub reads_size: u64,

    /// Files read and written in turn (sysbench's --file-num; 002: 32).
    #[arg(long, default_value = "8", value_parser = clap::value_parser!(u64).range(1..=1024), help_heading = "fileio")]
    pub fileio_files: u64,

    /// Their size in all, in MiB, under --path (sysbench's --file-total-size; 002: 2048).
    #[arg(long, default_value = "256", value_parser = clap::value_parser!(u64).range(1..=1_048_576), help_heading = "fileio")]
    pub fileio_size: u64,

    /// Block sizes (sysbench's --file-block-size; 002: 1k,2k,8k,32k,64k,128k,256k,512k,1m,2m).
    #[arg(long, default_value = "4k,64k,1m", value_parser = block_sizes, help_heading = "fileio")]
    pub fileio_blocks: BlockSizes,

    /// Seconds per block size and direction (sysbench's --time; 002: 20s).
    #[arg(long, default_value = "2s", value_parser = positive_duration, help_heading = "fileio")]
    pub fileio_time: Duration,

    /// The agent (started with --bench-endpoints) to measure against; default: loopback.
    #[arg(long, value_parser = monitor, help_heading = "network")]
    pub agent: Option<Monitor>,

    /// The agent's --token.
    #[arg(long, help_heading = "network")]
    pub agent_token: Option<String>,

    /// The link's capacity for "% of link", e.g. 100Mbit, 1Gbit.
    #[arg(long, value_parser = parse_link_mbit, help_heading = "network")]
    pub link_capacity: Option<f64>,

    /// Seconds each direction is measured (iperf3: 10).
    #[arg(long, default_value = "10s", value_parser = positive_duration, help_heading = "network")]
    pub net_time: Duration,

    /// Round trips timed per payload size.
    #[arg(long, default_value = "200", value_parser = clap::value_parser!(u32).range(1..=100_000), help_heading = "network")]
    pub round_trips: u32,

    /// Idle before the load (stressberry: 150s).
    #[arg(long, value_parser = duration, help_heading = "thermal")]
    pub idle: Option<Duration>,

    /// The load on every core (stressberry: 300s).
    #[arg(long, value_parser = positive_duration, help_heading = "thermal")]
    pub stress: Option<Duration>,

    /// Idle after the load (stressberry: 150s).
    #[arg(long, value_parser = duration, help_heading = "thermal")]
    pub cool: Option<Duration>,

    /// Longest wait for a stable temperature (at most 60s when every benchmark runs).
    #[arg(long, default_value = "300s", value_parser = duration, help_heading = "thermal")]
    pub settle: Duration,

    /// The database, as for the testbed (default: SQLite under --path).
    #[arg(long, help_heading = "stack")]
    pub db: Option<String>,

    /// An http:// page to load twice (e.g. the login page).
    #[arg(long, help_heading = "stack")]
    pub target: Option<String>,
}

/// Block sizes in KiB, as `4k,64k,1m` gives them.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockSizes(pub Vec<u64>);

/// `1k,2k,1m,2m` (or plain KiB: `4,64`) as KiB; each a multiple of 1 KiB
/// of at most 64 MiB, none twice.
fn block_sizes(text: &str) -> Result<BlockSizes, String> {
    let mut sizes = Vec::new();
    for part in text.split(',').map(str::trim) {
        let lower = part.to_ascii_lowercase();
        let (number, factor) = if let Some(n) = lower.strip_suffix('m') {
            (n, 1024)
        } else if let Some(n) = lower.strip_suffix('k') {
            (n, 1)
        } else {
            (lower.as_str(), 1)
        };
        let kib = number
            .parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(factor))
            .filter(|k| (1..=65536).contains(k))
            .ok_or_else(|| {
                format!("'{part}' is not a block size: write 1k to 64m, e.g. 4k,64k,1m")
            })?;
        if sizes.contains(&kib) {
            return Err(format!("'{part}' is given twice"));
        }
        sizes.push(kib);
    }
    Ok(BlockSizes(sizes))
}

#[derive(Args, Debug)]
pub struct ExperimentArgs {
    /// The experiment file (YAML).
    pub file: PathBuf,

    /// Print the plan (cells, their commands, the run order, the estimated time) and run nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// The study's directory (default runs/<file name>); running again with the same one continues it.
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// Exit 1 when a level is significantly worse than its factor's baseline by more than
    /// this, e.g. 'regression>5%' (any figure) or 'regression(p95)>5%'.
    #[arg(long = "fail-if", value_parser = RegressionLimit::parse)]
    pub fail_if: Option<RegressionLimit>,

    /// Print no progress and no tables (errors still go to stderr).
    #[arg(short, long)]
    pub quiet: bool,
}

fn fraction(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let value = headroom_units::quantity::parse_percent(trimmed)
        .or_else(|| trimmed.parse::<f64>().ok())
        .ok_or_else(|| format!("'{text}' is not a share such as 1% or 0.01"))?;
    if !(0.0..=1.0).contains(&value) {
        return Err(format!("'{text}' must be between 0% and 100%"));
    }
    Ok(value)
}

fn apdex_target(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not an Apdex score such as 0.70"))?;
    if !(0.0..=1.0).contains(&value) {
        return Err(format!("'{text}' must be between 0 and 1"));
    }
    Ok(value)
}

/// The open model's pool of users when --max-vus is not given.
pub const DEFAULT_MAX_VUS: u32 = 1000;

#[derive(Args, Debug)]
pub struct CapacityArgs {
    /// Run this scenario file at every level (the URL is its target); without it, load the URL.
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,

    /// The Apdex a level must reach (0.70 = Fair, 0.85 = Good, 0.94 = Excellent).
    #[arg(long, default_value = "0.70", value_parser = apdex_target)]
    pub apdex_target: f64,

    /// The most errors a level may have.
    #[arg(long, default_value = "1%", value_parser = fraction)]
    pub max_error: f64,

    /// Also require the 95th percentile to stay under this.
    #[arg(long, value_parser = positive_duration)]
    pub p95_max: Option<Duration>,

    /// Users of the first level.
    #[arg(long, default_value_t = 10, value_parser = at_least_one)]
    pub start: u32,

    /// Users added per level by the plain ladder; the aimed ladder's smallest step.
    #[arg(long, default_value_t = 10, value_parser = at_least_one)]
    pub step: u32,

    /// The most users tried [default: 500; a lesson search aimed by its model goes as high
    /// as the model and the lessons say]
    #[arg(long, value_parser = at_least_one)]
    pub max: Option<u32>,

    /// The cuts between the last met and the first broken level stop when they are this close,
    /// in users (default: a fifth of --step).
    #[arg(long, value_parser = at_least_one)]
    pub resolution: Option<u32>,

    /// Measurement time of each level (after its warm-up), at most: a level stops sooner when
    /// its verdict is settled (see --min-step-duration, --full-levels).
    #[arg(long, default_value = "60s", value_parser = positive_duration)]
    pub step_duration: Duration,

    /// A level's verdict may settle only after this much measurement (default 5 s, at most
    /// --step-duration); a level near the target (Apdex within 0.1) measures at least half of
    /// --step-duration.
    #[arg(long, value_parser = positive_duration, value_name = "DURATION")]
    pub min_step_duration: Option<Duration>,

    /// The fewest requests a level's verdict rests on: a level measures past --step-duration
    /// (up to 4 times it) to get them; one that still has fewer is thin, and an answer a thin
    /// level decides is not valid.
    #[arg(long, default_value_t = 100, value_name = "N", value_parser = request_count)]
    pub min_samples: u64,

    /// Longest warm-up of each level (not measured): it ends sooner once throughput and
    /// response time are steady for 3 s after --warmup-min. With think times, at least the
    /// users' start plus two think times (see --warmup-min).
    #[arg(long, default_value = "15s", value_parser = duration)]
    pub warmup: Duration,

    /// Shortest warm-up: the users start over it (default a quarter of --warmup, at least 1 s,
    /// and at least the mean think time per request, so that users do not click in step).
    #[arg(long, value_parser = duration, value_name = "DURATION")]
    pub warmup_min: Option<Duration>,

    /// How levels are placed: `model` (a lesson search's default, with --arrive-within: first
    /// about a minute of short non-stop levels measures what a page view costs the server, a
    /// model of the lesson start answers from it, the first lesson goes there, and lessons
    /// bracket the answer to within 10%), `aimed` (from --start the users double until the
    /// throughput stops growing or a resource nears 100%, then aim just past Little's law's
    /// knee, ×1.25 a level once a level met at or past it; after the first broken level, cuts
    /// where the Apdex should cross the target, down to --resolution; the default without
    /// --arrive-within) or `plain` (--start, then --step at a time until two levels in a row
    /// break, then halving down to --resolution). Each level says why.
    #[arg(long, value_parser = ["model", "aimed", "plain"])]
    pub ladder: Option<String>,

    /// Every level runs its whole --warmup and --step-duration (the verdict's early settling is
    /// still recorded, to count how often it agreed).
    #[arg(long)]
    pub full_levels: bool,

    /// Measure the deciding levels (the last met, the first broken) N times in all, each with
    /// its own seed (--seed plus the repetition): a level meets the target when most of its
    /// measurements do (a lesson's: all of them), and the answer comes with the range the
    /// repetitions support [default: 1; with --arrive-within, 3]
    #[arg(long, value_name = "N", value_parser = at_least_one)]
    pub confirm: Option<u32>,

    /// What the answer calls the users, plural, e.g. students (the answer says what one does).
    #[arg(long, value_name = "NOUN", value_parser = noun)]
    pub users_are: Option<String>,

    /// Each level is a lesson start: its users (students) arrive within this time (drawn
    /// from --seed), log in (the journey's once: steps) and read; a level meets the target
    /// when both its arrival phase and its reading phase do. E.g. 60s.
    #[arg(long, value_name = "TIME", value_parser = positive_duration)]
    pub arrive_within: Option<Duration>,

    /// Run exactly this capacity spec (JSON, as an experiment writes in each run's spec.json);
    /// only --out (the search elsewhere) and the flags about reporting (--quiet, --json,
    /// --junit, --fail-if, --metrics-*) may go with it.
    #[arg(long, value_name = "FILE", hide = true, conflicts_with_all = CAPACITY_SPEC_HOLDS, conflicts_with_all = COMMON_SPEC_HOLDS)]
    pub spec: Option<PathBuf>,

    #[command(flatten)]
    pub load: LoadArgs,
}

/// The flags of `capacity` that a capacity spec holds, refused beside
/// `--spec` (the URL too, which is then not required).
const CAPACITY_SPEC_HOLDS: [&str; 27] = [
    "arrive_within",
    "users_are",
    "scenario",
    "apdex_target",
    "max_error",
    "p95_max",
    "start",
    "step",
    "max",
    "resolution",
    "step_duration",
    "min_step_duration",
    "min_samples",
    "warmup",
    "warmup_min",
    "ladder",
    "full_levels",
    "confirm",
    "url",
    "requests",
    "method",
    "headers",
    "body",
    "body_file",
    "timeout",
    "no_keepalive",
    "label",
];

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Run bundles (written by load, run, merge, or a capacity level) and JTL files, one or
    /// several; or one capacity search's, experiment's or bench's directory.
    #[arg(required = true, value_name = "BUNDLE|JTL")]
    pub bundles: Vec<PathBuf>,

    /// The HTML file to write (default: report.html in the bundle, or in the
    /// current directory for several bundles).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Two or more run bundles (written by load, run, merge, or a capacity level) or JTL
    /// files, in any mix; or two or more bench bundles.
    #[arg(required = true, num_args = 2.., value_name = "BUNDLE|JTL")]
    pub bundles: Vec<PathBuf>,

    /// The run the others are compared with (a bundle given, or its letter); default the first.
    #[arg(long)]
    pub baseline: Option<String>,

    /// Smallest significant change for the worse that counts as a regression (exit code 1).
    #[arg(long, default_value = "5%", value_parser = parse_threshold_pct)]
    pub threshold: f64,

    /// Print the comparison as JSON (shape: docs/json.md#compare).
    #[arg(long)]
    pub json: bool,

    /// Also write the comparison as a self-contained HTML page with charts.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

fn duration(text: &str) -> Result<Duration, String> {
    parse_duration(text).map_err(|e| e.to_string())
}

/// A duration in whole seconds: `6`, `6s`, `2m`.
/// openssl speed's -seconds: 1 to 600 whole seconds.
fn crypto_seconds(text: &str) -> Result<u32, String> {
    match whole_seconds(text)? {
        s @ 1..=600 => Ok(s),
        _ => Err(format!("'{text}' is not 1 to 600 seconds: write e.g. 3s")),
    }
}

fn whole_seconds(text: &str) -> Result<u32, String> {
    if let Ok(seconds) = text.trim().parse::<u32>() {
        return Ok(seconds);
    }
    let d = duration(text)?;
    if d.subsec_nanos() != 0 {
        return Err(format!("'{text}' is not a whole number of seconds"));
    }
    u32::try_from(d.as_secs()).map_err(|_| format!("'{text}' is too long"))
}

fn session(text: &str) -> Result<UserSession, String> {
    UserSession::parse(text)
}

fn positive_duration(text: &str) -> Result<Duration, String> {
    let d = duration(text)?;
    if d.is_zero() {
        return Err("must be longer than zero".into());
    }
    Ok(d)
}

fn rate(text: &str) -> Result<Rate, String> {
    parse_rate(text).map_err(|e| e.to_string())
}

fn think(text: &str) -> Result<Think, String> {
    Think::parse(text)
}

/// A label names figures in every report: not empty, and not TOTAL.
/// A plural noun for the users: letters, spaces and hyphens.
fn noun(text: &str) -> Result<String, String> {
    let t = text.trim();
    if t.is_empty() || t.len() > 40 || !t.chars().all(|c| c.is_alphabetic() || c == ' ' || c == '-')
    {
        return Err(format!(
            "'{text}': write a plural noun such as students or visitors"
        ));
    }
    Ok(t.to_string())
}

fn label(text: &str) -> Result<String, String> {
    match text.trim() {
        "" => Err("is empty: an empty label names nothing in the reports".into()),
        "TOTAL" => Err("TOTAL is the total over all labels: choose another label".into()),
        _ => Ok(text.to_string()),
    }
}

/// A token: never empty, so `--token "$UNSET"` cannot turn authentication off.
fn secret(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err("is empty: an empty token would let anyone read this host's figures. Give a secret, e.g. --token \"$(openssl rand -hex 16)\"".into());
    }
    Ok(text.to_string())
}

fn target(text: &str) -> Result<Target, String> {
    Target::parse(text).map_err(|e| e.to_string())
}

fn header(text: &str) -> Result<(String, String), String> {
    parse_header(text).map_err(|e| e.to_string())
}

fn criterion(text: &str) -> Result<Criterion, String> {
    Criterion::parse(text).map_err(|e| e.reason)
}

/// `--apdex-f`: a duration, or a multiple of T such as `4T`.
#[derive(Debug, Clone, Copy)]
pub enum Tolerated {
    Time(Duration),
    TimesT(f64),
}

fn tolerated(text: &str) -> Result<Tolerated, String> {
    let trimmed = text.trim();
    if let Some(factor) = trimmed.strip_suffix(['T', 't']) {
        let factor: f64 = factor
            .parse()
            .map_err(|_| format!("'{text}': write a duration (1500ms) or a multiple of T (4T)"))?;
        if !(factor.is_finite() && factor >= 1.0) {
            return Err("a multiple of T must be at least 1".into());
        }
        return Ok(Tolerated::TimesT(factor));
    }
    duration(trimmed).map(Tolerated::Time)
}

/// A whole number from 1 up to `T`'s largest, saying which rule it broke.
fn whole_from_one<T>(text: &str) -> Result<T, String>
where
    T: std::str::FromStr<Err = std::num::ParseIntError>
        + PartialEq
        + From<u8>
        + std::fmt::Display
        + Bounded,
{
    use std::num::IntErrorKind;
    match text.trim().parse::<T>() {
        Ok(n) if n == T::from(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) if *e.kind() == IntErrorKind::PosOverflow => {
            Err(format!("'{text}' is too large (at most {})", T::MAX))
        }
        Err(_) => Err(format!("'{text}' is not a whole number")),
    }
}

/// The largest value of an integer type, for messages.
trait Bounded {
    const MAX: Self;
}

impl Bounded for u32 {
    const MAX: u32 = u32::MAX;
}

impl Bounded for u64 {
    const MAX: u64 = u64::MAX;
}

fn at_least_one(text: &str) -> Result<u32, String> {
    whole_from_one(text)
}

fn request_count(text: &str) -> Result<u64, String> {
    whole_from_one(text)
}

#[derive(Args, Debug, Clone)]
pub struct LoadArgs {
    /// The URL to load, e.g. http://127.0.0.1:8080/page
    #[arg(value_parser = target, required = true)]
    pub url: Option<Target>,

    /// Virtual users (closed model): each has its own keep-alive connection.
    #[arg(short = 'c', long = "users", visible_alias = "concurrency", value_parser = at_least_one, conflicts_with = "rate")]
    pub users: Option<u32>,

    /// How long the run lasts, ramp-up included (default 10s unless -n is given).
    #[arg(short = 'd', long, value_parser = positive_duration)]
    pub duration: Option<Duration>,

    /// Total number of requests over all users (ab's -n); the run ends when they are done.
    #[arg(short = 'n', long = "requests", value_parser = request_count, conflicts_with = "rate")]
    pub requests: Option<u64>,

    /// Open model: requests arrive at this rate whatever the server does, e.g. 500/s.
    #[arg(long, value_parser = rate)]
    pub rate: Option<Rate>,

    /// Open model: most VUs to serve arrivals with when responses are slow.
    #[arg(long, value_parser = at_least_one, default_value_t = DEFAULT_MAX_VUS, requires = "rate")]
    pub max_vus: u32,

    /// Users start evenly spread over this time (JMeter's ramp-up period).
    #[arg(long, value_parser = duration, conflicts_with = "rate")]
    pub ramp_up: Option<Duration>,

    /// Think time after each response: constant (2s), uniformly random (0..10s, siege's -d),
    /// or drawn from exp:MEAN, lognormal:MEAN,SD or normal:MEAN,SD (e.g. lognormal:30s,20s).
    #[arg(long, value_parser = think, conflicts_with = "rate")]
    pub think: Option<Think>,

    /// One throughput cap shared by all users, e.g. 180/min (JMeter's Constant Throughput Timer, all threads shared).
    #[arg(long, value_parser = rate, conflicts_with = "rate")]
    pub throughput: Option<Rate>,

    /// HTTP method.
    #[arg(short = 'X', long, default_value = "GET")]
    pub method: String,

    /// Extra request header 'Name: value' (repeatable).
    #[arg(short = 'H', long = "header", value_parser = header)]
    pub headers: Vec<(String, String)>,

    /// Request body.
    #[arg(long, conflicts_with = "body_file")]
    pub body: Option<String>,

    /// Request body read from a file.
    #[arg(long)]
    pub body_file: Option<PathBuf>,

    /// Most time one request may take before it counts as a timeout.
    #[arg(long, value_parser = positive_duration, default_value = "30s")]
    pub timeout: Duration,

    /// Open a new connection for every request (sends Connection: close).
    #[arg(long)]
    pub no_keepalive: bool,

    /// Label of the samples (default: the URL's path).
    #[arg(long, value_parser = label)]
    pub label: Option<String>,

    #[command(flatten)]
    pub shard: ShardArgs,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// One shard of a run split over several generators, and when it starts.
#[derive(Args, Debug, Clone, Default)]
pub struct ShardArgs {
    /// Run one shard of the load, INDEX/COUNT numbered from 0 (e.g. 2/8), or 'auto': from
    /// Slurm (SLURM_PROCID, SLURM_NTASKS), a Kubernetes Indexed Job (JOB_COMPLETION_INDEX,
    /// with --shards) or HEADROOM_SHARD=I/N. '{index}' in --out becomes the index.
    #[arg(long, value_name = "I/N|auto", help_heading = "Sharded runs")]
    pub shard: Option<String>,

    /// With --shard auto in a Kubernetes Indexed Job: the number of shards (its completions).
    #[arg(long, value_name = "N", requires = "shard", value_parser = clap::value_parser!(u32).range(1..=100_000), help_heading = "Sharded runs")]
    pub shards: Option<u32>,

    /// Start the load at this moment, RFC 3339 (e.g. 2026-12-01T10:00:00Z), so that shards
    /// on several machines start together.
    #[arg(long, value_name = "TIME", value_parser = parse_start_time, conflicts_with = "start_in", help_heading = "Sharded runs")]
    pub start_at: Option<std::time::SystemTime>,

    /// Start this long after the first shard reached --barrier, e.g. 30s.
    #[arg(long, value_parser = duration, requires = "barrier", help_heading = "Sharded runs")]
    pub start_in: Option<Duration>,

    /// With --start-in: a file on storage every shard shares (NFS, a Kubernetes volume); the
    /// first shard to arrive writes the start into it. A directory gets 'headroom-start' inside.
    #[arg(
        long,
        value_name = "PATH",
        requires = "start_in",
        help_heading = "Sharded runs"
    )]
    pub barrier: Option<PathBuf>,
}

/// `headroom merge`: the shards of one split run as one bundle.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The shards' bundles (their --out), e.g. runs/big/shard-*.
    #[arg(required = true, value_name = "SHARD")]
    pub shards: Vec<PathBuf>,

    /// The merged bundle's directory.
    #[arg(long)]
    pub out: PathBuf,

    /// A shard that started later than this after the planned start (or the first shard),
    /// or this much before the planned start, makes the merged run partial.
    #[arg(long, value_parser = duration, default_value = "1s")]
    pub tolerance: Duration,

    /// Print the merged summary as one JSON document on stdout (shape: docs/json.md#merge).
    #[arg(long)]
    pub json: bool,
}

/// Flags shared by `load` and `run`: TLS, Apdex, outputs, criteria, generator.
#[derive(Args, Debug, Clone)]
pub struct CommonArgs {
    /// Accept any TLS certificate (self-signed test servers).
    #[arg(long)]
    pub insecure: bool,

    /// HTTP version: 1.1, 2 (over TLS by ALPN; without TLS as h2c) or auto (HTTP/2 where the
    /// server offers it over TLS, as browsers do) [default: a scenario's defaults: http:, else 1.1]
    #[arg(long, value_name = "VERSION", value_parser = HttpChoice::parse)]
    pub http: Option<HttpChoice>,

    /// Apdex T: responses up to this time satisfy users.
    #[arg(long, value_parser = positive_duration, default_value = "500ms")]
    pub apdex_t: Duration,

    /// Apdex F: responses up to this time are tolerated; a duration or a multiple of T (4T is the Apdex standard).
    #[arg(long, value_parser = tolerated, default_value = "1500ms")]
    pub apdex_f: Tolerated,

    /// Bundle directory (default runs/<UTC time>-<host and path>).
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// Write the run as JUnit XML (one test case per --fail-if criterion) to FILE, for CI.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Also write every sample to samples.jtl (JMeter's CSV results format).
    #[arg(long)]
    pub jtl: bool,

    /// Keep the first N failed exchanges of each label in the bundle's failures/ (request,
    /// response head, first 64 KiB of the body, the failed check); 0 keeps none.
    #[arg(long, value_name = "N", default_value = "5")]
    pub save_failures: u32,

    /// Exit 1 when this holds, e.g. 'apdex<0.85', 'p95>2s', 'errors>1%', 'rps<100', 'p99[label]>1s' (repeatable).
    #[arg(long = "fail-if", value_parser = criterion)]
    pub fail_if: Vec<Criterion>,

    /// Print no live line and no summary (errors and failed criteria still go to stderr).
    #[arg(short, long)]
    pub quiet: bool,

    /// Print the summary as one JSON document on stdout (shape: docs/json.md#load-and-run).
    #[arg(long)]
    pub json: bool,

    /// Worker threads of the generator (default: one per available core).
    #[arg(long, value_parser = at_least_one)]
    pub threads: Option<u32>,

    /// Seed of random think times and data choices, so runs repeat exactly.
    #[arg(long, default_value = "1")]
    pub seed: u64,

    /// Sample resources every second into the bundle's resources.csv: 'local'
    /// (this machine) or http://HOST:PORT of a `headroom agent` (repeatable).
    #[arg(long, value_parser = monitor)]
    pub monitor: Vec<Monitor>,

    /// The token of the agents given with --monitor (their --token).
    #[arg(long)]
    pub agent_token: Option<String>,

    /// With --monitor: processes whose CPU and memory to sum by name, e.g. nginx,php-fpm,mariadbd.
    #[arg(long, value_delimiter = ',', requires = "monitor")]
    pub process: Vec<String>,

    /// With --monitor: link capacity for network %, when the interface does not report one
    /// (Wi-Fi), e.g. 57Mbit (as measured with iperf3).
    #[arg(long, value_parser = parse_link_mbit, requires = "monitor")]
    pub link_capacity: Option<f64>,

    /// With --monitor local: a file of database URLs (mysql://USER:PASSWORD@HOST/,
    /// postgres://USER:PASSWORD@HOST/DB), one a line, whose own counters to read (connections,
    /// lock waits); read, never recorded. A watched MariaDB is found without it.
    #[arg(long, value_name = "FILE", value_parser = credentials_file, requires = "monitor")]
    pub credentials: Option<PathBuf>,

    /// Run a shell command at a moment of the run, recorded as an event in events.csv
    /// and marked on the charts, e.g. '30s=systemctl restart redis-server' (repeatable).
    #[arg(long, value_name = "AT=COMMAND", value_parser = headroom_load::fault::Fault::parse)]
    pub fault: Vec<headroom_load::fault::Fault>,

    /// Serve the run's live figures for Prometheus at http://ADDR/metrics (requests, errors,
    /// active VUs, Apdex, a latency histogram), e.g. 127.0.0.1:9465.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<std::net::SocketAddr>,

    /// With --metrics-listen: a bearer token scrapers must send (needed beyond loopback).
    #[arg(long, value_parser = secret, requires = "metrics_listen")]
    pub metrics_token: Option<String>,

    /// With --metrics-listen: keep serving the final figures this long after the run, so the
    /// last scrape sees them all, e.g. 15s (one scrape interval).
    #[arg(long, value_parser = duration, requires = "metrics_listen", default_value = "0s")]
    pub metrics_linger: Duration,
}

/// What `--monitor` samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Monitor {
    Local,
    /// host:port of an agent.
    Agent(String),
}

fn monitor(text: &str) -> Result<Monitor, String> {
    if text == "local" {
        return Ok(Monitor::Local);
    }
    let target = Target::parse(text).map_err(|_| {
        format!("'{text}': write 'local' or an agent's URL such as http://pi.local:9464")
    })?;
    if target.scheme != headroom_http::target::Scheme::Http {
        return Err(format!("'{text}': agents speak plain http://"));
    }
    Ok(Monitor::Agent(target.authority()))
}

/// The flags of `run` that a run spec holds, refused beside `--spec`.
const SPEC_HOLDS: [&str; 8] = [
    "file",
    "jmeter_property",
    "strict",
    "target",
    "iterations",
    "session",
    "students",
    "arrive_within",
];

/// The flags both specs hold (run's and capacity's), refused beside `--spec`.
const COMMON_SPEC_HOLDS: [&str; 26] = [
    "users",
    "duration",
    "rate",
    "max_vus",
    "ramp_up",
    "think",
    "throughput",
    "shard",
    "shards",
    "start_at",
    "start_in",
    "barrier",
    "insecure",
    "http",
    "apdex_t",
    "apdex_f",
    "jtl",
    "save_failures",
    "threads",
    "seed",
    "monitor",
    "agent_token",
    "process",
    "link_capacity",
    "credentials",
    "fault",
];

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The scenario file (YAML; `headroom scenario init` writes an example), or a JMeter
    /// test plan (.jmx), converted as `headroom scenario from-jmx` does.
    #[arg(required_unless_present = "spec")]
    pub file: Option<PathBuf>,

    /// Run exactly this run spec (JSON, as an experiment writes in each run's spec.json);
    /// only --out (the bundle elsewhere) and the flags about reporting (--quiet, --json,
    /// --junit, --fail-if, --metrics-*) may go with it.
    #[arg(long, value_name = "FILE", hide = true, conflicts_with_all = SPEC_HOLDS, conflicts_with_all = COMMON_SPEC_HOLDS)]
    pub spec: Option<PathBuf>,

    /// A JMeter property for a .jmx plan's ${__P(name)} and ${__property(name)}, e.g.
    /// -Jhost=pi.local (repeatable).
    #[arg(short = 'J', value_name = "NAME=VALUE")]
    pub jmeter_property: Vec<String>,

    /// With a .jmx plan: refuse to run when any element or function was not converted.
    #[arg(long)]
    pub strict: bool,

    /// Base URL for the scenario's paths, replacing the file's defaults.base_url.
    #[arg(long, value_parser = target)]
    pub target: Option<Target>,

    /// Virtual users (closed model), replacing the file's profile.
    #[arg(short = 'c', long = "users", visible_alias = "concurrency", value_parser = at_least_one, conflicts_with = "rate")]
    pub users: Option<u32>,

    /// A workload written from an access log: this many times the users of its busiest minute
    /// (its peak:), e.g. 3 for three times the log's peak.
    #[arg(long, value_name = "N", value_parser = times, conflicts_with_all = ["users", "rate", "students"])]
    pub peak_times: Option<f64>,

    /// How long the run lasts, ramp-up included.
    #[arg(short = 'd', long, value_parser = positive_duration)]
    pub duration: Option<Duration>,

    /// Iterations of the journey per VU (closed model); the run ends when every VU is done.
    #[arg(long, value_parser = request_count, conflicts_with = "rate")]
    pub iterations: Option<u64>,

    /// Open model: journeys start at this rate, e.g. 2/s.
    #[arg(long, value_parser = rate)]
    pub rate: Option<Rate>,

    /// Open model: most VUs running journeys at once.
    #[arg(long, value_parser = at_least_one)]
    pub max_vus: Option<u32>,

    /// Users start evenly spread over this time.
    #[arg(long, value_parser = duration, conflicts_with = "rate")]
    pub ramp_up: Option<Duration>,

    /// Open model: each arrival is a new user (fresh cookies, variables, page cache, its
    /// own data row) who runs the journey once, or loops it for this long (e.g. 10m), and
    /// leaves.
    #[arg(long, value_parser = session, value_name = "once|DURATION")]
    pub session: Option<UserSession>,

    /// The lesson start: this many students arrive within --arrive-within (at times drawn
    /// from --seed), log in and read until -d is over.
    #[arg(long, value_parser = at_least_one, conflicts_with_all = ["users", "rate", "iterations", "ramp_up"])]
    pub students: Option<u32>,

    /// The lesson start: the time within which every student arrives, e.g. 60s.
    #[arg(long, value_parser = positive_duration)]
    pub arrive_within: Option<Duration>,

    /// Think time after every step without its own (replaces the file's think:): 2s, 0..10s,
    /// exp:30s, lognormal:30s,20s or normal:30s,10s.
    #[arg(long, value_parser = think)]
    pub think: Option<Think>,

    /// One throughput cap (requests) shared by all users, e.g. 180/min.
    #[arg(long, value_parser = rate, conflicts_with = "rate")]
    pub throughput: Option<Rate>,

    #[command(flatten)]
    pub shard: ShardArgs,

    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Subcommand, Debug)]
pub enum ScenarioCommand {
    /// Check a scenario file without sending a request.
    #[command(after_help = examples::SCENARIO_CHECK)]
    Check {
        /// The scenario file (YAML) or JMeter test plan (.jmx).
        file: PathBuf,
        /// Base URL, as `run --target` would use.
        #[arg(long, value_parser = target)]
        target: Option<Target>,
        /// A JMeter property for a .jmx plan, as `run -J` (repeatable).
        #[arg(short = 'J', value_name = "NAME=VALUE")]
        jmeter_property: Vec<String>,
    },
    /// Print a commented example scenario to start from.
    #[command(after_help = examples::SCENARIO_INIT)]
    Init,
    /// One user, one iteration, every request and response printed; stops at the first
    /// failed step and saves its response (exit 1).
    #[command(after_help = examples::SCENARIO_TRY)]
    Try(TryArgs),
    /// Convert a JMeter test plan (.jmx) into a scenario, saying what was converted and what not.
    #[command(after_help = examples::SCENARIO_FROM_JMX)]
    FromJmx(FromJmxArgs),
    /// Convert a browser's recording (HAR) into a journey: page requests as steps, the
    /// server's tokens correlated, the typed account as data columns.
    #[command(after_help = examples::SCENARIO_FROM_HAR)]
    FromHar(FromHarArgs),
    /// Read a web server's access log (nginx, Apache) into a model of its users: sessions,
    /// their arrivals per minute and the peak, pages a session, reading time between pages
    /// (a log-normal fitted), the pages' mix with ids folded, methods and statuses.
    #[command(after_help = examples::SCENARIO_FROM_LOG)]
    FromLog(FromLogArgs),
}

#[derive(Args, Debug)]
pub struct FromLogArgs {
    /// The access log files (plain or gzip; rotated ones are read oldest first).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,

    /// The lines' format: combined (nginx's and Apache's default), common, or the server's
    /// nginx log_format string, e.g. '$remote_addr [$time_local] "$request" $status $cookie_MoodleSession'.
    #[arg(long, default_value = "combined")]
    pub format: String,

    /// The cookie that names a session (the format must log it as $cookie_NAME); default:
    /// the one the format logs, else client address and user agent.
    #[arg(long, value_name = "NAME")]
    pub session_cookie: Option<String>,

    /// A session ends after this long without a request.
    #[arg(long, default_value = "30m", value_parser = duration)]
    pub idle: Duration,

    /// Print the model as one JSON document on stdout (shape: docs/json.md#scenario-from-log).
    #[arg(long)]
    pub json: bool,

    /// Also write the model as a workload `run` and `capacity` take: DIR/workload.yaml and
    /// its pages, DIR/pages.csv (docs/scenarios.md#the-log-as-a-workload).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Also write the model as a self-contained HTML page: arrivals and pages each minute, the
    /// reading time with its fitted log-normal, pages a session, the pages' mix.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// The workload's base URL (else `run --target` gives it).
    #[arg(long, value_name = "URL", requires = "out")]
    pub target: Option<String>,

    /// A journey file whose steps log one user in (with its data file of accounts): each
    /// visit of the workload (each a new visitor) runs them once, before its pages (a log
    /// has no form bodies).
    #[arg(long, value_name = "FILE", requires = "out")]
    pub login: Option<PathBuf>,

    /// How the workload's users choose their next page: sessions (each user walks a session
    /// of the log, page after page, as a new visitor), mix (each page drawn from the log's
    /// mix), or auto: sessions, but mix where the log cannot tell its users apart (it says so).
    #[arg(long, value_name = "HOW", default_value = "auto", value_parser = ["auto", "sessions", "mix"], requires = "out")]
    pub next_page: String,
}

#[derive(Args, Debug)]
pub struct FromJmxArgs {
    /// The JMeter test plan.
    pub file: PathBuf,

    /// A JMeter property for ${__P(name)} and ${__property(name)}, e.g. -Jhost=pi.local.
    #[arg(short = 'J', value_name = "NAME=VALUE")]
    pub jmeter_property: Vec<String>,

    /// Refuse (exit 2) when any element or function was not converted.
    #[arg(long)]
    pub strict: bool,

    /// Write the scenario to FILE (default: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct FromHarArgs {
    /// The recording (developer tools: Network, "Save all as HAR with content").
    pub file: PathBuf,

    /// The site (default: the host of the recording's first page); other hosts are left out.
    #[arg(long)]
    pub base_url: Option<String>,

    /// Keep static files (stylesheets, scripts, images, fonts) as steps.
    #[arg(long)]
    pub include_static: bool,

    /// Write the scenario to FILE (default: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// A CSV of accounts for the login form (a header naming username and password, or those
    /// two columns first); default: a new CSV beside the scenario holding the recorded one.
    #[arg(long, value_name = "CSV")]
    pub data: Option<PathBuf>,

    /// The scenario's name (default: the recording's file name).
    #[arg(long)]
    pub name: Option<String>,
}

#[derive(Args, Debug)]
pub struct TryArgs {
    /// The scenario file (YAML) or JMeter plan (.jmx).
    pub file: PathBuf,

    /// A JMeter property for a .jmx plan, as `run -J` (repeatable).
    #[arg(short = 'J', value_name = "NAME=VALUE")]
    pub jmeter_property: Vec<String>,

    /// Base URL, as `run --target` would use.
    #[arg(long, value_parser = target)]
    pub target: Option<Target>,

    /// Print every request and response header.
    #[arg(short, long)]
    pub verbose: bool,

    /// Wait the think times (skipped by default).
    #[arg(long)]
    pub think: bool,

    /// Where a failed step's response is saved (default: a new directory in the system's
    /// temporary directory).
    #[arg(long, value_name = "DIR")]
    pub save_dir: Option<PathBuf>,

    /// Accept any TLS certificate (self-signed test servers).
    #[arg(long)]
    pub insecure: bool,

    /// HTTP version: 1.1, 2 or auto [default: the scenario's defaults: http:, else 1.1]
    #[arg(long, value_name = "VERSION", value_parser = HttpChoice::parse)]
    pub http: Option<HttpChoice>,
}

#[derive(Args, Debug)]
pub struct AgentArgs {
    /// Address to listen on; anything but loopback needs --token.
    #[arg(long, default_value = "127.0.0.1:9464")]
    pub listen: std::net::SocketAddr,

    /// Secret that clients must send (headroom's --agent-token).
    #[arg(long, value_parser = secret)]
    pub token: Option<String>,

    /// Processes whose CPU and memory to sum by name, e.g. nginx,php-fpm,mariadbd.
    #[arg(long, value_delimiter = ',')]
    pub process: Vec<String>,

    /// Link capacity for network %, e.g. 57Mbit.
    #[arg(long, value_parser = parse_link_mbit)]
    pub link_capacity: Option<f64>,

    /// A file of database URLs (mysql://USER:PASSWORD@HOST/, postgres://USER:PASSWORD@HOST/DB),
    /// one a line, whose own counters to read; read, never recorded.
    #[arg(long, value_name = "FILE", value_parser = credentials_file)]
    pub credentials: Option<PathBuf>,

    /// Where the host's /proc is (a container sees the host's when it is mounted there,
    /// e.g. -v /proc:/host/proc:ro and --proc /host/proc).
    #[arg(long, value_name = "DIR", default_value = "/proc")]
    pub proc: PathBuf,

    /// Where the host's /sys is (e.g. --sys /host/sys in a container).
    #[arg(long, value_name = "DIR", default_value = "/sys")]
    pub sys: PathBuf,

    /// Also serve `headroom bench network`'s sink, source and echo
    /// endpoints (to token holders, as the samples are). Off by default:
    /// they let a client fill the link.
    #[arg(long)]
    pub bench_endpoints: bool,
}

#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// The target you will load: warns when it runs on this machine.
    #[arg(long, value_parser = target)]
    pub target: Option<Target>,

    /// Also examine the hosts of these agents (http://HOST:PORT, repeatable).
    #[arg(long, value_parser = monitor)]
    pub monitor: Vec<Monitor>,

    /// The token of those agents.
    #[arg(long)]
    pub agent_token: Option<String>,

    /// Print the fingerprint and findings as JSON (shape: docs/json.md#doctor).
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Longest measurement of each level of the demo's capacity search (a level stops sooner
    /// when its verdict is settled; plus 1–2 s warm-up).
    #[arg(short = 'd', long, value_parser = positive_duration, default_value = "5s")]
    pub duration: Duration,

    /// Bundle directory (default runs/<UTC time>-demo).
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// Print only the capacity search's result on stdout, as one JSON document (the
    /// capacity bundle's capacity.json; shape: docs/json.md#capacity-and-demo); no progress,
    /// no table, no verdict line.
    #[arg(long)]
    pub json: bool,

    /// Print no progress and no table: only the verdict line and the report's path
    /// (errors still go to stderr).
    #[arg(short, long)]
    pub quiet: bool,

    /// Only serve the demo site on this address until Ctrl-C (e.g. 127.0.0.1:8080),
    /// to try `headroom run scenarios/browse.yaml` against it.
    #[arg(long, value_name = "ADDRESS")]
    pub serve: Option<std::net::SocketAddr>,
}

#[derive(Subcommand, Debug)]
pub enum TestbedCommand {
    /// Create the schema and a deterministic dataset (course, users, activities, files, forum).
    #[command(after_help = examples::TESTBED_INIT)]
    Init(TestbedInitArgs),
    /// Serve the site.
    #[command(after_help = examples::TESTBED_SERVE)]
    Serve(TestbedServeArgs),
    /// Print the journey for this dataset (Moodle's 14-step plan with its ids) as a scenario file.
    #[command(after_help = examples::TESTBED_PLAN)]
    Plan(TestbedPlanArgs),
    /// Show what the database holds (dataset size and row counts).
    #[command(after_help = examples::TESTBED_INFO)]
    Info(TestbedInfoArgs),
    /// Run N instances of the site behind nginx as load balancer.
    #[command(after_help = examples::TESTBED_CLUSTER)]
    Cluster(TestbedClusterArgs),
}

fn db_url_default() -> String {
    "sqlite:lms.db".into()
}

#[derive(Args, Debug)]
pub struct TestbedInitArgs {
    /// Dataset size: xs, s, m or l (l = 10 x m).
    #[arg(long, default_value = "s")]
    pub size: headroom_testbed::Size,

    /// Database URL: sqlite:FILE, postgres://USER:PASS@HOST/DB or mysql://USER:PASS@HOST/DB.
    #[arg(long, default_value_t = db_url_default())]
    pub db: String,

    /// Where the course files and the users CSV go (default: FILE.files next to a SQLite
    /// database, else ./testbed-files).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,

    /// The same seed gives the same dataset.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Replace a dataset the database already holds.
    #[arg(long)]
    pub force: bool,

    /// Print what was created as JSON (shape: docs/json.md#testbed-init-and-info).
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct SiteArgs {
    /// Database URL (as for init).
    #[arg(long, default_value_t = db_url_default())]
    pub db: String,

    /// UserSession store: db, db-separate:DATABASE_URL (relaxed durability), redis://HOST[:PORT],
    /// memcached://HOST[:PORT] or files:DIR.
    #[arg(long, default_value = "db")]
    pub sessions: headroom_testbed::store::SessionSpec,

    /// Cache store: none, local, redis://HOST[:PORT] or memcached://HOST[:PORT].
    #[arg(long, default_value = "local")]
    pub cache: headroom_testbed::store::CacheSpec,

    /// Requests handled at once, the rest wait (php-fpm's pm.max_children); default no cap.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub workers: Option<u32>,

    /// Database connections in the pool.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub db_connections: u32,
}

#[derive(Args, Debug)]
pub struct TestbedServeArgs {
    #[command(flatten)]
    pub site: SiteArgs,

    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,

    /// This instance's name, sent as X-Testbed-Node and shown in the footer.
    #[arg(long, default_value = "node1")]
    pub node: String,
}

#[derive(Args, Debug)]
pub struct TestbedPlanArgs {
    /// Database URL (as for init).
    #[arg(long, default_value_t = db_url_default())]
    pub db: String,

    /// Where the site is served.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub base_url: String,

    /// Users (default: Moodle's plan for the size: XS 1, S 30, M 100, L 1000).
    #[arg(long)]
    pub users: Option<u32>,

    /// Journeys per user (default: Moodle's loops: 5, or 6 for L).
    #[arg(long)]
    pub loops: Option<u32>,

    /// Ramp-up, e.g. 6s or 2m (plain numbers are seconds; default: Moodle's: XS 1 s, S 6 s,
    /// M 40 s, L 100 s).
    #[arg(long, value_parser = whole_seconds)]
    pub ramp_up: Option<u32>,

    /// Instead of the journey, write a class at the start of a lesson into DIR: reader.yaml
    /// and poster.yaml (log in once, read a page every ~30 s with its style sheets, scripts
    /// and images; the poster also replies in the forum), class.yaml (their mix 9 : 1 as a
    /// lesson of 30 students arriving within 60 s) and the students' accounts
    /// (readers.csv, posters.csv).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["users", "loops", "ramp_up"])]
    pub class: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct TestbedInfoArgs {
    /// Database URL (as for init).
    #[arg(long, default_value_t = db_url_default())]
    pub db: String,

    /// Print the dataset's size and row counts as JSON (shape:
    /// docs/json.md#testbed-init-and-info).
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct TestbedClusterArgs {
    /// Instances of the site.
    #[arg(long, default_value_t = 2)]
    pub nodes: u32,

    #[command(flatten)]
    pub site: SiteArgs,

    /// Where nginx listens.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,

    /// The first node's port on 127.0.0.1; the others follow.
    #[arg(long, default_value_t = 8081)]
    pub first_port: u16,

    /// Keep each session on one node (hash of the session cookie) instead of round robin.
    #[arg(long)]
    pub sticky: bool,

    /// Where the nginx configuration, its logs and temporary files are written.
    #[arg(long, default_value = "headroom-cluster")]
    pub dir: PathBuf,
}

/// A credentials file that reads and holds only database URLs.
fn credentials_file(text: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(text);
    headroom_monitor::database::read_credentials(&path)?;
    Ok(path)
}
