//! Mixes of journeys: a file whose `mix:` names several scenario files,
//! each with a weight (its share of the users, or the probability that an
//! arrival runs it). The mix's `profile:` is the run's; each journey keeps
//! its own steps, data, think times, variables and cookies. Errors in the
//! mix name the mix file's line; errors in a journey name the journey's.

use super::parse::{parse_journey, parse_profile, MAX_SCENARIO_BYTES};
use super::{Scenario, ScenarioProfile};
use crate::yaml::{read_text, Doc, LocatedError};
use headroom_http::target::Target;
use marked_yaml::Node as Yaml;
use std::path::{Path, PathBuf};

type Res<T> = Result<T, LocatedError>;

const MIX_KEYS: &[&str] = &["name", "description", "defaults", "profile", "mix"];
const MIX_DEFAULT_KEYS: &[&str] = &["base_url"];
const JOURNEY_KEYS: &[&str] = &["scenario", "weight", "name"];

/// A checked mix, ready to run.
#[derive(Debug, Clone)]
pub struct Mix {
    pub source: PathBuf,
    pub name: Option<String>,
    /// The run's profile (a journey's own `profile:` is not used).
    pub profile: ScenarioProfile,
    pub journeys: Vec<MixJourney>,
}

/// One journey of a mix.
#[derive(Debug, Clone)]
pub struct MixJourney {
    /// The prefix of its labels and checks ("reader / Front page").
    pub name: String,
    /// Its file, resolved against the mix file's directory.
    pub file: PathBuf,
    pub weight: f64,
    pub scenario: Scenario,
}

impl MixJourney {
    /// Its weight, readable: `90`, `9.5`, or `1e308` rather than 309 digits.
    pub fn weight_text(&self) -> String {
        if (1e-4..1e15).contains(&self.weight) {
            self.weight.to_string()
        } else {
            format!("{:e}", self.weight)
        }
    }
}

impl Mix {
    pub fn weights(&self) -> Vec<f64> {
        self.journeys.iter().map(|j| j.weight).collect()
    }

    /// The weights as the user wrote them: "90/9/1" (`1e308/1e-300` for
    /// ones too large or small to write out).
    pub fn weights_text(&self) -> String {
        let weights: Vec<String> = self.journeys.iter().map(|j| j.weight_text()).collect();
        weights.join("/")
    }

    /// The note said at the start of a run when journeys have their own
    /// `profile:` (not used: the mix's is the run's).
    pub fn unused_profiles_note(&self) -> Option<String> {
        let files: Vec<String> = self
            .journeys
            .iter()
            .filter(|j| j.scenario.profile != ScenarioProfile::default())
            .map(|j| j.file.display().to_string())
            .collect();
        (!files.is_empty()).then(|| {
            format!(
                "note: the profile: of {} is not used: the mix's profile is the run's",
                files.join(", ")
            )
        })
    }
}

/// What a scenario file holds: one journey, or a mix of them.
#[derive(Debug, Clone)]
pub enum Workfile {
    Scenario(Box<Scenario>),
    Mix(Box<Mix>),
}

/// Whether the YAML text's top level has `mix:` (unparseable text is not a
/// mix: its parser says what is wrong).
pub fn is_mix_text(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    marked_yaml::parse_yaml(0, text)
        .ok()
        .and_then(|root| root.as_mapping().map(|m| m.get_node("mix").is_some()))
        .unwrap_or(false)
}

/// Whether the file at `path` is a mix (`mix:` at its top level).
pub fn is_mix_file(path: &Path) -> bool {
    let is_yaml = !super::jmx::is_jmx(path);
    is_yaml
        && read_text(path, MAX_SCENARIO_BYTES, "the scenario", "")
            .is_ok_and(|text| is_mix_text(&text))
}

/// Reads a scenario file or a mix. `target` replaces every base URL (`--target`).
pub fn read(path: &Path, target: Option<&Target>) -> Res<Workfile> {
    let text = read_text(
        path,
        MAX_SCENARIO_BYTES,
        "the scenario",
        "Keep large data in a data: CSV file",
    )?;
    if is_mix_text(&text) {
        parse_mix(&text, path, target).map(|m| Workfile::Mix(Box::new(m)))
    } else {
        super::parse_str(&text, path, target).map(|s| Workfile::Scenario(Box::new(s)))
    }
}

