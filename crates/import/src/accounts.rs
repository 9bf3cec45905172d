//! The data file of a recorded login: [`recorded`] writes the account the
//! recording typed as a one-row CSV, [`from_user`] reads the user's CSV of
//! accounts and names its columns after the typed fields.

use crate::correlate::DataColumn;
use crate::emit::DataFile;
use std::path::Path;

/// The recorded account as CSV bytes (names, then the values as typed:
/// the scenario's text escapes `${`, the CSV does not), and the data file
/// that reads it.
pub fn recorded(file: String, typed: &[DataColumn]) -> Result<(DataFile, Vec<u8>), String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let names: Vec<&str> = typed.iter().map(|d| d.name.as_str()).collect();
    let values: Vec<String> = typed.iter().map(|d| d.value.replace("$${", "${")).collect();
    w.write_record(&names).map_err(|e| e.to_string())?;
    w.write_record(&values).map_err(|e| e.to_string())?;
    let bytes = w.into_inner().map_err(|e| e.to_string())?;
    let data = DataFile {
        file,
        columns: names.iter().map(|s| s.to_string()).collect(),
        header: true,
    };
    Ok((data, bytes))
}

/// The user's CSV of accounts: its header names the columns when it
/// holds the typed fields' names (or username/password); otherwise its
/// first columns are taken in the order the fields were typed.
pub fn from_user(
    path: &Path,
    typed: &[DataColumn],
    scenario_dir: &Path,
    warn: &mut dyn FnMut(String),
) -> Result<DataFile, String> {
    let first = first_row(path)?;
    let header = typed
        .iter()
        .any(|d| first.iter().any(|cell| names_column(cell, d)));
    let columns = if header {
        header_columns(path, &first, typed)?
    } else {
        // Words without a digit or symbol in every cell look like a header
        // the importer could not read: say so rather than log in as
        // "login/pwd".
        let looks_like_names = first.iter().all(|c| {
            !c.is_empty()
                && c.chars()
                    .all(|ch| ch.is_ascii_alphabetic() || ch == '_' || ch == ' ')
        });
        if looks_like_names {
            warn(format!(
                "--data {}: the first row ({}) looks like a header but names no column username or password; it is read as an account. Name the columns username,password (or remove the header)",
                path.display(),
                first.join(",")
            ));
        }
        positional_columns(path, &first, typed)?
    };
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = std::fs::canonicalize(scenario_dir).unwrap_or_else(|_| scenario_dir.to_path_buf());
    let file = match absolute.strip_prefix(&dir) {
        Ok(relative) => relative.display().to_string(),
        Err(_) => absolute.display().to_string(),
    };
    Ok(DataFile {
        file,
        columns,
        header,
    })
}

fn first_row(path: &Path) -> Result<Vec<String>, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_path(path)
        .map_err(|e| format!("cannot read --data {}: {e}", path.display()))?;
    match reader.records().next() {
        Some(Ok(r)) => Ok(r.iter().map(|c| c.trim().to_string()).collect()),
        Some(Err(e)) => Err(format!("--data {}: {e}", path.display())),
        None => Err(format!(
            "--data {} is empty: one row per account",
            path.display()
        )),
    }
}

/// A header cell naming a typed field: its variable, its form field, or a
/// usual word for a user name or password.
fn names_column(cell: &str, d: &DataColumn) -> bool {
    let cell = cell.to_ascii_lowercase();
    cell == d.name
        || cell == d.field.to_ascii_lowercase()
        || (d.name == "username" && ["user", "login", "email", "account"].contains(&cell.as_str()))
        || (d.name == "password" && ["pass", "passwd", "pw"].contains(&cell.as_str()))
}

