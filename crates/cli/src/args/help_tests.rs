//! Every command's help ends with examples that work when pasted: each is
//! parsed as the shell would split it, and clap must not re-wrap them.

use super::Cli;
use clap::{CommandFactory, Parser};

/// Every command of the tree (clap's own `help` left out), with its path.
fn commands() -> Vec<(String, clap::Command)> {
    fn walk(path: String, cmd: &clap::Command, out: &mut Vec<(String, clap::Command)>) {
        out.push((path.clone(), cmd.clone()));
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            walk(format!("{path} {}", sub.get_name()), sub, out);
        }
    }
    let mut out = Vec::new();
    walk("headroom".into(), &Cli::command(), &mut out);
    out
}

/// The lines after the last "Examples:" line, which must end the help.
fn examples_block(help: &str) -> Option<Vec<String>> {
    let lines: Vec<&str> = help.trim_end().lines().collect();
    let at = lines.iter().rposition(|l| l.trim_end() == "Examples:")?;
    Some(lines[at + 1..].iter().map(|l| l.to_string()).collect())
}

/// The commands of a block: `#` lines left out, `\` lines joined.
fn example_commands(block: &[String]) -> Vec<String> {
    let mut commands = Vec::new();
    let mut pending = String::new();
    for line in block {
        let text = line.trim();
        if pending.is_empty() && text.starts_with('#') {
            continue;
        }
        match text.strip_suffix('\\') {
            Some(head) => {
                pending.push_str(head);
                pending.push(' ');
            }
            None => {
                pending.push_str(text);
                commands.push(std::mem::take(&mut pending));
            }
        }
    }
    assert!(pending.is_empty(), "a `\\` line ends the block: {pending}");
    commands
}

/// Words as a POSIX shell splits them (quotes, backslashes), cut at the
/// first unquoted operator (`|`, `>`, `<`, `;`, `&&`).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if let Some(w) = word.take() {
                    words.push(w);
                }
            }
            '|' | '>' | '<' | ';' | '&' if word.is_none() => return words,
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    w.push(q);
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' if matches!(chars.peek(), Some('"' | '\\' | '$' | '`')) => {
                            w.extend(chars.next());
                        }
                        _ => w.push(q),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).extend(chars.next()),
            _ => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

#[test]
fn shell_words_split_as_a_shell_does() {
    assert_eq!(
        shell_words(r#"headroom load 'a b' "c \"d\"" e\ f --x=1 > out.json"#),
        ["headroom", "load", "a b", "c \"d\"", "e f", "--x=1"]
    );
    assert_eq!(shell_words("a | b"), ["a"]);
    assert_eq!(
        example_commands(&[
            "  # what".into(),
            "  headroom a \\".into(),
            "      --b c".into(),
            "  headroom d".into()
        ]),
        ["headroom a  --b c", "headroom d"]
    );
}

#[test]
fn every_command_ends_with_examples_that_parse() {
    for (path, cmd) in commands() {
        let raw = cmd
            .get_after_long_help()
            .or_else(|| cmd.get_after_help())
            .map(|s| s.to_string())
            .unwrap_or_default();
        let written = examples_block(&raw)
            .unwrap_or_else(|| panic!("`{path} --help` has no Examples: block"));
        for width in [80, 100, 200] {
            let help = cmd.clone().term_width(width).render_long_help().to_string();
            let shown = examples_block(&help)
                .unwrap_or_else(|| panic!("`{path} --help` does not end with its examples"));
            assert_eq!(
                shown, written,
                "`{path} --help` at {width} columns: the examples are re-wrapped or not last"
            );
        }
        for line in &written {
            assert!(
                line.starts_with("  ") && line.chars().count() <= 80,
                "`{path} --help`: an example line is not indented or longer than 80: {line:?}"
            );
        }
        let examples = example_commands(&written);
        assert!(
            (1..=4).contains(&examples.len()),
            "`{path} --help` has {} examples",
            examples.len()
        );
        for example in examples {
            let words = shell_words(&example);
            let start = words
                .iter()
                .position(|w| w == "headroom")
                .unwrap_or_else(|| panic!("`{path} --help`: not a headroom command: {example}"));
            if let Err(e) = Cli::try_parse_from(&words[start..]) {
                panic!("`{path} --help`: the example `{example}` is refused:\n{e}");
            }
        }
    }
}

#[test]
fn every_flag_says_what_it_does() {
    for (path, cmd) in commands() {
        for arg in cmd.get_arguments() {
            let help = arg.get_long_help().or_else(|| arg.get_help());
            let said = help.map(|h| h.to_string()).unwrap_or_default();
            assert!(
                arg.is_hide_set() || !said.trim().is_empty(),
                "`{path} --help`: {} is not described",
                arg.get_id()
            );
        }
    }
}

/// `report` and `compare` take more than run bundles (report_cmd.rs and
/// compare_cmd.rs): their help names each kind of input.
#[test]
fn report_and_compare_help_name_every_input_they_take() {
    let help = |name: &str| {
        let sub = Cli::command().find_subcommand(name).unwrap().clone();
        let text = sub.term_width(80).render_long_help().to_string();
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let report = help("report");
    for input in [
        "run bundles (the --out of load, run and merge, a capacity search's level-NNNN",
        "JMeter results files (JTL, CSV or XML",
        "results.jtl into results-jtl-bundle/",
        "A capacity search's directory, an experiment's directory (its --out) or a \
         bench bundle is reported alone",
    ] {
        assert!(report.contains(input), "report --help: {input}:\n{report}");
    }
    let compare = help("compare");
    for input in [
        "two or more run bundles (the --out of load, run and merge, a capacity search's \
         level-NNNN",
        "JMeter results files (JTL, CSV or XML",
        "or two or more bench bundles",
        "A capacity search's directory is not one run",
        "nor is an experiment's",
    ] {
        assert!(
            compare.contains(input),
            "compare --help: {input}:\n{compare}"
        );
    }
}

/// GitHub's anchor of a Markdown heading.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Each `--json` points to the section of docs/json.md on its command.
#[test]
fn every_json_flag_points_to_its_section_of_docs_json() {
    let doc = include_str!("../../../../docs/json.md");
    let headings: Vec<&str> = doc.lines().filter_map(|l| l.strip_prefix("## ")).collect();
    let mut seen = 0;
    for (path, cmd) in commands() {
        let Some(json) = cmd.get_arguments().find(|a| a.get_id() == "json") else {
            continue;
        };
        seen += 1;
        let help = json.get_help().map(|h| h.to_string()).unwrap_or_default();
        let (_, after) = help
            .split_once("docs/json.md#")
            .unwrap_or_else(|| panic!("`{path} --json` points to no section: {help}"));
        let target: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '-')
            .collect();
        let heading = headings
            .iter()
            .find(|h| anchor(h) == target)
            .unwrap_or_else(|| panic!("`{path} --json`: docs/json.md has no #{target}"));
        for word in path.split(' ').skip(1) {
            assert!(
                heading.split(' ').any(|w| w == word),
                "`{path} --json` points to \"{heading}\""
            );
        }
    }
    // load, run, capacity, doctor, demo, compare, merge, testbed init and
    // info, bench, scenario from-log, replay.
    assert_eq!(seen, 13);
}
