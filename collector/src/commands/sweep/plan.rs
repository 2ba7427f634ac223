//! What a sweep runs: its file (TOML) and flags made into one [`SweepPlan`], checked before any
//! server starts: every placeholder names a parameter, every parameter is used, every
//! configuration is there once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use infermeter_report::Parameters;
use serde::Deserialize;
use toml::Spanned;

use super::template::{is_name, Template, BUILT_IN};

/// The built-in sweep of the simulator (`--sweep sim`), also shipped as an example.
const SIM_PRESET: &str = include_str!("../../../sweeps/sim.toml");

/// Seconds a server has to answer the readiness check, unless told.
pub const DEFAULT_READY_TIMEOUT_S: f64 = 600.0;
/// Seconds a server has to exit after SIGTERM before SIGKILL, unless told.
pub const DEFAULT_STOP_GRACE_S: f64 = 30.0;

/// A sweep file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepFile {
    name: Option<String>,
    serve: Option<String>,
    base_url: Option<String>,
    hook: Option<String>,
    suite: Option<String>,
    run: Option<Vec<String>>,
    ready: Option<String>,
    ready_timeout_s: Option<f64>,
    stop_grace_s: Option<f64>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    /// The grid: each parameter's values (kept in the file's order by their spans).
    #[serde(default)]
    parameters: BTreeMap<String, Spanned<toml::Value>>,
    /// An explicit list of configurations, instead of a grid.
    #[serde(default, rename = "configuration")]
    configurations: Vec<BTreeMap<String, Spanned<toml::Value>>>,
}

/// What the command line says besides the file (each replaces the file's).
#[derive(Debug, Clone, Default)]
pub struct SweepFlags {
    pub sweep: Option<String>,
    pub name: Option<String>,
    pub serve: Option<String>,
    pub base_url: Option<String>,
    pub hook: Option<String>,
    /// `NAME=V1,V2`: a parameter of the grid (replacing the file's of that name).
    pub params: Vec<String>,
    /// `NAME=V,NAME=V`: configurations listed (replacing the file's list).
    pub configurations: Vec<String>,
    /// `NAME=VALUE`, added to the file's `[env]`.
    pub env: Vec<String>,
    pub suite: Option<String>,
    pub ready: Option<String>,
    pub ready_timeout_s: Option<f64>,
    pub stop_grace_s: Option<f64>,
    /// `infermeter run` options (replacing the file's `run`).
    pub run: Vec<String>,
    pub out_dir: PathBuf,
}

/// A sweep, checked.
#[derive(Debug, Clone)]
pub struct SweepPlan {
    pub name: String,
    /// The server's command; none when the sweep measures a server started by other means.
    pub serve: Option<Template>,
    pub base_url: Template,
    pub hook: Option<Template>,
    /// The readiness check's path or URL (none: `/v1/models` of the base URL).
    pub ready: Option<Template>,
    pub ready_timeout: Duration,
    pub stop_grace: Duration,
    pub env: Vec<(String, Template)>,
    pub run_options: Vec<Template>,
    pub suite: Option<String>,
    pub out_dir: PathBuf,
    pub configurations: Vec<Parameters>,
}

/// Why the sweep cannot run as given.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("cannot read the sweep file {}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a sweep file: {message}", .path.display())]
    Parse { path: PathBuf, message: String },
    #[error("{0}")]
    Invalid(String),
}

fn invalid(message: impl Into<String>) -> PlanError {
    PlanError::Invalid(message.into())
}

impl SweepFile {
    /// The file `--sweep` names (or the built-in `sim`), and the folder its paths are relative to.
    fn read(name: Option<&str>) -> Result<(SweepFile, PathBuf), PlanError> {
        let (text, path, folder) = match name {
            None => return Ok((SweepFile::default(), PathBuf::from("."))),
            Some("sim") => (
                SIM_PRESET.to_string(),
                PathBuf::from("sim"),
                PathBuf::from("."),
            ),
            Some(file) => {
                let path = PathBuf::from(file);
                let text = std::fs::read_to_string(&path).map_err(|source| PlanError::Read {
                    path: path.clone(),
                    source,
                })?;
                let folder = path.parent().unwrap_or(Path::new(".")).to_path_buf();
                (text, path, folder)
            }
        };
        let file = toml::from_str(&text).map_err(|e| PlanError::Parse {
            path,
            message: e.to_string(),
        })?;
        Ok((file, folder))
    }
}

