//! `${factor}` in an experiment file's commands, paths and values: each is
//! replaced by the cell's level of that factor. `$${name}` passes
//! `${name}` to the shell; any other `$` (`$HOME`, `$$`, `$1`) is left as
//! written.

use headroom_analysis::experiment::Cell;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Factor(String),
}

/// A text with `${factor}` references, checked against the factors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FactorTemplate {
    pieces: Vec<Piece>,
    /// The text as written.
    pub source: String,
}

impl FactorTemplate {
    /// Checks every `${name}` against `factors`; the error says which name
    /// is unknown and what the factors are.
    pub fn parse(text: &str, factors: &[String]) -> Result<FactorTemplate, String> {
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(at) = rest.find('$') {
            literal.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            if let Some(tail) = after.strip_prefix("${") {
                // `$${name}`: the shell's, written as is.
                literal.push_str("${");
                rest = tail;
            } else if let Some(inner) = after.strip_prefix('{') {
                let Some(end) = inner.find('}') else {
                    return Err(format!(
                        "'${{' without its closing '}}' in '{text}': write ${{factor}}, or $${{name}} for the shell's ${{name}}"
                    ));
                };
                let name = inner[..end].trim();
                if !factors.iter().any(|f| f == name) {
                    let known = if factors.is_empty() {
                        "the experiment has no factors".to_string()
                    } else {
                        format!("the factors are {}", factors.join(", "))
                    };
                    return Err(format!(
                        "unknown factor '{name}' in '${{{name}}}': {known} (write $${{{name}}} to pass '${{{name}}}' to the shell)"
                    ));
                }
                if !literal.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut literal)));
                }
                pieces.push(Piece::Factor(name.to_string()));
                rest = &inner[end + 1..];
            } else {
                literal.push('$');
                rest = after;
            }
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            pieces.push(Piece::Text(literal));
        }
        Ok(FactorTemplate {
            pieces,
            source: text.to_string(),
        })
    }

    /// The text for `cell` (every factor the template names is in it).
    pub fn render(&self, cell: &Cell) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Factor(name) => {
                    if let Some((_, level)) = cell.iter().find(|(f, _)| f == name) {
                        out.push_str(level);
                    }
                }
            }
        }
        out
    }

    /// Whether the text depends on the cell.
    pub fn uses_factors(&self) -> bool {
        self.pieces.iter().any(|p| matches!(p, Piece::Factor(_)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn factors() -> Vec<String> {
        vec!["store".into(), "users".into()]
    }

    #[test]
    fn factors_are_replaced_and_shell_dollars_kept() {
        let t = FactorTemplate::parse(
            "serve --sessions ${store} -c ${ users } $HOME $$ $${x} $1",
            &factors(),
        )
        .unwrap();
        let cell = vec![
            ("store".to_string(), "redis".to_string()),
            ("users".to_string(), "30".to_string()),
        ];
        assert_eq!(
            t.render(&cell),
            "serve --sessions redis -c 30 $HOME $$ ${x} $1"
        );
        assert!(t.uses_factors());
        assert!(!FactorTemplate::parse("plain", &factors())
            .unwrap()
            .uses_factors());
    }

    #[test]
    fn unknown_factors_and_open_braces_are_named() {
        let e = FactorTemplate::parse("x ${stroe} y", &factors()).unwrap_err();
        assert!(e.contains("unknown factor 'stroe'"), "{e}");
        assert!(e.contains("store, users"), "{e}");
        let e = FactorTemplate::parse("x ${store", &factors()).unwrap_err();
        assert!(e.contains("closing"), "{e}");
    }
}
