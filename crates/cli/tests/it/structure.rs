//! The workspace's structure, read from its sources: no two public types
//! share a name, no files of a crate import each other in a loop, and no
//! crate depends on a crate above it in the layers docs/development.md
//! lists. Each check is a function over plain text, proved on a small
//! planted example beside the check of the real workspace.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The crates' directories under crates/, by name (`load`, `cli`, ...).
fn crate_dirs() -> BTreeMap<String, PathBuf> {
    let mut dirs = BTreeMap::new();
    for entry in fs::read_dir(workspace().join("crates")).unwrap() {
        let path = entry.unwrap().path();
        if path.join("Cargo.toml").is_file() {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            dirs.insert(name, path);
        }
    }
    dirs
}

/// A crate's source files (under src/), by path relative to src/, with
/// their text.
fn sources(crate_dir: &Path) -> BTreeMap<String, String> {
    fn walk(dir: &Path, src: &Path, out: &mut BTreeMap<String, String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, src, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(src)
                    .unwrap()
                    .to_string_lossy()
                    .to_string();
                out.insert(rel, fs::read_to_string(&path).unwrap());
            }
        }
    }
    let src = crate_dir.join("src");
    let mut out = BTreeMap::new();
    walk(&src, &src, &mut out);
    out
}

// --- Rust text without comments, literals and test modules ---------------

/// The code of a Rust file with its comments and the contents of its
/// string and character literals blanked, so that braces and `use` lines
/// are only the code's own.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
        } else if c == 'r'
            && (i == 0
                || !ident(chars[i - 1])
                || (chars[i - 1] == 'b' && (i < 2 || !ident(chars[i - 2]))))
            && matches!(next, Some('"') | Some('#'))
        {
            // A raw string: r"..." or r#"..."# (or with b before).
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                match chars.get(j) {
                    None => break,
                    Some('"') if (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) => {
                        j += 1 + hashes;
                        break;
                    }
                    Some('\n') => out.push('\n'),
                    _ => {}
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                } else if chars[i] == '\n' {
                    out.push('\n');
                }
                i += 1;
            }
            out.push_str("\"\"");
            i += 1;
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A character literal ('x', '\n', '\u{7f}'); not a lifetime.
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            out.push_str("' '");
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The code without its `#[cfg(test)] mod name { ... }` blocks.
fn without_test_modules(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let head = after.trim_start();
        let inline_module = (head.starts_with("mod ") || head.starts_with("pub mod "))
            && head
                .find('{')
                .is_some_and(|b| head.find(';').is_none_or(|s| b < s));
        if !inline_module {
            out.push_str("#[cfg(test)]");
            rest = after;
            continue;
        }
        let open = after.find('{').unwrap();
        let mut depth = 0;
        let mut end = after.len();
        for (k, ch) in after[open..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

fn library_code(text: &str) -> String {
    without_test_modules(&code_only(text))
}

// --- 1. public type names --------------------------------------------------

/// The `pub struct|enum|trait|type` names a file defines (outside its tests).
fn public_types(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in library_code(text).lines() {
        let line = line.trim_start();
        let Some(rest) = line.strip_prefix("pub ") else {
            continue;
        };
        for kind in ["struct ", "enum ", "trait ", "type "] {
            if let Some(rest) = rest.strip_prefix(kind) {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    names.push(name);
                }
            }
        }
    }
    names
}

/// Names defined public in more than one file, each with the files
/// (`crate/src/path`) that define it.
fn shared_type_names(files: &BTreeMap<String, String>) -> BTreeMap<String, Vec<String>> {
    let mut by_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (file, text) in files {
        for name in public_types(text) {
            by_name.entry(name).or_default().push(file.clone());
        }
    }
    by_name.retain(|_, files| files.len() > 1);
    by_name
}

// --- 2. imports between the files of a crate -----------------------------

/// `use a::{b, c::{d, e}}` as its paths: `a::b`, `a::c::d`, `a::c::e`.
fn use_paths(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let close = tree.rfind('}').unwrap_or(tree.len());
    let prefix = &tree[..open];
    let mut paths = Vec::new();
    let (mut depth, mut start) = (0, open + 1);
    for (k, ch) in tree[open + 1..close].char_indices() {
        let k = open + 1 + k;
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                paths.extend(
                    use_paths(&tree[start..k])
                        .into_iter()
                        .map(|p| format!("{prefix}{p}")),
                );
                start = k + 1;
            }
            _ => {}
        }
    }
    if start < close {
        paths.extend(
            use_paths(&tree[start..close])
                .into_iter()
                .map(|p| format!("{prefix}{p}")),
        );
    }
    paths
}

