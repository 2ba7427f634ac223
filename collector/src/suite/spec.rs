//! The SLO, search and prompt-file settings as written on the command line and in suites:
//! comma-separated `key=value` pairs, e.g. `ttft=5s,tpot=50ms,e2e=30s,stall=0,target=95%`,
//! `mode=peak,min=1,max=256,resolution=0.1` and `sharegpt.json,order=shuffle,count=500`.

use infermeter_report::{LoadMode, SearchSettings, Slo};

use crate::prompts::source::PromptSpec;

/// Why a spec cannot be read: which part, and what it should look like.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    #[error("\"{0}\" is not key=value; write e.g. ttft=5s,tpot=50ms")]
    NotAPair(String),
    #[error("unknown key \"{key}\"; use one of {known}")]
    UnknownKey { key: String, known: &'static str },
    #[error("{key}={value}: {why}")]
    BadValue {
        key: String,
        value: String,
        why: &'static str,
    },
}

const SLO_KEYS: &str = "ttft, tpot, decode, e2e, stall, job, target";
const SEARCH_KEYS: &str = "mode, min, max, resolution";

/// The `key=value` pairs of `spec`, in order; an empty spec has none.
fn pairs(spec: &str) -> Result<Vec<(&str, &str)>, SpecError> {
    spec.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.trim(), v.trim()))
                .filter(|(k, v)| !k.is_empty() && !v.is_empty())
                .ok_or_else(|| SpecError::NotAPair(p.to_string()))
        })
        .collect()
}

fn bad(key: &str, value: &str, why: &'static str) -> SpecError {
    SpecError::BadValue {
        key: key.into(),
        value: value.into(),
        why,
    }
}

/// A duration in seconds: `5s`, `50ms`, `2m`, or a bare number of seconds.
fn seconds(key: &str, value: &str) -> Result<f64, SpecError> {
    let (number, factor) = if let Some(n) = value.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = value.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = value.strip_suffix('m') {
        (n, 60.0)
    } else {
        (value, 1.0)
    };
    number
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .map(|v| v * factor)
        .ok_or_else(|| {
            bad(
                key,
                value,
                "a positive duration such as 5s or 50ms is expected",
            )
        })
}

fn positive(key: &str, value: &str) -> Result<f64, SpecError> {
    value
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| bad(key, value, "a positive number is expected"))
}

/// A fraction written as `95%`, `95` or `0.95`.
fn fraction(key: &str, value: &str) -> Result<f64, SpecError> {
    let (number, percent) = match value.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (value, false),
    };
    let v: f64 = number
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| bad(key, value, "a share such as 95% or 0.95 is expected"))?;
    Ok(if percent || v > 1.0 { v / 100.0 } else { v })
}

/// A share of requests: above 0, at most all of them.
fn share(key: &str, value: &str) -> Result<f64, SpecError> {
    let v = fraction(key, value)?;
    (v > 0.0 && v <= 1.0)
        .then_some(v)
        .ok_or_else(|| bad(key, value, "the share must be above 0% and at most 100%"))
}

/// How close a search's bracket must get, relative to its passing load: 0 (one request) to
/// under 100%.
fn resolution(key: &str, value: &str) -> Result<f64, SpecError> {
    let v = fraction(key, value)?;
    (0.0..1.0).contains(&v).then_some(v).ok_or_else(|| {
        bad(
            key,
            value,
            "the resolution is 0 (one request) up to under 100%",
        )
    })
}

/// Reads an SLO: `ttft`, `tpot` and `e2e` durations, `decode` (tok/s, another way to give
/// TPOT), `stall` (most stalls per request, 0 for none), `job` (an agentic job's completion
/// time) and `target` (default 95%).
pub fn parse_slo(spec: &str) -> Result<Slo, SpecError> {
    let mut slo = Slo::default();
    for (key, value) in pairs(spec)? {
        match key {
            "ttft" => slo.limits.max_ttft_s = Some(seconds(key, value)?),
            "tpot" => slo.limits.max_tpot_s = Some(seconds(key, value)?),
            "decode" => slo.limits.max_tpot_s = Some(1.0 / positive(key, value)?),
            "e2e" => slo.limits.max_e2e_s = Some(seconds(key, value)?),
            "job" => slo.limits.max_job_s = Some(seconds(key, value)?),
            "stall" | "stalls" => {
                slo.limits.max_stalls = Some(
                    value
                        .parse()
                        .map_err(|_| bad(key, value, "a whole number of stalls is expected"))?,
                )
            }
            "target" => slo.target = share(key, value)?,
            _ => {
                return Err(SpecError::UnknownKey {
                    key: key.into(),
                    known: SLO_KEYS,
                })
            }
        }
    }
    Ok(slo)
}

