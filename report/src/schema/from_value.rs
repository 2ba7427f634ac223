//! The viewer's readers of the schema types serde buffers: the internally tagged enums
//! ([`ThinkTime`], [`RunStatus`]) and the SLO with its flattened limits ([`Slo`]). serde's derive
//! reads each through its private `Content` buffer, which compiles every variant's reader once
//! more for that buffer (~4 KB gzip of the viewer's wasm: the weight budget,
//! docs/performance.md). In the wasm they are read through a `serde_json::Value` instead
//! (`#[serde(try_from = "serde_json::Value")]` there), by the functions here, with serde's own
//! error messages; natively the derive reads them, and the tests below hold the two alike.

use serde::de::{Error as _, Unexpected};
use serde_json::{Error, Map, Value};

use super::{RunStatus, Slo, ThinkTime, DEFAULT_ATTAINMENT_TARGET};

impl TryFrom<Value> for ThinkTime {
    type Error = Error;

    fn try_from(value: Value) -> Result<ThinkTime, Error> {
        const VARIANTS: &[&str] = &["fixed", "exponential", "lognormal"];
        let mut fields = object(value, &"internally tagged enum ThinkTime")?;
        let tag = tag(&mut fields, "distribution")?;
        let names: &'static [&'static str] = match tag.as_str() {
            "fixed" => &["seconds"],
            "exponential" => &["mean_s"],
            "lognormal" => &["mean_s", "sigma"],
            other => return Err(Error::unknown_variant(other, VARIANTS)),
        };
        let mut values = [0.0; 2];
        let mut seen = [false; 2];
        for (key, value) in fields {
            let Some(at) = names.iter().position(|n| *n == key) else {
                return Err(Error::unknown_field(&key, names));
            };
            values[at] = serde::Deserialize::deserialize(value)?;
            seen[at] = true;
        }
        if let Some(at) = seen[..names.len()].iter().position(|s| !s) {
            return Err(Error::missing_field(names[at]));
        }
        Ok(match tag.as_str() {
            "fixed" => ThinkTime::Fixed { seconds: values[0] },
            "exponential" => ThinkTime::Exponential { mean_s: values[0] },
            _ => ThinkTime::Lognormal {
                mean_s: values[0],
                sigma: values[1],
            },
        })
    }
}

impl TryFrom<Value> for RunStatus {
    type Error = Error;

    fn try_from(value: Value) -> Result<RunStatus, Error> {
        let mut fields = object(value, &"internally tagged enum RunStatus")?;
        match tag(&mut fields, "state")?.as_str() {
            "complete" => Ok(RunStatus::Complete),
            "partial" => match fields.remove("reason") {
                Some(reason) => Ok(RunStatus::Partial {
                    reason: serde::Deserialize::deserialize(reason)?,
                }),
                None => Err(Error::missing_field("reason")),
            },
            other => Err(Error::unknown_variant(other, &["complete", "partial"])),
        }
    }
}

impl TryFrom<Value> for Slo {
    type Error = Error;

    fn try_from(value: Value) -> Result<Slo, Error> {
        let mut fields = object(value, &"struct Slo")?;
        let target = match fields.remove("target") {
            Some(target) => serde::Deserialize::deserialize(target)?,
            None => DEFAULT_ATTAINMENT_TARGET,
        };
        Ok(Slo {
            limits: serde::Deserialize::deserialize(Value::Object(fields))?,
            target,
        })
    }
}

/// The fields of a JSON object; anything else is an invalid type, as serde words it.
fn object(value: Value, expected: &dyn serde::de::Expected) -> Result<Map<String, Value>, Error> {
    match value {
        Value::Object(fields) => Ok(fields),
        other => Err(Error::invalid_type(unexpected(&other), expected)),
    }
}

/// Removes and returns the tag field `name`, a string.
fn tag(fields: &mut Map<String, Value>, name: &'static str) -> Result<String, Error> {
    match fields.remove(name) {
        Some(Value::String(tag)) => Ok(tag),
        Some(other) => Err(Error::invalid_type(
            unexpected(&other),
            &"variant identifier",
        )),
        None => Err(Error::missing_field(name)),
    }
}

fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Unexpected::Unsigned(u),
            (_, Some(i)) => Unexpected::Signed(i),
            _ => Unexpected::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

#[cfg(test)]
mod tests {
    use serde::de::DeserializeOwned;
    use serde_json::Value;

    use super::*;

    /// What serde's derive reads from `text` (natively, where the derive is used) and what
    /// `try_from` reads: the same value, or the same error message.
    fn alike<T>(text: &str)
    where
        T: DeserializeOwned + TryFrom<Value, Error = Error> + PartialEq + std::fmt::Debug,
    {
        let derived =
            serde_json::from_str::<T>(text).map_err(|e| crate::load::without_position(&e));
        let value: Value = serde_json::from_str(text).unwrap();
        let mine = T::try_from(value).map_err(|e| e.to_string());
        assert_eq!(mine, derived, "{text}");
    }

    #[test]
    fn think_times_read_as_the_derive_reads_them() {
        for text in [
            r#"{"distribution": "fixed", "seconds": 2}"#,
            r#"{"seconds": 2.5, "distribution": "fixed"}"#,
            r#"{"distribution": "exponential", "mean_s": 4.0}"#,
            r#"{"distribution": "lognormal", "mean_s": 4.0, "sigma": 0.5}"#,
            r#"{"seconds": 2}"#,
            r#"{"distribution": "normal", "seconds": 2}"#,
            r#"{"distribution": "fixed"}"#,
            r#"{"distribution": "lognormal", "mean_s": 4.0}"#,
            r#"{"distribution": "fixed", "seconds": "2"}"#,
            r#"{"distribution": "fixed", "seconds": null}"#,
            r#"{"distribution": "fixed", "seconds": 2, "sigma": 1}"#,
            r#"{"distribution": "lognormal", "mean_s": 4.0, "sigma": 0.5, "x": 1}"#,
            r#"7"#,
            r#""fixed""#,
        ] {
            alike::<ThinkTime>(text);
        }
    }

    #[test]
    fn run_statuses_read_as_the_derive_reads_them() {
        for text in [
            r#"{"state": "complete"}"#,
            r#"{"state": "complete", "reason": "x"}"#,
            r#"{"state": "partial", "reason": "interrupted"}"#,
            r#"{"state": "partial"}"#,
            r#"{"state": "partial", "reason": 3}"#,
            r#"{"state": "stopped"}"#,
            r#"{}"#,
            r#"null"#,
        ] {
            alike::<RunStatus>(text);
        }
    }

    #[test]
    fn slos_read_as_the_derive_reads_them() {
        for text in [
            r#"{"max_ttft_s": 2.0, "max_tpot_s": 0.05, "target": 0.9}"#,
            r#"{"max_ttft_s": 2.0}"#,
            r#"{"target": 0.5, "other": 1}"#,
            r#"{"max_ttft_s": "2"}"#,
            r#"{"target": "high"}"#,
        ] {
            alike::<Slo>(text);
        }
    }
}