/// The module path of a file under src/: `a/b.rs` and `a/b/mod.rs` are
/// `[a, b]`; lib.rs and main.rs are the root.
fn module_of(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// Which files of the crate `file` reaches: through its `use` lines and
/// through paths written inline (`crate::a::b::f()`, `super::X`), each to
/// the deepest module the path names (`crate::`, `super::`, `self::` or,
/// in a `use`, a child module). Re-exports (`pub use`) are a module's
/// interface, not its imports, and are left out.
fn imports(file: &str, text: &str, files: &BTreeSet<String>) -> BTreeSet<String> {
    let file_of = |module: &[String]| -> Option<String> {
        if module.is_empty() {
            return ["lib.rs", "main.rs"]
                .into_iter()
                .find(|f| files.contains(*f))
                .map(String::from);
        }
        let joined = module.join("/");
        [format!("{joined}.rs"), format!("{joined}/mod.rs")]
            .into_iter()
            .find(|f| files.contains(f))
    };
    let me = module_of(file);
    let mut reached = BTreeSet::new();
    let mut resolve = |path: &str, child_modules: bool| {
        let mut segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        let mut module: Vec<String> = match segments.first().copied() {
            Some("crate") => Vec::new(),
            Some("self") => me.clone(),
            Some("super") => {
                let mut up = me.clone();
                while segments.first() == Some(&"super") {
                    up.pop();
                    segments.remove(0);
                }
                segments.insert(0, "super");
                up
            }
            Some(first) if child_modules => {
                let mut child = me.clone();
                child.push(first.to_string());
                if file_of(&child).is_none() {
                    return;
                }
                segments.insert(0, "self");
                me.clone()
            }
            _ => return,
        };
        for segment in &segments[1..] {
            module.push(segment.to_string());
            if file_of(&module).is_none() {
                module.pop();
                break;
            }
        }
        if let Some(target) = file_of(&module).filter(|t| t != file) {
            reached.insert(target);
        }
    };
    let code = library_code(text);
    // The code outside `use` statements, for the inline paths.
    let mut inline = String::with_capacity(code.len());
    let mut rest = code.as_str();
    while let Some(at) = rest.find("use ") {
        let before = &code[..code.len() - rest.len() + at];
        let line_start = before.rsplit('\n').next().unwrap_or("");
        let statement_start = line_start.trim().is_empty()
            || line_start.trim() == "pub"
            || line_start.trim().starts_with("pub(");
        let is_pub = !line_start.trim().is_empty();
        let word_start = !before
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        if !statement_start || !word_start {
            inline.push_str(&rest[..at + 4]);
            rest = &rest[at + 4..];
            continue;
        }
        inline.push_str(&rest[..at]);
        rest = &rest[at + 4..];
        let Some(end) = rest.find(';') else { break };
        if !is_pub {
            for path in use_paths(&rest[..end]) {
                resolve(&path, true);
            }
        }
        rest = &rest[end..];
    }
    inline.push_str(rest);
    // Every path written inline: `crate::`, `super::`, `self::` or a
    // child module's name first (`mix::assemble(..)` in its parent).
    let mut from = 0;
    while let Some(at) = inline[from..].find("::") {
        let at = from + at;
        from = at + 2;
        let start = inline[..at]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_alphanumeric() || *c == '_')
            .last()
            .map_or(at, |(k, _)| k);
        let continues_a_path = inline[..start]
            .chars()
            .next_back()
            .is_some_and(|c| c == ':');
        if start == at || continues_a_path {
            continue;
        }
        let path: String = inline[start..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        from = start + path.len().max(2);
        resolve(&path, true);
    }
    reached
}

/// The loops among a crate's files (each loop's files, sorted), from the
/// files' `use` lines.
fn import_loops(files: &BTreeMap<String, String>) -> Vec<Vec<String>> {
    let names: BTreeSet<String> = files.keys().cloned().collect();
    let edges: BTreeMap<String, BTreeSet<String>> = files
        .iter()
        .map(|(file, text)| (file.clone(), imports(file, text, &names)))
        .collect();
    // A file is in a loop with the files it reaches and that reach it.
    let reach = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(f) = todo.pop() {
            for next in &edges[&f] {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        names.iter().map(|f| (f, reach(f))).collect();
    let mut loops: Vec<Vec<String>> = Vec::new();
    for file in &names {
        if !reached[file].contains(file) || loops.iter().any(|l| l.contains(file)) {
            continue;
        }
        let members: Vec<String> = names
            .iter()
            .filter(|other| reached[file].contains(*other) && reached[*other].contains(file))
            .cloned()
            .collect();
        loops.push(members);
    }
    loops
}

// --- 3. layers of crates ---------------------------------------------------

/// The layers listed under docs/development.md's "Layers" heading, lowest
/// first: the first numbered list after it, one line per layer, crates by
/// their directory name (`1. units, monitor, import`).
fn layers(doc: &str) -> Result<Vec<Vec<String>>, String> {
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("Layers"))
        .ok_or("docs/development.md has no '## Layers' section listing the crates' layers")?;
    let layers: Vec<Vec<String>> = section
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("1. "))
        .take_while(|l| {
            l.trim_start()
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
        })
        .map(|l| {
            let (_, crates) = l.split_once(". ").unwrap_or(("", l));
            crates
                .split(',')
                .map(|c| c.trim().trim_matches('`').to_string())
                .filter(|c| !c.is_empty())
                .collect()
        })
        .collect();
    if layers.is_empty() {
        return Err("the '## Layers' section of docs/development.md has no numbered list".into());
    }
    Ok(layers)
}

/// The package name of a Cargo.toml (`headroom-load`).
fn package_name(cargo_toml: &str) -> Option<String> {
    cargo_toml
        .lines()
        .skip_while(|l| l.trim() != "[package]")
        .find_map(|l| l.trim().strip_prefix("name"))
        .and_then(|v| v.split('"').nth(1))
        .map(String::from)
}

/// The workspace packages a Cargo.toml depends on, in any dependency
/// table, among `packages`.
fn dependencies(cargo_toml: &str, packages: &BTreeSet<String>) -> BTreeSet<String> {
    let mut deps = BTreeSet::new();
    let mut in_dependencies = false;
    for line in cargo_toml.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_dependencies = line.trim_matches(['[', ']']).ends_with("dependencies");
            continue;
        }
        if !in_dependencies {
            continue;
        }
        let name: String = line
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        if packages.contains(&name) {
            deps.insert(name);
        }
    }
    deps
}