/// A TOML value as a parameter's text: `128`, `0.9`, `fp8`, `true`.
fn value_text(name: &str, value: &toml::Value) -> Result<String, PlanError> {
    match value {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        other => Err(invalid(format!(
            "parameter {name}: {other} is not a value (a string, number or boolean)"
        ))),
    }
}

/// Entries in the file's order.
fn in_file_order(table: BTreeMap<String, Spanned<toml::Value>>) -> Vec<(String, toml::Value)> {
    let mut entries: Vec<_> = table.into_iter().collect();
    entries.sort_by_key(|(_, v)| v.span().start);
    entries
        .into_iter()
        .map(|(k, v)| (k, v.into_inner()))
        .collect()
}

/// The grid's parameters and their values, in order.
type Grid = Vec<(String, Vec<String>)>;

fn file_grid(table: BTreeMap<String, Spanned<toml::Value>>) -> Result<Grid, PlanError> {
    in_file_order(table)
        .into_iter()
        .map(|(name, value)| {
            let values = match &value {
                toml::Value::Array(list) => list
                    .iter()
                    .map(|v| value_text(&name, v))
                    .collect::<Result<_, _>>()?,
                single => vec![value_text(&name, single)?],
            };
            Ok((name, values))
        })
        .collect()
}

/// `NAME=V1,V2` (a grid's parameter) as a name and its values.
fn flag_param(text: &str) -> Result<(String, Vec<String>), PlanError> {
    let (name, values) = text.split_once('=').ok_or_else(|| {
        invalid(format!(
            "--param \"{text}\" is not NAME=V1,V2 (e.g. mns=64,128)"
        ))
    })?;
    let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
    Ok((name.trim().to_string(), values))
}

/// `NAME=V,NAME=V` (one configuration).
fn flag_configuration(text: &str) -> Result<Parameters, PlanError> {
    let pairs = text.split(',').map(|pair| {
        let (name, value) = pair.split_once('=').ok_or_else(|| {
            invalid(format!(
                "--configuration \"{text}\" is not NAME=V,NAME=V (e.g. mns=64,tp=1)"
            ))
        })?;
        Ok((name.trim().to_string(), value.trim().to_string()))
    });
    Ok(Parameters(pairs.collect::<Result<_, PlanError>>()?))
}

/// Every combination of the grid's values, the first parameter varying slowest.
fn combinations(grid: &Grid) -> Vec<Parameters> {
    let mut all = vec![Vec::new()];
    for (name, values) in grid {
        all = all
            .into_iter()
            .flat_map(|done: Vec<(String, String)>| {
                values.iter().map(move |v| {
                    let mut next = done.clone();
                    next.push((name.clone(), v.clone()));
                    next
                })
            })
            .collect();
    }
    all.into_iter().map(Parameters).collect()
}

/// The file's `[env]` with the flags' `NAME=VALUE` added (replacing the file's of that name).
fn environment(
    file: BTreeMap<String, String>,
    flags: &[String],
) -> Result<Vec<(String, Template)>, PlanError> {
    let mut env: Vec<(String, Template)> = file
        .into_iter()
        .map(|(k, v)| (k, Template::new(v)))
        .collect();
    for pair in flags {
        let (name, value) = pair
            .split_once('=')
            .ok_or_else(|| invalid(format!("--env \"{pair}\" is not NAME=VALUE")))?;
        env.retain(|(k, _)| k != name);
        env.push((name.to_string(), Template::new(value)));
    }
    Ok(env)
}

/// The flag's seconds, else the file's, else `default`: positive.
fn seconds(
    flag: Option<f64>,
    file: Option<f64>,
    default: f64,
    what: &str,
) -> Result<Duration, PlanError> {
    let s = flag.or(file).unwrap_or(default);
    if s.is_finite() && s > 0.0 {
        Ok(Duration::from_secs_f64(s))
    } else {
        Err(invalid(format!(
            "{what} must be a positive number of seconds, not {s}"
        )))
    }
}

