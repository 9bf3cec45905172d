//! The Prometheus text exposition format (0.0.4, which Prometheus and
//! OpenMetrics scrapers both read): metric families with their HELP and
//! TYPE lines, then their samples with escaped label values.

use std::fmt::Write;

/// The Content-Type of a `/metrics` answer.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A `/metrics` page being written. Each family is declared once, with
/// all its samples after it.
#[derive(Debug, Default)]
pub struct Exposition {
    text: String,
}

impl Exposition {
    /// Starts a family: `kind` is counter, gauge, histogram or untyped.
    pub fn family(&mut self, name: &str, kind: &str, help: &str) -> &mut Self {
        let help = help.replace('\\', "\\\\").replace('\n', "\\n");
        let _ = writeln!(self.text, "# HELP {name} {help}");
        let _ = writeln!(self.text, "# TYPE {name} {kind}");
        self
    }

    /// One sample of the current family.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) -> &mut Self {
        self.text.push_str(name);
        if !labels.is_empty() {
            self.text.push('{');
            for (i, (key, value)) in labels.iter().enumerate() {
                if i > 0 {
                    self.text.push(',');
                }
                let _ = write!(self.text, "{key}=\"");
                for ch in value.chars() {
                    match ch {
                        '\\' => self.text.push_str("\\\\"),
                        '"' => self.text.push_str("\\\""),
                        '\n' => self.text.push_str("\\n"),
                        c => self.text.push(c),
                    }
                }
                self.text.push('"');
            }
            self.text.push('}');
        }
        self.text.push(' ');
        if value.is_nan() {
            self.text.push_str("NaN");
        } else if value.is_infinite() {
            self.text
                .push_str(if value > 0.0 { "+Inf" } else { "-Inf" });
        } else {
            let _ = write!(self.text, "{value}");
        }
        self.text.push('\n');
        self
    }

    /// A family with one sample and no labels.
    pub fn single(&mut self, name: &str, kind: &str, help: &str, value: f64) -> &mut Self {
        self.family(name, kind, help).sample(name, &[], value)
    }

    pub fn finish(self) -> String {
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_samples_and_escapes() {
        let mut e = Exposition::default();
        e.family("x_total", "counter", "Requests.\nAll of them")
            .sample("x_total", &[("label", "a \"b\"\\c\nd")], 3.0)
            .sample("x_total", &[], 0.5);
        e.single("y", "gauge", "Y", f64::INFINITY);
        assert_eq!(
            e.finish(),
            "# HELP x_total Requests.\\nAll of them\n# TYPE x_total counter\nx_total{label=\"a \\\"b\\\"\\\\c\\nd\"} 3\nx_total 0.5\n# HELP y Y\n# TYPE y gauge\ny +Inf\n"
        );
    }
}