/// Each dependency of a crate on one in its own layer or above, said in a
/// line; and each crate the layers leave out.
fn upward_dependencies(
    layers: &[Vec<String>],
    dependencies: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<String> {
    let layer_of = |c: &str| layers.iter().position(|l| l.iter().any(|x| x == c));
    let mut found = Vec::new();
    for (krate, deps) in dependencies {
        let Some(own) = layer_of(krate) else {
            found.push(format!(
                "crates/{krate} is in no layer of docs/development.md: add it to the line of the crates it may use"
            ));
            continue;
        };
        for dep in deps {
            match layer_of(dep) {
                Some(layer) if layer < own => {}
                Some(layer) => found.push(format!(
                    "crates/{krate} (layer {}) depends on crates/{dep} (layer {}): a crate uses only crates of the layers below its own",
                    own + 1,
                    layer + 1
                )),
                None => found.push(format!(
                    "crates/{krate} depends on crates/{dep}, which is in no layer of docs/development.md"
                )),
            }
        }
    }
    found
}

/// Every crate's workspace dependencies, by directory name.
fn workspace_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let manifests: BTreeMap<String, String> = crate_dirs()
        .into_iter()
        .map(|(name, dir)| (name, fs::read_to_string(dir.join("Cargo.toml")).unwrap()))
        .collect();
    let dir_of: BTreeMap<String, String> = manifests
        .iter()
        .filter_map(|(dir, toml)| package_name(toml).map(|p| (p, dir.clone())))
        .collect();
    let packages: BTreeSet<String> = dir_of.keys().cloned().collect();
    manifests
        .iter()
        .map(|(dir, toml)| {
            let deps = dependencies(toml, &packages)
                .iter()
                .map(|p| dir_of[p].clone())
                .filter(|d| d != dir)
                .collect();
            (dir.clone(), deps)
        })
        .collect()
}