impl SweepPlan {
    /// The plan the file and flags give, checked.
    pub fn new(flags: SweepFlags) -> Result<SweepPlan, PlanError> {
        let (file, folder) = SweepFile::read(flags.sweep.as_deref())?;
        let env = environment(file.env, &flags.env)?;
        let suite = match (flags.suite, file.suite) {
            (Some(suite), _) => Some(suite),
            (None, Some(suite)) => Some(relative_to(&folder, &suite)),
            (None, None) => None,
        };
        let run = if flags.run.is_empty() {
            file.run.unwrap_or_default()
        } else {
            flags.run
        };
        let name = flags.name.or(file.name).unwrap_or_else(|| {
            let dir = flags.out_dir.file_name().unwrap_or_default();
            dir.to_string_lossy().into_owned()
        });
        let serve = flags.serve.or(file.serve).map(Template::new);
        let base_url = match (flags.base_url.or(file.base_url), &serve) {
            (Some(url), _) => url,
            (None, Some(_)) => "http://127.0.0.1:{port}".to_string(),
            (None, None) => {
                return Err(invalid(
                    "nothing to measure: give the server's command (--serve, or serve in the sweep file) \
                     or, for a server started by other means, its --base-url (and a --hook that \
                     applies each configuration)",
                ))
            }
        };
        let configurations = configurations(
            &flags.params,
            &flags.configurations,
            file.parameters,
            file.configurations,
        )?;
        let plan = SweepPlan {
            name,
            serve,
            base_url: Template::new(base_url),
            hook: flags.hook.or(file.hook).map(Template::new),
            ready: flags.ready.or(file.ready).map(Template::new),
            ready_timeout: seconds(
                flags.ready_timeout_s,
                file.ready_timeout_s,
                DEFAULT_READY_TIMEOUT_S,
                "the readiness timeout",
            )?,
            stop_grace: seconds(
                flags.stop_grace_s,
                file.stop_grace_s,
                DEFAULT_STOP_GRACE_S,
                "the stop grace",
            )?,
            env,
            run_options: run.into_iter().map(Template::new).collect(),
            suite,
            out_dir: flags.out_dir,
            configurations,
        };
        plan.check()?;
        Ok(plan)
    }

    /// Every template with what it is, for error messages.
    fn templates(&self) -> Vec<(String, &Template)> {
        let mut all = vec![("base_url".to_string(), &self.base_url)];
        let named = [
            ("serve", &self.serve),
            ("hook", &self.hook),
            ("ready", &self.ready),
        ];
        all.extend(
            named
                .into_iter()
                .filter_map(|(what, t)| Some((what.to_string(), t.as_ref()?))),
        );
        all.extend(self.env.iter().map(|(k, t)| (format!("env {k}"), t)));
        all.extend(
            self.run_options
                .iter()
                .map(|t| ("the run options".to_string(), t)),
        );
        all
    }

    /// The parameters' names (every configuration has the same).
    pub fn parameter_names(&self) -> Vec<&str> {
        self.configurations[0].iter().map(|(n, _)| n).collect()
    }

    /// Placeholders name parameters, parameters are used, the run options leave the sweep's
    /// own to it.
    fn check(&self) -> Result<(), PlanError> {
        let names = self.parameter_names();
        for (what, template) in self.templates() {
            if let Some(unknown) = template
                .names()
                .into_iter()
                .find(|n| !names.contains(n) && !BUILT_IN.contains(n))
            {
                return Err(invalid(format!(
                    "{what}: {{{unknown}}} is not a parameter (parameters: {}; built in: {})",
                    names.join(", "),
                    BUILT_IN.join(", ")
                )));
            }
        }
        for name in &names {
            if !self
                .templates()
                .iter()
                .any(|(_, t)| t.names().contains(name))
            {
                return Err(invalid(format!(
                    "parameter {name} is used nowhere: put {{{name}}} in the server's command, \
                     its environment, the hook or the run options, or every configuration would \
                     measure the same"
                )));
            }
        }
        let suite_option =
            |t: &Template| t.as_str() == "--suite" || t.as_str().starts_with("--suite=");
        if self.suite.is_none() && !self.run_options.iter().any(suite_option) {
            return Err(invalid(
                "no suite: name what to measure with --suite (a built-in name such as \
                 four-scenario, or a TOML file) or `suite` in the sweep file",
            ));
        }
        let mut sets = vec!["--base-url", "--out", "--resume", "--force"];
        if self.suite.is_some() {
            sets.push("--suite");
        }
        for option in &self.run_options {
            let text = option.as_str();
            if let Some(set) = sets
                .iter()
                .find(|s| text == **s || text.starts_with(&format!("{s}=")))
            {
                return Err(invalid(format!(
                    "the run options give {set}, which the sweep sets for each configuration; \
                     leave it out (the suite: --suite or suite in the sweep file)"
                )));
            }
        }
        Ok(())
    }
}

/// `path` of a file beside the sweep file, when there is one; else as written (a built-in name).
fn relative_to(folder: &Path, path: &str) -> String {
    let beside = folder.join(path);
    if Path::new(path).is_relative() && beside.exists() {
        beside.to_string_lossy().into_owned()
    } else {
        path.to_string()
    }
}