/// A header that names some columns must name every value the journey
/// reads from the file (a secret among them): say which is missing.
fn header_columns(
    path: &Path,
    first: &[String],
    typed: &[DataColumn],
) -> Result<Vec<String>, String> {
    if let Some(d) = typed
        .iter()
        .find(|d| !first.iter().any(|cell| names_column(cell, d)))
    {
        return Err(format!(
            "--data {}: its header has no column {} (the value sent in field {} by step {:02}{}): add that column with each user's value",
            path.display(),
            d.name,
            d.field,
            d.step + 1,
            if d.secret { ", a secret" } else { "" }
        ));
    }
    Ok(first
        .iter()
        .enumerate()
        .map(
            |(i, cell)| match typed.iter().find(|d| names_column(cell, d)) {
                Some(d) => d.name.clone(),
                None => format!("column_{}", i + 1),
            },
        )
        .collect())
}

/// No header: the first columns in the order the fields were typed.
fn positional_columns(
    path: &Path,
    first: &[String],
    typed: &[DataColumn],
) -> Result<Vec<String>, String> {
    if first.len() < typed.len() {
        return Err(format!(
            "--data {}: its rows have {} columns and no header naming them; the login form needs {} ({})",
            path.display(),
            first.len(),
            typed.len(),
            typed.iter().map(|d| d.name.as_str()).collect::<Vec<_>>().join(", ")
        ));
    }
    Ok((0..first.len())
        .map(|i| match typed.get(i) {
            Some(d) => d.name.clone(),
            None => format!("column_{}", i + 1),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed() -> Vec<DataColumn> {
        let column = |name: &str, field: &str, value: &str, secret: bool| DataColumn {
            name: name.into(),
            field: field.into(),
            value: value.into(),
            secret,
            step: 1,
        };
        vec![
            column("username", "wpName", "Alice", false),
            column("password", "wpPassword", "a$${b", true),
        ]
    }

    fn csv_file(name: &str, text: &str) -> (std::path::PathBuf, std::path::PathBuf) {
        let dir =
            std::env::temp_dir().join(format!("headroom-accounts-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("users.csv");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn the_recorded_account_is_written_as_typed() {
        let (data, bytes) = recorded("rec-users.csv".into(), &typed()).unwrap();
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            "username,password\nAlice,a${b\n"
        );
        assert_eq!(data.columns, ["username", "password"]);
        assert!(data.header);
    }

    #[test]
    fn a_header_names_the_columns_in_any_order() {
        let (dir, path) = csv_file("header", "pw,extra,Login\ns3,x,bob\n");
        let mut warned = Vec::new();
        let data = from_user(&path, &typed(), &dir, &mut |w| warned.push(w)).unwrap();
        assert_eq!(data.columns, ["password", "column_2", "username"]);
        assert!(data.header);
        assert_eq!(data.file, "users.csv");
        assert!(warned.is_empty());
    }

    #[test]
    fn a_header_without_the_secret_column_is_refused() {
        let (dir, path) = csv_file("missing", "username,email\nbob,b@x\n");
        let e = from_user(&path, &typed(), &dir, &mut |_| {}).err().unwrap();
        assert!(
            e.contains("its header has no column password (the value sent in field wpPassword by step 02, a secret)"),
            "{e}"
        );
    }

    #[test]
    fn rows_without_a_header_are_read_in_typed_order_and_a_wordy_row_is_warned() {
        let (dir, path) = csv_file("plain", "name,secret\n");
        let mut warned = Vec::new();
        let data = from_user(&path, &typed(), &dir, &mut |w| warned.push(w)).unwrap();
        assert_eq!(data.columns, ["username", "password"]);
        assert!(!data.header);
        assert_eq!(warned.len(), 1);
        assert!(warned[0].contains("the first row (name,secret) looks like a header"));
        let (dir, path) = csv_file("narrow", "bob\n");
        let e = from_user(&path, &typed(), &dir, &mut |_| {}).err().unwrap();
        assert!(e.contains("its rows have 1 columns and no header naming them; the login form needs 2 (username, password)"), "{e}");
    }
}