// --- the workspace ---------------------------------------------------------

#[test]
fn no_two_public_types_share_a_name() {
    let mut files = BTreeMap::new();
    for (name, dir) in crate_dirs() {
        for (file, text) in sources(&dir) {
            files.insert(format!("crates/{name}/src/{file}"), text);
        }
    }
    let shared = shared_type_names(&files);
    let lines: Vec<String> = shared
        .iter()
        .map(|(name, files)| format!("{name}: {}", files.join(", ")))
        .collect();
    assert!(
        lines.is_empty(),
        "public types share a name (rename one to its own word from DESIGN.md's vocabulary, or make it pub(crate)):\n{}",
        lines.join("\n")
    );
}

#[test]
fn no_files_of_a_crate_import_each_other_in_a_loop() {
    let mut found = Vec::new();
    for (name, dir) in crate_dirs() {
        for members in import_loops(&sources(&dir)) {
            found.push(format!("crates/{name}/src: {}", members.join(" ↔ ")));
        }
    }
    assert!(
        found.is_empty(),
        "files import each other (move what both need into one of them, or into a file of its own):\n{}",
        found.join("\n")
    );
}

#[test]
fn no_crate_depends_on_a_crate_above_it() {
    let doc = fs::read_to_string(workspace().join("docs/development.md")).unwrap();
    let layers = layers(&doc).unwrap();
    let found = upward_dependencies(&layers, &workspace_dependencies());
    assert!(found.is_empty(), "{}", found.join("\n"));
}

// --- the checks on planted cases ---------------------------------------------

#[test]
fn a_shared_public_name_is_found_with_its_files() {
    let files = BTreeMap::from([
        ("crates/a/src/x.rs".to_string(), "pub struct Target {\n}\npub(crate) enum Level {}\n".to_string()),
        ("crates/b/src/y.rs".to_string(), "/// pub struct Level\npub enum Target { A }\npub(crate) struct Level;\n".to_string()),
        (
            "crates/c/src/z.rs".to_string(),
            "pub trait Plan {}\nconst S: &str = \"pub struct Target\";\n#[cfg(test)]\nmod tests {\n    pub struct Plan;\n}\n".to_string(),
        ),
        ("crates/d/src/w.rs".to_string(), "    pub type Plan = u32;\n".to_string()),
    ]);
    let shared = shared_type_names(&files);
    assert_eq!(
        shared,
        BTreeMap::from([
            (
                "Plan".to_string(),
                vec![
                    "crates/c/src/z.rs".to_string(),
                    "crates/d/src/w.rs".to_string()
                ]
            ),
            (
                "Target".to_string(),
                vec![
                    "crates/a/src/x.rs".to_string(),
                    "crates/b/src/y.rs".to_string()
                ]
            ),
        ]),
        "pub(crate), comments, strings and tests do not count"
    );
}