/// The configurations: the flags' list, else the file's list, else the grid (the file's, its
/// parameters replaced or joined by `--param`); checked.
fn configurations(
    params: &[String],
    listed: &[String],
    file_grid_table: BTreeMap<String, Spanned<toml::Value>>,
    file_list: Vec<BTreeMap<String, Spanned<toml::Value>>>,
) -> Result<Vec<Parameters>, PlanError> {
    let mut grid = file_grid(file_grid_table)?;
    for param in params {
        let (name, values) = flag_param(param)?;
        match grid.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 = values,
            None => grid.push((name, values)),
        }
    }
    let list: Vec<Parameters> = if listed.is_empty() {
        let tables = file_list.into_iter().map(|table| {
            let pairs = in_file_order(table).into_iter().map(|(name, value)| {
                let text = value_text(&name, &value)?;
                Ok((name, text))
            });
            Ok(Parameters(pairs.collect::<Result<_, PlanError>>()?))
        });
        tables.collect::<Result<_, PlanError>>()?
    } else {
        let listed = listed.iter().map(|c| flag_configuration(c));
        listed.collect::<Result<_, _>>()?
    };
    let all = match (grid.is_empty(), list.is_empty()) {
        (false, false) => {
            return Err(invalid(
                "give a grid ([parameters], --param) or a list of configurations \
                 ([[configuration]], --configuration), not both",
            ))
        }
        (true, true) => {
            return Err(invalid(
                "no parameters: give them as a grid ([parameters] in the sweep file, or \
                 --param NAME=V1,V2) or as a list ([[configuration]], or --configuration NAME=V,NAME=V)",
            ))
        }
        (false, true) => combinations(&grid),
        (true, false) => list,
    };
    check_configurations(&all)?;
    Ok(all)
}

