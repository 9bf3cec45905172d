//! The sampler against fixture /proc and /sys trees, with figures computed
//! by hand, and once against this machine.

use headroom_monitor::procfs::Roots;
use headroom_monitor::sampler::counter_delta;
use headroom_monitor::{Sampler, SamplerConfig};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn write(root: &Path, path: &str, text: &str) {
    let file = root.join(path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, text).unwrap();
}

/// A fixture tree: `(user, system, idle, iowait)` per CPU line, disks, nets, processes.
fn tree(name: &str, second: bool) -> Roots {
    let root = std::env::temp_dir().join(format!("headroom-monitor-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (proc_, sys) = (root.join("proc"), root.join("sys"));
    let p = |path: &str, text: &str| write(&proc_, path, text);
    let s = |path: &str, text: &str| write(&sys, path, text);
    if !second {
        p("stat", "cpu  1000 0 500 8000 100 0 0 0 0 0\ncpu0 500 0 250 4000 50 0 0 0 0 0\ncpu1 500 0 250 4000 50 0 0 0 0 0\nintr 1000 0 7\nctxt 5000\n");
        p("interrupts", "           CPU0       CPU1\n LOC:        100        100   Local timer interrupts\n  36:          5          5  PCI-MSIX   1-edge   virtio1-req.0\n");
        s("class/net/wlan0/operstate", "up\n");
        p("diskstats", "   8 0 sda 100 0 2000 0 50 0 4000 0 0 300 0\n   8 1 sda1 1 0 2 0 1 0 2 0 0 3 0\n   8 16 sdb 0 0 0 0 0 0 0 0 0 0 0\n 179 0 mmcblk0 5 0 5 0 5 0 5 0 0 5 0\n   7 0 loop0 1 0 1 0 1 0 1 0 0 1 0\n");
        p("net/dev", "Inter-|   Receive\n face |bytes\n    lo: 999 1 0 0 0 0 0 0 999 1 0 0 0 0 0 0\n  eth0: 1000 10 0 0 0 0 0 0 2000 20 0 0 0 0 0 0\n wlan0: 4293967296 1 0 0 0 0 0 0 100 1 0 0 0 0 0 0\n");
        p(
            "123/stat",
            "123 (nginx) S 1 1 1 0 -1 4194560 100 0 0 0 200 100 0 0 20 0 1 0 100 1000000 500\n",
        );
        p(
            "124/stat",
            "124 (nginx) S 1 1 1 0 -1 4194560 100 0 0 0 50 50 0 0 20 0 1 0 100 1000000 500\n",
        );
    } else {
        p("stat", "cpu  1600 0 700 8100 200 0 0 0 0 0\ncpu0 1000 0 350 4000 50 0 0 0 0 0\ncpu1 600 0 350 4100 150 0 0 0 0 0\nintr 3000 0 7\nctxt 9000\n");
        p("interrupts", "           CPU0       CPU1\n LOC:        300        300   Local timer interrupts\n  36:          5          5  PCI-MSIX   1-edge   virtio1-req.0\n");
        s("class/net/wlan0/operstate", "down\n");
        p("diskstats", "   8 0 sda 300 0 22000 0 150 0 44000 0 0 1800 0\n   8 1 sda1 2 0 4 0 2 0 4 0 0 6 0\n   8 16 sdb 0 0 0 0 0 0 0 0 0 2500 0\n   7 0 loop0 9 0 9 0 9 0 9 0 0 9 0\n");
        p("net/dev", "Inter-|   Receive\n face |bytes\n    lo: 9999 1 0 0 0 0 0 0 9999 1 0 0 0 0 0 0\n  eth0: 25001000 10 0 0 0 0 0 0 2502000 20 0 0 0 0 0 0\n wlan0: 4000000 1 0 0 0 0 0 0 100 1 0 0 0 0 0 0\n");
        p(
            "123/stat",
            "123 (nginx) S 1 1 1 0 -1 4194560 100 0 0 0 350 150 0 0 20 0 1 0 100 1000000 500\n",
        );
        p(
            "124/stat",
            "124 (nginx) S 1 1 1 0 -1 4194560 100 0 0 0 100 100 0 0 20 0 1 0 100 1000000 500\n",
        );
    }
    p(
        "125/stat",
        "125 (postgres) S 1 1 1 0 -1 4194560 100 0 0 0 1 1 0 0 20 0 1 0 100 1000000 500\n",
    );
    p("123/statm", "1000 250 0 0 0 0 0\n");
    p("124/statm", "1000 250 0 0 0 0 0\n");
    p("meminfo", "MemTotal:        1000000 kB\nMemFree:          100000 kB\nMemAvailable:     250000 kB\nSwapTotal:        100000 kB\nSwapFree:          60000 kB\n");
    p("loadavg", "0.50 0.40 0.30 1/100 12345\n");
    for disk in ["sda", "sdb", "mmcblk0"] {
        s(&format!("block/{disk}/size"), "1\n");
    }
    s("class/net/eth0/speed", "1000\n");
    s("class/net/eth0/operstate", "up\n");
    s("class/net/eth0/flags", "0x1003\n");
    s("class/net/wlan0/flags", "0x1003\n");
    s("class/net/wlan0/speed", "-1\n");
    s("class/thermal/thermal_zone0/type", "cpu-thermal\n");
    s("class/thermal/thermal_zone0/temp", "61234\n");
    s("class/thermal/thermal_zone1/type", "gpu-thermal\n"); // no temp file: skipped
    s("class/hwmon/hwmon0/name", "coretemp\n");
    s("class/hwmon/hwmon0/temp1_input", "45000\n");
    s("class/hwmon/hwmon0/temp1_label", "Package id 0\n");
    s(
        "devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
        "1500000\n",
    );
    s(
        "devices/system/cpu/cpu1/cpufreq/scaling_cur_freq",
        "600000\n",
    );
    Roots { proc: proc_, sys }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

#[test]
fn figures_from_fixture_trees_by_hand() {
    let watched = vec!["nginx".to_string(), "mariadbd".to_string()];
    let old = tree("t0", false).snapshot(&watched);
    let new = tree("t1", true).snapshot(&watched);
    let sampler = Sampler::new(SamplerConfig {
        processes: watched,
        link_capacity_mbit: None,
        ..Default::default()
    });
    let r = sampler.figures(&old, &new, Duration::from_secs(2));

    // CPU: deltas user 600, system 200, idle 100, iowait 100 of 1000 jiffies.
    assert!(
        close(r.cpu_pct, 80.0)
            && close(r.user_pct, 60.0)
            && close(r.system_pct, 20.0)
            && close(r.iowait_pct, 10.0),
        "{r:?}"
    );
    // cpu0: 600 busy of 600; cpu1: 200 busy of 400.
    assert_eq!(r.per_core_pct, vec![100.0, 50.0]);
    assert_eq!(r.load, [0.5, 0.4, 0.3]);
    // Memory: (1,000,000 - 250,000) / 1,000,000; swap 40,000 kB used.
    assert!(close(r.memory_used_pct, 75.0) && close(r.swap_used_mb, 40.0));

    // Disks: sda busy 1500 ms of 2 s = 75%, 20,000 sectors read = 5.12 MB/s,
    // 40,000 written = 10.24 MB/s, 300 I/Os = 150 IOPS. sdb busy 2500 ms of
    // 2000: capped at 100%. Partitions and loop devices are left out;
    // mmcblk0 disappeared and is not reported.
    let names: Vec<&str> = r.disks.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, vec!["sda", "sdb"]);
    let sda = &r.disks[0];
    assert!(
        close(sda.util_pct, 75.0)
            && close(sda.read_mb_s, 5.12)
            && close(sda.write_mb_s, 10.24)
            && close(sda.iops, 150.0),
        "{sda:?}"
    );
    assert_eq!(r.disks[1].util_pct, 100.0);

    // Network: eth0 25,000,000 bytes in 2 s = 100 Mbit/s of a 1000 Mbit/s
    // link (10%), 2,500,000 out = 10 Mbit/s. wlan0's 32-bit counter wrapped:
    // 1,000,000 before the wrap + 4,000,000 after = 20 Mbit/s, link unknown.
    let eth0 = r.networks.iter().find(|n| n.name == "eth0").unwrap();
    assert!(
        close(eth0.rx_mbit_s, 100.0)
            && close(eth0.tx_mbit_s, 10.0)
            && close(eth0.link_pct.unwrap(), 10.0),
        "{eth0:?}"
    );
    let wlan0 = r.networks.iter().find(|n| n.name == "wlan0").unwrap();
    assert!(
        close(wlan0.rx_mbit_s, 20.0) && wlan0.link_pct.is_none(),
        "{wlan0:?}"
    );
    assert!(r.networks.iter().all(|n| n.name != "lo"));
    // Links: eth0 up; wlan0 switched on but its link went down.
    assert_eq!(eth0.up, Some(true));
    assert_eq!(wlan0.up, Some(false));

    // Interrupts: 2,000 in 2 s, context switches 4,000; by kind only those
    // that happened (the timer's 400, the disk's none).
    assert_eq!(r.interrupts_per_s, Some(1000.0));
    assert_eq!(r.context_switches_per_s, Some(2000.0));
    assert_eq!(r.interrupts_by_kind.len(), 1, "{:?}", r.interrupts_by_kind);
    assert_eq!(r.interrupts_by_kind["Local timer interrupts"], 200.0);
    // MemAvailable 250,000 kB.
    assert_eq!(r.memory_available_mb, Some(250.0));

    // Temperatures: the zone without a temp file is skipped.
    assert_eq!(r.temperatures_c.len(), 2);
    assert_eq!(r.temperatures_c["cpu-thermal (thermal_zone0)"], 61.234);
    assert_eq!(r.temperatures_c["coretemp Package id 0"], 45.0);
    assert_eq!(r.frequencies_mhz, vec![1500.0, 600.0]);

    // nginx: 400 -> 700 ticks over both processes = 3 CPU-seconds in 2 s at
    // 100 ticks/s = 150% of a core; RSS 2 x 250 pages. Watched names with no
    // process are absent.
    let nginx = &r.processes[0];
    let ticks = headroom_monitor::procfs::clock_ticks();
    assert_eq!(nginx.name, "nginx");
    assert!(
        close(nginx.cpu_pct, 300.0 / ticks / 2.0 * 100.0),
        "{nginx:?}"
    );
    let page = (nginx.rss_mb * 1e6 / 500.0).round();
    assert!(
        page == 4096.0 || page == 16384.0 || page == 65536.0,
        "RSS is 500 pages: {}",
        nginx.rss_mb
    );
    assert_eq!(r.processes.len(), 1);
    assert_eq!(nginx.count, 2);

    // With a link capacity given (a Pi's Wi-Fi measured at 57 Mbit/s).
    let wifi = Sampler::new(SamplerConfig {
        link_capacity_mbit: Some(57.0),
        ..Default::default()
    });
    let r = wifi.figures(&old, &new, Duration::from_secs(2));
    let wlan0 = r.networks.iter().find(|n| n.name == "wlan0").unwrap();
    assert!(close(wlan0.link_pct.unwrap(), 20.0 / 57.0 * 100.0));
    // eth0 carried 100 Mbit/s, above the 57 Mbit/s given: that capacity is
    // not eth0's, and 175% of a link is not a figure.
    let eth0 = r.networks.iter().find(|n| n.name == "eth0").unwrap();
    assert_eq!(eth0.link_pct, None, "{eth0:?}");
}

#[test]
fn a_share_of_the_link_above_the_link_is_not_given() {
    use headroom_monitor::sampler::link_share;
    assert_eq!(link_share(50.0, 100.0), Some(50.0));
    assert_eq!(link_share(104.0, 100.0), Some(104.0));
    assert_eq!(link_share(34_806.72, 1.0), None);
    assert_eq!(link_share(1.0, 0.0), None);
}

#[test]
fn counters_wrap_at_32_bits_and_reset_otherwise() {
    assert_eq!(counter_delta(10, 4), 6);
    assert_eq!(counter_delta(5, u32::MAX as u64 - 4), 10);
    assert_eq!(
        counter_delta(5, u64::MAX - 4),
        0,
        "a 64-bit counter that went back was reset"
    );
}

#[test]
fn an_empty_tree_gives_zeros_not_errors() {
    let roots = Roots {
        proc: PathBuf::from("/nonexistent/proc"),
        sys: PathBuf::from("/nonexistent/sys"),
    };
    let snapshot = roots.snapshot(&["x".to_string()]);
    let r = Sampler::new(SamplerConfig::default()).figures(
        &snapshot,
        &snapshot,
        Duration::from_secs(1),
    );
    assert_eq!(r.cpu_pct, 0.0);
    assert!(r.disks.is_empty() && r.networks.is_empty() && r.processes.is_empty());
    // Unknown, not zero: no /proc/stat, no meminfo.
    assert_eq!(r.interrupts_per_s, None);
    assert_eq!(r.context_switches_per_s, None);
    assert_eq!(r.memory_available_mb, None);
}

/// On this machine: a busy loop pinned to core 1 makes core 1 read >= 90%.
#[test]
fn a_pinned_cpu_burner_saturates_its_core() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores < 2 {
        eprintln!("skipped: needs two cores");
        return;
    }
    let mut burner = std::process::Command::new("taskset")
        .args(["-c", "1", "sh", "-c", "while :; do :; done"])
        .spawn()
        .expect("taskset (util-linux) runs");
    std::thread::sleep(Duration::from_millis(300));
    let mut sampler = Sampler::new(SamplerConfig::default());
    assert!(
        sampler.sample().is_none(),
        "the first sample primes the counters"
    );
    std::thread::sleep(Duration::from_secs(1));
    let r = sampler.sample().expect("a second sample has figures");
    let _ = burner.kill();
    let _ = burner.wait();
    assert!(
        r.per_core_pct[1] >= 90.0,
        "core 1 at {:.1}% while burning",
        r.per_core_pct[1]
    );
    assert!(r.memory_used_pct > 0.0 && r.memory_used_pct < 100.0);
}
