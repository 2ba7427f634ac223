//! The engine configuration a report measured, when a sweep (`infermeter sweep`) ran it: the
//! sweep's name and the values of its parameters (`mns=128 tp=2`). Plain data, like the rest of
//! the schema; what labels a report by them is in the analysis.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One configuration of a sweep.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Configuration {
    /// The sweep's name (its file's `name`, else its output folder's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<String>,
    /// Each parameter's value as it went into the server's command line, in the order the
    /// sweep declares them, e.g. `{"mns": "128", "tp": "2"}`.
    pub parameters: Parameters,
}

/// Parameter names and values in their declared order, written as a JSON object (names are
/// unique). Values are text: what was put into the command, `128`, `fp8`, `true`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Parameters(pub Vec<(String, String)>);

impl Parameters {
    /// The value of `name`, if the configuration has that parameter.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Pairs of a name and a value, in order: `[("mns", "128"), ("tp", "2")].into_iter().collect()`.
impl<N: Into<String>, V: Into<String>> FromIterator<(N, V)> for Parameters {
    fn from_iter<I: IntoIterator<Item = (N, V)>>(pairs: I) -> Parameters {
        Parameters(
            pairs
                .into_iter()
                .map(|(n, v)| (n.into(), v.into()))
                .collect(),
        )
    }
}

/// `mns=128 tp=2`: how a configuration is named in logs, file lists and legends.
impl fmt::Display for Parameters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (name, value)) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{name}={value}")?;
        }
        Ok(())
    }
}

impl Serialize for Parameters {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Parameters {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct InOrder;
        impl<'de> serde::de::Visitor<'de> for InOrder {
            type Value = Parameters;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of parameter names and their values as text")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Parameters, A::Error> {
                let mut pairs: Vec<(String, String)> = Vec::new();
                while let Some((name, value)) = map.next_entry::<String, String>()? {
                    if pairs.iter().any(|(n, _)| *n == name) {
                        return Err(serde::de::Error::custom(format!(
                            "parameter \"{name}\" is given twice"
                        )));
                    }
                    pairs.push((name, value));
                }
                Ok(Parameters(pairs))
            }
        }
        deserializer.deserialize_map(InOrder)
    }
}

/// As a map of text to text (its order is the document's).
impl JsonSchema for Parameters {
    fn schema_name() -> Cow<'static, str> {
        "Parameters".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut schema = <BTreeMap<String, String>>::json_schema(generator);
        schema.insert(
            "description".into(),
            "Parameter names and their values as text, in the order the sweep declares them."
                .into(),
        );
        schema
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parameters(pairs: &[(&str, &str)]) -> Parameters {
        pairs.iter().copied().collect()
    }

    #[test]
    fn parameters_keep_their_order_as_json_and_in_words() {
        let p = parameters(&[("tp", "2"), ("mns", "128")]);
        assert_eq!(p.to_string(), "tp=2 mns=128");
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(json, r#"{"tp":"2","mns":"128"}"#);
        assert_eq!(serde_json::from_str::<Parameters>(&json).unwrap(), p);
        assert_eq!(p.get("mns"), Some("128"));
        assert_eq!(p.get("gpu"), None);
    }

    #[test]
    fn a_parameter_given_twice_or_not_as_text_is_refused() {
        let err = serde_json::from_str::<Parameters>(r#"{"tp":"1","tp":"2"}"#).unwrap_err();
        assert!(err.to_string().contains("\"tp\" is given twice"), "{err}");
        assert!(serde_json::from_str::<Parameters>(r#"{"tp":2}"#).is_err());
    }
}