#[test]
fn a_loop_of_imports_is_found() {
    let files = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(f, t)| (f.to_string(), t.to_string()))
            .collect()
    };
    // a → b → c → a through crate::, a grouped use and super::.
    let three = files(&[
        ("lib.rs", "mod a;\nmod b;\nmod c;\n"),
        ("a.rs", "use crate::b::Thing;\n"),
        (
            "b.rs",
            "use crate::{\n    c::{self, Other},\n    d,\n};\nuse std::fmt;\n",
        ),
        ("c/mod.rs", "mod inner;\n"),
        ("c/inner.rs", "use super::super::a::First;\n"),
        ("d.rs", ""),
    ]);
    assert_eq!(
        import_loops(&three),
        Vec::<Vec<String>>::new(),
        "c/inner.rs is not c/mod.rs"
    );
    let mut looped = three.clone();
    looped.insert("c/mod.rs".into(), "mod inner;\nuse inner::Thing;\n".into());
    assert_eq!(
        import_loops(&looped),
        vec![vec![
            "a.rs".to_string(),
            "b.rs".into(),
            "c/inner.rs".into(),
            "c/mod.rs".into()
        ]]
    );
    // Two files, one through super:: from a child.
    let pair = files(&[
        ("lib.rs", "pub mod run;\n"),
        ("run/mod.rs", "mod shard;\nuse self::shard::Barrier;\n"),
        ("run/shard.rs", "    use super::Prepared;\n"),
    ]);
    assert_eq!(
        import_loops(&pair),
        vec![vec!["run/mod.rs".to_string(), "run/shard.rs".into()]]
    );
    // A re-export, a test module, a comment and a string are not imports.
    let not_imports = files(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "pub use crate::b::Thing;\n// use crate::b::X;\n"),
        (
            "b.rs",
            "use crate::a::X;\nconst S: &str = \"\nuse crate::a::Y;\";\n#[cfg(test)]\nmod tests {\n    use crate::a::Z;\n    fn f() { let _ = '{'; }\n}\n",
        ),
    ]);
    assert_eq!(import_loops(&not_imports), Vec::<Vec<String>>::new());
    // A path written inline is an import as much as a `use` is: a → b by
    // a `use`, b → a by a call through crate::, and through super::.
    let inline = files(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "use crate::b::Thing;\n"),
        (
            "b.rs",
            "pub struct Thing;\nfn f() -> usize {\n    crate::a::count()\n}\n",
        ),
    ]);
    assert_eq!(
        import_loops(&inline),
        vec![vec!["a.rs".to_string(), "b.rs".into()]]
    );
    let up = files(&[
        ("lib.rs", "pub mod run;\n"),
        ("run/mod.rs", "mod shard;\nuse shard::Barrier;\n"),
        ("run/shard.rs", "fn f(p: &super::Prepared) {}\n"),
    ]);
    assert_eq!(
        import_loops(&up),
        vec![vec!["run/mod.rs".to_string(), "run/shard.rs".into()]]
    );
    // A parent calling into its child, which takes from the parent.
    let down = files(&[
        ("lib.rs", "pub mod assemble;\n"),
        (
            "assemble/mod.rs",
            "mod url;\npub struct Run;\npub fn assemble() {\n    url::assemble();\n}\n",
        ),
        ("assemble/url.rs", "use super::Run;\npub fn assemble() {}\n"),
    ]);
    assert_eq!(
        import_loops(&down),
        vec![vec![
            "assemble/mod.rs".to_string(),
            "assemble/url.rs".into()
        ]]
    );
    // A name ending in `crate` or a path inside a string is no import.
    let not_inline = files(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "use crate::b::Thing;\n"),
        (
            "b.rs",
            "fn f() { let s = \"crate::a::x\"; let n = my_crate::a::x(); }\n",
        ),
    ]);
    assert_eq!(import_loops(&not_inline), Vec::<Vec<String>>::new());
}

#[test]
fn a_dependency_on_a_crate_above_is_found() {
    let doc = "# Development\n\n## Layers\n\nSome words.\n\n1. units, `monitor`\n2. bundle\n3. load, bench\n4. cli\n\n## Next\n5. report\n";
    let listed = layers(doc).unwrap();
    assert_eq!(listed.len(), 4, "{listed:?}");
    let toml = |deps: &str| {
        format!("[package]\nname = \"x\"\n\n[dependencies]\n{deps}\n[dev-dependencies]\n")
    };
    let packages: BTreeSet<String> = [
        "headroom-units",
        "headroom-load",
        "headroom-bench",
        "headroom-bundle",
    ]
    .map(String::from)
    .into();
    assert_eq!(
        dependencies(&toml("headroom-units = { path = \"../units\" }\nheadroom-load.workspace = true\nserde = \"1\"\n"), &packages),
        ["headroom-load", "headroom-units"].map(String::from).into()
    );
    assert_eq!(
        package_name("[package]\nname = \"headroom-load\"\n").as_deref(),
        Some("headroom-load")
    );
    let deps = |pairs: &[(&str, &[&str])]| -> BTreeMap<String, BTreeSet<String>> {
        pairs
            .iter()
            .map(|(c, d)| (c.to_string(), d.iter().map(|x| x.to_string()).collect()))
            .collect()
    };
    let fine = deps(&[
        ("bundle", &["units", "monitor"]),
        ("load", &["bundle"]),
        ("cli", &["load", "bench"]),
    ]);
    assert_eq!(upward_dependencies(&listed, &fine), Vec::<String>::new());
    let wrong = deps(&[("bundle", &["load"]), ("load", &["bench"]), ("report", &[])]);
    assert_eq!(
        upward_dependencies(&listed, &wrong),
        vec![
            "crates/bundle (layer 2) depends on crates/load (layer 3): a crate uses only crates of the layers below its own".to_string(),
            "crates/load (layer 3) depends on crates/bench (layer 3): a crate uses only crates of the layers below its own".into(),
            "crates/report is in no layer of docs/development.md: add it to the line of the crates it may use".into(),
        ]
    );
    assert!(layers("# Development\n").is_err());
}

