//! `[[scenario]]` tables: single requests of one shape, their lengths fixed or drawn from a
//! distribution, their prompts generated or taken from a file. A table becomes the report's
//! `Scenario` once its prompt file is read (before anything is sent).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use infermeter_report::{
    LengthDistribution, LengthPlan, OutputStop, PromptKind, PromptSource, Scenario,
};
use serde::Deserialize;

use crate::prompts::source::{PromptFile, PromptSpec, SourceError};

/// A `[[scenario]]` table as written.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioTable {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// A count, `"dataset"`, or a distribution table; from a ShareGPT or JSONL file, the
    /// prompts' own lengths when left out.
    #[serde(default)]
    pub input_tokens: Option<LengthSpec>,
    #[serde(default)]
    pub output_tokens: Option<LengthSpec>,
    /// `enforced` (default): exactly the length asked; `natural`: the model stops when it
    /// stops, the length asked its cap.
    #[serde(default)]
    pub output_stop: OutputStop,
    /// Seed of the length draws.
    #[serde(default)]
    pub seed: u64,
    /// A prompt file: its path, or a table of it and how to draw from it.
    #[serde(default)]
    pub prompts: Option<PromptsField>,
}

/// A length as a suite writes it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum LengthSpec {
    Tokens(u32),
    Word(String),
    Distribution(LengthDistribution),
    /// Anything else, kept to say what is wrong with it.
    Other(toml::Value),
}

/// `prompts = "file"` or `prompts = { file = …, … }`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum PromptsField {
    File(PathBuf),
    Spec(PromptSpec),
    Other(toml::Value),
}

impl PromptsField {
    /// The spec it gives, or why it gives none.
    pub fn spec(&self) -> Result<PromptSpec, String> {
        match self {
            PromptsField::File(file) => Ok(PromptSpec::file(file.clone())),
            PromptsField::Spec(spec) => Ok(spec.clone()),
            PromptsField::Other(value) => Err(match value.clone().try_into::<PromptSpec>() {
                Err(e) => format!("prompts: {}", e.message()),
                Ok(_) => "prompts is a file name or a table with file = …".into(),
            }),
        }
    }
}

/// A scenario's prompt file: how to draw from it and what it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioPrompts {
    pub spec: PromptSpec,
    pub file: Arc<PromptFile>,
}

/// Why a `[[scenario]]` table cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error("scenario \"{0}\": {1}")]
    Invalid(String, String),
    #[error(transparent)]
    Source(#[from] SourceError),
}

impl ScenarioTable {
    /// The table of `scenario` with `prompts` as its prompt file (`--prompts`): a ShareGPT or
    /// JSONL file's prompts keep their own lengths, the outputs stay the scenario's.
    pub fn of(scenario: &Scenario, prompts: &ScenarioPrompts) -> ScenarioTable {
        let plan = scenario.lengths.as_ref();
        let input = plan.map_or(
            LengthDistribution::Fixed {
                tokens: scenario.input_tokens,
            },
            |p| p.input,
        );
        let output = plan.map_or(
            LengthDistribution::Fixed {
                tokens: scenario.output_tokens,
            },
            |p| p.output,
        );
        let dataset = prompts.file.kind != PromptKind::Text;
        ScenarioTable {
            id: scenario.id.clone(),
            name: scenario.name.clone(),
            description: scenario.description.clone(),
            input_tokens: (!dataset).then_some(LengthSpec::Distribution(input)),
            output_tokens: Some(LengthSpec::Distribution(output)),
            output_stop: plan.map_or(OutputStop::Enforced, |p| p.output_stop),
            seed: plan.map_or(0, |p| p.seed),
            prompts: None,
        }
    }

    /// The scenario, and its prompt file read from `dir` (relative paths).
    pub fn read(&self, dir: &Path) -> Result<(Scenario, Option<ScenarioPrompts>), TableError> {
        let bad = |m: String| TableError::Invalid(self.id.clone(), m);
        let prompts = match &self.prompts {
            Some(field) => {
                let spec = field.spec().map_err(bad)?;
                let file = Arc::new(PromptFile::read(&spec, dir)?);
                Some(ScenarioPrompts { spec, file })
            }
            None => None,
        };
        let scenario = self.scenario(prompts.as_ref()).map_err(bad)?;
        Ok((scenario, prompts))
    }

    /// The report's scenario: its lengths (means of the distributions; a dataset's are set
    /// once its prompts are counted) and where its prompts come from.
    pub fn scenario(&self, prompts: Option<&ScenarioPrompts>) -> Result<Scenario, String> {
        let dataset = prompts.is_some_and(|p| p.file.kind != PromptKind::Text);
        let input = length("input_tokens", self.input_tokens.as_ref(), dataset)?;
        let output = length("output_tokens", self.output_tokens.as_ref(), dataset)?;
        if dataset && input != LengthDistribution::Dataset {
            return Err("a ShareGPT or JSONL file's prompts keep their own lengths: leave input_tokens out (or set it to \"dataset\"); to cut prompts to lengths you choose, give a text file".into());
        }
        let plan = LengthPlan {
            input,
            output,
            output_stop: self.output_stop,
            seed: self.seed,
        };
        let fixed = matches!(input, LengthDistribution::Fixed { .. })
            && matches!(output, LengthDistribution::Fixed { .. })
            && self.output_stop == OutputStop::Enforced;
        Ok(Scenario {
            id: self.id.clone(),
            name: self.name.clone(),
            description: self.description.clone(),
            input_tokens: mean_of(&input),
            output_tokens: mean_of(&output),
            session: None,
            trace: None,
            prompts: prompts.map(source),
            lengths: (!fixed).then_some(plan),
            agents: None,
        })
    }
}

