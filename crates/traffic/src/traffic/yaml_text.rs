//! Text written into a YAML file: a string quoted so that whatever it
//! holds stays inside it.

use std::fmt::Write as _;

/// A YAML double-quoted string.
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_keeps_yaml_specials_inside_the_string() {
        assert_eq!(quote("/a?b=*&c"), "\"/a?b=*&c\"");
        assert_eq!(quote("say \"hi\"\\"), "\"say \\\"hi\\\"\\\\\"");
    }
}
