//! The text after each command's options: what the options alone do not say,
//! then an "Examples:" block of commands that work when pasted into a shell.
//!
//! Clap wraps this text to the terminal (at most 100 columns), so no line
//! here is longer than 78 characters: a longer command goes on with `\`
//! lines, as a shell reads them. A `#` line says what the next command does
//! (an interactive shell ignores it when pasted). The test in
//! `args/help_tests.rs` parses every example.

pub const HEADROOM: &str = "\
Exit codes: 0 success, 1 a --fail-if criterion failed, 2 usage error, 3 the
run could not start, 130 the run was interrupted (Ctrl-C or SIGTERM; the
bundle is kept).

Examples:
  # everything on this machine: testbed, capacity search, report
  headroom demo
  # 50 users for 30 s on one page
  headroom load http://127.0.0.1:8080/ -c 50 -d 30s
  # how many users keep the Apdex at 0.85 or better
  headroom capacity http://127.0.0.1:8080/ --think 1s --apdex-target 0.85
  headroom report runs/before";

pub const LOAD: &str = "\
Durations: 500ms, 10s, 2m, 1h30m. Rates: 500/s, 180/min. The duration (-d)
includes the ramp-up, as in a JMeter thread group. Without -d and -n a run
lasts 10 s. As ab: -n 10000 -c 100 (a fixed number of requests); as siege:
--think 0..10s (a random think time per user); as JMeter: --ramp-up 40s.

Examples:
  # 50 closed-loop users for 30 s
  headroom load http://127.0.0.1:8080/page -c 50 -d 30s
  # open model: 500 requests a second whatever the server does
  headroom load http://127.0.0.1:8080/page --rate 500/s -d 30s
  # 30 users sharing one throughput cap of 180 requests a minute
  headroom load http://127.0.0.1:8080/ -c 30 --throughput 180/min -d 5m
  # for CI: exit 1 when a criterion fails; the summary as JSON
  headroom load http://127.0.0.1:8080/ -d 1m --fail-if 'p95>2s' \\
      --fail-if 'errors>1%' --json";

pub const RUN: &str = "\
Command-line flags replace the file's profile fields. Same outputs as load.

Examples:
  # the profile from the file (against `headroom demo --serve 127.0.0.1:8080`)
  headroom run scenarios/browse.yaml
  # a JMeter plan, against `headroom testbed serve`
  headroom run scenarios/moodle-testplan.jmx -Jusers=10 -Jloops=3
  # open model: 2 arrivals a second, each a new user staying 10 minutes
  headroom run scenarios/browse.yaml --rate 2/s --session 10m -d 30m
  # the lesson start: 30 students arrive within a minute, then read
  headroom run scenarios/browse.yaml --students 30 --arrive-within 60s -d 10m";

pub const SCENARIO: &str = "\
Examples:
  headroom scenario init > journey.yaml
  headroom scenario check journey.yaml
  headroom scenario try journey.yaml --target http://127.0.0.1:8080
  headroom scenario from-har recording.har -o journey.yaml";

pub const SCENARIO_CHECK: &str = "\
Examples:
  headroom scenario check scenarios/browse.yaml
  headroom scenario check journey.yaml --target http://pi.local
  headroom scenario check scenarios/moodle-testplan.jmx -Jhost=pi.local";

pub const SCENARIO_INIT: &str = "\
Examples:
  headroom scenario init > journey.yaml";

pub const SCENARIO_TRY: &str = "\
Examples:
  headroom scenario try journey.yaml --target http://127.0.0.1:8080
  # every header, and the think times waited
  headroom scenario try journey.yaml -v --think
  headroom scenario try scenarios/moodle-testplan.jmx --save-dir failed";

pub const SCENARIO_FROM_JMX: &str = "\
Examples:
  headroom scenario from-jmx plan.jmx -o journey.yaml
  # refuse (exit 2) when anything was not converted
  headroom scenario from-jmx plan.jmx --strict -Jhost=pi.local -o journey.yaml";

pub const SCENARIO_FROM_HAR: &str = "\
Examples:
  headroom scenario from-har recording.har -o journey.yaml
  headroom scenario from-har recording.har --base-url https://lms.example.org \\
      --data accounts.csv --name login-and-browse -o journey.yaml";

pub const SCENARIO_FROM_LOG: &str = "\
Examples:
  headroom scenario from-log /var/log/nginx/access.log
  headroom scenario from-log log --format '$msec \"$request\" $status $cookie_sid'
  # the log as a workload, then how many times its peak the server takes
  headroom scenario from-log access.log* --out users --target http://pi.local
  headroom capacity --scenario users/workload.yaml http://pi.local/";

