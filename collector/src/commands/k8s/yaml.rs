//! JSON values written as block YAML, as Kubernetes manifests are read by people: keys in order,
//! strings double-quoted (YAML's double-quoted style takes JSON's escapes), text of several
//! lines as a literal block.

use serde_json::Value;

/// `docs` as one YAML stream, documents separated by `---`.
pub fn stream(docs: &[Value]) -> String {
    docs.iter()
        .map(|doc| {
            let mut out = String::new();
            node(doc, 0, &mut out);
            out
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::Object(map) if map.is_empty() => Some("{}".into()),
        Value::Array(items) if items.is_empty() => Some("[]".into()),
        Value::Object(_) | Value::Array(_) => None,
        other => Some(other.to_string()),
    }
}

/// A text of several lines ending in one newline, as a literal block under `indent`.
fn literal(value: &Value, indent: usize) -> Option<String> {
    let text = value.as_str()?;
    let body = text.strip_suffix('\n')?;
    if !body.contains('\n') || body.ends_with('\n') || body.starts_with(' ') {
        return None;
    }
    let pad = " ".repeat(indent);
    let lines: Vec<String> = body
        .lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("{pad}{l}")
            }
        })
        .collect();
    Some(format!("|\n{}\n", lines.join("\n")))
}

/// Writes a map or list whose lines start at `indent`.
fn node(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                if let Some(block) = literal(v, indent + 2) {
                    out.push_str(&format!("{pad}{key}: {block}"));
                } else if let Some(s) = scalar(v) {
                    out.push_str(&format!("{pad}{key}: {s}\n"));
                } else {
                    out.push_str(&format!("{pad}{key}:\n"));
                    // Lists sit at their key's indent, as kubectl writes them.
                    let inner = if v.is_array() { indent } else { indent + 2 };
                    node(v, inner, out);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                match scalar(item) {
                    Some(s) => out.push_str(&format!("{pad}- {s}\n")),
                    None => {
                        // The item's first line takes the dash in place of its indent.
                        let mut inner = String::new();
                        node(item, indent + 2, &mut inner);
                        out.push_str(&format!("{pad}- {}", &inner[indent + 2..]));
                    }
                }
            }
        }
        other => out.push_str(&format!("{pad}{other}\n")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_block_yaml() {
        let doc = serde_json::json!({
            "kind": "Job",
            "spec": {
                "args": ["run", "--x", "a \"quoted\" value"],
                "containers": [{"name": "c", "env": [{"name": "A", "value": "1"}]}],
                "empty": {},
                "n": 3,
                "text": "line one\n\nline three\n"
            }
        });
        let expected = "kind: \"Job\"\nspec:\n  args:\n  - \"run\"\n  - \"--x\"\n  - \"a \\\"quoted\\\" value\"\n  containers:\n  - env:\n    - name: \"A\"\n      value: \"1\"\n    name: \"c\"\n  empty: {}\n  n: 3\n  text: |\n    line one\n\n    line three\n---\nkind: \"Job\"\n";
        assert_eq!(
            stream(&[doc.clone(), serde_json::json!({"kind": "Job"})]),
            expected
        );
    }
}