/// Search settings before defaults: what a suite's `[search]` or `--search` gave.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchSpec {
    pub mode: Option<LoadMode>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub resolution: Option<f64>,
}

/// The defaults of a search: peak concurrency from 1 to 256, bisected to 10%.
pub const DEFAULT_SEARCH: SearchSettings = SearchSettings {
    mode: LoadMode::Peak,
    min: 1.0,
    max: 256.0,
    resolution: 0.1,
};

impl SearchSpec {
    /// Reads `mode=peak|burst,min=N,max=N,resolution=F`; an empty spec takes every default.
    pub fn parse(spec: &str) -> Result<SearchSpec, SpecError> {
        let mut out = SearchSpec::default();
        for (key, value) in pairs(spec)? {
            match key {
                "mode" => out.mode = Some(match value {
                    "peak" => LoadMode::Peak,
                    "burst" => LoadMode::Burst,
                    _ => return Err(bad(
                        key,
                        value,
                        "search runs over peak concurrency or burst queue depth: use peak or burst",
                    )),
                }),
                "min" => out.min = Some(positive(key, value)?),
                "max" => out.max = Some(positive(key, value)?),
                "resolution" => out.resolution = Some(resolution(key, value)?),
                _ => {
                    return Err(SpecError::UnknownKey {
                        key: key.into(),
                        known: SEARCH_KEYS,
                    })
                }
            }
        }
        Ok(out)
    }

    /// These settings over `base` (a key given here wins), with the defaults for the rest,
    /// checked: whole numbers from 1, `min` at most `max`.
    pub fn settle(&self, base: &SearchSpec) -> Result<SearchSettings, SpecError> {
        let settings = SearchSettings {
            mode: self.mode.or(base.mode).unwrap_or(DEFAULT_SEARCH.mode),
            min: self.min.or(base.min).unwrap_or(DEFAULT_SEARCH.min),
            max: self.max.or(base.max).unwrap_or(DEFAULT_SEARCH.max),
            resolution: self
                .resolution
                .or(base.resolution)
                .unwrap_or(DEFAULT_SEARCH.resolution),
        };
        let whole = |v: f64| v >= 1.0 && v.fract() == 0.0 && v <= f64::from(u32::MAX);
        if !whole(settings.min) || !whole(settings.max) {
            let value = format!("{}..{}", settings.min, settings.max);
            return Err(bad(
                "min/max",
                &value,
                "concurrency is a whole number from 1",
            ));
        }
        if !(0.0..1.0).contains(&settings.resolution) {
            let value = settings.resolution.to_string();
            return Err(bad(
                "resolution",
                &value,
                "the resolution is 0 (one request) up to under 100%",
            ));
        }
        if settings.min > settings.max {
            let value = format!("{}..{}", settings.min, settings.max);
            return Err(bad("min/max", &value, "min must not exceed max"));
        }
        Ok(settings)
    }
}