/// Checks a mix's text and reads every journey it names.
pub fn parse_mix(text: &str, path: &Path, target: Option<&Target>) -> Res<Mix> {
    let doc = Doc {
        file: path.to_path_buf(),
    };
    let root = doc.parse(
        text,
        "the file must be a mapping of keys such as mix: and profile:",
    )?;
    let top = doc.mapping(&root, "the mix")?;
    if let Some((key, _)) = top.iter().find(|(k, _)| k.as_str() == "steps") {
        return Err(doc.at(
            key.span(),
            "a file has either steps: (one journey) or mix: (several journey files with weights), \
             not both: move these steps into a journey file and name it under mix:",
        ));
    }
    doc.keys(top, MIX_KEYS, "the mix")?;
    let mut default_base = None;
    if let Some(node) = top.get_node("defaults") {
        let map = doc.mapping(node, "the mix's defaults")?;
        doc.keys(
            map,
            MIX_DEFAULT_KEYS,
            "the mix's defaults (each journey has its own)",
        )?;
        if let Some(base) = map.get_node("base_url") {
            let s = doc.scalar(base, "base_url")?;
            default_base =
                Some(Target::parse(s.as_str()).map_err(|e| doc.at(s.span(), e.to_string()))?);
        }
    }
    let profile = match top.get_node("profile") {
        Some(node) => parse_profile(path, node)?,
        None => ScenarioProfile::default(),
    };
    let list_node = top
        .get_node("mix")
        .ok_or_else(|| doc.at(doc.map_at(top), "a mix needs mix: (its journeys)"))?;
    let list = list_node
        .as_sequence()
        .filter(|l| !l.is_empty())
        .ok_or_else(|| {
            doc.at(
                list_node.span(),
                "mix: must list the journeys, each as {scenario: reader.yaml, weight: 90}",
            )
        })?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let base = target.or(default_base.as_ref());
    let mut journeys: Vec<MixJourney> = Vec::new();
    for item in list.iter() {
        let journey = journey(&doc, item, dir, target, base)?;
        if journeys.iter().any(|j| j.name == journey.name) {
            return Err(doc.at(
                item.span(),
                format!(
                    "two journeys are named '{}': their labels would mix; give one a name: of its own",
                    journey.name
                ),
            ));
        }
        journeys.push(journey);
    }
    if !journeys.iter().map(|j| j.weight).sum::<f64>().is_finite() {
        return Err(doc.at(
            list_node.span(),
            "the journeys' weights add up to more than a number holds (above 1.8e308): a weight \
             is a share, so 1 and 1 split as 1e308 and 1e308 would; write smaller weights",
        ));
    }
    Ok(Mix {
        source: path.to_path_buf(),
        name: top.get_scalar("name").map(|s| s.as_str().to_string()),
        profile,
        journeys,
    })
}

