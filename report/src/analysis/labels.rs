//! Short labels for reports shown together: what tells each apart from the others compared,
//! so a legend, a table row and `infermeter summary` name a report alike. Two reports on the
//! same GPU (a measured H100 and a simulated one) must not read alike, and the configurations of
//! a sweep differ only in their parameters: a sweep's configurations (`infermeter sweep`) are
//! named by those alone (`mns=128 tp=2`), so a legend and the ranking name the winning setting.

use std::borrow::Borrow;
use std::collections::BTreeSet;

use super::cost::gpu_kind;
use crate::schema::{Parameters, Report};

/// One way reports can differ, as a short text per report ("" where it says nothing).
type Facet = fn(&[&Report], &Report) -> String;

/// What is added to the GPU until every label is unique, in this order: the engine (and its
/// version), the GPU's full model name, the parameters that differ, the model, the suite and
/// the title. A facet is added only when it tells apart reports whose labels are still alike,
/// and then to every label, so the labels read alike in form.
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

/// A report's settings: its sweep configuration's parameters in their declared order, then its
/// labels (`--label k=v`).
fn settings(report: &Report) -> Vec<(&str, &str)> {
    let meta = &report.metadata;
    let swept = meta.configuration.iter().flat_map(|c| c.parameters.iter());
    let labelled = meta.labels.iter().map(|(k, v)| (k.as_str(), v.as_str()));
    swept.chain(labelled).collect()
}

/// The report's settings whose values are not the same in every compared report: a sweep's
/// parameters in the order it declares them, then labels by name ("mns=128 tp=2").
fn parameters(all: &[&Report], report: &Report) -> String {
    let mut keys: Vec<&str> = Vec::new();
    let swept = all.iter().flat_map(|r| &r.metadata.configuration);
    let labelled: BTreeSet<&str> = crate::order::btree_set(
        all.iter()
            .flat_map(|r| r.metadata.labels.keys().map(String::as_str)),
    );
    for key in swept
        .flat_map(|c| c.parameters.iter().map(|(k, _)| k))
        .chain(labelled)
    {
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys.into_iter()
        .filter(|key| all.iter().any(|r| setting(r, key) != setting(all[0], key)))
        .filter_map(|key| Some(format!("{key}={}", setting(report, key)?)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The value of one of a report's [`settings`].
fn setting<'a>(report: &'a Report, key: &str) -> Option<&'a str> {
    settings(report)
        .into_iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

/// Each report's differing parameters, when every report is a sweep's configuration and those
/// tell them all apart; `None` otherwise (reports of no sweep, one report, or configurations
/// that differ only in something else, e.g. two sweeps' alike settings on two GPUs).
pub fn configuration_labels<R: Borrow<Report>>(reports: &[R]) -> Option<Vec<String>> {
    configurations(&refs(reports))
}

/// The reports as references: the labels read reports owned or shared (the viewer's `Arc`s,
/// so that it never clones a report) alike.
fn refs<R: Borrow<Report>>(reports: &[R]) -> Vec<&Report> {
    reports.iter().map(Borrow::borrow).collect()
}

/// [`configuration_labels`].
fn configurations(reports: &[&Report]) -> Option<Vec<String>> {
    if reports.len() < 2 {
        return None;
    }
    let all: Vec<&Parameters> = reports
        .iter()
        .map(|r| r.metadata.configuration.as_ref().map(|c| &c.parameters))
        .collect::<Option<_>>()?;
    let mut names: Vec<&str> = Vec::new();
    for (name, _) in all.iter().flat_map(|p| p.iter()) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let differs = |name: &str| all.iter().any(|p| p.get(name) != all[0].get(name));
    let differing: Vec<&str> = names.into_iter().filter(|n| differs(n)).collect();
    let labels: Vec<String> = all
        .iter()
        .map(|p| {
            let named = differing
                .iter()
                .filter_map(|n| Some(format!("{n}={}", p.get(n)?)));
            named.collect::<Vec<_>>().join(" ")
        })
        .collect();
    let told_apart = labels.iter().all(|l| !l.is_empty()) && all_unique(&labels);
    told_apart.then_some(labels)
}

/// Labels for `reports` shown together, in their order: a sweep's configurations by their
/// differing parameters ([`configuration_labels`]); others by the GPU ("H100", "2x H200"), then
/// whatever tells them apart (see [`FACETS`]), then a number when nothing does.
pub fn report_labels<R: Borrow<Report>>(reports: &[R]) -> Vec<String> {
    labels_of(&refs(reports))
}

/// [`report_labels`].
fn labels_of(reports: &[&Report]) -> Vec<String> {
    if let Some(labels) = configurations(reports) {
        return labels;
    }
    let mut labels: Vec<String> = reports.iter().map(|r| gpu(r)).collect();
    for facet in FACETS {
        if all_unique(&labels) {
            break;
        }
        let values: Vec<String> = reports.iter().map(|r| facet(reports, r)).collect();
        // Only a facet that tells apart reports still alike is added ("H100 · H100" says
        // nothing the GPU's kind did not).
        let tells_apart = (0..labels.len())
            .any(|i| (0..i).any(|j| labels[i] == labels[j] && values[i] != values[j]));
        if !tells_apart {
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
    crate::order::btree_set(labels).len() == labels.len()
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

    fn configuration(gpu_model: &str, pairs: &[(&str, &str)]) -> Report {
        let mut r = on(gpu_model, 1, "vLLM");
        r.metadata.configuration = Some(crate::schema::Configuration {
            sweep: Some("s".into()),
            parameters: pairs.iter().copied().collect(),
        });
        r
    }

    /// `infermeter sweep`'s configurations: named by the parameters that differ, in the
    /// sweep's order, and nothing else (the GPU they share says nothing apart).
    #[test]
    fn a_sweeps_configurations_are_named_by_their_parameters_alone() {
        let h100 = "NVIDIA H100";
        let reports = [
            configuration(h100, &[("tp", "1"), ("mns", "64"), ("model", "m")]),
            configuration(h100, &[("tp", "1"), ("mns", "128"), ("model", "m")]),
            configuration(h100, &[("tp", "2"), ("mns", "64"), ("model", "m")]),
        ];
        assert_eq!(
            report_labels(&reports),
            ["tp=1 mns=64", "tp=1 mns=128", "tp=2 mns=64"]
        );
        assert_eq!(report_labels(&reports[..2]), ["mns=64", "mns=128"]);
        assert_eq!(configuration_labels(&reports[..1]), None);
        // Two sweeps' alike settings on two GPUs: the GPU, then the parameters.
        let two_sweeps = [
            configuration(h100, &[("mns", "64")]),
            configuration(h100, &[("mns", "128")]),
            configuration("NVIDIA H200", &[("mns", "64")]),
        ];
        assert_eq!(configuration_labels(&two_sweeps), None);
        assert_eq!(
            report_labels(&two_sweeps),
            ["H100 · mns=64", "H100 · mns=128", "H200 · mns=64"]
        );
        // A report of no sweep among them: the facets, the parameters among them.
        let plain = on(h100, 1, "vLLM");
        assert_eq!(configuration_labels(&[reports[0].clone(), plain]), None);
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