pub const REPLAY: &str = "\
Examples:
  headroom replay /var/log/nginx/access.log --target http://127.0.0.1:8080
  # twice as fast, a rotated gzip file too, the bundle in r/
  headroom replay a.log a.log.1.gz --target http://pi --speed 2x --out r
  headroom replay a.log --target http://pi --rate 50/s --methods GET,POST";

pub const DOCTOR: &str = "\
Examples:
  headroom doctor
  # also warn when the target runs on this machine
  headroom doctor --target http://127.0.0.1:8080/
  headroom doctor --monitor http://pi.local:9464 --agent-token s3cret --json";

pub const AGENT: &str = "\
Examples:
  # on the server under test (loopback only)
  headroom agent --process nginx,php-fpm,mariadbd
  # reachable from the load generator: a token is needed
  headroom agent --listen 0.0.0.0:9464 --token s3cret --link-capacity 1Gbit
  # in a container that mounts the host's /proc and /sys
  headroom agent --proc /host/proc --sys /host/sys";

pub const DEMO: &str = "\
Examples:
  # the whole demo (about a minute): testbed, capacity search, report
  headroom demo
  # for scripts: only capacity.json on stdout
  headroom demo --json > demo.json
  # only the demo site, to try a scenario against it
  headroom demo --serve 127.0.0.1:8080";

pub const CAPACITY: &str = "\
Each level runs warm-up + measurement with that many closed-model users (load's
flags such as --think, --throughput, -H apply to every level). The warm-up ends
when the level is steady, the measurement when the verdict is settled (a 99%
interval wholly above or below the target) or at --step-duration. The aimed
ladder doubles until it knows the throughput ceiling, aims at Little's law's
knee, then cuts between the last met and first broken level down to
--resolution users; the plain ladder climbs by --step until two levels in a row
break, then bisects. Every level is an ordinary bundle inside the capacity
bundle (--out), with capacity.json beside them.

Examples:
  headroom capacity http://127.0.0.1:8080/ --think 1s --apdex-target 0.85
  headroom capacity http://pi.local --scenario journey.yaml \\
      --monitor http://pi.local:9464 --apdex-target 0.70 --max-error 1% \\
      --start 10 --step 10 --max 500 --step-duration 60s --warmup 15s
  # the plain ladder, every level measured in full
  headroom capacity http://127.0.0.1:8080/ --ladder plain --full-levels";

pub const REPORT: &str = "\
Inputs: run bundles (the --out of load, run and merge, a capacity search's
level-NNNN bundles) and JMeter results files (JTL, CSV or XML: imported into
a bundle beside the file, results.jtl into results-jtl-bundle/), one or
several in one page. A capacity search's directory, an experiment's directory
(its --out) or a bench bundle is reported alone, with its own page; several
bench bundles share one page, the first the baseline.

Examples:
  headroom report runs/before runs/after -o before-after.html
  # JMeter's results (JTL) next to headroom's
  headroom report results.jtl runs/after
  # four hosts' benches side by side
  headroom report sd/ ssd/ pi5/ vm/ -o hosts.html
  # a capacity search, an experiment or a bench, alone
  headroom report runs/study";

pub const COMPARE: &str = "\
Inputs: two or more run bundles (the --out of load, run and merge, a capacity
search's level-NNNN bundles) or JMeter results files (JTL, CSV or XML:
imported into a bundle beside the file), in any mix; or two or more bench
bundles (compared figure by figure, as text or --json; -o writes them side by
side on one page). A capacity search's
directory is not one run: name its level bundles; nor is an experiment's: name
its runs' bundles (cells/<cell>/r<N>). Runs are named A, B, C...
in the order given. Exit code 1 when a run is significantly worse than the
baseline by more than --threshold on Apdex, mean, p90, p95, errors or
throughput, for any label (for CI).

Examples:
  # the first run is the baseline
  headroom compare runs/before runs/after
  headroom compare sd/ ssd/ overclock/ --baseline sd/ --threshold 10%
  headroom compare results.jtl runs/after --json
  headroom compare runs/before runs/after -o compare.html";

pub const MERGE: &str = "\
Examples:
  # on each of 8 machines (here shard 2), all starting at one moment
  headroom run journey.yaml -c 3000 -d 10m --shard 2/8 \\
      --start-at 2026-12-01T10:00:00Z --out runs/big/shard-2
  # under Slurm: each task's shard from SLURM_PROCID and SLURM_NTASKS
  srun -n 8 headroom run journey.yaml -c 3000 -d 10m --shard auto \\
      --start-at 2026-12-01T10:00:00Z --out 'runs/big/shard-{index}'
  headroom merge runs/big/shard-* --out runs/big/merged
  headroom report runs/big/merged";