/// The tests marked quiet with `#[ignore = "quiet: ..."]`, and those
/// whose body takes `serial()` or `paced()`, of one test file's text.
fn quiet_and_guarded(text: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let lines: Vec<&str> = text.lines().collect();
    let (mut quiet, mut guarded) = (BTreeSet::new(), BTreeSet::new());
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "#[test]" {
            i += 1;
            continue;
        }
        let mut marked = false;
        let mut j = i + 1;
        while j < lines.len() && !lines[j].trim_start().starts_with("fn ") {
            marked |= lines[j].trim_start().starts_with("#[ignore = \"quiet:");
            j += 1;
        }
        let Some(line) = lines.get(j) else { break };
        let name = line.trim_start()[3..]
            .split('(')
            .next()
            .unwrap_or_default()
            .to_string();
        let indent = &line[..line.len() - line.trim_start().len()];
        let end = (j + 1..lines.len())
            .find(|&k| lines[k] == format!("{indent}}}"))
            .unwrap_or(lines.len());
        let body = lines[j..end].join("\n");
        if ["serial", "paced"].iter().any(|guard| {
            body.contains(&format!("= {guard}();"))
                || body.contains(&format!("= support::{guard}();"))
        }) {
            guarded.insert(name.clone());
        }
        if marked {
            quiet.insert(name);
        }
        i = end;
    }
    (quiet, guarded)
}

/// scripts/test runs the integration tests in two passes: side by side,
/// then the quiet ones (`--ignored`), paced ones together and serial ones
/// alone. A test that takes `serial()` or `paced()` but is not quiet would
/// run beside others in the first pass; one quiet with neither would run
/// apart for nothing.
#[test]
fn quiet_tests_take_a_quiet_guard() {
    let dir = workspace().join("crates/cli/tests/it");
    let mut wrong = Vec::new();
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let (quiet, guarded) = quiet_and_guarded(&std::fs::read_to_string(&path).unwrap());
        count += quiet.len();
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        for name in guarded.difference(&quiet) {
            wrong.push(format!(
                "{file}: {name} takes serial() or paced() but is not #[ignore = \"quiet: ...\"]"
            ));
        }
        for name in quiet.difference(&guarded) {
            wrong.push(format!(
                "{file}: {name} is quiet but takes neither serial() nor paced()"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(
        count > 40,
        "only {count} quiet tests found: is the reading wrong?"
    );
    // The reading, on a planted file.
    // (SERIAL and PACED stand for the calls, which this test's own body must not hold.)
    let planted = "#[test]\n#[ignore = \"quiet: x\"]\nfn a() {\n    let _g = SERIAL;\n}\n\n#[test]\nfn b() {\n    let _g = SERIAL;\n}\n\n#[test]\n#[ignore = \"quiet: x\"]\nfn c() {\n    let _g = light();\n}\n\n#[test]\n#[ignore = \"quiet: x\"]\nfn d() {\n    let _g = PACED;\n}\n"
        .replace("SERIAL", &format!("{}()", "serial"))
        .replace("PACED", &format!("{}()", "paced"));
    let (quiet, guarded) = quiet_and_guarded(&planted);
    assert_eq!(quiet, ["a", "c", "d"].map(String::from).into());
    assert_eq!(guarded, ["a", "b", "d"].map(String::from).into());
}