/// One item of `mix:`, its file read and checked.
fn journey(
    doc: &Doc,
    item: &Yaml,
    dir: &Path,
    target: Option<&Target>,
    base: Option<&Target>,
) -> Res<MixJourney> {
    let map = doc.mapping(item, "a journey of the mix")?;
    doc.keys(map, JOURNEY_KEYS, "a journey of the mix")?;
    let file_node = map.get_node("scenario").ok_or_else(|| {
        doc.at(
            doc.map_at(map),
            "a journey needs scenario: (its file, relative to the mix file)",
        )
    })?;
    let file_scalar = doc.scalar(file_node, "scenario")?;
    let weight_node = map.get_node("weight").ok_or_else(|| {
        doc.at(
            doc.map_at(map),
            format!(
                "the journey {} needs weight: (its share of the users, e.g. 90)",
                file_scalar.as_str()
            ),
        )
    })?;
    let weight_scalar = doc.scalar(weight_node, "weight")?;
    let weight = weight_scalar
        .as_str()
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|w| w.is_finite() && *w > 0.0)
        .ok_or_else(|| {
            doc.at(
                weight_scalar.span(),
                format!(
                    "weight must be a number above 0 (a share: 90, 9, 1), not '{}'; \
                     leave out a journey that should not run",
                    weight_scalar.as_str()
                ),
            )
        })?;
    let file = dir.join(file_scalar.as_str());
    let at_file = |message: String| doc.at(file_scalar.span(), message);
    if super::jmx::is_jmx(&file) {
        return Err(at_file(format!(
            "{}: a journey is a YAML scenario; convert the plan first (headroom scenario from-jmx)",
            file.display()
        )));
    }
    let text = read_text(&file, MAX_SCENARIO_BYTES, "the journey", "")
        .map_err(|e| at_file(format!("journey {}: {}", file.display(), e.message)))?;
    if is_mix_text(&text) {
        return Err(at_file(format!(
            "{} is itself a mix: a mix's journeys are scenario files (steps:); \
             name its journeys here instead",
            file.display()
        )));
    }
    let scenario = parse_journey(&text, &file, target, base)?;
    if let Some(before) = &scenario.before {
        return Err(at_file(format!(
            "the journey {} has before:{}, which a mix does not run (its users start with the \
             profile's): run it on its own first, or move its steps into the journey's once: steps",
            file.display(),
            before
                .name
                .as_ref()
                .map(|n| format!(" ('{n}')"))
                .unwrap_or_default()
        )));
    }
    let name = match map.get_node("name") {
        Some(node) => {
            let s = doc.scalar(node, "name")?;
            if s.as_str().trim().is_empty() {
                return Err(doc.at(s.span(), "a journey's name must not be empty"));
            }
            s.as_str().trim().to_string()
        }
        None => scenario.name.clone().unwrap_or_else(|| {
            file.file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default()
        }),
    };
    Ok(MixJourney {
        name,
        file,
        weight,
        scenario,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const READER: &str = "name: reader\ndefaults: {base_url: http://127.0.0.1:9}\nsteps:\n  - {label: Front page, path: /}\n";
    const POSTER: &str = "steps:\n  - {label: Post, path: /post, method: POST}\n";

    /// A directory removed when dropped.
    struct Dir(PathBuf);

    impl Dir {
        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A mix file and its journeys in a fresh directory.
    fn dir_with(files: &[(&str, &str)]) -> Dir {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("headroom-mix-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        Dir(dir)
    }

    fn error_of(mix: &str, journeys: &[(&str, &str)]) -> String {
        let mut files = journeys.to_vec();
        files.push(("mix.yaml", mix));
        let dir = dir_with(&files);
        match read(&dir.path().join("mix.yaml"), None) {
            Ok(w) => panic!("accepted: {w:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_mix_reads_its_journeys_with_names_weights_and_the_base_url() {
        let dir = dir_with(&[
            ("reader.yaml", READER),
            ("poster.yaml", POSTER),
            (
                "mix.yaml",
                "name: class\ndefaults: {base_url: http://127.0.0.1:8}\nprofile: {users: 10}\nmix:\n  - {scenario: reader.yaml, weight: 90}\n  - {scenario: poster.yaml, weight: 9.5, name: post}\n",
            ),
        ]);
        let Workfile::Mix(mix) = read(&dir.path().join("mix.yaml"), None).unwrap() else {
            panic!("not a mix")
        };
        assert_eq!(mix.name.as_deref(), Some("class"));
        assert_eq!(mix.profile.users, Some(10));
        let names: Vec<&str> = mix.journeys.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["reader", "post"]);
        assert_eq!(mix.weights_text(), "90/9.5");
        // The reader keeps its own base URL; the poster takes the mix's.
        assert_eq!(
            mix.journeys[0].scenario.origins[0].url,
            "http://127.0.0.1:9/"
        );
        assert_eq!(
            mix.journeys[1].scenario.origins[0].url,
            "http://127.0.0.1:8/"
        );
        assert!(mix.unused_profiles_note().is_none());
    }

    #[test]
    fn bad_weights_are_refused_at_their_line() {
        for (weight, said) in [
            ("0", "'0'"),
            ("-3", "'-3'"),
            ("many", "'many'"),
            ("nan", "'nan'"),
        ] {
            let mix = format!("mix:\n  - {{scenario: reader.yaml, weight: 1}}\n  - {{scenario: poster.yaml, weight: {weight}}}\n");
            let e = error_of(&mix, &[("reader.yaml", READER), ("poster.yaml", POSTER)]);
            assert!(
                e.contains("mix.yaml:3:")
                    && e.contains("weight must be a number above 0")
                    && e.contains(said),
                "{e}"
            );
        }
        let e = error_of(
            "mix:\n  - {scenario: reader.yaml}\n",
            &[("reader.yaml", READER)],
        );
        assert!(
            e.contains("mix.yaml:2:") && e.contains("needs weight:"),
            "{e}"
        );
    }

    #[test]
    fn weights_whose_sum_overflows_are_refused_and_huge_ones_print_short() {
        let journeys = [("reader.yaml", READER), ("poster.yaml", POSTER)];
        let e = error_of(
            "defaults: {base_url: http://127.0.0.1:8}\nmix:\n  - {scenario: reader.yaml, weight: 1e308}\n  - {scenario: poster.yaml, weight: 1e308}\n",
            &journeys,
        );
        assert!(
            e.contains("mix.yaml:3:") && e.contains("weights add up to more than a number holds"),
            "{e}"
        );
        let dir = dir_with(&[
            journeys[0],
            journeys[1],
            (
                "mix.yaml",
                "defaults: {base_url: http://127.0.0.1:8}\nmix:\n  - {scenario: reader.yaml, weight: 1e307}\n  - {scenario: poster.yaml, weight: 1e-300}\n",
            ),
        ]);
        let Workfile::Mix(mix) = read(&dir.path().join("mix.yaml"), None).unwrap() else {
            panic!("not a mix")
        };
        assert_eq!(mix.weights_text(), "1e307/1e-300");
    }

    #[test]
    fn a_mix_without_journeys_or_beside_steps_is_refused() {
        let e = error_of("mix: []\n", &[]);
        assert!(
            e.contains("mix.yaml:1:") && e.contains("must list the journeys"),
            "{e}"
        );
        let e = error_of("steps: []\nmix: []\n", &[]);
        assert!(e.contains("mix.yaml:1:1") && e.contains("not both"), "{e}");
    }

    #[test]
    fn a_missing_unparseable_or_nested_journey_is_named() {
        let e = error_of("mix:\n  - {scenario: gone.yaml, weight: 1}\n", &[]);
        assert!(
            e.contains("mix.yaml:2:") && e.contains("gone.yaml") && e.contains("cannot read"),
            "{e}"
        );
        let e = error_of(
            "mix:\n  - {scenario: bad.yaml, weight: 1}\n",
            &[("bad.yaml", "steps:\n  - {label: x, path: /, colour: red}\n")],
        );
        assert!(e.contains("bad.yaml:2:") && e.contains("colour"), "{e}");
        let e = error_of(
            "mix:\n  - {scenario: inner.yaml, weight: 1}\n",
            &[
                (
                    "inner.yaml",
                    "mix:\n  - {scenario: reader.yaml, weight: 1}\n",
                ),
                ("reader.yaml", READER),
            ],
        );
        assert!(
            e.contains("mix.yaml:2:") && e.contains("is itself a mix"),
            "{e}"
        );
    }

    #[test]
    fn two_journeys_of_one_name_and_before_are_refused() {
        let e = error_of(
            "defaults: {base_url: http://127.0.0.1:8}\nmix:\n  - {scenario: reader.yaml, weight: 1}\n  - {scenario: poster.yaml, weight: 1, name: reader}\n",
            &[("reader.yaml", READER), ("poster.yaml", POSTER)],
        );
        assert!(
            e.contains("mix.yaml:4:") && e.contains("two journeys are named 'reader'"),
            "{e}"
        );
        let e = error_of(
            "mix:\n  - {scenario: warm.yaml, weight: 1}\n",
            &[(
                "warm.yaml",
                "defaults: {base_url: http://127.0.0.1:9}\nbefore: {name: warm-up, users: 1, steps: [{label: w, path: /}]}\nsteps:\n  - {label: x, path: /}\n",
            )],
        );
        assert!(
            e.contains("mix.yaml:2:") && e.contains("warm.yaml has before: ('warm-up')"),
            "{e}"
        );
    }

    #[test]
    fn a_journeys_own_profile_is_noted_not_refused() {
        let dir = dir_with(&[
            ("reader.yaml", &format!("{READER}profile: {{users: 5}}\n")),
            ("mix.yaml", "mix:\n  - {scenario: reader.yaml, weight: 1}\n"),
        ]);
        let Workfile::Mix(mix) = read(&dir.path().join("mix.yaml"), None).unwrap() else {
            panic!("not a mix")
        };
        let note = mix.unused_profiles_note().unwrap();
        assert!(
            note.contains("reader.yaml") && note.contains("not used"),
            "{note}"
        );
    }

    #[test]
    fn a_plain_scenario_reads_as_one() {
        let dir = dir_with(&[("reader.yaml", READER)]);
        assert!(matches!(
            read(&dir.path().join("reader.yaml"), None).unwrap(),
            Workfile::Scenario(_)
        ));
        assert!(!is_mix_file(&dir.path().join("reader.yaml")));
    }
}
