//! Secrets kept out of what headroom writes down: a bundle's command
//! lines, scenario copies and a server's recorded settings.

/// `text` with the password of every `scheme://user:password@` in it
/// replaced by `***`: command lines and scenario copies kept in a bundle
/// must not carry credentials.
pub fn redact_credentials(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        let end = after
            .find(|c: char| {
                c == '/' || c == '?' || c == '#' || c.is_whitespace() || "'\"<>".contains(c)
            })
            .unwrap_or(after.len());
        let authority = &after[..end];
        match authority.rfind('@').and_then(|at_sign| {
            let userinfo = &authority[..at_sign];
            userinfo.find(':').map(|colon| (colon, at_sign))
        }) {
            Some((colon, at_sign)) => {
                out.push_str(&authority[..=colon]);
                out.push_str("***");
                out.push_str(&authority[at_sign..]);
            }
            None => out.push_str(authority),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// Words that make a setting's or a flag's name a credential's:
/// `password`, `requirepass`, `wsrep_sst_auth`, `--token`, `secret_key`,
/// `--pwd`, `primary_conninfo`, `restore_command` (it may hold a
/// `PGPASSWORD=`), `file_key_management_filekey`, `ssl_passphrase_command`.
const SECRET_WORDS: [&str; 11] = [
    "pass",
    "secret",
    "token",
    "auth",
    "credential",
    "private",
    "pwd",
    "conninfo",
    "_command",
    "filekey",
    "passphrase",
];

/// Whether a setting or a flag holds a credential by its name: one of
/// [`SECRET_WORDS`], a name whose last word is a key (`--api-key`,
/// `secret_key`, but not `key_buffer_size`), or MariaDB's `init_connect`
/// (SQL run at each login, which may set a password). MariaDB's `loose-`
/// prefix and dashes for underscores are read as the server reads them.
pub fn secret_name(name: &str) -> bool {
    let name = name
        .trim_start_matches('-')
        .to_ascii_lowercase()
        .replace('-', "_");
    let name = name.strip_prefix("loose_").unwrap_or(&name);
    let last_word = name.rsplit(['_', '.']).next().unwrap_or(name);
    SECRET_WORDS.iter().any(|word| name.contains(word))
        || last_word.ends_with("key")
        || name == "init_connect"
}

/// `text` with every credential inside it as `***`: a URL's password
/// (see [`redact_credentials`]), the password of a `user:password@host`
/// without a scheme, and the value after `password=`, `PGPASSWORD=`,
/// `pwd=` or `passwd=` (a DSN's, a libpq connection string's, an
/// environment assignment's).
pub fn redact_value(text: &str) -> String {
    redact_assigned(&redact_userinfo(&redact_credentials(text)))
}

/// Names whose value after `=` is a password, lowercase.
const ASSIGNED: [&str; 3] = ["password=", "passwd=", "pwd="];

/// The value after each `password=` (any case, `PGPASSWORD=` and
/// `db_password=` too), `passwd=` or `pwd=` as `***`: up to a blank, a
/// `;` or `&`, or inside the quotes it starts with.
fn redact_assigned(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some((start, marker)) = ASSIGNED
        .iter()
        .filter_map(|m| lower[at..].find(m).map(|i| (at + i, *m)))
        .min()
    {
        let value = start + marker.len();
        out.push_str(&text[at..value]);
        let rest = &text[value..];
        let end = match rest.chars().next() {
            Some(quote @ ('\'' | '"')) => rest[1..].find(quote).map_or(rest.len(), |i| i + 2),
            _ => rest
                .find(|c: char| c.is_whitespace() || ";&'\"".contains(c))
                .unwrap_or(rest.len()),
        };
        if end > 0 {
            out.push_str("***");
        }
        at = value + end;
    }
    out.push_str(&text[at..]);
    out
}

/// The password of each `user:password@host` written without a scheme
/// (`app:pw@localhost`) as `***`.
fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at_sign) = rest.find('@') {
        // The word the `@` ends: back to a blank, a quote, `=`, `/`, ...
        let start = rest[..at_sign]
            .rfind(|c: char| c.is_whitespace() || "'\"=/;,(<[".contains(c))
            .map_or(0, |i| i + 1);
        match rest[start..at_sign].find(':') {
            Some(colon) if start + colon + 1 < at_sign => {
                out.push_str(&rest[..=start + colon]);
                out.push_str("***@");
            }
            _ => out.push_str(&rest[..=at_sign]),
        }
        rest = &rest[at_sign + 1..];
    }
    out.push_str(rest);
    out
}

