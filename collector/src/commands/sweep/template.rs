//! Templates of a sweep: text with `{name}` placeholders filled per configuration (its
//! parameters, the port it was given, the `infermeter` binary). Only `{` + a name + `}` is a
//! placeholder, and not after a `$`: a shell's `${HOME}` and a JSON argument's braces
//! (`--speculative-config '{"method": "ngram"}'`) pass through as written.

use std::collections::BTreeSet;

/// Placeholders every configuration fills besides its parameters.
pub const BUILT_IN: [&str; 2] = ["port", "infermeter"];

/// A text with placeholders, checked once.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    text: String,
}

/// A name of a parameter or placeholder: a letter or `_`, then letters, digits, `_` or `-`.
pub fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Each piece of `text`: literal text, or a placeholder's name.
fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut pieces = Vec::new();
    let mut literal_start = 0;
    let mut i = 0;
    let bytes = text.as_bytes();
    while i < bytes.len() {
        let after_dollar = i > 0 && bytes[i - 1] == b'$';
        if bytes[i] == b'{' && !after_dollar {
            if let Some(len) = text[i + 1..].find('}') {
                let name = &text[i + 1..i + 1 + len];
                if is_name(name) {
                    pieces.push(Piece::Literal(&text[literal_start..i]));
                    pieces.push(Piece::Name(name));
                    i += len + 2;
                    literal_start = i;
                    continue;
                }
            }
        }
        i += 1;
    }
    pieces.push(Piece::Literal(&text[literal_start..]));
    pieces
}

enum Piece<'a> {
    Literal(&'a str),
    Name(&'a str),
}

impl Template {
    pub fn new(text: impl Into<String>) -> Template {
        Template { text: text.into() }
    }

    /// As written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The placeholders it names.
    pub fn names(&self) -> BTreeSet<&str> {
        pieces(&self.text)
            .into_iter()
            .filter_map(|p| match p {
                Piece::Name(name) => Some(name),
                Piece::Literal(_) => None,
            })
            .collect()
    }

    /// The text with every placeholder filled by `value` (which knows them all: the plan
    /// checked them).
    pub fn fill<'a>(&self, value: impl Fn(&str) -> Option<&'a str>) -> String {
        pieces(&self.text)
            .into_iter()
            .map(|p| match p {
                Piece::Literal(text) => text,
                Piece::Name(name) => value(name).unwrap_or(""),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_filled_and_shell_and_json_braces_pass_through() {
        let t = Template::new(
            r#"vllm serve {model} --port {port} --max-num-seqs {mns} --x '{"a": {"b": 1}}' ${HOME} {not a name} {"#,
        );
        assert_eq!(
            t.names().into_iter().collect::<Vec<_>>(),
            ["mns", "model", "port"]
        );
        let filled = t.fill(|name| match name {
            "model" => Some("m"),
            "port" => Some("8000"),
            "mns" => Some("128"),
            _ => None,
        });
        assert_eq!(
            filled,
            r#"vllm serve m --port 8000 --max-num-seqs 128 --x '{"a": {"b": 1}}' ${HOME} {not a name} {"#
        );
    }

    #[test]
    fn names_start_with_a_letter() {
        assert!(is_name("mns") && is_name("max-num-seqs") && is_name("_x1"));
        assert!(!is_name("") && !is_name("1x") && !is_name("a b") && !is_name("\"a\""));
    }
}
