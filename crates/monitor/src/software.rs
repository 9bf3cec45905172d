//! The server's software and the settings the studies tuned, read from the
//! server host's files: package versions (dpkg), php-fpm pools and PHP's
//! opcache, MariaDB/MySQL, PostgreSQL, nginx, Apache's MPM, Redis, tmpfs
//! mounts, and the command lines of the watched processes. Part of a
//! monitored host's fingerprint, so `compare` names a changed
//! `pm.max_children` as it names a changed kernel.

use headroom_units::secret::{redact_arguments, redact_value, secret_name};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerSoftware {
    /// Installed server packages and their versions (dpkg's), e.g.
    /// `nginx-core` → `1.22.1-9`.
    pub versions: BTreeMap<String, String>,
    /// Settings by where they are set: `php-fpm 8.2 [www] pm.max_children`
    /// → `5`, `mysqld innodb_log_file_size` → `64M`.
    pub settings: BTreeMap<String, String>,
    /// Each watched process name's command line (its oldest process).
    pub commands: BTreeMap<String, String>,
}

/// Packages of a web server's stack, by name or by the start of a name
/// (`php8.2-fpm`, `postgresql-15`).
const PACKAGES: [&str; 18] = [
    "nginx",
    "nginx-core",
    "nginx-light",
    "nginx-full",
    "nginx-extras",
    "apache2",
    "lighttpd",
    "caddy",
    "haproxy",
    "varnish",
    "php*-fpm",
    "libapache2-mod-php*",
    "mariadb-server",
    "mysql-server",
    "postgresql-*",
    "redis-server",
    "memcached",
    "libsqlite3-0",
];

/// nginx's main directives that change how it serves.
const NGINX: [&str; 9] = [
    "worker_processes",
    "worker_connections",
    "keepalive_timeout",
    "keepalive_requests",
    "sendfile",
    "gzip",
    "multi_accept",
    "open_file_cache",
    "http2",
];

/// Redis's settings that change what a cache or session store does.
const REDIS: [&str; 5] = [
    "maxmemory",
    "maxmemory-policy",
    "save",
    "appendonly",
    "appendfsync",
];

fn read(path: &Path) -> Option<String> {
    fs::read_to_string(path).ok()
}

/// The entries of a directory, sorted, or none.
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut list: Vec<PathBuf> = fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    list.sort();
    list
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default()
}

impl ServerSoftware {
    /// Reads the host whose files are under `root` ("/" for this one) and
    /// whose processes are in `proc_`; `watched` are the `--process` names.
    pub fn collect(root: &Path, proc_: &Path, watched: &[String]) -> ServerSoftware {
        let mut s = ServerSoftware {
            versions: packages(&root.join("var/lib/dpkg/status")),
            ..Default::default()
        };
        let etc = root.join("etc");
        let running = Running::scan(proc_);
        php(&etc.join("php"), &running.fpm, &mut s.settings);
        mysql(&etc.join("mysql"), &mut s.settings);
        mysqld_arguments(&running.mysqld, &mut s.settings);
        postgres(&etc.join("postgresql"), &mut s.settings);
        if running.nginx.is_empty() {
            nginx(&etc.join("nginx/nginx.conf"), &mut s.settings);
        }
        for conf in &running.nginx {
            nginx(conf, &mut s.settings);
        }
        apache(&etc.join("apache2"), &mut s.settings);
        redis(&etc.join("redis/redis.conf"), &mut s.settings);
        tmpfs(&proc_.join("mounts"), &mut s.settings);
        s.commands = commands(proc_, watched);
        // Nothing that opens a door goes into a bundle (the command lines
        // are redacted argument by argument as they are read).
        for (key, value) in s.settings.iter_mut() {
            let name = key.rsplit(' ').next().unwrap_or(key);
            *value = if secret_name(name) {
                "***".into()
            } else {
                redact_value(value)
            };
        }
        s
    }

    pub fn is_empty(&self) -> bool {
        self.versions.is_empty() && self.settings.is_empty() && self.commands.is_empty()
    }
}

fn wanted(package: &str) -> bool {
    // A `*` stands for a version: it starts with a digit.
    PACKAGES.iter().any(|p| match p.split_once('*') {
        Some((start, end)) => package
            .strip_prefix(start)
            .and_then(|rest| rest.strip_suffix(end))
            .is_some_and(|version| version.starts_with(|c: char| c.is_ascii_digit())),
        None => package == *p,
    })
}

