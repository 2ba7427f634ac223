//! Short labels for reports shown together: what tells each apart from the others compared,
//! so a legend, a table row and `infermeter summary` name a report alike. Two reports on the
//! same GPU (a measured H100 and a simulated one) must not read alike, and the configurations of
//! a sweep differ only in their parameters (`--label mns=128 --label tp=2`).

use std::collections::BTreeSet;

use super::cost::gpu_kind;
use crate::schema::Report;

/// One way reports can differ, as a short text per report ("" where it says nothing).
type Facet = fn(&[Report], &Report) -> String;

/// What is added to the GPU until every label is unique, in this order: the engine (and its
/// version), the GPU's full model name, the parameters that differ, the model, the suite and
/// the title. A facet is added only when the reports differ in it, and then to every label, so
/// the labels read alike in form.
const FACETS: [Facet; 7] = [
    |_, r| r.metadata.engine.name.clone(),
    |_, r| r.metadata.engine.version.clone().unwrap_or_default(),
    |_, r| full_gpu(r),
    parameters,
    |_, r| {
        let id = &r.metadata.model.id;
        id.rsplit('/').next().unwrap_or(id).to_string()
    },
    |_, r| r.metadata.test.suite.clone().unwrap_or_default(),
    |_, r| r.display_title(),
];

/// "H100", "2x H100": the GPU kind and count, where every label starts.
fn gpu(report: &Report) -> String {
    let hw = &report.metadata.hardware;
    let kind = gpu_kind(&hw.gpu_model);
    if hw.gpu_count > 1 {
        format!("{}x {kind}", hw.gpu_count)
    } else {
        kind
    }
}

/// "H100 SXM5 80GB": the model name as the report gives it, less the vendor.
fn full_gpu(report: &Report) -> String {
    let model = report.metadata.hardware.gpu_model.trim();
    model.strip_prefix("NVIDIA ").unwrap_or(model).to_string()
}

/// The report's labels (`--label k=v`, a sweep's parameters) whose values are not the same in
/// every compared report: "mns=128 tp=2".
fn parameters(all: &[Report], report: &Report) -> String {
    let keys: BTreeSet<&String> = all.iter().flat_map(|r| r.metadata.labels.keys()).collect();
    keys.into_iter()
        .filter(|key| {
            let first = all[0].metadata.labels.get(*key);
            all.iter().any(|r| r.metadata.labels.get(*key) != first)
        })
        .filter_map(|key| {
            let value = report.metadata.labels.get(key)?;
            Some(format!("{key}={value}"))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Labels for `reports` shown together, in their order: the GPU ("H100", "2x H200"), then
/// whatever tells them apart (see [`FACETS`]), then a number when nothing does.
pub fn report_labels(reports: &[Report]) -> Vec<String> {
    let mut labels: Vec<String> = reports.iter().map(gpu).collect();
    for facet in FACETS {
        if all_unique(&labels) {
            break;
        }
        let values: Vec<String> = reports.iter().map(|r| facet(reports, r)).collect();
        if values.iter().all(|v| *v == values[0]) {
            continue;
        }
        for (label, value) in labels.iter_mut().zip(values) {
            if !value.is_empty() {
                label.push_str(" · ");
                label.push_str(&value);
            }
        }
    }
    let numbered: Vec<String> = labels
        .iter()
        .enumerate()
        .map(|(i, label)| {
            if labels.iter().filter(|l| *l == label).count() > 1 {
                format!("{label} ({})", i + 1)
            } else {
                label.clone()
            }
        })
        .collect();
    numbered
}

fn all_unique(labels: &[String]) -> bool {
    labels.iter().collect::<BTreeSet<_>>().len() == labels.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing;

    fn on(gpu_model: &str, count: u32, engine: &str) -> Report {
        let mut r = testing::report(&["chat"], Vec::new());
        r.metadata.hardware.gpu_model = gpu_model.into();
        r.metadata.hardware.gpu_count = count;
        r.metadata.engine.name = engine.into();
        r
    }

    #[test]
    fn different_gpus_are_named_by_kind_and_count() {
        let reports = [
            on("NVIDIA H100 SXM5 80GB", 1, "vLLM"),
            on("NVIDIA H200", 1, "vLLM"),
            on("NVIDIA B200", 1, "vLLM"),
            on("NVIDIA H100 SXM5 80GB", 2, "vLLM"),
        ];
        assert_eq!(report_labels(&reports), ["H100", "H200", "B200", "2x H100"]);
        assert_eq!(report_labels(&reports[..1]), ["H100"]);
    }

    /// The measured H100 transformers report and the simulated H100 one: the engine tells
    /// them apart, not the GPU's name.
    #[test]
    fn the_same_gpu_is_told_apart_by_engine() {
        let reports = [
            on("NVIDIA H100 80GB HBM3", 1, "transformers"),
            on("NVIDIA H100 SXM5 80GB", 1, "infermeter-sim"),
        ];
        assert_eq!(
            report_labels(&reports),
            ["H100 · transformers", "H100 · infermeter-sim"]
        );
    }

    /// A sweep's configurations differ in their parameters only: the label names those that
    /// differ, not those they share.
    #[test]
    fn a_sweep_is_told_apart_by_the_parameters_that_differ() {
        let mut reports = [
            on("NVIDIA H100", 2, "vLLM"),
            on("NVIDIA H100", 2, "vLLM"),
            on("NVIDIA H100", 2, "vLLM"),
        ];
        for (r, mns) in reports.iter_mut().zip(["128", "256", "512"]) {
            r.metadata.labels.insert("tp".into(), "2".into());
            r.metadata.labels.insert("mns".into(), mns.into());
        }
        reports[2]
            .metadata
            .labels
            .insert("chunked".into(), "off".into());
        assert_eq!(
            report_labels(&reports),
            [
                "2x H100 · mns=128",
                "2x H100 · mns=256",
                "2x H100 · chunked=off mns=512"
            ]
        );
    }

    #[test]
    fn the_model_then_the_title_then_a_number() {
        let mut a = on("NVIDIA H100", 1, "vLLM");
        a.metadata.model.id = "org/Model".into();
        let mut b = a.clone();
        b.metadata.model.id = "org/Other-7B".into();
        assert_eq!(
            report_labels(&[a.clone(), b]),
            ["H100 · Model", "H100 · Other-7B"]
        );
        let mut c = a.clone();
        a.metadata.title = Some("Before".into());
        c.metadata.title = Some("After".into());
        assert_eq!(
            report_labels(&[a.clone(), c]),
            ["H100 · Before", "H100 · After"]
        );
        assert_eq!(report_labels(&[a.clone(), a]), ["H100 (1)", "H100 (2)"]);
    }
}