/// The clients and tools of MariaDB and MySQL, whose `-pPASSWORD` (the
/// password glued to `-p`) is their way to give a password.
fn mysql_program(program: &str) -> bool {
    ["mysql", "mariadb"]
        .iter()
        .any(|start| program.starts_with(start))
}

/// A process's arguments (as /proc/PID/cmdline holds them, the program
/// first) with credentials as `***`: the value of a flag named like a
/// credential (`--password=x`, `--token x`, `--api-key=x`), a password
/// glued to `-p` (`-ppw`), redis-cli's `-a PASSWORD`, and any credential
/// inside a value ([`redact_value`]). `-p` is read by the program: MariaDB's
/// and MySQL's programs take a password glued to it (a lone `-p` asks for
/// one: the word after it is the database); redis-cli's is a port; for
/// other programs it is a password after it or glued to it, unless that
/// is a number (a port: `-p8080`, `-p 11211`).
pub fn redact_arguments(args: &[String]) -> Vec<String> {
    let program = args
        .first()
        .map(|p| p.rsplit('/').next().unwrap_or(p))
        .unwrap_or("");
    let mysql = mysql_program(program);
    let redis = program == "redis-cli";
    let mut secret_next = false;
    let mut port_or_secret_next = false;
    args.iter()
        .enumerate()
        .map(|(i, arg)| {
            let shown = if secret_next || (port_or_secret_next && !number(arg)) {
                "***".to_string()
            } else if let Some((flag, _)) = arg
                .split_once('=')
                .filter(|(f, _)| f.starts_with('-') && secret_name(f))
            {
                format!("{flag}=***")
            } else if glued_password(arg, mysql) {
                "-p***".to_string()
            } else {
                redact_value(arg)
            };
            let flag = i > 0 && arg.starts_with('-') && !arg.contains('=');
            secret_next = flag && (secret_name(arg) || (arg == "-a" && redis));
            port_or_secret_next = flag && arg == "-p" && !mysql && !redis;
            shown
        })
        .collect()
}

fn number(word: &str) -> bool {
    !word.is_empty() && word.chars().all(|c| c.is_ascii_digit())
}

/// `-pVALUE`: a password for MariaDB's and MySQL's programs; for others
/// unless the value is a number (a port).
fn glued_password(arg: &str, mysql: bool) -> bool {
    match arg.strip_prefix("-p") {
        Some(value) if !value.is_empty() && !value.starts_with('-') => mysql || !number(value),
        _ => false,
    }
}