/// The installed server packages of dpkg's status file.
fn packages(status: &Path) -> BTreeMap<String, String> {
    let Some(text) = read(status) else {
        return BTreeMap::new();
    };
    let mut found = BTreeMap::new();
    for stanza in text.split("\n\n") {
        let field = |name: &str| {
            stanza
                .lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .map(str::trim)
        };
        let (Some(package), Some(version), Some(status)) =
            (field("Package"), field("Version"), field("Status"))
        else {
            continue;
        };
        if status.ends_with(" installed") && wanted(package) {
            found.insert(package.to_string(), version.to_string());
        }
    }
    found
}

/// `key = value` lines of an INI file (`;` and `#` comments), each with
/// its section.
fn ini(text: &str) -> Vec<(String, String, String)> {
    let mut section = String::new();
    let mut pairs = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.trim().to_string();
            continue;
        }
        let (key, value) = line.split_once('=').unwrap_or((line, ""));
        pairs.push((
            section.clone(),
            key.trim().to_string(),
            value.trim().trim_matches('"').to_string(),
        ));
    }
    pairs
}

/// The servers running now, as their command lines say: php-fpm masters
/// (their PHP version and configuration file), nginx masters (their
/// configuration file) and MariaDB/MySQL servers (their arguments).
#[derive(Default)]
struct Running {
    fpm: Vec<(String, PathBuf)>,
    nginx: Vec<PathBuf>,
    mysqld: Vec<Vec<String>>,
}

impl Running {
    fn scan(proc_: &Path) -> Running {
        let mut running = Running::default();
        for entry in entries(proc_) {
            if file_name(&entry).parse::<u64>().is_err() {
                continue;
            }
            let Some(args) = arguments(&entry) else {
                continue;
            };
            let comm = read(&entry.join("comm")).unwrap_or_default();
            let comm = comm.trim();
            let line = args.join(" ");
            if let Some(rest) = line.strip_prefix("php-fpm: master process (") {
                let conf = rest.trim_end().trim_end_matches(')');
                let version = comm.strip_prefix("php-fpm").unwrap_or("").to_string();
                running.fpm.push((version, PathBuf::from(conf)));
            } else if line.starts_with("nginx: master process") {
                let words: Vec<&str> = line.split_whitespace().collect();
                let conf = words
                    .iter()
                    .position(|w| *w == "-c")
                    .and_then(|i| words.get(i + 1))
                    .map_or(PathBuf::from("/etc/nginx/nginx.conf"), PathBuf::from);
                running.nginx.push(conf);
            } else if comm == "mariadbd" || comm == "mysqld" {
                running.mysqld.push(args);
            }
        }
        running.fpm.sort();
        running.fpm.dedup();
        running.nginx.sort();
        running.nginx.dedup();
        running
    }
}

/// A php-fpm configuration file and the files its `include=` lines name
/// (a `*` in the file part matches any name with the rest as suffix).
fn fpm_files(conf: &Path) -> Vec<PathBuf> {
    let mut files = vec![conf.to_path_buf()];
    for (_, key, value) in ini(&read(conf).unwrap_or_default()) {
        if key != "include" {
            continue;
        }
        let pattern = PathBuf::from(&value);
        let name = file_name(&pattern);
        match (pattern.parent(), name.split_once('*')) {
            (Some(dir), Some((start, end))) => files.extend(entries(dir).into_iter().filter(|f| {
                let n = file_name(f);
                n.starts_with(start) && n.ends_with(end)
            })),
            _ => files.push(pattern),
        }
    }
    files
}

/// A pool's settings that decide how many requests PHP runs at once.
fn pool_settings(version: &str, files: &[PathBuf], settings: &mut BTreeMap<String, String>) {
    for file in files {
        for (section, key, value) in ini(&read(file).unwrap_or_default()) {
            if section != "global" && (key.starts_with("pm") || key == "request_terminate_timeout")
            {
                let version = if version.is_empty() {
                    String::new()
                } else {
                    format!(" {version}")
                };
                settings.insert(format!("php-fpm{version} [{section}] {key}"), value);
            }
        }
    }
}

/// How a running master's pools are named: by their PHP version when the
/// master reads its version's own configuration
/// (`/etc/php/8.2/fpm/php-fpm.conf`, named as the installed pools are when
/// none runs), and by its configuration file too otherwise. Each master
/// is named by itself alone, so the watched master's pools keep their
/// names whatever other masters (each with its `[www]`) run beside it.
fn master_name(version: &str, conf: &Path) -> String {
    let own = Path::new("/etc/php").join(version).join("fpm/php-fpm.conf");
    match (version, conf == own) {
        ("", _) => format!("({})", conf.display()),
        (_, true) => version.to_string(),
        (_, false) => format!("{version} ({})", conf.display()),
    }
}

