//! Reading fields of another tool's JSON with errors that name the field: `serde_json::Value`
//! and a path, not a derived struct per format (a few kilobytes of wasm instead of tens).

use serde_json::{Map, Value};

/// A JSON object of a tool's file and where it is in the file (`benchmarks[2].metrics`).
#[derive(Clone, Copy)]
pub(crate) struct Obj<'a> {
    map: &'a Map<String, Value>,
    path: &'a str,
}

impl<'a> Obj<'a> {
    /// `value` as an object at `path`, or why it is not one.
    pub(crate) fn new(value: &'a Value, path: &'a str) -> Result<Obj<'a>, String> {
        match value {
            Value::Object(map) => Ok(Obj { map, path }),
            other => Err(format!("{} is {}, not an object", shown(path), kind(other))),
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// Where `key` is, for messages: `metrics.ttft` or `ttft` at the top.
    pub(crate) fn at(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// A number, or none when the field is absent or null; an error when it is something else
    /// or not finite.
    pub(crate) fn opt_num(&self, key: &str) -> Result<Option<f64>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => match n.as_f64().filter(|v| v.is_finite()) {
                Some(v) => Ok(Some(v)),
                None => Err(format!("`{}` is not a finite number", self.at(key))),
            },
            Some(other) => Err(format!(
                "`{}` is {}, not a number",
                self.at(key),
                kind(other)
            )),
        }
    }

    /// A number that must be there.
    pub(crate) fn num(&self, key: &str) -> Result<f64, String> {
        self.opt_num(key)?
            .ok_or_else(|| format!("has no `{}`", self.at(key)))
    }

    pub(crate) fn opt_str(&self, key: &str) -> Option<&'a str> {
        self.get(key).and_then(Value::as_str)
    }

    /// An object field that must be there.
    pub(crate) fn obj(&self, key: &str, path: &'a str) -> Result<Obj<'a>, String> {
        let value = self
            .get(key)
            .ok_or_else(|| format!("has no `{}`", self.at(key)))?;
        Obj::new(value, path)
    }

    /// An object field that may be absent.
    pub(crate) fn opt_obj(&self, key: &str, path: &'a str) -> Result<Option<Obj<'a>>, String> {
        self.get(key).map(|v| Obj::new(v, path)).transpose()
    }

    /// An array field that may be absent.
    pub(crate) fn opt_array(&self, key: &str) -> Result<Option<&'a [Value]>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Array(items)) => Ok(Some(items)),
            Some(other) => Err(format!("`{}` is {}, not a list", self.at(key), kind(other))),
        }
    }

    pub(crate) fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    pub(crate) fn map(&self) -> &'a Map<String, Value> {
        self.map
    }
}

/// Numbers of a list that must hold only numbers (`null` as none).
pub(crate) fn numbers(items: &[Value], what: &str) -> Result<Vec<Option<f64>>, String> {
    items
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::Null => Ok(None),
            Value::Number(n) => n
                .as_f64()
                .filter(|v| v.is_finite())
                .map(Some)
                .ok_or_else(|| format!("`{what}[{i}]` is not a finite number")),
            other => Err(format!("`{what}[{i}]` is {}, not a number", kind(other))),
        })
        .collect()
}

fn shown(path: &str) -> String {
    if path.is_empty() {
        "the file".into()
    } else {
        format!("`{path}`")
    }
}

/// What a JSON value is, in words.
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "true or false",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