/// What the report says of a prompt file before its prompts are counted (`used` and
/// `filtered_out` follow then).
fn source(prompts: &ScenarioPrompts) -> PromptSource {
    let (spec, file) = (&prompts.spec, &prompts.file);
    PromptSource {
        kind: file.kind,
        file: file.name(),
        sha256: file.sha256.clone(),
        available: file.entries.len() as u64,
        used: 0,
        filtered_out: file.skipped,
        filters: spec.filters(),
        order: spec.order,
        replacement: spec.replacement,
        seed: spec.seed,
        conversations: false,
    }
}

/// The mean of a distribution, whole tokens (0 for a dataset's, known once counted).
fn mean_of(d: &LengthDistribution) -> u32 {
    d.moments().map_or(0, |(mean, _)| mean.round() as u32)
}

/// The distribution `key` asks, checked; a dataset's own lengths where it is left out.
fn length(
    key: &str,
    spec: Option<&LengthSpec>,
    dataset: bool,
) -> Result<LengthDistribution, String> {
    let distribution = match spec {
        None if dataset => LengthDistribution::Dataset,
        None => return Err(format!("needs {key} (a count, or a distribution such as {{ distribution = \"uniform\", min = 100, max = 900 }})")),
        Some(LengthSpec::Tokens(n)) => LengthDistribution::Fixed { tokens: *n },
        Some(LengthSpec::Word(w)) if w == "dataset" => LengthDistribution::Dataset,
        Some(LengthSpec::Distribution(d)) => *d,
        Some(LengthSpec::Word(_) | LengthSpec::Other(_)) => {
            let why = match spec {
                Some(LengthSpec::Other(v)) => v
                    .clone()
                    .try_into::<LengthDistribution>()
                    .err()
                    .map(|e| format!(" ({})", e.message())),
                _ => None,
            };
            return Err(format!(
                "{key} is a whole number of tokens, \"dataset\", or a table: {{ distribution = \"fixed\", tokens = N }}, \"uniform\" with min and max, \"normal\" or \"lognormal\" with mean and stddev (and optional min and max){}",
                why.unwrap_or_default()
            ));
        }
    };
    if distribution == LengthDistribution::Dataset && !dataset {
        return Err(format!(
            "{key} = \"dataset\" needs prompts from a ShareGPT or JSONL file"
        ));
    }
    if let Some(problem) = distribution.problem() {
        return Err(format!("{key}: {problem}"));
    }
    Ok(distribution)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(body: &str) -> ScenarioTable {
        toml::from_str(&format!("id = 's'\nname = 'S'\n{body}")).unwrap()
    }

    #[test]
    fn lengths_are_counts_or_distributions() {
        let fixed = table("input_tokens = 512\noutput_tokens = 64")
            .scenario(None)
            .unwrap();
        assert_eq!((fixed.input_tokens, fixed.output_tokens), (512, 64));
        assert!(fixed.lengths.is_none() && fixed.prompts.is_none());
        let drawn = table(
            "input_tokens = { distribution = 'uniform', min = 100, max = 900 }\n\
             output_tokens = { distribution = 'lognormal', mean = 200, stddev = 100, max = 1000 }\n\
             output_stop = 'natural'\nseed = 3",
        )
        .scenario(None)
        .unwrap();
        assert_eq!(drawn.input_tokens, 500);
        let plan = drawn.lengths.unwrap();
        assert_eq!(plan.output_stop, OutputStop::Natural);
        assert_eq!(plan.seed, 3);
        // Natural stop alone is a plan too: the report says the choice.
        let natural = table("input_tokens = 8\noutput_tokens = 8\noutput_stop = 'natural'");
        assert!(natural.scenario(None).unwrap().lengths.is_some());
    }

    #[test]
    fn bad_lengths_say_what_a_length_is() {
        let err = |body: &str| table(body).scenario(None).unwrap_err();
        assert!(err("output_tokens = 8").contains("needs input_tokens"));
        let e = err("input_tokens = 'lots'\noutput_tokens = 8");
        assert!(e.contains("whole number of tokens"), "{e}");
        let e = err("input_tokens = { distribution = 'uniform', min = 9 }\noutput_tokens = 8");
        assert!(e.contains("input_tokens") && e.contains("max"), "{e}");
        let e =
            err("input_tokens = { distribution = 'uniform', min = 9, max = 2 }\noutput_tokens = 8");
        assert!(e.contains("min <= max"), "{e}");
        let e = err("input_tokens = 'dataset'\noutput_tokens = 8");
        assert!(e.contains("ShareGPT or JSONL"), "{e}");
    }

    #[test]
    fn a_dataset_keeps_its_own_input_lengths() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("d.jsonl"),
            "{\"prompt\": \"hello\", \"output_tokens\": 5}\n",
        )
        .unwrap();
        let (scenario, prompts) = table("prompts = 'd.jsonl'").read(dir.path()).unwrap();
        let plan = scenario.lengths.unwrap();
        assert_eq!(plan.input, LengthDistribution::Dataset);
        assert_eq!(plan.output, LengthDistribution::Dataset);
        let source = scenario.prompts.unwrap();
        assert_eq!((source.file.as_str(), source.available), ("d.jsonl", 1));
        assert_eq!(prompts.unwrap().file.entries.len(), 1);
        let err = table("prompts = 'd.jsonl'\ninput_tokens = 100")
            .read(dir.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("keep their own lengths"), "{err}");
        let err = table("prompts = { file = 'd.jsonl', order = 'sideways' }")
            .read(dir.path())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("prompts:") && err.contains("sideways"),
            "{err}"
        );
        let err = table("prompts = 'missing.jsonl'")
            .read(dir.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing.jsonl"), "{err}");
    }
}