/// php-fpm's pools (pm.*, request_terminate_timeout) of each running
/// master's configuration, or of the installed ones when none runs, and
/// the FPM PHP's memory limit and opcache, per PHP version.
fn php(dir: &Path, running: &[(String, PathBuf)], settings: &mut BTreeMap<String, String>) {
    let versions: Vec<String> = if running.is_empty() {
        entries(dir).iter().map(|v| file_name(v)).collect()
    } else {
        running.iter().map(|(v, _)| v.clone()).collect()
    };
    if running.is_empty() {
        for v in &versions {
            let pools: Vec<PathBuf> = entries(&dir.join(v).join("fpm/pool.d"))
                .into_iter()
                .filter(|f| file_name(f).ends_with(".conf"))
                .collect();
            pool_settings(v, &pools, settings);
        }
    } else {
        for (v, conf) in running {
            pool_settings(&master_name(v, conf), &fpm_files(conf), settings);
        }
    }
    for v in versions.iter().filter(|v| !v.is_empty()) {
        let fpm = dir.join(v).join("fpm");
        let mut files = vec![fpm.join("php.ini")];
        files.extend(entries(&fpm.join("conf.d")));
        for file in files {
            for (_, key, value) in ini(&read(&file).unwrap_or_default()) {
                if key.starts_with("opcache.")
                    || key == "memory_limit"
                    || key == "max_execution_time"
                {
                    settings.insert(format!("php {v} fpm {key}"), value);
                }
            }
        }
    }
}

/// MariaDB's and MySQL's settings that explain how fast the server
/// serves (a name, or the start of names where it ends in `_`): the
/// engines' buffers, caches and flushing, connections and threads, each
/// query's buffers and temporary tables, the binary log's durability,
/// where data and temporary tables live. Free-form ones (`init_connect`,
/// `wsrep_sst_auth`, file key management) are not recorded.
const MYSQL_SETTINGS: [&str; 41] = [
    "innodb_",
    "aria_",
    "myisam_",
    "key_buffer_size",
    "key_cache_",
    "query_cache_",
    "table_open_cache",
    "table_open_cache_instances",
    "table_definition_cache",
    "thread_",
    "max_connections",
    "max_user_connections",
    "max_allowed_packet",
    "max_heap_table_size",
    "tmp_table_size",
    "tmp_memory_table_size",
    "tmp_disk_table_size",
    "sort_buffer_size",
    "join_buffer_size",
    "read_buffer_size",
    "read_rnd_buffer_size",
    "net_buffer_length",
    "bulk_insert_buffer_size",
    "sync_binlog",
    "log_bin",
    "skip_log_bin",
    "binlog_format",
    "binlog_cache_size",
    "expire_logs_days",
    "skip_name_resolve",
    "performance_schema",
    "open_files_limit",
    "back_log",
    "wait_timeout",
    "slow_query_log",
    "long_query_time",
    "transaction_isolation",
    "default_storage_engine",
    "optimizer_switch",
    "datadir",
    "tmpdir",
];

/// PostgreSQL's settings that explain how fast the server serves: memory,
/// connections and parallel workers, the write-ahead log's durability and
/// checkpoints, the planner's costs, autovacuum, where the data lives.
/// Connection strings and commands (`primary_conninfo`,
/// `restore_command`) are not recorded.
const POSTGRES_SETTINGS: [&str; 29] = [
    "shared_buffers",
    "effective_cache_size",
    "work_mem",
    "maintenance_work_mem",
    "temp_buffers",
    "huge_pages",
    "max_connections",
    "superuser_reserved_connections",
    "max_worker_processes",
    "max_parallel_",
    "wal_",
    "synchronous_commit",
    "fsync",
    "full_page_writes",
    "commit_delay",
    "commit_siblings",
    "checkpoint_",
    "max_wal_size",
    "min_wal_size",
    "random_page_cost",
    "seq_page_cost",
    "effective_io_concurrency",
    "default_statistics_target",
    "jit",
    "autovacuum",
    "autovacuum_",
    "bgwriter_",
    "shared_preload_libraries",
    "data_directory",
];

/// Whether `name` (MariaDB's `loose_` prefix aside) is one of `list`'s.
fn recorded(list: &[&str], name: &str) -> bool {
    let name = name.strip_prefix("loose_").unwrap_or(name);
    list.iter().any(|setting| match setting.strip_suffix('_') {
        Some(_) => name.starts_with(setting),
        None => name == *setting,
    })
}