/// Writes `bytes` to a file only its owner may read (mode 0600), also
/// when the file was there before, readable by others: accounts, saved
/// exchanges with their cookies.
pub fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &[&str]) -> Vec<String> {
        line.iter().map(|a| a.to_string()).collect()
    }

    fn shown(line: &[&str]) -> String {
        redact_arguments(&args(line)).join(" ")
    }

    #[test]
    fn names_of_credentials() {
        for name in [
            "requirepass",
            "wsrep_sst_auth",
            "--token",
            "password",
            "--pwd",
            "--api-key",
            "secret_key",
            "primary_conninfo",
            "restore_command",
            "ssl_passphrase_command",
            "loose-file-key-management-filekey",
            "loose_file_key_management_filekey",
            "file_key_management_filekey",
            "init_connect",
            "--init-connect",
            "loose-init-connect",
        ] {
            assert!(secret_name(name), "{name}");
        }
        for name in [
            "key_buffer_size",
            "pm.max_children",
            "innodb_buffer_pool_size",
            "shared_buffers",
            "--port",
            "--datadir",
            "max_connections",
            "foreign_key_checks",
        ] {
            assert!(!secret_name(name), "{name}");
        }
    }

    /// The credentials adversary-3's finding 6 found in a bundle's
    /// manifest, in the arguments of a MariaDB server, of a process of the
    /// application's and of redis-cli.
    #[test]
    fn no_credential_of_a_command_line_survives() {
        let mariadbd = shown(&[
            "/usr/sbin/mariadbd",
            "--loose-file-key-management-filekey=s3cret01",
            "--wsrep_sst_auth=root:s3cret02",
            "--password=s3cret03",
            "--init-connect=SET @p='s3cret04'",
            "--port=3306",
            "--datadir=/var/lib/mysql",
            "--key-buffer-size=16M",
        ]);
        assert_eq!(
            mariadbd,
            "/usr/sbin/mariadbd --loose-file-key-management-filekey=*** --wsrep_sst_auth=*** \
             --password=*** --init-connect=*** --port=3306 --datadir=/var/lib/mysql \
             --key-buffer-size=16M"
        );
        let app = shown(&[
            "/opt/credproc",
            "--password",
            "s3cret05",
            "--db=mysql://app:s3cret06@127.0.0.1/db",
            "--pwd=s3cret07",
            "-ps3cret08",
            "--api-key=s3cret09",
            "--dsn=pgsql:host=x;password=s3cret10",
            "--db",
            "app:s3cret11@localhost",
            "--conninfo",
            "host=x password=s3cret12",
            "--listen",
            "127.0.0.1:8080",
            "-p8080",
        ]);
        assert_eq!(
            app,
            "/opt/credproc --password *** --db=mysql://app:***@127.0.0.1/db --pwd=*** -p*** \
             --api-key=*** --dsn=pgsql:host=x;password=*** --db app:***@localhost --conninfo *** \
             --listen 127.0.0.1:8080 -p8080"
        );
        let redis = shown(&[
            "redis-cli",
            "-h",
            "127.0.0.1",
            "-p",
            "6379",
            "-a",
            "s3cret13",
        ]);
        assert_eq!(redis, "redis-cli -h 127.0.0.1 -p 6379 -a ***");
        for line in [mariadbd, app, redis] {
            assert!(!line.contains("s3cret"), "{line}");
        }
    }

    /// MariaDB's and MySQL's programs: `-pPASSWORD` hides even a number,
    /// and a lone `-p` (asking for the password) leaves the database name
    /// after it.
    #[test]
    fn mysql_programs_glue_the_password_to_p() {
        assert_eq!(
            shown(&["mysql", "-uroot", "-p12345", "-P3306", "app"]),
            "mysql -uroot -p*** -P3306 app"
        );
        assert_eq!(shown(&["mysqldump", "-p", "app"]), "mysqldump -p app");
        assert_eq!(
            shown(&["/usr/bin/mariadb-admin", "-pS3cr3t", "status"]),
            "/usr/bin/mariadb-admin -p*** status"
        );
        // Another program's lone -p: the word after it is a password,
        // unless it is a port.
        assert_eq!(
            shown(&[
                "lms-server",
                "serve",
                "--token",
                "abc",
                "-p",
                "y",
                "--listen",
                "1"
            ]),
            "lms-server serve --token *** -p *** --listen 1"
        );
        assert_eq!(
            shown(&["/usr/bin/memcached", "-m", "64", "-p", "11211"]),
            "/usr/bin/memcached -m 64 -p 11211"
        );
    }

    /// Values of settings: PostgreSQL's connection strings and commands,
    /// a DSN, a URL, `user:password@host` without a scheme; paths, sizes
    /// and ports stay readable.
    #[test]
    fn no_credential_of_a_value_survives() {
        assert_eq!(
            redact_value("host=127.0.0.1 user=rep password=s3cret18 port=5432"),
            "host=127.0.0.1 user=rep password=*** port=5432"
        );
        assert_eq!(
            redact_value("PGPASSWORD=s3cret19 /bin/false %f %p"),
            "PGPASSWORD=*** /bin/false %f %p"
        );
        assert_eq!(
            redact_value("host=x password='two words' dbname=app"),
            "host=x password=*** dbname=app"
        );
        assert_eq!(
            redact_value("Server=db;Uid=app;Pwd=x1;Database=lms"),
            "Server=db;Uid=app;Pwd=***;Database=lms"
        );
        assert_eq!(redact_value("passwd=abc&next=1"), "passwd=***&next=1");
        assert_eq!(
            redact_value("postgres://lms:s3cret@db:5432/lms and redis://cache:6379"),
            "postgres://lms:***@db:5432/lms and redis://cache:6379"
        );
        assert_eq!(redact_value("root:s3cret02@db"), "root:***@db");
        for readable in [
            "/var/lib/postgresql/15/main",
            "128MB",
            "127.0.0.1:5432",
            "SET @x = 1",
            "ann@example.org",
            "git@host:repo",
            "password=",
        ] {
            assert_eq!(redact_value(readable), readable);
        }
    }
}
