//! `scenario from-har` proved on packaged PHP applications nobody here
//! wrote: a login and an edit recorded in real Chromium (Playwright, Debian's
//! chromium) against MediaWiki 1.39 (MariaDB, nginx, php-fpm; set up by
//! scripts/mediawiki) and DokuWiki (Debian's package), imported, replayed by
//! three users for two iterations each, and judged by the application's own
//! records: MediaWiki's `revision` and `text` tables, DokuWiki's page files
//! and change logs. Not by headroom's status codes: a wiki answers 200 to an
//! edit it refused.

use crate::support;

use crate::support::{browser, light, program, requires, root, run, stdout_json, temp_dir, text};
use std::path::Path;
use std::process::Command;

fn record(app: &str, base: &str, account: &(String, String), page: &str, said: &str, har: &Path) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/support/record_wiki.py");
    let recorded = Command::new("python3")
        .arg(&script)
        .args([app, base, &account.0, &account.1, page, said])
        .arg(har)
        .output()
        .unwrap();
    assert!(
        recorded.status.success(),
        "Playwright for Python and /usr/bin/chromium are needed (scripts/test installs them): {}",
        text(&recorded)
    );
}

/// Imports the recording with the accounts' CSV; returns the scenario's
/// text and what the import said.
fn import(dir: &Path, har: &Path, accounts: &[(String, String)]) -> (String, String) {
    let csv = dir.join("accounts.csv");
    let mut rows = String::from("username,password\n");
    for (u, p) in accounts {
        rows.push_str(&format!("{u},{p}\n"));
    }
    std::fs::write(&csv, rows).unwrap();
    let journey = dir.join("journey.yaml");
    let imported = run(&[
        "scenario",
        "from-har",
        har.to_str().unwrap(),
        "--data",
        csv.to_str().unwrap(),
        "-o",
        journey.to_str().unwrap(),
    ]);
    let said = text(&imported);
    assert_eq!(imported.status.code(), Some(0), "{said}");
    let yaml = std::fs::read_to_string(&journey).unwrap();
    for (_, password) in accounts {
        assert!(!yaml.contains(password.as_str()), "a password in:\n{yaml}");
        assert!(
            !said.contains(password.as_str()),
            "a password printed:\n{said}"
        );
    }
    (yaml, said)
}

/// The tester's one change to the imported journey: each account edits its
/// own page with its own text (the recording typed one page and one text;
/// replayed as is, every edit after the first would change nothing).
fn personalise(dir: &Path, yaml: &str, page: (&str, &str), typed: (&str, &str)) -> String {
    assert!(yaml.contains(page.0), "{yaml}");
    assert!(yaml.contains(typed.0), "{yaml}");
    let yaml = yaml.replace(page.0, page.1).replace(typed.0, typed.1);
    let journey = dir.join("journey.yaml");
    std::fs::write(&journey, &yaml).unwrap();
    let check = run(&["scenario", "check", journey.to_str().unwrap()]);
    assert!(check.status.success(), "{}\n{yaml}", text(&check));
    journey.to_str().unwrap().to_string()
}

fn replay(dir: &Path, journey: &str, target: &str) -> String {
    let bundle = dir.join("bundle");
    let out = run(&[
        "run",
        journey,
        "--target",
        target,
        "-c",
        "3",
        "--iterations",
        "2",
        "--json",
        "--out",
        bundle.to_str().unwrap(),
    ]);
    let json = stdout_json(&out);
    format!("{}\n{}", json["total"], text(&out))
}

/// A mark of this run, so that a text saved by an earlier run is not
/// taken for this one's (and an identical text is not a null edit).
fn nonce() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    format!("r{}x{}", t.as_secs(), std::process::id())
}