/// The settings of the server's sections of MariaDB's or MySQL's option
/// files that explain its speed ([`MYSQL_SETTINGS`]; later files override
/// earlier ones, as the server reads them).
fn mysql(dir: &Path, settings: &mut BTreeMap<String, String>) {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            pending.extend(entries(&path).into_iter().rev());
        } else if file_name(&path).ends_with(".cnf") {
            files.push(path);
        }
    }
    files.sort();
    let server = ["mysqld", "mariadb", "mariadbd", "server"];
    for file in files {
        for (section, key, value) in ini(&read(&file).unwrap_or_default()) {
            // [mysqld] or [mysqld-10.11], not [mysqldump] or [mysqld_safe].
            let of_server = server.iter().any(|s| {
                section == *s
                    || section
                        .strip_prefix(s)
                        .is_some_and(|rest| rest.starts_with('-'))
            });
            let key = key.replace('-', "_");
            if of_server && recorded(&MYSQL_SETTINGS, &key) {
                settings.insert(format!("mysqld {key}"), value);
            }
        }
    }
}

/// A running MariaDB/MySQL server's `--name=value` arguments of
/// [`MYSQL_SETTINGS`], which override its files.
fn mysqld_arguments(running: &[Vec<String>], settings: &mut BTreeMap<String, String>) {
    for args in running {
        for arg in args.iter().skip(1) {
            let Some(option) = arg.strip_prefix("--") else {
                continue;
            };
            let (key, value) = option.split_once('=').unwrap_or((option, "ON"));
            let key = key.replace('-', "_");
            if recorded(&MYSQL_SETTINGS, &key) {
                settings.insert(format!("mysqld {key}"), value.to_string());
            }
        }
    }
}

/// PostgreSQL's settings that explain its speed ([`POSTGRES_SETTINGS`]) in
/// each cluster's postgresql.conf and conf.d.
fn postgres(dir: &Path, settings: &mut BTreeMap<String, String>) {
    for version in entries(dir) {
        for cluster in entries(&version) {
            let mut files = vec![cluster.join("postgresql.conf")];
            files.extend(entries(&cluster.join("conf.d")));
            for file in files {
                for line in read(&file).unwrap_or_default().lines() {
                    let line = line.split('#').next().unwrap_or("").trim();
                    let Some((key, value)) = line.split_once('=') else {
                        continue;
                    };
                    if !recorded(&POSTGRES_SETTINGS, key.trim()) {
                        continue;
                    }
                    settings.insert(
                        format!(
                            "postgres {} {} {}",
                            file_name(&version),
                            file_name(&cluster),
                            key.trim()
                        ),
                        value.trim().trim_matches('\'').to_string(),
                    );
                }
            }
        }
    }
}

/// nginx's main file's directives that change how it serves.
fn nginx(file: &Path, settings: &mut BTreeMap<String, String>) {
    for line in read(file).unwrap_or_default().lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some((name, value)) = line.split_once(char::is_whitespace) else {
            continue;
        };
        if NGINX.contains(&name) {
            let value = value.trim().trim_end_matches(';').trim();
            settings.insert(format!("nginx {name}"), value.to_string());
        }
    }
}

/// Apache's MPM and its limits (StartServers, MaxRequestWorkers, ...).
fn apache(dir: &Path, settings: &mut BTreeMap<String, String>) {
    for file in entries(&dir.join("mods-enabled")) {
        let name = file_name(&file);
        let Some(mpm) = name
            .strip_prefix("mpm_")
            .and_then(|n| n.strip_suffix(".load"))
        else {
            continue;
        };
        settings.insert("apache2 MPM".into(), mpm.to_string());
        let conf = dir.join("mods-enabled").join(format!("mpm_{mpm}.conf"));
        for line in read(&conf).unwrap_or_default().lines() {
            let line = line.trim();
            if line.starts_with('#') || line.starts_with('<') {
                continue;
            }
            if let Some((key, value)) = line.split_once(char::is_whitespace) {
                settings.insert(format!("apache2 mpm_{mpm} {key}"), value.trim().to_string());
            }
        }
    }
}

fn redis(file: &Path, settings: &mut BTreeMap<String, String>) {
    let mut saves = Vec::new();
    for line in read(file).unwrap_or_default().lines() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once(char::is_whitespace) else {
            continue;
        };
        if key == "save" {
            // Several save lines add up to one policy.
            saves.push(value.trim().trim_matches('"').to_string());
        } else if REDIS.contains(&key) {
            settings.insert(format!("redis {key}"), value.trim().to_string());
        }
    }
    if !saves.is_empty() {
        settings.insert("redis save".into(), saves.join(", "));
    }
}

/// Memory file systems mounted where an application keeps files (000's
/// caches and sessions on tmpfs), with their size; the system's own
/// (/dev, /run, /sys, /proc) are left out.
fn tmpfs(mounts: &Path, settings: &mut BTreeMap<String, String>) {
    for line in read(mounts).unwrap_or_default().lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [_, point, kind, options, ..] = fields[..] else {
            continue;
        };
        if kind != "tmpfs" && kind != "ramfs" {
            continue;
        }
        let system = ["/dev", "/run", "/sys", "/proc"];
        if system
            .iter()
            .any(|s| point == *s || point.starts_with(&format!("{s}/")))
        {
            continue;
        }
        let size = options
            .split(',')
            .find(|o| o.starts_with("size="))
            .map_or(String::new(), |s| format!(" {s}"));
        settings.insert(format!("mount {point}"), format!("{kind}{size}"));
    }
}