fn check_configurations(all: &[Parameters]) -> Result<(), PlanError> {
    let names: Vec<&str> = all[0].iter().map(|(n, _)| n).collect();
    for (i, c) in all.iter().enumerate() {
        if let Some((bad, _)) = c.iter().find(|(n, _)| !is_name(n) || BUILT_IN.contains(n)) {
            return Err(invalid(format!(
                "\"{bad}\" cannot name a parameter: use a letter or _, then letters, digits, _ or - \
                 ({} are built in)",
                BUILT_IN.join(" and ")
            )));
        }
        let mine: Vec<&str> = c.iter().map(|(n, _)| n).collect();
        if mine.len() != names.len() || !mine.iter().all(|n| names.contains(n)) {
            return Err(invalid(format!(
                "configuration {} ({c}) does not have the parameters of the first ({})",
                i + 1,
                names.join(", ")
            )));
        }
        if let Some((name, _)) = c.iter().find(|(_, v)| v.trim().is_empty()) {
            return Err(invalid(format!(
                "parameter {name} has an empty value in configuration {}",
                i + 1
            )));
        }
        if all[..i].contains(c) {
            return Err(invalid(format!("configuration {c} is listed twice")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(out: &str) -> SweepFlags {
        SweepFlags {
            out_dir: PathBuf::from(out),
            ..SweepFlags::default()
        }
    }

    fn write(dir: &Path, text: &str) -> String {
        let path = dir.join("sweep.toml");
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    }

    #[test]
    fn a_grid_keeps_the_files_order_and_the_flags_replace_its_parts() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("suite.toml"), "").unwrap();
        let sweep = write(
            dir.path(),
            r#"
            serve = "vllm serve {model} --port {port} --tensor-parallel-size {tp} --max-num-seqs {mns}"
            suite = "suite.toml"
            run = ["--gpu-count", "{tp}"]
            [parameters]
            tp = [1, 2]
            mns = [64, 128, 256]
            model = "Qwen/Qwen3-8B"
            [env]
            VLLM_LOGGING_LEVEL = "DEBUG"
            "#,
        );
        let plan = SweepPlan::new(SweepFlags {
            sweep: Some(sweep.clone()),
            ..flags("out/grid")
        })
        .unwrap();
        let labels: Vec<String> = plan.configurations.iter().map(|c| c.to_string()).collect();
        assert_eq!(labels.len(), 6);
        assert_eq!(labels[0], "tp=1 mns=64 model=Qwen/Qwen3-8B");
        assert_eq!(labels[5], "tp=2 mns=256 model=Qwen/Qwen3-8B");
        assert_eq!(plan.name, "grid");
        assert_eq!(plan.base_url.as_str(), "http://127.0.0.1:{port}");
        assert_eq!(
            plan.suite.as_deref(),
            Some(dir.path().join("suite.toml").to_str().unwrap())
        );
        assert_eq!(plan.ready_timeout, Duration::from_secs(600));
        let plan = SweepPlan::new(SweepFlags {
            sweep: Some(sweep),
            params: vec!["mns=8".into(), "tp=4".into()],
            suite: Some("four-scenario".into()),
            ..flags("out/grid")
        })
        .unwrap();
        let labels: Vec<String> = plan.configurations.iter().map(|c| c.to_string()).collect();
        assert_eq!(labels, ["tp=4 mns=8 model=Qwen/Qwen3-8B"]);
        assert_eq!(plan.suite.as_deref(), Some("four-scenario"));
    }

    #[test]
    fn a_list_of_configurations_from_the_file_or_the_flags() {
        let dir = tempfile::tempdir().unwrap();
        let sweep = write(
            dir.path(),
            r#"
            serve = "server --port {port} --kv {kv} --mns {mns}"
            suite = "four-scenario"
            [[configuration]]
            mns = 64
            kv = "fp8"
            [[configuration]]
            mns = 128
            kv = "auto"
            "#,
        );
        let plan = SweepPlan::new(SweepFlags {
            sweep: Some(sweep.clone()),
            ..flags("o")
        })
        .unwrap();
        assert_eq!(plan.configurations[1].to_string(), "mns=128 kv=auto");
        let plan = SweepPlan::new(SweepFlags {
            sweep: Some(sweep.clone()),
            configurations: vec!["kv=fp8,mns=1".into()],
            ..flags("o")
        })
        .unwrap();
        assert_eq!(plan.configurations.len(), 1);
        let err = SweepPlan::new(SweepFlags {
            sweep: Some(sweep),
            params: vec!["mns=1,2".into()],
            ..flags("o")
        })
        .unwrap_err();
        assert!(err.to_string().contains("not both"), "{err}");
    }

    #[test]
    fn mistakes_are_named_before_anything_starts() {
        let plan = |serve: &str, params: &[&str], run: &[&str]| {
            SweepPlan::new(SweepFlags {
                serve: Some(serve.into()),
                params: params.iter().map(|p| p.to_string()).collect(),
                run: run.iter().map(|p| p.to_string()).collect(),
                suite: Some("four-scenario".into()),
                ..flags("o")
            })
            .map(|_| ())
            .map_err(|e| e.to_string())
        };
        let err = plan("s --mns {mn} --port {port}", &["mns=1,2"], &[]).unwrap_err();
        assert!(
            err.contains("{mn} is not a parameter (parameters: mns; built in: port, infermeter)"),
            "{err}"
        );
        let err = plan("s --port {port}", &["mns=1,2"], &[]).unwrap_err();
        assert!(err.contains("parameter mns is used nowhere"), "{err}");
        assert!(plan("s", &["mns=1,2"], &["--gpu-count", "{mns}"]).is_ok());
        let err = plan("s {mns}", &["mns=1,1"], &[]).unwrap_err();
        assert!(err.contains("mns=1 is listed twice"), "{err}");
        let err = plan("s {port}", &["port=1,2"], &[]).unwrap_err();
        assert!(err.contains("\"port\" cannot name a parameter"), "{err}");
        let err = plan("s {mns}", &["mns=1"], &["--out=x.json"]).unwrap_err();
        assert!(err.contains("the run options give --out"), "{err}");
        let err = plan("s {mns}", &["mns"], &[]).unwrap_err();
        assert!(err.contains("is not NAME=V1,V2"), "{err}");
        let err = SweepPlan::new(flags("o")).unwrap_err().to_string();
        assert!(err.starts_with("nothing to measure"), "{err}");
        let err = SweepPlan::new(SweepFlags {
            serve: Some("s {mns}".into()),
            params: vec!["mns=1".into()],
            ..flags("o")
        })
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("no suite: name what to measure with --suite"),
            "{err}"
        );
    }

    #[test]
    fn the_built_in_simulator_sweep_is_a_valid_plan() {
        let plan = SweepPlan::new(SweepFlags {
            sweep: Some("sim".into()),
            ..flags("o")
        })
        .unwrap();
        assert_eq!(plan.configurations.len(), 4);
        assert!(plan.serve.unwrap().as_str().starts_with("{infermeter} sim"));
    }
}