#[test]
fn mediawiki_login_and_edit_recorded_in_chromium_saves_every_users_edit() {
    requires!(
        root(),
        program("nginx", "nginx"),
        program("php-fpm8.2", "php-fpm"),
        program("mariadb", "mariadb-client"),
        program("/usr/share/mediawiki/index.php", "mediawiki"),
        program("python3", "python3"),
        browser(),
    );
    let _guard = light();
    let dir = temp_dir("har-mediawiki");
    std::fs::create_dir_all(&dir).unwrap();
    let wiki = support::mediawiki::start(&dir);
    let base = format!("http://127.0.0.1:{}", wiki.port);
    let accounts = support::mediawiki::accounts();
    let run_mark = nonce();
    let recorded_text = format!("Recorded in Chromium {run_mark}");
    let har = dir.join("mediawiki.har");
    record(
        "mediawiki",
        &base,
        &accounts[0],
        "HeadroomRecorded",
        &recorded_text,
        &har,
    );
    let saved = |like: &str| {
        support::mediawiki::count(&format!(
            "SELECT COUNT(*) FROM revision r JOIN slots s ON s.slot_revision_id = r.rev_id \
             JOIN content c ON c.content_id = s.slot_content_id \
             JOIN text t ON c.content_address = CONCAT('tt:', t.old_id) \
             JOIN actor a ON a.actor_id = r.rev_actor WHERE t.old_text LIKE '{like}'"
        ))
    };
    assert_eq!(
        saved(&format!("{recorded_text}%")),
        1,
        "the recording saved"
    );

    let (yaml, said) = import(&dir, &har, &accounts);
    // The edit form is multipart: its token and times are read from the
    // editor, the title typed in the URL stays as typed.
    assert!(said.contains("correlated: wpedittoken from step"), "{said}");
    assert!(
        said.contains("correlated: wplogintoken from step"),
        "{said}"
    );
    // The editor's stash call sends the token its script holds (inside a
    // JSON string, escaped): correlated, not asked of the user.
    assert!(said.contains("correlated: token from step"), "{said}");
    assert!(
        yaml.contains("multipart/form-data; boundary="),
        "the edit is sent as the browser sent it:\n{yaml}"
    );
    assert!(yaml.contains("\"title\": \"HeadroomRecorded\""), "{yaml}");
    let journey = personalise(
        &dir,
        &yaml,
        ("HeadroomRecorded", "Headroom_${username}"),
        (
            &recorded_text,
            &format!(
                "Edited by ${{username}} in loop ${{__iteration}} of user ${{__vu}} {run_mark}"
            ),
        ),
    );
    let out = replay(&dir, &journey, &base);
    // The wiki saved one revision per iteration, each by the account that
    // logged in (its actor), with that account's text.
    assert_eq!(saved(&format!("Edited by % {run_mark}")), 6, "{out}");
    for (user, _) in accounts.iter().take(5) {
        let by_user = support::mediawiki::count(&format!(
            "SELECT COUNT(*) FROM revision r JOIN slots s ON s.slot_revision_id = r.rev_id \
             JOIN content c ON c.content_id = s.slot_content_id \
             JOIN text t ON c.content_address = CONCAT('tt:', t.old_id) \
             JOIN actor a ON a.actor_id = r.rev_actor \
             WHERE a.actor_name = '{user}' AND t.old_text LIKE 'Edited by {user} in loop % {run_mark}'"
        ));
        assert!(by_user >= 1, "no revision by {user}: {out}");
    }
    drop(wiki);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn dokuwiki_login_and_edit_recorded_in_chromium_saves_every_users_edit() {
    requires!(crate::support::dokuwiki::in_chromium());
    let _guard = light();
    let dir = temp_dir("har-dokuwiki");
    let _ = std::fs::remove_dir_all(&dir);
    let accounts: Vec<(String, String)> = (1..=5)
        .map(|i| (format!("rec{i}"), format!("Dw-rec-pass-{i}")))
        .collect();
    let wiki = support::dokuwiki::start(&dir, &accounts);
    let base = format!("http://127.0.0.1:{}", wiki.port);
    let run_mark = nonce();
    let recorded_text = format!("Recorded in Chromium {run_mark}");
    let har = dir.join("dokuwiki.har");
    record(
        "dokuwiki",
        &base,
        &accounts[0],
        "playground:recorded",
        &recorded_text,
        &har,
    );
    let page =
        |id: &str| std::fs::read_to_string(wiki.data.join(format!("pages/playground/{id}.txt")));
    assert!(
        page("recorded").is_ok_and(|t| t.contains(&recorded_text)),
        "the recording saved"
    );
    let (yaml, said) = import(&dir, &har, &accounts);
    assert!(said.contains("correlated: sectok from step"), "{said}");
    assert!(said.contains("correlated: changecheck from step"), "{said}");
    let journey = personalise(
        &dir,
        &yaml,
        ("playground:recorded", "playground:${username}"),
        (
            &recorded_text,
            &format!(
                "Edited by ${{username}} in loop ${{__iteration}} of user ${{__vu}} {run_mark}"
            ),
        ),
    );
    let out = replay(&dir, &journey, &base);
    // DokuWiki's change log of each page: a line per saved edit, by its
    // account; the page holds the account's text.
    let mut saves = 0;
    for (user, _) in &accounts {
        let changes =
            std::fs::read_to_string(wiki.data.join(format!("meta/playground/{user}.changes")))
                .unwrap_or_default();
        let by_user = changes
            .lines()
            .filter(|l| l.split('\t').nth(4) == Some(user.as_str()))
            .count();
        assert!(by_user >= 1, "no save by {user}: {out}");
        assert_eq!(by_user, changes.lines().count(), "{changes}");
        saves += by_user;
        let text = page(user).unwrap();
        assert!(
            text.starts_with(&format!("Edited by {user} in loop ")) && text.contains(&run_mark),
            "{text}"
        );
    }
    assert_eq!(saves, 6, "{out}");
    drop(wiki);
    std::fs::remove_dir_all(&dir).unwrap();
}