/// A process's arguments, from /proc/PID/cmdline, or none for a kernel
/// thread or a process gone.
fn arguments(process: &Path) -> Option<Vec<String>> {
    let raw = fs::read(process.join("cmdline"))
        .ok()
        .filter(|r| !r.is_empty())?;
    let raw = String::from_utf8_lossy(&raw);
    Some(
        raw.trim_end_matches('\0')
            .split('\0')
            .map(str::to_string)
            .collect(),
    )
}

/// A command line as the record keeps it: its arguments without
/// credentials, joined by blanks. A process that wrote its title over its
/// arguments (`nginx: master process ... -c FILE`) is read word by word.
fn shown_command(args: &[String]) -> String {
    let words: Vec<String> = match args {
        [title] if title.contains(' ') => title.split(' ').map(str::to_string).collect(),
        _ => args.to_vec(),
    };
    redact_arguments(&words).join(" ")
}

/// The command line of each watched name's oldest process (lowest pid),
/// without credentials.
fn commands(proc_: &Path, watched: &[String]) -> BTreeMap<String, String> {
    let mut found: BTreeMap<String, (u64, String)> = BTreeMap::new();
    if watched.is_empty() {
        return BTreeMap::new();
    }
    for entry in entries(proc_) {
        let Ok(pid) = file_name(&entry).parse::<u64>() else {
            continue;
        };
        let Some(comm) = read(&entry.join("comm")) else {
            continue;
        };
        let comm = comm.trim();
        let Some(name) = watched
            .iter()
            .find(|w| comm == w.as_str() || comm.starts_with(&format!("{w}:")))
        else {
            continue;
        };
        let Some(args) = arguments(&entry) else {
            continue;
        };
        if found.get(name).is_none_or(|(p, _)| pid < *p) {
            found.insert(name.clone(), (pid, shown_command(&args)));
        }
    }
    found.into_iter().map(|(k, (_, v))| (k, v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let file = root.join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, text).unwrap();
    }

    /// 000's Raspberry Pi: MoodleBox's php-fpm pool and my.cnf (its code
    /// snippets 1 and 2), tmpfs caches, nginx, and a MariaDB process.
    #[test]
    fn the_settings_000_tuned_are_read_from_the_servers_files() {
        let root = std::env::temp_dir().join(format!("headroom-software-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let w = |path: &str, text: &str| write(&root, path, text);
        w(
            "var/lib/dpkg/status",
            "Package: nginx-core\nStatus: install ok installed\nVersion: 1.22.1-9\n\n\
             Package: nginx\nStatus: install ok installed\nVersion: 1.22.1-9\n\n\
             Package: php8.2-fpm\nStatus: install ok installed\nVersion: 8.2.7-1~deb12u1\n\n\
             Package: mariadb-server\nStatus: deinstall ok config-files\nVersion: 1:10.11.3-1\n\n\
             Package: postgresql-15\nStatus: install ok installed\nVersion: 15.5-0+deb12u1\n\n\
             Package: postgresql-common\nStatus: install ok installed\nVersion: 248\n\n\
             Package: bash\nStatus: install ok installed\nVersion: 5.2.15-2\n",
        );
        w(
            "etc/php/8.2/fpm/pool.d/www.conf",
            "[www]\nuser = www-data\n; pm.max_children = 99\npm = dynamic\npm.max_children = 5\n\
             pm.start_servers = 2\npm.min_spare_servers = 1\npm.max_spare_servers = 3\npm.max_requests = 50\n",
        );
        w(
            "etc/php/8.2/fpm/php.ini",
            "[PHP]\nmemory_limit = 128M\n[opcache]\n;opcache.enable=1\n",
        );
        w(
            "etc/php/8.2/fpm/conf.d/10-opcache.ini",
            "zend_extension=opcache.so\nopcache.enable=1\n",
        );
        w(
            "etc/mysql/mariadb.conf.d/50-server.cnf",
            "[server]\n[mysqld]\ninnodb_log_file_size = 16M\nbind-address = 127.0.0.1\n[client]\nport = 3306\n\
             [mysqldump]\nquick\n[mysqld_safe]\nnice = 0\n[mariadb-10.11]\nmax_connections = 40\n",
        );
        w(
            "etc/mysql/mariadb.conf.d/99-moodlebox.cnf",
            "[mysqld]\ninnodb_log_file_size = 64M\nquery_cache_type = 1\nquery-cache-size = 32M\nperformance_schema = OFF\nwsrep_sst_auth = root:pw\n!includedir /x\n",
        );
        w(
            "etc/mysql/my.cnf",
            "!includedir /etc/mysql/mariadb.conf.d/\n",
        );
        w(
            "etc/postgresql/15/main/postgresql.conf",
            "shared_buffers = 128MB\t\t# min 128kB\n#work_mem = 4MB\nlisten_addresses = 'localhost'\n",
        );
        w(
            "etc/nginx/nginx.conf",
            "user www-data;\nworker_processes auto;\nevents {\n\tworker_connections 768;\n\t# multi_accept on;\n}\nhttp {\n\tsendfile on;\n\tgzip on;\n}\n",
        );
        w(
            "etc/apache2/mods-enabled/mpm_event.load",
            "LoadModule mpm_event_module x\n",
        );
        w(
            "etc/apache2/mods-enabled/mpm_event.conf",
            "<IfModule mpm_event_module>\n\tStartServers\t\t\t 2\n\tMaxRequestWorkers\t  150\n</IfModule>\n",
        );
        w(
            "etc/redis/redis.conf",
            "# save 3600 1\nsave 3600 1\nsave 300 100\nmaxmemory 64mb\nport 6379\n",
        );
        w(
            "proc/mounts",
            "tmpfs /run tmpfs rw,nosuid,size=1000k 0 0\ntmpfs /dev/shm tmpfs rw 0 0\n\
             tmpfs /var/cache/moodle tmpfs rw,nosuid,size=65536k,mode=755 0 0\n\
             tmpfs /var/www/moodledata/sessions tmpfs rw,size=16384k 0 0\n/dev/sda1 / ext4 rw 0 0\n",
        );
        w("proc/812/comm", "mariadbd\n");
        w(
            "proc/812/cmdline",
            "/usr/sbin/mariadbd\0--innodb-flush-log-at-trx-commit=2\0",
        );
        w("proc/9000/comm", "mariadbd\n");
        w("proc/9000/cmdline", "/usr/sbin/mariadbd\0--later\0");
        w("proc/self/comm", "x\n");
        let watched = ["mariadbd".to_string(), "nginx".to_string()];
        // php-fpm not running: the installed pools.
        let installed = ServerSoftware::collect(&root, &root.join("proc"), &watched);
        // Running with a configuration of its own (as the test suite's
        // php-fpm -y runs): that file's pools, and its includes.
        let d = root.display();
        w("proc/77/comm", "php-fpm8.2\n");
        w(
            "proc/77/cmdline",
            &format!("php-fpm: master process ({d}/site/fpm.conf)\0\0\0"),
        );
        w(
            "site/fpm.conf",
            &format!("[global]\npid = x\ninclude={d}/site/pools/*.conf\n[www]\npm = static\npm.max_children = 8\n"),
        );
        w(
            "site/pools/extra.conf",
            "[extra]\npm = ondemand\npm.max_children = 2\n",
        );
        w("site/pools/ignored.txt", "[no]\npm = static\n");
        w("proc/78/comm", "nginx\n");
        w(
            "proc/78/cmdline",
            &format!(
                "nginx: master process /usr/sbin/nginx -c {d}/site/nginx.conf -g daemon off;\0"
            ),
        );
        w("site/nginx.conf", "worker_processes 1;\n");
        let running = ServerSoftware::collect(&root, &root.join("proc"), &watched);
        // A second master with a [www] pool of its own: each is named by
        // its file, and the first one's names do not change.
        w("proc/79/comm", "php-fpm8.2\n");
        w(
            "proc/79/cmdline",
            &format!("php-fpm: master process ({d}/other.conf)\0"),
        );
        w("other.conf", "[www]\npm.max_children = 3\n");
        let two = ServerSoftware::collect(&root, &root.join("proc"), &watched);
        fs::remove_dir_all(&root).unwrap();
        let both: Vec<(&String, &String)> = two
            .settings
            .iter()
            .filter(|(k, _)| k.ends_with("[www] pm.max_children"))
            .collect();
        assert_eq!(both.len(), 2, "{both:?}");
        assert_eq!(
            two.settings.get(&format!(
                "php-fpm 8.2 ({d}/other.conf) [www] pm.max_children"
            )),
            Some(&"3".to_string())
        );
        for (key, value) in running
            .settings
            .iter()
            .filter(|(k, _)| k.starts_with("php-fpm"))
        {
            assert_eq!(two.settings.get(key), Some(value), "{key}");
        }
        let site = format!("php-fpm 8.2 ({d}/site/fpm.conf)");
        let setting = |key: &str| {
            running
                .settings
                .get(&format!("{site} {key}"))
                .map(String::as_str)
        };
        assert_eq!(setting("[www] pm.max_children"), Some("8"));
        assert_eq!(setting("[www] pm"), Some("static"));
        assert_eq!(setting("[extra] pm.max_children"), Some("2"));
        assert_eq!(setting("[no] pm"), None);
        assert_eq!(setting("[www] pm.max_requests"), None);
        // The master of the PHP version's own configuration is named as
        // the installed pools are.
        assert_eq!(
            master_name("8.2", Path::new("/etc/php/8.2/fpm/php-fpm.conf")),
            "8.2"
        );
        assert_eq!(
            master_name("", Path::new("/srv/fpm.conf")),
            "(/srv/fpm.conf)"
        );
        let setting = |key: &str| running.settings.get(key).map(String::as_str);
        assert_eq!(setting("nginx worker_processes"), Some("1"));
        assert_eq!(setting("php 8.2 fpm opcache.enable"), Some("1"));
        let s = installed;
        let versions: Vec<(&str, &str)> = s
            .versions
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            versions,
            vec![
                ("nginx", "1.22.1-9"),
                ("nginx-core", "1.22.1-9"),
                ("php8.2-fpm", "8.2.7-1~deb12u1"),
                ("postgresql-15", "15.5-0+deb12u1"),
            ]
        );
        let setting = |key: &str| s.settings.get(key).map(String::as_str);
        // Code snippet 1, with the commented-out line ignored.
        assert_eq!(setting("php-fpm 8.2 [www] pm.max_children"), Some("5"));
        assert_eq!(setting("php-fpm 8.2 [www] pm"), Some("dynamic"));
        assert_eq!(setting("php-fpm 8.2 [www] pm.max_requests"), Some("50"));
        assert_eq!(setting("php-fpm 8.2 [www] user"), None);
        assert_eq!(setting("php 8.2 fpm opcache.enable"), Some("1"));
        assert_eq!(setting("php 8.2 fpm memory_limit"), Some("128M"));
        // Code snippet 2: the later file wins; dashes read as underscores;
        // the client's section is not the server's.
        assert_eq!(setting("mysqld innodb_log_file_size"), Some("64M"));
        assert_eq!(setting("mysqld query_cache_size"), Some("32M"));
        assert_eq!(setting("mysqld performance_schema"), Some("OFF"));
        // Settings that do not explain the server's speed are left out.
        assert_eq!(setting("mysqld wsrep_sst_auth"), None);
        assert_eq!(setting("mysqld bind_address"), None);
        // The running server's arguments override its files.
        assert_eq!(setting("mysqld innodb_flush_log_at_trx_commit"), Some("2"));
        assert_eq!(setting("mysqld later"), None);
        assert_eq!(setting("mysqld port"), None);
        assert_eq!(setting("mysqld quick"), None);
        assert_eq!(setting("mysqld nice"), None);
        assert_eq!(setting("mysqld max_connections"), Some("40"));
        assert_eq!(setting("postgres 15 main shared_buffers"), Some("128MB"));
        assert_eq!(setting("postgres 15 main listen_addresses"), None);
        assert_eq!(setting("postgres 15 main work_mem"), None);
        assert_eq!(setting("nginx worker_processes"), Some("auto"));
        assert_eq!(setting("nginx worker_connections"), Some("768"));
        assert_eq!(setting("nginx multi_accept"), None);
        assert_eq!(setting("apache2 MPM"), Some("event"));
        assert_eq!(setting("apache2 mpm_event MaxRequestWorkers"), Some("150"));
        assert_eq!(setting("redis save"), Some("3600 1, 300 100"));
        assert_eq!(setting("redis maxmemory"), Some("64mb"));
        // The caches on tmpfs, not the system's own.
        assert_eq!(
            setting("mount /var/cache/moodle"),
            Some("tmpfs size=65536k")
        );
        assert_eq!(
            setting("mount /var/www/moodledata/sessions"),
            Some("tmpfs size=16384k")
        );
        assert!(!s
            .settings
            .keys()
            .any(|k| k.starts_with("mount /run") || k.starts_with("mount /dev")));
        // The oldest mariadbd's command line; nginx did not run.
        assert_eq!(
            s.commands.get("mariadbd").map(String::as_str),
            Some("/usr/sbin/mariadbd --innodb-flush-log-at-trx-commit=2")
        );
        assert_eq!(s.commands.len(), 1);
    }

    /// Adversary-3's finding 6: a php-fpm pool, a MariaDB server, an
    /// application's process and redis-cli holding credentials, and a
    /// PostgreSQL and a MariaDB configuration file holding more. None
    /// reaches the record; the settings around them stay readable.
    #[test]
    fn credentials_stay_out_of_the_record() {
        let root = std::env::temp_dir().join(format!("headroom-secrets-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let w = |path: &str, text: &str| write(&root, path, text);
        let d = root.display();
        w("proc/70/comm", "php-fpm8.2\n");
        w(
            "proc/70/cmdline",
            &format!("php-fpm: master process ({d}/fpm.conf)\0"),
        );
        w(
            "fpm.conf",
            "[www]\npm.max_children = 4\nenv[DB_PASSWORD] = s3cret15\n\
             php_admin_value[mysql.default_password] = s3cret16\n\
             php_value[session.save_path] = \"tcp://127.0.0.1:6379?auth=s3cret17\"\n",
        );
        w("proc/71/comm", "mariadbd\n");
        w(
            "proc/71/cmdline",
            "/usr/sbin/mariadbd\0--loose-file-key-management-filekey=s3cret01\0\
             --wsrep_sst_auth=root:s3cret02\0--password=s3cret03\0--init-connect=SET @p='s3cret04'\0\
             --port=3306\0",
        );
        w("proc/72/comm", "credproc\n");
        w(
            "proc/72/cmdline",
            "/opt/credproc\0--password\0s3cret05\0--db=mysql://app:s3cret06@127.0.0.1/db\0\
             --pwd=s3cret07\0-ps3cret08\0--api-key=s3cret09\0--dsn=pgsql:host=x;password=s3cret10\0\
             --db\0app:s3cret11@localhost\0--conninfo\0host=x password=s3cret12\0--listen\0:8080\0",
        );
        w("proc/72/environ", "DB_PASSWORD=s3cret14\0");
        w("proc/73/comm", "redis-cli\n");
        w(
            "proc/73/cmdline",
            "redis-cli\0-p\x006379\0-a\0s3cret13\0monitor\0",
        );
        w(
            "etc/postgresql/15/main/postgresql.conf",
            "shared_buffers = 128MB\n",
        );
        w(
            "etc/postgresql/15/main/conf.d/zz-adv3.conf",
            "primary_conninfo = 'host=127.0.0.1 user=rep password=s3cret18'\n\
             restore_command = 'PGPASSWORD=s3cret19 /bin/false %f %p'\n\
             archive_cleanup_command = 'pg_archivecleanup /var/lib/archive %r'\n",
        );
        w(
            "etc/mysql/mariadb.conf.d/zz-adv3.cnf",
            "[client]\npassword = s3cret20\n[mysqld]\nloose-file-key-management-filekey = s3cret21\n\
             loose-password = s3cret22\nkey_buffer_size = 16M\ninit_connect = SET @p='s3cret23'\n\
             datadir = /var/lib/mysql\n",
        );
        let watched: Vec<String> = ["php-fpm8.2", "mariadbd", "credproc", "redis-cli"]
            .iter()
            .map(|n| n.to_string())
            .collect();
        let s = ServerSoftware::collect(&root, &root.join("proc"), &watched);
        fs::remove_dir_all(&root).unwrap();
        let record = serde_json::to_string_pretty(&s).unwrap();
        assert!(!record.contains("s3cret"), "{record}");
        let setting = |key: &str| s.settings.get(key).map(String::as_str);
        // The database settings that hold them are not among those
        // recorded; those recorded stay readable.
        for left_out in [
            "postgres 15 main primary_conninfo",
            "postgres 15 main restore_command",
            "mysqld loose_file_key_management_filekey",
            "mysqld init_connect",
            "mysqld loose_password",
            "mysqld password",
            "mysqld port",
        ] {
            assert_eq!(setting(left_out), None, "{left_out}");
        }
        assert_eq!(setting("postgres 15 main shared_buffers"), Some("128MB"));
        assert_eq!(setting("mysqld key_buffer_size"), Some("16M"));
        assert_eq!(setting("mysqld datadir"), Some("/var/lib/mysql"));
        let command = |name: &str| s.commands.get(name).map(String::as_str).unwrap_or("");
        assert!(command("credproc").ends_with("--listen :8080"), "{record}");
        assert_eq!(command("redis-cli"), "redis-cli -p 6379 -a *** monitor");
        assert!(command("mariadbd").ends_with("--port=3306"), "{record}");
    }

    #[test]
    fn a_host_without_these_files_has_nothing_to_say() {
        let none = Path::new("/nonexistent-root");
        let s = ServerSoftware::collect(none, &none.join("proc"), &["x".into()]);
        assert!(s.is_empty());
        assert!(wanted("php7.4-fpm") && wanted("postgresql-16") && wanted("nginx"));
        assert!(!wanted("postgresql-common") && !wanted("php-fpm") && !wanted("nginx-common"));
    }
}