pub const TESTBED: &str = "\
Examples:
  headroom testbed init --size s --db sqlite:lms.db
  headroom testbed serve --db sqlite:lms.db --listen 127.0.0.1:8080
  # in another terminal: the journey for this dataset, then run it
  headroom testbed plan --db sqlite:lms.db > journey.yaml
  headroom run journey.yaml";

pub const TESTBED_INIT: &str = "\
Examples:
  headroom testbed init --size s --db sqlite:lms.db
  headroom testbed init --size m --db postgres://lms:pw@127.0.0.1/lms \\
      --data-dir /srv/lms-files
  # a new tiny dataset in place of the one there
  headroom testbed init --size xs --db sqlite:lms.db --force";

pub const TESTBED_SERVE: &str = "\
Examples:
  headroom testbed serve --db sqlite:lms.db --listen 127.0.0.1:8080
  # sessions in Redis, a memcached cache, 8 requests handled at once
  headroom testbed serve --db postgres://lms:pw@127.0.0.1/lms \\
      --sessions redis://127.0.0.1 --cache memcached://127.0.0.1:11211 \\
      --workers 8";

pub const TESTBED_PLAN: &str = "\
Examples:
  headroom testbed plan --db sqlite:lms.db > journey.yaml
  headroom testbed plan --db sqlite:lms.db --users 10 --ramp-up 6s \\
      --loops 2 --base-url http://pi.local:8080 > journey.yaml";

pub const TESTBED_INFO: &str = "\
Examples:
  headroom testbed info --db sqlite:lms.db
  headroom testbed info --db postgres://lms:pw@127.0.0.1/lms --json";

pub const TESTBED_CLUSTER: &str = "\
Examples:
  headroom testbed cluster --nodes 4 --db postgres://lms:pw@127.0.0.1/lms
  # sessions in Redis, each session kept on one node
  headroom testbed cluster --nodes 2 --db postgres://lms:pw@127.0.0.1/lms \\
      --sessions redis://127.0.0.1 --sticky";

pub const EXPERIMENT: &str = "\
The file's format is in docs/experiments.md. Results go to --out (default
runs/<file name>/): runs.csv, cells.csv, experiment.json and one bundle per
run.

Examples:
  # run the whole study (run it again to continue it)
  headroom experiment experiments/session-stores.yaml
  # the plan: cells, commands, order, time; nothing runs
  headroom experiment experiments/session-stores.yaml --dry-run
  # exit 1 when a level is really worse than its baseline by more than 5%
  headroom experiment ab.yaml --fail-if 'regression>5%'";

pub const BENCH: &str = "\
Benchmarks: cpu (sysbench's prime method, gzip), memory (STREAM), storage
(the PiBenchmarks score, commit latency), fileio (sysbench fileio's direct
sequential read and write at block sizes), network (TCP both ways, round trip
against payload; the server runs `headroom agent --bench-endpoints`), thermal
(stressberry: idle 150 s, load 300 s, idle 150 s), stack (Moodle's system
benchmark in spirit: --db, --target). With every benchmark, thermal runs
shortened (idle 20 s, load 60 s, idle 20 s). Each repeats --repetitions times
(3): mean, 95% interval, CoV. The bundle is --out (default
runs/<UTC time>-bench/bench.json); `headroom report` and `headroom compare`
take bench bundles.

Examples:
  # every benchmark (a few minutes): table, bundle, report
  headroom bench
  headroom bench cpu memory
  # the device under a path (SD card vs SSD)
  headroom bench storage --path /mnt/ssd
  headroom bench network --agent http://pi.local:9464 --agent-token s3cret \\
      --link-capacity 1Gbit";

pub const PREDICT: &str = "\
Examples:
  headroom predict runs/search --for cpus=0.5 --for cpus=0.25
  headroom predict runs/search --for cpus=0.5 --html predict.html
  # a Pi 4, with this host's CPU speed from a bench run here
  headroom bench cpu --out here && \\
    headroom predict runs/search --for pi4 --bench-here here
  headroom predict runs/search --for pi5 --bench-here here --json";

pub const EMULATE: &str = "\
Examples:
  headroom emulate --cpus 0.5 -- headroom testbed serve --db sqlite:lms.db
  # an SD card's random IOPS on the disk of /var/lib/mysql
  headroom emulate --cpus 1 --iops 1500 --disk-dir /var/lib/mysql -- mariadbd
  headroom emulate --cpus 0.25 --memory 1G -- php-fpm8.2 -F";
