//! Fingerprint and doctor checks from a fixture tree shaped like a
//! Raspberry Pi's /proc and /sys.

use headroom_monitor::fingerprint::Throttling;
use headroom_monitor::procfs::Roots;
use headroom_monitor::{examine, Fingerprint};
use std::path::Path;

fn write(root: &Path, path: &str, text: &str) {
    let file = root.join(path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, text).unwrap();
}

fn pi_tree(name: &str) -> (Roots, std::path::PathBuf) {
    let root = std::env::temp_dir().join(format!("headroom-doctor-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (p, s, etc) = (root.join("proc"), root.join("sys"), root.join("etc"));
    write(&p, "cpuinfo", "processor\t: 0\nprocessor\t: 1\nprocessor\t: 2\nprocessor\t: 3\nHardware\t: BCM2835\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n");
    write(&p, "meminfo", "MemTotal: 3884000 kB\nMemAvailable: 3000000 kB\nSwapTotal: 100000 kB\nSwapFree: 60000 kB\n");
    write(&p, "loadavg", "2.50 1.00 0.50 3/200 999\n");
    write(&p, "sys/kernel/hostname", "pi4\n");
    write(&p, "sys/kernel/osrelease", "6.1.21-v8+\n");
    write(&p, "sys/kernel/arch", "aarch64\n");
    write(&p, "device-tree/model", "Raspberry Pi 4 Model B Rev 1.4\0");
    write(&p, "1/cgroup", "0::/init.scope\n");
    write(&p, "self/mountinfo", "27 1 179:2 / / rw,noatime shared:1 - ext4 /dev/mmcblk0p2 rw\n28 27 179:1 / /boot/firmware rw,relatime shared:2 - vfat /dev/mmcblk0p1 rw\n");
    write(
        &etc,
        "os-release",
        "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n",
    );
    write(
        &s,
        "devices/system/cpu/cpu0/cpufreq/scaling_governor",
        "powersave\n",
    );
    write(
        &s,
        "devices/system/cpu/cpu0/cpufreq/cpuinfo_min_freq",
        "600000\n",
    );
    write(
        &s,
        "devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq",
        "1500000\n",
    );
    write(
        &s,
        "devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
        "600000\n",
    );
    write(&s, "class/thermal/thermal_zone0/type", "cpu-thermal\n");
    write(&s, "class/thermal/thermal_zone0/temp", "72500\n");
    write(&s, "devices/mmc/mmcblk0/mmcblk0p2/partition", "2\n");
    write(&s, "devices/mmc/mmcblk0/queue/rotational", "0\n");
    write(
        &s,
        "devices/mmc/mmcblk0/queue/scheduler",
        "[mq-deadline] none\n",
    );
    write(&s, "devices/mmc/mmcblk0/device/name", "SD32G\n");
    std::fs::create_dir_all(s.join("dev/block")).unwrap();
    std::os::unix::fs::symlink(
        "../../devices/mmc/mmcblk0/mmcblk0p2",
        s.join("dev/block/179:2"),
    )
    .unwrap();
    (Roots { proc: p, sys: s }, etc)
}

#[test]
fn fingerprint_of_a_pi_tree() {
    let (roots, etc) = pi_tree("fingerprint");
    let f = Fingerprint::collect(&roots, &etc, Path::new("/home/pi/runs"), "0.1.0");
    assert_eq!(f.hostname, "pi4");
    assert_eq!(f.cores, 4);
    assert_eq!(f.cpu_model, "Raspberry Pi 4 Model B Rev 1.4");
    assert_eq!(
        (f.architecture.as_str(), f.kernel.as_str()),
        ("aarch64", "6.1.21-v8+")
    );
    assert_eq!(f.os_release, "Debian GNU/Linux 12 (bookworm)");
    assert_eq!((f.memory_mb, f.swap_mb, f.swap_used_mb), (3884, 100, 40));
    assert_eq!(f.governor.as_deref(), Some("powersave"));
    assert_eq!(
        (f.frequency_min_mhz, f.frequency_max_mhz, f.frequency_mhz),
        (Some(600.0), Some(1500.0), Some(600.0))
    );
    assert_eq!(f.temperature_c, Some(72.5));
    assert_eq!(
        f.raspberry_pi_model.as_deref(),
        Some("Raspberry Pi 4 Model B Rev 1.4")
    );
    assert_eq!(f.virtualization, "none");
    assert_eq!(f.load_average, [2.5, 1.0, 0.5]);
    let storage = f.storage.expect("the root mount holds /home/pi/runs");
    assert_eq!(
        (
            storage.mount_point.as_str(),
            storage.device.as_str(),
            storage.filesystem.as_str()
        ),
        ("/", "/dev/mmcblk0p2", "ext4")
    );
    assert_eq!(storage.mount_options, "rw,noatime");
    assert_eq!(
        (
            storage.rotational,
            storage.scheduler.as_deref(),
            storage.model.as_deref()
        ),
        (Some(false), Some("mq-deadline"), Some("SD32G"))
    );
}

#[test]
fn throttled_bits_by_the_book() {
    // 0x50005: bits 0 and 2 now (under-voltage, throttled), 16 and 18 since boot.
    let t = Throttling::parse("throttled=0x50005\n").unwrap();
    assert!(
        t.under_voltage_now
            && t.throttled_now
            && !t.frequency_capped_now
            && !t.soft_temperature_limit_now
    );
    assert!(t.under_voltage_since_boot && t.throttled_since_boot && !t.frequency_capped_since_boot);
    assert_eq!(
        Throttling::parse("throttled=0x0").unwrap(),
        Throttling::default()
    );
    assert!(Throttling::parse("error").is_none());
}

#[test]
fn doctor_findings_from_the_pi_tree() {
    let (roots, etc) = pi_tree("doctor");
    let mut f = Fingerprint::collect(&roots, &etc, Path::new("/"), "0.1.0");
    let checks = |f: &Fingerprint, same_host: bool| -> Vec<String> {
        examine(f, &["stress-ng".to_string()], same_host)
            .into_iter()
            .map(|x| x.check)
            .collect()
    };
    assert_eq!(
        checks(&f, false),
        vec!["governor", "temperature", "swap", "load"]
    );
    let findings = examine(&f, &["stress-ng".to_string()], false);
    assert!(
        findings[0].message.contains("'powersave'")
            && findings[0]
                .message
                .contains("cpupower frequency-set -g performance")
    );
    assert!(findings[3].message.contains("2.50") && findings[3].message.contains("stress-ng"));
    f.throttling = Throttling::parse("throttled=0x50005");
    assert_eq!(
        checks(&f, true),
        vec![
            "governor",
            "under_voltage",
            "throttled",
            "temperature",
            "swap",
            "load",
            "same_host"
        ]
    );
    f.throttling = Throttling::parse("throttled=0x20000");
    assert!(checks(&f, false).contains(&"throttled_since_boot".to_string()));
    // A quiet, well-configured host has nothing to say.
    let quiet = Fingerprint {
        governor: Some("performance".into()),
        virtualization: "none".into(),
        temperature_c: Some(45.0),
        ..Default::default()
    };
    assert!(examine(&quiet, &[], false).is_empty());
}