/// `--prompts FILE[,key=value…]`: a prompt file and the keys a suite's `prompts` table takes
/// (`format`, `order`, `seed`, `replacement`, `count`, `min_input`, `max_input`, `min_output`,
/// `max_output`, `malformed`).
pub fn parse_prompts(spec: &str) -> Result<PromptSpec, String> {
    let (file, rest) = spec.split_once(',').unwrap_or((spec, ""));
    let file = file.trim();
    if file.is_empty() || file.contains('=') {
        return Err(format!(
            "\"{spec}\": --prompts takes a file first, then key=value settings, e.g. sharegpt.json,order=shuffle,seed=1,count=500"
        ));
    }
    let mut table = toml::Table::new();
    table.insert("file".into(), file.into());
    for (key, value) in pairs(rest).map_err(|e| e.to_string())? {
        let value = match (value.parse::<i64>(), value.parse::<bool>()) {
            (Ok(n), _) => toml::Value::Integer(n),
            (_, Ok(b)) => toml::Value::Boolean(b),
            _ => toml::Value::String(value.into()),
        };
        table.insert(key.into(), value);
    }
    toml::Value::Table(table)
        .try_into::<PromptSpec>()
        .map_err(|e| format!("--prompts {spec}: {}", e.message()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slo_specs_read_durations_shares_and_speeds() {
        let slo = parse_slo("ttft=5s, tpot=50ms,e2e=2m,stall=0,target=99%").unwrap();
        assert_eq!(slo.limits.max_ttft_s, Some(5.0));
        assert_eq!(slo.limits.max_tpot_s, Some(0.05));
        assert_eq!(slo.limits.max_e2e_s, Some(120.0));
        assert_eq!(slo.limits.max_stalls, Some(0));
        assert_eq!(slo.target, 0.99);
        let speed = parse_slo("decode=20,ttft=0.5,target=0.9").unwrap();
        assert_eq!(
            (
                speed.limits.max_tpot_s,
                speed.limits.max_ttft_s,
                speed.target
            ),
            (Some(0.05), Some(0.5), 0.9)
        );
        assert_eq!(parse_slo("").unwrap(), Slo::default());
        let job = parse_slo("job=5m,ttft=1s").unwrap();
        assert_eq!(
            (job.limits.max_job_s, job.limits.max_ttft_s),
            (Some(300.0), Some(1.0))
        );
    }

    #[test]
    fn bad_slo_specs_say_what_to_write() {
        let err = |spec: &str| parse_slo(spec).unwrap_err().to_string();
        assert_eq!(
            err("ttft"),
            "\"ttft\" is not key=value; write e.g. ttft=5s,tpot=50ms"
        );
        assert!(err("itl=5ms").contains("use one of ttft, tpot"));
        assert!(err("ttft=-1s").contains("a positive duration"));
        assert!(err("target=150%").contains("at most 100%"));
        assert!(err("stall=some").contains("whole number"));
    }

    #[test]
    fn search_specs_take_defaults_and_the_suites_settings() {
        let suite = SearchSpec {
            max: Some(64.0),
            ..SearchSpec::default()
        };
        let cli = SearchSpec::parse("mode=burst,min=2").unwrap();
        let settings = cli.settle(&suite).unwrap();
        assert_eq!(
            settings,
            SearchSettings {
                mode: LoadMode::Burst,
                min: 2.0,
                max: 64.0,
                resolution: 0.1
            }
        );
        assert_eq!(
            SearchSpec::parse("")
                .unwrap()
                .settle(&SearchSpec::default()),
            Ok(DEFAULT_SEARCH)
        );
        let err = SearchSpec::parse("min=8,max=4")
            .unwrap()
            .settle(&SearchSpec::default())
            .unwrap_err();
        assert!(err.to_string().contains("min must not exceed max"));
        assert!(SearchSpec::parse("mode=rate").is_err());
        assert_eq!(
            SearchSpec::parse("resolution=0").unwrap().resolution,
            Some(0.0)
        );
        assert!(SearchSpec::parse("resolution=100%").is_err());
        assert!(SearchSpec::parse("min=1.5")
            .unwrap()
            .settle(&SearchSpec::default())
            .is_err());
    }

    #[test]
    fn prompts_specs_are_a_file_and_settings() {
        let spec = parse_prompts(
            "data/sg.json,order=shuffle,seed=3,count=500,max_input=1024,replacement=true",
        )
        .unwrap();
        assert_eq!(spec.file, std::path::PathBuf::from("data/sg.json"));
        assert_eq!(
            (spec.seed, spec.count, spec.max_input),
            (3, Some(500), Some(1024))
        );
        assert!(spec.replacement);
        assert_eq!(spec.order, infermeter_report::SampleOrder::Shuffle);
        assert!(parse_prompts("order=shuffle")
            .unwrap_err()
            .contains("a file first"));
        let err = parse_prompts("a.json,colour=blue").unwrap_err();
        assert!(err.contains("colour"), "{err}");
        let err = parse_prompts("a.json,count=many").unwrap_err();
        assert!(err.contains("count"), "{err}");
    }
}
